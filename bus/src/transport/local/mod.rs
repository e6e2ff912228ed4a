// The in-process transport: the handler table and delivery into consumer
// queues.
//
// Contract: the table maps an address to an immutable `Entry` (its consumer
// slots); registering or unregistering replaces the entry under the write
// lock, carrying the round-robin counter over. Delivery holds the read lock
// only for the lookup (it clones the entry's `Arc`), never while a body is
// made or a message enqueued, and never across an `.await`. Bodies arrive
// type-erased together with a `make` closure that produces this delivery's
// body (the codec's transform), so a remote transport can deliver decoded
// bodies through the same functions. A delivery asks the consumer's guard
// (if it has one) about the original body, then reserves room in the
// consumer's queue, and calls `make` only once it has it: a refused body or
// a full queue costs no copy of the body.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use codecbus_core::AnyBody;

use crate::base::error::{Error, OperationKind};
use crate::base::guard::{self, GuardRef};
use crate::base::hash::AddressHasher;
use crate::base::headers::Headers;
use crate::base::interceptor::DeliveryKind;
use crate::base::metrics::Counters;
use crate::base::reply::{Ack, AckTx, Completion};
use crate::telemetry::probe::{Probe, RefusedBy};
use crate::telemetry::record::{Event, record};
use crate::telemetry::spans::SpanSlot;

mod claim;
mod envelope;
mod queue;
mod scheduler;

pub(crate) use self::envelope::Envelope;
pub(crate) use self::queue::{Handed, Inline, NoRoom, QueueRx, QueueTx, queue};
use self::scheduler::runs_here;
pub(crate) use self::scheduler::{Control, Handler, Host, Runner, Started, Tasks, spawn};

#[derive(Clone)]
pub(crate) struct Slot {
    pub(crate) id: u64,
    pub(crate) type_id: TypeId,
    pub(crate) type_name: &'static str,
    pub(crate) local_only: bool,
    /// Asked before anything is queued for this consumer.
    pub(crate) guard: Option<GuardRef>,
    pub(crate) tx: QueueTx,
}

struct Entry {
    address: Arc<str>,
    slots: Vec<Slot>,
    next: AtomicUsize,
}

#[derive(Default)]
pub(crate) struct LocalTable {
    map: RwLock<HashMap<Arc<str>, Arc<Entry>, BuildHasherDefault<AddressHasher>>>,
    next_id: AtomicU64,
    /// Whether a guarded consumer was ever registered: until then a
    /// transport does not look for guards.
    guarded: AtomicBool,
}

/// What the guards of an address's consumers say about one body: each
/// guard is asked once per delivery, however many of its consumers there
/// are, and a guard a transport already checked (while decoding) is not
/// asked again.
pub(crate) struct Verdicts<'a> {
    body: &'a (dyn Any + Send + Sync),
    passed: Option<GuardRef>,
    refused: Option<(GuardRef, String)>,
}

impl<'a> Verdicts<'a> {
    /// For `body`, not checked yet.
    #[inline]
    pub(crate) fn new(body: &'a (dyn Any + Send + Sync)) -> Self {
        Self {
            body,
            passed: None,
            refused: None,
        }
    }

    /// For `body`, which `checked_by` (if any) accepted already.
    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    pub(crate) fn checked(body: &'a (dyn Any + Send + Sync), checked_by: Option<GuardRef>) -> Self {
        Self {
            body,
            passed: checked_by,
            refused: None,
        }
    }

    /// Whether `slot`'s guard (if any) admits the body.
    #[inline]
    fn admit(&mut self, slot: &Slot) -> bool {
        match &slot.guard {
            None => true,
            Some(guard) => self.ask(guard),
        }
    }

    fn ask(&mut self, guard: &GuardRef) -> bool {
        if self.passed.as_ref().is_some_and(|p| guard::same(p, guard)) {
            return true;
        }
        if let Some((refused, _)) = &self.refused
            && guard::same(refused, guard)
        {
            return false;
        }
        match guard.check(self.body) {
            Ok(()) => {
                self.passed = Some(Arc::clone(guard));
                true
            }
            Err(text) => {
                tracing::debug!(reason = %text, "body refused by a consumer's guard");
                if self.refused.is_none() {
                    self.refused = Some((Arc::clone(guard), text));
                }
                false
            }
        }
    }

    /// The first refusal's reasons.
    fn into_refusal(self) -> Option<String> {
        self.refused.map(|(_, text)| text)
    }
}

/// Which of an address's consumers a delivery may reach.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Scope {
    /// Every consumer (no cluster transport, or a local-only delivery).
    All,
    /// Exported consumers only: a message that came in from the cluster.
    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    Exported,
    /// Local-only consumers only: this node's share of a publish that the
    /// cluster delivers to the exported ones.
    LocalOnly,
}

impl Scope {
    #[inline]
    fn admits(self, slot: &Slot) -> bool {
        match self {
            Self::All => true,
            Self::Exported => !slot.local_only,
            Self::LocalOnly => slot.local_only,
        }
    }
}

/// Why a point-to-point delivery did not happen.
#[derive(Clone, Debug)]
pub(crate) enum Refusal {
    NoHandlers,
    /// No consumer, on a bus that was shut down (`EventBus::shutdown`).
    ShutDown,
    /// No consumer takes the type; the name of one that was found.
    TypeMismatch(&'static str),
    QueueFull,
    /// Every consumer that takes the type refused the body in its guard;
    /// the first refusal's reasons.
    Invalid(String),
}

impl Refusal {
    /// Why, as the `reason` of its record.
    pub(crate) fn reason(&self) -> RefusedBy {
        match self {
            Self::NoHandlers | Self::ShutDown => RefusedBy::NoHandlers,
            Self::TypeMismatch(_) => RefusedBy::TypeMismatch,
            Self::QueueFull => RefusedBy::QueueFull,
            Self::Invalid(_) => RefusedBy::Invalid,
        }
    }

    /// Records the refusal of one message.
    pub(crate) fn count(&self, counters: &Counters, probe: Option<&Probe>) {
        record(counters, probe, Event::Refused(self.reason(), 1));
    }

    /// The operation's error (kind and message, no address or body yet)
    /// for a body of type `actual` refused at `address`.
    #[cold]
    pub(crate) fn into_error<K: OperationKind>(self, address: &str, actual: &str) -> Error<K> {
        let (kind, message) = match self {
            Self::NoHandlers => (K::NO_HANDLERS, format!("No handlers for address {address}")),
            Self::ShutDown => (
                K::SHUT_DOWN,
                format!("The event bus is shut down: no consumer at address {address}"),
            ),
            Self::TypeMismatch(expected) => (
                K::TYPE_MISMATCH,
                format!(
                    "No consumer at address {address} takes `{actual}`: it expects `{expected}`"
                ),
            ),
            Self::QueueFull => (
                K::QUEUE_FULL,
                format!("Queue full at address {address}: every consumer's queue is at capacity"),
            ),
            Self::Invalid(reasons) => (
                K::INVALID,
                format!("Body refused at address {address}: {reasons}"),
            ),
        };
        Error::new(kind, message)
    }
}

/// The result of a fan-out.
#[derive(Default)]
pub(crate) struct FanOut {
    pub(crate) address: Option<Arc<str>>,
    pub(crate) delivered: usize,
    /// Of those, how many went into a queue (the others started their
    /// handler on this task).
    pub(crate) queued: usize,
    pub(crate) refused: usize,
    pub(crate) mismatched: usize,
    pub(crate) mismatch_type: Option<&'static str>,
    /// Consumers whose guard refused the body.
    pub(crate) invalid: usize,
    /// The first guard refusal's reasons.
    pub(crate) invalid_reasons: Option<String>,
}

impl FanOut {
    /// Counts what the fan-out did in the bus counters and, with metrics
    /// on, under its address.
    pub(crate) fn count(&self, counters: &Counters, probe: Option<&Probe>) {
        let events = [
            (self.delivered, Event::Delivered(self.delivered as u64)),
            (
                self.refused,
                Event::Refused(RefusedBy::QueueFull, self.refused as u64),
            ),
            (
                self.invalid,
                Event::Refused(RefusedBy::Invalid, self.invalid as u64),
            ),
            (
                self.mismatched,
                Event::Refused(RefusedBy::TypeMismatch, self.mismatched as u64),
            ),
        ];
        for (n, event) in events {
            if n > 0 {
                record(counters, probe, event);
            }
        }
    }
}

/// Counts one message delivered in the bus counters and, with metrics on,
/// under its address.
#[inline]
pub(crate) fn count_delivered(counters: &Counters, probe: Option<&Probe>) {
    record(counters, probe, Event::Delivered(1));
}

/// The span of a delivery at `address` to a consumer of `body`, when
/// `TRACED`.
#[inline(always)]
fn span<const TRACED: bool>(address: &str, kind: DeliveryKind, body: &str) -> SpanSlot {
    if TRACED {
        SpanSlot::deliver(address, kind, body)
    } else {
        SpanSlot::NONE
    }
}

impl LocalTable {
    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Adds `slot` at `address`; returns the shared address and whether it
    /// is the first exported (not local-only) consumer there.
    pub(crate) fn add(&self, address: &str, slot: Slot) -> (Arc<str>, bool) {
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        let (key, mut slots, next) = match map.get(address) {
            Some(entry) => (
                Arc::clone(&entry.address),
                entry.slots.clone(),
                entry.next.load(Ordering::Relaxed),
            ),
            None => (Arc::<str>::from(address), Vec::new(), 0),
        };
        let first_exported = !slot.local_only && slots.iter().all(|s| s.local_only);
        if slot.guard.is_some() {
            self.guarded.store(true, Ordering::Release);
        }
        slots.push(slot);
        map.insert(
            Arc::clone(&key),
            Arc::new(Entry {
                address: Arc::clone(&key),
                slots,
                next: AtomicUsize::new(next),
            }),
        );
        (key, first_exported)
    }

    /// Removes consumer `id` from `address`; returns whether it was there
    /// and whether no exported consumer is left at the address.
    pub(crate) fn remove(&self, address: &str, id: u64) -> (bool, bool) {
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        let Some(entry) = map.get(address) else {
            return (false, false);
        };
        let Some(pos) = entry.slots.iter().position(|s| s.id == id) else {
            return (false, false);
        };
        let was_exported = !entry.slots[pos].local_only;
        let mut slots = entry.slots.clone();
        let removed = slots.remove(pos);
        let last_exported = was_exported && slots.iter().all(|s| s.local_only);
        if slots.is_empty() {
            map.remove(address);
        } else {
            let next = AtomicUsize::new(entry.next.load(Ordering::Relaxed));
            let key = Arc::clone(&entry.address);
            map.insert(
                Arc::clone(&key),
                Arc::new(Entry {
                    address: key,
                    slots,
                    next,
                }),
            );
        }
        drop(map);
        // The queue closes when its last sender goes, outside the lock.
        drop(removed);
        (true, last_exported)
    }

    /// Removes every consumer; returns their addresses, each once, with
    /// how many consumers each had.
    pub(crate) fn remove_all(&self) -> Vec<(Arc<str>, usize)> {
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        let removed: Vec<Arc<Entry>> = map.drain().map(|(_, entry)| entry).collect();
        drop(map);
        // The queues close when their last senders go, outside the lock.
        removed
            .into_iter()
            .map(|entry| (Arc::clone(&entry.address), entry.slots.len()))
            .collect()
    }

    /// Whether `address` has consumers here and every one of them is
    /// local-only: point-to-point messages to it then stay in process (a
    /// local consumer is reached from its own node, as in Vert.x).
    pub(crate) fn only_local_only(&self, address: &str) -> bool {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        map.get(address)
            .is_some_and(|entry| entry.slots.iter().all(|s| s.local_only))
    }

    /// Whether `address` has an exported (not local-only) consumer here.
    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    pub(crate) fn has_exported(&self, address: &str) -> bool {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        map.get(address)
            .is_some_and(|entry| entry.slots.iter().any(|s| !s.local_only))
    }

    /// The guard every consumer in `scope` at `address` shares (one
    /// registration's), if they all have the same one, and how many they
    /// are: a transport then checks while it decodes, and the delivery
    /// does not ask again.
    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    pub(crate) fn shared_guard(&self, address: &str, scope: Scope) -> Option<(GuardRef, usize)> {
        if !self.guarded.load(Ordering::Acquire) {
            return None;
        }
        let entry = self.entry(address)?;
        let mut slots = entry.slots.iter().filter(|s| scope.admits(s));
        let first = slots.next()?.guard.as_ref()?;
        let mut n = 1;
        for slot in slots {
            if !slot.guard.as_ref().is_some_and(|g| guard::same(g, first)) {
                return None;
            }
            n += 1;
        }
        Some((Arc::clone(first), n))
    }

    /// The consumers at `address`: the table's read lock is held for the
    /// lookup alone, never while a body is made or a message enqueued.
    #[inline(always)]
    fn entry(&self, address: &str) -> Option<Arc<Entry>> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        map.get(address).map(Arc::clone)
    }

    /// Delivers to one consumer of `type_id` at `address`, round-robin,
    /// skipping consumers whose guard refuses the body (`verdicts`) or
    /// whose queue is full or closed. Room is reserved in the chosen queue
    /// first; only then does `make` produce that consumer's body, so a
    /// refused delivery copies nothing. With `traced` (the message's trace
    /// sampled), the delivery gets a span. A request made here or a message
    /// from the cluster to an address with one consumer may start that
    /// consumer's handler on this task, if it is idle (the scheduler's
    /// rule, `scheduler::runs_here`); the result says which ([`Handed`]).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn deliver_one(
        &self,
        address: &str,
        scope: Scope,
        type_id: TypeId,
        verdicts: Verdicts<'_>,
        make: impl FnOnce() -> AnyBody,
        headers: Headers,
        kind: DeliveryKind,
        completion: Completion,
        traced: bool,
    ) -> Result<Handed, Refusal> {
        // Two copies: untraced, no span code in the loop.
        if traced {
            self.deliver_one_to::<true>(
                address, scope, type_id, verdicts, make, headers, kind, completion,
            )
        } else {
            self.deliver_one_to::<false>(
                address, scope, type_id, verdicts, make, headers, kind, completion,
            )
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn deliver_one_to<const TRACED: bool>(
        &self,
        address: &str,
        scope: Scope,
        type_id: TypeId,
        mut verdicts: Verdicts<'_>,
        make: impl FnOnce() -> AnyBody,
        headers: Headers,
        kind: DeliveryKind,
        completion: Completion,
    ) -> Result<Handed, Refusal> {
        let Some(entry) = self.entry(address) else {
            return Err(Refusal::NoHandlers);
        };
        let slots = &entry.slots;
        let n = slots.len();
        let start = if n == 1 {
            0
        } else {
            entry.next.fetch_add(1, Ordering::Relaxed) % n
        };
        let mut full = false;
        let mut mismatch = None;
        let inline = runs_here(scope == Scope::Exported, kind, n);
        // What the next delivery sends: the parts of the one envelope, or
        // the envelope a closed consumer handed back.
        let mut next = Next::Parts(headers, completion, make);
        for i in 0..n {
            let slot = &slots[(start + i) % n];
            if !scope.admits(slot) {
                continue;
            }
            if slot.type_id != type_id {
                mismatch = Some(slot.type_name);
                continue;
            }
            if !verdicts.admit(slot) {
                continue;
            }
            match slot.tx.try_reserve() {
                Ok(room) => {
                    let env = match next {
                        Next::Made(env) => env,
                        Next::Parts(headers, completion, make) => Envelope {
                            address: Arc::clone(&entry.address),
                            headers,
                            body: make(),
                            kind,
                            completion,
                            span: span::<TRACED>(&entry.address, kind, slot.type_name),
                        },
                    };
                    let sent = if inline {
                        room.send_or_run(env)
                    } else {
                        room.send(env).map(|()| Handed::Queued)
                    };
                    match sent {
                        Ok(handed) => return Ok(handed),
                        // The consumer closed its queue after the room was
                        // reserved: the next one gets the same body.
                        Err(env) => next = Next::Made(env),
                    }
                }
                Err(NoRoom::Full) => full = true,
                Err(NoRoom::Closed) => {}
            }
        }
        let refusal = if full {
            Refusal::QueueFull
        } else if let Some(reasons) = verdicts.into_refusal() {
            Refusal::Invalid(reasons)
        } else if let Some(expected) = mismatch {
            Refusal::TypeMismatch(expected)
        } else {
            Refusal::NoHandlers
        };
        Err(refusal)
    }

    /// Delivers to every consumer of `type_id` at `address` whose guard
    /// admits the body (`verdicts`), each with its own `make()` body, made
    /// once room is reserved in that consumer's queue (a consumer that
    /// refuses costs no copy). With `ack` (a durable publish), every
    /// envelope holds a clone of it, so the cell resolves once all of them
    /// handled the message (or one failed). With `traced`, each delivery
    /// gets a span.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn deliver_all(
        &self,
        address: &str,
        scope: Scope,
        type_id: TypeId,
        verdicts: Verdicts<'_>,
        make: impl Fn() -> AnyBody,
        headers: &Headers,
        ack: Option<&AckTx>,
        traced: bool,
    ) -> FanOut {
        if traced {
            self.deliver_all_to::<true>(address, scope, type_id, verdicts, make, headers, ack)
        } else {
            self.deliver_all_to::<false>(address, scope, type_id, verdicts, make, headers, ack)
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn deliver_all_to<const TRACED: bool>(
        &self,
        address: &str,
        scope: Scope,
        type_id: TypeId,
        mut verdicts: Verdicts<'_>,
        make: impl Fn() -> AnyBody,
        headers: &Headers,
        ack: Option<&AckTx>,
    ) -> FanOut {
        let mut out = FanOut::default();
        let Some(entry) = self.entry(address) else {
            return out;
        };
        let inline = runs_here(
            scope == Scope::Exported,
            DeliveryKind::Publish,
            entry.slots.len(),
        );
        for slot in &entry.slots {
            if !scope.admits(slot) {
                continue;
            }
            if out.address.is_none() {
                out.address = Some(Arc::clone(&entry.address));
            }
            if slot.type_id != type_id {
                out.mismatched += 1;
                out.mismatch_type = Some(slot.type_name);
                continue;
            }
            if !verdicts.admit(slot) {
                out.invalid += 1;
                continue;
            }
            match slot.tx.try_reserve() {
                Ok(room) => {
                    let env = Envelope {
                        address: Arc::clone(&entry.address),
                        headers: headers.clone(),
                        body: make(),
                        kind: DeliveryKind::Publish,
                        completion: ack
                            .map_or(Completion::None, |tx| Completion::Ack(Ack::new(tx.clone()))),
                        span: span::<TRACED>(&entry.address, DeliveryKind::Publish, slot.type_name),
                    };
                    let sent = if inline {
                        room.send_or_run(env)
                    } else {
                        room.send(env).map(|()| Handed::Queued)
                    };
                    // Err: the consumer closed its queue since the room was
                    // reserved; it is gone, as if it had never been there.
                    if let Ok(handed) = sent {
                        out.delivered += 1;
                        out.queued += usize::from(handed == Handed::Queued);
                    }
                }
                Err(NoRoom::Full) => out.refused += 1,
                Err(NoRoom::Closed) => {}
            }
        }
        out.invalid_reasons = verdicts.into_refusal();
        out
    }
}

/// The message of a send or request on its way to one consumer: the
/// parts of its envelope until the envelope is made (once, when a
/// consumer has room), then the envelope itself, handed back by a consumer
/// that closed after the room was reserved.
enum Next<F> {
    Parts(Headers, Completion, F),
    Made(Envelope),
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// A table with `n` consumers of `u32` at `a`, each with room for one
    /// message; their receivers, kept open.
    fn table(n: usize) -> (LocalTable, Vec<QueueRx>) {
        let table = LocalTable::default();
        let rxs = (0..n)
            .map(|_| {
                let (tx, rx) = queue(1, None, None);
                table.add(
                    "a",
                    Slot {
                        id: table.next_id(),
                        type_id: TypeId::of::<u32>(),
                        type_name: "u32",
                        local_only: false,
                        guard: None,
                        tx,
                    },
                );
                rx
            })
            .collect();
        (table, rxs)
    }

    /// `make` for `table`: checks that nobody holds the table's lock while
    /// the body is made (a write lock is free only then), counts calls.
    fn make<'a>(table: &'a LocalTable, calls: &'a Cell<usize>) -> impl Fn() -> AnyBody + 'a {
        move || {
            assert!(
                table.map.try_write().is_ok(),
                "the body is made while the consumer table is locked"
            );
            calls.set(calls.get() + 1);
            Arc::new(7u32) as AnyBody
        }
    }

    #[test]
    fn deliver_one_makes_the_body_outside_the_lock_and_only_with_room() {
        let (table, _rxs) = table(2);
        let calls = Cell::new(0);
        let one = || {
            table.deliver_one(
                "a",
                Scope::All,
                TypeId::of::<u32>(),
                Verdicts::new(&7u32),
                make(&table, &calls),
                Headers::new(),
                DeliveryKind::Send,
                Completion::None,
                false,
            )
        };
        assert!(one().is_ok());
        assert!(one().is_ok());
        assert_eq!(calls.get(), 2);
        // Both queues are full now: refused without a body made.
        assert!(matches!(one(), Err(Refusal::QueueFull)));
        assert_eq!(calls.get(), 2);
    }

    #[test]
    fn deliver_all_makes_each_body_outside_the_lock_and_only_with_room() {
        let (table, _rxs) = table(3);
        let calls = Cell::new(0);
        let all = || {
            table.deliver_all(
                "a",
                Scope::All,
                TypeId::of::<u32>(),
                Verdicts::new(&7u32),
                make(&table, &calls),
                &Headers::new(),
                None,
                false,
            )
        };
        let fan = all();
        assert_eq!((fan.delivered, fan.refused, calls.get()), (3, 0, 3));
        let fan = all();
        assert_eq!((fan.delivered, fan.refused, calls.get()), (0, 3, 3));
    }

    /// Refuses odd numbers; counts how often it is asked.
    struct Even(std::sync::atomic::AtomicUsize);

    impl guard::Guard for Even {
        fn check(&self, body: &(dyn Any + Send + Sync)) -> Result<(), String> {
            self.0.fetch_add(1, Ordering::Relaxed);
            match body.downcast_ref::<u32>() {
                Some(n) if n % 2 == 0 => Ok(()),
                _ => Err("odd".to_owned()),
            }
        }

        fn decode(
            &self,
            _codec: &str,
            _payload: &[u8],
        ) -> Option<Result<AnyBody, guard::GuardedDecode>> {
            None
        }
    }

    /// `n` consumers of `u32` at `a` sharing one `Even` guard, and one
    /// without a guard when `open`.
    fn guarded(n: usize, open: bool) -> (LocalTable, Arc<Even>, Vec<QueueRx>) {
        let table = LocalTable::default();
        let even = Arc::new(Even(AtomicUsize::new(0)));
        let rxs = (0..n + usize::from(open))
            .map(|i| {
                let (tx, rx) = queue(4, None, None);
                let guard = (i < n).then(|| Arc::clone(&even) as GuardRef);
                table.add(
                    "a",
                    Slot {
                        id: table.next_id(),
                        type_id: TypeId::of::<u32>(),
                        type_name: "u32",
                        local_only: false,
                        guard,
                        tx,
                    },
                );
                rx
            })
            .collect();
        (table, even, rxs)
    }

    #[test]
    fn a_guard_is_asked_once_per_delivery_and_a_refusal_makes_no_body() {
        let (table, even, _rxs) = guarded(3, false);
        let calls = Cell::new(0);
        let all = |n: u32| {
            table.deliver_all(
                "a",
                Scope::All,
                TypeId::of::<u32>(),
                Verdicts::new(&n),
                make(&table, &calls),
                &Headers::new(),
                None,
                false,
            )
        };
        let fan = all(2);
        assert_eq!((fan.delivered, fan.invalid, calls.get()), (3, 0, 3));
        assert_eq!(even.0.load(Ordering::Relaxed), 1);
        let fan = all(3);
        assert_eq!((fan.delivered, fan.invalid, calls.get()), (0, 3, 3));
        assert_eq!(fan.invalid_reasons.as_deref(), Some("odd"));
        assert_eq!(even.0.load(Ordering::Relaxed), 2);

        let one = |n: u32| {
            table.deliver_one(
                "a",
                Scope::All,
                TypeId::of::<u32>(),
                Verdicts::new(&n),
                make(&table, &calls),
                Headers::new(),
                DeliveryKind::Send,
                Completion::None,
                false,
            )
        };
        assert!(matches!(one(5), Err(Refusal::Invalid(reasons)) if reasons == "odd"));
        assert_eq!((calls.get(), even.0.load(Ordering::Relaxed)), (3, 3));
        assert!(one(4).is_ok());
        assert_eq!(calls.get(), 4);
    }

    #[test]
    fn a_body_a_guard_refuses_goes_to_a_consumer_without_one() {
        let (table, _even, mut rxs) = guarded(2, true);
        let calls = Cell::new(0);
        for _ in 0..3 {
            table
                .deliver_one(
                    "a",
                    Scope::All,
                    TypeId::of::<u32>(),
                    Verdicts::new(&1u32),
                    make(&table, &calls),
                    Headers::new(),
                    DeliveryKind::Send,
                    Completion::None,
                    false,
                )
                .unwrap();
        }
        let open = rxs.pop().unwrap();
        assert_eq!(open.pending.load(Ordering::Relaxed), 3);
        assert!(rxs.iter().all(|rx| rx.pending.load(Ordering::Relaxed) == 0));
    }

    #[test]
    fn a_guard_that_already_passed_the_body_is_not_asked_again() {
        let (table, even, _rxs) = guarded(2, false);
        assert!(table.shared_guard("a", Scope::Exported).is_some());
        let (shared, n) = table.shared_guard("a", Scope::All).unwrap();
        assert_eq!(n, 2);
        let calls = Cell::new(0);
        let fan = table.deliver_all(
            "a",
            Scope::All,
            TypeId::of::<u32>(),
            Verdicts::checked(&2u32, Some(shared)),
            make(&table, &calls),
            &Headers::new(),
            None,
            false,
        );
        assert_eq!((fan.delivered, even.0.load(Ordering::Relaxed)), (2, 0));
        // With a consumer without the guard, none is shared.
        let (mixed, _, _rxs) = guarded(1, true);
        assert!(mixed.shared_guard("a", Scope::All).is_none());
    }

    #[test]
    fn an_unused_reservation_gives_its_room_back() {
        let (tx, mut rx) = queue(1, None, None);
        let room = tx.try_reserve().unwrap();
        assert!(matches!(tx.try_reserve(), Err(NoRoom::Full)));
        drop(room);
        let room = tx.try_reserve().unwrap();
        let env = |n: u32| Envelope {
            address: Arc::from("a"),
            headers: Headers::new(),
            body: Arc::new(n),
            kind: DeliveryKind::Send,
            completion: Completion::None,
            span: SpanSlot::NONE,
        };
        assert!(room.send(env(1)).is_ok());
        assert!(matches!(tx.try_reserve(), Err(NoRoom::Full)));
        assert_eq!(rx.discard_all(), 1);
        assert!(matches!(tx.try_reserve(), Err(NoRoom::Closed)));
    }
}
