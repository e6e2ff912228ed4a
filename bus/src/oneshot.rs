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
// request, like a oneshot.
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
    future::AtomicWaker,
    sync::atomic::{AtomicUsize, Ordering},
    sync::{Arc, Mutex, MutexGuard},
};
#[cfg(not(all(loom, test)))]
use {
    futures_util::task::AtomicWaker,
    std::sync::atomic::{AtomicUsize, Ordering},
    std::sync::{Arc, Mutex, MutexGuard},
};

/// Why a cell takes no (further) value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closed {
    /// It was completed already.
    Answered,
    /// The receiver was dropped (timed out, cancelled) first.
    RequesterGone,
}

// `state` packs the sender count (in units of `SENDER`) with two flags.
const COMPLETED: usize = 1;
const RECEIVER_GONE: usize = 2;
const SENDER: usize = 4;

struct Cell<T> {
    state: AtomicUsize,
    // Written once by the completing sender, taken once by the receiver;
    // the lock is only ever taken on those two paths.
    value: Mutex<Option<T>>,
    waker: AtomicWaker,
}

impl<T> Cell<T> {
    fn lock(&self) -> MutexGuard<'_, Option<T>> {
        #[cfg(not(all(loom, test)))]
        return self
            .value
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // loom has no poisoning to recover from.
        #[cfg(all(loom, test))]
        return self.value.lock().unwrap_or_else(|_| unreachable!());
    }

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
        value: Mutex::new(None),
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
        {
            // The lock makes concurrent completions take turns; the first
            // one sets COMPLETED, the others see it.
            let mut slot = self.cell.lock();
            let state = self.cell.state.load(Ordering::Acquire);
            if state & COMPLETED != 0 {
                return Err((Closed::Answered, value));
            }
            if state & RECEIVER_GONE != 0 {
                return Err((Closed::RequesterGone, value));
            }
            *slot = Some(value);
            self.cell.state.fetch_or(COMPLETED, Ordering::AcqRel);
        }
        self.cell.wake();
        Ok(())
    }

    /// Whether a `complete` could still be accepted.
    pub(crate) fn is_open(&self) -> bool {
        self.cell.state.load(Ordering::Acquire) & (COMPLETED | RECEIVER_GONE) == 0
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
            Some(self.cell.lock().take())
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
