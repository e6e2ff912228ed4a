// What every cluster transport does the same way, whatever carries the
// bytes (a NATS server, or the in-memory cluster): a message leaving the
// node becomes a `Frame` (codec name, user headers, the encoded body), and
// a frame arriving for this node's consumers is counted, decoded by the
// codec it names (checked by the consumers' shared guard in the same pass
// where there is one) and delivered with `Scope::Exported`, the first
// consumer getting the decoded allocation and every further one the
// codec's transform of it. A request's answer goes back as a frame too: a
// reply body, or a failure (kind, code, text).
//
// A transport only moves frames: it maps a frame to its own message (NATS
// headers) and back, checks its size limit on `Frame::wire_len`, and
// answers a request with what `deliver_send` returns.

use std::any::Any;
use std::cell::Cell;
use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use codecbus_core::{AnyBody, CodecRegistration, Writer};

use crate::base::error::{NO_FAILURE_CODE, RequestError, RequestErrorKind};
use crate::base::guard::{GuardRef, GuardedDecode};
use crate::base::headers::Headers;
use crate::base::interceptor::DeliveryKind;
use crate::base::metrics::bump;
use crate::base::reply::{self, Completion, Failure, Outcome, ReplyEnvelope, ReplyRx, Turn};
use crate::telemetry::probe::RefusedBy;
use crate::telemetry::{Probe, Side, spans};
use crate::transport::local::{Refusal, Scope, Verdicts, count_delivered};
use crate::transport::{BoxFuture, Node, Outbound};

/// The wire format version this node writes and the only one it reads.
pub(crate) const WIRE_VERSION: &str = "1";

/// Header names of the bus; every name starting with [`RESERVED`]
/// (ASCII case-insensitive) belongs to the bus.
pub(crate) const RESERVED: &str = "Codecbus-";
/// `{version} {codec name}` on every message with a body.
pub(crate) const H_CODEC: &str = "Codecbus-Codec";
/// `{version} {FAILURE_KIND} {code}` on a failure reply (the body is the
/// UTF-8 message).
pub(crate) const H_FAILURE: &str = "Codecbus-Failure";

/// Whether `name` is one of the bus's own header names.
pub(crate) fn is_reserved(name: &str) -> bool {
    name.get(..RESERVED.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(RESERVED))
}

/// What the bus reads from the headers of an incoming message.
#[derive(Default)]
pub(crate) struct Inbound {
    /// The wire version in the `Codecbus-Codec` header, if there is one.
    /// Only that header's: the version of a `Codecbus-Failure` header is
    /// not read, so a message carrying both decodes by its codec header
    /// whatever order the client's header map iterates in.
    pub(crate) version: Option<String>,
    pub(crate) codec: Option<String>,
    pub(crate) failure: Option<String>,
    pub(crate) failure_code: Option<i32>,
    pub(crate) user: Headers,
}

/// One message between nodes: what its headers say, and its body (the
/// encoded value, or a failure's text).
pub(crate) struct Frame {
    pub(crate) head: Inbound,
    pub(crate) payload: Bytes,
}

impl Frame {
    /// A body encoded with the codec `codec`, with the user's headers.
    pub(crate) fn body(codec: &str, user: Headers, payload: Bytes) -> Self {
        Self {
            head: Inbound {
                version: Some(WIRE_VERSION.to_owned()),
                codec: Some(codec.to_owned()),
                user,
                ..Inbound::default()
            },
            payload,
        }
    }

    /// A failure answering a request.
    pub(crate) fn failure(kind: RequestErrorKind, code: i32, message: String) -> Self {
        Self {
            head: Inbound {
                failure: Some(kind.as_str().to_owned()),
                failure_code: Some(code),
                ..Inbound::default()
            },
            payload: Bytes::from(message),
        }
    }

    /// Its size as a NATS server counts it against `max_payload`: the
    /// header block ("NATS/1.0\r\n", "name: value\r\n" each, "\r\n") and
    /// the body.
    pub(crate) fn wire_len(&self) -> usize {
        let mut len = 12;
        let mut header = |name: &str, value_len: usize| len += name.len() + 2 + value_len + 2;
        if let Some(codec) = &self.head.codec {
            header(H_CODEC, WIRE_VERSION.len() + 1 + codec.len());
        }
        if let (Some(kind), Some(code)) = (&self.head.failure, self.head.failure_code) {
            header(
                H_FAILURE,
                WIRE_VERSION.len() + 1 + kind.len() + 1 + code.to_string().len(),
            );
        }
        for (name, value) in self.head.user.iter() {
            header(name, value.len());
        }
        len + self.payload.len()
    }
}

/// Checks that `user` headers can travel between nodes: names of
/// printable ASCII without `:` outside the bus's reserved prefix, values
/// without CR or LF (what a NATS header block can carry).
pub(crate) fn check_user_headers(user: &Headers) -> Result<(), String> {
    for (name, value) in user.iter() {
        if is_reserved(name) {
            return Err(format!(
                "header `{name}` uses the prefix `{RESERVED}`, which the bus reserves for its wire contract"
            ));
        }
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
            return Err(format!(
                "header name {name:?} cannot travel over NATS (printable ASCII without `:` only)"
            ));
        }
        if value.bytes().any(|b| b == b'\r' || b == b'\n') {
            return Err(format!(
                "the value of header `{name}` cannot travel over NATS (no CR or LF)"
            ));
        }
    }
    Ok(())
}

/// Why an outbound message did not leave.
pub(crate) enum Refuse {
    Codec(String),
    TooLarge(String),
    Transport(String),
}

impl Refuse {
    /// The operation's error for `out`, which did not leave: its address,
    /// and its body handed back.
    pub(crate) fn into_error<K: crate::base::error::OperationKind>(
        self,
        out: Outbound,
    ) -> crate::base::error::Error<K> {
        let (kind, message) = match self {
            Self::Codec(m) => (K::CODEC, m),
            Self::TooLarge(m) => (K::PAYLOAD_TOO_LARGE, m),
            Self::Transport(m) => (K::TRANSPORT, m),
        };
        crate::base::error::Error::new(kind, message)
            .with_address(out.address)
            .with_body(out.body)
    }
}

/// The frame of an outbound message: its codec (refused without one), its
/// user headers (refused when they cannot travel) and its encoded body.
/// The transport checks the size and sends it.
pub(crate) fn frame(out: &Outbound) -> Result<Frame, Refuse> {
    let Some(codec) = out.codec else {
        return Err(Refuse::Codec(format!(
            "`{}` has no codec registered, so it cannot leave the process (derive MessageCodec on a non-generic type, or register one with EventBus::register_codec); to address {}",
            out.type_name, out.address
        )));
    };
    if codec.name().bytes().any(|b| b == b'\r' || b == b'\n') {
        return Err(Refuse::Transport(format!(
            "message to address {}: codec name {:?} cannot travel in a NATS header",
            out.address,
            codec.name()
        )));
    }
    check_user_headers(&out.headers)
        .map_err(|e| Refuse::Transport(format!("message to address {}: {e}", out.address)))?;
    let body = encode(&codec, &out.body).map_err(|e| {
        Refuse::Codec(format!(
            "cannot encode a `{}` body (codec {:?}) for address {}: {e}",
            codec.type_name(),
            codec.name(),
            out.address
        ))
    })?;
    if let Some(probe) = &out.probe {
        probe.bytes_written(body.len());
    }
    if out.traced {
        spans::body_size(body.len());
    }
    Ok(Frame::body(codec.name(), out.headers.clone(), body))
}

/// The error for `frame` when it is larger than `max`, the `max_payload`
/// of `limit` (who sets it, named in the message).
pub(crate) fn too_large(
    what: &str,
    address: &str,
    frame: &Frame,
    max: usize,
    limit: &str,
) -> Option<String> {
    let total = frame.wire_len();
    (total > max).then(|| {
        let body = frame.payload.len();
        format!(
            "{what} to address {address} is {total} bytes ({body} of body, {} of headers), over {limit}'s max_payload of {max} bytes",
            total - body
        )
    })
}

/// Encoding buffers up to this capacity are kept for the next message on
/// the same thread; a larger one leaves with its message.
const KEEP_SCRATCH: usize = 64 * 1024;

thread_local! {
    /// The encoding buffer of this thread, empty between two messages.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Encodes `body` with `codec` into a buffer of exactly its size.
///
/// The encoder writes into a buffer reused from message to message and the
/// result is copied out in one allocation of the final size, instead of
/// growing a fresh vector from empty (an allocation and seven
/// reallocations for a body of 1 KiB, each one possibly copying what was
/// written so far). A body larger than
/// [`KEEP_SCRATCH`] takes the buffer along instead of being copied.
pub(crate) fn encode(
    codec: &CodecRegistration,
    body: &AnyBody,
) -> Result<Bytes, codecbus_core::EncodeError> {
    let mut buf = SCRATCH.take();
    buf.clear();
    let mut w = Writer::from_vec(buf);
    let result = codec.encode(&**body, &mut w);
    let buf = w.into_vec();
    if buf.capacity() > KEEP_SCRATCH {
        return result.map(|()| Bytes::from(buf));
    }
    let encoded = result.map(|()| Bytes::copy_from_slice(&buf));
    SCRATCH.set(buf);
    encoded
}

/// The frame answering a request with the reply `env`: its body encoded
/// with its type's codec, its headers checked; or the failure to send in
/// its place (the kind and text).
pub(crate) fn reply_frame(
    inner: &Arc<dyn Node>,
    address: &str,
    env: &ReplyEnvelope,
) -> Result<Frame, (RequestErrorKind, String)> {
    let type_id = Any::type_id(&*env.body);
    let Some(codec) = inner.codec_by_type(type_id) else {
        return Err((
            RequestErrorKind::Codec,
            format!(
                "Reply from address {address}: `{}` has no codec registered on the replying node, so it cannot leave the process",
                env.type_name
            ),
        ));
    };
    let body = encode(&codec, &env.body).map_err(|e| {
        (
            RequestErrorKind::Codec,
            format!(
                "Reply from address {address}: cannot encode with codec {:?}: {e}",
                codec.name()
            ),
        )
    })?;
    check_user_headers(&env.headers).map_err(|e| {
        (
            RequestErrorKind::Transport,
            format!("Reply from address {address}: {e}"),
        )
    })?;
    Ok(Frame::body(codec.name(), env.headers.clone(), body))
}

/// The frame answering a request whose consumer dropped it unanswered.
pub(crate) fn no_reply_frame(address: &str) -> Frame {
    Frame::failure(
        RequestErrorKind::RecipientFailure,
        NO_FAILURE_CODE,
        format!("No reply: the consumer at address {address} dropped the message without replying"),
    )
}

/// A message with `head` and a body of `bytes` arrived from the cluster
/// for this node's consumers of `address`: counts it and makes its span, a
/// child of the sender's when the headers carry its context.
pub(crate) struct Arrival {
    pub(crate) probe: Option<Arc<Probe>>,
    pub(crate) span: Option<tracing::Span>,
}

/// Counts an arrival and makes its `receive` span (traces on).
pub(crate) fn arrival(
    inner: &Arc<dyn Node>,
    address: &str,
    head: &Inbound,
    bytes: usize,
) -> Arrival {
    bump(&inner.counters().remote_received, 1);
    let probe = inner.telemetry().probe(address);
    if let Some(probe) = &probe {
        probe.received(Side::Remote);
        probe.bytes_read(bytes);
    }
    let span = inner.telemetry().tracing_now().then(|| {
        let codec = head.codec.as_deref().unwrap_or("(none)");
        spans::receive(address, codec, bytes, &head.user)
    });
    Arrival { probe, span }
}

/// Counts a message from the cluster that could not be decoded.
pub(crate) fn undecodable(inner: &Arc<dyn Node>, probe: Option<&Probe>) {
    bump(&inner.counters().undecodable, 1);
    if let Some(probe) = probe {
        probe.undecodable();
    }
}

/// Decodes a body by the codec its headers name.
pub(crate) fn decode(
    inner: &Arc<dyn Node>,
    head: &Inbound,
    payload: &[u8],
) -> Result<(CodecRegistration, AnyBody), String> {
    let codec = codec_of(inner, head)?;
    let body = decode_with(&codec, payload)?;
    Ok((codec, body))
}

/// What became of an incoming payload.
pub(crate) enum Decoded {
    /// A body, and the guard that checked it while it was decoded.
    Body(CodecRegistration, AnyBody, Option<GuardRef>),
    /// Not a message of a codec this node knows, or not a value of it.
    Undecodable(String),
    /// The guard all of the address's exported consumers share refused
    /// the value of this codec (its reasons), for that many consumers.
    Refused(CodecRegistration, String, usize),
}

/// Decodes a message for `address`. When every exported consumer there
/// has the same guard and that guard reads the message's codec, the guard
/// checks while it decodes: a value it refuses is never delivered (nor, for
/// a spec, even built).
pub(crate) fn decode_checked(
    inner: &Arc<dyn Node>,
    address: &str,
    head: &Inbound,
    payload: &[u8],
) -> Decoded {
    let Some((guard, consumers)) = inner.local().shared_guard(address, Scope::Exported) else {
        return match decode(inner, head, payload) {
            Ok((codec, body)) => Decoded::Body(codec, body, None),
            Err(error) => Decoded::Undecodable(error),
        };
    };
    let codec = match codec_of(inner, head) {
        Ok(codec) => codec,
        Err(error) => return Decoded::Undecodable(error),
    };
    match guard.decode(codec.name(), payload) {
        Some(Ok(body)) => Decoded::Body(codec, body, Some(guard)),
        Some(Err(GuardedDecode::Refused(reasons))) => Decoded::Refused(codec, reasons, consumers),
        Some(Err(GuardedDecode::Undecodable(error))) => Decoded::Undecodable(format!(
            "cannot decode {} bytes with codec {:?}: {error}",
            payload.len(),
            codec.name()
        )),
        None => match decode_with(&codec, payload) {
            Ok(body) => Decoded::Body(codec, body, None),
            Err(error) => Decoded::Undecodable(error),
        },
    }
}

/// A `make` for local delivery of a freshly decoded body: the first
/// recipient gets the decoded allocation itself (nobody else holds it),
/// every further one the codec's transform of it (shared for an immutable
/// type, a deep copy otherwise), exactly as local delivery hands out
/// bodies.
pub(crate) fn first_then_transform<'a>(
    codec: &'a CodecRegistration,
    body: &'a AnyBody,
) -> impl Fn() -> AnyBody + 'a {
    let first = Cell::new(true);
    move || {
        if first.replace(false) {
            Arc::clone(body)
        } else {
            codec.transform(body)
        }
    }
}

/// The codec a message's headers name, known on this node.
pub(crate) fn codec_of(inner: &Arc<dyn Node>, head: &Inbound) -> Result<CodecRegistration, String> {
    match head.version.as_deref() {
        Some(WIRE_VERSION) => {}
        Some(v) => {
            return Err(format!(
                "unsupported codecbus wire version {v:?} (this node reads version {WIRE_VERSION})"
            ));
        }
        None => {
            return Err(format!("not a codecbus message (no {H_CODEC} header)"));
        }
    }
    let Some(name) = head.codec.as_deref() else {
        return Err(format!("no codec name in the {H_CODEC} header"));
    };
    inner.codec_by_name(name).ok_or_else(|| {
        format!("Unknown codec {name:?}: no codec is registered under that name on this node")
    })
}

/// Decodes `payload`, the whole of it, with `codec`.
pub(crate) fn decode_with(codec: &CodecRegistration, payload: &[u8]) -> Result<AnyBody, String> {
    let name = codec.name();
    let mut r = codecbus_core::Reader::new(payload);
    let body = codec.decode(&mut r).map_err(|e| {
        format!(
            "cannot decode {} bytes with codec {name:?}: {e}",
            payload.len()
        )
    })?;
    if !r.is_empty() {
        return Err(format!(
            "cannot decode {} bytes with codec {name:?}: {} bytes left after the value",
            payload.len(),
            r.remaining()
        ));
    }
    Ok(body)
}

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
            let frame = reply_frame(&inner, &address, &env).and_then(|frame| {
                match too_large("Reply", &address, &frame, link.max_payload(), A::LIMIT) {
                    Some(message) => Err((RequestErrorKind::PayloadTooLarge, message)),
                    None => Ok(frame),
                }
            });
            match (frame, next) {
                (Ok(frame), Some(next)) => {
                    let answered = link.ask(to, frame, next.wait, &address).await;
                    let outcome = answered
                        .and_then(|(frame, to)| read_answer(&link, &inner, &address, frame, to));
                    let _ = next.tx.complete(match outcome {
                        Ok(env) => Outcome::Reply(env),
                        Err(err) => Outcome::Failure(Failure {
                            kind: err.kind(),
                            code: err.failure_code(),
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
    let Frame { head, payload } = frame;
    if let Some(name) = &head.failure {
        let kind = crate::transport::cluster::failure_kind(name);
        let message = String::from_utf8_lossy(&payload).into_owned();
        return Err(RequestError::new(kind, message)
            .with_code(head.failure_code.unwrap_or(NO_FAILURE_CODE))
            .with_address(Arc::clone(address)));
    }
    let (codec, body) = match decode(inner, &head, &payload) {
        Ok(decoded) => decoded,
        Err(message) => {
            undecodable(inner, inner.telemetry().probe(address).as_deref());
            return Err(RequestError::new(
                RequestErrorKind::Codec,
                format!("Reply from address {address}: {message}"),
            )
            .with_address(Arc::clone(address)));
        }
    };
    Ok(ReplyEnvelope {
        address: Arc::clone(address),
        headers: head.user,
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

/// Delivers a publish from the cluster to this node's exported consumers
/// of `address`; `from` names the transport in logs.
pub(crate) fn deliver_publish(inner: &Arc<dyn Node>, address: &str, frame: &Frame, from: &str) {
    let Arrival { probe, span } = arrival(inner, address, &frame.head, frame.payload.len());
    let _entered = span.as_ref().map(tracing::Span::enter);
    let (codec, body, checked) = match decode_checked(inner, address, &frame.head, &frame.payload) {
        Decoded::Body(codec, body, checked) => (codec, body, checked),
        Decoded::Undecodable(error) => {
            undecodable(inner, probe.as_deref());
            tracing::warn!(address, %error, "publish from {from} dropped: not decodable");
            return;
        }
        Decoded::Refused(_, reasons, consumers) => {
            bump(&inner.counters().invalid, consumers as u64);
            if let Some(probe) = &probe {
                probe.refused(RefusedBy::Invalid, consumers as u64);
            }
            tracing::warn!(address, %reasons, "publish from {from} refused by the consumers' spec");
            return;
        }
    };
    let fan = inner.local().deliver_all(
        address,
        Scope::Exported,
        codec.type_id(),
        Verdicts::checked(&*body, checked),
        first_then_transform(&codec, &body),
        &frame.head.user,
        None,
    );
    fan.count(inner.counters(), probe.as_deref());
    if let Some(reasons) = &fan.invalid_reasons {
        tracing::warn!(
            address,
            invalid = fan.invalid,
            %reasons,
            "publish from {from} refused by a consumer's spec"
        );
    }
    if fan.refused > 0 {
        tracing::warn!(
            address,
            refused = fan.refused,
            delivered = fan.delivered,
            "publish from {from} refused by full consumer queues"
        );
    } else {
        tracing::debug!(
            address,
            delivered = fan.delivered,
            "publish from {from} delivered"
        );
    }
}

/// What a send or request from the cluster needs from its transport
/// after its delivery.
pub(crate) enum Delivered {
    /// Nothing (a send, delivered or not: it is logged and counted).
    Done,
    /// A request was delivered: await its answer here.
    Awaiting(ReplyRx),
    /// A request was not delivered: answer with this failure.
    Failed(Frame),
}

/// Delivers a send (or, with `request`, a request) from the cluster to one
/// of this node's exported consumers of `address`; `from` names the
/// transport in logs.
pub(crate) fn deliver_send(
    inner: &Arc<dyn Node>,
    address: &str,
    frame: Frame,
    request: bool,
    from: &str,
) -> Delivered {
    let Arrival { probe, span } = arrival(inner, address, &frame.head, frame.payload.len());
    let _entered = span.as_ref().map(tracing::Span::enter);
    let kind = if request {
        DeliveryKind::Request
    } else {
        DeliveryKind::Send
    };
    let Frame { head, payload } = frame;
    let (codec, body, checked) = match decode_checked(inner, address, &head, &payload) {
        Decoded::Body(codec, body, checked) => (codec, body, checked),
        Decoded::Refused(codec, reasons, _) => {
            let refusal = Refusal::Invalid(reasons);
            refusal.count(inner.counters(), probe.as_deref());
            let err = refusal.into_error::<RequestErrorKind>(address, codec.type_name());
            if request {
                return Delivered::Failed(Frame::failure(
                    err.kind(),
                    NO_FAILURE_CODE,
                    err.message().to_owned(),
                ));
            }
            tracing::warn!(address, reason = %err, "send from {from} refused by the consumers' spec");
            return Delivered::Done;
        }
        Decoded::Undecodable(error) => {
            undecodable(inner, probe.as_deref());
            if request {
                tracing::debug!(address, %error, "request from {from} not decodable; answering with a codec error");
                return Delivered::Failed(Frame::failure(
                    RequestErrorKind::Codec,
                    NO_FAILURE_CODE,
                    format!("Request to address {address}: {error}"),
                ));
            }
            tracing::warn!(address, %error, "send from {from} dropped: not decodable");
            return Delivered::Done;
        }
    };
    let (completion, rx) = if request {
        let (tx, rx) = reply::channel();
        (Completion::Reply(tx), Some(rx))
    } else {
        (Completion::None, None)
    };
    let result = inner.local().deliver_one(
        address,
        Scope::Exported,
        codec.type_id(),
        Verdicts::checked(&*body, checked),
        first_then_transform(&codec, &body),
        head.user,
        kind,
        completion,
    );
    drop(body);
    match result {
        Ok(()) => {
            count_delivered(inner.counters(), probe.as_deref());
            rx.map_or(Delivered::Done, Delivered::Awaiting)
        }
        Err(refusal) => {
            refusal.count(inner.counters(), probe.as_deref());
            let err = refusal.into_error::<RequestErrorKind>(address, codec.type_name());
            if request {
                return Delivered::Failed(Frame::failure(
                    err.kind(),
                    NO_FAILURE_CODE,
                    err.message().to_owned(),
                ));
            }
            tracing::warn!(address, reason = %err, "send from {from} not delivered");
            Delivered::Done
        }
    }
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

/// Counts a request the cluster left unanswered (no responders, timeout):
/// only the requester sees those.
pub(crate) fn count_unanswered(inner: &Arc<dyn Node>, out: &Outbound, kind: RequestErrorKind) {
    let counters = inner.counters();
    match kind {
        RequestErrorKind::NoHandlers => {
            Refusal::NoHandlers.count(counters, out.probe.as_deref());
        }
        RequestErrorKind::Timeout => {
            bump(&counters.timeouts, 1);
        }
        _ => {}
    }
}

/// Counts a failure the answering node sent back: counted there, but for
/// a recipient failure, which the requester counts (as in process).
pub(crate) fn count_answered_failure(inner: &Arc<dyn Node>, err: &RequestError) {
    if err.kind() == RequestErrorKind::RecipientFailure {
        bump(&inner.counters().recipient_failures, 1);
    }
}
