//! The cluster on a real nats-server, one test binary: the conformance
//! suite (also run against the in-memory cluster), routing and failures
//! across nodes, durable addresses on JetStream, security (TLS, users,
//! nkeys, permissions), specs, property tests of bodies, the wire pinned
//! to its corpus (`wire.rs`), and the test harness itself. Each test
//! starts a server of its own on free loopback ports (`common/nats.rs`),
//! so the tests of one binary share nothing.

#[path = "../common/authority.rs"]
mod authority;
#[path = "../common/mod.rs"]
mod common;
#[path = "../common/nats.rs"]
mod harness;
#[path = "../common/tally.rs"]
#[allow(dead_code)]
mod tally;

mod conformance;
mod nats;
mod nats_cluster;
mod nats_durable;
mod nats_harness;
mod nats_prop;
mod nats_renamed;
mod nats_security;
mod nats_spec;
mod shapes;
mod wire;
