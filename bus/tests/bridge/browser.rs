//! The JavaScript bridge clients from npm (`@vertx/eventbus-bridge-client.js`
//! 1.0.0 and `vertx3-eventbus-client` 3.9.4, over `sockjs-client` 1.6.1),
//! installed once into a folder under the target folder, run in a page in
//! headless Chromium (Debian's `chromium`) driven over the DevTools
//! protocol on a pipe (`--remote-debugging-pipe`: fd 3 in, fd 4 out, one
//! JSON message per NUL-terminated chunk). Chromium runs in a process group
//! of its own, which is killed when the [`Browser`] drops, so nothing
//! outlives the test.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The npm packages the pages load, pinned.
const PACKAGES: [&str; 3] = [
    "@vertx/eventbus-bridge-client.js@1.0.0",
    "vertx3-eventbus-client@3.9.4",
    "sockjs-client@1.6.1",
];

/// The target folder: `CARGO_TARGET_DIR`, or the one this test binary is
/// in (`<target>/<profile>/deps/<test>`), from any package.
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().nth(3).map(Path::to_path_buf))
        .expect("the test binary is in <target>/<profile>/deps")
}

/// The `node_modules` folder of the clients, installed with npm once.
///
/// # Panics
///
/// When npm is missing, saying how to install it, or cannot install the
/// packages.
pub(crate) fn npm_clients() -> PathBuf {
    let dir = target_dir().join("npm-bridge");
    let marker = dir.join(".installed");
    let wanted = PACKAGES.join(" ");
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == wanted) {
        return dir.join("node_modules");
    }
    std::fs::create_dir_all(&dir).expect("create the npm folder");
    let has_npm = Command::new("sh")
        .args(["-c", "command -v npm"])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        has_npm,
        "the browser test needs npm, which is not installed: apt-get install npm"
    );
    // One install at a time (tests of two packages may ask at once); the
    // one that waited finds the marker written.
    let script = r#"exec 9>"$0/.lock"
        flock 9
        [ "$(cat "$0/.installed" 2>/dev/null)" = "$*" ] && exit 0
        npm install --no-audit --no-fund --silent --prefix "$0" "$@" || exit 1
        printf '%s' "$*" > "$0/.installed""#;
    let installed = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(&dir)
        .args(PACKAGES)
        .stdin(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("run sh: {e}"));
    assert!(
        installed.success(),
        "npm could not install {wanted} into {}",
        dir.display()
    );
    dir.join("node_modules")
}

/// A file of an installed package.
pub(crate) fn read(modules: &Path, file: &str) -> Vec<u8> {
    let path = modules.join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Debian's Chromium.
///
/// # Panics
///
/// When it is not installed, saying how to install it.
fn chromium() -> PathBuf {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "the browser test needs headless Chromium, which is not installed: \
                 apt-get install -y chromium (scripts/test installs it)"
            )
        })
}

/// A headless Chromium, driven over its DevTools pipe.
pub(crate) struct Browser {
    child: Child,
    input: ChildStdin,
    messages: mpsc::Receiver<Value>,
    next_id: u64,
    profile: PathBuf,
}

impl Browser {
    /// Starts Chromium with a fresh profile, on loopback only.
    pub(crate) fn start() -> Browser {
        let chromium = chromium();
        let profile = std::env::temp_dir().join(format!(
            "codecbus-bridge-chromium-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&profile).expect("create a Chromium profile folder");
        // The pipe: our stdin becomes Chromium's fd 3 (what it reads), our
        // stdout its fd 4 (what it writes).
        let mut child = Command::new("bash")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>/dev/null"#)
            .arg(&chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", chromium.display()));
        let input = child.stdin.take().expect("piped stdin");
        let output = child.stdout.take().expect("piped stdout");
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut output = BufReader::new(output);
            let mut chunk = Vec::new();
            while output.read_until(0, &mut chunk).is_ok_and(|n| n > 0) {
                if chunk.last() == Some(&0) {
                    chunk.pop();
                }
                if let Ok(message) = serde_json::from_slice(&chunk)
                    && tx.send(message).is_err()
                {
                    return;
                }
                chunk.clear();
            }
        });
        Browser {
            child,
            input,
            messages,
            next_id: 1,
            profile,
        }
    }

    /// Calls `method` (in the page `session` when given) and returns its
    /// result.
    ///
    /// # Panics
    ///
    /// On an error answer, or none within 30 s.
    pub(crate) fn call(&mut self, method: &str, params: Value, session: Option<&str>) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = session.into();
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.input
            .write_all(&bytes)
            .and_then(|()| self.input.flush())
            .unwrap_or_else(|e| panic!("write to Chromium's DevTools pipe: {e}"));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let answer = self
                .messages
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to {method} from Chromium within 30 s"));
            if answer["id"] == id {
                assert!(
                    answer.get("error").is_none(),
                    "{method} failed: {}",
                    answer["error"]
                );
                return answer["result"].clone();
            }
        }
    }

    /// Opens `url` in a new page; the page's session.
    pub(crate) fn open(&mut self, url: &str) -> String {
        let target = self.call("Target.createTarget", json!({"url": url}), None);
        let target = target["targetId"]
            .as_str()
            .expect("a target id")
            .to_string();
        let attached = self.call(
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
            None,
        );
        attached["sessionId"]
            .as_str()
            .expect("a session id")
            .to_string()
    }

    /// The value of `expression` in the page, once it is not `null` nor
    /// undefined, within `wait`.
    ///
    /// # Panics
    ///
    /// When it stays unset for `wait`.
    pub(crate) fn wait_for(&mut self, session: &str, expression: &str, wait: Duration) -> Value {
        let deadline = Instant::now() + wait;
        loop {
            let evaluated = self.call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true}),
                Some(session),
            );
            let value = &evaluated["result"]["value"];
            if !value.is_null() {
                return value.clone();
            }
            assert!(
                Instant::now() < deadline,
                "the page did not set {expression} within {wait:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let mut bytes = json!({"id": 0, "method": "Browser.close"})
            .to_string()
            .into_bytes();
        bytes.push(0);
        let _ = self.input.write_all(&bytes);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Whatever is left of Chromium's processes (its group's id is the
        // child's pid) goes.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// A port number nobody listens on now: a unique name.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

/// The test page for the client whose script is at `client_script`: it
/// registers handlers, sends, requests, publishes and is refused, and sets
/// `window.result` (JSON) once all five answers came, or after 15 s.
/// The page registers `client.<name>` for the bus's request. With a
/// `transport`, SockJS is held to it (`transports: [...]`), and the
/// result names the transport SockJS used.
pub(crate) fn page(name: &str, client_script: &str, transport: Option<&str>) -> String {
    let options = match transport {
        Some(t) => format!("{{transports: ['{t}']}}"),
        None => "{}".to_owned(),
    };
    format!(
        r#"<!doctype html>
<html><head><meta charset="utf-8"><title>codecbus SockJS bridge test</title>
<script src="/js/sockjs.min.js"></script>
<script src="{client_script}"></script>
</head><body>
<script>
const result = {{errors: [], news: null, echo: null, failed: null, asked: null, answered: null}};
let done = 0;
function finish() {{ if (++done === 5) window.result = JSON.stringify(result); }}
setTimeout(() => {{
  if (!window.result) window.result = JSON.stringify(Object.assign({{timedOut: true}}, result));
}}, 15000);
const eb = new EventBus(location.origin + '/eventbus', {options});
eb.onerror = (e) => {{ result.errors.push(e); finish(); }};
eb.onopen = () => {{
  result.transport = eb.sockJSConn && eb.sockJSConn.transport;
  eb.registerHandler('client.{name}', (err, msg) => {{
    result.asked = {{address: msg.address, body: msg.body}};
    msg.reply({{answer: msg.body.q * 2}});
  }});
  eb.registerHandler('news', (err, msg) => {{
    result.news = {{body: msg.body, headers: msg.headers || null}};
    finish();
  }});
  eb.send('browser.sink', {{from: 'page'}}, {{h: 'v'}});
  eb.send('echo', {{n: 1}}, {{h: 'v'}}, (err, reply) => {{
    result.echo = {{err: err, body: reply && reply.body, headers: reply && reply.headers}};
    finish();
  }});
  eb.send('fail', {{}}, (err, reply) => {{ result.failed = err; finish(); }});
  eb.send('secret', {{}});
  eb.send('ask.client', {{address: 'client.{name}', body: {{q: 21}}}}, (err, reply) => {{
    result.answered = {{err: err, body: reply && reply.body}};
    finish();
  }});
  eb.publish('publish.trigger', {{n: 7}});
}};
</script>
</body></html>
"#
    )
}
