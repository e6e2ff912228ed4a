//! Two OS processes on one NATS server: `examples/cluster.rs` run as
//! `--serve` and as `--ask`, exchanging requests.
#![cfg(feature = "nats")]

#[path = "../bus/tests/common/nats.rs"]
mod harness;
#[path = "support/example.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The cluster example, built by `cargo test` with the other examples, or
fn example() -> PathBuf {
    support::example("cluster", &[])
}

/// Runs `binary` under a small `sh` that kills it when this process's end
/// of its standard input closes: when the [`Supervised`] is dropped, and
/// also when the test process dies any other way (a panic that aborts, a
/// SIGKILL), so no example process outlives the test. The `sh` exits with
/// the example's status, and stops its watcher first (so the watcher never
/// kills a process id the system has given to another process since).
/// `sh` gives a background job `/dev/null` as its standard input, so the
/// pipe is kept as descriptor 3 for the watcher; the watcher writes nowhere,
/// so the example's output reaches end of file when the example exits.
const SUPERVISOR: &str = r#"trap '' INT TERM HUP
exec 3<&0
"$0" "$@" </dev/null 3<&- &
child=$!
(cat <&3; kill -9 "$child") >/dev/null 2>&1 &
watcher=$!
exec 3<&-
wait "$child"
status=$?
kill "$watcher" 2>/dev/null
exit "$status"
"#;

fn supervised(binary: &std::path::Path, args: &[&str]) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(SUPERVISOR)
        .arg(binary)
        .args(args)
        .stdin(Stdio::piped());
    command
}

/// A supervised example process, stopped on drop.
struct Supervised(Child);

impl Drop for Supervised {
    fn drop(&mut self) {
        // Closing its standard input makes the supervisor kill the example.
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

#[test]
fn serve_and_ask_in_two_processes() {
    let Some(server) = harness::NatsServer::start("serve_and_ask_in_two_processes") else {
        return;
    };
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
