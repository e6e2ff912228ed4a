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

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use codecbus_core::MessageType;
use codecbus_json::JsValue;
use tokio::net::TcpStream;
use tokio::sync::{oneshot, watch};
use tokio::time::{Instant, MissedTickBehavior, interval, sleep, timeout};
use tokio_rustls::client::TlsStream;

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
use crate::base::reply::{Failure, Outcome, Turn};
use crate::bridge::answer::{Answer, Answered, Reply};
use crate::bridge::budget::{Budget, Charge, Pool};
use crate::bridge::carry::{Carry, Decoded, Typed};
use crate::bridge::json::{decode_as, encode_json};
use crate::bridge::options::{
    DEFAULT_CONNECTION_BUDGET, DEFAULT_MAX_FRAME, DEFAULT_MAX_PENDING_REPLIES,
};
use crate::bridge::peer::{Out, Peer, PeerLimits};
use crate::bridge::tls::BridgeClientTls;
use crate::bridge::transport::{Read, Sink, Source, tcp};
use crate::bridge::vocab::{self, Dialect, Incoming, Member};

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
    max_pending: usize,
    budget: usize,
    tls: Option<BridgeClientTls>,
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
            max_pending: DEFAULT_MAX_PENDING_REPLIES,
            budget: DEFAULT_CONNECTION_BUDGET,
            tls: None,
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

    /// The largest frame read from the bridge; a larger one is skipped as
    /// it arrives (never held), with a warning.
    #[must_use]
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes;
        self
    }

    /// How many of this client's requests may wait for their reply at
    /// once, and how many answers it may await from the other side: one
    /// more request fails at once (`Transport`), one more request from the
    /// other side fails there. Default
    /// [`DEFAULT_MAX_PENDING_REPLIES`](crate::bridge::DEFAULT_MAX_PENDING_REPLIES).
    #[must_use]
    pub fn max_pending_replies(mut self, n: usize) -> Self {
        self.max_pending = n;
        self
    }
    /// How many bytes the connection may hold: frames waiting to be
    /// written to the bridge, and the bridge's requests on their way
    /// through this client's bus until answered. Over it, the client reads
    /// nothing more from the bridge until what it holds drains. Default
    /// [`DEFAULT_CONNECTION_BUDGET`](crate::bridge::DEFAULT_CONNECTION_BUDGET).
    #[must_use]
    pub fn budget(mut self, bytes: usize) -> Self {
        self.budget = bytes;
        self
    }
    /// Connects over TLS (a Vert.x bridge with `setSsl(true)`, or
    /// [`Bridge::listen_tls`](crate::bridge::Bridge::listen_tls)); the
    /// handshake is part of each attempt to connect, within its timeout.
    #[must_use]
    pub fn tls(mut self, tls: BridgeClientTls) -> Self {
        self.tls = Some(tls);
        self
    }
}

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
    /// The current connection; `None` while down.
    link: Mutex<Option<Arc<Peer>>>,
    registrations: Mutex<HashMap<String, Registration>>,
    /// Set once the client is closed.
    closed: AtomicBool,
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

    /// Why a request's answer will not come: the connection went, or the
    /// client was closed.
    fn gone(&self) -> String {
        if self.closed.load(Ordering::Relaxed) {
            format!("the Vert.x bridge client of {} was closed", self.peer)
        } else {
            format!(
                "the Vert.x bridge connection to {} was lost before the reply came",
                self.peer
            )
        }
    }

    /// The current connection.
    fn link(&self) -> Result<Arc<Peer>, String> {
        lock(&self.link).clone().ok_or_else(|| self.down())
    }

    /// Queues a frame on the current connection.
    async fn write(&self, frame: vocab::Outgoing) -> Result<(), String> {
        if self.link()?.write(frame).await {
            Ok(())
        } else {
            Err(self.down())
        }
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
    ///
    /// # Cancel safety
    ///
    /// Cancelling before it returns closes the connection it may have made:
    /// no task is left behind.
    pub async fn connect(
        bus: &EventBus,
        address: impl fmt::Display,
        options: BridgeClientOptions,
    ) -> Result<Self, BridgeClientError> {
        let peer = address.to_string();
        let stream = open(&peer, options.connect_timeout, options.tls.as_ref())
            .await
            .map_err(|source| BridgeClientError::Connect {
                address: peer.clone(),
                source,
            })?;
        let inner = Arc::new(Inner {
            bus: bus.clone(),
            peer,
            options,
            link: Mutex::new(None),
            registrations: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
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
    ///
    /// # Cancel safety
    ///
    /// The frame is queued in one step: cancelling before it is queued sends
    /// nothing, after it changes nothing.
    pub async fn send<B: IntoBody>(&self, address: &str, body: B) -> Result<(), SendError> {
        self.send_with(address, body, DeliveryOptions::new()).await
    }

    /// [`send`](BridgeClient::send) with options (the headers; the
    /// timeout and local-only do not apply).
    ///
    /// # Errors
    ///
    /// As [`send`](BridgeClient::send).
    ///
    /// # Cancel safety
    ///
    /// As [`send`](BridgeClient::send).
    pub async fn send_with<B: IntoBody>(
        &self,
        address: &str,
        body: B,
        options: DeliveryOptions,
    ) -> Result<(), SendError> {
        self.post(true, address, body, options)
            .await
            .map_err(|why| refusal(why, address, SendErrorKind::Transport, SendErrorKind::Codec))
    }

    /// Publishes `body` to every consumer of `address` on the other side.
    ///
    /// # Errors
    ///
    /// As [`send`](BridgeClient::send).
    ///
    /// # Cancel safety
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
    ///
    /// # Cancel safety
    ///
    /// As [`send`](BridgeClient::send).
    pub async fn publish_with<B: IntoBody>(
        &self,
        address: &str,
        body: B,
        options: DeliveryOptions,
    ) -> Result<(), PublishError> {
        self.post(false, address, body, options)
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
        send: bool,
        address: &str,
        body: B,
        options: DeliveryOptions,
    ) -> Result<(), Refused> {
        let text = encode_json(&*body.into_arc()).map_err(Refused::Body)?;
        let (_, headers, _) = options.into_parts();
        let frame = Dialect::Client.message(address, None, &headers, text.as_bytes(), send);
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
    ///
    /// # Cancel safety
    ///
    /// Cancelling stops the wait and forgets the reply address: a reply that
    /// comes later is dropped. The request itself may have gone.
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
    ///
    /// # Cancel safety
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
        let wait = wait.unwrap_or(inner.bus.default_timeout());
        let transport =
            |why| RequestError::new(RequestErrorKind::Transport, why).with_address(named());
        let link = inner.link().map_err(transport)?;
        // Waiting before the frame goes: a connection that ends from here
        // on fails this request with the others.
        let Some((reply_address, rx)) = link.expect() else {
            return Err(RequestError::new(
                RequestErrorKind::Transport,
                format!(
                    "{} requests to the Vert.x bridge at {} wait for their reply already",
                    inner.options.max_pending, inner.peer
                ),
            )
            .with_address(named()));
        };
        // However the call ends (cancelled too), the address is forgotten.
        let _forget = Forget(&link, &reply_address);
        let frame = Dialect::Client.message(
            address,
            Some(&reply_address),
            &headers,
            text.as_bytes(),
            true,
        );
        if !link.write(frame).await {
            return Err(transport(inner.down()));
        }
        let (body, headers, asks) = match timeout(wait, rx).await {
            Ok(Ok(Answer::Body {
                body,
                headers,
                reply_address,
            })) => (body, headers, reply_address),
            Ok(Ok(Answer::Failed(e))) => return Err(e),
            Ok(Ok(Answer::Gone | Answer::TimedOut(_)) | Err(_)) => {
                return Err(transport(inner.gone()));
            }
            Err(_) => {
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
        // turn: the answer given there goes back to the other side, on
        // the connection the reply came by.
        let turn = asks.map(|at| turn(&inner.bus, &link, at, named()));
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
        inner.bus.reply_message(named(), headers, reply, turn)
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
    ///
    /// # Cancel safety
    ///
    /// The consumer is made in the first poll: cancelling after it leaves it
    /// registered, as dropping a [`BridgeConsumer`] does (its address is
    /// registered with the bridge when the connection is next made).
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
                self.inner.link().ok()
            } else {
                None
            }
        };
        if let Some(link) = link {
            link.write(Dialect::registration(address, true)).await;
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
    ///
    /// # Cancel safety
    ///
    /// The connection is told to close in the first poll; cancelling only
    /// stops the wait.
    pub async fn close(self) {
        let _ = self.stop.tx.send(true);
        let task = lock(&self.stop.task).take();
        if let Some(task) = task {
            // The task ends at once: it waits on nothing but the stop.
            let _ = task.await;
        }
    }
}

/// Forgets a reply address when dropped.
struct Forget<'a>(&'a Peer, &'a str);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.forget(self.1);
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
    ///
    /// # Cancel safety
    ///
    /// The address is forgotten in the first poll (a connection made again
    /// does not register it); cancelling may leave the bridge sending to it
    /// until then, and the bus consumer registered.
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
                        self.inner.link().ok()
                    } else {
                        None
                    }
                }
                None => None,
            }
        };
        if let Some(link) = link {
            link.write(Dialect::registration(&self.address, false))
                .await;
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

/// A connection to the bridge, plain or over TLS.
enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// Connects to `peer` (over TLS with `tls`) within `wait`.
async fn open(
    peer: &str,
    wait: Duration,
    tls: Option<&BridgeClientTls>,
) -> std::io::Result<Stream> {
    let connected = async {
        let stream = TcpStream::connect(peer).await?;
        let _ = stream.set_nodelay(true);
        match tls {
            None => Ok(Stream::Plain(stream)),
            Some(tls) => Ok(Stream::Tls(Box::new(tls.connect(peer, stream).await?))),
        }
    };
    match timeout(wait, connected).await {
        Ok(stream) => stream,
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no connection within {} ms", wait.as_millis()),
        )),
    }
}

/// The turn of a reply from the other side that asks for an answer at
/// `at` (a reply to a request to `address`): the reply's message carries
/// it, and the answer given there goes to `at` on `link` as the next turn
/// of any conversation does, by a task of its own.
fn turn(bus: &EventBus, link: &Arc<Peer>, at: String, address: Arc<str>) -> Box<Turn> {
    let (turn, answer) = bus.await_turn(Arc::clone(&address));
    let link = Arc::clone(link);
    tokio::spawn(async move {
        let next = Box::pin(async move { answer.await.map(Reply::of::<JsValue>) });
        link.answered(Answered::Next { at, next }, &address).await;
    });
    turn
}

/// The connection's task: serves each connection until it ends, then
/// makes a new one, until the client is closed.
async fn run(
    inner: Arc<Inner>,
    first: Stream,
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
            opened = open(&inner.peer, inner.options.connect_timeout, inner.options.tls.as_ref()) => opened,
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
    inner.closed.store(true, Ordering::Relaxed);
    *lock(&inner.link) = None;
}

/// Serves one connection until it ends; `true` when the client was closed.
async fn serve(
    inner: &Arc<Inner>,
    stream: Stream,
    stop: &mut watch::Receiver<bool>,
    ready: &mut Option<oneshot::Sender<()>>,
) -> bool {
    let max_frame = inner.options.max_frame;
    match stream {
        Stream::Plain(stream) => {
            let (source, sink) = tcp::tcp(stream, max_frame);
            serve_on(inner, source, sink, stop, ready).await
        }
        Stream::Tls(stream) => {
            let (source, sink) = tcp::framed(*stream, max_frame);
            serve_on(inner, source, sink, stop, ready).await
        }
    }
}

/// [`serve`] on a transport's source and sink.
async fn serve_on<S: Source, W: Sink>(
    inner: &Arc<Inner>,
    mut source: S,
    sink: W,
    stop: &mut watch::Receiver<bool>,
    ready: &mut Option<oneshot::Sender<()>>,
) -> bool {
    let (link, mut writer) = Peer::start(
        Dialect::Client,
        sink,
        PeerLimits {
            max_pending: inner.options.max_pending,
            answer_wait: inner.bus.default_timeout(),
            write_timeout: inner.options.ping_timeout,
        },
        Budget::new(inner.options.budget, &Pool::new(usize::MAX)),
        None,
    );
    // The registrations go first on the new connection; a consumer made
    // from here on sends its own (under the same lock, none is missed).
    let addresses: Vec<String> = {
        let registrations = lock(&inner.registrations);
        *lock(&inner.link) = Some(Arc::clone(&link));
        registrations.keys().cloned().collect()
    };
    if let Some(ready) = ready.take() {
        let _ = ready.send(());
    }
    // The writer runs beside the reading, in this task: the reading ends
    // when the writer does (the bridge went, or stalled past the ping
    // timeout).
    let stopped = writer
        .beside(read_all(inner, &link, &mut source, stop, addresses))
        .await
        .unwrap_or(false);
    // Down: calls fail at once from here, then the waiting requests.
    {
        let mut current = lock(&inner.link);
        if current.as_ref().is_some_and(|c| Arc::ptr_eq(c, &link)) {
            *current = None;
        }
    }
    let stopped = stopped || *stop.borrow();
    if stopped {
        inner.closed.store(true, Ordering::Relaxed);
    }
    link.close(writer).await;
    stopped
}

/// Registers `addresses` on the new connection, then reads and handles the
/// bridge's frames, pinging it, until it goes or falls silent (`false`) or
/// the client stops (`true`).
async fn read_all<S: Source>(
    inner: &Arc<Inner>,
    link: &Arc<Peer>,
    source: &mut S,
    stop: &mut watch::Receiver<bool>,
    addresses: Vec<String>,
) -> bool {
    let budget = Arc::clone(&link.budget);
    for address in addresses {
        link.write(Dialect::registration(&address, true)).await;
    }
    let mut ping = interval(inner.options.ping_interval);
    ping.set_missed_tick_behavior(MissedTickBehavior::Delay);
    ping.tick().await;
    let mut heard = Instant::now();
    // Registered once, not per frame, as a bridge's connection does.
    let stopped = stop.changed();
    tokio::pin!(stopped);
    // The bytes of the next frame, when they did not fit in the budget.
    let mut waiting: Option<usize> = None;
    loop {
        // Over its budget, the connection reads nothing more until what it
        // holds drains.
        let full = waiting.is_some() || budget.over();
        let read = tokio::select! {
            biased;
            _ = &mut stopped => break true,
            () = budget.room_for(waiting.unwrap_or(0)), if full => {
                waiting = None;
                heard = Instant::now();
                continue;
            }
            _ = ping.tick() => {
                if heard.elapsed() > inner.options.ping_timeout {
                    tracing::debug!(peer = inner.peer, "the Vert.x bridge fell silent");
                    break false;
                }
                // A ping is queued whether the bridge reads or not: its
                // bytes count against the budget, and a bridge that stays
                // silent is given up above.
                link.send(Out::Frame(Dialect::ping()), link.budget.charge(0));
                continue;
            }
            read = source.next(&budget), if !full => read,
        };
        match read {
            Read::Frame(bytes, charge) => {
                heard = Instant::now();
                handle(inner, link, &bytes, charge).await;
            }
            Read::Wait(len) => waiting = Some(len),
            Read::Skipped(len) => {
                heard = Instant::now();
                tracing::warn!(
                    peer = inner.peer,
                    len,
                    "a frame from the Vert.x bridge over the limit: skipped"
                );
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
    }
}

/// Handles one frame from the bridge, whose bytes `charge` holds (kept by
/// a request until it is answered).
async fn handle(inner: &Arc<Inner>, link: &Arc<Peer>, bytes: &[u8], charge: Charge) {
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
        "message" | "err" if link.awaits(&address) => {
            if let Ok(answer) = vocab::answer_of(&frame, &kind) {
                link.answer(&address, answer);
            }
        }
        "message" => deliver(inner, link, &frame, &address, charge).await,
        "err" => {
            let message = Member::of(frame.message).text().unwrap_or_default();
            tracing::warn!(
                peer = inner.peer,
                %address,
                %message,
                "the Vert.x bridge refused a frame"
            );
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

/// A message at a registered address, into the bus: published, sent, or
/// requested with its answer written back to its `replyAddress`.
async fn deliver(
    inner: &Arc<Inner>,
    link: &Arc<Peer>,
    frame: &Incoming<'_>,
    address: &str,
    charge: Charge,
) {
    let reply_address = Member::of(frame.reply_address).text();
    let published = matches!(Member::of(frame.send), Member::Other("false"));
    let headers = frame.headers().unwrap_or_else(|_| Headers::new());
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
        decoded = carrier.decode(&body);
        if decoded.is_ok() {
            break;
        }
    }
    let decoded: Box<dyn Decoded> = match decoded {
        Ok(decoded) => decoded,
        Err(why) => {
            tracing::warn!(peer = inner.peer, address, %why, "a message from the Vert.x bridge was refused");
            if let Some(reply) = reply_address {
                let e = RequestError::new(
                    RequestErrorKind::RecipientFailure,
                    format!("The message to address {address} is {why}"),
                );
                link.write(link.dialect.answer_failure(&reply, address, &e))
                    .await;
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
    let address: Arc<str> = Arc::from(address);
    let request = decoded.request(bus.clone(), Arc::clone(&address), options);
    tokio::spawn(link.answer_request(request, reply_address.into_owned(), address, charge));
}
