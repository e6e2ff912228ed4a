//! A rolling deploy in OS processes on one nats-server with JetStream
//! (`examples/rolling.rs`): a node of a build that made a field required
//! names the older build's shape at join (an error-level log with the
//! field and the rule) and refuses its request with `SHAPE_MISMATCH`; a
//! build with a new optional field is delivered and counted; a process
//! started after both stopped learns their shapes from the bucket; and
//! `codecbus tap`, started before them all, prints the traffic by field
//! name with the shapes the nodes told it.
#![cfg(all(feature = "nats", feature = "jetstream", feature = "schema"))]

#[path = "../bus/tests/common/nats.rs"]
mod harness;
#[path = "support/example.rs"]
mod support;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use support::{Supervised, supervised};

/// A supervised process whose standard output is read line by line on a
/// thread.
struct Running {
    process: Supervised,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    fn start(binary: &Path, args: &[&str]) -> Self {
        let mut process = Supervised(
            supervised(binary, args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("start {}: {e}", binary.display())),
        );
        let stdout = process.0.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Self {
            process,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits for a line starting with `start`.
    fn wait_for(&mut self, start: &str) {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("no line {start:?} in {:?}", self.seen));
            self.seen.push(line.clone());
            if line.starts_with(start) {
                return;
            }
        }
    }

    /// Waits for its end (a serving node's `--seconds`): its standard
    /// output and error.
    fn finish(mut self) -> (String, String) {
        let mut err = String::new();
        if let Some(mut stderr) = self.process.0.stderr.take() {
            stderr.read_to_string(&mut err).unwrap();
        }
        let status = self.process.0.wait().unwrap();
        self.seen.extend(self.lines.iter());
        let out = self.seen.join("\n");
        assert!(status.success(), "{status}: {out}\n{err}");
        (out, err)
    }
}

/// Runs `binary` with `args` to its end.
fn run(binary: &Path, args: &[&str]) -> Output {
    let mut child = supervised(binary, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _stdin = child.stdin.take();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// How long the serving nodes run (their standard input is not theirs to
/// read: the supervisor gives them `/dev/null`).
const SERVE: &str = "10";

#[test]
fn a_rolling_deploy_in_processes_names_refuses_counts_and_remembers() {
    let server = harness::jetstream_for_test("rolling deploy in processes");
    let url = server.url();
    let rolling = support::example("rolling", &["nats", "jetstream"]);
    let codecbus = PathBuf::from(env!("CARGO_BIN_EXE_codecbus"));

    // The tap first: it learns the nodes' shapes as they join.
    let mut tap = Running::start(
        &codecbus,
        &[
            "tap", ">", "--server", &url, "--json", "--count", "3", "--for", "60",
        ],
    );
    let mut tap_stderr = tap.process.0.stderr.take().unwrap();
    let mut first = [0u8; 64];
    let n = tap_stderr.read(&mut first).unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).contains("watching"));

    let mut b2 = Running::start(
        &rolling,
        &[
            "--build",
            "2",
            "--serve",
            "--jetstream",
            "--seconds",
            SERVE,
            "--url",
            &url,
        ],
    );
    b2.wait_for("ready");
    let mut b1 = Running::start(
        &rolling,
        &[
            "--build",
            "1",
            "--serve",
            "--jetstream",
            "--seconds",
            SERVE,
            "--url",
            &url,
        ],
    );
    b1.wait_for("ready");

    // Build 1's order to build 2: refused with the shape's error.
    let asked = run(
        &rolling,
        &["--build", "1", "--ask", "orders.b2", "--url", &url],
    );
    let asked = String::from_utf8_lossy(&asked.stdout);
    assert!(
        asked.contains("refused: SHAPE_MISMATCH")
            && asked.contains("FIELD_ADDED_REQUIRED at `customer`"),
        "{asked}"
    );
    // Build 3's order to build 1: delivered, a compatible difference.
    let asked = run(
        &rolling,
        &["--build", "3", "--ask", "orders.b1", "--url", &url],
    );
    let asked = String::from_utf8_lossy(&asked.stdout);
    assert!(asked.contains("answered: 7"), "{asked}");
    // And build 2's to build 1, which skips the field it does not know.
    let asked = run(
        &rolling,
        &["--build", "2", "--ask", "orders.b1", "--url", &url],
    );
    let asked = String::from_utf8_lossy(&asked.stdout);
    assert!(asked.contains("answered: 7"), "{asked}");

    // Build 2 named build 1 at join, at error level, with field and rule.
    let (b2_out, b2_err) = b2.finish();
    assert!(
        b2_err.contains("ERROR")
            && b2_err.contains("field=customer")
            && b2_err.contains("rule=FIELD_ADDED_REQUIRED")
            && b2_err.contains("peer=build1#"),
        "{b2_err}"
    );
    let mismatches = b2_out
        .lines()
        .find_map(|l| l.strip_prefix("shape_mismatches "))
        .and_then(|rest| rest.split(' ').next()?.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("{b2_out}"));
    assert!(mismatches >= 2, "{b2_out}");
    let (b1_out, _) = b1.finish();
    assert!(!b1_out.contains("shape_differences 0"), "{b1_out}");

    // Started after both stopped: build 3 learns their shapes from the
    // bucket, both compatible for it.
    let later = run(
        &rolling,
        &["--build", "3", "--report", "--jetstream", "--url", &url],
    );
    let later = String::from_utf8_lossy(&later.stdout);
    assert_eq!(
        later
            .lines()
            .filter(|l| l.starts_with("bucket codecbus-shapes")
                && l.contains("rolling.order  compatible"))
            .count(),
        2,
        "{later}"
    );

    // The tap printed the three builds' requests by field name.
    let (tap_out, _) = tap.finish();
    let lines: Vec<Value> = tap_out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 3, "{tap_out}");
    for line in &lines {
        assert_eq!(line["codec"], "rolling.order");
        assert_eq!(line["kind"], "request");
        assert_eq!(line["shaped"], true, "{line}");
    }
    assert_eq!(lines[0]["body"], json!({"id": 7}));
    assert_eq!(lines[1]["body"], json!({"id": 7, "note": null}));
    assert_eq!(lines[2]["body"], json!({"id": 7, "customer": "ada"}));
}
