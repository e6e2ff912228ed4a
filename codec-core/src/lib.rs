//! MessagePack codecs for codecbus message types.
//!
//! `#[derive(MessageCodec)]` generates, for a struct or enum, how it is
//! written as MessagePack, how it is read back, and how it is handed to a
//! local consumer (shared when `#[codec(immutable)]`, deep-copied
//! otherwise). This crate holds the trait, the reader and writer, the decode
//! limits and errors, the `Immutable` marker, the extension types and the
//! registration record the bus collects at start.
//!
//! ```
//! use codecbus_core::{from_slice, to_vec, MessageCodec};
//!
//! #[derive(MessageCodec, Clone, Debug, PartialEq)]
//! struct SqlRequest {
//!     query: String,
//!     args: Vec<i64>,
//! }
//!
//! let req = SqlRequest { query: "select 1".into(), args: vec![2005, 2] };
//! let bytes = to_vec(&req).unwrap();
//! assert_eq!(from_slice::<SqlRequest>(&bytes).unwrap(), req);
//! ```
//!
//! Writing is [`Encode`], reading [`Decode`]; a type with lifetimes
//! (`&str`, `&[u8]`, `Cow<str>` fields) decodes borrowing from its input
//! without copying, and [`ext::SharedStr`] and [`bytes::Bytes`] share a
//! received buffer ([`from_bytes`]) while staying owned messages.
//!
//! Types that only implement serde's traits travel too (feature `serde`, on
//! by default): as a field with `#[codec(serde)]`, or as a whole message in
//! [`Serde<T>`](Serde), named with [`serde_codec!`]. Both write what
//! `rmp_serde::to_vec_named` writes.
//!
//! The immutable JSON value (`JsValue`, `JsObj`, `JsArray`) is the crate
//! codecbus-json, built on this one. `serde_json::Value` travels as a
//! message with this crate's feature `serde-json` (on by default): the same
//! wire mapping as `JsValue`, deep-copied for every local consumer.
//!
//! # Features
//!
//! | feature | on by default | what it adds |
//! |---|---|---|
//! | `derive` | yes | `#[derive(MessageCodec)]`, re-exported from `codecbus-derive` |
//! | `serde` | yes | [`Serde<T>`](Serde), [`serde_codec!`] and `#[codec(serde)]` fields: serde types through `rmp-serde` |
//! | `serde-json` | yes | the codec of `serde_json::Value` |
//! | `uuid`, `decimal`, `time`, `chrono` | yes | codecs of `uuid::Uuid`, `rust_decimal::Decimal` and the dates and times of `time` and `chrono` ([`ext`]) |
//! | `schema` | no | shape snapshots as JSON files (`shape::snapshot`, read with serde_json) |
//!
//! # Where next
//!
//! * [`codecbus`](https://docs.rs/codecbus), the facade: this crate, the
//!   JSON value and the bus behind one dependency.
//! * [`codecbus-derive`](https://docs.rs/codecbus-derive): every attribute
//!   of the derive, the wire format and the decoding rules.
//! * The guide, in the repository's `book/` folder: its chapter "Codecs and
//!   attributes" (`book/src/codecs.md`), and "Performance" for the figures
//!   against rmp-serde, msgpacker and hand-written `rmp` calls.
// On docs.rs (`--cfg docsrs`), items behind a feature say which.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unreachable_pub)]

mod codec;
mod error;
pub mod ext;
mod impls;
mod msgpack;
mod registry;
#[cfg(feature = "serde")]
mod serde_body;
#[cfg(feature = "serde-json")]
mod serde_json_value;
#[cfg(feature = "serde")]
mod serde_macro;
pub mod shape;

/// The `bytes` crate, whose `Bytes` is a codec (a MessagePack `bin` that
/// shares the buffer it was decoded from, see [`Reader::shared`]).
pub use bytes;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

/// The snapshot reading and the compatibility check, for the fuzz target
/// `snapshot` in `fuzz/`: compiled only under `--cfg fuzzing` (which
/// `cargo fuzz` sets, as does `fuzz/.cargo/config.toml`), never part of
/// the API.
#[cfg(all(fuzzing, feature = "schema"))]
#[doc(hidden)]
pub mod __fuzz {
    /// Arbitrary bytes read as one snapshot, or as two separated by a NUL
    /// and checked against each other; panics on what must not happen.
    pub fn snapshot(data: &[u8]) {
        crate::shape::snapshot::fuzz(data);
    }
}

pub use crate::codec::{
    Decode, Encode, Immutable, MessageCodec, MessageType, decode_prefix, encode_into, from_bytes,
    from_slice, from_slice_with_limits, to_vec,
};
pub use crate::error::{
    DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, PathSegment, write_pointer_token,
};
pub use crate::msgpack::kind::{Int, ValueKind};
pub use crate::msgpack::limits::DecodeLimits;
pub use crate::msgpack::read::Reader;
pub use crate::msgpack::write::Writer;
pub use crate::registry::{AnyBody, CodecRegistration, registrations};
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub use crate::serde_body::Serde;

#[cfg(feature = "derive")]
#[cfg_attr(docsrs, doc(cfg(feature = "derive")))]
pub use codecbus_derive::MessageCodec;

// Lets the derive's `::codecbus_core::...` paths resolve inside this crate's
// own tests and doctests.
#[allow(unused_extern_crates)]
extern crate self as codecbus_core;
