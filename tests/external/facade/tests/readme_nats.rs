//! The cluster blocks of the README and the guide (`rust,no_run`: they need a NATS server),
//! run against a real `nats-server` started on a free loopback port.

#[allow(dead_code, unreachable_pub)]
#[path = "../../../../bus/tests/common/nats.rs"]
mod nats;

mod blocks {
    include!(concat!(env!("OUT_DIR"), "/readme_nats_blocks.rs"));
}

#[test]
fn readme_cluster_blocks() {
    assert!(
        blocks::COUNT > 0,
        "no `rust,no_run` block found in README.md or book/src/"
    );
    // JetStream on, for the durable-address block.
    let config = nats::Config {
        jetstream: true,
        ..nats::Config::default()
    };
    // Fails, saying how to install it, without nats-server.
    let server = nats::NatsServer::for_test_with("readme_cluster_blocks", &config);
    // SAFETY: this binary has one test and sets the variable before any
    // other thread of its own reads the environment.
    unsafe { std::env::set_var("NATS_URL", server.url()) };
    blocks::run_all();
    println!(
        "{} cluster block(s) of README.md and book/src/ ran against {}",
        blocks::COUNT,
        server.url()
    );
}
