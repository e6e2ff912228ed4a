//! The Vert.x 3.9.4 reference node (`scripts/vertx-reference`), started on
//! free loopback ports for one test and stopped with it: killed when the
//! handle drops, and ending by itself when its stdin (held here) closes.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running reference node.
pub(crate) struct Reference {
    child: Child,
    /// The TCP event bus bridge's port.
    pub(crate) tcp: u16,
    /// The HTTP port of the SockJS bridge (`/eventbus`).
    pub(crate) sockjs: u16,
}

impl Drop for Reference {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/vertx-reference")
}

/// Panics, saying how to install it, when `tool` is missing.
fn require(tool: &str, install: &str) {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "the Vert.x reference needs `{tool}`, which is not installed: {install}"
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Fetches (once) and compiles the reference, then starts it.
///
/// # Panics
///
/// When java, javac or npm is missing (naming the package to install), or
/// the node does not start.
pub(crate) fn start() -> Reference {
    require("java", "apt-get install openjdk-17-jdk-headless");
    require("javac", "apt-get install openjdk-17-jdk-headless");
    let prepared = Command::new("bash")
        .arg(script())
        .arg("--prepare")
        .status()
        .expect("run scripts/vertx-reference --prepare");
    assert!(
        prepared.success(),
        "scripts/vertx-reference --prepare failed (it needs npm, apt-get install npm, and the npm registry for vertx3-full@3.9.4)"
    );
    // A port taken between the check and the bind: try other ports.
    let mut last = String::new();
    for _ in 0..3 {
        let (tcp, sockjs) = (free_port(), free_port());
        match try_start(tcp, sockjs) {
            Ok(reference) => return reference,
            Err(why) => last = why,
        }
    }
    panic!("the Vert.x reference did not start: {last}");
}

/// Starts a node on the given ports (prepared by [`start`] already): a
/// node started again where another one was killed.
pub(crate) fn try_start(tcp: u16, sockjs: u16) -> Result<Reference, String> {
    let mut child = Command::new("bash")
        .arg(script())
        .arg(tcp.to_string())
        .arg(sockjs.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("spawn scripts/vertx-reference: {e}"))?;
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let mut reference = Reference { child, tcp, sockjs };
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(line) => {
            let ready: serde_json::Value = serde_json::from_str(line.trim())
                .map_err(|_| format!("the node printed {line:?}, not its ports"))?;
            if ready["tcp"] == tcp && ready["sockjs"] == sockjs {
                Ok(reference)
            } else {
                Err(format!("the node printed {line:?}"))
            }
        }
        Err(_) => {
            let status = reference.child.try_wait().ok().flatten();
            Err(format!("no ready line within 60 s (exit: {status:?})"))
        }
    }
}

/// The SockJS bridge's `GET /eventbus/info` answer, as JSON.
pub(crate) fn sockjs_info(port: u16) -> serde_json::Value {
    use std::io::{Read, Write};
    let mut stream =
        std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect to the SockJS bridge");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    stream
        .write_all(b"GET /eventbus/info HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .expect("write the request");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    serde_json::from_str(body).unwrap_or_else(|_| panic!("not a SockJS info answer: {response}"))
}
