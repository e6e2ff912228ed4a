//! The short form of the NATS fault run (`examples/nats_faults.rs` runs it
//! at full size: `cargo run --release --example nats_faults -- --help`):
//! two kills and restarts of `nats-server` during 400 requests, a 1 s
//! outage, a slow handler and a node whose runtime is blocked.
//!
//! Fails without `nats-server`, saying how to install it.
//!
//! Timing: the per-request bound is the request's own timeout; the
//! wall-clock limits below (recovery after a restart, lateness past the
//! timeout) are several times the full run's, because a loaded 2-core CI
//! machine can stall a task for hundreds of milliseconds. The full run
//! checks the tight figures.
#![cfg(feature = "nats")]

#[path = "support/nats_faults.rs"]
mod faults;
#[path = "../bus/tests/common/nats.rs"]
mod harness;

use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_outage_and_slow_consumers() {
    faults::count_panics();
    let s = faults::Settings {
        requests: 400,
        restarts: 2,
        down: Duration::from_millis(500),
        outage: Duration::from_secs(1),
        timeout: Duration::from_secs(1),
        recovery_limit: Duration::from_secs(5),
        outage_recovery_limit: Duration::from_secs(10),
        lateness_limit: Duration::from_secs(2),
        slow_messages: 2_000,
        blocked_messages: 500,
        block: Duration::from_millis(1500),
        ..faults::Settings::full()
    };
    harness::require("restarts_outage_and_slow_consumers");
    let f = faults::run("restarts_outage_and_slow_consumers", &s)
        .await
        .expect("run")
        .expect("nats-server is installed");
    let table = f.table(&s);
    assert!(f.broken.is_empty(), "{:#?}\n{table}", f.broken);
    assert_eq!(f.requests, 400, "{table}");
    assert_eq!(f.restarts.len(), 2, "{table}");
    // The slow handler's overflow is refused at its queue and counted;
    // NATS itself delivered everything to the node.
    assert_eq!(f.slow.received, f.slow.published, "{table}");
    assert_eq!(f.slow.published, 2_000, "{table}");
}
