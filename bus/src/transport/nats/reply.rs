// Replies: decodes what arrives over NATS by the codec its headers name
// (checking the consumers' shared guard in the same pass where there is
// one), turns a NATS reply into the requester's reply (or error), and answers a
// remote request with the local consumer's reply (`answer`, which also
// carries a conversation's further turns: the two call each other).

use std::any::Any;
use std::cell::Cell;
use std::sync::{Arc, Weak};
use std::time::Duration;

use async_nats::HeaderMap;
use bytes::Bytes;
use codecbus_core::{AnyBody, CodecRegistration};

use crate::error::{NO_FAILURE_CODE, RequestError, RequestErrorKind};
use crate::guard::{GuardRef, GuardedDecode};
use crate::metrics::bump;
use crate::reply::{self, Failure, Outcome, ReplyEnvelope, Turn};
use crate::telemetry::{Probe, Side, spans};
use crate::transport::Node;
use crate::transport::local::Scope;
use crate::transport::nats::connect::Link;
use crate::transport::nats::outbound::{encode, publish_failure, request_failed};
use crate::transport::nats::wire::{self, Inbound};

/// A message from the cluster, arrived for this node's consumers: its
/// parsed headers, its address's metric handles (metrics on) and its
/// `receive` span (traces on).
pub(super) struct Arrival {
    pub(super) head: Inbound,
    pub(super) probe: Option<Arc<Probe>>,
    pub(super) span: Option<tracing::Span>,
}

/// A message with `headers` and a body of `bytes` arrived from the cluster
/// for this node's consumers of `address`: counts it, parses its headers
/// and makes its span, a child of the sender's when the headers carry its
/// context.
pub(super) fn arrival(
    inner: &Arc<dyn Node>,
    address: &str,
    headers: Option<&HeaderMap>,
    bytes: usize,
) -> Arrival {
    bump(&inner.counters().remote_received, 1);
    let probe = inner.telemetry().probe(address);
    if let Some(probe) = &probe {
        probe.received(Side::Remote);
        probe.bytes_read(bytes);
    }
    let head = wire::parse_headers(headers);
    let span = inner.telemetry().tracing_now().then(|| {
        let codec = head.codec.as_deref().unwrap_or("(none)");
        spans::receive(address, codec, bytes, &head.user)
    });
    Arrival { head, probe, span }
}

/// Counts a message from the cluster that could not be decoded.
pub(super) fn undecodable(inner: &Arc<dyn Node>, probe: Option<&Probe>) {
    bump(&inner.counters().undecodable, 1);
    if let Some(probe) = probe {
        probe.undecodable();
    }
}

/// Turns a NATS reply into the requester's reply, or its error (counted by
/// the caller). A reply that carries a NATS reply subject comes from a
/// `reply_and_request`: the replier awaits an answer there, which a task
/// publishes once the requester gives it.
pub(super) fn read_reply(
    shared: &Arc<Link>,
    inner: &Arc<dyn Node>,
    address: &Arc<str>,
    reply: async_nats::Message,
) -> Result<ReplyEnvelope, RequestError> {
    let head = wire::parse_headers(reply.headers.as_ref());
    if let Some(name) = &head.failure {
        let kind = wire::failure_kind(name);
        let message = String::from_utf8_lossy(&reply.payload).into_owned();
        return Err(RequestError::new(kind, message)
            .with_code(head.failure_code.unwrap_or(NO_FAILURE_CODE))
            .with_address(Arc::clone(address)));
    }
    let (codec, body) = match decode(inner, &head, &reply.payload) {
        Ok(decoded) => decoded,
        Err(message) => {
            undecodable(inner, inner.telemetry().probe(address).as_deref());
            let message = format!("Reply from address {address}: {message}");
            if let Some(to) = reply.reply {
                // The replier awaits an answer to this turn: tell it at once.
                tokio::spawn(publish_failure(
                    Arc::clone(shared),
                    to,
                    RequestErrorKind::Codec,
                    NO_FAILURE_CODE,
                    message.clone(),
                ));
            }
            return Err(RequestError::new(RequestErrorKind::Codec, message)
                .with_address(Arc::clone(address)));
        }
    };
    let turn = reply.reply.map(|to| {
        let (tx, rx) = reply::channel();
        tokio::spawn(answer(
            Arc::clone(shared),
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
    Ok(ReplyEnvelope {
        address: Arc::clone(address),
        headers: head.user,
        body,
        type_name: codec.type_name(),
        transformed: true,
        reply: turn,
    })
}

/// Decodes a body by the codec its headers name.
pub(super) fn decode(
    inner: &Arc<dyn Node>,
    head: &Inbound,
    payload: &[u8],
) -> Result<(CodecRegistration, AnyBody), String> {
    let codec = codec_of(inner, head)?;
    let body = decode_with(&codec, payload)?;
    Ok((codec, body))
}

/// What became of an incoming payload.
pub(super) enum Decoded {
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
pub(super) fn decode_checked(
    inner: &Arc<dyn Node>,
    address: &str,
    head: &wire::Inbound,
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
pub(super) fn first_then_transform<'a>(
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
pub(super) fn codec_of(inner: &Arc<dyn Node>, head: &Inbound) -> Result<CodecRegistration, String> {
    match head.version.as_deref() {
        Some(wire::WIRE_VERSION) => {}
        Some(v) => {
            return Err(format!(
                "unsupported codecbus wire version {v:?} (this node reads version {})",
                wire::WIRE_VERSION
            ));
        }
        None => {
            return Err(format!(
                "not a codecbus message (no {} header)",
                wire::H_CODEC
            ));
        }
    }
    let Some(name) = head.codec.as_deref() else {
        return Err(format!("no codec name in the {} header", wire::H_CODEC));
    };
    inner.codec_by_name(name).ok_or_else(|| {
        format!("Unknown codec {name:?}: no codec is registered under that name on this node")
    })
}

/// Decodes `payload`, the whole of it, with `codec`.
pub(super) fn decode_with(codec: &CodecRegistration, payload: &[u8]) -> Result<AnyBody, String> {
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

/// Awaits the local answer to a remote request (a consumer's reply to a
/// request, or a requester's answer in a conversation) and publishes it to
/// the NATS reply subject `to`. A reply made with `reply_and_request` goes
/// out as a NATS request, whose answer is handed to the waiting replier.
pub(super) async fn answer(
    shared: Arc<Link>,
    inner: Weak<dyn Node>,
    address: Arc<str>,
    to: async_nats::Subject,
    rx: reply::ReplyRx,
) {
    // As for a local request, the wait ends when the consumer answers,
    // fails, or drops the message (the requester's own timeout is its
    // business; a late answer finds nobody and is dropped by NATS).
    let outcome = rx.await;
    let Some(inner) = inner.upgrade() else { return };
    let (headers, payload) = match outcome {
        Some(Outcome::Reply(mut env)) => {
            let next = env.reply.take();
            match (encode_reply(&shared, &inner, &address, &env), next) {
                (Ok((headers, payload)), Some(next)) => {
                    let request = async_nats::Request::new()
                        .headers(headers)
                        .payload(payload)
                        .timeout(Some(next.wait));
                    let answered = shared.client.send_request(to.clone(), request).await;
                    let outcome = answered
                        .map_err(|e| request_failed(e, &address, next.wait, &shared.servers))
                        .and_then(|message| read_reply(&shared, &inner, &address, message));
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
                (Ok(parts), None) => parts,
                (Err((kind, message)), next) => {
                    if let Some(next) = next {
                        // The replier learns at once that its turn never left.
                        let _ = next.tx.complete(Outcome::Failure(Failure {
                            kind,
                            code: NO_FAILURE_CODE,
                            message: message.clone(),
                        }));
                    }
                    (
                        wire::failure_headers(kind, NO_FAILURE_CODE),
                        Bytes::from(message),
                    )
                }
            }
        }
        Some(Outcome::Failure(Failure {
            kind,
            code,
            message,
        })) => (wire::failure_headers(kind, code), Bytes::from(message)),
        None => (
            wire::failure_headers(RequestErrorKind::RecipientFailure, NO_FAILURE_CODE),
            Bytes::from(format!(
                "No reply: the consumer at address {address} dropped the message without replying"
            )),
        ),
    };
    if let Err(e) = shared
        .client
        .publish_with_headers(to, headers, payload)
        .await
    {
        tracing::debug!(address = &*address, error = %e, "cannot publish a reply to NATS");
    }
}

pub(super) fn encode_reply(
    shared: &Link,
    inner: &Arc<dyn Node>,
    address: &str,
    env: &ReplyEnvelope,
) -> Result<(HeaderMap, Bytes), (RequestErrorKind, String)> {
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
    let headers = wire::outbound_headers(codec.name(), &env.headers).map_err(|e| {
        (
            RequestErrorKind::Transport,
            format!("Reply from address {address}: {e}"),
        )
    })?;
    shared
        .check_size("Reply", address, &headers, body.len())
        .map_err(|e| (RequestErrorKind::PayloadTooLarge, e))?;
    Ok((headers, body))
}
