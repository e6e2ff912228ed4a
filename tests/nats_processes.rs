//! Two OS processes on one NATS server: `examples/cluster.rs` run as
//! `--serve` and as `--ask`, exchanging requests; and the same example as
//! the one-command demo of a three-server cluster.
#![cfg(feature = "nats")]

#[path = "../bus/tests/common/nats.rs"]
mod harness;
#[path = "support/example.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use support::{Supervised, supervised};

/// The cluster example, built by `cargo test` with the other examples, or
fn example() -> PathBuf {
    support::example("cluster", &[])
}

#[test]
fn serve_and_ask_in_two_processes() {
    let server = harness::NatsServer::for_test("serve_and_ask_in_two_processes");
    let binary = example();
    let url = server.url();
    const COUNT: &str = "20";

    let mut serve = Supervised(
        supervised(&binary, &["--serve", "--url", &url, "--count", COUNT])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the serving process"),
    );
    // Read the server's stdout on a thread; wait for "ready".
    let stdout = serve.0.stdout.take().expect("stdout");
    let (lines_tx, lines) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut served = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines
            .recv_timeout(left)
            .expect("the serving process did not print `ready`");
        served.push(line.clone());
        if line == "ready" {
            break;
        }
    }

    let mut ask = supervised(&binary, &["--ask", "--url", &url, "--count", COUNT])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the asking process");
    // Held open while it runs: closing it stops the process.
    let _ask_stdin = ask.stdin.take();
    let ask = ask.wait_with_output().expect("wait for the asking process");
    let asked = String::from_utf8_lossy(&ask.stdout);
    assert!(
        ask.status.success(),
        "ask failed ({}):\n{asked}\n{}",
        ask.status,
        String::from_utf8_lossy(&ask.stderr)
    );
    assert!(
        asked.contains("refused as expected: quantity of sku-0 must be at least 1 (code 400)"),
        "{asked}"
    );
    assert!(asked.contains("\"served_by\""), "{asked}");
    assert_eq!(
        asked.lines().filter(|l| l.starts_with("quote ")).count(),
        20,
        "{asked}"
    );

    // The server answered COUNT quotes and exits on its own after draining.
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = serve.0.try_wait().expect("wait for serve") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the serving process did not exit"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    reader.join().expect("stdout reader");
    served.extend(lines.try_iter());
    let served = served.join("\n");
    assert!(status.success(), "serve failed ({status}):\n{served}");
    assert!(served.contains("quoted 20 requests; bye"), "{served}");
}

/// The one-command demo: three servers it starts itself, four nodes, a
/// server killed and restarted while requests flow. The example checks
/// that every node served after the restart and exits 1 otherwise.
#[test]
fn the_cluster_demo_survives_a_server_kill() {
    harness::require("the_cluster_demo_survives_a_server_kill");
    let binary = example();
    // Bad settings: the usage, exit status 2, before any server starts.
    for bad in [
        &["--servers", "2"][..],
        &["--nodes", "0"],
        &["--seconds", "5", "--kill-at", "5"],
        &["--servers", "1", "--kill-at", "1"],
        &["--url", "nats://127.0.0.1:4222"],
    ] {
        let run = Command::new(&binary)
            .args(bad)
            .stdin(Stdio::null())
            .output()
            .expect("run the example");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{bad:?}: {stderr}");
        assert!(stderr.contains("usage: cluster"), "{bad:?}: {stderr}");
    }
    let mut demo = supervised(
        &binary,
        &[
            "--servers",
            "3",
            "--nodes",
            "4",
            "--seconds",
            "7",
            "--kill-at",
            "2",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("run the demo");
    // Held open while it runs: closing it stops the process.
    let _demo_stdin = demo.stdin.take();
    let demo = demo.wait_with_output().expect("wait for the demo");
    let out = String::from_utf8_lossy(&demo.stdout);
    let report = format!("{out}\n{}", String::from_utf8_lossy(&demo.stderr));
    assert!(
        demo.status.success(),
        "the demo failed ({}):\n{report}",
        demo.status
    );
    assert!(
        out.starts_with("3 server(s), 4 node(s): n1→s1 n2→s2 n3→s3 n4→s1"),
        "{report}"
    );
    assert!(out.contains("SIGKILL s2"), "{report}");
    assert!(out.contains("s2 started again"), "{report}");
    // After the kill no node is left on s2.
    let moved = out
        .lines()
        .skip_while(|l| !l.contains("SIGKILL s2"))
        .nth(1)
        .unwrap_or_default();
    assert!(
        moved.contains("n2→s3") && !moved.contains("→s2"),
        "n2 moved to the next server of its list:\n{report}"
    );
    assert_eq!(
        out.lines().filter(|l| l.contains("quotes served:")).count(),
        7,
        "{report}"
    );
    assert!(out.trim_end().ends_with("ok"), "{report}");
}
