//! A TCP event bus bridge client that runs the named cases of `cases.rs`
//! against a server (the Vert.x reference or codecbus's bridge) and records
//! what it answered, normalised so that two servers' answers compare equal
//! when they mean the same: generated reply addresses become `$reply1`,
//! `$reply2`, ... in the order they first appear, and strings longer than
//! [`LONG`] characters become `"<N chars>"`.
//!
//! The fixture of a case (`frames/<case>.json`) is the list of its steps,
//! each with the frame sent and the frames received after it.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::cases::{Case, Sent, Step};

/// Strings longer than this are recorded by their length alone.
pub(crate) const LONG: usize = 256;

/// How long a step waits for the frames it expects.
const EXPECT_WITHIN: Duration = Duration::from_secs(5);

/// The frames the server sent in one case, step by step.
pub(crate) type Record = Vec<StepRecord>;

/// One step: what was sent, what came back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StepRecord {
    pub(crate) sent: Value,
    pub(crate) received: Vec<Value>,
}

impl StepRecord {
    fn to_json(&self) -> Value {
        json!({"sent": self.sent, "received": self.received})
    }
}

/// The folder of the committed fixtures.
pub(crate) fn frames_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bridge/frames")
}

/// The record of `case` as its fixture holds it.
pub(crate) fn to_fixture(case: &Case, record: &Record) -> Value {
    json!({
        "case": case.name,
        "about": case.about,
        "steps": record.iter().map(StepRecord::to_json).collect::<Vec<_>>(),
    })
}

/// The committed fixture of `case`, read back.
///
/// # Panics
///
/// When the file is missing or not a fixture.
pub(crate) fn read_fixture(case: &Case) -> Record {
    let path = frames_dir().join(format!("{}.json", case.name));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("read the fixture {}: {e}", path.display()));
    let value: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the fixture {} is not JSON: {e}", path.display()));
    value["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("the fixture {} has no steps", path.display()))
        .iter()
        .map(|step| StepRecord {
            sent: step["sent"].clone(),
            received: step["received"].as_array().cloned().unwrap_or_default(),
        })
        .collect()
}

/// Writes `record` as the fixture of `case`.
pub(crate) fn write_fixture(case: &Case, record: &Record) {
    let dir = frames_dir();
    std::fs::create_dir_all(&dir).expect("create the frames folder");
    let mut text = serde_json::to_string_pretty(&to_fixture(case, record)).expect("JSON");
    text.push('\n');
    std::fs::write(dir.join(format!("{}.json", case.name)), text).expect("write a fixture");
}

/// A frame: four bytes of big-endian length, then the bytes.
pub(crate) fn frame(bytes: &[u8]) -> Vec<u8> {
    let len = u32::try_from(bytes.len()).expect("a frame under 4 GiB");
    let mut out = len.to_be_bytes().to_vec();
    out.extend_from_slice(bytes);
    out
}

/// A bridge client: writes frames, reads whole frames.
pub(crate) struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
    closed: bool,
}

impl Client {
    /// Connects to the bridge at 127.0.0.1:`port`.
    pub(crate) fn open(port: u16) -> Self {
        let stream = TcpStream::connect(("127.0.0.1", port))
            .unwrap_or_else(|e| panic!("connect to the bridge at 127.0.0.1:{port}: {e}"));
        stream.set_nodelay(true).expect("nodelay");
        Self {
            stream,
            buf: Vec::new(),
            closed: false,
        }
    }

    /// Writes `bytes` as they are.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        // A server that closed the connection may refuse the write; the
        // close is what the step records.
        if self.stream.write_all(bytes).is_err() {
            self.closed = true;
        }
    }

    /// The next frame within `wait`: `Some(Value)` (`{"$closed": true}`
    /// once the server closed), `None` when nothing came in time.
    pub(crate) fn next(&mut self, wait: Duration) -> Option<Value> {
        let until = Instant::now() + wait;
        loop {
            if let Some(frame) = self.take() {
                return Some(frame);
            }
            if self.closed {
                return None;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            self.stream
                .set_read_timeout(Some(left))
                .expect("read timeout");
            let mut chunk = [0u8; 65536];
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    self.closed = true;
                    return Some(json!({"$closed": true}));
                }
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return None;
                }
                Err(_) => {
                    self.closed = true;
                    return Some(json!({"$closed": true}));
                }
            }
        }
    }

    /// Writes `json` as a frame.
    pub(crate) fn send(&mut self, json: &Value) {
        self.write(&frame(json.to_string().as_bytes()));
    }

    /// The next frame, which must come within 5 s.
    pub(crate) fn expect(&mut self) -> Value {
        self.next(EXPECT_WITHIN)
            .expect("a frame from the bridge within 5 s")
    }

    fn take(&mut self) -> Option<Value> {
        let head: [u8; 4] = self.buf.get(..4)?.try_into().ok()?;
        let len = u32::from_be_bytes(head) as usize;
        let body = self.buf.get(4..4 + len)?;
        let value = serde_json::from_slice(body)
            .unwrap_or_else(|_| json!({"$not_json": String::from_utf8_lossy(body).into_owned()}));
        self.buf.drain(..4 + len);
        Some(value)
    }
}

/// Names generated reply addresses in the order they appear.
#[derive(Default)]
struct Replies {
    names: HashMap<String, String>,
    values: HashMap<String, String>,
}

impl Replies {
    fn name(&mut self, address: &str) -> String {
        if let Some(name) = self.names.get(address) {
            return name.clone();
        }
        let name = format!("$reply{}", self.names.len() + 1);
        self.names.insert(address.to_string(), name.clone());
        self.values.insert(name.clone(), address.to_string());
        name
    }

    /// `value` with each `$replyN` string replaced by the address it names.
    fn resolve(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => match self.values.get(s) {
                Some(address) => Value::String(address.clone()),
                None => value.clone(),
            },
            Value::Array(items) => Value::Array(items.iter().map(|v| self.resolve(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.resolve(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// A received frame, normalised: its `replyAddress` named, and an
/// `address` that is a generated reply address too (a reply to a
/// server's request arrives there), long strings shortened.
fn normalise(frame: &Value, replies: &mut Replies, client_addresses: &[String]) -> Value {
    let mut frame = shorten(frame);
    if let Some(map) = frame.as_object_mut() {
        if let Some(Value::String(reply)) = map.get("replyAddress").cloned() {
            map.insert("replyAddress".into(), Value::String(replies.name(&reply)));
        }
        if let Some(Value::String(address)) = map.get("address").cloned()
            && !client_addresses.contains(&address)
            && replies.names.contains_key(&address)
        {
            map.insert("address".into(), Value::String(replies.name(&address)));
        }
    }
    frame
}

fn shorten(value: &Value) -> Value {
    match value {
        Value::String(s) if s.chars().count() > LONG => {
            Value::String(format!("<{} chars>", s.chars().count()))
        }
        Value::Array(items) => Value::Array(items.iter().map(shorten).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), shorten(v))).collect())
        }
        other => other.clone(),
    }
}

/// The addresses a case itself names (the client's reply addresses and
/// registrations): never taken for generated ones.
fn client_addresses(case: &Case) -> Vec<String> {
    let mut out = Vec::new();
    for step in &case.steps {
        if let Sent::Json(frame) = &step.sent {
            for key in ["address", "replyAddress"] {
                if let Some(Value::String(a)) = frame.get(key)
                    && !a.starts_with("$reply")
                {
                    out.push(a.clone());
                }
            }
        }
    }
    out
}

/// Runs `case` against the bridge at `port` and records what it answered.
/// Runs `cases` against the bridge at 127.0.0.1:`port`, each on a
/// connection of its own and at the same time (a step that waits for a
/// frame that never comes waits seconds): the cases that publish to or
/// register at a shared address (`news`, and `publish.trigger`, which
/// publishes there) run one after the other on one thread, so none sees
/// another's publish. The records come back in the order of `cases`.
pub(crate) fn run_all(cases: &[Case], port: u16) -> Vec<Record> {
    let shares = |case: &Case| {
        case.steps.iter().any(|step| match &step.sent {
            Sent::Json(frame) => {
                matches!(frame["address"].as_str(), Some("news" | "publish.trigger"))
            }
            Sent::Raw { .. } => false,
        })
    };
    let mut records: Vec<Option<Record>> = (0..cases.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let shared: Vec<usize> = (0..cases.len()).filter(|&i| shares(&cases[i])).collect();
        let serial = scope.spawn(move || {
            shared
                .iter()
                .map(|&i| (i, run(&cases[i], port)))
                .collect::<Vec<_>>()
        });
        let alone: Vec<_> = (0..cases.len())
            .filter(|&i| !shares(&cases[i]))
            .map(|i| (i, scope.spawn(move || run(&cases[i], port))))
            .collect();
        for (i, handle) in alone {
            records[i] = Some(handle.join().expect("a case's thread"));
        }
        for (i, record) in serial.join().expect("the shared cases' thread") {
            records[i] = Some(record);
        }
    });
    records
        .into_iter()
        .map(|r| r.expect("every case ran"))
        .collect()
}

/// Runs one case on a connection of its own.
pub(crate) fn run(case: &Case, port: u16) -> Record {
    let mut conn = Client::open(port);
    let mut replies = Replies::default();
    let ours = client_addresses(case);
    let mut record = Vec::new();
    for step in &case.steps {
        let sent = match &step.sent {
            Sent::Json(frame) => {
                let resolved = replies.resolve(frame);
                conn.write(&crate::runner::frame(resolved.to_string().as_bytes()));
                frame.clone()
            }
            Sent::Raw { about, bytes } => {
                conn.write(bytes);
                json!({"$raw": about})
            }
        };
        let received = receive(&mut conn, step, &mut replies, &ours);
        let closed = received.iter().any(|f| f.get("$closed").is_some());
        record.push(StepRecord {
            sent: shorten(&sent),
            received,
        });
        if closed {
            break;
        }
    }
    record
}

fn receive(conn: &mut Client, step: &Step, replies: &mut Replies, ours: &[String]) -> Vec<Value> {
    let mut received = Vec::new();
    let until = Instant::now() + EXPECT_WITHIN;
    while received.len() < step.expect {
        let left = until.saturating_duration_since(Instant::now());
        match conn.next(left) {
            Some(frame) => {
                let closed = frame.get("$closed").is_some();
                received.push(normalise(&frame, replies, ours));
                if closed {
                    return received;
                }
            }
            None => return received,
        }
    }
    // Whatever else comes within the quiet window is recorded too.
    while let Some(frame) = conn.next(step.quiet) {
        let closed = frame.get("$closed").is_some();
        received.push(normalise(&frame, replies, ours));
        if closed {
            break;
        }
    }
    received
}
