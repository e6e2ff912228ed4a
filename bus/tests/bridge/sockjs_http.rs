//! SockJS's HTTP transports (xhr-polling, xhr-streaming, eventsource,
//! htmlfile, jsonp): one session driver (`sockjs_http.py`, standard
//! Python), run against codecbus's SockJS bridge serving the reference
//! consumers, and its record compared with the one it made against
//! vertx-web 3.9.4 (`frames/sockjs_http/<transport>.json`), but for the
//! deviations listed, each with its reason.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use std::sync::{Arc, Mutex};

use codecbus_bus::EventBus;
use codecbus_bus::bridge::{Bridge, BridgeEventType, SockJsOptions};
use serde_json::{Value, json};

/// The transports, as the driver names them.
pub(crate) const TRANSPORTS: [&str; 5] = [
    "xhr-streaming",
    "xhr-polling",
    "eventsource",
    "htmlfile",
    "jsonp",
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bridge")
}

/// The driver's record of a session over `transport` with the bridge at
/// 127.0.0.1:`port`.
///
/// # Panics
///
/// When python3 is missing, or the driver fails.
pub(crate) fn run(port: u16, transport: &str) -> Value {
    let out = Command::new("python3")
        .arg(dir().join("sockjs_http.py"))
        .arg(port.to_string())
        .arg(transport)
        .stdin(Stdio::null())
        .output()
        .expect("python3 runs the SockJS session driver (apt-get install python3)");
    assert!(
        out.status.success(),
        "sockjs_http.py {transport}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the driver prints JSON")
}

/// The record vertx-web 3.9.4 gave.
fn fixture(transport: &str) -> Value {
    let path = dir().join(format!("frames/sockjs_http/{transport}.json"));
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Where codecbus answers otherwise, on purpose: the JSON Pointer in the
/// record (of every transport), what codecbus has there, and why.
struct Deviation {
    pointer: &'static str,
    value: Value,
    why: &'static str,
}

fn deviations() -> Vec<Deviation> {
    const ORPHAN: &str = "vertx-web 3.9.4 answers a second receiving request with c[2010] and, when that request ends, forgets the first one, which is still open: the first then receives nothing more and a third request takes the session over. codecbus keeps the first request the session's: it receives the next message, and the third gets c[2010] too";
    vec![
        Deviation {
            pointer: "/close/first_receiver_after_second",
            value: json!([{"address": "r9", "body": 9, "headers": {"echoed": "true"}, "type": "rec"}]),
            why: ORPHAN,
        },
        Deviation {
            pointer: "/close/third_receiver/received",
            value: json!([{"$close": [2010, "Another connection still open"]}, {"$end": true}]),
            why: ORPHAN,
        },
    ]
}

/// Every deviation says why.
#[test]
fn every_deviation_says_why() {
    for d in deviations() {
        assert!(d.why.len() > 40, "{}", d.pointer);
        assert!(
            fixture("jsonp").pointer(d.pointer).is_some(),
            "{}",
            d.pointer
        );
    }
}

/// `detail` members (codecbus's text beyond Vert.x's frames) taken out.
fn without_detail(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("type").and_then(Value::as_str) == Some("err") {
                map.remove("detail");
            }
            map.values_mut().for_each(without_detail);
        }
        Value::Array(items) => items.iter_mut().for_each(without_detail),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_transports_match_vertx() {
    // A bridge for each transport (as the records were made one at a
    // time): the sessions' publications do not reach each other.
    let mut bridges = Vec::new();
    for transport in TRANSPORTS {
        let (bus, consumers, server) = crate::reference_sockjs(SockJsOptions::new()).await;
        let port = server.local_addr().port();
        bridges.push((transport, port, (bus, consumers, server)));
    }
    let ports: Vec<(&str, u16)> = bridges.iter().map(|(t, p, _)| (*t, *p)).collect();
    let records = in_parallel(ports, |(t, port)| (t, run(port, t))).await;
    let deviations = deviations();
    let mut differ = Vec::new();
    for (transport, mut got) in records {
        without_detail(&mut got);
        // `CODECBUS_SOCKJS_HTTP_DUMP=DIR`: codecbus's records written there,
        // to compare by hand.
        if let Some(dump) = std::env::var_os("CODECBUS_SOCKJS_HTTP_DUMP") {
            let path = PathBuf::from(dump).join(format!("{transport}.json"));
            std::fs::write(&path, serde_json::to_string_pretty(&got).unwrap()).unwrap();
        }
        let mut want = fixture(transport);
        for d in &deviations {
            if let Some(slot) = want.pointer_mut(d.pointer) {
                *slot = d.value.clone();
            }
        }
        if got != want {
            differ.push(format!(
                "{transport}: codecbus\n{}\nVert.x (with the deviations)\n{}",
                serde_json::to_string_pretty(&got).unwrap(),
                serde_json::to_string_pretty(&want).unwrap()
            ));
        }
    }
    for (_, _, (_bus, _consumers, server)) in bridges {
        server.shutdown().await;
    }
    assert!(differ.is_empty(), "{}", differ.join("\n\n"));
}

/// Both JavaScript clients from npm, in Chromium, with SockJS held to each
/// HTTP transport: the page's whole round (handlers, sends, requests, a
/// failure, the bus's request answered, a refusal) over it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_javascript_clients_in_chromium_over_each_http_transport() {
    crate::javascript_clients_in_chromium_over(
        None,
        &[
            Some("xhr-streaming"),
            Some("xhr-polling"),
            Some("eventsource"),
            Some("htmlfile"),
            Some("jsonp-polling"),
        ],
    )
    .await;
}

/// Both JavaScript clients from npm, in Node, with SockJS held to each
/// transport sockjs-client has there (htmlfile and jsonp need a page):
/// the same round as in the browser, through a bridge whose event hook
/// sees each session's events and marks each send with its transport.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_javascript_clients_in_node_over_each_transport() {
    let modules = tokio::task::spawn_blocking(crate::browser::npm_clients)
        .await
        .unwrap();
    // A bridge for each run, so that one run's publications do not reach
    // another's handlers.
    let mut bridges = Vec::new();
    let mut seen = Vec::new();
    for _ in 0..8 {
        let bus = EventBus::new();
        let consumers = crate::reference_consumers(&bus);
        let kinds: Arc<Mutex<Vec<BridgeEventType>>> = Arc::default();
        let options = crate::reference_options().on_event({
            let kinds = Arc::clone(&kinds);
            move |mut event| {
                kinds.lock().unwrap().push(event.kind());
                if event.kind() == BridgeEventType::Send {
                    let via = event.connection().transport();
                    event.set_header("via", via);
                }
                async move { event.allow() }
            }
        });
        let server = Bridge::new(&bus, options)
            .unwrap()
            .listen_sockjs("127.0.0.1:0", SockJsOptions::new())
            .await
            .unwrap();
        bridges.push((bus, consumers, server));
        seen.push(kinds);
    }
    let mut ports: Vec<u16> = bridges
        .iter()
        .map(|(_, _, s)| s.local_addr().port())
        .collect();
    let script = dir().join("node_client.js");
    let run = move |port: u16, client: &'static str, transport: &'static str| {
        let out = Command::new("node")
            .arg(&script)
            .arg(port.to_string())
            .arg(client)
            .arg(transport)
            .env("NODE_PATH", &modules)
            .stdin(Stdio::null())
            .output()
            .expect("node runs the client (apt-get install nodejs)");
        assert!(
            out.status.success(),
            "node {client} {transport}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let result: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "node {client} {transport} printed {:?}: {e}",
                String::from_utf8_lossy(&out.stdout)
            )
        });
        (client, transport, result)
    };
    let jobs: Vec<_> = ["v4", "v3"]
        .into_iter()
        .flat_map(|client| {
            ["websocket", "xhr-streaming", "xhr-polling", "eventsource"]
                .map(|transport| (client, transport))
        })
        .map(|(client, transport)| {
            let port = ports.pop().expect("a bridge for each run");
            (port, client, transport)
        })
        .collect();
    let runs = in_parallel(jobs, move |(port, client, transport)| {
        run(port, client, transport)
    })
    .await;
    for (client, transport, result) in runs {
        let name = format!("node-{client}-{transport}");
        assert_eq!(result["transport"], transport, "{name}: {result}");
        crate::check_round(
            &name,
            &result,
            json!({"h": "v", "echoed": "true", "via": "sockjs"}),
        );
    }
    for (_bus, _consumers, server) in bridges {
        server.shutdown().await;
    }
    // Every session went through the hook: opened, registered, sent,
    // published, received, closed.
    for kinds in seen {
        let kinds = kinds.lock().unwrap().clone();
        for kind in [
            BridgeEventType::SocketCreated,
            BridgeEventType::Register,
            BridgeEventType::Registered,
            BridgeEventType::Send,
            BridgeEventType::Publish,
            BridgeEventType::Receive,
            BridgeEventType::SocketClosed,
        ] {
            assert!(kinds.contains(&kind), "{kind:?} in {kinds:?}");
        }
    }
}

/// `run` on each job, each on a thread of its own (from a blocking task):
/// the results in the jobs' order.
async fn in_parallel<J, R>(jobs: Vec<J>, run: impl Fn(J) -> R + Send + Sync + 'static) -> Vec<R>
where
    J: Send + 'static,
    R: Send + 'static,
{
    tokio::task::spawn_blocking(move || {
        std::thread::scope(|scope| {
            let run = &run;
            let threads: Vec<_> = jobs
                .into_iter()
                .map(|job| scope.spawn(move || run(job)))
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        })
    })
    .await
    .unwrap()
}
