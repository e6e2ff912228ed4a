//! The JSON value and its specs, one test binary: the API, round trips,
//! hostile text, specs (API, corpus, recursion, generators, properties,
//! JSON Schema export). `json_alloc` stays a binary of its own: it counts
//! allocations with a global allocator.

mod hostile;
mod json_api;
mod json_roundtrip;
mod spec_api;
mod spec_corpus;
mod spec_gen;
mod spec_prop;
mod spec_recursive;
mod spec_schema;
