//! The wire contract of the examples' message types (the cluster demo, the
//! peer of another language, the bus tour, the traffic for `codecbus tap`): every
//! codec they register, checked against `examples/codecs.snapshot.json`
//! in FULL mode, as a user's crate checks its own (book/src/evolution.md).
//! A change to one of their types that breaks nodes of the previous build
//! fails here; `CODECBUS_BLESS=1 cargo test --test examples_contract`
//! records an intended one.

#[allow(dead_code, unreachable_pub, clippy::all)]
#[path = "../examples/cluster.rs"]
mod cluster;
// What the cluster demo reaches as `crate::harness`.
#[allow(dead_code, unreachable_pub, clippy::all)]
#[path = "../examples/bus_tour.rs"]
mod bus_tour;
#[allow(dead_code, unreachable_pub, clippy::all)]
#[path = "../bus/tests/common/nats.rs"]
mod harness;
#[allow(dead_code, unreachable_pub, clippy::all)]
#[path = "../examples/peer_node.rs"]
mod peer_node;
#[allow(dead_code, unreachable_pub, clippy::all)]
#[path = "../examples/traffic.rs"]
mod traffic;

#[test]
fn the_examples_message_types_keep_their_contract() {
    codecbus::shape::check_snapshot(
        concat!(env!("CARGO_MANIFEST_DIR"), "/examples/codecs.snapshot.json"),
        codecbus::shape::check::Mode::Full,
    );
}
