// The NATS cluster transport (README "Cluster (NATS)" is the wire
// contract; `wire.rs` holds its names).
//
// Contract:
// * One NATS connection per bus. Outbound messages are encoded once with
//   the registry entry of their type (`Outbound::codec`) and published:
//   `send` / `request` to `{prefix}.s.{address}`, `publish` to
//   `{prefix}.p.{address}`.
// * For every address with at least one exported consumer on this node, a
//   reader task holds two subscriptions: a plain one on the publish
//   subject (every node receives each publish once and fans it out
//   locally) and a queue subscription (group `{prefix}`) on the send
//   subject (exactly one node gets each send or request). The reader
//   decodes by codec name and delivers with `Scope::Exported`, so local-only
//   consumers never see remote traffic; replies to requests are awaited in
//   the reader (a `FuturesUnordered`, no task per request) and published to
//   the NATS reply subject.
// * A conversation (`reply_and_request`) is a chain of NATS requests: a
//   reply that expects an answer is published as a request to the other
//   side's reply subject, and the reply carrying a NATS reply subject is
//   handed to the requester with a reply channel whose answer a spawned
//   task publishes there (`answer` on both sides).
// * A control task owns the readers and processes, in order,
//   `Sync(address)` (reconcile the subscription with the local table:
//   subscribe when the address has an exported consumer, unsubscribe when
//   not; reconciling makes racing register/unregister calls harmless),
//   `Flush` and `Close`. When the transport is dropped (the last bus handle
//   and consumer are gone) its channel closes and the control task stops
//   every reader.
// * Readers and the control task hold the bus weakly; a pending reply holds
//   it strongly until it is sent, a conversation turn until its answer came
//   (at most the replier's timeout). A task answering a turn holds the
//   connection as long as the requester keeps the message.

mod options;
mod wire;

pub use self::options::{DEFAULT_SUBJECT_PREFIX, NatsOptions};

use std::any::Any;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use async_nats::connection::State;
use async_nats::{Client, Event, HeaderMap, ServerAddr, Subscriber};
use bytes::Bytes;
use codecbus_core::{AnyBody, CodecRegistration, Writer};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::bus::Inner;
use crate::error::{
    BuildError, BuildErrorKind, NO_FAILURE_CODE, PublishError, PublishErrorKind, RequestError,
    RequestErrorKind, SendError, SendErrorKind,
};
use crate::interceptor::DeliveryKind;
use crate::metrics::bump;
use crate::reply::{self, Failure, Outcome, ReplyEnvelope, Turn};
use crate::transport::local::{Refusal, Scope};
use crate::transport::{BoxFuture, Outbound, RemoteTransport};

use self::wire::Inbound;

/// A connected client, before the bus around it exists.
pub(crate) struct Connected {
    client: Client,
    prefix: Arc<str>,
    servers: String,
    closed: watch::Receiver<bool>,
    dropped: Arc<AtomicU64>,
}

/// Connects to the servers in `options`.
pub(crate) async fn connect(mut options: NatsOptions) -> Result<Connected, BuildError> {
    let config = |message: String| BuildError::new(BuildErrorKind::Config, message, None);
    let mut connect = options.take_connect_options().await.map_err(config)?;
    let mut addrs = Vec::new();
    for url in options.servers.iter().flat_map(|s| s.split(',')) {
        let url = url.trim();
        let addr: ServerAddr = url
            .parse()
            .map_err(|e| config(format!("invalid NATS server URL {url:?}: {e}")))?;
        addrs.push(addr);
    }
    if addrs.is_empty() {
        return Err(config("no NATS server URL given".to_owned()));
    }
    let servers = options.servers.join(",");
    let (closed_tx, closed) = watch::channel(false);
    let who = servers.clone();
    let dropped = Arc::new(AtomicU64::new(0));
    let dropped_by_client = Arc::clone(&dropped);
    let on_event: Option<Arc<dyn Fn(Event) + Send + Sync>> = options.on_event.take().map(Arc::from);
    connect = connect.event_callback(move |event| {
        let closed_tx = closed_tx.clone();
        let who = who.clone();
        let dropped = Arc::clone(&dropped_by_client);
        let on_event = on_event.clone();
        async move {
            match &event {
                Event::Connected => {
                    tracing::info!(servers = %who, "NATS connection (re)established")
                }
                Event::Disconnected => {
                    tracing::warn!(servers = %who, "NATS connection lost; reconnecting");
                }
                Event::Closed => {
                    tracing::debug!(servers = %who, "NATS connection closed");
                    let _ = closed_tx.send(true);
                }
                Event::SlowConsumer(sid) => {
                    // async-nats raises one event per message it drops.
                    bump(&dropped, 1);
                    tracing::warn!(
                        servers = %who,
                        sid,
                        "NATS slow consumer: the client dropped a message for a subscription whose reader fell behind"
                    );
                }
                other => tracing::debug!(servers = %who, event = %other, "NATS event"),
            }
            if let Some(on_event) = on_event {
                // A panic here would end the client's event task, and with
                // it every later event (the bus waits for `Closed`).
                let call = std::panic::AssertUnwindSafe(|| on_event(event));
                if std::panic::catch_unwind(call).is_err() {
                    tracing::error!(servers = %who, "the NatsOptions::on_event callback panicked");
                }
            }
        }
    });
    let client = connect.connect(addrs).await.map_err(|e| {
        BuildError::new(
            BuildErrorKind::Connect,
            format!("cannot connect to NATS at {servers}: {e}"),
            Some(Box::new(e)),
        )
    })?;
    tracing::debug!(servers = %servers, max_payload = client.max_payload(), "connected to NATS");
    Ok(Connected {
        client,
        prefix: Arc::from(options.subject_prefix.as_str()),
        servers,
        closed,
        dropped,
    })
}

/// What the control task, the readers and the transport share.
struct Shared {
    client: Client,
    prefix: Arc<str>,
    servers: String,
    closing: AtomicBool,
    /// Messages the client dropped for a reader that fell behind.
    dropped: Arc<AtomicU64>,
}

enum Control {
    /// Reconcile the subscription of an address with the local table.
    Sync(Arc<str>),
    Flush(oneshot::Sender<Result<(), String>>),
    Close(oneshot::Sender<()>),
}

pub(crate) struct NatsTransport {
    shared: Arc<Shared>,
    control: mpsc::UnboundedSender<Control>,
}

impl NatsTransport {
    /// Starts the control task for the bus behind `inner`.
    pub(crate) fn start(connected: Connected, inner: Weak<Inner>) -> Self {
        let Connected {
            client,
            prefix,
            servers,
            closed,
            dropped,
        } = connected;
        let shared = Arc::new(Shared {
            client,
            prefix,
            servers,
            closing: AtomicBool::new(false),
            dropped,
        });
        let (control, rx) = mpsc::unbounded_channel();
        tokio::spawn(control_loop(Arc::clone(&shared), inner, rx, closed));
        Self { shared, control }
    }
}

// ----- outbound -----

/// Why an outbound message did not leave.
enum Refuse {
    Codec(String),
    TooLarge(String),
    Transport(String),
}

impl Refuse {
    fn into_error<K: Copy>(self, codec: K, too_large: K, transport: K) -> crate::Error<K> {
        let (kind, message) = match self {
            Self::Codec(m) => (codec, m),
            Self::TooLarge(m) => (too_large, m),
            Self::Transport(m) => (transport, m),
        };
        crate::Error::new(kind, message)
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

impl Shared {
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

    fn check_size(
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

    /// Subject, headers and encoded body of an outbound message.
    fn prepare(&self, out: &Outbound, publish: bool) -> Result<(String, HeaderMap, Bytes), Refuse> {
        self.check_open()?;
        let Some(codec) = out.codec else {
            return Err(Refuse::Codec(format!(
                "`{}` has no codec registered, so it cannot leave the process (derive MessageCodec on a non-generic type, or register one with EventBus::register_codec); to address {}",
                out.type_name, out.address
            )));
        };
        let subject = if publish {
            wire::publish_subject(&self.prefix, &out.address)
        } else {
            wire::send_subject(&self.prefix, &out.address)
        }
        .map_err(Refuse::Transport)?;
        let headers = wire::outbound_headers(codec.name(), &out.headers)
            .map_err(|e| Refuse::Transport(format!("message to address {}: {e}", out.address)))?;
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
        Ok((subject, headers, body))
    }
}

fn encode(codec: &CodecRegistration, body: &AnyBody) -> Result<Bytes, codecbus_core::EncodeError> {
    let mut w = Writer::new();
    codec.encode(&**body, &mut w)?;
    Ok(Bytes::from(w.into_vec()))
}

impl Shared {
    /// A send or publish: one NATS message without a reply. `kinds` are the
    /// operation's error kinds for a codec refusal, an oversize message and a
    /// transport failure.
    async fn fire<K: Copy>(
        &self,
        out: Outbound,
        publish: bool,
        [codec, too_large, transport]: [K; 3],
    ) -> Result<(), crate::Error<K>> {
        let (subject, headers, body) = match self.prepare(&out, publish) {
            Ok(parts) => parts,
            Err(refuse) => {
                return Err(refuse
                    .into_error(codec, too_large, transport)
                    .with_address(out.address)
                    .with_body(out.body));
            }
        };
        self.client
            .publish_with_headers(subject, headers, body)
            .await
            .map_err(|e| {
                transport_error(transport, &out.address, &self.servers, e)
                    .with_address(Arc::clone(&out.address))
                    .with_body(out.body)
            })
    }
}

fn transport_error<K: Copy>(
    kind: K,
    address: &str,
    servers: &str,
    err: impl std::error::Error + Send + Sync + 'static,
) -> crate::Error<K> {
    crate::Error::new(
        kind,
        format!("NATS could not take the message to address {address} (servers {servers}): {err}"),
    )
    .with_source(err)
}

/// A NATS request that got no answer, as the requester's error (without
/// its address).
fn request_failed(
    e: async_nats::RequestError,
    subject: &str,
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
                    "Timed out after waiting {}(ms) for a reply. address: {subject}, repliedAddress: {address}",
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

/// Counts a request that NATS left unanswered (no responders, timeout):
/// only the requester sees those.
fn count_failure(inner: &Inner, kind: RequestErrorKind) {
    let counters = &inner.counters;
    let counter = match kind {
        RequestErrorKind::NoHandlers => &counters.no_handlers,
        RequestErrorKind::Timeout => &counters.timeouts,
        _ => return,
    };
    bump(counter, 1);
}

impl RemoteTransport for NatsTransport {
    fn send(&self, out: Outbound) -> BoxFuture<'_, Result<(), SendError>> {
        Box::pin(self.shared.fire(
            out,
            false,
            [
                SendErrorKind::Codec,
                SendErrorKind::PayloadTooLarge,
                SendErrorKind::Transport,
            ],
        ))
    }

    fn publish(&self, out: Outbound) -> BoxFuture<'_, Result<(), PublishError>> {
        Box::pin(self.shared.fire(
            out,
            true,
            [
                PublishErrorKind::Codec,
                PublishErrorKind::PayloadTooLarge,
                PublishErrorKind::Transport,
            ],
        ))
    }

    fn request(
        &self,
        out: Outbound,
        timeout: Duration,
        inner: &Arc<Inner>,
    ) -> BoxFuture<'_, Result<ReplyEnvelope, RequestError>> {
        let inner = Arc::clone(inner);
        Box::pin(async move {
            let s = &self.shared;
            let address = Arc::clone(&out.address);
            let (subject, headers, body) = match s.prepare(&out, false) {
                Ok(parts) => parts,
                Err(refuse) => {
                    return Err(refuse
                        .into_error(
                            RequestErrorKind::Codec,
                            RequestErrorKind::PayloadTooLarge,
                            RequestErrorKind::Transport,
                        )
                        .with_address(address)
                        .with_body(out.body));
                }
            };
            let request = async_nats::Request::new()
                .headers(headers)
                .payload(body)
                .timeout(Some(timeout));
            let reply = match s.client.send_request(subject.clone(), request).await {
                Ok(reply) => reply,
                Err(e) => {
                    let err = request_failed(e, &subject, &address, timeout, &s.servers);
                    count_failure(&inner, err.kind());
                    let err = err.with_address(address);
                    // The body comes back when it surely reached nobody.
                    return Err(match err.kind() {
                        RequestErrorKind::NoHandlers | RequestErrorKind::PayloadTooLarge => {
                            err.with_body(out.body)
                        }
                        _ => err,
                    });
                }
            };
            // A failure the answering node reported is counted there, but
            // for a recipient failure, which the requester counts (as in
            // process).
            read_reply(&self.shared, &inner, &address, reply).inspect_err(|err| {
                if err.kind() == RequestErrorKind::RecipientFailure {
                    bump(&inner.counters.recipient_failures, 1);
                }
            })
        })
    }

    fn consumer_added(&self, address: &Arc<str>) {
        let _ = self.control.send(Control::Sync(Arc::clone(address)));
    }

    fn consumer_removed(&self, address: &Arc<str>) {
        let _ = self.control.send(Control::Sync(Arc::clone(address)));
    }

    fn flush(&self) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            let (tx, rx) = oneshot::channel();
            self.control
                .send(Control::Flush(tx))
                .map_err(|_| "the bus is closed".to_owned())?;
            rx.await.map_err(|_| "the bus is closed".to_owned())?
        })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let (tx, rx) = oneshot::channel();
            if self.control.send(Control::Close(tx)).is_ok() {
                let _ = rx.await;
            }
        })
    }

    fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

/// Turns a NATS reply into the requester's reply, or its error (counted by
/// the caller). A reply that carries a NATS reply subject comes from a
/// `reply_and_request`: the replier awaits an answer there, which a task
/// publishes once the requester gives it.
fn read_reply(
    shared: &Arc<Shared>,
    inner: &Arc<Inner>,
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
            bump(&inner.counters.undecodable, 1);
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
fn decode(
    inner: &Inner,
    head: &Inbound,
    payload: &[u8],
) -> Result<(CodecRegistration, AnyBody), String> {
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
    let Some(codec) = inner.registry().by_name(name) else {
        return Err(format!(
            "Unknown codec {name:?}: no codec is registered under that name on this node"
        ));
    };
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
    Ok((codec, body))
}

// ----- control task and readers -----

enum Stop {
    /// The node's last exported consumer of the address went: unsubscribe
    /// (acknowledged once the UNSUBs are queued), then answer what is
    /// still buffered.
    Unsubscribe(oneshot::Sender<()>),
    /// The bus is closing: drain both subscriptions.
    Drain,
}

struct ReaderHandle {
    stop: oneshot::Sender<Stop>,
    task: JoinHandle<()>,
}

async fn control_loop(
    shared: Arc<Shared>,
    inner: Weak<Inner>,
    mut rx: mpsc::UnboundedReceiver<Control>,
    mut closed: watch::Receiver<bool>,
) {
    let mut readers: HashMap<Arc<str>, ReaderHandle> = HashMap::new();
    while let Some(command) = rx.recv().await {
        match command {
            Control::Sync(address) => {
                if shared.closing.load(Ordering::Acquire) {
                    continue;
                }
                let Some(bus) = inner.upgrade() else { break };
                let want = bus.local.has_exported(&address);
                drop(bus);
                match (want, readers.contains_key(&address)) {
                    (true, false) => match subscribe(&shared, &inner, &address).await {
                        Ok(reader) => {
                            readers.insert(address, reader);
                        }
                        Err(e) => tracing::warn!(
                            address = &*address,
                            error = %e,
                            "cannot subscribe on NATS; remote messages will not reach this node's consumers of this address"
                        ),
                    },
                    (false, true) => {
                        if let Some(reader) = readers.remove(&address) {
                            let (ack, acked) = oneshot::channel();
                            if reader.stop.send(Stop::Unsubscribe(ack)).is_ok() {
                                let _ = acked.await;
                            }
                            tracing::debug!(address = &*address, "unsubscribed from NATS");
                        }
                    }
                    _ => {}
                }
            }
            Control::Flush(done) => {
                let _ = done.send(round_trip(&shared).await);
            }
            Control::Close(done) => {
                shared.closing.store(true, Ordering::Release);
                let drain_timeout = inner
                    .upgrade()
                    .map_or(crate::bus::DEFAULT_TIMEOUT, |bus| bus.default_timeout);
                let mut tasks = Vec::with_capacity(readers.len());
                for (_, reader) in readers.drain() {
                    let _ = reader.stop.send(Stop::Drain);
                    tasks.push(reader.task);
                }
                let all = futures_util::future::join_all(tasks);
                if tokio::time::timeout(drain_timeout, all).await.is_err() {
                    tracing::warn!(
                        "NATS drain: in-flight requests still unanswered after {drain_timeout:?}; closing anyway"
                    );
                }
                let _ = tokio::time::timeout(Duration::from_secs(5), shared.client.flush()).await;
                if shared.client.drain().await.is_ok() {
                    let _ =
                        tokio::time::timeout(Duration::from_secs(5), closed.wait_for(|c| *c)).await;
                }
                let _ = done.send(());
                break;
            }
        }
    }
    // Closed, or the bus is gone: readers unsubscribe and finish.
    for (_, reader) in readers {
        let (ack, _) = oneshot::channel();
        let _ = reader.stop.send(Stop::Unsubscribe(ack));
    }
}

/// Waits until the server has processed everything this connection sent
/// so far. A flush only writes the socket, and the server may still handle
/// another connection's message before our SUBs; a request to a subject
/// nobody listens on is answered by the server itself ("no responders")
/// after everything sent before it, so its answer is the proof.
async fn round_trip(shared: &Shared) -> Result<(), String> {
    use async_nats::client::RequestErrorKind as Nats;
    let probe = shared.client.new_inbox();
    let request = async_nats::Request::new().timeout(Some(Duration::from_secs(5)));
    match shared.client.send_request(probe, request).await {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == Nats::NoResponders => Ok(()),
        Err(e) => Err(format!(
            "the NATS server at {} did not answer a flush: {e}",
            shared.servers
        )),
    }
}

async fn subscribe(
    shared: &Arc<Shared>,
    inner: &Weak<Inner>,
    address: &Arc<str>,
) -> Result<ReaderHandle, String> {
    let publish = wire::publish_subject(&shared.prefix, address)?;
    let send = wire::send_subject(&shared.prefix, address)?;
    let client = &shared.client;
    let plain = client.subscribe(publish).await.map_err(|e| e.to_string())?;
    let queue = client
        .queue_subscribe(send, shared.prefix.to_string())
        .await
        .map_err(|e| e.to_string())?;
    tracing::debug!(address = &**address, "subscribed on NATS");
    let (stop, stopped) = oneshot::channel();
    let reader = AddressReader {
        shared: Arc::clone(shared),
        inner: Weak::clone(inner),
        address: Arc::clone(address),
    };
    let task = tokio::spawn(reader.run(plain, queue, stopped));
    Ok(ReaderHandle { stop, task })
}

type Pending = FuturesUnordered<BoxFuture<'static, ()>>;

struct AddressReader {
    shared: Arc<Shared>,
    inner: Weak<Inner>,
    address: Arc<str>,
}

impl AddressReader {
    async fn run(
        self,
        mut plain: Subscriber,
        mut queue: Subscriber,
        mut stop: oneshot::Receiver<Stop>,
    ) {
        let mut pending: Pending = FuturesUnordered::new();
        let (mut plain_open, mut queue_open, mut stop_open) = (true, true, true);
        loop {
            // Not `biased`: a steady stream of publishes must not starve
            // the queue subscription (or the other way round).
            tokio::select! {
                command = &mut stop, if stop_open => {
                    stop_open = false;
                    match command {
                        Ok(Stop::Drain) => {
                            let _ = plain.drain().await;
                            let _ = queue.drain().await;
                        }
                        Ok(Stop::Unsubscribe(ack)) => {
                            let _ = plain.unsubscribe().await;
                            let _ = queue.unsubscribe().await;
                            let _ = ack.send(());
                        }
                        Err(_) => {
                            let _ = plain.unsubscribe().await;
                            let _ = queue.unsubscribe().await;
                        }
                    }
                }
                Some(()) = pending.next(), if !pending.is_empty() => {}
                message = plain.next(), if plain_open => match message {
                    Some(message) => self.on_publish(message),
                    None => plain_open = false,
                },
                message = queue.next(), if queue_open => match message {
                    Some(message) => self.on_send(message, &mut pending),
                    None => queue_open = false,
                },
                else => break,
            }
        }
        tracing::debug!(address = &*self.address, "NATS reader finished");
    }

    fn on_publish(&self, message: async_nats::Message) {
        let Some(inner) = self.inner.upgrade() else {
            return;
        };
        bump(&inner.counters.remote_received, 1);
        let head = wire::parse_headers(message.headers.as_ref());
        let (codec, body) = match decode(&inner, &head, &message.payload) {
            Ok(decoded) => decoded,
            Err(error) => return undecodable(&inner, &self.address, "publish", &error),
        };
        let fan = inner.local.deliver_all(
            &self.address,
            Scope::Exported,
            codec.type_id(),
            first_then_transform(&codec, &body),
            &head.user,
        );
        let counters = &inner.counters;
        bump(&counters.delivered, fan.delivered as u64);
        bump(&counters.refused, fan.refused as u64);
        bump(&counters.type_mismatches, fan.mismatched as u64);
        if fan.refused > 0 {
            tracing::warn!(
                address = &*self.address,
                refused = fan.refused,
                delivered = fan.delivered,
                "publish from NATS refused by full consumer queues"
            );
        } else {
            tracing::debug!(
                address = &*self.address,
                delivered = fan.delivered,
                "publish from NATS delivered"
            );
        }
    }

    fn on_send(&self, message: async_nats::Message, pending: &mut Pending) {
        let Some(inner) = self.inner.upgrade() else {
            return;
        };
        bump(&inner.counters.remote_received, 1);
        let head = wire::parse_headers(message.headers.as_ref());
        let reply_to = message.reply.clone();
        let kind = if reply_to.is_some() {
            DeliveryKind::Request
        } else {
            DeliveryKind::Send
        };
        let (codec, body) = match decode(&inner, &head, &message.payload) {
            Ok(decoded) => decoded,
            Err(error) => {
                bump(&inner.counters.undecodable, 1);
                match reply_to {
                    Some(to) => {
                        tracing::debug!(address = &*self.address, %error, "request from NATS not decodable; answering with a codec error");
                        let message = format!("Request to address {}: {error}", self.address);
                        pending.push(self.fail(
                            to,
                            RequestErrorKind::Codec,
                            NO_FAILURE_CODE,
                            message,
                        ));
                    }
                    None => {
                        tracing::warn!(address = &*self.address, %error, "send from NATS dropped: not decodable");
                    }
                }
                return;
            }
        };
        let (tx, rx) = match reply_to {
            Some(_) => {
                let (tx, rx) = reply::channel();
                (Some(tx), Some(rx))
            }
            None => (None, None),
        };
        let result = inner.local.deliver_one(
            &self.address,
            Scope::Exported,
            codec.type_id(),
            first_then_transform(&codec, &body),
            head.user,
            kind,
            tx,
        );
        drop(body);
        match result {
            Ok(()) => {
                bump(&inner.counters.delivered, 1);
                if let (Some(to), Some(rx)) = (reply_to, rx) {
                    pending.push(Box::pin(answer(
                        Arc::clone(&self.shared),
                        Weak::clone(&self.inner),
                        Arc::clone(&self.address),
                        to,
                        rx,
                    )));
                }
            }
            Err(refusal) => {
                let (counter, failure, text) = match refusal {
                    Refusal::NoHandlers => (
                        &inner.counters.no_handlers,
                        RequestErrorKind::NoHandlers,
                        format!("No handlers for address {}", self.address),
                    ),
                    Refusal::TypeMismatch(expected) => (
                        &inner.counters.type_mismatches,
                        RequestErrorKind::TypeMismatch,
                        format!(
                            "No consumer at address {} takes `{}`: it expects `{expected}`",
                            self.address,
                            codec.type_name()
                        ),
                    ),
                    Refusal::QueueFull => (
                        &inner.counters.refused,
                        RequestErrorKind::QueueFull,
                        format!(
                            "Queue full at address {}: every consumer's queue is at capacity",
                            self.address
                        ),
                    ),
                };
                bump(counter, 1);
                match reply_to {
                    Some(to) => pending.push(self.fail(to, failure, NO_FAILURE_CODE, text)),
                    None => {
                        tracing::warn!(address = &*self.address, reason = %text, "send from NATS not delivered")
                    }
                }
            }
        }
    }

    fn fail(
        &self,
        to: async_nats::Subject,
        kind: RequestErrorKind,
        code: i32,
        message: String,
    ) -> BoxFuture<'static, ()> {
        Box::pin(publish_failure(
            Arc::clone(&self.shared),
            to,
            kind,
            code,
            message,
        ))
    }
}

/// Answers the requester waiting on `to` with a failure.
async fn publish_failure(
    shared: Arc<Shared>,
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

/// A `make` for local delivery of a freshly decoded body: the first
/// recipient gets the decoded allocation itself (nobody else holds it),
/// every further one the codec's transform of it (shared for an immutable
/// type, a deep copy otherwise), exactly as local delivery hands out
/// bodies.
fn first_then_transform<'a>(
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

#[cold]
fn undecodable(inner: &Inner, address: &str, what: &str, error: &str) {
    bump(&inner.counters.undecodable, 1);
    tracing::warn!(address, %error, "{what} from NATS dropped: not decodable");
}

/// Awaits the local answer to a remote request (a consumer's reply to a
/// request, or a requester's answer in a conversation) and publishes it to
/// the NATS reply subject `to`. A reply made with `reply_and_request` goes
/// out as a NATS request, whose answer is handed to the waiting replier.
async fn answer(
    shared: Arc<Shared>,
    inner: Weak<Inner>,
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
                        .map_err(|e| request_failed(e, &to, &address, next.wait, &shared.servers))
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

fn encode_reply(
    shared: &Shared,
    inner: &Inner,
    address: &str,
    env: &ReplyEnvelope,
) -> Result<(HeaderMap, Bytes), (RequestErrorKind, String)> {
    let type_id = Any::type_id(&*env.body);
    let Some(codec) = inner.registry().by_type(type_id) else {
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
