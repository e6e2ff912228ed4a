//! A SockJS peer of the SockJS bridge (vertx-web's `SockJSHandler.bridge`
//! at `/eventbus`, and codecbus's `Bridge::listen_sockjs`): its info
//! request, and a session over the WebSocket transport run step by step
//! and recorded, so that the Vert.x reference's answers (the committed
//! `frames/sockjs/session.json`) and codecbus's compare.
//!
//! In a record, SockJS's own frames are strings (`"o"`, `"h"`), each frame
//! of an `a[...]` message is its JSON, a close frame `c[code, reason]` is
//! `{"$close": [code, reason]}` and the end of the WebSocket
//! `{"$closed": true}`. A reply address the server generated becomes
//! `$reply1`, `$reply2`, ... in the order it first came.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{WebSocketStream, client_async};

/// How long a step waits for the frames it expects.
const EXPECT_WITHIN: Duration = Duration::from_secs(5);

/// How long a step listens for frames it did not expect.
const QUIET: Duration = Duration::from_millis(200);

/// A WebSocket to a SockJS bridge.
pub(crate) struct Peer {
    ws: WebSocketStream<TcpStream>,
    /// Frames of a message taken but not returned yet.
    queue: std::collections::VecDeque<Value>,
    closed: bool,
}

impl Peer {
    /// Opens `path` on the bridge at 127.0.0.1:`port`.
    pub(crate) async fn open(port: u16, path: &str) -> Peer {
        let stream = TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap_or_else(|e| panic!("connect to the SockJS bridge at 127.0.0.1:{port}: {e}"));
        let url = format!("ws://127.0.0.1:{port}{path}");
        let (ws, response) = client_async(url.as_str(), stream)
            .await
            .unwrap_or_else(|e| panic!("the WebSocket handshake at {url}: {e}"));
        assert_eq!(response.status(), 101, "{url}");
        Peer {
            ws,
            queue: Default::default(),
            closed: false,
        }
    }

    /// Writes one SockJS message: the frames, each as a JSON string, in a
    /// JSON array.
    pub(crate) async fn send(&mut self, frames: &[Value]) {
        let texts: Vec<String> = frames.iter().map(Value::to_string).collect();
        self.send_text(&Value::from(texts).to_string()).await;
    }

    /// Writes one text message as it is.
    pub(crate) async fn send_text(&mut self, text: &str) {
        if self.ws.send(Message::text(text)).await.is_err() {
            self.closed = true;
        }
    }

    /// The next frame within `wait`, `None` when nothing came.
    pub(crate) async fn next(&mut self, wait: Duration) -> Option<Value> {
        if let Some(frame) = self.queue.pop_front() {
            return Some(frame);
        }
        if self.closed {
            return None;
        }
        let until = Instant::now() + wait;
        loop {
            let message = match timeout(
                until.saturating_duration_since(Instant::now()),
                self.ws.next(),
            )
            .await
            {
                Err(_) => return None,
                Ok(Some(Ok(message))) => message,
                Ok(Some(Err(_)) | None) => {
                    self.closed = true;
                    return Some(json!({"$closed": true}));
                }
            };
            let text = match message {
                Message::Text(text) => text.to_string(),
                Message::Binary(bytes) => {
                    return Some(json!({"$binary": serde_json::from_slice::<Value>(&bytes)
                        .unwrap_or_else(|_| Value::from(String::from_utf8_lossy(&bytes).into_owned()))}));
                }
                Message::Close(_) => {
                    self.closed = true;
                    return Some(json!({"$closed": true}));
                }
                _ => continue,
            };
            match text.split_at_checked(1) {
                Some(("a", frames)) => {
                    let frames: Vec<String> = serde_json::from_str(frames)
                        .unwrap_or_else(|_| panic!("not a SockJS a-frame: {text}"));
                    for frame in frames {
                        self.queue.push_back(
                            serde_json::from_str(&frame).unwrap_or(Value::String(frame)),
                        );
                    }
                    if let Some(frame) = self.queue.pop_front() {
                        return Some(frame);
                    }
                }
                Some(("c", close)) => {
                    let close: Value = serde_json::from_str(close).unwrap_or(Value::Null);
                    return Some(json!({"$close": close}));
                }
                _ => return Some(Value::String(text)),
            }
        }
    }

    /// The next frame, which must come within 5 s.
    pub(crate) async fn expect(&mut self) -> Value {
        self.next(EXPECT_WITHIN)
            .await
            .expect("a frame from the SockJS bridge within 5 s")
    }
}

/// One step of the session: the SockJS message sent (frames, or a raw
/// text), how many frames it waits for.
struct Step {
    sent: Value,
    expect: usize,
}

fn step(frames: Value, expect: usize) -> Step {
    Step {
        sent: frames,
        expect,
    }
}

/// The session: the bridge cases of the TCP fixtures that the JavaScript
/// clients meet, over SockJS.
fn steps() -> Vec<Step> {
    vec![
        step(json!([{"type": "ping"}]), 0),
        step(
            json!([{"type": "send", "address": "echo", "replyAddress": "r1",
                    "headers": {"h": "v"}, "body": {"a": 1}}]),
            1,
        ),
        step(
            json!([{"type": "send", "address": "secret", "body": {}}]),
            1,
        ),
        step(
            json!([{"type": "send", "address": "fail", "replyAddress": "r2", "body": {}}]),
            1,
        ),
        step(
            json!([{"type": "send", "address": "nobody", "replyAddress": "r3", "body": {}}]),
            1,
        ),
        step(json!([{"type": "register", "address": "news"}]), 0),
        step(
            json!([{"type": "send", "address": "publish.trigger", "body": {"n": 5}}]),
            1,
        ),
        step(
            json!([{"type": "publish", "address": "news", "body": {"n": 6}}]),
            1,
        ),
        step(json!([{"type": "unregister", "address": "news"}]), 0),
        step(
            json!([{"type": "unregister", "address": "client.nothing"}]),
            0,
        ),
        step(json!([{"type": "register", "address": "secret"}]), 1),
        step(json!([{"type": "send", "body": {}}]), 1),
        step(json!([{"address": "echo", "body": {}}]), 1),
        step(json!([{"type": "zap", "address": "echo", "body": {}}]), 1),
        step(json!(["not json"]), 1),
        step(
            json!([{"type": "send", "address": "match.echo", "replyAddress": "r4",
                    "body": {"action": "no"}}]),
            1,
        ),
        step(
            json!([{"type": "send", "address": "echo", "replyAddress": "r5", "body": 1},
                   {"type": "send", "address": "echo", "replyAddress": "r6", "body": "two"}]),
            2,
        ),
        step(json!([{"type": "register", "address": "client.page"}]), 0),
        step(
            json!([{"type": "send", "address": "ask.client", "replyAddress": "r7",
                    "body": {"address": "client.page", "body": {"q": 21}}}]),
            1,
        ),
        // The answer to the request the bus made: at the reply address
        // the last step brought.
        step(
            json!([{"type": "send", "address": "$reply1", "body": {"answer": 42}}]),
            1,
        ),
        step(json!({"type": "ping"}), 1),
    ]
}

/// What the session received, step by step: `[{"sent":…, "received":[…]}]`.
pub(crate) async fn run_session(port: u16) -> Value {
    let mut peer = Peer::open(port, "/eventbus/123/abcdefgh/websocket").await;
    let mut record = vec![json!({"sent": "(open)", "received": [peer.expect().await]})];
    let mut replies: HashMap<String, String> = HashMap::new();
    for step in steps() {
        let mut sent = step.sent.to_string();
        for (name, real) in &replies {
            sent = sent.replace(name.as_str(), real);
        }
        let sent: Value = serde_json::from_str(&sent).expect("JSON");
        match sent.as_array() {
            Some(frames) => {
                // A string element is sent as written (not JSON inside).
                let texts: Vec<String> = frames
                    .iter()
                    .map(|f| match f {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    })
                    .collect();
                peer.send_text(&Value::from(texts).to_string()).await;
            }
            None => peer.send_text(&sent.to_string()).await,
        }
        let mut received = Vec::new();
        for _ in 0..step.expect {
            match peer.next(EXPECT_WITHIN).await {
                Some(frame) => received.push(frame),
                None => break,
            }
        }
        while let Some(frame) = peer.next(QUIET).await {
            received.push(frame);
        }
        for frame in &mut received {
            if let Some(reply) = frame.get("replyAddress").and_then(Value::as_str) {
                let name = format!("$reply{}", replies.len() + 1);
                replies.insert(name.clone(), reply.to_string());
                frame["replyAddress"] = Value::String(name);
            }
        }
        record.push(json!({"sent": step.sent, "received": received}));
    }
    Value::Array(record)
}

/// The committed record of the Vert.x reference's session.
pub(crate) fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bridge/frames/sockjs/session.json")
}

/// `method path` on 127.0.0.1:`port` (HTTP/1.0, with `extra` header
/// lines): the status code, the headers (names in lower case) and the body.
pub(crate) async fn http(
    port: u16,
    method: &str,
    path: &str,
    extra: &str,
) -> (u16, HashMap<String, String>, String) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect to the SockJS bridge");
    let request = format!("{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n{extra}\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = Vec::new();
    timeout(Duration::from_secs(10), stream.read_to_end(&mut response))
        .await
        .expect("an answer within 10 s")
        .expect("read");
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, body.to_string())
}
