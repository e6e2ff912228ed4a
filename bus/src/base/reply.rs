// The reply channel of one request: a one-shot cell (`oneshot.rs`) with any
// number of senders (`ReplyTx`, cheaply clonable) and one receiver
// (`ReplyRx`, a future), carrying the `Outcome` of the request. The first
// `complete` wins; later ones are refused. When the last sender is dropped
// without completing, the receiver resolves to `None` ("no reply").

use std::sync::Arc;
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

/// The outcome a durable delivery is completed with once it was handled
/// (the transport acknowledges it); no requester ever reads it.
pub(crate) fn handled() -> Outcome {
    Outcome::Reply(ReplyEnvelope {
        address: Arc::from(""),
        headers: Headers::new(),
        body: Arc::new(()),
        type_name: "()",
        transformed: true,
        reply: None,
    })
}
