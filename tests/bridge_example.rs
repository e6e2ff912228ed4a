//! `examples/bridge` as a process, its page in headless Chromium: the
//! page connects, requests `demo.upper` and the typed `demo.order`,
//! publishes to `demo.chat` and receives it back, shows the ticks, and is
//! refused `demo.secret`, each as its log shows it.
#![cfg(unix)]

#[path = "../bus/tests/bridge/browser.rs"]
#[allow(dead_code)]
mod browser;
#[path = "support/example.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The example, in a process group of its own that goes when this drops.
struct Example {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Drop for Example {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

#[test]
fn the_demo_page_talks_to_the_bus() {
    let modules = browser::npm_clients();
    let binary = support::example("bridge", &["bridge"]);
    let listen = format!("127.0.0.1:{}", free_port());
    let mut child = Command::new(&binary)
        .args(["--listen", &listen, "--seconds", "120", "--js"])
        .arg(&modules)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", binary.display()));
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let example = Example { child, lines };
    let line = example
        .lines
        .recv_timeout(Duration::from_secs(30))
        .expect("the example says where it serves within 30 s");
    let url = format!("http://{listen}/");
    assert_eq!(
        line,
        format!("serving the bus on {url} (open it in a browser)")
    );

    let mut chromium = browser::Browser::start();
    let page = chromium.open(&url);
    let opened = chromium.wait_for(
        &page,
        "document.getElementById('state').dataset.state === 'open' || null",
        Duration::from_secs(20),
    );
    assert_eq!(opened, true);
    chromium.call(
        "Runtime.evaluate",
        serde_json::json!({"expression": "for (const id of ['upper', 'order', 'chat', 'secret']) \
            document.querySelector('#' + id + ' button').click()"}),
        Some(&page),
    );
    let wanted = [
        r#"demo.upper answered "HELLO, BUS""#,
        r#""sku":"tea","total_cents":1425"#,
        r#"chat: {"text":"hi everyone"}"#,
        r#""body":"access_denied""#,
    ];
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let (log, ticks) = loop {
        let shown = chromium.wait_for(
            &page,
            "JSON.stringify([document.getElementById('log').textContent, \
                             document.getElementById('ticks').textContent])",
            Duration::from_secs(5),
        );
        let shown: (String, String) = serde_json::from_str(shown.as_str().unwrap()).unwrap();
        let ticking = shown.1.parse::<u64>().is_ok();
        if ticking && wanted.iter().all(|w| shown.0.contains(w)) {
            break shown;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the page's log lacks some of {wanted:?} (ticks: {}):\n{}",
            shown.1,
            shown.0
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(log.contains("connected to"), "{log}");
    assert!(ticks.parse::<u64>().is_ok(), "{ticks}");
    drop(chromium);
    drop(example);
}
