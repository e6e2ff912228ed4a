//! The JSON value and its specs, one test binary: the API, round trips,
//! hostile text, specs (API, corpus, recursion, generators, properties,
//! JSON Schema export). `json_alloc` stays a binary of its own: it counts
//! allocations with a global allocator.

// The corpus documents' specs (shared with the benchmarks, which name
// the JSON crate `json` as these tests do) and the random specs of the
// property tests: one module each, used by several topics.
use codecbus_json as json;
#[path = "../../../data/json/specs.rs"]
mod specs;
#[cfg(feature = "proptest")]
#[path = "../spec_gen_support/mod.rs"]
mod support;

mod hostile;
mod json_api;
mod json_roundtrip;
mod spec_api;
mod spec_corpus;
mod spec_gen;
mod spec_prop;
mod spec_recursive;
mod spec_schema;
