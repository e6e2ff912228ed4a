//! The derive's behaviour, one test binary: each module a topic (decoding,
//! keys and layouts, unions, borrowed fields, bounds, depth limits, the
//! registration records, agreement with rmp-serde, generated code in odd
//! surroundings, properties, shapes). Two stay binaries of their own: `compiletest`
//! (trybuild) and `lints` (crate-level lint settings the generated code
//! must pass).

#[path = "../common/mod.rs"]
mod common;

mod borrowed;
mod bound;
mod decode;
mod depth;
mod generated;
mod immutable_elements;
mod keys;
mod pointer;
mod properties;
mod registry;
mod rmp_serde;
mod serde_attr;
mod shapes;
mod union;
