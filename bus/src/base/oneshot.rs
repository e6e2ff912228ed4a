// A one-shot cell with any number of senders and one receiver: the reply
// channel of a request (`reply.rs` fills it with an `Outcome`).
//
// Contract: `Sender` is cheaply clonable; the first `complete` wins and
// later ones get their value back with `Closed::Answered`; a `complete`
// after the receiver was dropped gets it back with `Closed::RequesterGone`.
// When the last sender is dropped without completing, the receiver
// resolves to `None` ("no reply"). The receiver is a future.
//
// Why not `tokio::sync::oneshot`: the consumer's dispatcher must be able to
// fail a request after the handler returned an error or panicked, while the
// handler may still hold (or have dropped) the `Message` that can reply.
// Both need a sender, and the requester must learn "nobody can reply any
// more" only when *both* are gone. The cell costs one allocation per
// request, like a oneshot, and no lock: a sender claims the value slot
// with one compare-and-swap (`WRITING`), fills it, and publishes it with
// `COMPLETED`; the receiver reads the slot only after it saw `COMPLETED`.
//
// This file depends on nothing else in the crate, so that its interleavings
// can be checked with `loom`: `bus/tests/loom_reply.rs`
// includes it, and built as that test with `--cfg loom` (`all(loom, test)`;
// the library itself always uses `std`) its primitives come from `loom`.
#![allow(unexpected_cfgs)]

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

#[cfg(all(loom, test))]
use loom::{
    cell::UnsafeCell,
    future::AtomicWaker,
    sync::Arc,
    sync::atomic::{AtomicUsize, Ordering},
};
#[cfg(not(all(loom, test)))]
use {
    futures_util::task::AtomicWaker,
    std::sync::Arc,
    std::sync::atomic::{AtomicUsize, Ordering},
};

/// `std`'s `UnsafeCell` with the access method of loom's, which checks
/// every access against the model's happens-before.
#[cfg(not(all(loom, test)))]
struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(all(loom, test)))]
impl<T> UnsafeCell<T> {
    fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Why a cell takes no (further) value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closed {
    /// It was completed already.
    Answered,
    /// The receiver was dropped (timed out, cancelled) first.
    RequesterGone,
}

// `state` packs the sender count (in units of `SENDER`) with three flags.
/// The value is in the slot, for the receiver.
const COMPLETED: usize = 1;
const RECEIVER_GONE: usize = 2;
/// A sender claimed the slot and is filling it; `COMPLETED` follows.
const WRITING: usize = 4;
const SENDER: usize = 8;

struct Cell<T> {
    state: AtomicUsize,
    // Written once, by the sender that set `WRITING`, before it sets
    // `COMPLETED`; taken once, by the receiver, after it saw `COMPLETED`.
    value: UnsafeCell<Option<T>>,
    waker: AtomicWaker,
}

// SAFETY: the cell hands a `T` from one thread to another (so `T: Send`)
// and never gives out a shared reference to it; the slot is accessed by
// one party at a time, as `state` orders (see `complete` and `take`).
unsafe impl<T: Send> Send for Cell<T> {}
unsafe impl<T: Send> Sync for Cell<T> {}

impl<T> Cell<T> {
    fn wake(&self) {
        self.waker.wake();
    }

    fn register(&self, waker: &std::task::Waker) {
        #[cfg(not(all(loom, test)))]
        self.waker.register(waker);
        #[cfg(all(loom, test))]
        self.waker.register_by_ref(waker);
    }
}

/// The sending half: whoever holds one may complete the cell.
pub(crate) struct Sender<T> {
    cell: Arc<Cell<T>>,
}

/// The receiving half: resolves to the value, or `None` once every sender
/// is gone without completing.
pub(crate) struct Receiver<T> {
    cell: Arc<Cell<T>>,
}

/// A new cell: one sender, one receiver.
pub(crate) fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let cell = Arc::new(Cell {
        state: AtomicUsize::new(SENDER),
        value: UnsafeCell::new(None),
        waker: AtomicWaker::new(),
    });
    (
        Sender {
            cell: Arc::clone(&cell),
        },
        Receiver { cell },
    )
}

impl<T> Sender<T> {
    /// Hands `value` to the receiver. Gives it back, with the reason, when
    /// the cell was completed already or the receiver is gone.
    pub(crate) fn complete(&self, value: T) -> Result<(), (Closed, T)> {
        // Claim the slot: of concurrent completions exactly one sets
        // WRITING; the others see it (or COMPLETED) and are refused.
        let mut state = self.cell.state.load(Ordering::Acquire);
        loop {
            if state & (COMPLETED | WRITING) != 0 {
                return Err((Closed::Answered, value));
            }
            if state & RECEIVER_GONE != 0 {
                return Err((Closed::RequesterGone, value));
            }
            match self.cell.state.compare_exchange_weak(
                state,
                state | WRITING,
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(now) => state = now,
            }
        }
        // SAFETY: this sender alone set WRITING, and the receiver reads the
        // slot only after COMPLETED, which is set below: nobody else
        // touches the slot until then.
        self.cell
            .value
            .with_mut(|slot| unsafe { *slot = Some(value) });
        // Release: the value is visible to whoever sees COMPLETED. A
        // receiver dropped meanwhile leaves it to be dropped with the cell.
        self.cell.state.fetch_or(COMPLETED, Ordering::AcqRel);
        self.cell.wake();
        Ok(())
    }

    /// Whether a `complete` could still be accepted.
    pub(crate) fn is_open(&self) -> bool {
        self.cell.state.load(Ordering::Acquire) & (COMPLETED | WRITING | RECEIVER_GONE) == 0
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.cell.state.fetch_add(SENDER, Ordering::Relaxed);
        Self {
            cell: Arc::clone(&self.cell),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let prior = self.cell.state.fetch_sub(SENDER, Ordering::AcqRel);
        if prior < 2 * SENDER && prior & COMPLETED == 0 {
            // The last sender left without a value.
            self.cell.wake();
        }
    }
}

impl<T> Receiver<T> {
    fn check(&self) -> Option<Option<T>> {
        let state = self.cell.state.load(Ordering::Acquire);
        if state & COMPLETED != 0 {
            // SAFETY: COMPLETED was seen with Acquire, so the completing
            // sender's write happened before, and no sender touches the slot
            // after it; only this receiver reads it (`Receiver` is not
            // `Clone`, and `check` takes `&self` of a pinned future that is
            // polled by one thread at a time).
            Some(self.cell.value.with_mut(|slot| unsafe { (*slot).take() }))
        } else if state < SENDER {
            Some(None)
        } else {
            None
        }
    }
}

impl<T> Future for Receiver<T> {
    /// `None` when every sender was dropped without completing.
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(done) = self.check() {
            return Poll::Ready(done);
        }
        self.cell.register(cx.waker());
        // Re-check: a completion between the first check and `register`
        // may have woken nobody.
        match self.check() {
            Some(done) => Poll::Ready(done),
            None => Poll::Pending,
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        // A value nobody reads is dropped with the cell, by its last holder.
        self.cell.state.fetch_or(RECEIVER_GONE, Ordering::AcqRel);
    }
}
