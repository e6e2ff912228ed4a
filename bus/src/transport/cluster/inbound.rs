// A message arriving from the cluster for this node's consumers: counted,
// decoded by the codec its headers name (checked by the consumers' shared
// guard in the same pass where there is one) and delivered with
// `Scope::Exported`, the first consumer getting the decoded allocation and
// every further one the codec's transform of it.

use std::cell::Cell;
use std::sync::Arc;

use bytes::Bytes;
use codecbus_core::{AnyBody, CodecRegistration};

use crate::base::error::{NO_FAILURE_CODE, RequestErrorKind};
use crate::base::guard::{GuardRef, GuardedDecode};
use crate::base::interceptor::DeliveryKind;
use crate::base::reply::{self, Completion, ReplyRx};
use crate::telemetry::probe::RefusedBy;
use crate::telemetry::record::{Event, record};
use crate::telemetry::{Probe, Side, spans};
use crate::transport::cluster::frame::{Frame, H_CODEC, Inbound, WireVersion};
use crate::transport::local::{Handed, Refusal, Scope, Verdicts, count_delivered};
use crate::transport::{Named, Node};

/// A message with `head` and a body of `bytes` arrived from the cluster
/// for this node's consumers of `address`: counts it and makes its span, a
/// child of the sender's when the headers carry its context.
pub(crate) struct Arrival {
    pub(crate) probe: Option<Arc<Probe>>,
    pub(crate) span: Option<tracing::Span>,
}

/// Counts an arrival and makes its `receive` span (traces on, the
/// sender's trace sampled).
pub(crate) fn arrival(
    inner: &Arc<dyn Node>,
    address: &str,
    head: &Inbound,
    bytes: usize,
) -> Arrival {
    let probe = inner.telemetry().probe(address);
    record(
        inner.counters(),
        probe.as_deref(),
        Event::Received(Side::Remote),
    );
    if let Some(probe) = &probe {
        probe.bytes_read(bytes);
    }
    let span = inner.telemetry().trace_arrival(&head.user).then(|| {
        let codec = head.codec.as_deref().unwrap_or("(none)");
        spans::receive(address, codec, bytes, &head.user)
    });
    Arrival { probe, span }
}

/// Counts a message from the cluster that could not be decoded.
pub(crate) fn undecodable(inner: &Arc<dyn Node>, probe: Option<&Probe>) {
    record(inner.counters(), probe, Event::Undecodable);
}

/// Why a message from the cluster was not decoded.
pub(crate) struct Undecodable {
    /// `Codec`; or `ShapeMismatch` when the message states the shape it
    /// was written with, and a peer told this node that shape, which it
    /// cannot read.
    pub(crate) kind: RequestErrorKind,
    pub(crate) message: String,
}

impl From<String> for Undecodable {
    fn from(message: String) -> Self {
        Self {
            kind: RequestErrorKind::Codec,
            message,
        }
    }
}

impl std::fmt::Display for Undecodable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Decodes a body for `address` by the codec its headers name.
pub(crate) fn decode(
    inner: &Arc<dyn Node>,
    address: &str,
    head: &Inbound,
    payload: &Bytes,
) -> Result<(CodecRegistration, AnyBody), Undecodable> {
    let codec = readable_codec(inner, address, head)?;
    let body = decode_with(&codec, payload)?;
    Ok((codec, body))
}

/// The codec a message names ([`codec_of`]), unless the message states
/// the shape it was written with (`Codecbus-Shape`: its writer knows a
/// peer that cannot read it) and a peer told this node that this shape is
/// one it cannot read. A message without the statement costs one branch.
fn readable_codec(
    inner: &Arc<dyn Node>,
    address: &str,
    head: &Inbound,
) -> Result<CodecRegistration, Undecodable> {
    let codec = codec_of(inner, address, head)?;
    if let (Some(fingerprint), Some(name)) = (head.shape, head.codec.as_deref())
        && let Some((peer, findings)) = inner.peers().mismatch(name, fingerprint)
    {
        let first = findings.first().map_or_else(String::new, |f| {
            format!(": {} at `{}`: {}", f.rule, f.path, f.why)
        });
        let more = match findings.len() {
            0 | 1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        return Err(Undecodable {
            kind: RequestErrorKind::ShapeMismatch,
            message: format!(
                "codec {name:?} written with a shape the reading node cannot read (fingerprint {fingerprint:016x}, as peer {peer} told it){first}{more}"
            ),
        });
    }
    Ok(codec)
}

/// What became of an incoming payload.
pub(crate) enum Decoded {
    /// A body, and the guard that checked it while it was decoded.
    Body(CodecRegistration, AnyBody, Option<GuardRef>),
    /// Not a message of a codec this node knows, or not a value of it, or
    /// of a shape of it this node cannot read.
    Undecodable(Undecodable),
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
    payload: &Bytes,
) -> Decoded {
    let Some((guard, consumers)) = inner.local().shared_guard(address, Scope::Exported) else {
        return match decode(inner, address, head, payload) {
            Ok((codec, body)) => Decoded::Body(codec, body, None),
            Err(error) => Decoded::Undecodable(error),
        };
    };
    let codec = match readable_codec(inner, address, head) {
        Ok(codec) => codec,
        Err(error) => return Decoded::Undecodable(error),
    };
    match guard.decode(codec.name(), &payload[..]) {
        Some(Ok(body)) => Decoded::Body(codec, body, Some(guard)),
        Some(Err(GuardedDecode::Refused(reasons))) => Decoded::Refused(codec, reasons, consumers),
        Some(Err(GuardedDecode::Undecodable(error))) => Decoded::Undecodable(
            format!(
                "cannot decode {} bytes with codec {:?}: {error}",
                payload.len(),
                codec.name()
            )
            .into(),
        ),
        None => match decode_with(&codec, payload) {
            Ok(body) => Decoded::Body(codec, body, None),
            Err(error) => Decoded::Undecodable(error.into()),
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

/// The codec a message for `address` names (its payload's prefix, or a
/// peer's `Codecbus-Codec` header), known on this node by that name or as
/// an alias, a name it had before: the first message under each alias is
/// logged and recorded, since its sender runs an older build.
pub(crate) fn codec_of(
    inner: &Arc<dyn Node>,
    address: &str,
    head: &Inbound,
) -> Result<CodecRegistration, String> {
    if let Some(why) = &head.unreadable {
        return Err(why.clone());
    }
    match head.version.as_deref() {
        // The header form is version 1's; the prefix is both versions'.
        Some(v) if v == WireVersion::V1.as_str() => {}
        Some(v) if v == WireVersion::V2.as_str() && head.prefixed => {}
        Some(v) if v == WireVersion::V2.as_str() => {
            return Err(format!(
                "unsupported codecbus wire version {v:?} in the {H_CODEC} header (the header form is version 1; version 2 names the codec in the payload's prefix)"
            ));
        }
        Some(v) => {
            return Err(format!(
                "unsupported codecbus wire version {v:?} (this node reads versions 1 and 2)"
            ));
        }
        None => {
            return Err(format!(
                "not a codecbus message (no codec prefix in the payload, no {H_CODEC} header)"
            ));
        }
    }
    let Some(name) = head.codec.as_deref() else {
        return Err("no codec name (a MessagePack str after the codec prefix)".to_owned());
    };
    match inner.codec_by_name(name) {
        Some((codec, Named::Name | Named::Alias { first: false })) => Ok(codec),
        Some((codec, Named::Alias { first: true })) => {
            old_codec_name(inner, address, name, &codec);
            Ok(codec)
        }
        None => Err(format!(
            "Unknown codec {name:?}: no codec is registered under that name on this node"
        )),
    }
}

/// The first message under the alias `alias` of `codec`: its sender, an
/// older peer, still names the codec so (and may not know its current name).
#[cold]
fn old_codec_name(inner: &Arc<dyn Node>, address: &str, alias: &str, codec: &CodecRegistration) {
    record(inner.counters(), None, Event::OldCodecName);
    tracing::warn!(
        address,
        alias,
        codec = codec.name(),
        "a message arrived under the old codec name {alias:?} of {:?}: decoded as `{}`, but its \
         sender runs an older build, which may not know the current name (this node sends under \
         {:?} only); logged once per alias",
        codec.name(),
        codec.type_name(),
        codec.name(),
    );
}

/// Decodes `payload`, the whole of it, with `codec`. Strings and bytes
/// of the body that can share the received buffer do (`SharedStr`,
/// `bytes::Bytes`): they are not copied out of it.
pub(crate) fn decode_with(codec: &CodecRegistration, payload: &Bytes) -> Result<AnyBody, String> {
    let name = codec.name();
    let mut r = codecbus_core::Reader::shared(payload, codecbus_core::DecodeLimits::default());
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

/// Delivers a publish from the cluster to this node's exported consumers
/// of `address`; `from` names the transport in logs. `true` when it went
/// into a consumer's queue (whose task was woken) rather than starting the
/// handler on this task.
pub(crate) fn deliver_publish(
    inner: &Arc<dyn Node>,
    address: &str,
    frame: &Frame,
    from: &str,
) -> bool {
    let Arrival { probe, span } = arrival(inner, address, &frame.head, frame.body().len());
    let _entered = span.as_ref().map(tracing::Span::enter);
    let (codec, body, checked) = match decode_checked(
        inner,
        address,
        &frame.head,
        &frame.body_bytes(),
    ) {
        Decoded::Body(codec, body, checked) => (codec, body, checked),
        Decoded::Undecodable(error) => {
            undecodable(inner, probe.as_deref());
            tracing::warn!(address, %error, "publish from {from} dropped: not decodable");
            return false;
        }
        Decoded::Refused(_, reasons, consumers) => {
            let refused = Event::Refused(RefusedBy::Invalid, consumers as u64);
            record(inner.counters(), probe.as_deref(), refused);
            tracing::warn!(address, %reasons, "publish from {from} refused by the consumers' spec");
            return false;
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
        span.is_some(),
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
    fan.queued > 0
}

/// What a send or request from the cluster needs from its transport
/// after its delivery.
pub(crate) enum Delivered {
    /// Nothing (a send, delivered or not: it is logged and counted);
    /// `queued`: it waits in a consumer's queue, whose task was woken (read
    /// by the NATS reader).
    Done {
        #[cfg_attr(not(feature = "nats"), allow(dead_code))]
        queued: bool,
    },
    /// A request was delivered (`queued` as for `Done`): await its answer
    /// here.
    Awaiting {
        rx: ReplyRx,
        #[cfg_attr(not(feature = "nats"), allow(dead_code))]
        queued: bool,
    },
    /// A request was not delivered: answer with this failure.
    Failed(Frame),
}

impl Delivered {
    /// Whether the message went into a consumer's queue, rather than
    /// starting its handler on this task (or going nowhere).
    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    pub(crate) fn queued(&self) -> bool {
        match self {
            Self::Done { queued } | Self::Awaiting { queued, .. } => *queued,
            Self::Failed(_) => false,
        }
    }
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
    let Arrival { probe, span } = arrival(inner, address, &frame.head, frame.body().len());
    let _entered = span.as_ref().map(tracing::Span::enter);
    let kind = if request {
        DeliveryKind::Request
    } else {
        DeliveryKind::Send
    };
    let (codec, body, checked) = match decode_checked(
        inner,
        address,
        &frame.head,
        &frame.body_bytes(),
    ) {
        Decoded::Body(codec, body, checked) => (codec, body, checked),
        Decoded::Refused(codec, reasons, _) => {
            let refusal = Refusal::Invalid(reasons);
            let why = "refused by the consumers' spec";
            return refused(
                inner,
                probe.as_deref(),
                address,
                &codec,
                refusal,
                request,
                from,
                why,
            );
        }
        Decoded::Undecodable(error) => {
            undecodable(inner, probe.as_deref());
            if request {
                tracing::debug!(address, %error, "request from {from} not decodable; answering with a codec error");
                return Delivered::Failed(Frame::failure(
                    error.kind,
                    NO_FAILURE_CODE,
                    format!("Request to address {address}: {error}"),
                ));
            }
            tracing::warn!(address, %error, "send from {from} dropped: not decodable");
            return Delivered::Done { queued: false };
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
        frame.head.user,
        kind,
        completion,
        span.is_some(),
    );
    drop(body);
    match result {
        Ok(handed) => {
            count_delivered(inner.counters(), probe.as_deref());
            let queued = handed == Handed::Queued;
            match rx {
                Some(rx) => Delivered::Awaiting { rx, queued },
                None => Delivered::Done { queued },
            }
        }
        Err(refusal) => {
            let why = "not delivered";
            refused(
                inner,
                probe.as_deref(),
                address,
                &codec,
                refusal,
                request,
                from,
                why,
            )
        }
    }
}

/// A send or request from the cluster that this node refused: recorded;
/// a request is answered with the refusal's error, a send is logged.
#[allow(clippy::too_many_arguments)]
fn refused(
    inner: &Arc<dyn Node>,
    probe: Option<&Probe>,
    address: &str,
    codec: &CodecRegistration,
    refusal: Refusal,
    request: bool,
    from: &str,
    why: &str,
) -> Delivered {
    refusal.count(inner.counters(), probe);
    let err = refusal.into_error::<RequestErrorKind>(address, codec.type_name());
    if request {
        return Delivered::Failed(Frame::failure(
            err.kind(),
            NO_FAILURE_CODE,
            err.message().to_owned(),
        ));
    }
    tracing::warn!(address, reason = %err, "send from {from} {why}");
    Delivered::Done { queued: false }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use codecbus_core::ext::SharedStr;
    use codecbus_core::{CodecRegistration, to_vec};

    use super::decode_with;

    #[test]
    fn a_body_shares_the_received_buffer() {
        type Body = (SharedStr, Bytes, String);
        let codec = CodecRegistration::of::<Body>("test.shared");
        let payload =
            Bytes::from(to_vec(&("title", Bytes::from_static(b"\x01\x02"), "copied")).unwrap());
        let body = decode_with(&codec, &payload).unwrap();
        let (title, blob, copied) = body.downcast_ref::<Body>().unwrap();
        assert_eq!(
            (title.as_str(), &blob[..], copied.as_str()),
            ("title", &b"\x01\x02"[..], "copied")
        );
        let inside = |p: *const u8| payload.as_ptr_range().contains(&p);
        assert!(inside(title.as_ptr()) && inside(blob.as_ptr()));
        assert!(!inside(copied.as_ptr()));
    }

    #[test]
    fn bytes_left_after_the_body_are_an_error() {
        let codec = CodecRegistration::of::<SharedStr>("test.shared");
        let error = decode_with(&codec, &Bytes::from_static(b"\xa1a\xc0")).unwrap_err();
        assert!(error.contains("1 bytes left"), "{error}");
    }
}
