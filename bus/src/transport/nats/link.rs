// `Link`: the connection as the control task, the readers and the
// transport share it, and everything it does. What leaves this node goes
// one way, core or durable: the connection is open, the subject was not
// refused moments ago, the message's frame is made (codec, headers,
// encoded body: `cluster::frame`, as every cluster transport does) and
// fits `max_payload`; then a core publish, or a JetStream publish awaiting
// the server's confirmation. Answers to requests and conversations go to
// NATS reply subjects (`cluster::Answers`). NATS failures become the
// operation's error.

#[cfg(feature = "jetstream")]
use std::hash::{BuildHasher, Hasher};
#[cfg(feature = "jetstream")]
use std::sync::OnceLock;
use std::sync::atomic::AtomicBool;
#[cfg(feature = "jetstream")]
use std::sync::atomic::AtomicU64;

use async_nats::Client;

use crate::transport::BoxFuture;
use crate::transport::cluster::{Answered, Answers};
use crate::transport::nats::connect::ClientCounts;
#[cfg(feature = "jetstream")]
use crate::transport::nats::durable_options::MESSAGE_ID_HEADER;
#[cfg(feature = "jetstream")]
use crate::transport::nats::jetstream::DurableAddress;
use crate::transport::nats::refusals::Refusals;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::connection::State;
use bytes::Bytes;

use crate::base::error::{OperationKind, RequestError, RequestErrorKind};
use crate::transport::Outbound;
use crate::transport::cluster::{self, Frame, Refuse, Writing};
use crate::transport::nats::refusals::REMEMBERED;
use crate::transport::nats::wire;

/// The connection, as the control task, the readers and the transport share it.
pub(super) struct Link {
    pub(super) client: Client,
    pub(super) prefix: Arc<str>,
    pub(super) servers: String,
    pub(super) closing: AtomicBool,
    /// What the client's events counted.
    pub(super) counts: Arc<ClientCounts>,
    /// The publishes the server refused this connection.
    pub(super) refusals: Arc<Refusals>,
    /// The durable addresses (JetStream), if any.
    #[cfg(feature = "jetstream")]
    pub(super) durables: Option<Arc<crate::transport::nats::jetstream::Durables>>,
    /// How everything this node sends is written: the wire version
    /// ([`NatsOptions::wire_version`](crate::NatsOptions::wire_version)),
    /// and above which size a body leaves compressed
    /// ([`NatsOptions::compress_above`](crate::NatsOptions::compress_above)).
    pub(super) writing: Writing,
}

impl Link {
    /// A message from the server as a frame: a compressed body is
    /// decompressed within the server's `max_payload`.
    pub(super) fn arrived(
        &self,
        headers: Option<&async_nats::HeaderMap>,
        payload: bytes::Bytes,
    ) -> Frame {
        wire::frame(headers, payload, self.client.max_payload())
    }

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
        let mut frame = cluster::frame(out, self.writing)?;
        if let Route::Stored { id, .. } = route {
            // JetStream's duplicate suppression reads its own header.
            frame.head.user.insert(NATS_MSG_ID, id);
        }
        self.check_size("Message", &out.address, &frame)
            .map_err(Refuse::TooLarge)?;
        let headers = wire::headers(&frame, self.writing.version);
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
    let headers = wire::headers(&frame, shared.writing.version);
    if let Err(e) = shared
        .client
        .publish_with_headers(to, headers, frame.payload)
        .await
    {
        tracing::debug!(error = %e, "cannot publish an answer to NATS");
    }
}

impl Answers for Link {
    type To = async_nats::Subject;

    const LIMIT: &'static str = "the NATS server";

    fn max_payload(&self) -> usize {
        self.client.max_payload()
    }

    fn writing(&self) -> Writing {
        self.writing
    }

    fn finish(self: &Arc<Self>, to: Self::To, frame: Frame) -> BoxFuture<'static, ()> {
        Box::pin(publish_answer(Arc::clone(self), to, frame))
    }

    fn ask(
        self: &Arc<Self>,
        to: Self::To,
        frame: Frame,
        wait: Duration,
        address: &Arc<str>,
    ) -> BoxFuture<'static, Answered<Self::To>> {
        let link = Arc::clone(self);
        let address = Arc::clone(address);
        Box::pin(async move {
            let request = async_nats::Request::new()
                .headers(wire::headers(&frame, link.writing.version))
                .payload(frame.payload)
                .timeout(Some(wait));
            let message = link
                .client
                .send_request(to, request)
                .await
                .map_err(|e| request_failed(e, &address, wait, &link.servers))?;
            Ok((
                link.arrived(message.headers.as_ref(), message.payload),
                message.reply,
            ))
        })
    }
}

/// A unique message id: a random per-process part and a counter.
#[cfg(feature = "jetstream")]
fn generated_id() -> String {
    static SEED: OnceLock<u64> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let seed = *SEED.get_or_init(|| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.finish()
    });
    format!("{seed:016x}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

#[cfg(feature = "jetstream")]
impl Link {
    /// The durable settings of `address`, when it is durable.
    pub(super) fn durable(&self, address: &str) -> Option<Arc<DurableAddress>> {
        self.durables.as_ref()?.get(address).cloned()
    }

    /// A send or publish to a durable address: stored in its stream, `Ok`
    /// once the server acknowledged it, within the address's
    /// [`store_timeout`](crate::DurableOptions::store_timeout). It leaves
    /// by the same path as a core message ([`Link::prepare`]), to the
    /// stream's subject; a refusal for lack of permission ends the wait at
    /// once.
    pub(super) async fn store<K: OperationKind>(
        &self,
        d: &DurableAddress,
        mut out: Outbound,
        publish: bool,
    ) -> Result<(), crate::base::error::Error<K>> {
        let Some(durables) = &self.durables else {
            return self.fire(out, publish).await;
        };
        let id = match out.headers.get(MESSAGE_ID_HEADER) {
            Some(id) => id.to_owned(),
            None => {
                let id = generated_id();
                out.headers.insert(MESSAGE_ID_HEADER, id.clone());
                id
            }
        };
        let subject = if publish {
            &d.publish_subject
        } else {
            &d.send_subject
        };
        let Prepared {
            subject,
            headers,
            body,
        } = match self.prepare(&out, Route::Stored { subject, id: &id }) {
            Ok(prepared) => prepared,
            Err(refuse) => return Err(refuse.into_error(out)),
        };
        // The server drops a publish it refuses and tells only with an
        // asynchronous error: without this, the store would wait out its
        // timeout.
        let refused = self.refusals.refused(&subject);
        let timeout = d.options.store_timeout;
        let stored = async {
            let ack = durables
                .js
                .publish_with_headers(subject.clone(), headers, body)
                .await?;
            ack.await.map(drop)
        };
        let stored = tokio::select! {
            stored = tokio::time::timeout(timeout, stored) => stored,
            () = refused => {
                return Err(self
                    .permission_refused(K::TRANSPORT, &out.address, &subject)
                    .with_address(out.address)
                    .with_body(out.body));
            }
        };
        match stored {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(transport_error(K::TRANSPORT, &out.address, &self.servers, e)
                .with_address(Arc::clone(&out.address))
                .with_body(out.body)),
            Err(_) => Err(crate::base::error::Error::new(
                K::TRANSPORT,
                format!(
                    "JetStream did not confirm storing the message to durable address {} within {} ms (DurableOptions::store_timeout; servers {}): it may or may not be stored, and a send again with the same {MESSAGE_ID_HEADER} header is stored once",
                    out.address,
                    timeout.as_millis(),
                    self.servers
                ),
            )
            .with_address(Arc::clone(&out.address))
            .with_body(out.body)),
        }
    }
}
