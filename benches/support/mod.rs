//! Code shared by the bounce benchmark and the bounce example.

// Shared between a bench and an example, so `pub` here is crate-visible only.
#![allow(unreachable_pub)]

pub mod bounce;
pub mod payloads;
