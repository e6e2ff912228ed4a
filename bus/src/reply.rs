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
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use codec_core::AnyBody;

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
    /// Set when the replier expects an answer (`reply_and_request`).
    pub(crate) reply: Option<ReplyTx>,
}

/// A failed request, as sent back by the recipient or its dispatcher.
pub(crate) struct Failure {
    pub(crate) kind: RequestErrorKind,
    pub(crate) code: i32,
    pub(crate) message: String,
}

pub(crate) enum Outcome {
    Reply(ReplyEnvelope),
    Failure(Failure),
}

struct State {
    outcome: Option<Outcome>,
    waker: Option<Waker>,
    senders: usize,
    /// The outcome was set once (it may since have been taken).
    completed: bool,
    receiver_alive: bool,
}

struct Cell {
    state: Mutex<State>,
}

impl Cell {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
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
        state: Mutex::new(State {
            outcome: None,
            waker: None,
            senders: 1,
            completed: false,
            receiver_alive: true,
        }),
    });
    (
        ReplyTx {
            cell: Arc::clone(&cell),
        },
        ReplyRx { cell },
    )
}

impl ReplyTx {
    /// Hands `outcome` to the requester. Gives it back when the request was
    /// already answered or the requester stopped waiting.
    pub(crate) fn complete(&self, outcome: Outcome) -> Result<(), Outcome> {
        let waker = {
            let mut state = self.cell.lock();
            if state.completed || !state.receiver_alive {
                return Err(outcome);
            }
            state.completed = true;
            state.outcome = Some(outcome);
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }

    /// Whether a `complete` could still be accepted.
    pub(crate) fn is_open(&self) -> bool {
        let state = self.cell.lock();
        !state.completed && state.receiver_alive
    }
}

impl Clone for ReplyTx {
    fn clone(&self) -> Self {
        self.cell.lock().senders += 1;
        Self {
            cell: Arc::clone(&self.cell),
        }
    }
}

impl Drop for ReplyTx {
    fn drop(&mut self) {
        let waker = {
            let mut state = self.cell.lock();
            state.senders -= 1;
            if state.senders == 0 && !state.completed {
                state.waker.take()
            } else {
                None
            }
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl Future for ReplyRx {
    /// `None` when every sender was dropped without answering.
    type Output = Option<Outcome>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.cell.lock();
        if let Some(outcome) = state.outcome.take() {
            return Poll::Ready(Some(outcome));
        }
        if state.senders == 0 || state.completed {
            return Poll::Ready(None);
        }
        match &mut state.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            slot => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl Drop for ReplyRx {
    fn drop(&mut self) {
        // Drop a reply nobody will read outside the lock: its body may run
        // arbitrary `Drop` code.
        let leftover = {
            let mut state = self.cell.lock();
            state.receiver_alive = false;
            state.waker = None;
            state.outcome.take()
        };
        drop(leftover);
    }
}
