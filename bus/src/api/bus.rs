//! The `EventBus` handle: the top layer. A handle is one `Arc` of the
//! shared state (`engine/state.rs`); its operations are the engine's
//! `routing.rs` and `waiting.rs`, consumers `consumer.rs`, producers
//! `producer.rs`; `builder.rs` makes it.

use std::any::TypeId;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use codecbus_core::{CodecRegistration, MessageType};

use crate::api::consumer::{HandlerResult, MessageConsumer, MessageStream, Typed};
use crate::api::message::Message;
use crate::base::body::IntoBody;
use crate::base::error::{
    FlushError, PublishError, RegistryError, RequestError, SendError, ShutdownError,
};
use crate::base::metrics::Metrics;
use crate::base::options::{ConsumerOptions, DeliveryOptions};
use crate::base::report::PublishReport;
use crate::base::shapes::ShapeReport;
use crate::engine::routing::{self, Quiet};
use crate::engine::state::State;
use crate::engine::{Inline, Runner};

/// A handle to an event bus: cheap to clone (one `Arc`), `Send + Sync`,
/// every clone the same bus.
///
/// See the [crate docs](crate) for the delivery rules.
///
/// # Examples
///
/// ```
/// use codecbus_bus::{EventBus, Message};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let bus = EventBus::new();
/// let _c = bus.consumer("double", |m: Message<u64>| async move {
///     m.reply(*m.body() * 2)
/// });
/// let reply: Message<u64> = bus.request("double", 21u64).await.unwrap();
/// assert_eq!(*reply.body(), 42);
/// # }
/// ```
#[derive(Clone)]
pub struct EventBus {
    pub(crate) state: Arc<State>,
}

impl fmt::Debug for EventBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventBus")
            .field("default_timeout", &self.state.default_timeout)
            .field("metrics", &self.metrics())
            .finish_non_exhaustive()
    }
}

impl EventBus {
    /// The timeout requests use unless their options set one.
    pub fn default_timeout(&self) -> Duration {
        self.state.default_timeout
    }

    /// Whether the bus has a cluster transport (it was built with
    /// `connect` and a NATS configuration, or joined an in-memory cluster).
    pub fn is_clustered(&self) -> bool {
        self.state.remote.is_some()
    }

    /// Waits until every consumer registration and unregistration made so
    /// far, and every message sent so far, has reached the cluster's
    /// server (a NATS flush after the pending subscription changes). A
    /// consumer registered on one node is reachable from other nodes once
    /// this returns; before, their sends may find nobody (Vert.x:
    /// `completionHandler`). In-process it returns at once.
    ///
    /// # Errors
    ///
    /// [`FlushError`] when the bus is closed or the server does not answer
    /// (the connection is down).
    ///
    /// # Cancel safety
    ///
    /// Cancelling stops the wait; the subscription changes still happen.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = codecbus_bus::EventBus::new();
    /// let _c = bus.consumer("a", |_m: codecbus_bus::Message<u8>| async {});
    /// bus.flush().await.unwrap(); // nothing to wait for in process
    /// # }
    /// ```
    pub async fn flush(&self) -> Result<(), FlushError> {
        match &self.state.remote {
            Some(remote) => remote.flush().await.map_err(FlushError::new),
            None => Ok(()),
        }
    }

    /// Shuts the cluster transport down gracefully and returns when it is
    /// done: the node stops taking messages from the cluster (every NATS
    /// subscription is drained, so messages already on their way are still
    /// delivered to this node's consumers), requests from other nodes that
    /// its consumers are handling are answered (waiting at most the bus
    /// default timeout), pending outbound messages are flushed, and the
    /// NATS connection is drained and closed. Afterwards cluster
    /// operations fail with a `Transport` error; local-only delivery keeps
    /// working. In-process (or called again) it returns at once.
    ///
    /// Consumers stay registered: messages already in their queues are
    /// still handled while the runtime runs. To stop them too and wait for
    /// them, see [`shutdown`](EventBus::shutdown), which closes the
    /// cluster transport the same way first.
    ///
    /// # Cancel safety
    ///
    /// Once polled, the shutdown runs to its end in the background even if
    /// the future is dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = codecbus_bus::EventBus::new();
    /// bus.close().await; // in process: nothing to drain
    /// # }
    /// ```
    pub async fn close(&self) {
        if let Some(remote) = &self.state.remote {
            remote.close().await;
        }
    }

    /// Shuts the bus down gracefully within `deadline`: stops taking
    /// messages, lets every handler consumer handle what it holds, and
    /// joins the consumers' tasks.
    ///
    /// In order: the cluster transport stops as [`close`](EventBus::close)
    /// stops it (no more messages from the cluster, requests from other
    /// nodes in flight answered, the connection drained); every consumer is
    /// unregistered, so nothing new reaches it; each handler consumer
    /// handles the messages still in its queue, one at a time as always,
    /// and its task ends. Returns `Ok` once every task ended.
    ///
    /// The deadline is the whole of it: `shutdown` returns within
    /// `deadline` (as tokio's timers keep time), whatever the handlers do.
    /// Its last quarter, at most 100 ms, is the grace: when it begins, the
    /// consumers still at work are stopped (what is left in their queues is
    /// discarded, and a request among them fails at once), and halfway
    /// through it a handler still running is dropped where it waits (its
    /// request fails too). A handler that blocks its thread instead of
    /// awaiting cannot be dropped: it is left to its runtime, and reported
    /// as stopped. A stream consumer's queue is
    /// the stream's own: it ends once the messages in it are read.
    /// Afterwards the bus refuses sends to its old consumers as to any
    /// address without one; a consumer registered later is not shut down.
    ///
    /// # Errors
    ///
    /// [`ShutdownError`] when the deadline passed first: how many messages
    /// were discarded, and which consumers were stopped.
    ///
    /// # Cancel safety
    ///
    /// The consumers are unregistered in the first poll after the cluster
    /// is closed; cancelling only stops the waiting (the consumers go on
    /// with their queues).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use codecbus_bus::{EventBus, Message};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    /// let _c = bus.consumer("jobs", move |m: Message<u32>| {
    ///     tx.send(*m.body()).unwrap();
    ///     async {}
    /// });
    /// for n in 0..3u32 {
    ///     bus.send("jobs", n).await.unwrap(); // queued, not handled yet
    /// }
    /// bus.shutdown(Duration::from_secs(5)).await.unwrap();
    /// // Every queued job was handled before the shutdown returned.
    /// assert_eq!([rx.try_recv(), rx.try_recv(), rx.try_recv()], [Ok(0), Ok(1), Ok(2)]);
    /// assert!(bus.send("jobs", 3u32).await.is_err());
    /// # }
    /// ```
    pub async fn shutdown(&self, deadline: Duration) -> Result<(), ShutdownError> {
        let started = tokio::time::Instant::now();
        let until = started + deadline;
        // The grace: the last part of the deadline, in which consumers still
        // at work are stopped (their first half) and then aborted.
        let grace = shutdown_grace(deadline);
        let stop_at = until - grace;
        let abort_at = until - grace / 2;
        let discarded_before = self.state.counters.snapshot().discarded;
        if let Some(remote) = &self.state.remote {
            // Closing goes on in the background past its share.
            let _ = tokio::time::timeout_at(stop_at, remote.close()).await;
        }
        self.state.mark_shut_down();
        self.state.unregister_all();
        let tasks = &self.state.tasks;
        let mut stopped = Vec::new();
        if tokio::time::timeout_at(stop_at, tasks.joined())
            .await
            .is_err()
        {
            stopped = tasks.stop_all(false);
            if tokio::time::timeout_at(abort_at, tasks.joined())
                .await
                .is_err()
            {
                tasks.stop_all(true);
                // An aborted task ends at its next await; one that blocks
                // its thread is left to its runtime.
                let _ = tokio::time::timeout_at(until, tasks.joined()).await;
            }
        }
        let discarded = self
            .state
            .counters
            .snapshot()
            .discarded
            .saturating_sub(discarded_before);
        if stopped.is_empty() && discarded == 0 {
            tracing::debug!(elapsed = ?started.elapsed(), "bus shut down");
            return Ok(());
        }
        let stopped = stopped.iter().map(|a| a.to_string()).collect();
        Err(ShutdownError::new(deadline, discarded, stopped))
    }

    /// A snapshot of the bus counters.
    ///
    /// # Examples
    ///
    /// See [`Metrics`].
    pub fn metrics(&self) -> Metrics {
        let mut metrics = self.state.counters.snapshot();
        if let Some(remote) = &self.state.remote {
            let counts = remote.counts();
            metrics.remote_dropped = counts.dropped;
            metrics.remote_disconnects = counts.disconnects;
            metrics.remote_denied = counts.denied;
        }
        metrics
    }

    // ----- codecs -----

    /// Registers a codec on the running bus (Vert.x `registerCodec`).
    ///
    /// # Errors
    ///
    /// [`RegistryErrorKind::NameTaken`](crate::RegistryErrorKind::NameTaken)
    /// ("Already a codec registered with name X") when the name is in use,
    /// [`TypeTaken`](crate::RegistryErrorKind::TypeTaken) when the type
    /// already has a codec under another name.
    ///
    /// # Examples
    ///
    /// See [`RegistryError`].
    pub fn register_codec(&self, registration: CodecRegistration) -> Result<(), RegistryError> {
        self.state.registry_mut().register(registration)?;
        tracing::debug!(
            name = registration.name(),
            type_name = registration.type_name(),
            "codec registered"
        );
        Ok(())
    }

    /// Removes the codec `name`; returns its registration if there was one.
    /// Local delivery of the type keeps working (it needs no codec).
    ///
    /// # Examples
    ///
    /// ```
    /// let bus = codecbus_bus::EventBus::new();
    /// assert!(bus.unregister_codec("string").is_some());
    /// assert!(bus.codec_by_name("string").is_none());
    /// ```
    pub fn unregister_codec(&self, name: &str) -> Option<CodecRegistration> {
        self.state.registry_mut().unregister(name)
    }

    /// Every registered codec, sorted by name: its name, Rust type name and
    /// whether it is immutable ([`CodecRegistration`] accessors).
    ///
    /// # Examples
    ///
    /// ```
    /// let bus = codecbus_bus::EventBus::new();
    /// let string = bus.codecs().into_iter().find(|c| c.name() == "string").unwrap();
    /// assert_eq!(string.type_name(), "alloc::string::String");
    /// assert!(string.is_immutable());
    /// ```
    pub fn codecs(&self) -> Vec<CodecRegistration> {
        self.state.registry().list()
    }

    /// The shapes of every codec this bus knows ([`codecs`](Self::codecs)),
    /// by codec name: what each writes, for the checks of their evolution
    /// ([`codecbus_core::shape`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::MessageCodec;
    ///
    /// #[derive(MessageCodec, Clone)]
    /// #[codec(name = "shop.price")]
    /// struct Price { cents: u64 }
    ///
    /// let bus = codecbus_bus::EventBus::new();
    /// let shapes = bus.shapes();
    /// let price = shapes.get("shop.price").unwrap();
    /// assert!(price.canonical_json().contains(r#""name":"cents""#));
    /// ```
    pub fn shapes(&self) -> codecbus_core::shape::ShapeSet {
        crate::transport::Node::shapes(&*self.state)
    }

    /// What this node learned of its peers' codecs when they met: for
    /// each peer still in the cluster, each codec both have, whether this
    /// node reads what the peer writes ([`ShapeReport`]). Empty for a bus
    /// alone, and without the feature `shapes` (on with `nats`).
    ///
    /// Nodes tell each other their codecs' shapes as they join (the
    /// in-memory cluster and NATS alike); a peer's codec this node cannot
    /// read is logged at error level when it is learned, naming the
    /// codec, the field and the rule, and counted in
    /// [`Metrics::shape_mismatches`](crate::Metrics::shape_mismatches).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use codecbus_bus::{EventBus, InMemoryCluster};
    ///
    /// let cluster = InMemoryCluster::new();
    /// let a = EventBus::builder().in_memory_cluster(&cluster).build()?;
    /// let b = EventBus::builder().in_memory_cluster(&cluster).build()?;
    /// // Same build, same codecs: every verdict is `Same`.
    /// assert!(a.shape_report().is_compatible());
    /// # #[cfg(feature = "shapes")]
    /// assert_eq!(b.shape_report().peers.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn shape_report(&self) -> ShapeReport {
        self.state.peers.report()
    }

    /// The codec registered as `name`, or the one that had that name
    /// before a rename (`name` is among its aliases, and the codec found
    /// says its current [`name`](CodecRegistration::name)): the codec that
    /// reads a message sent under `name`. A lookup: the builder's
    /// [`codec`](crate::EventBusBuilder::codec) adds one.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::MessageCodec;
    ///
    /// #[derive(MessageCodec, Clone)]
    /// #[codec(name = "shop.order.v2", aliases("shop.order"))]
    /// struct Order { id: u64 }
    ///
    /// let bus = codecbus_bus::EventBus::new();
    /// assert_eq!(bus.codec_by_name("u64").map(|c| c.type_name()), Some("u64"));
    /// let renamed = bus.codec_by_name("shop.order").unwrap();
    /// assert_eq!(renamed.name(), "shop.order.v2");
    /// assert!(bus.codec_by_name("shop.order.v1").is_none());
    /// ```
    pub fn codec_by_name(&self, name: &str) -> Option<CodecRegistration> {
        self.state.registry().by_name_or_alias(name)
    }

    /// The codec registered for the type `T`.
    ///
    /// # Examples
    ///
    /// ```
    /// let bus = codecbus_bus::EventBus::new();
    /// assert_eq!(bus.codec_for::<u64>().map(|c| c.name()), Some("u64"));
    /// ```
    pub fn codec_for<T: 'static>(&self) -> Option<CodecRegistration> {
        self.state.registry().by_type(TypeId::of::<T>())
    }

    // ----- consumers -----

    /// Registers `handler` for messages of type `T` at `address` and returns
    /// the consumer's handle (Vert.x `consumer`).
    ///
    /// The handler runs on a tokio task of its own, one message at a time,
    /// in arrival order. It may return `()` or `Result<(), E: Display>`; an
    /// `Err`, like a panic (which is caught: the consumer and the bus keep
    /// running), fails a pending request with
    /// [`RecipientFailure`](crate::RequestErrorKind::RecipientFailure).
    ///
    /// The handler is an `FnMut`: runs are one at a time, so it may own
    /// mutable state and change it on each call, without a lock or a clone
    /// per message (the future it returns is `'static`: take from the state
    /// what the future needs before it starts).
    ///
    /// The consumer stays registered until
    /// [`unregister`](MessageConsumer::unregister)ed (dropping the handle
    /// does not unregister it) or the runtime shuts down. Its queue holds
    /// the bus default capacity; see [`consumer_with`](EventBus::consumer_with).
    ///
    /// # Panics
    ///
    /// When called outside a tokio runtime.
    ///
    /// # Examples
    ///
    /// A handler that owns its state, a running total:
    ///
    /// ```
    /// use codecbus_bus::{EventBus, Message};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let mut total = 0u64;
    /// let _c = bus.consumer("add", move |m: Message<u64>| {
    ///     total += *m.body();
    ///     let now = total;
    ///     async move { m.reply(now) }
    /// });
    /// let _: Message<u64> = bus.request("add", 2u64).await.unwrap();
    /// let sum: Message<u64> = bus.request("add", 40u64).await.unwrap();
    /// assert_eq!(*sum.body(), 42);
    /// # }
    /// ```
    ///
    /// Failing a request:
    ///
    /// ```
    /// use codecbus_bus::{EventBus, Message};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let consumer = bus.consumer("orders", |m: Message<String>| async move {
    ///     if m.body().is_empty() {
    ///         return Err("empty order".to_string());
    ///     }
    ///     m.reply(format!("accepted {}", m.body())).map_err(|e| e.to_string())
    /// });
    /// assert_eq!(consumer.address(), "orders");
    /// let ok: Message<String> = bus.request("orders", "tea".to_string()).await.unwrap();
    /// assert_eq!(ok.body(), "accepted tea");
    /// let err = bus.request::<String>("orders", String::new()).await.unwrap_err();
    /// assert_eq!(err.to_string(), "empty order");
    /// consumer.unregister().await;
    /// # }
    /// ```
    pub fn consumer<T, F, Fut>(&self, address: &str, handler: F) -> MessageConsumer
    where
        T: MessageType + Send + Sync + 'static,
        F: FnMut(Message<T>) -> Fut + Send + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: HandlerResult,
    {
        self.consumer_with(address, ConsumerOptions::new(), handler)
    }

    /// A consumer that a cluster transport never exports: it only receives
    /// messages sent in this process (Vert.x `localConsumer`). Without a
    /// cluster transport it behaves as [`consumer`](EventBus::consumer).
    ///
    /// # Panics
    ///
    /// When called outside a tokio runtime.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = codecbus_bus::EventBus::new();
    /// let _c = bus.local_consumer("cache.invalidate", |_m: codecbus_bus::Message<String>| async {});
    /// bus.publish("cache.invalidate", "user:7".to_string()).await.unwrap();
    /// # }
    /// ```
    pub fn local_consumer<T, F, Fut>(&self, address: &str, handler: F) -> MessageConsumer
    where
        T: MessageType + Send + Sync + 'static,
        F: FnMut(Message<T>) -> Fut + Send + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: HandlerResult,
    {
        self.consumer_with(address, ConsumerOptions::new().local_only(true), handler)
    }

    /// [`consumer`](EventBus::consumer) with options: queue capacity and
    /// local-only.
    ///
    /// # Panics
    ///
    /// When called outside a tokio runtime, or with a queue capacity of 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{ConsumerOptions, EventBus, Message};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let _c = bus.consumer_with("slow", ConsumerOptions::new().queue_capacity(8), |_m: Message<u32>| async {});
    /// bus.send("slow", 1u32).await.unwrap();
    /// # }
    /// ```
    pub fn consumer_with<T, F, Fut>(
        &self,
        address: &str,
        options: ConsumerOptions,
        handler: F,
    ) -> MessageConsumer
    where
        T: MessageType + Send + Sync + 'static,
        F: FnMut(Message<T>) -> Fut + Send + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: HandlerResult,
    {
        let address: Arc<str> = Arc::from(address);
        let handler = Typed::new(handler, &self.state, Arc::clone(&address));
        let runner = Runner::new(handler, Arc::clone(&address));
        let inline = Arc::clone(&runner) as Arc<dyn Inline>;
        let (address, id, rx) = self.state.register::<T>(&address, &options, Some(inline));
        MessageConsumer::spawn(Arc::clone(&self.state), address, id, rx, runner)
    }

    /// Registers a consumer of `T` at `address` whose messages are pulled
    /// as a [`Stream`](futures_core::Stream) (or with
    /// [`MessageStream::recv`]).
    ///
    /// The consumer stays registered until
    /// [`MessageStream::unregister`] or until the stream is dropped:
    /// keep it in a named variable (`let _ = bus.consumer_stream(..)`
    /// unregisters it at once). A handler consumer
    /// ([`consumer`](EventBus::consumer)) is the one that outlives its
    /// handle; see [`MessageStream`] for why the two differ.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = codecbus_bus::EventBus::new();
    /// let mut stream = bus.consumer_stream::<u32>("ticks");
    /// bus.send("ticks", 1u32).await.unwrap();
    /// bus.send("ticks", 2u32).await.unwrap();
    /// assert_eq!(*stream.recv().await.unwrap().body(), 1);
    /// assert_eq!(*stream.recv().await.unwrap().body(), 2);
    /// # }
    /// ```
    pub fn consumer_stream<T>(&self, address: &str) -> MessageStream<T>
    where
        T: MessageType + Send + Sync + 'static,
    {
        self.consumer_stream_with(address, ConsumerOptions::new())
    }

    /// [`consumer_stream`](EventBus::consumer_stream) with options.
    ///
    /// # Panics
    ///
    /// With a queue capacity of 0.
    pub fn consumer_stream_with<T>(
        &self,
        address: &str,
        options: ConsumerOptions,
    ) -> MessageStream<T>
    where
        T: MessageType + Send + Sync + 'static,
    {
        let (address, id, rx) = self.state.register::<T>(address, &options, None);
        MessageStream::new(Arc::clone(&self.state), address, id, rx)
    }

    // ----- send -----

    /// Sends `body` to one consumer of `address`, chosen round-robin among
    /// the consumers of this body type (Vert.x `send`). The consumer gets
    /// the body through the type's transform. Messages from one sender to
    /// one consumer arrive in the order sent.
    ///
    /// A full queue is skipped for the next consumer; when every queue is
    /// full the send fails at once (it never waits for capacity).
    ///
    /// # Errors
    ///
    /// [`SendErrorKind`](crate::SendErrorKind): `NoHandlers` (no consumer at the address),
    /// `TypeMismatch` (the consumers there take another type), `QueueFull`,
    /// `Dropped` (by an outbound interceptor). The error hands the body back
    /// ([`Error::into_body`](crate::base::error::Error::into_body)).
    ///
    /// # Cancel safety
    ///
    /// Locally the message is delivered or refused in the first poll, so
    /// cancelling the future before its first poll sends nothing and after
    /// it changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{EventBus, SendErrorKind};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let mut stream = bus.consumer_stream::<String>("log");
    /// bus.send("log", "started".to_string()).await.unwrap();
    /// assert_eq!(stream.recv().await.unwrap().body(), "started");
    ///
    /// let err = bus.send("nowhere", 1u8).await.unwrap_err();
    /// assert_eq!(err.kind(), SendErrorKind::NoHandlers);
    /// # }
    /// ```
    pub async fn send<B: IntoBody>(&self, address: &str, body: B) -> Result<(), SendError> {
        self.send_with(address, body, DeliveryOptions::new()).await
    }

    /// [`send`](EventBus::send) with options (headers, local-only).
    ///
    /// # Errors
    ///
    /// As [`send`](EventBus::send).
    ///
    /// # Cancel safety
    ///
    /// As [`send`](EventBus::send).
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{DeliveryOptions, EventBus};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let mut stream = bus.consumer_stream::<u8>("a");
    /// bus.send_with("a", 1u8, DeliveryOptions::new().header("k", "v")).await.unwrap();
    /// assert_eq!(stream.recv().await.unwrap().headers().get("k"), Some("v"));
    /// # }
    /// ```
    pub async fn send_with<B: IntoBody>(
        &self,
        address: &str,
        body: B,
        options: DeliveryOptions,
    ) -> Result<(), SendError> {
        let body = body.into_arc();
        match routing::observation(&self.state, address) {
            None => routing::send(&self.state, Quiet, address, body, options).await,
            Some(o) => {
                Box::pin(routing::observed_send(
                    &self.state,
                    o,
                    address,
                    body,
                    options,
                ))
                .await
            }
        }
    }

    // ----- publish -----

    /// Publishes `body` to every consumer of `address` that takes this body
    /// type (Vert.x `publish`); each gets it through the type's transform:
    /// one shared allocation for an immutable type, a deep copy each
    /// otherwise. Consumers of another type at the address are skipped
    /// (counted in [`Metrics::type_mismatches`]).
    ///
    /// A consumer whose queue is full does not get the message; the others
    /// do. It never waits for a slow consumer. A publish fails only when it
    /// reached nobody: one that some consumers refused succeeds (as in
    /// Vert.x, a full consumer never fails a publish), and the returned
    /// [`PublishReport`] says how many consumers got it and how many
    /// refused it; refusals are also counted in [`Metrics::refused`] and
    /// logged (`tracing`, debug level). So `publish(..).await?` treats a
    /// partial delivery as a success; check
    /// [`all_delivered`](PublishReport::all_delivered) where it matters.
    ///
    /// # Errors
    ///
    /// [`PublishErrorKind`](crate::PublishErrorKind), when no consumer got the message: `NoHandlers`,
    /// `TypeMismatch` (no consumer takes the type), `QueueFull` (every
    /// consumer of the type had a full queue), `Dropped` (by an outbound
    /// interceptor); across NATS also `Codec`, `PayloadTooLarge`,
    /// `Transport`. The error hands the body back
    /// ([`Error::into_body`](crate::base::error::Error::into_body)).
    ///
    /// # Cancel safety
    ///
    /// As [`send`](EventBus::send).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = codecbus_bus::EventBus::new();
    /// let mut a = bus.consumer_stream::<String>("news");
    /// let mut b = bus.consumer_stream::<String>("news");
    /// let report = bus.publish("news", "hello".to_string()).await.unwrap();
    /// assert_eq!((report.delivered(), report.refused()), (2, 0));
    /// assert_eq!(a.recv().await.unwrap().body(), "hello");
    /// assert_eq!(b.recv().await.unwrap().body(), "hello");
    /// # }
    /// ```
    pub async fn publish<B: IntoBody>(
        &self,
        address: &str,
        body: B,
    ) -> Result<PublishReport, PublishError> {
        self.publish_with(address, body, DeliveryOptions::new())
            .await
    }

    /// [`publish`](EventBus::publish) with options (headers, local-only).
    ///
    /// # Errors
    ///
    /// As [`publish`](EventBus::publish).
    ///
    /// # Cancel safety
    ///
    /// As [`send`](EventBus::send).
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::DeliveryOptions;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = codecbus_bus::EventBus::new();
    /// let mut a = bus.consumer_stream::<u8>("t");
    /// bus.publish_with("t", 5u8, DeliveryOptions::new().local_only(true)).await.unwrap();
    /// assert_eq!(*a.recv().await.unwrap().body(), 5);
    /// # }
    /// ```
    pub async fn publish_with<B: IntoBody>(
        &self,
        address: &str,
        body: B,
        options: DeliveryOptions,
    ) -> Result<PublishReport, PublishError> {
        let body = body.into_arc();
        match routing::observation(&self.state, address) {
            None => routing::publish(&self.state, Quiet, address, body, options).await,
            Some(o) => {
                Box::pin(routing::observed_publish(
                    &self.state,
                    o,
                    address,
                    body,
                    options,
                ))
                .await
            }
        }
    }

    // ----- request -----

    /// Sends `body` to one consumer of `address` (round-robin, as
    /// [`send`](EventBus::send)) and awaits its reply of type `R`, for at
    /// most the bus default timeout (30 s unless changed). The reply body
    /// comes through `R`'s transform.
    ///
    /// The timer is only armed when the reply is not there after one
    /// scheduling round, so the timeout counts from then (microseconds
    /// after the send); most local replies never need a timer.
    ///
    /// A local consumer that is idle (nothing queued, not paused) and the
    /// request untraced: the handler starts right here, in the request's
    /// first poll, and a handler that answers without waiting has answered
    /// before the request first waits. A handler that waits for something
    /// goes on in a task of its own. Either way the consumer runs one
    /// message at a time, in order.
    ///
    /// # Errors
    ///
    /// [`RequestErrorKind`](crate::RequestErrorKind): `NoHandlers` at once when no consumer is
    /// registered (not after the timeout), `Timeout`, `RecipientFailure`
    /// (the consumer called `fail`, its handler returned `Err` or panicked,
    /// or it dropped the message unanswered), `TypeMismatch` (the consumer
    /// takes another type, or the reply is not an `R`), `QueueFull`,
    /// `Dropped`. [`failure_code`](crate::base::error::Error::failure_code)
    /// is the code passed to `fail`.
    ///
    /// # Cancel safety
    ///
    /// The request is delivered in the first poll. Cancelling afterwards
    /// abandons the reply: the consumer still handles the message and its
    /// reply is dropped (its [`reply`](Message::reply) returns
    /// [`RequesterGone`](crate::ReplyErrorKind::RequesterGone)).
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{EventBus, Message, RequestErrorKind};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let _c = bus.consumer("len", |m: Message<String>| async move {
    ///     m.reply(m.body().len() as u64)
    /// });
    /// let n: Message<u64> = bus.request("len", "four".to_string()).await.unwrap();
    /// assert_eq!(*n.body(), 4);
    ///
    /// let err = bus.request::<u64>("missing", "x".to_string()).await.unwrap_err();
    /// assert_eq!(err.kind(), RequestErrorKind::NoHandlers);
    /// # }
    /// ```
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

    /// [`request`](EventBus::request) with options (timeout, headers,
    /// local-only).
    ///
    /// # Errors
    ///
    /// As [`request`](EventBus::request).
    ///
    /// # Cancel safety
    ///
    /// As [`request`](EventBus::request).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use codecbus_bus::{DeliveryOptions, EventBus, Message, RequestErrorKind};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let _c = bus.consumer("mute", |m: Message<u8>| async move {
    ///     tokio::time::sleep(Duration::from_secs(60)).await;
    ///     drop(m);
    /// });
    /// let options = DeliveryOptions::new().timeout(Duration::from_millis(100));
    /// let err = bus.request_with::<u8>("mute", 1u8, options).await.unwrap_err();
    /// assert_eq!(err.kind(), RequestErrorKind::Timeout);
    /// assert_eq!(err.to_string(), "Timed out after waiting 100(ms) for a reply. address: mute");
    /// # }
    /// ```
    pub async fn request_with<R>(
        &self,
        address: &str,
        body: impl IntoBody,
        options: DeliveryOptions,
    ) -> Result<Message<R>, RequestError>
    where
        R: MessageType + Send + Sync + 'static,
    {
        self.request_typed(address, body, options).await
    }

    /// The body of [`request_with`](EventBus::request_with), with the body
    /// type named (`impl Trait` arguments cannot be named inside).
    async fn request_typed<B, R>(
        &self,
        address: &str,
        body: B,
        options: DeliveryOptions,
    ) -> Result<Message<R>, RequestError>
    where
        B: IntoBody,
        R: MessageType + Send + Sync + 'static,
    {
        let body = body.into_arc();
        let env = match routing::observation(&self.state, address) {
            None => routing::request(&self.state, Quiet, address, body, options).await?,
            Some(o) => {
                Box::pin(routing::observed_request(
                    &self.state,
                    o,
                    address,
                    body,
                    options,
                ))
                .await?
            }
        };
        Message::from_reply(env, &self.state)
    }
}

/// The last part of a shutdown's `deadline` in which the consumers still at
/// work are stopped, then aborted: a quarter of it, at most 100 ms.
fn shutdown_grace(deadline: Duration) -> Duration {
    (deadline / 4).min(Duration::from_millis(100))
}
