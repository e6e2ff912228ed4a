//! One client's connection, on any transport (TCP, SockJS, WebSocket): its
//! frames read from a [`Source`] and answered in order to a [`Sink`], its
//! registrations, its requests waiting for their replies, and the requests
//! from the bus waiting for its answers.
//!
//! Contract: frames are handled one after the other, in the order they
//! came; a `send`, `publish` or request is handed to the bus before the
//! next frame is read (a request's reply is awaited beside the reading).
//! Everything a connection holds is bounded: the frame size, its
//! registrations, its requests in each direction, its outgoing frames (a
//! client that does not read is closed after the write timeout) and its
//! silence (closed after the idle timeout). On close every registration
//! is unregistered, the client's requests are abandoned and the bus's
//! requests to it fail.

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use codecbus_json::JsValue;
use futures_util::FutureExt as _;
use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, sleep_until, timeout};

use crate::api::bus::EventBus;
use crate::api::consumer::MessageConsumer;
use crate::base::error::NO_FAILURE_CODE;
use crate::base::headers::Headers;
use crate::base::options::DeliveryOptions;
use crate::bridge::answer::Answer;
use crate::bridge::carry::{Carry, Decoded, Typed};
use crate::bridge::error::BridgeError;
use crate::bridge::frame::{Dialect, Incoming, Malformed, Member, Outgoing, Read, Sink, Source};
use crate::bridge::link::{Link, Out};
use crate::bridge::options::BridgeOptions;
use crate::bridge::permit::Permits;

/// How many frames may wait to be written to one client.
const OUTBOX: usize = 256;

/// What a bridge shares with all its connections.
pub(crate) struct Shared {
    pub(crate) bus: EventBus,
    inbound: Permits,
    outbound: Arc<Permits>,
    types: HashMap<String, Vec<Arc<dyn Carry>>>,
    /// `JsValue`, for addresses that declare no type.
    json: [Arc<dyn Carry>; 1],
    pub(crate) limits: crate::bridge::link::Limits,
    next_connection: AtomicU64,
    /// The JSON Schemas of the typed addresses' bodies, as served.
    pub(crate) schemas: String,
}

impl Shared {
    pub(crate) fn new(bus: &EventBus, options: BridgeOptions) -> Result<Self, BridgeError> {
        let schemas = schemas(bus, &options.types).to_string();
        Ok(Self {
            bus: bus.clone(),
            inbound: Permits::new(&options.inbound)?,
            outbound: Arc::new(Permits::new(&options.outbound)?),
            types: options.types,
            json: [Arc::new(Typed::<JsValue, JsValue>::new())],
            limits: options.limits,
            next_connection: AtomicU64::new(1),
            schemas,
        })
    }

    /// The types bodies take at `address`.
    fn carriers(&self, address: &str) -> &[Arc<dyn Carry>] {
        match self.types.get(address) {
            Some(types) if !types.is_empty() => types,
            _ => &self.json,
        }
    }

    /// `body` decoded as the first type of `address` that reads it, or why
    /// none did (the first type's reason).
    fn decode(&self, address: &str, body: &str) -> Result<Box<dyn Decoded>, String> {
        let mut first = None;
        for carrier in self.carriers(address) {
            match carrier.decode(body) {
                Ok(decoded) => return Ok(decoded),
                Err(why) => {
                    first.get_or_insert(why);
                }
            }
        }
        Err(first.unwrap_or_default())
    }
}

/// The JSON Schema of each typed address's bodies, by address: its type's,
/// or, for an address of several types, any of theirs (`anyOf`, the first
/// that reads a body takes it).
pub(crate) fn schemas(
    bus: &EventBus,
    types: &HashMap<String, Vec<Arc<dyn Carry>>>,
) -> serde_json::Value {
    let mut addresses: Vec<&String> = types.keys().collect();
    addresses.sort();
    let map: serde_json::Map<String, serde_json::Value> = addresses
        .into_iter()
        .map(|address| {
            let mut schemas: Vec<serde_json::Value> =
                types[address].iter().map(|c| c.json_schema(bus)).collect();
            let schema = if schemas.len() == 1 {
                schemas.remove(0)
            } else {
                serde_json::json!({ "anyOf": schemas })
            };
            (address.clone(), schema)
        })
        .collect();
    serde_json::Value::Object(map)
}

/// The delivery options of a client's `send` or `publish` with `headers`.
/// On the TCP bridge, as Vert.x 3.9.4's, three headers are options rather
/// than headers: `timeout` (a request's timeout, in milliseconds),
/// `localOnly` (`true` or `false`) and `codecName` (a Vert.x codec's name;
/// here a body's type picks its codec, so it is dropped). The SockJS
/// bridge, as vertx-web's, passes every header on.
fn delivery(mut headers: Headers, dialect: Dialect) -> Result<DeliveryOptions, String> {
    let mut options = DeliveryOptions::new();
    if matches!(dialect, Dialect::Tcp) {
        if let Some(text) = headers.get("timeout").map(str::to_owned) {
            let ms: u64 = text.trim().parse().map_err(|_| {
                format!("the header \"timeout\" is not a number of milliseconds: {text:?}")
            })?;
            options = options.timeout(Duration::from_millis(ms));
            headers.remove("timeout");
        }
        if let Some(text) = headers.get("localOnly").map(str::to_owned) {
            let local_only = match text.as_str() {
                "true" => true,
                "false" => false,
                _ => {
                    return Err(format!(
                        "the header \"localOnly\" is neither true nor false: {text:?}"
                    ));
                }
            };
            options = options.local_only(local_only);
            headers.remove("localOnly");
        }
        headers.remove("codecName");
    }
    Ok(options.headers(headers))
}

/// The longest reply address a client may give, in UTF-16 code units (a
/// Java string's length): vertx-web 3.9.4's limit, 36 (a UUID's text).
pub(crate) const MAX_REPLY_ADDRESS: usize = 36;

/// A client request waiting for its reply.
type Request = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A connection's own state, in its task.
struct Conn {
    shared: Arc<Shared>,
    link: Arc<Link>,
    registrations: HashMap<String, Vec<MessageConsumer>>,
    requests: FuturesUnordered<Request>,
}

impl Conn {
    /// Handles one frame; `false` when the connection is to close.
    async fn handle(&mut self, bytes: &[u8]) -> bool {
        let frame = match Incoming::parse(bytes) {
            Ok(frame) => frame,
            Err(Malformed::NotAnObject) => {
                return self
                    .link
                    .err_detail("invalid_json", "a frame is a JSON object")
                    .await;
            }
            Err(Malformed::Json(e)) => {
                return self.link.err_detail("invalid_json", &e.to_string()).await;
            }
        };
        let dialect = self.link.dialect;
        let kind = match frame.kind() {
            Member::Absent => return self.link.err("missing_type").await,
            Member::Text(kind) => kind,
            Member::Other(_) => return self.link.err(dialect.unknown_type()).await,
        };
        let kind = &*kind;
        if kind == "ping" {
            return match dialect.pong() {
                Some(pong) => self.link.write(Outgoing::of(&pong)).await,
                None => true,
            };
        }
        if !matches!(kind, "send" | "publish" | "register" | "unregister") {
            return self.link.err(dialect.unknown_type()).await;
        }
        let Some(address) = Member::of(frame.address).text() else {
            for answer in dialect.missing_address() {
                if !self.link.write(Outgoing::of(&answer)).await {
                    return false;
                }
            }
            return true;
        };
        if address.len() > self.shared.limits.max_address_length {
            return self.link.err("max_address_length_reached").await;
        }
        // As vertx-web's SockJS bridge, on both transports: a reply
        // address is short (Vert.x's own are UUIDs), so that a client
        // cannot make the bridge keep long ones for its pending requests.
        if matches!(kind, "send" | "publish")
            && let Some(reply) = Member::of(frame.reply_address).text()
            && reply.encode_utf16().count() > MAX_REPLY_ADDRESS
        {
            return self.link.err("invalid_reply_address").await;
        }
        match kind {
            "send" => self.send(&frame, &address).await,
            "publish" => self.publish(&frame, &address).await,
            "register" => self.register(address.into_owned()).await,
            _ => self.unregister(&address).await,
        }
    }

    async fn send(&mut self, frame: &Incoming<'_>, address: &str) -> bool {
        let headers = match frame.headers() {
            Ok(headers) => headers,
            Err(why) => {
                return self.link.err_detail("invalid_headers", &why).await;
            }
        };
        let body = frame.body();
        // An answer to a request from the bus: at a reply address this
        // connection was given, whatever the permissions (as Vert.x).
        if self.link.pending().contains_key(address) {
            let answer = match Member::of(frame.failure_code) {
                Member::Absent => Answer::Body {
                    body: body.to_owned(),
                    headers,
                    reply_address: Member::of(frame.reply_address).text().map(Cow::into_owned),
                },
                code => {
                    let Some(code) = code.int() else {
                        return self
                            .link
                            .err_detail("invalid_failure_code", "`failureCode` is a 32-bit integer")
                            .await;
                    };
                    let message = Member::of(frame.message).text().unwrap_or_default();
                    Answer::Failure {
                        code,
                        message: message.into_owned(),
                    }
                }
            };
            if let Some(tx) = self.link.pending().remove(address) {
                let _ = tx.send(answer);
            }
            return true;
        }
        let shared = Arc::clone(&self.shared);
        if !shared.inbound.admits(address, body) {
            return self.link.err("access_denied").await;
        }
        let reply_address = Member::of(frame.reply_address).text();
        let decoded = match shared.decode(address, body) {
            Ok(decoded) => decoded,
            Err(why) => {
                let dialect = self.link.dialect;
                let refused = match reply_address {
                    Some(reply) => dialect.failure(&reply, address, NO_FAILURE_CODE, "ERROR", &why),
                    None => dialect.err_detail("invalid_body", &why),
                };
                return self.link.write(Outgoing::of(&refused)).await;
            }
        };
        let options = match delivery(headers, self.link.dialect) {
            Ok(options) => options,
            Err(why) => return self.link.err_detail("invalid_headers", &why).await,
        };
        let Some(reply_address) = reply_address else {
            // As Vert.x: a send's outcome is not reported.
            if let Err(e) = decoded.send(&shared.bus, address, options).await {
                tracing::debug!(address, error = %e, "a bridge client's send was not delivered");
            }
            return true;
        };
        let limit = shared.limits.max_pending_replies;
        if self.requests.len() >= limit {
            let why = format!("{limit} requests of this connection wait for their reply already");
            let refused =
                self.link
                    .dialect
                    .failure(&reply_address, address, NO_FAILURE_CODE, "ERROR", &why);
            return self.link.write(Outgoing::of(&refused)).await;
        }
        let reply_address = reply_address.into_owned();
        let link = Arc::clone(&self.link);
        let address: Arc<str> = Arc::from(address);
        let request = decoded.request(shared.bus.clone(), Arc::clone(&address), options);
        // Without tokio's budget: the request is delivered in its first
        // poll, here, before the next frame is read.
        let mut request: Request = Box::pin(tokio::task::coop::unconstrained(async move {
            let answered = link.answer_out(reply_address, address, request.await);
            link.send(answered).await;
        }));
        if (&mut request).now_or_never().is_none() {
            self.requests.push(request);
        }
        true
    }

    async fn publish(&mut self, frame: &Incoming<'_>, address: &str) -> bool {
        let headers = match frame.headers() {
            Ok(headers) => headers,
            Err(why) => {
                return self.link.err_detail("invalid_headers", &why).await;
            }
        };
        let body = frame.body();
        let shared = Arc::clone(&self.shared);
        if !shared.inbound.admits(address, body) {
            return self.link.err("access_denied").await;
        }
        let decoded = match shared.decode(address, body) {
            Ok(decoded) => decoded,
            Err(why) => {
                return self.link.err_detail("invalid_body", &why).await;
            }
        };
        let options = match delivery(headers, self.link.dialect) {
            Ok(options) => options,
            Err(why) => return self.link.err_detail("invalid_headers", &why).await,
        };
        if let Err(e) = decoded.publish(&shared.bus, address, options).await {
            tracing::debug!(address, error = %e, "a bridge client's publish reached nobody");
        }
        true
    }

    async fn register(&mut self, address: String) -> bool {
        let shared = Arc::clone(&self.shared);
        if !shared.outbound.admits_address(&address) {
            return self.link.err("access_denied").await;
        }
        if self.registrations.contains_key(&address) {
            return true;
        }
        if self.registrations.len() >= shared.limits.max_registrations {
            return self.link.err("max_handlers_reached").await;
        }
        let consumers = shared
            .carriers(&address)
            .iter()
            .map(|c| c.consume(&shared.bus, &address, Arc::clone(&self.link)))
            .collect();
        self.registrations.insert(address, consumers);
        true
    }

    async fn unregister(&mut self, address: &str) -> bool {
        if !self.shared.outbound.admits_address(address) {
            return self.link.err("access_denied").await;
        }
        match self.registrations.remove(address) {
            Some(consumers) => {
                for consumer in consumers {
                    consumer.unregister().await;
                }
                true
            }
            None => match self.link.dialect.unknown_address() {
                Some(answer) => self.link.write(Outgoing::of(&answer)).await,
                None => true,
            },
        }
    }
}

/// Serves one client, whatever its transport, until it goes, misbehaves,
/// falls silent or the bridge stops (`stop` changes or its sender is
/// dropped).
pub(crate) async fn serve<S: Source, W: Sink>(
    shared: Arc<Shared>,
    mut source: S,
    sink: W,
    dialect: Dialect,
    mut stop: watch::Receiver<bool>,
) {
    let limits = shared.limits;
    let id = shared.next_connection.fetch_add(1, Ordering::Relaxed);
    let (outbox, rx) = mpsc::channel(OUTBOX);
    let mut writer = tokio::spawn(write_all(sink, rx, limits));
    let outbound = Arc::clone(&shared.outbound);
    let mut conn = Conn {
        shared,
        link: Arc::new(Link {
            outbound,
            limits,
            outbox,
            pending: Mutex::new(HashMap::new()),
            next_reply: AtomicU64::new(1),
            id,
            dialect,
        }),
        registrations: HashMap::new(),
        requests: FuturesUnordered::new(),
    };
    let mut deadline = Instant::now() + limits.idle_timeout;
    let mut writer_done = false;
    loop {
        let read = tokio::select! {
            biased;
            _ = &mut writer => {
                writer_done = true;
                break;
            }
            _ = stop.changed() => break,
            Some(()) = conn.requests.next(), if !conn.requests.is_empty() => continue,
            () = sleep_until(deadline) => {
                tracing::debug!(connection = id, "bridge connection idle: closed");
                break;
            }
            read = source.next() => read,
        };
        match read {
            Read::Frame(bytes) => {
                deadline = Instant::now() + limits.idle_timeout;
                if !conn.handle(&bytes).await {
                    break;
                }
            }
            Read::TooLarge(len) => {
                let why = format!(
                    "a frame of {len} bytes, over the limit of {}",
                    limits.max_frame
                );
                conn.link.err_detail("frame_too_large", &why).await;
                break;
            }
            Read::Closed => break,
        }
    }
    // What was queued is written (a last `err` frame among it), then the
    // writer closes; consumers blocked on a full outbox are let go.
    if !writer_done {
        let closing = timeout(limits.write_timeout, conn.link.outbox.send(Out::Close)).await;
        if !matches!(closing, Ok(Ok(())))
            || timeout(limits.write_timeout, &mut writer).await.is_err()
        {
            writer.abort();
        }
    }
    let Conn {
        shared: _,
        link,
        registrations,
        requests,
    } = conn;
    drop(requests);
    for consumer in registrations.into_values().flatten() {
        consumer.unregister().await;
    }
    // The bus's requests to this client fail at once.
    link.pending().clear();
    tracing::debug!(connection = id, "bridge connection closed");
}

/// How many frames one flush takes at most, and how many bytes: a burst
/// of answers leaves in few writes, and a long one still flushes as it
/// goes.
const BATCH_FRAMES: usize = 64;
const BATCH_BYTES: usize = 64 * 1024;

/// Writes the connection's frames until it closes, stalls or fails; beats
/// when the transport does and nothing was written for a while. The frames
/// waiting when one is taken are written with it, in one flush.
async fn write_all<W: Sink>(
    mut sink: W,
    mut rx: mpsc::Receiver<Out>,
    limits: crate::bridge::link::Limits,
) {
    let mut closing = false;
    while !closing {
        let out = match sink.heartbeat() {
            Some(every) => match timeout(every, rx.recv()).await {
                Ok(out) => out,
                Err(_) => {
                    if !matches!(timeout(limits.write_timeout, sink.beat()).await, Ok(Ok(()))) {
                        return;
                    }
                    continue;
                }
            },
            None => rx.recv().await,
        };
        let frame = match out {
            Some(Out::Frame(frame)) => frame,
            Some(Out::Make(make)) => make(),
            Some(Out::Close) | None => break,
        };
        let mut bytes = frame.json().len();
        sink.feed(frame);
        for _ in 1..BATCH_FRAMES {
            if bytes >= BATCH_BYTES {
                break;
            }
            let frame = match rx.try_recv() {
                Ok(Out::Frame(frame)) => frame,
                Ok(Out::Make(make)) => make(),
                Ok(Out::Close) => {
                    closing = true;
                    break;
                }
                Err(_) => break,
            };
            bytes += frame.json().len();
            sink.feed(frame);
        }
        if !matches!(
            timeout(limits.write_timeout, sink.flush()).await,
            Ok(Ok(()))
        ) {
            return;
        }
    }
    let _ = timeout(limits.write_timeout, sink.close()).await;
}
