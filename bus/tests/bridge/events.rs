//! The bridge's event hook (`BridgeOptions::on_event`): every event of
//! Vert.x's `BridgeEvent`, refusals, changed frames, authorities, and the
//! two recipes of the guide with the Python client from PyPI.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use codecbus_bus::bridge::{
    Bridge, BridgeEventType, BridgeOptions, PermittedOptions, SockJsOptions,
};
use codecbus_bus::{EventBus, Message, MessageConsumer, ReplyOptions};
use codecbus_json::JsValue;
use serde_json::json;

use crate::{python, serve, sockjs, with_client};

/// An echo of the body and its headers, at `echo` and `orders`.
fn echoes(bus: &EventBus) -> Vec<MessageConsumer> {
    ["echo", "orders"]
        .into_iter()
        .map(|address| {
            bus.consumer(address, |m: Message<JsValue>| async move {
                let headers = m.headers().clone();
                m.reply_with(m.body().clone(), ReplyOptions::new().headers(headers))
            })
        })
        .collect()
}

/// The events a hook saw: each one's type and its frame's address.
type Seen = Arc<Mutex<Vec<(BridgeEventType, Option<String>)>>>;

/// Runs `f` on a runtime of its own, from a client's blocking thread
/// (`with_client`).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Publishes from a client's blocking thread.
fn publish_blocking(bus: &EventBus, address: &str, body: JsValue) {
    block_on(bus.publish(address, body)).unwrap();
}

/// Every event a connection goes through reaches the hook, in order, with
/// its frame; those of the connection's end are told too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_sees_every_event_of_a_connection() {
    let bus = EventBus::new();
    let _echoes = echoes(&bus);
    let seen: Seen = Arc::default();
    let options = BridgeOptions::new()
        .inbound(PermittedOptions::new().address("echo"))
        .outbound(PermittedOptions::new().address("news"))
        .idle_timeout(Duration::from_millis(600))
        .on_event({
            let seen = Arc::clone(&seen);
            move |event| {
                let address = event.address().map(str::to_owned);
                seen.lock().unwrap().push((event.kind(), address));
                async move { event.allow() }
            }
        });
    let server = serve(&bus, options).await;
    let port = server.local_addr().port();
    let news = bus.clone();
    let frames = with_client(port, move |c| {
        c.send(&json!({"type": "ping"}));
        let pong = c.expect();
        c.send(&json!({"type": "register", "address": "news"}));
        std::thread::sleep(Duration::from_millis(200));
        publish_blocking(&news, "news", JsValue::from(1));
        let news = c.expect();
        c.send(&json!({"type": "publish", "address": "echo", "body": 2}));
        c.send(&json!({"type": "send", "address": "echo", "replyAddress": "r", "body": 3}));
        let reply = c.expect();
        c.send(&json!({"type": "unregister", "address": "news"}));
        // Then silence: the idle timeout closes the connection.
        let closed = c.next(Duration::from_secs(5));
        (pong, news, reply, closed)
    })
    .await;
    assert_eq!(frames.0["type"], "pong");
    assert_eq!(frames.1["body"], 1);
    assert_eq!(frames.2["body"], 3);
    assert_eq!(frames.3, Some(json!({"$closed": true})));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let seen = seen.lock().unwrap().clone();
    let name = |s: &str| Some(s.to_owned());
    use BridgeEventType::*;
    assert_eq!(
        seen,
        [
            (SocketCreated, None),
            (SocketPing, None),
            (Register, name("news")),
            (Registered, name("news")),
            (Receive, name("news")),
            (Publish, name("echo")),
            (Send, name("echo")),
            (Unregister, name("news")),
            (SocketIdle, None),
            (SocketClosed, None),
        ]
    );
    server.shutdown().await;
}

/// A refusal answers as Vert.x's bridges answer a handler's refusal
/// (`blocked by bridgeEvent handler` on TCP, `rejected` on SockJS), and
/// the connection goes on; a refused message is not delivered (a request
/// fails at once); a refused connection is closed at once; a refused idle
/// timeout keeps the connection; a hook that panics refuses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals() {
    let bus = EventBus::new();
    let _echoes = echoes(&bus);
    let options = BridgeOptions::new()
        .inbound(PermittedOptions::new().address("echo"))
        .outbound(PermittedOptions::new().address_regex("client\\..+"))
        .idle_timeout(Duration::from_millis(300))
        .on_event(|event| async move {
            match (event.kind(), event.address()) {
                (BridgeEventType::SocketCreated, _) => {
                    let refused = event.connection().peer_addr().is_none();
                    if refused {
                        event.refuse()
                    } else {
                        event.allow()
                    }
                }
                (BridgeEventType::SocketIdle, _) => event.refuse(),
                (BridgeEventType::Send, Some("echo")) if event.header("pass").is_none() => {
                    event.refuse()
                }
                (BridgeEventType::Register, Some("client.panics")) => panic!("a hook's bug"),
                (BridgeEventType::Receive, _) if event.address() == Some("client.quiet") => {
                    event.refuse()
                }
                _ => event.allow(),
            }
        });
    let server = serve(&bus, options).await;
    let port = server.local_addr().port();
    let asker = bus.clone();
    let got = with_client(port, move |c| {
        c.send(&json!({"type": "send", "address": "echo", "replyAddress": "r", "body": 1}));
        let refused = c.expect();
        c.send(
            &json!({"type": "send", "address": "echo", "replyAddress": "r",
                       "headers": {"pass": "yes"}, "body": 2}),
        );
        let passed = c.expect();
        c.send(&json!({"type": "register", "address": "client.panics"}));
        let panicked = c.expect();
        c.send(&json!({"type": "register", "address": "client.quiet"}));
        std::thread::sleep(Duration::from_millis(200));
        let request = block_on(async {
            asker
                .request_with::<JsValue>(
                    "client.quiet",
                    JsValue::from(1),
                    codecbus_bus::DeliveryOptions::new().timeout(Duration::from_secs(10)),
                )
                .await
        });
        // Past the idle timeout, still open: the hook kept it.
        std::thread::sleep(Duration::from_millis(700));
        c.send(&json!({"type": "ping"}));
        let pong = c.expect();
        (refused, passed, panicked, request.map(|_| ()), pong)
    })
    .await;
    assert_eq!(
        got.0,
        json!({"type": "err", "message": "blocked by bridgeEvent handler"})
    );
    assert_eq!(got.1["body"], 2, "{}", got.1);
    assert_eq!(
        got.2,
        json!({"type": "err", "message": "blocked by bridgeEvent handler"})
    );
    let failed = got.3.expect_err("a refused request fails");
    assert!(
        failed
            .message()
            .contains("refused by the bridge's event hook"),
        "{failed}"
    );
    assert_eq!(got.4["type"], "pong");
    server.shutdown().await;

    // A refused connection is closed before its first frame.
    let options = BridgeOptions::new().on_event(|event| async move {
        if event.kind() == BridgeEventType::SocketCreated {
            event.refuse()
        } else {
            event.allow()
        }
    });
    let server = serve(&bus, options).await;
    let closed = with_client(server.local_addr().port(), |c| {
        c.send(&json!({"type": "ping"}));
        c.next(Duration::from_secs(5))
    })
    .await;
    assert_eq!(closed, Some(json!({"$closed": true})));
    server.shutdown().await;
}

/// The hook changes frames both ways: a header added to what the client
/// sends reaches the consumer, and a message on its way out goes as the
/// hook left it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_changes_frames() {
    let bus = EventBus::new();
    let _echoes = echoes(&bus);
    let options = BridgeOptions::new()
        .inbound(PermittedOptions::new().address("echo"))
        .outbound(PermittedOptions::new().address("news"))
        .on_event(|mut event| async move {
            match event.kind() {
                BridgeEventType::Send => event.set_header("user", "ada"),
                BridgeEventType::Receive => {
                    if let Some(frame) = event.frame_mut() {
                        frame.insert("body".into(), json!({"redacted": true}));
                    }
                }
                _ => {}
            }
            event.allow()
        });
    let server = serve(&bus, options).await;
    let publisher = bus.clone();
    let (reply, news) = with_client(server.local_addr().port(), move |c| {
        c.send(&json!({"type": "send", "address": "echo", "replyAddress": "r", "body": 1}));
        let reply = c.expect();
        c.send(&json!({"type": "register", "address": "news"}));
        std::thread::sleep(Duration::from_millis(200));
        publish_blocking(&publisher, "news", JsValue::from("secret"));
        (reply, c.expect())
    })
    .await;
    assert_eq!(reply["headers"]["user"], "ada", "{reply}");
    assert_eq!(news["body"], json!({"redacted": true}), "{news}");
    server.shutdown().await;
}

/// An entry that requires an authority lets a frame through only from a
/// connection the hook granted it: `not_logged_in` from one granted
/// nothing, `access_denied` from one granted others (vertx-web's words),
/// on registrations too; a message for a client without it is not sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn required_authorities() {
    let bus = EventBus::new();
    let _echoes = echoes(&bus);
    let options = BridgeOptions::new()
        .inbound(
            PermittedOptions::new()
                .address("orders")
                .required_authority("shop"),
        )
        .outbound(
            PermittedOptions::new()
                .address("audit")
                .required_authority("auditor"),
        )
        .on_event(|event| async move {
            if let Some(role) = event.header("role") {
                event.connection().grant(role.to_owned());
            }
            event.allow()
        });
    let server = serve(&bus, options).await;
    let got = with_client(server.local_addr().port(), |c| {
        let mut got = Vec::new();
        let order = |role: Option<&str>| {
            let mut frame =
                json!({"type": "send", "address": "orders", "replyAddress": "r", "body": 1});
            if let Some(role) = role {
                frame["headers"] = json!({"role": role});
            }
            frame
        };
        c.send(&order(None));
        got.push(c.expect());
        c.send(&order(Some("visitor")));
        got.push(c.expect());
        c.send(&order(Some("shop")));
        got.push(c.expect());
        c.send(&json!({"type": "register", "address": "audit"}));
        got.push(c.expect());
        got
    })
    .await;
    assert_eq!(got[0], json!({"type": "err", "message": "not_logged_in"}));
    assert_eq!(got[1], json!({"type": "err", "message": "access_denied"}));
    assert_eq!(got[2]["body"], 1, "{}", got[2]);
    assert_eq!(got[3], json!({"type": "err", "message": "access_denied"}));
    server.shutdown().await;
}

/// On SockJS the refusal is vertx-web's `rejected`, in `body`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sockjs_refusal_is_rejected() {
    let bus = EventBus::new();
    let _echoes = echoes(&bus);
    let options = BridgeOptions::new()
        .inbound(PermittedOptions::new().address("echo"))
        .on_event(|event| async move {
            if event.kind() == BridgeEventType::Send {
                event.refuse()
            } else {
                event.allow()
            }
        });
    let server = Bridge::new(&bus, options)
        .unwrap()
        .listen_sockjs("127.0.0.1:0", SockJsOptions::new())
        .await
        .unwrap();
    let mut peer = sockjs::Peer::open(server.local_addr().port(), "/eventbus/1/a/websocket").await;
    assert_eq!(peer.expect().await, "o");
    peer.send(&[json!({"type": "send", "address": "echo", "body": 1})])
        .await;
    assert_eq!(
        peer.expect().await,
        json!({"type": "err", "body": "rejected"})
    );
    server.shutdown().await;
}

/// The guide's two recipes with the Python client from PyPI: a token
/// checked on the connection's first frame (its user then in the headers
/// of every frame), and per-user addresses (a user registers its own
/// inbox only).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recipes_with_the_python_client() {
    let bus = EventBus::new();
    let _echoes = echoes(&bus);
    struct User(String);
    let options = BridgeOptions::new()
        .inbound(
            PermittedOptions::new()
                .address("orders")
                .required_authority("shop"),
        )
        .outbound(PermittedOptions::new().address_regex("user\\..+\\.inbox"))
        .on_event(|mut event| async move {
            let connection = event.connection().clone();
            match event.kind() {
                BridgeEventType::Send | BridgeEventType::Publish | BridgeEventType::Register => {}
                _ => return event.allow(),
            }
            if connection.get::<User>().is_none() {
                // The first frame carries the token; a real hook asks an
                // identity service (this one takes its time, as one).
                tokio::time::sleep(Duration::from_millis(20)).await;
                match event.header("token") {
                    Some("t-ada") => {
                        connection.insert(User("ada".into()));
                        connection.grant("shop");
                    }
                    _ => return event.refuse(),
                }
            }
            let user = connection
                .get::<User>()
                .map(|u| u.0.clone())
                .unwrap_or_default();
            if event.kind() == BridgeEventType::Register
                && event.address() != Some(&format!("user.{user}.inbox"))
            {
                return event.refuse();
            }
            event.set_header("user", user);
            event.allow()
        });
    let server = serve(&bus, options).await;
    let port = server.local_addr().port();
    let publisher = bus.clone();
    let notify = tokio::spawn(async move {
        // The inbox gets a message once the client registered it.
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let report = publisher
                .publish("user.ada.inbox", JsValue::from("hello ada"))
                .await;
            if report.is_ok_and(|r| r.delivered() > 0) {
                break;
            }
        }
    });
    let report = tokio::task::spawn_blocking(move || python::run("python_events.py", port))
        .await
        .unwrap();
    notify.abort();
    assert_eq!(
        report["refused"],
        json!(["blocked by bridgeEvent handler"]),
        "{report}"
    );
    assert_eq!(report["order"]["body"], json!({"n": 1}), "{report}");
    assert_eq!(report["order"]["headers"]["user"], "ada", "{report}");
    assert_eq!(report["inbox"]["body"], "hello ada", "{report}");
    assert_eq!(
        report["other_inbox"], "blocked by bridgeEvent handler",
        "{report}"
    );
    server.shutdown().await;
}
