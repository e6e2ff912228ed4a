//! The TCP event bus bridge, pinned to Vert.x 3.9.4's frames case by case.
//!
//! `bridge/cases.rs` names the cases, `bridge/runner.rs` runs them as a
//! bridge client, and `bridge/frames/<case>.json` holds what the Vert.x
//! reference (`tests/vertx/ReferenceBridge.java`, started by
//! `scripts/vertx-reference`) answered. codecbus's bridge, serving a bus
//! with the reference's consumers and permissions ([`reference_bus`]),
//! must answer the same, but for the differences listed in
//! [`deviations`], each with its reason. With `CODECBUS_BRIDGE_CAPTURE=1`
//! the live Vert.x test writes the fixtures instead of comparing with
//! them.
#![cfg(feature = "bridge")]

#[path = "common/authority.rs"]
mod authority;
#[path = "bridge/cases.rs"]
mod cases;
#[path = "bridge/events.rs"]
mod events;
#[path = "bridge/python.rs"]
mod python;
#[path = "bridge/runner.rs"]
mod runner;
#[path = "bridge/tls.rs"]
mod tls;
#[path = "bridge/vertx.rs"]
mod vertx;

use std::time::Duration;

use codecbus_bus::bridge::{Bridge, BridgeOptions, BridgeServer, PermittedOptions};
use codecbus_bus::{DeliveryOptions, EventBus, Message, MessageConsumer, ReplyOptions};
use codecbus_json::{JsValue, jsobj};
use serde_json::{Value, json};

use crate::runner::{Client, Record};

/// The consumers of the Vert.x reference, on a codecbus bus.
/// The request a message `{"address": A, "body": B}` asks for: `B` at `A`,
/// within 5 s.
async fn relay(
    bus: &EventBus,
    m: &Message<JsValue>,
) -> Result<Message<JsValue>, codecbus_bus::RequestError> {
    let body = m.body().as_object().cloned().unwrap_or_default();
    let target = body.get("address").and_then(JsValue::as_str).unwrap_or("");
    let question = body.get("body").cloned().unwrap_or(JsValue::Null);
    let options = DeliveryOptions::new().timeout(Duration::from_secs(5));
    bus.request_with::<JsValue>(target, question, options).await
}

pub(crate) fn reference_consumers(bus: &EventBus) -> Vec<MessageConsumer> {
    let echo = |m: Message<JsValue>| async move {
        let mut headers = m.headers().clone();
        headers.insert("echoed", "true");
        m.reply_with(m.body().clone(), ReplyOptions::new().headers(headers))
    };
    let mut consumers = vec![
        bus.consumer("echo", echo),
        bus.consumer("regex.echo", echo),
        bus.consumer("match.echo", echo),
        bus.consumer("secret", echo),
        bus.consumer("fail", |m: Message<JsValue>| async move {
            m.fail(42, "it failed")
        }),
    ];
    let trigger_bus = bus.clone();
    consumers.push(bus.consumer("publish.trigger", move |m: Message<JsValue>| {
        let bus = trigger_bus.clone();
        async move {
            let n = m
                .body()
                .as_object()
                .and_then(|o| o.get("n").cloned())
                .unwrap_or(JsValue::Null);
            let news = JsValue::from(jsobj! {"from": "vertx", "n": n});
            let options = DeliveryOptions::new().header("origin", "vertx");
            bus.publish_with("news", news, options).await.map(|_| ())
        }
    }));
    let ask_bus = bus.clone();
    consumers.push(bus.consumer("ask.client", move |m: Message<JsValue>| {
        let bus = ask_bus.clone();
        async move {
            match relay(&bus, &m).await {
                Ok(answer) => m.reply(answer.body().clone()),
                Err(e) => match e.failure_code() {
                    Some(code) => m.fail(code, e.to_string()),
                    None => Err(e.to_string().into()),
                },
            }
        }
    }));
    let converse_client_bus = bus.clone();
    consumers.push(bus.consumer("converse.client", move |m: Message<JsValue>| {
        let bus = converse_client_bus.clone();
        async move {
            match relay(&bus, &m).await {
                Ok(answer) => {
                    let mut said = jsobj! {"reply": answer.body().clone()};
                    if !answer.expects_reply() {
                        said = said.set("asked", false);
                        // Nothing to reply to when the request was a send.
                        let _ = m.reply(JsValue::from(said));
                        return Ok(());
                    }
                    let ok = JsValue::from(jsobj! {"ok": true});
                    let last = match answer.reply_and_request::<JsValue>(ok).await {
                        Ok(last) => last.body().clone(),
                        Err(e) => JsValue::from(e.to_string()),
                    };
                    let said = said.set("asked", true).set("last", last);
                    let _ = m.reply(JsValue::from(said));
                    Ok(())
                }
                // A failure without a code of its own: the handler's
                // error (Vert.x's `fail(-1, ..)` on the wire).
                Err(e) => Err(codecbus_bus::ReplyError::from(e.to_string())),
            }
        }
    }));
    let converse_bus = bus.clone();
    consumers.push(bus.consumer("converse", move |m: Message<JsValue>| {
        let bus = converse_bus.clone();
        async move {
            let ask = JsValue::from(jsobj! {"ask": "and you?"});
            let heard = match m.reply_and_request::<JsValue>(ask).await {
                Ok(answer) => jsobj! {"heard": answer.body().clone()},
                Err(e) => jsobj! {"failed": e.failure_code().unwrap_or(-1)},
            };
            bus.publish("news", JsValue::from(heard)).await.map(|_| ())
        }
    }));
    consumers
}

/// The reference's permissions, and the frame limit under test.
pub(crate) fn reference_options() -> BridgeOptions {
    let mut options = BridgeOptions::new().max_frame(cases::TEST_MAX_FRAME);
    for address in [
        "echo",
        "fail",
        "news",
        "publish.trigger",
        "ask.client",
        "converse",
        "converse.client",
        "nobody",
    ] {
        options = options.inbound(PermittedOptions::new().address(address));
    }
    options
        .inbound(PermittedOptions::new().address_regex("^regex\\..+"))
        .inbound(
            PermittedOptions::new()
                .address("match.echo")
                .matching(jsobj! {"action": "allowed"}),
        )
        .outbound(PermittedOptions::new().address("news"))
        .outbound(PermittedOptions::new().address_regex("^client\\..+"))
}

/// A bus with the reference's consumers and a bridge in front of it.
async fn reference_bridge() -> (EventBus, Vec<MessageConsumer>, BridgeServer) {
    let bus = EventBus::new();
    let consumers = reference_consumers(&bus);
    let server = Bridge::new(&bus, reference_options())
        .unwrap()
        .listen("127.0.0.1:0")
        .await
        .unwrap();
    (bus, consumers, server)
}

/// Where codecbus answers otherwise than Vert.x 3.9.4, on purpose: the
/// case, the step, what codecbus answers there (the case ends after the
/// step when the answer closes the connection), and why.
struct Deviation {
    case: &'static str,
    step: usize,
    received: Value,
    why: &'static str,
}

fn deviations() -> Vec<Deviation> {
    vec![
        Deviation {
            case: "match",
            step: 1,
            received: json!([{"type": "err", "message": "access_denied"}]),
            why: "Vert.x 3.9.4's TCP bridge checks the address of an inbound permission only and lets any body through (its SockJS bridge checks `match`); codecbus checks `match` on both",
        },
        Deviation {
            case: "malformed_json",
            step: 0,
            received: json!([{"type": "err", "message": "invalid_json"}]),
            why: "Vert.x drops a frame that is not JSON without a word; codecbus says so, with the SockJS bridge's `invalid_json`",
        },
        Deviation {
            case: "missing_type",
            step: 0,
            received: json!([{"type": "err", "message": "missing_type"}]),
            why: "Vert.x's handler fails on a frame without a type and the connection stops answering (not even a ping) without being closed; codecbus answers with the SockJS bridge's `missing_type` and goes on",
        },
        Deviation {
            case: "missing_type",
            step: 1,
            received: json!([{"type": "pong"}]),
            why: "the connection goes on",
        },
        Deviation {
            case: "unknown_type",
            step: 0,
            received: json!([{"type": "err", "message": "unknown_type"}]),
            why: "Vert.x fails on an unknown type before it reaches its own `unknown_type` answer and the connection stops answering; codecbus sends that answer and goes on",
        },
        Deviation {
            case: "unknown_type",
            step: 1,
            received: json!([{"type": "pong"}]),
            why: "the connection goes on",
        },
        Deviation {
            case: "body_not_object",
            step: 0,
            received: json!([{"type": "message", "address": "my.reply", "headers": {"echoed": "true"},
                              "body": "text", "send": true}]),
            why: "Vert.x 3.9.4's TCP bridge takes JSON objects as bodies only, and a string body stops the connection; codecbus carries any JSON value (a `String` or a number is a message type like any other)",
        },
        Deviation {
            case: "body_not_object",
            step: 1,
            received: json!([{"type": "pong"}]),
            why: "the connection goes on",
        },
        Deviation {
            case: "register_twice",
            step: 2,
            received: json!([{"type": "message", "address": "news", "headers": {},
                              "body": {"n": 1}, "send": false}]),
            why: "Vert.x registers a second consumer for the same address on the same connection, so each message comes twice, and an unregister removes one of them; codecbus keeps one registration per address and connection",
        },
        Deviation {
            case: "register_twice",
            step: 4,
            received: json!([]),
            why: "after the unregister nothing is left registered",
        },
        Deviation {
            case: "header_not_string",
            step: 0,
            received: json!([{"type": "message", "address": "my.reply",
                              "headers": {"n": "1", "echoed": "true"}, "body": {}, "send": true}]),
            why: "Vert.x's handler fails on a header that is not a string and the connection stops answering; codecbus takes a number or a boolean as its JSON text",
        },
        Deviation {
            case: "header_not_string",
            step: 1,
            received: json!([{"type": "pong"}]),
            why: "the connection goes on",
        },
        Deviation {
            case: "oversized",
            step: 0,
            received: json!([{"type": "err", "message": "frame_too_large"}]),
            why: "Vert.x reads a frame of any size into memory; codecbus has a frame limit (`BridgeOptions::max_frame`, 64 KiB in this test): a frame over it is skipped as it arrives, without being held, and answered with an `err` frame; the connection goes on",
        },
    ]
}

/// What codecbus must answer in `case`: the fixture with the deviations
/// applied.
fn expected(case: &cases::Case, deviations: &[Deviation]) -> Record {
    let mut record = runner::read_fixture(case);
    for d in deviations.iter().filter(|d| d.case == case.name) {
        let received: Vec<Value> = d.received.as_array().cloned().unwrap_or_default();
        let closes = received.iter().any(|f| f.get("$closed").is_some());
        record[d.step].received = received;
        if closes {
            record.truncate(d.step + 1);
        }
    }
    record
}

/// Members that carry free text beyond Vert.x's frame (`detail`), which
/// no fixture has.
fn without_detail(mut record: Record) -> Record {
    for step in &mut record {
        for frame in &mut step.received {
            if let Some(map) = frame.as_object_mut() {
                map.remove("detail");
            }
        }
    }
    record
}

/// codecbus's bridge answers every case as Vert.x did (the committed
/// fixtures), but for the listed deviations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_match_the_vertx_fixtures() {
    let (_bus, _consumers, server) = reference_bridge().await;
    let port = server.local_addr().port();
    let deviations = deviations();
    let mut differ = Vec::new();
    let records = tokio::task::spawn_blocking(move || runner::run_all(&cases::all(), port))
        .await
        .unwrap();
    for (case, got) in cases::all().into_iter().zip(records) {
        let want = expected(&case, &deviations);
        let got = without_detail(got);
        if got != want {
            differ.push(format!(
                "{}: codecbus answered\n{}\nVert.x (with the deviations) answers\n{}",
                case.name,
                serde_json::to_string_pretty(&runner::to_fixture(&case, &got)).unwrap(),
                serde_json::to_string_pretty(&runner::to_fixture(&case, &want)).unwrap(),
            ));
        }
    }
    server.shutdown().await;
    assert!(differ.is_empty(), "{}", differ.join("\n\n"));
}

/// Every deviation names a step of a case that has a fixture, and gives a
/// reason.
#[test]
fn deviations_name_real_steps() {
    let all = cases::all();
    for d in deviations() {
        let case = all
            .iter()
            .find(|c| c.name == d.case)
            .unwrap_or_else(|| panic!("no case {}", d.case));
        assert!(
            d.step < case.steps.len(),
            "{} has no step {}",
            d.case,
            d.step
        );
        assert!(!d.why.is_empty());
        let fixture = runner::read_fixture(case);
        assert_ne!(
            Value::Array(fixture[d.step].received.clone()),
            d.received,
            "{} step {}: not a deviation, Vert.x answers the same",
            d.case,
            d.step
        );
    }
}

/// The Vert.x reference answers every case as its committed fixture says
/// (or, with `CODECBUS_BRIDGE_CAPTURE=1`, writes the fixtures). Needs
/// java, javac and npm, and fails saying how to install what is missing.
#[test]
fn vertx_reference_frames_match_the_fixtures() {
    let reference = vertx::start();
    // The SockJS bridge of the same node answers its info request.
    let info = vertx::sockjs_info(reference.sockjs);
    assert_eq!(info["websocket"], true, "{info}");
    let capture = std::env::var_os("CODECBUS_BRIDGE_CAPTURE").is_some_and(|v| v == "1");
    let mut differ = Vec::new();
    let all = cases::all();
    let records = runner::run_all(&all, reference.tcp);
    for (case, record) in all.iter().zip(records) {
        if capture {
            runner::write_fixture(case, &record);
            continue;
        }
        let fixture = runner::read_fixture(case);
        if record != fixture {
            differ.push(format!(
                "{}: Vert.x answered\n{}\nthe fixture says\n{}",
                case.name,
                serde_json::to_string_pretty(&runner::to_fixture(case, &record)).unwrap(),
                serde_json::to_string_pretty(&runner::to_fixture(case, &fixture)).unwrap(),
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n\n"));
}

/// The Python client from PyPI talks to codecbus's bridge: a request and
/// its reply, a request from the bus to its registration, a publish to
/// it, a refusal. Needs python3 and PyPI, and fails saying so otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_from_pypi_talks_to_the_bridge() {
    let (_bus, _consumers, server) = reference_bridge().await;
    let port = server.local_addr().port();
    let report = tokio::task::spawn_blocking(move || python::run("python_client.py", port))
        .await
        .unwrap();
    let seen = &report["seen"];
    assert_eq!(
        seen["echo"]["body"],
        json!({"from": "python", "n": 1}),
        "{report}"
    );
    assert_eq!(seen["echo"]["headers"], json!({"h": "v", "echoed": "true"}));
    assert_eq!(seen["asked"]["address"], "client.py");
    assert_eq!(seen["asked"]["body"], json!({"q": 21}));
    assert_eq!(seen["answered"]["body"], json!({"answer": 42}), "{report}");
    assert_eq!(seen["news"]["body"], json!({"n": 7}));
    assert_eq!(seen["news"]["send"], false);
    assert_eq!(
        report["errors"],
        json!([{"type": "err", "message": "access_denied"}])
    );
    assert_eq!(seen["after"]["body"], json!({"after": "refusal"}));
    server.shutdown().await;
}

/// Runs `f` with a client of the bridge at `port`, off the runtime.
async fn with_client<T: Send + 'static>(
    port: u16,
    f: impl FnOnce(&mut Client) -> T + Send + 'static,
) -> T {
    tokio::task::spawn_blocking(move || f(&mut Client::open(port)))
        .await
        .unwrap()
}

// ----- beyond the fixtures: types, limits, cleanup -----

use codecbus_bus::RequestErrorKind;
use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Order {
    id: u64,
    sku: String,
    quantity: u32,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(immutable)]
struct Receipt {
    order: u64,
    total_cents: i64,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct Point {
    x: i32,
    y: i32,
}

pub(crate) async fn serve(bus: &EventBus, options: BridgeOptions) -> BridgeServer {
    Bridge::new(bus, options)
        .unwrap()
        .listen("127.0.0.1:0")
        .await
        .unwrap()
}

/// A derived type crosses as the JSON of its layout, both ways, decoded by
/// its own codec; a body it cannot read is the client's `err` frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_bodies_cross_as_json() {
    let bus = EventBus::new();
    let _shop = bus.consumer("shop.orders", |m: Message<Order>| async move {
        let total_cents = 475 * i64::from(m.body().quantity);
        m.reply(Receipt {
            order: m.body().id,
            total_cents,
        })
    });
    let _mirror = bus.consumer("mirror", |m: Message<Point>| async move {
        m.reply(Point {
            x: -m.body().x,
            y: -m.body().y,
        })
    });
    let options = BridgeOptions::new()
        .inbound(PermittedOptions::new().address("shop.orders"))
        .inbound(PermittedOptions::new().address("mirror"))
        .typed::<Order>("shop.orders")
        .typed::<Point>("mirror");
    let server = serve(&bus, options).await;
    let frames = with_client(server.local_addr().port(), |c| {
        c.send(
            &json!({"type": "send", "address": "shop.orders", "replyAddress": "r1",
                       "body": {"id": 7, "sku": "tea", "quantity": 2}}),
        );
        let receipt = c.expect();
        c.send(
            &json!({"type": "send", "address": "mirror", "replyAddress": "r2",
                       "body": [3, -4]}),
        );
        let mirrored = c.expect();
        c.send(
            &json!({"type": "send", "address": "shop.orders", "replyAddress": "r3",
                       "body": {"id": "seven", "sku": "tea", "quantity": 2}}),
        );
        let refused = c.expect();
        c.send(&json!({"type": "send", "address": "shop.orders", "body": {"sku": "tea"}}));
        let refused_send = c.expect();
        (receipt, mirrored, refused, refused_send)
    })
    .await;
    assert_eq!(
        frames.0,
        json!({"type": "message", "address": "r1", "headers": {},
               "body": {"order": 7, "total_cents": 950}, "send": true})
    );
    assert_eq!(frames.1["body"], json!([-3, 4]));
    assert_eq!(frames.2["type"], "err");
    assert_eq!(frames.2["address"], "r3");
    assert_eq!(frames.2["sourceAddress"], "shop.orders");
    assert_eq!(frames.2["failureType"], "ERROR");
    assert_eq!(frames.2["failureCode"], -1);
    let text = frames.2["message"].as_str().unwrap();
    assert!(text.contains("Order"), "{text}");
    assert_eq!(frames.3["type"], "err");
    assert_eq!(frames.3["message"], "invalid_body");
    server.shutdown().await;
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Question {
    a: i64,
    b: i64,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Sum {
    sum: i64,
}

/// A codecbus consumer's request reaches a client's registration with a
/// reply address, and the client's answer comes back as the declared
/// reply type; an answer that does not decode fails the request and is
/// the client's `err` frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bus_requests_a_client() {
    let bus = EventBus::new();
    let options = BridgeOptions::new()
        .outbound(PermittedOptions::new().address("client.calc"))
        .typed_request::<Question, Sum>("client.calc");
    let server = serve(&bus, options).await;
    let port = server.local_addr().port();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let client = tokio::task::spawn_blocking(move || {
        let mut c = Client::open(port);
        c.send(&json!({"type": "register", "address": "client.calc"}));
        c.send(&json!({"type": "ping"}));
        assert_eq!(c.expect(), json!({"type": "pong"}));
        ready_tx.send(()).unwrap();
        let asked = c.expect();
        let a = asked["body"]["a"].as_i64().unwrap();
        let b = asked["body"]["b"].as_i64().unwrap();
        c.send(&json!({"type": "send", "address": asked["replyAddress"],
                       "headers": {"by": "client"}, "body": {"sum": a + b}}));
        let asked_again = c.expect();
        c.send(
            &json!({"type": "send", "address": asked_again["replyAddress"],
                       "body": {"total": "wrong"}}),
        );
        let refused = c.expect();
        (asked, refused)
    });
    ready_rx.await.unwrap();
    let sum: Message<Sum> = bus
        .request("client.calc", Question { a: 2, b: 40 })
        .await
        .unwrap();
    assert_eq!(sum.body(), &Sum { sum: 42 });
    assert_eq!(sum.headers().get("by"), Some("client"));
    let err = bus
        .request::<Sum>("client.calc", Question { a: 1, b: 1 })
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    let (asked, refused) = client.await.unwrap();
    assert_eq!(asked["address"], "client.calc");
    assert_eq!(asked["send"], true);
    assert_eq!(asked["headers"], json!({}));
    assert_eq!(refused["message"], "invalid_body");
    server.shutdown().await;
}

/// When a client goes, its registrations go with it and the requests
/// waiting for its answer fail at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_connection_leaves_nothing_behind() {
    let bus = EventBus::new();
    let options = BridgeOptions::new().outbound(PermittedOptions::new().address("client.gone"));
    let server = serve(&bus, options).await;
    let port = server.local_addr().port();
    let (asked_tx, asked_rx) = tokio::sync::oneshot::channel::<()>();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let client = tokio::task::spawn_blocking(move || {
        let mut c = Client::open(port);
        c.send(&json!({"type": "register", "address": "client.gone"}));
        c.send(&json!({"type": "ping"}));
        assert_eq!(c.expect(), json!({"type": "pong"}));
        ready_tx.send(()).unwrap();
        let asked = c.expect();
        assert_eq!(asked["address"], "client.gone");
        drop(c); // goes without answering
        asked_tx.send(()).unwrap();
    });
    ready_rx.await.unwrap();
    let started = std::time::Instant::now();
    let err = bus
        .request::<JsValue>("client.gone", JsValue::from("anyone?"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert!(started.elapsed() < Duration::from_secs(5), "{err}");
    asked_rx.await.unwrap();
    client.await.unwrap();
    // The registration goes once the bridge sees the close.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let sent = bus.send("client.gone", JsValue::from(1)).await;
        if sent.is_err() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still registered");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.shutdown().await;
}

/// Outbound `match`: a client receives only the messages whose body
/// contains the subset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outbound_match_filters_what_a_client_receives() {
    let bus = EventBus::new();
    let options = BridgeOptions::new().outbound(
        PermittedOptions::new()
            .address("feed")
            .matching(jsobj! {"public": true}),
    );
    let server = serve(&bus, options).await;
    let port = server.local_addr().port();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let client = tokio::task::spawn_blocking(move || {
        let mut c = Client::open(port);
        c.send(&json!({"type": "register", "address": "feed"}));
        c.send(&json!({"type": "ping"}));
        assert_eq!(c.expect(), json!({"type": "pong"}));
        ready_tx.send(()).unwrap();
        let first = c.expect();
        let more = c.next(Duration::from_millis(300));
        (first, more)
    });
    ready_rx.await.unwrap();
    for (n, public) in [(1, false), (2, true)] {
        let body = JsValue::from(jsobj! {"n": n, "public": public});
        bus.publish("feed", body).await.unwrap();
    }
    let (first, more) = client.await.unwrap();
    assert_eq!(first["body"], json!({"n": 2, "public": true}));
    assert_eq!(first["send"], false);
    assert_eq!(more, None);
    server.shutdown().await;
}

/// The per-connection limits: registrations, requests waiting for their
/// reply, the address length, silence; and the connection limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_hold() {
    let bus = EventBus::new();
    let _slow = bus.consumer("slow", |m: Message<JsValue>| async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        m.reply(JsValue::from("late"))
    });
    let options = BridgeOptions::new()
        .inbound(PermittedOptions::new().address("slow"))
        .outbound(PermittedOptions::new().address_regex("^client\\..+"))
        .max_registrations(2)
        .max_pending_replies(1)
        .max_address_length(20)
        .idle_timeout(Duration::from_millis(800));
    let server = serve(&bus, options).await;
    let port = server.local_addr().port();
    let frames = with_client(port, |c| {
        for n in 0..3 {
            c.send(&json!({"type": "register", "address": format!("client.{n}")}));
        }
        let too_many = c.expect();
        c.send(&json!({"type": "register", "address": format!("client.{}", "x".repeat(20))}));
        let too_long = c.expect();
        c.send(&json!({"type": "send", "address": "slow", "replyAddress": "a", "body": 1}));
        c.send(&json!({"type": "send", "address": "slow", "replyAddress": "b", "body": 2}));
        let refused = c.expect();
        let late = c.expect();
        // Pings keep the connection open past the idle timeout...
        for _ in 0..4 {
            std::thread::sleep(Duration::from_millis(400));
            c.send(&json!({"type": "ping"}));
            assert_eq!(c.expect(), json!({"type": "pong"}));
        }
        // ... silence closes it.
        let closed = c.next(Duration::from_secs(3));
        (too_many, too_long, refused, late, closed)
    })
    .await;
    assert_eq!(
        frames.0,
        json!({"type": "err", "message": "max_handlers_reached"})
    );
    assert_eq!(
        frames.1,
        json!({"type": "err", "message": "max_address_length_reached"})
    );
    assert_eq!(frames.2["address"], "b");
    assert_eq!(frames.2["failureType"], "ERROR");
    assert_eq!(frames.3["address"], "a");
    assert_eq!(frames.3["body"], "late");
    assert_eq!(frames.4, Some(json!({"$closed": true})));
    server.shutdown().await;

    let one = serve(&bus, BridgeOptions::new().max_connections(1)).await;
    let port = one.local_addr().port();
    let second = with_client(port, move |first| {
        first.send(&json!({"type": "ping"}));
        assert_eq!(first.expect(), json!({"type": "pong"}));
        let mut second = Client::open(port);
        second.send(&json!({"type": "ping"}));
        second.next(Duration::from_secs(2))
    })
    .await;
    assert_eq!(second, Some(json!({"$closed": true})));
    one.shutdown().await;
}

/// What a `talk` consumer heard: each of its replies asks "and you?", and
/// the answer (or why none came) goes to the receiver.
type Heard = Result<JsValue, (RequestErrorKind, Option<i32>)>;

fn talk(bus: &EventBus) -> (MessageConsumer, tokio::sync::mpsc::UnboundedReceiver<Heard>) {
    let (turn_tx, turn_rx) = tokio::sync::mpsc::unbounded_channel();
    let consumer = bus.consumer("talk", move |m: Message<JsValue>| {
        let turn_tx = turn_tx.clone();
        async move {
            let options = ReplyOptions::new().timeout(Duration::from_secs(20));
            let turn = m
                .reply_and_request_with::<JsValue>(JsValue::from("and you?"), options)
                .await;
            let _ = turn_tx.send(
                turn.map(|answer| answer.body().clone())
                    .map_err(|e| (e.kind(), e.failure_code())),
            );
        }
    });
    (consumer, turn_rx)
}

/// A reply that asks for an answer (`reply_and_request`) reaches the
/// client with an address to answer at; the client's answer, or its
/// failure, is the replier's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_goes_on_through_the_bridge() {
    let bus = EventBus::new();
    let (_talk, mut turn_rx) = talk(&bus);
    let options = BridgeOptions::new().inbound(PermittedOptions::new().address("talk"));
    let server = serve(&bus, options).await;
    let replies = with_client(server.local_addr().port(), |c| {
        let mut replies = Vec::new();
        // Answered with a body, then with a failure: the reply carries the
        // address to answer at, as Vert.x's does.
        for answer in [
            json!({"body": "fine"}),
            json!({"failureCode": 7, "message": "no"}),
        ] {
            c.send(&json!({"type": "send", "address": "talk", "replyAddress": "r", "body": "hi"}));
            let reply = c.expect();
            let mut frame = json!({"type": "send", "address": reply["replyAddress"]});
            for (k, v) in answer.as_object().unwrap() {
                frame[k] = v.clone();
            }
            c.send(&frame);
            replies.push(reply);
        }
        replies
    })
    .await;
    for reply in &replies {
        let at = reply["replyAddress"]
            .as_str()
            .expect("an address to answer at");
        assert!(at.starts_with("__cb.") && at.len() <= 36, "{reply}");
        assert_eq!(
            reply,
            &json!({"type": "message", "address": "r", "replyAddress": at, "headers": {},
                    "body": "and you?", "send": true})
        );
    }
    assert_ne!(replies[0]["replyAddress"], replies[1]["replyAddress"]);
    assert_eq!(turn_rx.recv().await.unwrap(), Ok(JsValue::from("fine")));
    assert_eq!(
        turn_rx.recv().await.unwrap(),
        Err((RequestErrorKind::RecipientFailure, Some(7)))
    );
    server.shutdown().await;
}

/// A conversation the client leaves unanswered ends when its connection
/// goes: the replier's wait fails at once, not at its timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_conversation_ends_with_its_connection() {
    let bus = EventBus::new();
    let (_talk, mut turn_rx) = talk(&bus);
    let options = BridgeOptions::new().inbound(PermittedOptions::new().address("talk"));
    let server = serve(&bus, options).await;
    let started = std::time::Instant::now();
    let reply = with_client(server.local_addr().port(), |c| {
        c.send(&json!({"type": "send", "address": "talk", "replyAddress": "r", "body": "hi"}));
        c.expect()
    })
    .await;
    assert_eq!(reply["body"], "and you?");
    let turn = turn_rx.recv().await.unwrap();
    assert_eq!(turn, Err((RequestErrorKind::RecipientFailure, None)));
    assert!(started.elapsed() < Duration::from_secs(5));
    server.shutdown().await;
}

/// A client that writes thousands of requests before it reads any gets
/// every answer, and the bridge still shuts down: the frames waiting for
/// the writer are bounded in bytes (the budget), so no answer waits for
/// room behind another (with a queue bounded in frames, the connection
/// answered its first 256 and then neither read, wrote nor stopped).
#[tokio::test(flavor = "current_thread")]
async fn requests_sent_before_any_reading_are_all_answered() {
    let (_bus, _consumers, server) = reference_bridge().await;
    let port = server.local_addr().port();
    let n = 5_000;
    let answered = with_client(port, move |c| {
        let frame =
            runner::frame(br#"{"type":"send","address":"echo","replyAddress":"r","body":{"n":1}}"#);
        c.write(&frame.repeat(n));
        (0..n)
            .map_while(|_| c.next(Duration::from_secs(5)))
            .filter(|f| f["type"] == "message" && f["body"]["n"] == 1)
            .count()
    })
    .await;
    assert_eq!(answered, n);
    tokio::time::timeout(Duration::from_secs(10), server.shutdown())
        .await
        .expect("the bridge shuts down");
}

/// On a current-thread runtime (one thread for every connection, each
/// connection's writing in its own task beside its reading), a client that
/// sends bursts of requests gets all its answers, and another
/// connection is answered meanwhile: the reading yields, the writing goes
/// on, nothing waits on another thread.
#[tokio::test(flavor = "current_thread")]
async fn a_current_thread_runtime_serves_a_flood_and_a_neighbour() {
    let (_bus, _consumers, server) = reference_bridge().await;
    let port = server.local_addr().port();
    let n = 5_000;
    let flood = with_client(port, move |c| {
        let frame =
            runner::frame(br#"{"type":"send","address":"echo","replyAddress":"r","body":{"n":1}}"#);
        // Bursts of 250 frames in one write each, read back before the
        // next (a client that writes without reading would wedge on its
        // own full socket).
        let burst = frame.repeat(250);
        (0..n / 250)
            .map(|_| {
                c.write(&burst);
                (0..250)
                    .filter(|_| {
                        c.next(Duration::from_secs(10))
                            .is_some_and(|f| f["type"] == "message" && f["body"]["n"] == 1)
                    })
                    .count()
            })
            .sum::<usize>()
    });
    let neighbour = with_client(port, |c| {
        (0..20)
            .map(|_| {
                c.send(&json!({"type": "ping"}));
                c.next(Duration::from_secs(5))
            })
            .collect::<Vec<_>>()
    });
    let (answered, pongs) = tokio::join!(flood, neighbour);
    assert_eq!(answered, n);
    assert!(
        pongs
            .iter()
            .all(|p| p.as_ref() == Some(&json!({"type": "pong"}))),
        "{pongs:?}"
    );
    server.shutdown().await;
}

/// Hostile input never panics the bridge: each frame gets an `err` frame
/// or the connection closes, and the bridge goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_frames_get_an_answer_or_a_close() {
    let (_bus, _consumers, server) = reference_bridge().await;
    let port = server.local_addr().port();
    let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
    let deep_body = format!(
        r#"{{"type":"send","address":"echo","replyAddress":"r","body":{}1{}}}"#,
        "[".repeat(120),
        "]".repeat(120)
    );
    let payloads: Vec<Vec<u8>> = vec![
        runner::frame(b""),
        runner::frame(b"\xff\xfe\x00"),
        runner::frame(b"null"),
        runner::frame(b"[1,2]"),
        runner::frame(deep.as_bytes()),
        runner::frame(br#"{"type":7}"#),
        runner::frame(br#"{"type":"send","address":7}"#),
        runner::frame(br#"{"type":"send","address":"echo","headers":[1]}"#),
        runner::frame(br#"{"type":"send","address":"echo","headers":{"a":{"b":1}}}"#),
        runner::frame(
            br#"{"type":"send","address":"echo","replyAddress":"r","body":{"$ext":1,"$data":"%"}}"#,
        ),
        runner::frame(deep_body.as_bytes()),
        u32::MAX.to_be_bytes().to_vec(),
        vec![0, 0],
    ];
    let outcomes = with_client(port, move |_| {
        payloads
            .iter()
            .map(|bytes| {
                let mut c = Client::open(port);
                c.write(bytes);
                c.send(&json!({"type": "ping"}));
                let mut frames = Vec::new();
                while let Some(frame) = c.next(Duration::from_millis(500)) {
                    let closed = frame.get("$closed").is_some();
                    frames.push(frame);
                    if closed {
                        break;
                    }
                }
                frames
            })
            .collect::<Vec<_>>()
    })
    .await;
    for (n, frames) in outcomes.iter().enumerate() {
        let answered = frames
            .iter()
            .any(|f| f["type"] == "err" || f["type"] == "message");
        let closed = frames.iter().any(|f| f.get("$closed").is_some());
        assert!(
            answered || closed || n == outcomes.len() - 1,
            "payload {n}: {frames:?}"
        );
    }
    // An object shaped as an extension value is an object like any other
    // to a `JsValue` address (its bad base64 is nobody's concern).
    assert_eq!(
        outcomes[9][0]["body"],
        json!({"$ext": 1, "$data": "%"}),
        "{:?}",
        outcomes[9]
    );
    // The deeply nested body within serde_json's limit is carried.
    assert_eq!(outcomes[10][0]["type"], "message", "{:?}", outcomes[10]);
    // The frame announcing 4 GiB is refused, and skipped as it comes:
    // the connection stays.
    assert_eq!(
        outcomes[11][0]["message"], "frame_too_large",
        "{:?}",
        outcomes[11]
    );
    assert!(!outcomes[11].iter().any(|f| f.get("$closed").is_some()));
    // Still serving.
    let pong = with_client(port, |c| {
        c.send(&json!({"type": "ping"}));
        c.expect()
    })
    .await;
    assert_eq!(pong, json!({"type": "pong"}));
    server.shutdown().await;
}

// ----- the SockJS bridge -----

#[path = "bridge/browser.rs"]
mod browser;
#[path = "bridge/sockjs.rs"]
mod sockjs;
#[path = "bridge/sockjs_http.rs"]
mod sockjs_http;

use codecbus_bus::bridge::SockJsOptions;

/// A bus with the reference's consumers and the SockJS bridge in front of
/// it, with `sockjs` options.
async fn reference_sockjs(sockjs: SockJsOptions) -> (EventBus, Vec<MessageConsumer>, BridgeServer) {
    let bus = EventBus::new();
    let consumers = reference_consumers(&bus);
    let server = Bridge::new(&bus, reference_options())
        .unwrap()
        .listen_sockjs("127.0.0.1:0", sockjs)
        .await
        .unwrap();
    (bus, consumers, server)
}

/// `detail` members (codecbus's text beyond Vert.x's frame) taken out of a
/// SockJS session's record.
fn session_without_detail(mut record: Value) -> Value {
    for step in record.as_array_mut().into_iter().flatten() {
        for frame in step["received"].as_array_mut().into_iter().flatten() {
            if let Some(map) = frame.as_object_mut() {
                map.remove("detail");
            }
        }
    }
    record
}

/// The Vert.x reference's SockJS bridge answers the session as the
/// committed record says (`CODECBUS_BRIDGE_CAPTURE=1` writes it), and its
/// info is SockJS's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vertx_reference_sockjs_matches_its_record() {
    let reference = tokio::task::spawn_blocking(vertx::start).await.unwrap();
    let (status, headers, body) = sockjs::http(reference.sockjs, "GET", "/eventbus/info", "").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers["content-type"], "application/json; charset=UTF-8");
    assert_eq!(headers["access-control-allow-origin"], "*");
    let mut info: Value = serde_json::from_str(&body).unwrap();
    assert!(info["entropy"].is_u64(), "{info}");
    info.as_object_mut().unwrap().remove("entropy");
    assert_eq!(
        info,
        json!({"websocket": true, "cookie_needed": true, "origins": ["*:*"]})
    );
    let record = sockjs::run_session(reference.sockjs).await;
    let path = sockjs::fixture_path();
    if std::env::var_os("CODECBUS_BRIDGE_CAPTURE").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut text = serde_json::to_string_pretty(&record).unwrap();
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        return;
    }
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        record,
        fixture,
        "Vert.x answered\n{}",
        serde_json::to_string_pretty(&record).unwrap()
    );
}

/// codecbus's SockJS bridge answers the session as Vert.x did (the
/// committed record), frame for frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockjs_session_matches_the_vertx_record() {
    let (_bus, _consumers, server) = reference_sockjs(SockJsOptions::new()).await;
    let record = session_without_detail(sockjs::run_session(server.local_addr().port()).await);
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string(sockjs::fixture_path()).unwrap()).unwrap();
    assert_eq!(
        record,
        fixture,
        "codecbus answered\n{}",
        serde_json::to_string_pretty(&record).unwrap()
    );
    server.shutdown().await;
}

/// The info (as Vert.x's, but `cookie_needed`), its CORS preflight, the
/// welcome, the heartbeat of a silent session, the close frame when the
/// bridge stops, the raw WebSocket, and refusals of what is not served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockjs_info_heartbeat_close_and_raw_websocket() {
    let sockjs_options = SockJsOptions::new().heartbeat_interval(Duration::from_millis(300));
    let (_bus, _consumers, server) = reference_sockjs(sockjs_options).await;
    let port = server.local_addr().port();

    let (status, headers, body) = sockjs::http(port, "GET", "/eventbus/info", "").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers["content-type"], "application/json; charset=UTF-8");
    assert_eq!(
        headers["cache-control"],
        "no-store, no-cache, no-transform, must-revalidate, max-age=0"
    );
    assert_eq!(headers["access-control-allow-origin"], "*");
    assert_eq!(headers["access-control-allow-credentials"], "false");
    let mut info: Value = serde_json::from_str(&body).unwrap();
    assert!(info["entropy"].is_u64(), "{info}");
    info.as_object_mut().unwrap().remove("entropy");
    // Vert.x says `cookie_needed: true` (its JSESSIONID cookie, for sticky
    // sessions behind a balancer); codecbus sets no cookie.
    assert_eq!(
        info,
        json!({"websocket": true, "cookie_needed": false, "origins": ["*:*"]})
    );
    let origin = "Origin: http://127.0.0.1:9\r\n";
    let (_, headers, _) = sockjs::http(port, "GET", "/eventbus/info", origin).await;
    assert_eq!(headers["access-control-allow-origin"], "http://127.0.0.1:9");
    assert_eq!(headers["access-control-allow-credentials"], "true");
    let (status, headers, _) = sockjs::http(port, "OPTIONS", "/eventbus/info", "").await;
    assert_eq!(status, 204);
    assert_eq!(headers["access-control-allow-methods"], "OPTIONS, GET");
    let (status, _, body) = sockjs::http(port, "GET", "/eventbus", "").await;
    assert_eq!((status, body.as_str()), (200, "Welcome to SockJS!\n"));
    let (status, _, _) = sockjs::http(port, "GET", "/eventbus/1/s/websocket", "").await;
    assert_eq!(status, 400);
    for path in [
        "/eventbus/1/s/xhr",
        "/eventbus/nothing",
        "/elsewhere",
        "/eventbus/1/a.b/websocket",
    ] {
        let (status, _, _) = sockjs::http(port, "GET", path, "").await;
        assert_eq!(status, 404, "{path}");
    }

    // A silent session gets heartbeats; one that pings and sends stays.
    let mut peer = sockjs::Peer::open(port, "/eventbus/7/session/websocket").await;
    assert_eq!(peer.expect().await, "o");
    assert_eq!(peer.expect().await, "h");
    assert_eq!(peer.expect().await, "h");

    // The raw WebSocket: one frame per message, answers in binary ones.
    let mut raw = sockjs::Peer::open(port, "/eventbus/websocket").await;
    raw.send_text(
        &json!({"type": "send", "address": "echo", "replyAddress": "r", "body": 7}).to_string(),
    )
    .await;
    assert_eq!(
        raw.expect().await,
        json!({"$binary": {"type": "rec", "address": "r", "body": 7, "headers": {"echoed": "true"}}})
    );
    raw.send_text(&json!({"type": "send", "address": "secret", "body": 7}).to_string())
        .await;
    assert_eq!(
        raw.expect().await,
        json!({"$binary": {"type": "err", "body": "access_denied"}})
    );

    // The bridge stops: the session gets SockJS's close frame, then the
    // WebSocket closes.
    server.shutdown().await;
    let mut last = Vec::new();
    while let Some(frame) = peer.next(Duration::from_secs(5)).await {
        if frame != "h" {
            last.push(frame);
        }
        if last.last() == Some(&json!({"$closed": true})) {
            break;
        }
    }
    assert_eq!(
        last,
        vec![
            json!({"$close": [3000, "Go away!"]}),
            json!({"$closed": true})
        ]
    );
}

/// A SockJS message over the frame limit gets `frame_too_large` and the
/// session ends; the limits are the TCP bridge's: the connections, the
/// silence allowed (before an upgrade too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockjs_frames_are_held_to_the_limits() {
    let (_bus, _consumers, server) = reference_sockjs(SockJsOptions::new()).await;
    let port = server.local_addr().port();
    let mut peer = sockjs::Peer::open(port, "/eventbus/1/big/websocket").await;
    assert_eq!(peer.expect().await, "o");
    let big = "x".repeat(cases::BIG_BODY);
    peer.send(&[json!({"type": "send", "address": "echo", "body": big})])
        .await;
    let refused = peer.expect().await;
    assert_eq!(refused["type"], "err", "{refused}");
    assert_eq!(refused["body"], "frame_too_large");
    // Skipped: the session goes on.
    peer.send(&[json!({"type": "send", "address": "echo", "replyAddress": "r", "body": 1})])
        .await;
    let echoed = peer.expect().await;
    assert_eq!(
        (&echoed["type"], &echoed["body"]),
        (&json!("rec"), &json!(1)),
        "{echoed}"
    );

    // A WebSocket message far over the limit is not read whole: refused,
    // and the session ends (the WebSocket cannot be read past it).
    let mut peer = sockjs::Peer::open(port, "/eventbus/1/huge/websocket").await;
    assert_eq!(peer.expect().await, "o");
    peer.send_text(&"y".repeat(4 * cases::TEST_MAX_FRAME)).await;
    let refused = peer.expect().await;
    assert_eq!(refused["body"], "frame_too_large", "{refused}");
    assert_eq!(peer.expect().await, json!({"$close": [3000, "Go away!"]}));
    server.shutdown().await;

    // A connection that never asks for anything, and sessions past the
    // connection limit, are closed.
    let options = reference_options()
        .idle_timeout(Duration::from_millis(300))
        .max_connections(1);
    let bus = EventBus::new();
    let server = Bridge::new(&bus, options)
        .unwrap()
        .listen_sockjs("127.0.0.1:0", SockJsOptions::new())
        .await
        .unwrap();
    let port = server.local_addr().port();
    let mut first = sockjs::Peer::open(port, "/eventbus/1/first/websocket").await;
    assert_eq!(first.expect().await, "o");
    let second = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_secs(5), async {
        use tokio::io::AsyncReadExt as _;
        let mut second = second;
        second.read(&mut byte).await
    })
    .await
    .expect("the connection over the limit is closed at once");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    // The first session, silent, is closed after the idle timeout.
    assert_eq!(first.expect().await, json!({"$close": [3000, "Go away!"]}));
    let idle = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let read = tokio::time::timeout(Duration::from_secs(5), async {
        use tokio::io::AsyncReadExt as _;
        let mut idle = idle;
        idle.read(&mut byte).await
    })
    .await
    .expect("a silent HTTP connection is closed after the idle timeout");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    server.shutdown().await;
}

/// The JavaScript clients from npm, in headless Chromium, talk to
/// codecbus's SockJS bridge: each registers two handlers, sends, requests
/// a codecbus consumer (a reply and a failure), answers the bus's request,
/// publishes, and is refused an address. Needs chromium and npm, and fails
/// saying how to install what is missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_javascript_clients_in_chromium_talk_to_the_sockjs_bridge() {
    javascript_clients_in_chromium(None).await;
}

/// The JavaScript clients' page in Chromium against a SockJS bridge, over
/// HTTPS and WSS when `tls` is given (Chromium told to take the test's
/// certificate).
pub(crate) async fn javascript_clients_in_chromium(tls: Option<codecbus_bus::bridge::BridgeTls>) {
    javascript_clients_in_chromium_over(tls, &[None]).await;
}

/// The JavaScript clients' pages in Chromium, one per client and SockJS
/// transport (`None`: the one SockJS picks, its WebSocket), each checked
/// to have used it.
pub(crate) async fn javascript_clients_in_chromium_over(
    tls: Option<codecbus_bus::bridge::BridgeTls>,
    transports: &[Option<&'static str>],
) {
    let modules = tokio::task::spawn_blocking(browser::npm_clients)
        .await
        .unwrap();
    let clients = [
        ("v4", "@vertx/eventbus-bridge-client.js/vertx-eventbus.js"),
        ("v3", "vertx3-eventbus-client/vertx-eventbus.js"),
    ];
    let mut sockjs_options = SockJsOptions::new().file(
        "/js/sockjs.min.js",
        "application/javascript",
        browser::read(&modules, "sockjs-client/dist/sockjs.min.js"),
    );
    let mut pages = Vec::new();
    for (client, script) in clients {
        let path = format!("/js/{client}/vertx-eventbus.js");
        sockjs_options = sockjs_options.file(
            &path,
            "application/javascript",
            browser::read(&modules, script),
        );
        for &transport in transports {
            let name = match transport {
                Some(t) => format!("{client}-{t}"),
                None => client.to_owned(),
            };
            sockjs_options = sockjs_options.file(
                format!("/{name}.html"),
                "text/html; charset=utf-8",
                browser::page(&name, &path, transport),
            );
            pages.push((name, transport));
        }
    }
    let bus = EventBus::new();
    let _consumers = reference_consumers(&bus);
    let (sunk_tx, mut sunk) = tokio::sync::mpsc::unbounded_channel();
    let _sink = bus.consumer("browser.sink", move |m: Message<JsValue>| {
        let _ = sunk_tx.send((m.body().clone(), m.headers().get("h").map(str::to_string)));
        async {}
    });
    let options = reference_options().inbound(PermittedOptions::new().address("browser.sink"));
    let scheme = if tls.is_some() { "https" } else { "http" };
    if let Some(tls) = tls {
        sockjs_options = sockjs_options.tls(tls);
    }
    let server = Bridge::new(&bus, options)
        .unwrap()
        .listen_sockjs("127.0.0.1:0", sockjs_options)
        .await
        .unwrap();
    let base = format!("{scheme}://{}", server.local_addr());
    let results = tokio::task::spawn_blocking(move || {
        let mut browser = browser::Browser::start();
        if scheme == "https" {
            // The test's own authority: Chromium takes its certificate.
            browser.call(
                "Security.setIgnoreCertificateErrors",
                json!({"ignore": true}),
                None,
            );
        }
        pages
            .into_iter()
            .map(|(name, transport)| {
                let page = browser.open(&format!("{base}/{name}.html"));
                let result = browser.wait_for(&page, "window.result", Duration::from_secs(30));
                let result: Value = serde_json::from_str(result.as_str().unwrap()).unwrap();
                // Its connections closed: Chromium takes six at a time to
                // one host, and a streaming transport keeps one open.
                browser.call("Page.navigate", json!({"url": "about:blank"}), Some(&page));
                if let Some(transport) = transport {
                    assert_eq!(result["transport"], transport, "{name}: {result}");
                }
                (name, result)
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (name, result) in results {
        check_round(&name, &result, json!({"h": "v", "echoed": "true"}));
        let (body, header) = tokio::time::timeout(Duration::from_secs(5), sunk.recv())
            .await
            .expect("the page's send reached the bus")
            .unwrap();
        assert_eq!(body, JsValue::from(jsobj! {"from": "page"}), "{name}");
        assert_eq!(header.as_deref(), Some("v"), "{name}");
    }
    server.shutdown().await;
}

/// The result of a JavaScript client's round (the browser's page, or
/// `node_client.js`) named `name`: its echo with `echo_headers`, the
/// failure, the refusal, the news, the bus's request and its answer.
pub(crate) fn check_round(name: &str, result: &Value, echo_headers: Value) {
    assert!(result.get("timedOut").is_none(), "{name}: {result}");
    assert_eq!(
        result["echo"],
        json!({"err": null, "body": {"n": 1}, "headers": echo_headers}),
        "{name}"
    );
    assert_eq!(
        result["failed"],
        json!({"failureCode": 42, "failureType": "RECIPIENT_FAILURE", "message": "it failed"}),
        "{name}"
    );
    assert_eq!(
        result["errors"],
        json!([{"type": "err", "body": "access_denied"}]),
        "{name}"
    );
    assert_eq!(
        result["news"],
        json!({"body": {"from": "vertx", "n": 7}, "headers": {"origin": "vertx"}}),
        "{name}"
    );
    assert_eq!(
        result["asked"],
        json!({"address": format!("client.{name}"), "body": {"q": 21}}),
        "{name}"
    );
    assert_eq!(
        result["answered"],
        json!({"err": null, "body": {"answer": 42}}),
        "{name}"
    );
}

/// A typed address's body as JSON: its JSON Schema served at
/// `GET /eventbus/schemas` (what an independent validator holds bodies
/// to), and a body that does not fit refused with an `err` naming the
/// field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_addresses_serve_their_json_schema_and_name_the_field_that_does_not_fit() {
    let bus = EventBus::new();
    let _orders = bus.consumer("shop.orders", |m: Message<Order>| async move {
        m.reply(m.body().id)
    });
    let options = BridgeOptions::new()
        .inbound(PermittedOptions::new().address("shop.orders"))
        .typed::<Order>("shop.orders");
    let bridge = Bridge::new(&bus, options).unwrap();
    let schemas = bridge.json_schemas();
    let server = bridge
        .listen_sockjs("127.0.0.1:0", SockJsOptions::new())
        .await
        .unwrap();
    let port = server.local_addr().port();

    let (status, headers, body) = sockjs::http(port, "GET", "/eventbus/schemas", "").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        headers["content-type"],
        "application/schema+json; charset=UTF-8"
    );
    let served: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(served, schemas);
    let order = &served["shop.orders"];
    assert_eq!(order["type"], "object", "{served}");
    assert_eq!(order["required"], json!(["id", "quantity", "sku"]));
    let validator = jsonschema::validator_for(order).unwrap();
    assert!(validator.is_valid(&json!({"id": 7, "sku": "tea", "quantity": 2})));
    assert!(!validator.is_valid(&json!({"id": "seven", "sku": "tea", "quantity": 2})));

    // The same body sent: refused, the field named.
    let mut peer = sockjs::Peer::open(port, "/eventbus/1/schema/websocket").await;
    assert_eq!(peer.expect().await, "o");
    peer.send(&[
        json!({"type": "send", "address": "shop.orders", "replyAddress": "r1",
                       "body": {"id": "seven", "sku": "tea", "quantity": 2}}),
    ])
    .await;
    let refused = peer.expect().await;
    assert_eq!(refused["type"], "err", "{refused}");
    assert!(refused.to_string().contains("/id"), "{refused}");
    server.shutdown().await;
}

/// As Vert.x 3.9.4's TCP bridge: the headers `timeout` (a request's
/// timeout, in milliseconds), `localOnly` and `codecName` of a `send` are
/// options, not headers; a `timeout` that is not a number is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_frames_timeout_header_is_its_requests_timeout() {
    let bus = EventBus::new();
    // Never answers within the test.
    let _slow = bus.consumer("slow", |m: Message<JsValue>| async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        m.reply(JsValue::Null)
    });
    let _echo = bus.consumer("echo.headers", |m: Message<JsValue>| async move {
        let names: Vec<JsValue> = m.headers().iter().map(|(n, _)| JsValue::from(n)).collect();
        m.reply(JsValue::from(codecbus_json::JsArray::from_iter(names)))
    });
    let options = BridgeOptions::new()
        .inbound(PermittedOptions::new().address("slow"))
        .inbound(PermittedOptions::new().address("echo.headers"));
    let server = serve(&bus, options).await;
    let (took, timed_out, echoed, refused) = with_client(server.local_addr().port(), |c| {
        let started = std::time::Instant::now();
        c.send(&json!({"type": "send", "address": "slow", "replyAddress": "r1",
                       "headers": {"timeout": 300}, "body": {}}));
        let timed_out = c.expect();
        let took = started.elapsed();
        c.send(&json!({"type": "send", "address": "echo.headers", "replyAddress": "r2",
                       "headers": {"timeout": 5000, "localOnly": false, "codecName": "x", "kept": "1"},
                       "body": {}}));
        let echoed = c.expect();
        c.send(&json!({"type": "send", "address": "slow", "replyAddress": "r3",
                       "headers": {"timeout": "soon"}, "body": {}}));
        let refused = c.expect();
        (took, timed_out, echoed, refused)
    })
    .await;
    assert_eq!(timed_out["type"], "err", "{timed_out}");
    assert_eq!(timed_out["address"], "r1");
    assert_eq!(timed_out["failureType"], "TIMEOUT", "{timed_out}");
    assert!(
        took < Duration::from_secs(10),
        "the 300 ms timeout took {took:?}"
    );
    assert_eq!(echoed["body"], json!(["kept"]), "{echoed}");
    assert_eq!(refused["type"], "err");
    assert_eq!(refused["message"], "invalid_headers", "{refused}");
    server.shutdown().await;
}

/// A `replyAddress` over 36 characters (vertx-web's limit) is refused
/// with `invalid_reply_address` on both transports, and the connection
/// goes on; 36 are taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_reply_address_is_refused_on_both_transports() {
    let bus = EventBus::new();
    let _echo = bus.consumer("echo", |m: Message<JsValue>| async move {
        m.reply(m.body().clone())
    });
    let options = || BridgeOptions::new().inbound(PermittedOptions::new().address("echo"));
    let long = "r".repeat(37);
    let fits = "é".repeat(36);

    let server = serve(&bus, options()).await;
    let (long_tcp, fits_tcp) = with_client(server.local_addr().port(), {
        let (long, fits) = (long.clone(), fits.clone());
        move |c| {
            c.send(&json!({"type": "send", "address": "echo", "replyAddress": long, "body": 1}));
            let refused = c.expect();
            c.send(&json!({"type": "send", "address": "echo", "replyAddress": fits, "body": 2}));
            (refused, c.expect())
        }
    })
    .await;
    assert_eq!(
        long_tcp,
        json!({"type": "err", "message": "invalid_reply_address"})
    );
    assert_eq!(fits_tcp["address"], json!(fits), "{fits_tcp}");
    assert_eq!(fits_tcp["body"], 2);
    server.shutdown().await;

    let server = Bridge::new(&bus, options())
        .unwrap()
        .listen_sockjs("127.0.0.1:0", SockJsOptions::new())
        .await
        .unwrap();
    let port = server.local_addr().port();
    let mut peer = sockjs::Peer::open(port, "/eventbus/1/reply/websocket").await;
    assert_eq!(peer.expect().await, "o");
    peer.send(&[json!({"type": "send", "address": "echo", "replyAddress": long, "body": 1})])
        .await;
    assert_eq!(
        peer.expect().await,
        json!({"type": "err", "body": "invalid_reply_address"})
    );
    peer.send(&[json!({"type": "send", "address": "echo", "replyAddress": "r", "body": 3})])
        .await;
    assert_eq!(peer.expect().await["body"], 3);
    server.shutdown().await;
}

/// A client that sends and does not read holds at most its connection's
/// budget of the bridge: past it the bridge reads nothing more from it
/// (its writes then block, TCP's own back-pressure), while another
/// connection's round trips go on; once it reads, every request is
/// answered, none lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_does_not_read_holds_only_its_budget() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    const BODY: usize = 64 * 1024;
    const SENT: usize = 2000;
    let bus = EventBus::new();
    let taken = Arc::new(AtomicUsize::new(0));
    let _echo = bus.consumer("echo", {
        let taken = Arc::clone(&taken);
        move |m: Message<JsValue>| {
            taken.fetch_add(1, Ordering::Relaxed);
            async move { m.reply(m.body().clone()) }
        }
    });
    let options = BridgeOptions::new()
        .inbound(PermittedOptions::new().address("echo"))
        .connection_budget(1024 * 1024)
        .write_timeout(Duration::from_secs(30));
    let server = serve(&bus, options).await;
    let addr = server.local_addr();

    // The slow client: a small receive buffer, so that what the kernel
    // holds for it is small beside what it sends.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(16 * 1024).unwrap();
    let slow = socket.connect(addr).await.unwrap();
    let (mut slow_rd, mut slow_wr) = slow.into_split();
    let frame = runner::frame(
        json!({"type": "send", "address": "echo", "replyAddress": "r",
               "body": {"data": "x".repeat(BODY)}})
        .to_string()
        .as_bytes(),
    );
    let writer = tokio::spawn(async move {
        for _ in 0..SENT {
            if slow_wr.write_all(&frame).await.is_err() {
                break;
            }
        }
        slow_wr
    });
    // Until the bridge stops taking its requests.
    let mut last = usize::MAX;
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = taken.load(Ordering::Relaxed);
        if now == last {
            break;
        }
        last = now;
    }
    assert!(
        !writer.is_finished(),
        "the slow client's writes are held back"
    );
    // The budget (1 MiB: 16 requests and their answers) and what the
    // sockets' buffers hold between the two (a few MiB on loopback).
    assert!(last < 300, "{last} requests of {SENT} taken");
    eprintln!("held back after {last} requests of {SENT}");

    // Another connection goes on meanwhile.
    let round_trip = with_client(addr.port(), |c| {
        c.send(&json!({"type": "send", "address": "echo", "replyAddress": "q", "body": 1}));
        c.expect()
    })
    .await;
    assert_eq!(round_trip["body"], 1, "{round_trip}");

    // The slow client reads: every request is answered.
    let mut answered = 0;
    let mut len = [0u8; 4];
    let mut buf = Vec::new();
    while answered < SENT {
        tokio::time::timeout(Duration::from_secs(30), slow_rd.read_exact(&mut len))
            .await
            .expect("answers keep coming")
            .unwrap();
        buf.resize(u32::from_be_bytes(len) as usize, 0);
        slow_rd.read_exact(&mut buf).await.unwrap();
        answered += 1;
    }
    let _slow_wr = writer.await.unwrap();
    // And the other connection's one.
    assert_eq!(taken.load(Ordering::Relaxed), SENT + 1);
    server.shutdown().await;
}
