//! The in-process bus and the in-memory cluster, one test binary: each
//! module is a topic (send, publish, request and reply, flow control, where
//! handlers run, shutdown, ...). One binary links the bus once, where a
//! binary per topic would link it fifteen times.
//!
//! Tests that need process-wide state of their own stay binaries of their
//! own: `alloc` (a counting global allocator), `conflict` (conflicting codec
//! registrations), `metrics` (the global recorder), `traces` (the global
//! propagator and exporter) and the loom models.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/nats.rs"]
mod harness;

mod flow;
mod in_memory_cluster;
mod inline;
mod mistakes;
mod publish;
mod refused_copies;
mod registry;
mod renamed_codecs;
mod request_reply;
mod scheduler;
mod send;
mod send_sync;
mod serde_body;
mod shutdown;
mod spec_guard;
mod stream_drop;
mod stress;
