// A consumer's queue: bounded by the count of messages accepted and not
// yet handed to the handler (`pending`), over tokio's unbounded channel.
//
// A consumer with a handler may also take a message without the queue
// (`Inline`): when the queue was empty as the message reserved its room,
// and the consumer is idle, the handler starts on the delivering task (a
// requester's, or a cluster reader's) instead of waking the consumer's.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc;

use crate::telemetry::probe::{Probe, ProbeRef};
use crate::transport::local::envelope::Envelope;

/// A consumer that can start a handler's run on the deliverer's task
/// (the scheduler's `Runner`).
pub(crate) trait Inline: Send + Sync {
    /// Claims the consumer for one run, if it is idle and flowing and the
    /// run would see the context it sees on the consumer's task (`traced`:
    /// the message has a span): until the run ends, its task takes no
    /// message.
    fn claim(&self, traced: bool) -> bool;

    /// Runs the handler on `env` under the claim: its first step here, the
    /// rest (if it waits for anything) on the consumer's task. `probe`: the
    /// address's metric handles (metrics on).
    fn run(&self, env: Envelope, probe: Option<&Probe>);
}

/// A new consumer queue of `capacity`.
///
/// The capacity counts every message accepted and not yet handed to the
/// handler, including one the consumer task has taken out of the channel
/// but holds while the consumer is paused. So a paused consumer accepts
/// exactly `capacity` messages, never `capacity + 1`.
///
/// That count (`pending`) is the only bound: the channel below is tokio's
/// unbounded one, whose send and receive are one atomic operation each,
/// where a bounded channel's semaphore would count the same messages again
/// and take a lock on every receive.
///
/// With `probe` (metrics on), the queue keeps its address's pending gauge.
///
/// With `inline`, a message reserving room in an empty queue may be
/// offered to it first ([`Room::send_or_run`]).
pub(crate) fn queue(
    capacity: usize,
    probe: Option<Arc<Probe>>,
    inline: Option<Arc<dyn Inline>>,
) -> (QueueTx, QueueRx) {
    let (tx, rx) = mpsc::unbounded_channel();
    let pending = Arc::new(AtomicUsize::new(0));
    let probe = ProbeRef::from(probe);
    (
        QueueTx {
            tx,
            pending: Arc::clone(&pending),
            capacity,
            probe: probe.clone(),
            inline,
        },
        QueueRx { rx, pending, probe },
    )
}

/// The sending side of a consumer queue.
#[derive(Clone)]
pub(crate) struct QueueTx {
    tx: mpsc::UnboundedSender<Envelope>,
    pending: Arc<AtomicUsize>,
    capacity: usize,
    probe: ProbeRef,
    inline: Option<Arc<dyn Inline>>,
}

impl QueueTx {
    /// Reserves room for one message without waiting: `Full` when
    /// `capacity` messages are accepted and not yet handed over, `Closed`
    /// when the consumer is gone. The room is given back if the
    /// reservation is dropped unused.
    #[inline]
    pub(crate) fn try_reserve(&self) -> Result<Room<'_>, NoRoom> {
        let before = self.pending.fetch_add(1, Ordering::AcqRel);
        if before >= self.capacity {
            self.pending.fetch_sub(1, Ordering::AcqRel);
            return Err(NoRoom::Full);
        }
        if self.tx.is_closed() {
            self.pending.fetch_sub(1, Ordering::AcqRel);
            return Err(NoRoom::Closed);
        }
        Ok(Room {
            queue: Some(self),
            empty: before == 0,
        })
    }
}

/// How a message reached its consumer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Handed {
    /// Into its queue: the consumer's task was woken for it.
    Queued,
    /// Its handler started on this task ([`Inline`]).
    Ran,
}

/// Why a consumer queue has no room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NoRoom {
    /// At capacity.
    Full,
    /// The consumer is gone.
    Closed,
}

/// Room for one message in a consumer queue, reserved and not used yet.
pub(crate) struct Room<'a> {
    // `None` once sent.
    queue: Option<&'a QueueTx>,
    // Nothing else was accepted and not yet handed over when the room was
    // reserved: the consumer holds no message, none waits before this one.
    empty: bool,
}

impl Room<'_> {
    /// [`send`](Self::send) for a message whose deliverer may run its
    /// handler (a request made on this node, a message from the cluster to
    /// the one consumer of its address): when the queue was empty and its
    /// consumer can start the handler here (it has one, and it is idle and
    /// flowing), the handler's run starts on this task and nothing is
    /// queued; the consumer's task is not woken.
    ///
    /// Nothing can overtake: an earlier message still counts in the queue
    /// until the consumer task holds the consumer idle-or-busy claim the
    /// inline run needs too.
    #[inline(always)]
    pub(crate) fn send_or_run(mut self, env: Envelope) -> Result<Handed, Envelope> {
        if let Some(queue) = self.queue
            && self.empty
            && let Some(inline) = &queue.inline
            && inline.claim(env.span.get().is_some())
        {
            // Handed over, as the consumer task marks a message it takes.
            self.queue = None;
            queue.pending.fetch_sub(1, Ordering::AcqRel);
            inline.run(env, queue.probe.get());
            return Ok(Handed::Ran);
        }
        self.send(env).map(|()| Handed::Queued)
    }

    /// Enqueues `env` in the reserved room. Hands it back when the
    /// consumer closed its queue since the room was reserved (its room is
    /// given back then).
    #[inline(always)]
    pub(crate) fn send(mut self, env: Envelope) -> Result<(), Envelope> {
        match self.queue.take() {
            Some(queue) => match queue.tx.send(env) {
                Ok(()) => {
                    if let Some(probe) = queue.probe.get() {
                        probe.pending_add(1);
                    }
                    Ok(())
                }
                Err(mpsc::error::SendError(env)) => {
                    queue.pending.fetch_sub(1, Ordering::AcqRel);
                    Err(env)
                }
            },
            None => Err(env),
        }
    }
}

impl Drop for Room<'_> {
    fn drop(&mut self) {
        if let Some(queue) = self.queue {
            // Reserved and never used: the room counts no more.
            queue.pending.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// The receiving side of a consumer queue.
pub(crate) struct QueueRx {
    rx: mpsc::UnboundedReceiver<Envelope>,
    pub(super) pending: Arc<AtomicUsize>,
    probe: ProbeRef,
}

impl QueueRx {
    /// Polls for the next message, which counts until [`taken`](Self::taken).
    #[inline]
    pub(crate) fn poll_recv(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Envelope>> {
        self.rx.poll_recv(cx)
    }

    /// One received message was handed over (or discarded): it no longer
    /// counts against the capacity.
    #[inline]
    pub(crate) fn taken(&self) {
        self.pending.fetch_sub(1, Ordering::AcqRel);
        if let Some(probe) = self.probe.get() {
            probe.pending_sub(1);
        }
    }

    /// The metric handles of the queue's address (metrics on).
    #[inline]
    pub(crate) fn probe(&self) -> Option<&Probe> {
        self.probe.get()
    }

    /// Closes the queue and drops what is left, without an `.await`;
    /// returns how many. For a consumer that cannot wait (a stream dropped
    /// while another thread delivers to it).
    ///
    /// A message enqueued just before the close may not be visible to the
    /// receiver yet, so the queue is drained until no room is reserved any
    /// more (`pending` is 0): a reservation is held for the few
    /// instructions that make the body and enqueue it (or get it back,
    /// refused, once the queue is closed), never across an `.await`, so
    /// this waits at most that long, yielding the thread.
    pub(crate) fn discard_all(&mut self) -> u64 {
        self.rx.close();
        let mut n = 0;
        loop {
            while self.rx.try_recv().is_ok() {
                self.taken();
                n += 1;
            }
            if self.pending.load(Ordering::Acquire) == 0 {
                return n;
            }
            std::thread::yield_now();
        }
    }
}
