// How a delivered message completes (`Completion`): nothing, a reply, or a
// durable acknowledgement.
//
// The reply channel of one request: a one-shot cell (`oneshot.rs`) with any
// number of senders (`ReplyTx`, cheaply clonable) and one receiver
// (`ReplyRx`, a future), carrying the `Outcome` of the request. The first
// `complete` wins; later ones are refused. When the last sender is dropped
// without completing, the receiver resolves to `None` ("no reply").
//
// A durable message's acknowledgement is the same cell carrying a
// `Settlement`, shared out as one `Ack` per delivery: `None` there means
// every delivery was handled.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use codecbus_core::AnyBody;

use crate::base::error::RequestErrorKind;
use crate::base::headers::Headers;
use crate::base::oneshot;

pub(crate) use crate::base::oneshot::Closed;

/// The sending half: whoever holds one may answer the request.
pub(crate) type ReplyTx = oneshot::Sender<Outcome>;

/// The receiving half, held by the requester.
pub(crate) type ReplyRx = oneshot::Receiver<Outcome>;

/// A new reply channel.
pub(crate) fn channel() -> (ReplyTx, ReplyRx) {
    oneshot::channel()
}

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

pub(crate) enum Outcome {
    Reply(ReplyEnvelope),
    Failure(Failure),
}

/// How a durable delivery ended, when not simply handled: the
/// acknowledgement's receiver reads `None` (every part of the delivery
/// was handled and let go) or the first of these.
pub(crate) enum Settlement {
    /// A handler failed (returned an error, panicked, or called `fail`);
    /// its text is the dead letter's reason (read by the durable reader,
    /// feature `jetstream`).
    Failed(#[cfg_attr(not(feature = "jetstream"), allow(dead_code))] Failure),
    /// The delivery was let go unhandled: dropped by an inbound
    /// interceptor, discarded from a queue, or not of the consumer's type.
    Unhandled,
}

/// The sending half of a durable message's acknowledgement.
pub(crate) type AckTx = oneshot::Sender<Settlement>;

/// The receiving half, held by the transport that settles the message.
#[cfg(feature = "jetstream")]
pub(crate) type AckRx = oneshot::Receiver<Settlement>;

/// A new acknowledgement channel.
#[cfg(feature = "jetstream")]
pub(crate) fn ack_channel() -> (AckTx, AckRx) {
    oneshot::channel()
}

/// One delivery's share of a durable message's acknowledgement (a publish
/// delivered to several consumers has one each). Marked handled, it lets
/// go without a word, and once every share did, the receiver reads
/// `None`: acknowledge. A failure settles the message at once; a share
/// let go unmarked settles it as [`Settlement::Unhandled`].
pub(crate) struct Ack {
    tx: AckTx,
    handled: AtomicBool,
}

impl Ack {
    /// A share of the acknowledgement `tx`.
    pub(crate) fn new(tx: AckTx) -> Arc<Self> {
        Arc::new(Self {
            tx,
            handled: AtomicBool::new(false),
        })
    }

    /// The delivery was handled.
    pub(crate) fn handled(&self) {
        self.handled.store(true, Ordering::Release);
    }

    /// A handler failed: the message is settled as failed, unless it was
    /// settled already.
    pub(crate) fn fail(&self, failure: Failure) -> Result<(), Closed> {
        self.tx
            .complete(Settlement::Failed(failure))
            .map_err(|(closed, _)| closed)
    }
}

impl Drop for Ack {
    fn drop(&mut self) {
        if !self.handled.load(Ordering::Acquire) {
            let _ = self.tx.complete(Settlement::Unhandled);
        }
    }
}

/// How a delivered message completes: nothing awaits it (a send or a
/// publish), a requester awaits its reply, or a transport awaits its
/// acknowledgement (a durable message).
#[derive(Clone)]
pub(crate) enum Completion {
    None,
    Reply(ReplyTx),
    Ack(Arc<Ack>),
}

impl Completion {
    /// Fails the message: the requester gets the failure, a durable
    /// message is settled as failed; nothing happens without either.
    pub(crate) fn fail(&self, kind: RequestErrorKind, message: String) {
        let failure = Failure {
            kind,
            code: crate::base::error::NO_FAILURE_CODE,
            message,
        };
        match self {
            Self::None => {}
            Self::Reply(tx) => {
                let _ = tx.complete(Outcome::Failure(failure));
            }
            Self::Ack(ack) => {
                let _ = ack.fail(failure);
            }
        }
    }
}
