//! codecbus: typed messages on an event bus.
//!
//! One import for the three crates: [`codec_core`] (codecs, limits,
//! extension types, the JSON value), the derive, and [`bus`].

pub use bus;
pub use codec_core;
pub use codec_core::*;
