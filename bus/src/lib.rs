//! The codecbus event bus: Vert.x event-bus semantics on tokio, for
//! [`MessageCodec`](codecbus_core::MessageCodec) types.
//!
//! A Vert.x user finds the same vocabulary: an [`EventBus`] handle,
//! consumers registered at an address, [`send`](EventBus::send) to one
//! consumer (round-robin), [`publish`](EventBus::publish) to all,
//! [`request`](EventBus::request) for a typed reply with a timeout (30 s by
//! default), [`DeliveryOptions`], headers, [`MessageProducer`]s,
//! pause/resume/fetch, interceptors, and the failure types `TIMEOUT` (0),
//! `NO_HANDLERS` (1), `RECIPIENT_FAILURE` (2) and `ERROR` (3).
//!
//! ```
//! use codecbus_bus::{EventBus, Message, RequestErrorKind};
//! use codecbus_core::MessageCodec;
//!
//! #[derive(MessageCodec, Clone, Debug, PartialEq)]
//! #[codec(immutable)] // shared by every consumer, never copied
//! struct Quote {
//!     symbol: String,
//!     price: i64,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // Building the bus collects every derived codec; no registration call.
//! let bus = EventBus::new();
//!
//! let _pricing = bus.consumer("prices", |m: Message<String>| async move {
//!     if m.body().is_empty() {
//!         return m.fail(400, "empty symbol");
//!     }
//!     // A reply nobody takes (the requester timed out) is an `Err`, here
//!     // the handler's result, which the bus logs.
//!     m.reply(Quote { symbol: m.body().clone(), price: 4200 })
//! });
//!
//! let quote: Message<Quote> = bus.request("prices", "ACME".to_string()).await.unwrap();
//! assert_eq!(quote.body().price, 4200);
//!
//! let err = bus.request::<Quote>("prices", String::new()).await.unwrap_err();
//! assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
//! assert_eq!((err.failure_code(), err.to_string().as_str()), (Some(400), "empty symbol"));
//!
//! let err = bus.request::<Quote>("nowhere", "ACME".to_string()).await.unwrap_err();
//! assert_eq!(err.kind(), RequestErrorKind::NoHandlers);
//! assert_eq!(err.to_string(), "No handlers for address nowhere");
//! # }
//! ```
//!
//! # Codecs and the registry
//!
//! Every `#[derive(MessageCodec)]` type submits a registration (codec name,
//! Rust type, encode, decode, transform) through `inventory`;
//! [`EventBus::new`] and [`EventBusBuilder::build`] collect all of them,
//! together with codecs for the standard scalar types and `String` (named
//! `"string"`, `"u64"`, ...). Only crates linked into the binary contribute.
//! Two different types under one codec name stop the build with an error
//! naming both; [`EventBus::register_codec`] adds a hand-written codec on a
//! running bus and refuses a name in use ("Already a codec registered with
//! name X"). [`EventBus::codecs`] lists them.
//!
//! Local delivery does not need the registry (a type without a registration
//! travels in process all the same); a cluster transport uses it to encode
//! by type and decode by name.
//!
//! # Local delivery: transform, never encode
//!
//! A body is held behind an `Arc` and handed to each recipient through its
//! codec's `transform`, once per delivery. For an immutable type (one
//! marked `#[codec(immutable)]`) that is the same allocation for every
//! consumer of a publish and for the requester of a reply (`Arc::ptr_eq`
//! holds, nothing is copied whatever the size). Any other type is deep-copied
//! for each recipient, which owns its copy ([`Message::body_mut`],
//! [`Message::into_body`]) and whose changes nobody else sees. No
//! MessagePack is produced for an in-process message. Pass [`Shared`] to
//! send an `Arc` you keep.
//!
//! ```
//! use std::sync::Arc;
//! use codecbus_bus::{EventBus, Shared};
//! use codecbus_core::MessageCodec;
//!
//! #[derive(MessageCodec, Clone)] // not immutable: deep-copied per consumer
//! struct Cart {
//!     items: Vec<String>,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let bus = EventBus::new();
//! let mut a = bus.consumer_stream::<Cart>("carts");
//! let mut b = bus.consumer_stream::<Cart>("carts");
//! let original = Arc::new(Cart { items: vec!["tea".to_string()] });
//! bus.publish("carts", Shared(Arc::clone(&original))).await.unwrap();
//! let mut mine = a.recv().await.unwrap();
//! mine.body_mut().unwrap().items.push("cake".to_string()); // my copy alone
//! assert_eq!(b.recv().await.unwrap().body().items.len(), 1);
//! assert_eq!(original.items.len(), 1);
//! # }
//! ```
//!
//! # Delivery guarantees
//!
//! * `send` and `request` go to exactly one consumer of the body's type at
//!   the address, chosen round-robin; `publish` to every such consumer.
//!   Consumers of another type at the same address are not candidates; when
//!   there is no candidate at all the call fails with `TypeMismatch`.
//! * Messages from one sender (one task, one call after the other) to one
//!   consumer arrive in the order they were sent. A handler consumer runs
//!   one message at a time.
//! * A request made on this node to an idle handler consumer (nothing in
//!   its queue, not paused) starts the handler on the requester's task
//!   rather than waking the consumer's: the requester waits for that run
//!   anyway, and the round trip saves two task switches. That first step
//!   runs in the consumer's runtime and tracing context; if the handler
//!   waits for anything, the rest of its run goes on in the consumer's own
//!   task (never on the requester's runtime), and the consumer takes its
//!   next message only after it. So does a message from the cluster for an
//!   address with one consumer on this node: its handler starts on the
//!   task that read the message (one per address), which would otherwise
//!   queue it and wake the consumer. Local sends and publishes always go
//!   through the queue: their callers do not wait for the handler. Every
//!   send, publish and request spends a unit of tokio's cooperative
//!   budget, so a loop of them yields as a channel loop does.
//! * A call that returns `Ok` has enqueued the message (a publish: for at
//!   least one consumer, and its [`PublishReport`] says how many refused
//!   it); one that returns an error has not, and hands the body back. A
//!   request is answered exactly once: by the reply,
//!   a failure, or an error when nobody can answer any more (the message
//!   was dropped unanswered, its consumer unregistered) or the timeout
//!   passed.
//! * A handler that returns an error or panics fails the pending request
//!   with `RecipientFailure`; the panic is caught, the consumer and the bus
//!   keep running.
//! * Queued messages of a consumer that is unregistered are discarded (and
//!   counted); the requests among them fail at once.
//!
//! # Back-pressure
//!
//! Each consumer has a bounded queue (1000 messages unless set per consumer
//! with [`ConsumerOptions::queue_capacity`] or per bus with
//! [`EventBusBuilder::default_queue_capacity`]). The bus never waits for
//! queue space and never drops silently:
//!
//! * `send` / `request` skip a full consumer for the next one (round-robin);
//!   when every candidate is full they fail at once with
//!   [`SendErrorKind::QueueFull`] / [`RequestErrorKind::QueueFull`] and hand
//!   the body back ([`Error::into_body`]), so the caller can retry, slow
//!   down or shed load.
//! * `publish` delivers to every consumer that has room. Some consumers
//!   refusing it does not fail the publish (as in Vert.x): its
//!   [`PublishReport`] counts the deliveries and the refusals. Only when
//!   every consumer refused does it fail with
//!   [`PublishErrorKind::QueueFull`]. One slow consumer never blocks a
//!   publisher.
//! * Every refusal is counted in [`Metrics::refused`]: with sends only,
//!   `sent == delivered + refused + no_handlers + type_mismatches + dropped`.
//!
//! A paused consumer ([`MessageConsumer::pause`]) keeps queueing until its
//! queue is full; a stream consumer's queue fills while it is not polled.
//!
//! # Interceptors and logs
//!
//! Outbound and inbound interceptors ([`EventBusBuilder::outbound_interceptor`],
//! [`EventBusBuilder::inbound_interceptor`]) see the address, headers, codec
//! name and delivery kind of every message and may change headers or drop
//! it. The bus emits `tracing` events at debug level (registration, delivery,
//! refusals, timeouts) and at warn level for a panicking handler.
//!
//! # Traces
//!
//! A bus built with [`EventBusBuilder::traces`]`(true)` makes `tracing`
//! spans (target `codecbus_bus`, level INFO) for each message:
//!
//! | span | where | parent | fields |
//! |---|---|---|---|
//! | `send`, `publish`, `request` | the sender, for the whole call (a request: until its reply) | the caller's current span | `address`, `codec`, `body_size` (encoded, cluster only), `outcome` (`ok` or the error kind, e.g. `NO_HANDLERS`) |
//! | `receive` | a node, for a message from the cluster | the sender's span, from the headers (feature `opentelemetry`) | `address`, `codec`, `body_size`, `delivery` (durable addresses) |
//! | `deliver` | from enqueueing to the consumer until it is done with the message; also a reply that expects an answer (a turn of [`Message::reply_and_request`]), while its receiver holds it | the operation's span, or `receive`; for a turn, the `reply` span that made it | `address`, `kind`, `body` (the consumer's Rust type) |
//! | `handle` | a handler's run; what the handler logs is attributed to it | `deliver` | `address`, `outcome` (`ok`, `error`, `panic`) |
//! | `reply` | [`Message::reply`] and [`Message::fail`] | `deliver` | `address`, `outcome` |
//!
//! An error kind is spelled one way everywhere: its `as_str` (and
//! `Display`), e.g. [`RequestErrorKind::NoHandlers`] is `NO_HANDLERS` in a
//! span's `outcome`, in the metric label `failure` or `reason`, and in the
//! failure header on the wire (Vert.x's `ReplyFailure` names where it has
//! one), so a search by a metric's label finds the traces.
//!
//! The spans carry `otel.kind` and, on failure, `otel.status_code`, which
//! `tracing-opentelemetry` maps to OpenTelemetry's span kind and status.
//! With the feature `opentelemetry`, the bus writes the context of each
//! `send`, `publish`, `request` and `reply` span into the message headers,
//! in process and over NATS, and a node takes it from there as the parent
//! of its `receive` span: one trace follows a message from node to node,
//! through its reply, and through every redelivery of a durable message
//! (the stored headers carry it). It writes and reads the context with the
//! program's global OpenTelemetry propagator
//! (`opentelemetry::global::set_text_map_propagator`), so the program picks
//! the format: `opentelemetry_sdk`'s `TraceContextPropagator` for W3C
//! Trace Context (`traceparent`, `tracestate`). That needs the
//! `tracing-opentelemetry` layer in the program's subscriber and a
//! propagator (the global default writes and reads nothing); without them
//! no context is written. A conversation
//! stays in the trace turn after turn: the answer to a turn is a `reply`
//! span under that turn's `deliver` span.
//!
//! In production, sample: [`EventBusBuilder::trace_sampling`]`(0.01)`
//! starts a trace for one operation in a hundred made outside any span;
//! an operation inside a span follows that span's trace (untraced inside
//! an unsampled OpenTelemetry span, whose context it still carries on),
//! and a message from the cluster follows the context it carries: traced
//! when it is sampled, and with unsampled spans when it is not (W3C flag
//! `00`), so that the context goes on with the reply and with every message
//! the handler sends (a parent-based SDK sampler records none of them). A
//! message outside every trace makes no span and costs about what it costs
//! with traces off.
//!
//! With traces off (the default) no span is made and nothing is written
//! into headers. What traces cost per round trip is measured in the
//! guide (`book/src/performance.md`, "What observability costs").
//!
//! ```
//! use codecbus_bus::{EventBus, Message};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let bus = EventBus::builder().traces(true).build().unwrap();
//! let _c = bus.consumer("audit", |m: Message<String>| async move {
//!     tracing::info!(entry = %m.body(), "stored"); // inside the `handle` span
//! });
//! bus.send("audit", "login".to_string()).await.unwrap();
//! # }
//! ```
//!
//! # Metrics
//!
//! With the feature `metrics`, `EventBusBuilder::metrics` reports each
//! address's traffic through the `metrics` crate facade: counters of sent,
//! published, received, delivered, refused, discarded, dropped and
//! undecodable messages, of reply failures and of durable messages'
//! settlements, gauges of consumers and pending messages, histograms of
//! handler time, request round trip and encoded size, named after Vert.x's
//! event-bus metrics; and, per node, what the cluster client reports
//! (dropped messages, lost connections, refusals). `MetricsOptions`
//! sets the prefix and keeps the address labels bounded. The guide
//! (`book/src/observability.md`, "Metrics and a live view") lists the series.
//!
//! # Shutdown
//!
//! A consumer stays registered as long as something can take its
//! messages:
//!
//! * A handler consumer is a tokio task that lives until it is
//!   [unregistered](MessageConsumer::unregister) or its runtime shuts
//!   down; dropping its handle or every [`EventBus`] clone does not stop
//!   it (as in Vert.x). Keep the handle only to pause or unregister it.
//! * A stream consumer lives until it is
//!   [unregistered](MessageStream::unregister) or its [`MessageStream`] is
//!   dropped: nothing can read a dropped stream, and a consumer left
//!   registered behind it would take its share of sends and requests and
//!   never answer them. So keep the stream in a named variable;
//!   `let _ = bus.consumer_stream(..)` unregisters it at once. The type is
//!   `#[must_use]`.
//!
//! With the `json` feature a consumer of JSON values can be guarded by a
//! spec (`ConsumerOptions::spec`): a body that does not conform is
//! refused before it is queued, with every violation in the caller's error,
//! and counted in [`Metrics::invalid`].
//!
//! When the runtime
//! shuts down, consumer tasks are dropped with their queues: a request still
//! waiting in one fails with `RecipientFailure` (no reply) if its requester
//! runs elsewhere. Unregistering every consumer before stopping a runtime
//! drains nothing: queued messages are discarded, so stop senders first
//! when nothing may be lost.
//!
//! # Cluster (NATS)
//!
//! Without a cluster transport (the default) the bus is purely in-process.
//! With the `nats` feature, `EventBusBuilder::nats` and `connect` join a
//! cluster through a NATS server: every node with a consumer of an address
//! subscribes to it, and the same API reaches consumers in other processes
//! and machines. What leaves a process is the derived MessagePack of the
//! body; the receiving node decodes it by codec name with its own registry
//! and hands it to its consumers with the same transform rules as a local
//! message.
//!
// Compiled only where it can be: with the `nats` feature.
#![cfg_attr(feature = "nats", doc = "```no_run")]
#![cfg_attr(not(feature = "nats"), doc = "```ignore")]
//! use codecbus_bus::{EventBus, Message, NatsOptions};
//! use codecbus_core::MessageCodec;
//!
//! #[derive(MessageCodec, Clone, Debug)]
//! #[codec(name = "shop.quote", immutable)] // an explicit name: stable across binaries
//! struct Quote {
//!     symbol: String,
//!     price: i64,
//! }
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let bus = EventBus::builder()
//!     .nats(NatsOptions::new("nats://127.0.0.1:4222").connection_name("pricing"))
//!     .connect()
//!     .await?; // fails at once, naming the URL, when no server answers
//! let _pricing = bus.consumer("prices", |m: Message<String>| async move {
//!     m.reply(Quote { symbol: m.body().clone(), price: 4200 })
//! });
//! bus.flush().await?; // reachable from other nodes from here on
//! let quote: Message<Quote> = bus.request("prices", "ACME".to_string()).await?;
//! assert_eq!(quote.body().price, 4200);
//! bus.close().await; // drain: answer what is in flight, then disconnect
//! # Ok(())
//! # }
//! ```
//!
//! * `send` and `request` reach exactly one exported consumer in the
//!   cluster: NATS picks one node of the address's queue group (at random),
//!   that node picks one of its consumers round-robin. A request gets its
//!   reply, encoded with the reply type's codec, through NATS
//!   request/reply; no responders is [`RequestErrorKind::NoHandlers`], at
//!   once.
//! * `publish` is encoded once and sent once; every node with a consumer
//!   of the address receives it once and fans it out to its consumers.
//! * [`local_consumer`](EventBus::local_consumer)s are never exported: only
//!   their own node reaches them (`publish` serves them directly; `send` and
//!   `request` stay local when every consumer of the address on this node
//!   is local-only). [`DeliveryOptions::local_only`] keeps a message in
//!   process.
//! * Across NATS, `send` and `publish` have NATS's at-most-once delivery:
//!   `Ok` means the server took the message; with no consumer anywhere it
//!   is dropped without an error (use `request` for an answer). With the
//!   `jetstream` feature, an address declared with `NatsOptions::durable`
//!   is at-least-once instead: stored by the server before `Ok`,
//!   acknowledged once handled, redelivered (with
//!   [`Message::delivery_count`]) until then, and dead-lettered after its
//!   maximum number of deliveries. A handler that answers with
//!   `m.reply(x)` handled the message: a reply to a message that expects
//!   none does nothing (as in Vert.x), so its
//!   [`NoReplyExpected`](ReplyErrorKind::NoReplyExpected) error is no
//!   failure and the message is acknowledged (see [`HandlerResult`]).
//! * A message the receiving node cannot decode (unknown codec name,
//!   unsupported wire version, bad bytes) is never dropped silently: a
//!   request is answered with a [`RequestErrorKind::Codec`] error naming
//!   the codec; a send or publish is logged at warn level and counted in
//!   [`Metrics::undecodable`].
//! * A message under an alias of a codec (`#[codec(aliases(...))]`, a name
//!   the type had before a rename: an older node's) decodes as the type;
//!   the first under each alias is logged at warn level and counted in
//!   [`Metrics::old_codec_names`]. A node sends under current names only,
//!   so give every type that crosses processes an explicit
//!   `#[codec(name = "...")]` (the default, the module path, changes when
//!   the type moves) and rename in two deploys, aliases first.
//! * Nodes tell each other their codecs' shapes when they meet (feature
//!   `shapes`, on with `nats`): a peer whose shape of a codec this node
//!   cannot read is logged at error level at once, naming the field and
//!   the rule, counted in [`Metrics::shape_mismatches`] and listed by
//!   [`EventBus::shape_report`]; its messages of that codec fail with
//!   [`RequestErrorKind::ShapeMismatch`] rather than being misread.
//! * Failures cross the wire with their kind, code and text:
//!   [`Message::fail`]'s code and message, a handler's error or panic, a
//!   type mismatch, full queue or spec refusal on the receiving node,
//!   timeouts.
//! * A body larger than the server's `max_payload` fails before it is sent
//!   with `PayloadTooLarge`, naming both sizes.
//! * The connection reconnects on its own and resubscribes every consumer;
//!   a call made while it is down fails at once with a `Transport` error,
//!   a request in flight when it drops fails within its timeout.
//! * A node subscribes when its first exported consumer of an address
//!   registers and unsubscribes when the last one goes;
//!   [`EventBus::flush`] waits until those changes reached the server.
//!   [`EventBus::close`] drains.
//!
//! The subjects, queue groups and headers (the wire contract) are listed
//! in the guide (`book/src/wire.md`).
//!
//! # The in-memory cluster
//!
//! An [`InMemoryCluster`] joins several buses of one process as NATS joins
//! them, with no server and no feature: for tests of multi-node code in
//! plain `cargo test`. Sends go to one node with a consumer, publishes to
//! each, bodies are really encoded and decoded by codec name, headers
//! travel, the limits hold (`max_payload`, the address length, headers
//! NATS cannot carry), each node reads what arrives on a task of its own,
//! and failures come back as they do over NATS (the same conformance suite
//! runs against both).
//!
//! ```
//! use codecbus_bus::{EventBus, InMemoryCluster, Message};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let cluster = InMemoryCluster::new();
//! let a = EventBus::builder().in_memory_cluster(&cluster).build().unwrap();
//! let b = EventBus::builder().in_memory_cluster(&cluster).build().unwrap();
//! let (heard, mut news) = tokio::sync::mpsc::unbounded_channel();
//! let _c = b.consumer("news", move |m: Message<String>| {
//!     heard.send(m.body().clone()).unwrap();
//!     async {}
//! });
//! a.publish("news", "hello".to_string()).await.unwrap();
//! // `b` reads it on its own task, as a NATS node does.
//! assert_eq!(news.recv().await.as_deref(), Some("hello"));
//! assert_eq!(b.metrics().remote_received, 1);
//! # }
//! ```
//!
//! # The code
//!
//! Three rooms over a common vocabulary, each importing only from below:
//! `api/` (the handle, its builder, messages, consumers, producers) hands
//! its work to `engine/` (state, routing, reply waiting, the codec
//! registry), which delivers through `transport/` (local queues; the
//! cluster's shared inbound and outbound paths; the in-memory cluster;
//! NATS). `telemetry/` records every event once, for the counters and the
//! metric series, and makes the spans; `base/` holds the vocabulary all of
//! them speak (errors, headers, options, how a message completes).
//!
//! # Features
//!
//! None is on by default: the in-process bus needs nothing. On docs.rs
//! every feature is on, and each item behind one names it.
//!
//! | feature | what it adds |
//! |---|---|
//! | `nats` | the NATS cluster transport: `NatsOptions`, `EventBusBuilder::nats` |
//! | `jetstream` | durable addresses on NATS JetStream: `NatsOptions::durable`, `DurableOptions` |
//! | `unstable-async-nats` | `NatsOptions::configure_async_nats`, outside this crate's semver |
//! | `json` | consumers guarded by a JSON spec: `ConsumerOptions::spec` |
//! | `metrics` | per-address series through the `metrics` facade: `EventBusBuilder::metrics` |
//! | `opentelemetry` | trace context in message headers, through the program's global OpenTelemetry propagator (W3C Trace Context with `TraceContextPropagator`), so the spans of [`EventBusBuilder::traces`] join one trace across nodes |
//! | `bridge` | the Vert.x TCP event bus bridge: `bridge::Bridge` serves the bus to Vert.x bridge clients (browsers' and other languages'), bodies as JSON at the edge |
//!
//! The crate asks `codecbus-core` for its derive alone; the codec crate's
//! other features (serde bodies, the extension types of `uuid`,
//! `rust_decimal`, `time` and `chrono`) are enabled on a `codecbus-core`
//! dependency of the program's own, or through the `codecbus` facade, whose
//! default features turn them on.
//!
//! # Where next
//!
//! * [`codecbus`](https://docs.rs/codecbus), the facade: this crate, the
//!   codecs and the JSON value behind one dependency;
//!   [`codecbus-core`](https://docs.rs/codecbus-core) for the codecs.
//! * The guide, in the repository's `book/` folder: its chapters "The event
//!   bus" (`book/src/bus.md`), "Cluster (NATS) and durable addresses",
//!   "The wire contract for other languages", "Traces and metrics", and
//!   "Reliability" (what is guaranteed, and the fault runs that check it).
// On docs.rs (`--cfg docsrs`), items behind a feature say which.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unreachable_pub)]
#![deny(missing_docs)]

mod api;
mod base;
#[cfg(feature = "bridge")]
pub mod bridge;
mod engine;
mod telemetry;
mod transport;

pub use crate::api::builder::EventBusBuilder;
pub use crate::api::builder::states as builder;
pub use crate::api::bus::EventBus;
pub use crate::api::consumer::{HandlerResult, MessageConsumer, MessageStream};
pub use crate::api::message::Message;
pub use crate::api::producer::MessageProducer;
pub use crate::base::body::{IntoBody, Shared};
pub use crate::base::error::{
    BuildError, BuildErrorKind, Error, FlushError, PublishError, PublishErrorKind, RegistryError,
    RegistryErrorKind, ReplyError, ReplyErrorKind, RequestError, RequestErrorKind, SendError,
    SendErrorKind, ShutdownError,
};
pub use crate::base::headers::Headers;
pub use crate::base::interceptor::{DeliveryContext, DeliveryKind, Verdict};
pub use crate::base::metrics::Metrics;
pub use crate::base::options::{
    ConsumerOptions, DEFAULT_QUEUE_CAPACITY, DEFAULT_TIMEOUT, DeliveryOptions, ReplyOptions,
};
pub use crate::base::report::PublishReport;
pub use crate::base::shapes::{CodecVerdict, PeerReport, ShapeReport, ShapeVerdict};
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use crate::telemetry::options::{DEFAULT_METRICS_PREFIX, MetricsOptions};
pub use crate::transport::memory::{DEFAULT_MAX_PAYLOAD, InMemoryCluster};
/// The codec crate, `codecbus-core`, for users who depend on this crate
/// alone (derived code reaches it as `codecbus_bus::codec`).
pub use codecbus_core as codec;
pub use codecbus_core::{CodecRegistration, MessageCodec, MessageType};

/// The cluster's payload code, for the fuzz targets in `fuzz/`
/// (`decode_lz4_frame`): compiled only under `--cfg fuzzing` (which
/// `cargo fuzz` sets, as does `fuzz/.cargo/config.toml`), never part of
/// the API.
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod __fuzz {
    pub use crate::transport::cluster::{PayloadRead, read_payload, write_payload};

    /// A client's frame read by the bridge, its body transcoded both ways.
    #[cfg(feature = "bridge")]
    pub fn bridge_frame(bytes: &[u8]) {
        crate::bridge::fuzz_frame(bytes);
    }
}

// Lets derived code in this crate's own tests and doctests find
// `::codecbus_bus::codec`.
#[allow(unused_extern_crates)]
extern crate self as codecbus_bus;

#[cfg(feature = "nats")]
#[cfg_attr(docsrs, doc(cfg(feature = "nats")))]
pub use crate::transport::cluster::WireVersion;
#[cfg(feature = "jetstream")]
#[cfg_attr(docsrs, doc(cfg(feature = "jetstream")))]
pub use crate::transport::nats::{
    DEAD_LETTER_ADDRESS_HEADER, DEAD_LETTER_DELIVERIES_HEADER, DEAD_LETTER_REASON_HEADER,
    DEFAULT_MAX_AGE, DEFAULT_STORE_TIMEOUT, DurableOptions, MESSAGE_ID_HEADER, Retention,
};
#[cfg(feature = "nats")]
#[cfg_attr(docsrs, doc(cfg(feature = "nats")))]
pub use crate::transport::nats::{
    DEFAULT_SUBJECT_PREFIX, NatsEvent, NatsOptions, Tap, TapKind, Tapped,
};
