//! codecbus as a client of a Vert.x `TcpEventBusBridge`: a node joins an
//! existing Vert.x deployment, sending, publishing, requesting and
//! consuming its addresses with its own types.
//!
//! One connection per [`BridgeClient`], kept up by one task: it reads the
//! bridge's frames, pings it, and, when the connection goes, connects
//! again (backing off) and registers the client's consumers anew. While
//! it is down every call fails at once with the `Transport` kind, as the
//! NATS transport's calls do, and the requests waiting for a reply fail
//! when the connection goes.
//!
//! Bodies cross as JSON through the server's transcoding (`json.rs`):
//! what a body's codec writes, as JSON, on the way out; a body read by the
//! codec of the type asked for on the way in. Messages for a consumer go
//! through the client's bus (`carry.rs`, the server's own path for a
//! client's frames), so the handler is a bus consumer like any other.

use std::any::type_name;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use codecbus_core::MessageType;
use codecbus_json::JsValue;
use serde_json::json;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::{Instant, MissedTickBehavior, interval, sleep, timeout};

use crate::api::bus::EventBus;
use crate::api::consumer::{HandlerResult, MessageConsumer};
use crate::api::message::Message;
use crate::base::body::IntoBody;
use crate::base::error::{
    Error, NO_FAILURE_CODE, PublishError, PublishErrorKind, RequestError, RequestErrorKind,
    SendError, SendErrorKind,
};
use crate::base::headers::Headers;
use crate::base::options::DeliveryOptions;
use crate::base::reply::{Failure, Outcome, ReplyEnvelope, Turn};
use crate::bridge::answer::{self, Answer, Answered, Replier};
use crate::bridge::carry::{Carry, Decoded, Typed};
use crate::bridge::frame::{
    self, Incoming, Member, Outgoing, Read, Sink as _, Source as _, TcpSink,
};
use crate::bridge::json::{decode_as, encode_json};
use crate::bridge::options::DEFAULT_MAX_FRAME;

/// How long the first connection may take unless set otherwise.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the client pings the bridge unless set otherwise.
pub const DEFAULT_PING_INTERVAL: Duration = Duration::from_secs(5);
/// How long the bridge may stay silent (not even a `pong`) before the
/// client takes the connection for dead and connects again, unless set
/// otherwise.
pub const DEFAULT_PING_TIMEOUT: Duration = Duration::from_secs(15);
/// The first wait before connecting again unless set otherwise; it
/// doubles after each failed attempt up to
/// [`DEFAULT_MAX_RECONNECT_DELAY`].
pub const DEFAULT_RECONNECT_DELAY: Duration = Duration::from_millis(50);
/// The longest wait between two attempts to connect unless set otherwise.
pub const DEFAULT_MAX_RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// How many frames may wait to be written.
const OUTBOX: usize = 1024;
/// How many bytes the writer gathers into one write.
const WRITE_BATCH: usize = 64 * 1024;

/// Why a [`BridgeClient`] could not connect.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BridgeClientError {
    /// The first connection to the bridge failed or timed out.
    #[error("cannot connect to the Vert.x bridge at {address}: {source}")]
    Connect {
        /// The address given.
        address: String,
        /// The system's error (`TimedOut` past the connect timeout).
        #[source]
        source: std::io::Error,
    },
}

/// The options of a [`BridgeClient`]: timeouts, keepalive, reconnection
/// and the largest frame it reads.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use codecbus_bus::bridge::BridgeClientOptions;
///
/// let options = BridgeClientOptions::new()
///     .ping_interval(Duration::from_secs(2))
///     .ping_timeout(Duration::from_secs(6))
///     .max_reconnect_delay(Duration::from_millis(500));
/// ```
#[derive(Debug, Clone)]
pub struct BridgeClientOptions {
    connect_timeout: Duration,
    ping_interval: Duration,
    ping_timeout: Duration,
    reconnect_delay: Duration,
    max_reconnect_delay: Duration,
    max_frame: usize,
}

impl Default for BridgeClientOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl BridgeClientOptions {
    /// The defaults: the `DEFAULT_*` constants of this module and
    /// [`DEFAULT_MAX_FRAME`].
    pub const fn new() -> Self {
        Self {
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            ping_interval: DEFAULT_PING_INTERVAL,
            ping_timeout: DEFAULT_PING_TIMEOUT,
            reconnect_delay: DEFAULT_RECONNECT_DELAY,
            max_reconnect_delay: DEFAULT_MAX_RECONNECT_DELAY,
            max_frame: DEFAULT_MAX_FRAME,
        }
    }

    /// How long each attempt to connect may take (the first one's failure
    /// is [`BridgeClient::connect`]'s error).
    #[must_use]
    pub fn connect_timeout(mut self, wait: Duration) -> Self {
        self.connect_timeout = wait;
        self
    }

    /// How often to ping the bridge (a codecbus bridge closes a silent
    /// connection; a Vert.x one keeps it).
    #[must_use]
    pub fn ping_interval(mut self, every: Duration) -> Self {
        self.ping_interval = every.max(Duration::from_millis(1));
        self
    }

    /// How long the bridge may stay silent before the connection is taken
    /// for dead and made again.
    #[must_use]
    pub fn ping_timeout(mut self, wait: Duration) -> Self {
        self.ping_timeout = wait;
        self
    }

    /// The first wait before connecting again after the connection went;
    /// it doubles after each failed attempt.
    #[must_use]
    pub fn reconnect_delay(mut self, wait: Duration) -> Self {
        self.reconnect_delay = wait;
        self
    }

    /// The longest wait between two attempts to connect.
    #[must_use]
    pub fn max_reconnect_delay(mut self, wait: Duration) -> Self {
        self.max_reconnect_delay = wait;
        self
    }

    /// The largest frame read from the bridge; a larger one closes the
    /// connection (and a new one is made).
    #[must_use]
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes;
        self
    }
}

/// A reply from the bridge (its body's JSON text, its headers, and the
/// address where the other side awaits an answer to it, if it does), or
/// why none came.
type Reply = Result<(String, Headers, Option<String>), RequestError>;

/// The addresses this client registered, with the types their bodies take.
struct Registration {
    carriers: Vec<Arc<dyn Carry>>,
    /// How many [`BridgeConsumer`]s of the client hold it.
    count: usize,
}

/// What the handles, the consumers and the connection's task share.
struct Inner {
    bus: EventBus,
    peer: String,
    options: BridgeClientOptions,
    /// The current connection's outgoing frames; `None` while down.
    link: Mutex<Option<mpsc::Sender<Outgoing>>>,
    /// Reply addresses of requests waiting for their answer.
    pending: Mutex<HashMap<String, oneshot::Sender<Reply>>>,
    registrations: Mutex<HashMap<String, Registration>>,
    next_reply: AtomicU64,
    /// Makes this client's reply addresses its own.
    nonce: u64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why a frame could not be handed to the connection.
enum Refused {
    Down(String),
    Body(String),
}

impl Inner {
    fn down(&self) -> String {
        format!(
            "the Vert.x bridge connection to {} is down (reconnecting)",
            self.peer
        )
    }

    fn link(&self) -> Option<mpsc::Sender<Outgoing>> {
        lock(&self.link).clone()
    }

    /// A new reply address of this client: `__cb.`, 12 hex digits of its
    /// nonce, `.` and a count in hex, at most 34 characters (a bridge
    /// takes at most 36: vertx-web's limit, which codecbus's bridge holds
    /// too).
    fn reply_address(&self) -> String {
        let n = self.next_reply.fetch_add(1, Ordering::Relaxed);
        format!("__cb.{:012x}.{n:x}", self.nonce & 0xffff_ffff_ffff)
    }

    /// A reply address of this client at which the other side owes
    /// `replier` (of a message to `address`) an answer; the answer, or the
    /// failure, the connection's loss or the bus's default timeout, is
    /// handed to the replier by a task of its own.
    fn await_answer(self: &Arc<Self>, replier: Replier, address: &str) -> String {
        let reply_address = self.reply_address();
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(reply_address.clone(), tx);
        let inner = Arc::clone(self);
        let waiting = reply_address.clone();
        let address = address.to_string();
        tokio::spawn(async move {
            let answer = async {
                match rx.await {
                    Ok(Ok((body, headers, reply_address))) => Some(Answer::Body {
                        body,
                        headers,
                        reply_address,
                    }),
                    Ok(Err(e)) if e.kind() != RequestErrorKind::Transport => {
                        Some(Answer::Failure {
                            code: e.failure_code().unwrap_or(NO_FAILURE_CODE),
                            message: e.message().to_string(),
                        })
                    }
                    Ok(Err(_)) | Err(_) => None,
                }
            };
            let answered = replier
                .settle(answer, inner.bus.state.default_timeout)
                .await;
            lock(&inner.pending).remove(&waiting);
            inner.answered(answered, &address).await;
        });
        reply_address
    }

    /// The turn of a reply from the other side (to a request to `address`)
    /// that asks for an answer at `at`: the reply's message carries it, and
    /// the answer given there goes to `at` as the next turn of any
    /// conversation does, by a task of its own.
    fn turn(self: &Arc<Self>, at: String, address: &Arc<str>) -> Box<Turn> {
        let (turn, next) = answer::turn(Arc::clone(address), &self.bus.state);
        let inner = Arc::clone(self);
        let address = address.to_string();
        tokio::spawn(async move {
            inner.answered(Answered::Next { at, next }, &address).await;
        });
        turn
    }

    /// What answering a message awaiting the other side's answer gave
    /// (of a message to `address`): a refusal is logged, and the next turn
    /// of the conversation, once given, goes to the other side.
    async fn answered(self: &Arc<Self>, answered: Answered, address: &str) {
        match answered {
            Answered::Done => {}
            Answered::Refused(why) => {
                tracing::warn!(peer = self.peer, address, %why, "an answer from the Vert.x bridge was refused");
            }
            // The other side's reply or answer asks in turn: the answer
            // given here goes to it.
            Answered::Next { at, next } => {
                let frame = answer_frame(self, &at, address, next.await);
                if let Err(why) = self.write(frame).await {
                    tracing::debug!(peer = self.peer, address, %why, "an answer to the Vert.x bridge was not sent");
                }
            }
        }
    }

    /// Queues a frame on the current connection.
    async fn write(&self, frame: Outgoing) -> Result<(), String> {
        let Some(link) = self.link() else {
            return Err(self.down());
        };
        link.send(frame).await.map_err(|_| self.down())
    }
}

/// A connection to a Vert.x `TcpEventBusBridge` (or a codecbus
/// [`Bridge`](crate::bridge::Bridge)), through which this node sends,
/// publishes, requests and consumes the other side's addresses with its
/// own types: the bus's calls, with the bus's options, errors and
/// [`Message`]s.
///
/// Bodies cross as JSON: a derived type as the JSON object of its named
/// layout (as the [`Bridge`](crate::bridge::Bridge) maps them), a reply
/// decoded by the codec of the type asked for, and
/// [`JsValue`](codecbus_json::JsValue) for any JSON. A consumer's messages
/// come through this client's bus, so its handler is a bus handler, and a
/// request from Vert.x is answered with `reply` or `fail`; so is a reply
/// from Vert.x that asks for an answer (see [`request`](BridgeClient::request)).
///
/// The connection is kept: it is pinged, made again after it goes (backing
/// off from [`BridgeClientOptions::reconnect_delay`]) and its consumers
/// registered again. While it is down every `send`, `publish` and
/// `request` fails at once with the `Transport` kind, and the requests
/// waiting for a reply when it goes fail with it.
///
/// Clones share the connection; it closes when the last clone is dropped
/// or [`close`](BridgeClient::close) is called.
///
/// # Examples
///
/// ```
/// use codecbus_bus::bridge::{Bridge, BridgeClient, BridgeClientOptions, BridgeOptions, PermittedOptions};
/// use codecbus_bus::{EventBus, Message};
/// use codecbus_core::MessageCodec;
///
/// #[derive(MessageCodec, Clone, Debug)]
/// struct Order { id: u64, quantity: u32 }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // The other side: a codecbus bridge here, a Vert.x node in production.
/// let remote = EventBus::new();
/// let _shop = remote.consumer("shop.orders", |m: Message<Order>| async move {
///     m.reply(format!("order {} taken", m.body().id))
/// });
/// let options = BridgeOptions::new()
///     .inbound(PermittedOptions::new().address("shop.orders"))
///     .typed::<Order>("shop.orders");
/// let server = Bridge::new(&remote, options)?.listen("127.0.0.1:0").await?;
///
/// let bus = EventBus::new();
/// let client =
///     BridgeClient::connect(&bus, server.local_addr(), BridgeClientOptions::new()).await?;
/// let reply: Message<String> = client.request("shop.orders", Order { id: 7, quantity: 2 }).await?;
/// assert_eq!(reply.body(), "order 7 taken");
/// # client.close().await;
/// # server.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct BridgeClient {
    inner: Arc<Inner>,
    stop: Arc<Stop>,
}

/// Stops the connection's task when the last handle goes.
struct Stop {
    tx: watch::Sender<bool>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for Stop {
    fn drop(&mut self) {
        let _ = self.tx.send(true);
    }
}

impl fmt::Debug for BridgeClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BridgeClient")
            .field("peer", &self.inner.peer)
            .field("connected", &self.is_connected())
            .finish_non_exhaustive()
    }
}

impl BridgeClient {
    /// Connects to the bridge at `address` (`host:port`) for `bus`: the bus
    /// whose codecs read the replies and whose consumers take the messages
    /// of this client's [`consumer`](BridgeClient::consumer)s.
    ///
    /// # Errors
    ///
    /// [`BridgeClientError::Connect`] when the first connection fails or
    /// takes longer than [`BridgeClientOptions::connect_timeout`]; after
    /// it, a lost connection is made again without a word to the caller.
    pub async fn connect(
        bus: &EventBus,
        address: impl fmt::Display,
        options: BridgeClientOptions,
    ) -> Result<Self, BridgeClientError> {
        let peer = address.to_string();
        let stream = open(&peer, options.connect_timeout)
            .await
            .map_err(|source| BridgeClientError::Connect {
                address: peer.clone(),
                source,
            })?;
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ (u64::from(std::process::id()) << 32);
        let inner = Arc::new(Inner {
            bus: bus.clone(),
            peer,
            options,
            link: Mutex::new(None),
            pending: Mutex::new(HashMap::new()),
            registrations: Mutex::new(HashMap::new()),
            next_reply: AtomicU64::new(1),
            nonce,
        });
        let (stop, stopped) = watch::channel(false);
        let (ready_tx, ready) = oneshot::channel();
        let task = tokio::spawn(run(Arc::clone(&inner), stream, stopped, ready_tx));
        // The first connection's link is set before the call returns.
        let _ = ready.await;
        Ok(Self {
            inner,
            stop: Arc::new(Stop {
                tx: stop,
                task: Mutex::new(Some(task)),
            }),
        })
    }

    /// Whether the connection is up now.
    pub fn is_connected(&self) -> bool {
        lock(&self.inner.link).is_some()
    }

    /// The bridge's address, as given to [`connect`](BridgeClient::connect).
    pub fn peer(&self) -> &str {
        &self.inner.peer
    }

    /// Sends `body` to one consumer of `address` on the other side
    /// (Vert.x `send`). As with Vert.x's bridge, whether anybody took it
    /// is not reported.
    ///
    /// # Errors
    ///
    /// `Transport` when the connection is down, `Codec` when the body
    /// cannot be written as JSON.
    pub async fn send<B: IntoBody>(&self, address: &str, body: B) -> Result<(), SendError> {
        self.send_with(address, body, DeliveryOptions::new()).await
    }

    /// [`send`](BridgeClient::send) with options (the headers; the
    /// timeout and local-only do not apply).
    ///
    /// # Errors
    ///
    /// As [`send`](BridgeClient::send).
    pub async fn send_with<B: IntoBody>(
        &self,
        address: &str,
        body: B,
        options: DeliveryOptions,
    ) -> Result<(), SendError> {
        self.post("send", address, body, options)
            .await
            .map_err(|why| refusal(why, address, SendErrorKind::Transport, SendErrorKind::Codec))
    }

    /// Publishes `body` to every consumer of `address` on the other side.
    ///
    /// # Errors
    ///
    /// As [`send`](BridgeClient::send).
    pub async fn publish<B: IntoBody>(&self, address: &str, body: B) -> Result<(), PublishError> {
        self.publish_with(address, body, DeliveryOptions::new())
            .await
    }

    /// [`publish`](BridgeClient::publish) with options (the headers).
    ///
    /// # Errors
    ///
    /// As [`send`](BridgeClient::send).
    pub async fn publish_with<B: IntoBody>(
        &self,
        address: &str,
        body: B,
        options: DeliveryOptions,
    ) -> Result<(), PublishError> {
        self.post("publish", address, body, options)
            .await
            .map_err(|why| {
                refusal(
                    why,
                    address,
                    PublishErrorKind::Transport,
                    PublishErrorKind::Codec,
                )
            })
    }

    async fn post<B: IntoBody>(
        &self,
        kind: &str,
        address: &str,
        body: B,
        options: DeliveryOptions,
    ) -> Result<(), Refused> {
        let text = encode_json(&*body.into_arc()).map_err(Refused::Body)?;
        let (_, headers, _) = options.into_parts();
        let headers = Some(&headers).filter(|h| !h.is_empty());
        let frame = outgoing(kind, address, None, headers, text.as_bytes());
        self.inner.write(frame).await.map_err(Refused::Down)
    }

    /// Requests `address` on the other side and waits for its reply, read
    /// as an `R` (`JsValue` takes any), within the bus's default timeout.
    ///
    /// The reply may carry the turn of a conversation: when the other side
    /// replied asking for an answer (Vert.x's `replyAndRequest`, a reply
    /// frame with a `replyAddress`), the message
    /// [`expects_reply`](Message::expects_reply), and its
    /// [`reply`](Message::reply), [`fail`](Message::fail) (code and text)
    /// or [`reply_and_request`](Message::reply_and_request) goes back as a
    /// `send` to that address, as the answer to a request from the other
    /// side does. A `reply_and_request` there asks in turn, and its result
    /// is the other side's next reply, a `JsValue`, which may ask again.
    /// The answer is awaited for the bus's default timeout (past it, or
    /// when the message is dropped unanswered, the other side is sent the
    /// failure). A plain reply expects no answer: `reply` on it is
    /// [`NoReplyExpected`](crate::ReplyErrorKind::NoReplyExpected).
    ///
    /// # Errors
    ///
    /// `Transport` when the connection is down or goes before the reply,
    /// `Timeout`, `NoHandlers` and `RecipientFailure` (with its
    /// [`failure_code`](Error::failure_code)) as the other side reports
    /// them, `Codec` when the body cannot be written as JSON or the reply
    /// is not an `R` (a reply that asks for an answer is then answered
    /// with that failure).
    pub async fn request<R>(
        &self,
        address: &str,
        body: impl IntoBody,
    ) -> Result<Message<R>, RequestError>
    where
        R: MessageType + Send + Sync + 'static,
    {
        self.request_with(address, body, DeliveryOptions::new())
            .await
    }

    /// [`request`](BridgeClient::request) with options (the timeout and
    /// headers).
    ///
    /// # Errors
    ///
    /// As [`request`](BridgeClient::request).
    pub async fn request_with<R>(
        &self,
        address: &str,
        body: impl IntoBody,
        options: DeliveryOptions,
    ) -> Result<Message<R>, RequestError>
    where
        R: MessageType + Send + Sync + 'static,
    {
        let inner = &self.inner;
        let named = || Arc::<str>::from(address);
        let text = encode_json(&*body.into_arc()).map_err(|why| {
            RequestError::new(
                RequestErrorKind::Codec,
                format!("The request to address {address} cannot cross the bridge as JSON: {why}"),
            )
            .with_address(named())
        })?;
        let (wait, headers, _) = options.into_parts();
        let wait = wait.unwrap_or(inner.bus.state.default_timeout);
        let reply_address = inner.reply_address();
        let (tx, rx) = oneshot::channel();
        // Waiting before the frame goes: a connection that ends from here
        // on fails this request with the others.
        lock(&inner.pending).insert(reply_address.clone(), tx);
        let frame = outgoing(
            "send",
            address,
            Some(&reply_address),
            Some(&headers).filter(|h| !h.is_empty()),
            text.as_bytes(),
        );
        if let Err(why) = inner.write(frame).await {
            lock(&inner.pending).remove(&reply_address);
            return Err(RequestError::new(RequestErrorKind::Transport, why).with_address(named()));
        }
        let (body, headers, asks) = match timeout(wait, rx).await {
            Ok(Ok(answer)) => answer?,
            Ok(Err(_)) => {
                return Err(RequestError::new(
                    RequestErrorKind::Transport,
                    format!("the Vert.x bridge client of {} was closed", inner.peer),
                )
                .with_address(named()));
            }
            Err(_) => {
                lock(&inner.pending).remove(&reply_address);
                return Err(RequestError::new(
                    RequestErrorKind::Timeout,
                    format!(
                        "Timed out after waiting {}(ms) for a reply. address: {reply_address}, repliedAddress: {address}",
                        wait.as_millis()
                    ),
                )
                .with_address(named()));
            }
        };
        // A reply that asks for an answer gives this call's message the
        // turn: the answer given there goes back to the other side.
        let turn = asks.map(|at| inner.turn(at, &named()));
        let reply = match decode_as::<R>(&body) {
            Ok(reply) => reply,
            Err(why) => {
                let e = RequestError::new(
                    RequestErrorKind::Codec,
                    format!("The reply from address {address} is {why}"),
                )
                .with_address(named());
                if let Some(turn) = turn {
                    // The replier awaits an answer: the refusal is it.
                    let _ = turn.tx.complete(Outcome::Failure(Failure {
                        kind: e.kind(),
                        code: NO_FAILURE_CODE,
                        message: e.message().to_owned(),
                    }));
                }
                return Err(e);
            }
        };
        Message::from_reply(
            ReplyEnvelope {
                address: named(),
                headers,
                body: Arc::new(reply),
                type_name: type_name::<R>(),
                transformed: true,
                reply: turn,
            },
            &inner.bus.state,
        )
    }

    /// Consumes `address` on the other side with `handler`, a bus handler
    /// of `T`s: the address is registered with the bridge (now, and again
    /// after each reconnection) and its messages, read as `T`s, delivered
    /// to `handler` through this client's bus, as a local consumer there
    /// at the same address. A request from the other side is answered by
    /// the handler's `reply` (any type with a codec, as JSON) or `fail`
    /// (its code and message reach the requester).
    ///
    /// Several consumers of one address share one registration; a message
    /// whose body no consumer's type reads is refused (a request fails
    /// with the reason). As a bus consumer, dropping the handle leaves it
    /// registered; [`BridgeConsumer::unregister`] ends it.
    pub async fn consumer<T, F, Fut>(&self, address: &str, handler: F) -> BridgeConsumer
    where
        T: MessageType + Send + Sync + 'static,
        F: FnMut(Message<T>) -> Fut + Send + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: HandlerResult,
    {
        let consumer = self.inner.bus.local_consumer(address, handler);
        let carrier: Arc<dyn Carry> = Arc::new(Typed::<T, JsValue>::new());
        // The link is taken under the registrations' lock: a connection
        // made before registers the address through it, one made after
        // finds the address with the others (never both, never neither).
        let link = {
            let mut registrations = lock(&self.inner.registrations);
            let entry = registrations
                .entry(address.to_string())
                .or_insert_with(|| Registration {
                    carriers: Vec::new(),
                    count: 0,
                });
            entry.carriers.push(carrier);
            entry.count += 1;
            if entry.count == 1 {
                self.inner.link()
            } else {
                None
            }
        };
        if let Some(link) = link {
            let frame = json!({"type": "register", "address": address});
            let _ = link.send(Outgoing::of(&frame)).await;
        }
        BridgeConsumer {
            inner: Arc::clone(&self.inner),
            address: address.to_string(),
            consumer,
        }
    }

    /// Closes the connection and returns once it is closed: no
    /// reconnection, the waiting requests fail, and every call from now on
    /// fails as when the connection is down (on every clone).
    pub async fn close(self) {
        let _ = self.stop.tx.send(true);
        let task = lock(&self.stop.task).take();
        if let Some(task) = task {
            // The task ends at once: it waits on nothing but the stop.
            let _ = task.await;
        }
    }
}

fn refusal<K: Copy>(why: Refused, address: &str, down: K, codec: K) -> Error<K> {
    match why {
        Refused::Down(why) => Error::new(down, why),
        Refused::Body(why) => Error::new(
            codec,
            format!("The message to address {address} cannot cross the bridge as JSON: {why}"),
        ),
    }
    .with_address(Arc::from(address))
}

/// A consumer of an address on the other side of a [`BridgeClient`].
/// Dropping it leaves it registered, as a bus consumer; `unregister` ends
/// it.
#[derive(Debug)]
pub struct BridgeConsumer {
    inner: Arc<Inner>,
    address: String,
    consumer: MessageConsumer,
}

impl BridgeConsumer {
    /// The address consumed.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Unregisters the consumer from the bus, and the address from the
    /// bridge when it was the address's last consumer.
    pub async fn unregister(self) {
        // As in `consumer`: a connection made after this finds the
        // address gone.
        let link = {
            let mut registrations = lock(&self.inner.registrations);
            match registrations.get_mut(&self.address) {
                Some(entry) => {
                    entry.count = entry.count.saturating_sub(1);
                    if entry.count == 0 {
                        registrations.remove(&self.address);
                        self.inner.link()
                    } else {
                        None
                    }
                }
                None => None,
            }
        };
        if let Some(link) = link {
            let frame = json!({"type": "unregister", "address": self.address});
            let _ = link.send(Outgoing::of(&frame)).await;
        }
        self.consumer.unregister().await;
    }
}

impl fmt::Debug for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BridgeClient")
            .field("peer", &self.peer)
            .finish()
    }
}

/// A client frame: `send` or `publish`, its body's JSON text given (left
/// out when `null`), with `headers` when given.
fn outgoing(
    kind: &str,
    address: &str,
    reply_address: Option<&str>,
    headers: Option<&Headers>,
    body: &[u8],
) -> Outgoing {
    let mut frame = Outgoing::object(kind, address, body.len() + 64);
    if let Some(reply) = reply_address {
        frame.member("replyAddress", reply);
    }
    if let Some(headers) = headers {
        frame.headers(headers);
    }
    if body != b"null" {
        frame.member_json("body", body);
    }
    frame.end()
}

async fn open(peer: &str, wait: Duration) -> std::io::Result<TcpStream> {
    let stream = match timeout(wait, TcpStream::connect(peer)).await {
        Ok(stream) => stream?,
        Err(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no connection within {} ms", wait.as_millis()),
            ));
        }
    };
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// The connection's task: serves each connection until it ends, then
/// makes a new one, until the client is closed.
async fn run(
    inner: Arc<Inner>,
    first: TcpStream,
    mut stop: watch::Receiver<bool>,
    ready: oneshot::Sender<()>,
) {
    let mut stream = Some(first);
    let mut ready = Some(ready);
    let mut delay = inner.options.reconnect_delay;
    loop {
        if let Some(s) = stream.take() {
            let stopped = serve(&inner, s, &mut stop, &mut ready).await;
            if stopped {
                break;
            }
            delay = inner.options.reconnect_delay;
            tracing::debug!(
                peer = inner.peer,
                "Vert.x bridge connection lost: reconnecting"
            );
        }
        tokio::select! {
            _ = stop.changed() => break,
            () = sleep(delay) => {}
        }
        if *stop.borrow() {
            break;
        }
        let opened = tokio::select! {
            _ = stop.changed() => break,
            opened = open(&inner.peer, inner.options.connect_timeout) => opened,
        };
        match opened {
            Ok(s) => {
                tracing::debug!(peer = inner.peer, "Vert.x bridge connection made again");
                stream = Some(s);
            }
            Err(e) => {
                tracing::debug!(peer = inner.peer, error = %e, "Vert.x bridge not reachable");
                delay = (delay * 2).min(inner.options.max_reconnect_delay);
            }
        }
    }
    *lock(&inner.link) = None;
    fail_pending(
        &inner,
        &format!("the Vert.x bridge client of {} was closed", inner.peer),
    );
}

fn fail_pending(inner: &Inner, why: &str) {
    let pending: Vec<_> = lock(&inner.pending).drain().collect();
    for (_, tx) in pending {
        let _ = tx.send(Err(RequestError::new(
            RequestErrorKind::Transport,
            why.to_string(),
        )));
    }
}

/// Serves one connection until it ends; `true` when the client was closed.
async fn serve(
    inner: &Arc<Inner>,
    stream: TcpStream,
    stop: &mut watch::Receiver<bool>,
    ready: &mut Option<oneshot::Sender<()>>,
) -> bool {
    let (mut source, sink) = frame::tcp(stream, inner.options.max_frame);
    let (tx, rx) = mpsc::channel(OUTBOX);
    let mut writer = tokio::spawn(write_all(sink, rx));
    // The registrations go first on the new connection; a consumer made
    // from here on sends its own (under the same lock, none is missed).
    let addresses: Vec<String> = {
        let registrations = lock(&inner.registrations);
        *lock(&inner.link) = Some(tx.clone());
        registrations.keys().cloned().collect()
    };
    if let Some(ready) = ready.take() {
        let _ = ready.send(());
    }
    for address in addresses {
        let _ = tx
            .send(Outgoing::of(
                &json!({"type": "register", "address": address}),
            ))
            .await;
    }
    let mut ping = interval(inner.options.ping_interval);
    ping.set_missed_tick_behavior(MissedTickBehavior::Delay);
    ping.tick().await;
    let mut heard = Instant::now();
    let stopped = loop {
        let read = tokio::select! {
            biased;
            _ = stop.changed() => break true,
            _ = &mut writer => break false,
            _ = ping.tick() => {
                if heard.elapsed() > inner.options.ping_timeout {
                    tracing::debug!(peer = inner.peer, "the Vert.x bridge fell silent");
                    break false;
                }
                if tx.try_send(Outgoing::of(&json!({"type": "ping"}))).is_err() {
                    tracing::debug!(peer = inner.peer, "no room for a ping: the bridge does not read");
                }
                continue;
            }
            read = source.next() => read,
        };
        match read {
            Read::Frame(bytes) => {
                heard = Instant::now();
                handle(inner, &tx, &bytes).await;
            }
            Read::TooLarge(len) => {
                tracing::warn!(
                    peer = inner.peer,
                    len,
                    "a frame from the Vert.x bridge over the limit: connection closed"
                );
                break false;
            }
            Read::Closed => break false,
        }
    };
    // Down: calls fail at once from here, then the waiting requests.
    *lock(&inner.link) = None;
    drop(tx);
    writer.abort();
    fail_pending(
        inner,
        &format!(
            "the Vert.x bridge connection to {} was lost before the reply came",
            inner.peer
        ),
    );
    stopped || *stop.borrow()
}

/// Writes the connection's frames, gathering what is queued into one
/// write, until the connection fails or the client lets it go.
async fn write_all(mut sink: TcpSink, mut rx: mpsc::Receiver<Outgoing>) {
    while let Some(first) = rx.recv().await {
        let mut bytes = first.json().len();
        sink.feed(first);
        while bytes < WRITE_BATCH {
            match rx.try_recv() {
                Ok(more) => {
                    bytes += more.json().len();
                    sink.feed(more);
                }
                Err(_) => break,
            }
        }
        if sink.flush().await.is_err() {
            return;
        }
    }
    sink.close().await;
}

/// Handles one frame from the bridge.
async fn handle(inner: &Arc<Inner>, tx: &mpsc::Sender<Outgoing>, bytes: &[u8]) {
    let Ok(frame) = Incoming::parse(bytes) else {
        tracing::warn!(
            peer = inner.peer,
            "a frame from the Vert.x bridge is not a JSON object"
        );
        return;
    };
    let kind = frame.kind().text().unwrap_or_default();
    let address = Member::of(frame.address).text().unwrap_or_default();
    match &*kind {
        "pong" => {}
        "message" | "err" => {
            let waiting = lock(&inner.pending).remove(&*address);
            if let Some(waiting) = waiting {
                let answer = if kind == "message" {
                    let asks = Member::of(frame.reply_address).text().map(Cow::into_owned);
                    Ok((frame.body().to_owned(), headers_of(&frame), asks))
                } else {
                    Err(failure(&frame))
                };
                let _ = waiting.send(answer);
            } else if kind == "message" {
                deliver(inner, tx, &frame, &address).await;
            } else {
                let message = Member::of(frame.message).text().unwrap_or_default();
                tracing::warn!(
                    peer = inner.peer,
                    %address,
                    %message,
                    "the Vert.x bridge refused a frame"
                );
            }
        }
        other => {
            tracing::debug!(
                peer = inner.peer,
                kind = other,
                "a frame of an unknown type from the Vert.x bridge"
            );
        }
    }
}

/// The headers of a frame from the bridge (strings; other scalars as their
/// JSON text; headers that are not an object of those left out).
fn headers_of(frame: &Incoming<'_>) -> Headers {
    frame.headers().unwrap_or_else(|_| Headers::new())
}

/// The answer that fails a request from the bridge.
fn answer_failure(reply_address: &str, e: &RequestError) -> Outgoing {
    Outgoing::of(&json!({"type": "send", "address": reply_address,
                         "failureCode": e.wire_failure_code(), "message": e.message()}))
}

/// The error of a failed request, from its `err` frame.
fn failure(frame: &Incoming<'_>) -> RequestError {
    let message = Member::of(frame.message)
        .text()
        .map_or_else(|| "the request failed".to_string(), Cow::into_owned);
    let kind = match Member::of(frame.failure_type).text().as_deref() {
        Some("TIMEOUT") => RequestErrorKind::Timeout,
        Some("NO_HANDLERS") => RequestErrorKind::NoHandlers,
        _ => RequestErrorKind::RecipientFailure,
    };
    let code = Member::of(frame.failure_code).int();
    let mut error = RequestError::new(kind, message).with_code(code.unwrap_or(NO_FAILURE_CODE));
    if let Some(source) = Member::of(frame.source_address).text() {
        error = error.with_address(Arc::from(&*source));
    }
    error
}

/// A message at a registered address, into the bus: published, sent, or
/// requested with its answer written back to its `replyAddress`.
async fn deliver(
    inner: &Arc<Inner>,
    tx: &mpsc::Sender<Outgoing>,
    frame: &Incoming<'_>,
    address: &str,
) {
    let reply_address = Member::of(frame.reply_address).text().map(Cow::into_owned);
    let published = matches!(Member::of(frame.send), Member::Other("false"));
    let headers = headers_of(frame);
    let body = frame.body();
    let carriers = match lock(&inner.registrations).get(address) {
        Some(registration) => registration.carriers.clone(),
        None => {
            tracing::debug!(
                peer = inner.peer,
                address,
                "a message for an address no longer consumed"
            );
            return;
        }
    };
    let mut decoded = Err(String::new());
    for carrier in &carriers {
        decoded = carrier.decode(body);
        if decoded.is_ok() {
            break;
        }
    }
    let decoded: Box<dyn Decoded> = match decoded {
        Ok(decoded) => decoded,
        Err(why) => {
            tracing::warn!(peer = inner.peer, address, %why, "a message from the Vert.x bridge was refused");
            if let Some(reply) = reply_address {
                let refused = json!({"type": "send", "address": reply, "failureCode": NO_FAILURE_CODE,
                                     "message": format!("The message to address {address} is {why}")});
                let _ = tx.send(Outgoing::of(&refused)).await;
            }
            return;
        }
    };
    let options = DeliveryOptions::new().headers(headers).local_only(true);
    let bus = &inner.bus;
    let Some(reply_address) = reply_address else {
        let outcome = if published {
            decoded
                .publish(bus, address, options)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        } else {
            decoded
                .send(bus, address, options)
                .await
                .map_err(|e| e.to_string())
        };
        if let Err(why) = outcome {
            tracing::debug!(peer = inner.peer, address, %why, "a message from the Vert.x bridge was not delivered");
        }
        return;
    };
    let request = decoded.request(bus.clone(), Arc::from(address), options);
    let tx = tx.clone();
    let inner = Arc::clone(inner);
    let address = address.to_string();
    tokio::spawn(async move {
        let answer = answer_frame(&inner, &reply_address, &address, request.await);
        let _ = tx.send(answer).await;
    });
}

/// The frame that answers the other side's request (at its
/// `reply_address`, sent to `address`): the reply, with its headers (`{}`
/// when there are none) and a reply address when the replier asks for an
/// answer; or the failure.
fn answer_frame(
    inner: &Arc<Inner>,
    reply_address: &str,
    address: &str,
    outcome: Result<crate::bridge::answer::Reply, RequestError>,
) -> Outgoing {
    let mut reply = match outcome {
        Ok(reply) => reply,
        Err(e) => return answer_failure(reply_address, &e),
    };
    match reply.json() {
        Ok(body) => {
            let asks = reply
                .ask
                .take()
                .map(|replier| inner.await_answer(replier, address));
            let headers = Some(&reply.headers);
            outgoing(
                "send",
                reply_address,
                asks.as_deref(),
                headers,
                body.as_bytes(),
            )
        }
        Err(e) => answer_failure(reply_address, &e),
    }
}
