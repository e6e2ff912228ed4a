// Outbound: what leaves this node over NATS. Checks that the connection is
// open and the subject was not refused moments ago, makes the message's
// frame (codec, headers, encoded body: `cluster::frame`, as every cluster
// transport does), checks it fits `max_payload`, publishes sends and
// publishes, and turns NATS failures into the operation's error.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::connection::State;
use bytes::Bytes;

use crate::base::error::{OperationKind, RequestError, RequestErrorKind};
use crate::transport::Outbound;
use crate::transport::cluster::{self, Frame, Refuse};
use crate::transport::nats::connect::Link;
use crate::transport::nats::refusals::REMEMBERED;
use crate::transport::nats::wire;

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

    /// Checks that `frame` fits the server's `max_payload`.
    pub(super) fn check_size(
        &self,
        what: &str,
        address: &str,
        frame: &Frame,
    ) -> Result<(), String> {
        match cluster::too_large(
            what,
            address,
            frame,
            self.client.max_payload(),
            <Self as cluster::Answers>::LIMIT,
        ) {
            Some(message) => Err(message),
            None => Ok(()),
        }
    }

    /// Subject, headers and encoded body of an outbound message to `route`:
    /// the one path every message leaving this node takes, core or durable.
    /// In order: the connection is open, the subject was not refused
    /// moments ago, the frame is made (the body has a codec, the headers
    /// can travel, the body encodes), and the whole fits `max_payload`.
    pub(super) fn prepare(&self, out: &Outbound, route: Route<'_>) -> Result<Prepared, Refuse> {
        self.check_open()?;
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
        let mut frame = cluster::frame(out)?;
        if let Route::Stored { id, .. } = route {
            // JetStream's duplicate suppression reads its own header.
            frame.head.user.insert(NATS_MSG_ID, id);
        }
        self.check_size("Message", &out.address, &frame)
            .map_err(Refuse::TooLarge)?;
        let headers = wire::headers(&frame);
        let body = frame.payload;
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
    ) -> crate::base::error::Error<K> {
        crate::base::error::Error::new(
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

impl Link {
    /// A send or publish: one NATS message without a reply, failing with
    /// the operation's kinds (`K`) for a codec refusal, an oversize message
    /// and a transport failure.
    pub(super) async fn fire<K: OperationKind>(
        &self,
        out: Outbound,
        publish: bool,
    ) -> Result<(), crate::base::error::Error<K>> {
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
) -> crate::base::error::Error<K> {
    crate::base::error::Error::new(
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
        Nats::NoResponders => cluster::no_handlers(address),
        Nats::TimedOut => cluster::timed_out(address, timeout),
        Nats::MaxPayloadExceeded => {
            RequestError::new(RequestErrorKind::PayloadTooLarge, e.to_string())
        }
        _ => transport_error(RequestErrorKind::Transport, address, servers, e),
    }
}

/// Answers the requester waiting on `to` with `frame` (a reply or a
/// failure).
pub(super) async fn publish_answer(shared: Arc<Link>, to: async_nats::Subject, frame: Frame) {
    let headers = wire::headers(&frame);
    if let Err(e) = shared
        .client
        .publish_with_headers(to, headers, frame.payload)
        .await
    {
        tracing::debug!(error = %e, "cannot publish an answer to NATS");
    }
}
