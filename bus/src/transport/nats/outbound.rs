// Outbound: what leaves this node. Checks that the connection is open, the
// message fits `max_payload` and its subject was not refused moments ago,
// encodes a body with its codec, publishes sends and publishes, and turns
// NATS failures into the operation's error.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::connection::State;
use bytes::Bytes;
use codecbus_core::{AnyBody, CodecRegistration, Writer};

use crate::error::{OperationKind, RequestError, RequestErrorKind};
use crate::telemetry::spans;
use crate::transport::Outbound;
use crate::transport::nats::connect::Link;
use crate::transport::nats::refusals::REMEMBERED;
use crate::transport::nats::wire;

/// Why an outbound message did not leave.
pub(super) enum Refuse {
    Codec(String),
    TooLarge(String),
    Transport(String),
}

impl Refuse {
    /// The operation's error for `out`, which did not leave: its address,
    /// and its body handed back.
    pub(super) fn into_error<K: OperationKind>(self, out: Outbound) -> crate::error::Error<K> {
        let (kind, message) = match self {
            Self::Codec(m) => (K::CODEC, m),
            Self::TooLarge(m) => (K::PAYLOAD_TOO_LARGE, m),
            Self::Transport(m) => (K::TRANSPORT, m),
        };
        crate::error::Error::new(kind, message)
            .with_address(out.address)
            .with_body(out.body)
    }
}

/// The wire length of a header block, as the server counts it against
/// `max_payload` ("NATS/1.0\r\n", "name: value\r\n" each, "\r\n").
fn headers_len(headers: &HeaderMap) -> usize {
    let mut len = 12;
    for (name, values) in headers.iter() {
        let name: &str = name.as_ref();
        for v in values {
            len += name.len() + 2 + v.as_str().len() + 2;
        }
    }
    len
}

impl Link {
    fn check_open(&self) -> Result<(), Refuse> {
        if self.closing.load(Ordering::Acquire) {
            return Err(Refuse::Transport(format!(
                "the bus is closed: its NATS connection to {} was drained",
                self.servers
            )));
        }
        if self.client.connection_state() == State::Disconnected {
            return Err(Refuse::Transport(format!(
                "the NATS connection to {} is down (reconnecting)",
                self.servers
            )));
        }
        Ok(())
    }

    pub(super) fn check_size(
        &self,
        what: &str,
        address: &str,
        headers: &HeaderMap,
        body: usize,
    ) -> Result<(), String> {
        let max = self.client.max_payload();
        let header_bytes = headers_len(headers);
        let total = header_bytes + body;
        if total > max {
            return Err(format!(
                "{what} to address {address} is {total} bytes ({body} of body, {header_bytes} of headers), over the NATS server's max_payload of {max} bytes"
            ));
        }
        Ok(())
    }

    /// Subject, headers and encoded body of an outbound message to `route`:
    /// the one path every message leaving this node takes, core or durable.
    /// In order: the connection is open, the body has a codec, the subject
    /// was not refused moments ago, the headers can travel, the body
    /// encodes, and the whole fits `max_payload`.
    pub(super) fn prepare(&self, out: &Outbound, route: Route<'_>) -> Result<Prepared, Refuse> {
        self.check_open()?;
        let Some(codec) = out.codec else {
            return Err(Refuse::Codec(format!(
                "`{}` has no codec registered, so it cannot leave the process (derive MessageCodec on a non-generic type, or register one with EventBus::register_codec); to address {}",
                out.type_name, out.address
            )));
        };
        let subject = match route {
            Route::Send => wire::send_subject(&self.prefix, &out.address),
            Route::Publish => wire::publish_subject(&self.prefix, &out.address),
            Route::Stored { subject, .. } => Ok(subject.to_owned()),
        }
        .map_err(Refuse::Transport)?;
        if let Some(ago) = self.refusals.refused_recently(&subject) {
            return Err(Refuse::Transport(format!(
                "the NATS server refused a message to subject {subject} {} ms ago: this connection has no permission to publish to it; the message to address {} was not sent (a refusal is remembered for {} s or until the connection is re-established)",
                ago.as_millis(),
                out.address,
                REMEMBERED.as_secs()
            )));
        }
        let mut headers = wire::outbound_headers(codec.name(), &out.headers)
            .map_err(|e| Refuse::Transport(format!("message to address {}: {e}", out.address)))?;
        if let Route::Stored { id, .. } = route {
            let id = <async_nats::HeaderValue as std::str::FromStr>::from_str(id).map_err(|_| {
                Refuse::Transport(format!(
                    "message to address {}: its message id {id:?} cannot travel in a NATS header",
                    out.address
                ))
            })?;
            headers.insert(async_nats::HeaderName::from_static(NATS_MSG_ID), id);
        }
        let body = encode(&codec, &out.body).map_err(|e| {
            Refuse::Codec(format!(
                "cannot encode a `{}` body (codec {:?}) for address {}: {e}",
                codec.type_name(),
                codec.name(),
                out.address
            ))
        })?;
        self.check_size("Message", &out.address, &headers, body.len())
            .map_err(Refuse::TooLarge)?;
        if let Some(probe) = &out.probe {
            probe.bytes_written(body.len());
        }
        if out.traced {
            spans::body_size(body.len());
        }
        Ok(Prepared {
            subject,
            headers,
            body,
        })
    }

    /// The error of a message to `address` that the server refused for
    /// lack of permission while it was in flight (an asynchronous `-ERR`).
    pub(super) fn permission_refused<K: Copy>(
        &self,
        kind: K,
        address: &str,
        subject: &str,
    ) -> crate::error::Error<K> {
        crate::error::Error::new(
            kind,
            format!(
                "the NATS server refused the message to address {address}: this connection has no permission to publish to subject {subject} (servers {})",
                self.servers
            ),
        )
    }
}

/// JetStream's header for duplicate suppression.
pub(super) const NATS_MSG_ID: &str = "Nats-Msg-Id";

/// Where an outbound message goes.
#[derive(Clone, Copy)]
pub(super) enum Route<'a> {
    /// A core NATS send or request: the address's queue-group subject.
    Send,
    /// A core NATS publish: the address's plain subject.
    Publish,
    /// A durable send or publish: the JetStream `subject` of its stream,
    /// with `id` for duplicate suppression.
    #[cfg_attr(not(feature = "jetstream"), allow(dead_code))]
    Stored { subject: &'a str, id: &'a str },
}

/// An outbound message ready to leave.
pub(super) struct Prepared {
    pub(super) subject: String,
    pub(super) headers: HeaderMap,
    pub(super) body: Bytes,
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
pub(super) fn encode(
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

impl Link {
    /// A send or publish: one NATS message without a reply, failing with
    /// the operation's kinds (`K`) for a codec refusal, an oversize message
    /// and a transport failure.
    pub(super) async fn fire<K: OperationKind>(
        &self,
        out: Outbound,
        publish: bool,
    ) -> Result<(), crate::error::Error<K>> {
        let route = if publish { Route::Publish } else { Route::Send };
        let Prepared {
            subject,
            headers,
            body,
        } = match self.prepare(&out, route) {
            Ok(prepared) => prepared,
            Err(refuse) => return Err(refuse.into_error(out)),
        };
        self.client
            .publish_with_headers(subject, headers, body)
            .await
            .map_err(|e| {
                transport_error(K::TRANSPORT, &out.address, &self.servers, e)
                    .with_address(Arc::clone(&out.address))
                    .with_body(out.body)
            })
    }
}

/// A failure of the NATS client: the message says which message and
/// servers, `source()` gives the client's error (its text is not repeated,
/// so a report that walks the chain shows it once).
pub(super) fn transport_error<K: Copy>(
    kind: K,
    address: &str,
    servers: &str,
    err: impl std::error::Error + Send + Sync + 'static,
) -> crate::error::Error<K> {
    crate::error::Error::new(
        kind,
        format!("NATS could not take the message to address {address} (servers {servers})"),
    )
    .with_source(err)
}

/// A NATS request that got no answer, as the requester's error (without
/// its address).
pub(super) fn request_failed(
    e: async_nats::RequestError,
    address: &str,
    timeout: Duration,
    servers: &str,
) -> RequestError {
    use async_nats::client::RequestErrorKind as Nats;
    match e.kind() {
        Nats::NoResponders => RequestError::new(
            RequestErrorKind::NoHandlers,
            format!("No handlers for address {address}"),
        ),
        Nats::TimedOut => {
            tracing::debug!(address, ?timeout, "request over NATS timed out");
            RequestError::new(
                RequestErrorKind::Timeout,
                format!(
                    "Timed out after waiting {}(ms) for a reply. address: {address}",
                    timeout.as_millis()
                ),
            )
        }
        Nats::MaxPayloadExceeded => {
            RequestError::new(RequestErrorKind::PayloadTooLarge, e.to_string())
        }
        _ => transport_error(RequestErrorKind::Transport, address, servers, e),
    }
}

/// Answers the requester waiting on `to` with a failure.
pub(super) async fn publish_failure(
    shared: Arc<Link>,
    to: async_nats::Subject,
    kind: RequestErrorKind,
    code: i32,
    message: String,
) {
    let headers = wire::failure_headers(kind, code);
    if let Err(e) = shared
        .client
        .publish_with_headers(to, headers, Bytes::from(message))
        .await
    {
        tracing::debug!(error = %e, "cannot publish a failure reply");
    }
}
