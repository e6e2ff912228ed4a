//! codecbus: typed messages on an event bus.
//!
//! One dependency for the whole project: the codecs of
//! [`codecbus-core`](codec) (re-exported at the root: `MessageCodec`,
//! `to_vec`, `from_slice`, limits, extension types), the derive, the
//! immutable JSON value of `codecbus-json` ([`json`], with the macros
//! [`jsobj!`] and [`jsarr!`] at the root) and the event bus ([`bus`]).

pub use codecbus_bus as bus;
/// The codec crate, `codecbus-core`, as a whole (derived code reaches it as
/// `codecbus::codec`).
pub use codecbus_core as codec;
pub use codecbus_core::*;
/// The immutable JSON value, the crate `codecbus-json`.
pub use codecbus_json as json;
pub use codecbus_json::{jsarr, jsobj};

// Lets derived code in this package's own examples and doctests find
// `::codecbus::codec`.
#[allow(unused_extern_crates)]
extern crate self as codecbus;

// Every code block of the README is a program that compiles and runs.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
