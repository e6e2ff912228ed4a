// A handler consumer's run claim and its demand, in one state machine: one
// run at a time, whether the consumer's own task starts it (for a queued
// message) or a delivering task does (for a message that finds the
// consumer idle, the inline start); pause, fetch and stop.
//
// Contract:
// * `word` packs the claim (`BUSY`) with what decides whether a run may
//   start: `PAUSED` (Vert.x `pause`: no run without demand), `STOPPING`
//   (unregistered: no run at all), `SHUT` (the consumer's task has ended)
//   and `WAITING` (the consumer's task waits for the claim, set beside
//   `BUSY`; whoever releases wakes it).
// * An inline start claims with one compare-and-swap from exactly "idle
//   and flowing" (`0`) to `BUSY`: once `pause` or `stop` has set its bit,
//   which both do before they return, no inline run can start.
// * The consumer's task claims for a queued message only with demand: the
//   consumer flowing (no `PAUSED`, checked in the same compare-and-swap)
//   or a credit taken from `demand` (Vert.x `fetch`).
// * `release` clears `BUSY` and `WAITING` and says whether somebody
//   waited; `PAUSED` and `STOPPING` stay.
//
// This file depends on nothing else in the crate, so that its interleavings
// can be checked with `loom`: `bus/tests/loom_claim.rs` includes it, and
// built as that test with `--cfg loom` its atomics come from `loom`.
#![allow(unexpected_cfgs)]

#[cfg(all(loom, test))]
use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
#[cfg(not(all(loom, test)))]
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// A run holds the claim.
const BUSY: usize = 1;
/// The consumer's task waits for the claim (set beside `BUSY`).
const WAITING: usize = 2;
/// Paused: a run needs a credit of demand.
const PAUSED: usize = 4;
/// Unregistered: no run starts any more.
const STOPPING: usize = 8;
/// The consumer's task has ended: no run starts, nobody waits.
const SHUT: usize = 16;

/// `demand` when the consumer is not paused.
const FLOWING: u64 = u64::MAX;

/// A consumer's run claim and demand.
pub(crate) struct Claim {
    word: AtomicUsize,
    /// Messages a paused consumer may still take (`FLOWING`: no limit).
    demand: AtomicU64,
}

/// What a claim for a queued message found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// Claimed: the run may start.
    Claimed,
    /// A run goes on; `WAITING` is set, and its release wakes the waiter.
    Busy,
    /// Paused and no credit: wait for demand.
    Paused,
    /// Stopping or shut: no run starts.
    Stopped,
}

/// Whether a queued message may be handled now, as far as demand goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Demand {
    /// Not paused: no credit needed (the claim checks `PAUSED` again).
    Flowing,
    /// Paused, and one credit was taken for this message.
    Credit,
    /// Paused without credit: wait until `resume` or `fetch`.
    Wait,
    /// Stopping or shut.
    Stopped,
}

impl Claim {
    /// Idle and flowing.
    pub(crate) fn new() -> Self {
        Self {
            word: AtomicUsize::new(0),
            demand: AtomicU64::new(FLOWING),
        }
    }

    /// Claims for a run the delivering task starts: only while idle,
    /// flowing and registered.
    #[inline]
    pub(crate) fn try_claim(&self) -> bool {
        self.word
            .compare_exchange(0, BUSY, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }

    /// Whether a run holds the claim of a consumer that is flowing and
    /// registered: a claim that [`try_claim`](Self::try_claim) may get
    /// once the run ends.
    #[inline]
    pub(crate) fn held_by_a_run(&self) -> bool {
        self.word.load(Ordering::Acquire) & (BUSY | PAUSED | STOPPING | SHUT) == BUSY
    }

    /// Takes a credit of demand for one queued message, if the consumer
    /// is paused.
    pub(crate) fn demand(&self) -> Demand {
        if self.word.load(Ordering::Acquire) & (STOPPING | SHUT) != 0 {
            return Demand::Stopped;
        }
        let mut demand = self.demand.load(Ordering::Acquire);
        loop {
            match demand {
                FLOWING => return Demand::Flowing,
                0 => return Demand::Wait,
                n => match self.demand.compare_exchange(
                    n,
                    n - 1,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => return Demand::Credit,
                    Err(now) => demand = now,
                },
            }
        }
    }

    /// Claims for a queued message, `credit` taken or not: without one the
    /// consumer must not be paused.
    pub(crate) fn claim_queued(&self, credit: bool) -> Attempt {
        let mut now = self.word.load(Ordering::Acquire);
        loop {
            let next = if now & (STOPPING | SHUT) != 0 {
                return Attempt::Stopped;
            } else if now & BUSY != 0 {
                if now & WAITING != 0 {
                    return Attempt::Busy;
                }
                now | WAITING
            } else if now & PAUSED != 0 && !credit {
                return Attempt::Paused;
            } else {
                now | BUSY
            };
            match self
                .word
                .compare_exchange(now, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) if next & WAITING != 0 => return Attempt::Busy,
                Ok(_) => return Attempt::Claimed,
                Err(actual) => now = actual,
            }
        }
    }

    /// Ends a run; `true` when the consumer's task waits for the claim.
    #[inline]
    pub(crate) fn release(&self) -> bool {
        self.word.fetch_and(!(BUSY | WAITING), Ordering::AcqRel) & WAITING != 0
    }

    /// Marks the consumer's task ended once no run holds the claim:
    /// `false` (and `WAITING` set) while one does.
    pub(crate) fn shut(&self) -> bool {
        let mut now = self.word.load(Ordering::Acquire);
        loop {
            let next = if now & BUSY != 0 {
                now | WAITING
            } else {
                now | SHUT | STOPPING
            };
            if next == now {
                return now & SHUT != 0;
            }
            match self
                .word
                .compare_exchange(now, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return next & SHUT != 0,
                Err(actual) => now = actual,
            }
        }
    }

    /// Stops the consumer: once this returns, no run starts.
    pub(crate) fn stop(&self) {
        self.word.fetch_or(STOPPING, Ordering::AcqRel);
    }

    /// Whether the consumer was stopped.
    pub(crate) fn is_stopped(&self) -> bool {
        self.word.load(Ordering::Acquire) & (STOPPING | SHUT) != 0
    }

    /// Pauses the consumer: once this returns, no run starts without a
    /// credit (a run going on finishes).
    pub(crate) fn pause(&self) {
        self.demand.store(0, Ordering::Release);
        self.word.fetch_or(PAUSED, Ordering::AcqRel);
    }

    /// Lets the consumer take messages without limit again.
    pub(crate) fn resume(&self) {
        self.demand.store(FLOWING, Ordering::Release);
        self.word.fetch_and(!PAUSED, Ordering::AcqRel);
    }

    /// Adds `n` credits to a paused consumer; nothing when it flows.
    pub(crate) fn fetch(&self, n: u64) {
        let _ = self
            .demand
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |d| {
                (d != FLOWING).then(|| d.saturating_add(n).min(FLOWING - 1))
            });
    }
}
