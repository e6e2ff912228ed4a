// The answers of requests and conversations across the cluster: a
// request's reply or failure goes back as a frame, a reply that expects
// an answer goes as a request of its own, and an answer arriving for a
// requester on this node becomes its reply (or error).

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::base::error::{NO_FAILURE_CODE, RequestError, RequestErrorKind};
use crate::base::reply::{self, Failure, Outcome, ReplyEnvelope, ReplyRx, Turn};
use crate::transport::cluster::frame::{Frame, Writing, no_reply_frame, reply_frame, too_large};
use crate::transport::cluster::inbound::{decode, undecodable};
use crate::transport::local::Refusal;
use crate::transport::{BoxFuture, Node, Outbound};

/// The answer to a turn: its frame and where to answer it in turn (when
/// its sender awaits that), or the turn's error.
pub(crate) type Answered<To> = Result<(Frame, Option<To>), RequestError>;

/// How a transport carries the answers of a conversation: a request's
/// reply (or failure) back to where the requester waits, and a reply that
/// expects an answer, as a request of its own.
pub(crate) trait Answers: Send + Sync + 'static {
    /// Where an answer goes (a NATS reply subject, an in-memory slot).
    type To: Send + 'static;

    /// Who sets [`max_payload`](Self::max_payload), for messages.
    const LIMIT: &'static str;

    /// The largest message the transport carries, headers included.
    fn max_payload(&self) -> usize;

    /// How answers are written: the wire version, and above which size a
    /// body leaves compressed (by default: the default version, never).
    fn writing(&self) -> Writing {
        Writing::default()
    }

    /// Sends `frame`, the last word, to `to`.
    fn finish(self: &Arc<Self>, to: Self::To, frame: Frame) -> BoxFuture<'static, ()>;

    /// Sends `frame` to `to` and awaits its answer for at most `wait`:
    /// the answer's frame and where to answer it in turn, if its sender
    /// awaits that; or the error of the turn (`address` names it).
    fn ask(
        self: &Arc<Self>,
        to: Self::To,
        frame: Frame,
        wait: Duration,
        address: &Arc<str>,
    ) -> BoxFuture<'static, Answered<Self::To>>;
}

/// Turns an answer arriving for a requester on this node into its reply,
/// or its error (counted by the caller). One that carries `to` comes from
/// a `reply_and_request`: the replier awaits an answer there, which a task
/// sends once the requester gives it.
pub(crate) fn read_answer<A: Answers>(
    link: &Arc<A>,
    inner: &Arc<dyn Node>,
    address: &Arc<str>,
    frame: Frame,
    to: Option<A::To>,
) -> Result<ReplyEnvelope, RequestError> {
    match read_reply(inner, address, frame) {
        Ok(mut env) => {
            env.reply = to.map(|to| {
                let (tx, rx) = reply::channel();
                tokio::spawn(answer(
                    Arc::clone(link),
                    Arc::downgrade(inner),
                    Arc::clone(address),
                    to,
                    rx,
                ));
                Box::new(Turn {
                    tx,
                    wait: Duration::ZERO,
                })
            });
            Ok(env)
        }
        Err(err) => {
            if let Some(to) = to
                && err.kind() == RequestErrorKind::Codec
            {
                // The replier awaits an answer to this turn: tell it at once.
                let failure = Frame::failure(err.kind(), NO_FAILURE_CODE, err.message().to_owned());
                tokio::spawn(link.finish(to, failure));
            }
            Err(err)
        }
    }
}

/// Awaits the local answer to a remote request (a consumer's reply to a
/// request, or a requester's answer in a conversation) and sends it to
/// `to`. A reply made with `reply_and_request` goes as a request of its
/// own, whose answer is handed to the waiting replier.
pub(crate) async fn answer<A: Answers>(
    link: Arc<A>,
    inner: Weak<dyn Node>,
    address: Arc<str>,
    to: A::To,
    rx: ReplyRx,
) {
    // As for a local request, the wait ends when the consumer answers,
    // fails, or drops the message (the requester's own timeout is its
    // business; a late answer finds nobody and is dropped).
    let outcome = rx.await;
    let Some(inner) = inner.upgrade() else { return };
    let frame = match outcome {
        Some(Outcome::Reply(mut env)) => {
            let next = env.reply.take();
            let frame =
                reply_frame(&inner, &address, &env, link.writing()).and_then(
                    |frame| match too_large("Reply", &address, &frame, link.max_payload(), A::LIMIT)
                    {
                        Some(message) => Err((RequestErrorKind::PayloadTooLarge, message)),
                        None => Ok(frame),
                    },
                );
            match (frame, next) {
                (Ok(frame), Some(next)) => {
                    let answered = link.ask(to, frame, next.wait, &address).await;
                    let outcome = answered
                        .and_then(|(frame, to)| read_answer(&link, &inner, &address, frame, to));
                    let _ = next.tx.complete(match outcome {
                        Ok(env) => Outcome::Reply(env),
                        Err(err) => Outcome::Failure(Failure {
                            kind: err.kind(),
                            code: err.wire_failure_code(),
                            message: err.message().to_owned(),
                        }),
                    });
                    return;
                }
                (Ok(frame), None) => frame,
                (Err((kind, message)), next) => {
                    if let Some(next) = next {
                        // The replier learns at once that its turn never left.
                        let _ = next.tx.complete(Outcome::Failure(Failure {
                            kind,
                            code: NO_FAILURE_CODE,
                            message: message.clone(),
                        }));
                    }
                    Frame::failure(kind, NO_FAILURE_CODE, message)
                }
            }
        }
        Some(Outcome::Failure(Failure {
            kind,
            code,
            message,
        })) => Frame::failure(kind, code, message),
        None => no_reply_frame(&address),
    };
    link.finish(to, frame).await;
}

/// A reply frame as the requester's reply (without its further turn), or
/// its error: a failure the replier sent, or a body this node cannot
/// decode (counted).
pub(crate) fn read_reply(
    inner: &Arc<dyn Node>,
    address: &Arc<str>,
    frame: Frame,
) -> Result<ReplyEnvelope, RequestError> {
    if let Some(name) = &frame.head.failure {
        let kind = failure_kind(name);
        let message = String::from_utf8_lossy(frame.body()).into_owned();
        return Err(RequestError::new(kind, message)
            .with_code(frame.head.failure_code.unwrap_or(NO_FAILURE_CODE))
            .with_address(Arc::clone(address)));
    }
    let (codec, body) = match decode(inner, address, &frame.head, &frame.body_bytes()) {
        Ok(decoded) => decoded,
        Err(error) => {
            undecodable(inner, inner.telemetry().probe(address).as_deref());
            return Err(RequestError::new(
                error.kind,
                format!("Reply from address {address}: {error}"),
            )
            .with_address(Arc::clone(address)));
        }
    };
    Ok(ReplyEnvelope {
        address: Arc::clone(address),
        headers: frame.head.user,
        body,
        type_name: codec.type_name(),
        transformed: true,
        reply: None,
    })
}

/// The failure kind a failure header names; a name this node does not
/// know (a newer peer's) is a recipient failure.
pub(crate) fn failure_kind(name: &str) -> RequestErrorKind {
    RequestErrorKind::from_name(name).unwrap_or(RequestErrorKind::RecipientFailure)
}

/// A request nobody in the cluster takes (Vert.x's `NO_HANDLERS`).
pub(crate) fn no_handlers(address: &str) -> RequestError {
    RequestError::new(
        RequestErrorKind::NoHandlers,
        format!("No handlers for address {address}"),
    )
}

/// A request whose answer did not come within `timeout` (Vert.x's
/// `TIMEOUT`), named by the address it was sent to.
pub(crate) fn timed_out(address: &str, timeout: Duration) -> RequestError {
    tracing::debug!(address, ?timeout, "request across the cluster timed out");
    RequestError::new(
        RequestErrorKind::Timeout,
        format!(
            "Timed out after waiting {}(ms) for a reply. address: {address}",
            timeout.as_millis()
        ),
    )
}

/// Records a request the cluster left unanswered because no node takes
/// it: a refusal for want of handlers, as in process. (Its failure is
/// recorded where the request ends, as every request's.)
pub(crate) fn count_unanswered(inner: &Arc<dyn Node>, out: &Outbound, kind: RequestErrorKind) {
    if kind == RequestErrorKind::NoHandlers {
        Refusal::NoHandlers.count(inner.counters(), out.probe.as_deref());
    }
}
