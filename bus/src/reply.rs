// The reply channel of one request.
//
// Contract: a one-shot cell with any number of senders (`ReplyTx` is
// cheaply clonable) and one receiver (`ReplyRx`, a future). The first
// `complete` wins; later ones are refused. When the last sender is dropped
// without completing, the receiver resolves to `None` ("no reply").
//
// Why not `tokio::sync::oneshot`: the consumer's dispatcher must be able to
// fail a request after the handler returned an error or panicked, while the
// handler may still hold (or have dropped) the `Message` that can reply.
// Both need a sender, and the requester must learn "nobody can reply any
// more" only when *both* are gone. The cell costs one allocation per
// request, like a oneshot.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::task::AtomicWaker;

use codecbus_core::AnyBody;

use crate::error::RequestErrorKind;
use crate::headers::Headers;

/// A reply travelling back to a requester.
pub(crate) struct ReplyEnvelope {
    pub(crate) address: Arc<str>,
    pub(crate) headers: Headers,
    pub(crate) body: AnyBody,
    pub(crate) type_name: &'static str,
    /// `false`: the requester applies the local-delivery transform (a local
    /// reply); `true`: the body is already the requester's own (decoded from
    /// the wire by a remote transport).
    pub(crate) transformed: bool,
    /// Set when the replier expects an answer (`reply_and_request`). Boxed:
    /// conversations are rare, and every request's reply slot holds an
    /// envelope.
    pub(crate) reply: Option<Box<Turn>>,
}

/// Where the answer to a reply goes, and how long its replier waits.
pub(crate) struct Turn {
    pub(crate) tx: ReplyTx,
    /// A remote transport carrying the reply bounds its own wait by it;
    /// unused once the envelope reaches the requester.
    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    pub(crate) wait: Duration,
}

/// A failed request, as sent back by the recipient or its dispatcher.
pub(crate) struct Failure {
    pub(crate) kind: RequestErrorKind,
    pub(crate) code: i32,
    pub(crate) message: String,
}

/// Why a reply cell takes no (further) outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closed {
    /// It was completed already.
    Answered,
    /// The receiver was dropped (timed out, cancelled) first.
    RequesterGone,
}

pub(crate) enum Outcome {
    Reply(ReplyEnvelope),
    Failure(Failure),
}

// `state` packs the sender count (in units of `SENDER`) with two flags.
const COMPLETED: usize = 1;
const RECEIVER_GONE: usize = 2;
const SENDER: usize = 4;

struct Cell {
    state: AtomicUsize,
    // Written once by the completing sender, taken once by the receiver;
    // the lock is only ever taken on those two paths.
    outcome: Mutex<Option<Outcome>>,
    waker: AtomicWaker,
}

impl Cell {
    fn lock(&self) -> MutexGuard<'_, Option<Outcome>> {
        self.outcome.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The sending half: whoever holds one may answer the request.
pub(crate) struct ReplyTx {
    cell: Arc<Cell>,
}

/// The receiving half, held by the requester.
pub(crate) struct ReplyRx {
    cell: Arc<Cell>,
}

pub(crate) fn channel() -> (ReplyTx, ReplyRx) {
    let cell = Arc::new(Cell {
        state: AtomicUsize::new(SENDER),
        outcome: Mutex::new(None),
        waker: AtomicWaker::new(),
    });
    (
        ReplyTx {
            cell: Arc::clone(&cell),
        },
        ReplyRx { cell },
    )
}

impl ReplyTx {
    /// Hands `outcome` to the requester. Gives it back, with the reason,
    /// when the request was already answered or the requester stopped
    /// waiting.
    pub(crate) fn complete(&self, outcome: Outcome) -> Result<(), (Closed, Outcome)> {
        {
            // The lock makes concurrent completions take turns; the first
            // one sets COMPLETED, the others see it.
            let mut slot = self.cell.lock();
            let state = self.cell.state.load(Ordering::Acquire);
            if state & COMPLETED != 0 {
                return Err((Closed::Answered, outcome));
            }
            if state & RECEIVER_GONE != 0 {
                return Err((Closed::RequesterGone, outcome));
            }
            *slot = Some(outcome);
            self.cell.state.fetch_or(COMPLETED, Ordering::AcqRel);
        }
        self.cell.waker.wake();
        Ok(())
    }

    /// Whether a `complete` could still be accepted.
    pub(crate) fn is_open(&self) -> bool {
        self.cell.state.load(Ordering::Acquire) & (COMPLETED | RECEIVER_GONE) == 0
    }
}

impl Clone for ReplyTx {
    fn clone(&self) -> Self {
        self.cell.state.fetch_add(SENDER, Ordering::Relaxed);
        Self {
            cell: Arc::clone(&self.cell),
        }
    }
}

impl Drop for ReplyTx {
    fn drop(&mut self) {
        let prior = self.cell.state.fetch_sub(SENDER, Ordering::AcqRel);
        if prior < 2 * SENDER && prior & COMPLETED == 0 {
            // The last sender left without an answer.
            self.cell.waker.wake();
        }
    }
}

impl ReplyRx {
    fn check(&self) -> Option<Option<Outcome>> {
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

impl Future for ReplyRx {
    /// `None` when every sender was dropped without answering.
    type Output = Option<Outcome>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(done) = self.check() {
            return Poll::Ready(done);
        }
        self.cell.waker.register(cx.waker());
        // Re-check: a completion between the first check and `register`
        // may have woken nobody.
        match self.check() {
            Some(done) => Poll::Ready(done),
            None => Poll::Pending,
        }
    }
}

impl Drop for ReplyRx {
    fn drop(&mut self) {
        // A reply nobody reads is dropped with the cell, by its last holder.
        self.cell.state.fetch_or(RECEIVER_GONE, Ordering::AcqRel);
    }
}
