//! codecbus: typed messages on an event bus.
//!
//! `#[derive(MessageCodec)]` on a type generates its MessagePack encoder and
//! decoder and how the bus hands it to a local consumer: the same allocation
//! for types marked `#[codec(immutable)]` (checked at compile time), a deep
//! copy otherwise. The [`bus`] does send, publish and request-reply with
//! Vert.x semantics on tokio, in one process or across processes through
//! NATS.
//!
//! One dependency for the whole project: the codecs of
//! [`codecbus-core`](codec) (re-exported at the root: `MessageCodec`,
//! `to_vec`, `from_slice`, limits, extension types), the derive, the
//! immutable JSON value of `codecbus-json` ([`json`], with the macros
//! [`jsobj!`] and [`jsarr!`] at the root) and the event bus ([`bus`]).
//!
//! # Example
//!
//! A message type, a consumer, and a request across the bus to it:
//!
//! ```
//! use codecbus::MessageCodec;
//! use codecbus::bus::{EventBus, Message};
//!
//! #[derive(MessageCodec, Clone, Debug)]
//! struct Order { id: u64, quantity: u32 }
//!
//! #[derive(MessageCodec, Debug)]
//! #[codec(immutable)] // shared with the requester, never copied
//! struct Receipt { order: u64, total_cents: i64 }
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let bus = EventBus::new(); // every derived codec is registered already
//!     let _shop = bus.consumer("shop.orders", |m: Message<Order>| async move {
//!         let total_cents = 475 * i64::from(m.body().quantity);
//!         m.reply(Receipt { order: m.body().id, total_cents })
//!     });
//!     let receipt: Message<Receipt> =
//!         bus.request("shop.orders", Order { id: 7, quantity: 2 }).await?;
//!     assert_eq!(receipt.body().total_cents, 950);
//!     Ok(())
//! }
//! ```
//!
//! # Features
//!
//! Without the default features (`default-features = false`) the facade
//! builds the codecs, the derive and the in-process bus, and no other
//! crate of the table: each feature below brings its own.
//!
//! | feature | on by default | what it adds |
//! |---|---|---|
//! | `nats` | yes | the NATS cluster transport (`bus::NatsOptions`) |
//! | `json` | yes | the immutable JSON value ([`json`], `jsobj!`, `jsarr!`) and consumers guarded by a JSON spec (`ConsumerOptions::spec`) |
//! | `serde` | yes | serde types on the bus: `#[codec(serde)]` fields and the `Serde<T>` body (rmp-serde) |
//! | `serde-json` | yes | `serde_json::Value` as a message |
//! | `uuid`, `decimal`, `time`, `chrono` | yes | the extension types of `uuid::Uuid`, `rust_decimal::Decimal`, and `time`'s and `chrono`'s dates and times |
//! | `schema` | yes | shape snapshots as JSON files (`shape::snapshot`) and the `codecbus` command line: `codecbus schema diff OLD NEW` checks two builds' codecs for compatibility |
//! | `jetstream` | no | durable addresses (at least once) on NATS JetStream |
//! | `unstable-async-nats` | no | async-nats's own connection options, outside this crate's semver |
//! | `metrics` | no | per-address series through the `metrics` facade |
//! | `opentelemetry` | no | W3C Trace Context in message headers: one trace across nodes |
//! | `json-proptest` | no | proptest generators of JSON values from specs (`json::spec::generators`; turns on `json`) |
//! | `json-schema` | no | specs exported as JSON Schema (`json::spec::schema`; turns on `json`) |
//!
//! # Where next
//!
//! * The crates behind the modules, each with its own front page:
//!   [`codec`] (`codecbus-core`: the trait, reader, writer, limits,
//!   extension types), [`codecbus-derive`](https://docs.rs/codecbus-derive)
//!   (every attribute of the derive), [`json`] (`codecbus-json`) and [`bus`]
//!   (`codecbus-bus`: delivery guarantees, back-pressure, the cluster).
//! * The guide, in the repository's `book/` folder (`mdbook build book`),
//!   a chapter per part: codecs and attributes, the bus, the JSON value and
//!   specs, the cluster and durable addresses, the wire contract for other
//!   languages, traces and metrics, performance and reliability.

// On docs.rs (`--cfg docsrs`), items behind a feature say which.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use codecbus_bus as bus;
/// The codec crate, `codecbus-core`, as a whole: the path derived code
/// reaches it by. Its items are at this crate's root (`codecbus::MessageCodec`,
/// `codecbus::to_vec`, ...), the one path to name them by.
#[doc(hidden)]
pub use codecbus_core as codec;
pub use codecbus_core::*;
/// The immutable JSON value, the crate `codecbus-json`.
#[cfg(feature = "json")]
pub use codecbus_json as json;
#[cfg(feature = "json")]
pub use codecbus_json::{jsarr, jsobj};

// Lets derived code in this package's own examples and doctests find
// `::codecbus::codec`.
#[allow(unused_extern_crates)]
extern crate self as codecbus;

// Every code block of the README is a program that compiles and runs.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
