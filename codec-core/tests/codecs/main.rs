//! The codec crate's built-in codecs, one test binary: round trips, the
//! reference vectors, bad input, pointers, serde bodies and the inputs the
//! fuzzers found. `hostile` stays a binary of its own: it counts
//! allocations with a global allocator.

mod bad_input;
mod builtin_roundtrip;
mod fixed;
mod flat;
mod fuzz_regressions;
mod pointer;
mod runs;
mod serde_body;
mod vectors;
