//! The short form of the durable fault run (`examples/durable_faults.rs`
//! runs it at full size: `cargo run --release --features jetstream
//! --example durable_faults -- --help`): 3000 durable sends to a consumer
//! group of two processes, one consumer process killed (SIGKILL) and
//! restarted, `nats-server` killed and restarted on the same store.
//! Nothing may be lost.
//!
//! The cluster form: three servers with the stream replicated on all of
//! them, each server killed in turn and restarted (1 500 sends).
//!
//! Fails without `nats-server`, saying how to install it.
//! The wall-clock limit (the example's own deadline and this test's) only
//! says "did not hang": generous for a loaded 2-core machine.
#![cfg(feature = "jetstream")]

#[path = "../bus/tests/common/nats.rs"]
mod harness;
#[path = "support/example.rs"]
mod support;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The example, built by `cargo test` with the other examples, or built
fn example() -> PathBuf {
    support::example("durable_faults", &["jetstream"])
}

fn figure(output: &str, name: &str) -> u64 {
    output
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no `{name}` figure in:\n{output}"))
}

/// Runs the example with `args`; its standard output, and the output of
/// both streams for a failure message. Panics when it fails or does not
/// finish within `limit`.
fn run(args: &[&str], limit: Duration) -> (String, String) {
    let started = Instant::now();
    let mut run = Command::new(example())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the example");
    let stdout = run.stdout.take().expect("stdout");
    let stderr = run.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let err = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let status = loop {
        if let Some(status) = run.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = run.kill();
            let _ = run.wait();
            panic!("the fault run did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = out.join().expect("stdout reader");
    let err = err.join().expect("stderr reader");
    let report = format!("{out}\n{err}");
    assert!(status.success(), "the run failed ({status}):\n{report}");
    (out, report)
}

#[test]
fn consumer_and_server_kills_lose_nothing() {
    harness::require("consumer_and_server_kills_lose_nothing");
    let (out, report) = run(
        &[
            "--sends",
            "3000",
            "--consumer-kills",
            "1",
            "--server-kills",
            "1",
            "--deadline",
            "60",
        ],
        Duration::from_secs(240),
    );
    assert_eq!(figure(&out, "sends"), 3000, "{report}");
    assert_eq!(figure(&out, "stored (Ok)"), 3000, "{report}");
    assert_eq!(figure(&out, "handled (unique)"), 3000, "{report}");
    assert_eq!(figure(&out, "lost"), 0, "{report}");
    assert_eq!(figure(&out, "consumer kills"), 1, "{report}");
    assert_eq!(figure(&out, "server kills"), 1, "{report}");
    assert!(
        figure(&out, "handled (total)") >= 3000,
        "every message handled at least once:\n{report}"
    );
}

/// Three servers, the stream on all three: each server killed in turn
/// (the stream's leader first) and restarted; nothing lost, and service
/// came back after every kill.
#[test]
fn a_replicated_stream_survives_each_server_killed_in_turn() {
    harness::require("a_replicated_stream_survives_each_server_killed_in_turn");
    let (out, report) = run(
        &[
            "--servers",
            "3",
            "--replicas",
            "3",
            "--sends",
            "1500",
            "--consumer-kills",
            "0",
            "--server-kills",
            "3",
            "--store-timeout",
            "1000",
            "--deadline",
            "60",
        ],
        Duration::from_secs(300),
    );
    assert_eq!(figure(&out, "servers"), 3, "{report}");
    assert_eq!(figure(&out, "replicas"), 3, "{report}");
    assert_eq!(figure(&out, "stored (Ok)"), 1500, "{report}");
    assert_eq!(figure(&out, "handled (unique)"), 1500, "{report}");
    assert_eq!(figure(&out, "lost"), 0, "{report}");
    assert_eq!(figure(&out, "server kills"), 3, "{report}");
    // Three different servers, the leader first, each followed by service.
    let kills: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("  s") && l.contains("without service"))
        .collect();
    assert_eq!(kills.len(), 3, "{report}");
    assert!(kills[0].contains("(stream leader)"), "{report}");
    let mut victims: Vec<&str> = kills.iter().map(|l| &l.trim()[..2]).collect();
    victims.sort_unstable();
    victims.dedup();
    assert_eq!(victims.len(), 3, "three different servers:\n{report}");
    assert!(
        kills.iter().all(|l| !l.contains("until the end")),
        "service came back after every kill:\n{report}"
    );
}
