//! `codecbus tap` in a process of its own on a real nats-server, while
//! `examples/traffic.rs`, in another process, sends a message of each
//! layout (positional, keyed, union, by name): each is printed with its
//! address, codec, headers and size, its body as JSON with the names of
//! the shapes the tap was given, and the one codec it was not given shown
//! as plain MessagePack, marked so.
#![cfg(feature = "nats")]

#[path = "../bus/tests/common/nats.rs"]
mod harness;
#[path = "support/example.rs"]
mod support;
#[allow(dead_code, unreachable_pub)]
#[path = "../examples/traffic.rs"]
mod traffic;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use codecbus::shape::{CodecShape, ShapeSet};
use serde_json::{Value, json};
use support::{Supervised, supervised};

/// A snapshot of the traffic's codecs but `traffic.note`, written to a
/// folder of its own.
fn snapshot(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("tap_cli")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let set = ShapeSet::from_codecs([
        CodecShape::of::<traffic::Reading>("traffic.reading"),
        CodecShape::of::<traffic::Account>("traffic.account"),
        CodecShape::of::<traffic::Event>("traffic.event"),
    ]);
    let path = dir.join("codecs.snapshot.json");
    std::fs::write(&path, set.to_snapshot()).unwrap();
    path
}

/// Runs the tap with `args` until it has printed what six messages make:
/// the traffic example's five, sent once the tap is watching, and one of a
/// peer in another language whose codec nobody told; its output. The tap
/// is given a snapshot of the traffic's codecs but one (which the traffic
/// node tells it when it joins).
fn tap_the_traffic(test: &str, args: &[&str]) -> String {
    let server = harness::NatsServer::for_test(test);
    let shapes = snapshot(test);
    let mut all_args = vec!["--shapes", shapes.to_str().unwrap()];
    all_args.extend_from_slice(args);
    tap_on(&server, &all_args).0
}

/// [`tap_the_traffic`] on `server`, the tap given `args`: its standard
/// output, and the first line of its standard error (what it knew when it
/// started).
fn tap_on(server: &harness::NatsServer, args: &[&str]) -> (String, String) {
    let url = server.url();
    let tap_binary = PathBuf::from(env!("CARGO_BIN_EXE_codecbus"));
    let mut all_args = vec!["tap", ">", "--server", &url, "--count", "6", "--for", "60"];
    all_args.extend_from_slice(args);
    let mut tap = Supervised(
        supervised(&tap_binary, &all_args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start codecbus tap"),
    );
    // Wait until it watches: its first line on standard error.
    let stderr = tap.0.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut lines = BufReader::new(stderr).lines();
        if let Some(Ok(line)) = lines.next() {
            let _ = tx.send(line);
        }
        lines.map_while(Result::ok).collect::<Vec<_>>().join("\n")
    });
    let first = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the tap says it is watching");
    assert!(first.contains("watching every address"), "{first}");

    let traffic = support::example("traffic", &["nats"]);
    let mut send = supervised(&traffic, &["--url", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the traffic example");
    let _stdin = send.stdin.take();
    let sent = send
        .wait_with_output()
        .expect("wait for the traffic example");
    assert!(
        sent.status.success(),
        "traffic failed: {}",
        String::from_utf8_lossy(&sent.stderr)
    );
    publish_as_another_peer(&url);

    let mut stdout = String::new();
    tap.0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = tap.0.wait().expect("wait for the tap");
    let rest = reader.join().unwrap();
    assert!(status.success(), "tap failed ({status}): {rest}\n{stdout}");
    (stdout, first)
}

/// A publish to `raw` of a peer that is no codecbus node, written from the
/// wire chapter: the codec prefix naming `peer.note`, then `{"text":
/// "plain"}`.
fn publish_as_another_peer(url: &str) {
    let mut payload = vec![0xC1, 0x02, 0xA9];
    payload.extend_from_slice(b"peer.note");
    payload.extend_from_slice(&[0x81, 0xA4]);
    payload.extend_from_slice(b"text");
    payload.push(0xA5);
    payload.extend_from_slice(b"plain");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = async_nats::connect(url).await.unwrap();
        client
            .publish("codecbus.p.raw", payload.into())
            .await
            .unwrap();
        client.flush().await.unwrap();
    });
}

#[test]
fn tap_prints_every_layout_by_name_as_json_lines() {
    let out = tap_the_traffic("tap_prints_every_layout_by_name_as_json_lines", &["--json"]);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 6, "{out}");
    let by = |address: &str, i: usize| -> &Value {
        lines
            .iter()
            .filter(|l| l["address"] == address)
            .nth(i)
            .unwrap_or_else(|| panic!("no message {i} to {address}: {out}"))
    };

    let reading = by(traffic::SENSORS, 0);
    assert_eq!(reading["kind"], "publish");
    assert_eq!(reading["codec"], "traffic.reading");
    assert_eq!(reading["subject"], "codecbus.p.sensors");
    assert_eq!(reading["shaped"], true);
    let reading_body = json!({"sensor": "hall", "celsius": 21.5, "at": "2026-01-01T00:00:00Z"});
    assert_eq!(reading["body"], reading_body);
    let size = codecbus::to_vec(&traffic::reading()).unwrap().len();
    // The codec prefix (0xC1, version, name) comes before the body.
    assert!(
        reading["size"].as_u64().unwrap() as usize > size,
        "{reading}"
    );

    let account = by(traffic::ACCOUNTS, 0);
    assert_eq!(account["kind"], "send");
    assert_eq!(account["body"], json!({"id": 7, "owner": "ada"}));

    assert_eq!(
        by(traffic::EVENTS, 0)["body"],
        json!({"Opened": {"account": 7}})
    );
    assert_eq!(
        by(traffic::EVENTS, 1)["body"],
        json!({"Read": reading_body})
    );

    // Not in the snapshot, but told by the traffic's node as it joined.
    let note = by(traffic::NOTES, 0);
    assert_eq!(note["codec"], "traffic.note");
    assert_eq!(note["shaped"], true);
    assert_eq!(note["headers"], json!({"from": "traffic"}));
    assert_eq!(note["body"], json!({"text": "closing early"}));

    // A codec nobody told: the map as it is, marked as shown without a
    // shape.
    let raw = by("raw", 0);
    assert_eq!(raw["codec"], "peer.note");
    assert_eq!(raw["shaped"], false);
    assert_eq!(raw["body"], json!({"text": "plain"}));
}

#[test]
fn tap_prints_a_block_per_message_for_a_person() {
    let out = tap_the_traffic("tap_prints_a_block_per_message_for_a_person", &[]);
    // Not a terminal: no colours.
    assert!(!out.contains('\x1b'), "{out}");
    assert!(
        out.contains("publish sensors · traffic.reading · "),
        "{out}"
    );
    assert!(out.contains("send accounts · traffic.account · "), "{out}");
    assert!(out.contains("publish notes · traffic.note · "), "{out}");
    assert!(
        out.contains("publish raw · peer.note (shape unknown: plain MessagePack) · "),
        "{out}"
    );
    assert!(out.contains("  from: traffic\n"), "{out}");
    assert!(out.contains("\"owner\": \"ada\""), "{out}");
    assert_eq!(out.matches("\n\n").count(), 6, "{out}");
}

#[test]
fn tap_learns_the_shapes_from_the_running_nodes() {
    let server = harness::NatsServer::for_test("tap_learns_the_shapes_from_the_running_nodes");
    // A node of this test's build, which has the traffic's codecs, runs
    // while the tap starts: the tap asks it for their shapes.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let node = runtime.block_on(async {
        codecbus::bus::EventBus::builder()
            .nats(codecbus::bus::NatsOptions::new(server.url()))
            .connect()
            .await
            .unwrap()
    });
    let (out, first) = tap_on(&server, &["--json"]);
    // Told at once: the node's codecs, the built-in ones among them.
    assert!(
        first.contains("0 codec shapes given") && !first.contains(" 0 told by the running nodes"),
        "{first}"
    );
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6, "{out}");
    assert!(
        lines.iter().all(|l| l["shaped"] == (l["address"] != "raw")),
        "{out}"
    );
    let reading = lines
        .iter()
        .find(|l| l["address"] == traffic::SENSORS)
        .unwrap();
    assert_eq!(reading["body"]["sensor"], "hall", "{reading}");
    let account = lines
        .iter()
        .find(|l| l["address"] == traffic::ACCOUNTS)
        .unwrap();
    assert_eq!(account["body"], json!({"id": 7, "owner": "ada"}));
    // The tap said goodbye: the node forgets it.
    runtime.block_on(async {
        eventually(|| {
            node.shape_report()
                .peers
                .iter()
                .all(|p| !p.node.starts_with("codecbus tap"))
        })
        .await;
        node.close().await;
    });
}

/// Waits up to 10 s for `check`.
async fn eventually(check: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(tokio::time::Instant::now() < deadline, "not within 10 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[test]
fn tap_refuses_bad_usage_with_status_2() {
    let tap = PathBuf::from(env!("CARGO_BIN_EXE_codecbus"));
    for args in [
        &["tap"][..],
        &["tap", "a", "b"],
        &["tap", "a", "--count", "0"],
        &["tap", "a", "--for", "-1"],
        &["tap", "a", "--user", "u"],
        &["tap", "a", "--bogus"],
    ] {
        let out = std::process::Command::new(&tap)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
    // Nothing listens on port 1: a connection error, not a hang or panic.
    let out = std::process::Command::new(&tap)
        .args(["tap", "a", "--server", "nats://127.0.0.1:1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let help = std::process::Command::new(&tap)
        .args(["tap", "--help"])
        .output()
        .unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("--shapes FILE"));
}
