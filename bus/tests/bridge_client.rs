//! codecbus as a client of a real Vert.x 3.9.4 `TcpEventBusBridge` (the
//! reference node of `tests/vertx/ReferenceBridge.java`, started by
//! `scripts/vertx-reference`; java and npm are required, never skipped):
//! send, publish and request each way, a Vert.x consumer's failure,
//! conversations each way (a reply that asks for an answer), and a
//! reconnection to a node started again on the same port, its gap printed;
//! and the keepalive against a codecbus bridge that closes silent
//! connections.
#![cfg(feature = "bridge")]

#[allow(dead_code)]
#[path = "bridge/vertx.rs"]
mod vertx;

use std::time::{Duration, Instant};

use codecbus_bus::bridge::{BridgeClient, BridgeClientOptions};
use codecbus_bus::{
    DeliveryKind, DeliveryOptions, EventBus, Message, ReplyErrorKind, RequestErrorKind,
};
use codecbus_core::MessageCodec;
use codecbus_json::JsValue;
use tokio::sync::mpsc;

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Order {
    id: u64,
    sku: String,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct News {
    from: String,
    n: i64,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Question {
    q: i64,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Answer {
    answer: i64,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Ask {
    address: String,
    body: Question,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Asking {
    ask: Question,
}

const WAIT: Duration = Duration::from_secs(10);

fn options() -> BridgeClientOptions {
    BridgeClientOptions::new()
        .ping_interval(Duration::from_millis(500))
        .ping_timeout(Duration::from_secs(3))
        .max_reconnect_delay(Duration::from_millis(200))
}

async fn connect(bus: &EventBus, node: &vertx::Reference) -> BridgeClient {
    BridgeClient::connect(bus, format!("127.0.0.1:{}", node.tcp), options())
        .await
        .expect("connect to the Vert.x bridge")
}

async fn next<T>(rx: &mut mpsc::UnboundedReceiver<T>) -> T {
    tokio::time::timeout(WAIT, rx.recv())
        .await
        .expect("a message within 10 s")
        .expect("the consumer is alive")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codecbus_sends_publishes_and_requests_vertx() {
    let node = vertx::start();
    let bus = EventBus::new();
    let client = connect(&bus, &node).await;
    assert!(client.is_connected());

    // A request to Vert.x's echo: a derived type there and back, headers
    // both ways.
    let order = Order {
        id: 7,
        sku: "tea".into(),
    };
    let reply: Message<Order> = client
        .request_with(
            "echo",
            order.clone(),
            DeliveryOptions::new().header("k", "v").timeout(WAIT),
        )
        .await
        .expect("echo replies");
    assert_eq!(*reply.body(), order);
    assert_eq!(reply.headers().get("echoed"), Some("true"));
    assert_eq!(reply.headers().get("k"), Some("v"));
    assert_eq!(reply.address(), "echo");

    // A reply that is not the type asked for.
    let wrong = client
        .request::<News>("echo", order.clone())
        .await
        .unwrap_err();
    assert_eq!(wrong.kind(), RequestErrorKind::Codec, "{wrong}");

    // A Vert.x consumer failing: its code and text.
    let failed = client
        .request::<JsValue>("fail", order.clone())
        .await
        .unwrap_err();
    assert_eq!(failed.kind(), RequestErrorKind::RecipientFailure);
    assert_eq!(failed.failure_code(), Some(42));
    assert_eq!(failed.message(), "it failed");
    assert_eq!(failed.address(), Some("fail"));

    // Nobody there.
    let nobody = client
        .request::<JsValue>("nobody", order.clone())
        .await
        .unwrap_err();
    assert_eq!(nobody.kind(), RequestErrorKind::NoHandlers, "{nobody}");
    assert_eq!(nobody.failure_code(), None);

    // A consumer of a Vert.x address; publish and send from here reach it
    // through Vert.x's bus.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let news = client
        .consumer("news", move |m: Message<News>| {
            let _ = tx.send((m.body().clone(), m.kind(), m.headers().clone()));
            async {}
        })
        .await;
    // The registration is a frame ahead of the publish: an echo after it
    // returns once Vert.x has handled both.
    let _: Message<JsValue> = client.request("echo", JsValue::Null).await.unwrap();
    let published = News {
        from: "rust".into(),
        n: 1,
    };
    client
        .publish_with(
            "news",
            published.clone(),
            DeliveryOptions::new().header("h", "1"),
        )
        .await
        .unwrap();
    let (body, kind, headers) = next(&mut rx).await;
    assert_eq!((body, kind), (published, DeliveryKind::Publish));
    assert_eq!(headers.get("h"), Some("1"));
    let sent = News {
        from: "rust".into(),
        n: 2,
    };
    client.send("news", sent.clone()).await.unwrap();
    let (body, kind, _) = next(&mut rx).await;
    assert_eq!((body, kind), (sent, DeliveryKind::Send));
    news.unregister().await;
    drop(client);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vertx_publishes_and_requests_codecbus() {
    let node = vertx::start();
    let bus = EventBus::new();
    let client = connect(&bus, &node).await;

    // Vert.x publishes (publish.trigger) to a codecbus consumer.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let _news = client
        .consumer("news", move |m: Message<News>| {
            let _ = tx.send((
                m.body().clone(),
                m.kind(),
                m.headers().get("origin").map(str::to_owned),
            ));
            async {}
        })
        .await;
    client
        .send("publish.trigger", Question { q: 0 })
        .await
        .unwrap();
    // publish.trigger reads `n`; a JSON object with it.
    let trigger = codecbus_json::jsobj! {"n": 5};
    client
        .send("publish.trigger", JsValue::from(trigger))
        .await
        .unwrap();
    let mut got = next(&mut rx).await;
    if got.0.n != 5 {
        // The first trigger had no `n`: Vert.x published null, which is not
        // a `News` and was refused; the next one is.
        got = next(&mut rx).await;
    }
    assert_eq!(
        got,
        (
            News {
                from: "vertx".into(),
                n: 5
            },
            DeliveryKind::Publish,
            Some("vertx".into())
        )
    );

    // Vert.x requests (ask.client) a codecbus consumer, which replies...
    let _svc = client
        .consumer("client.svc", |m: Message<Question>| async move {
            m.reply(Answer {
                answer: m.body().q + 1,
            })
        })
        .await;
    // ... or fails.
    let _fails = client
        .consumer("client.fails", |m: Message<Question>| async move {
            m.fail(7, "nope")
        })
        .await;
    let _: Message<JsValue> = client.request("echo", JsValue::Null).await.unwrap();
    let ask = Ask {
        address: "client.svc".into(),
        body: Question { q: 1 },
    };
    let answer: Message<Answer> = client.request("ask.client", ask).await.expect("ask.client");
    assert_eq!(*answer.body(), Answer { answer: 2 });
    let ask = Ask {
        address: "client.fails".into(),
        body: Question { q: 3 },
    };
    let failed = client
        .request::<Answer>("ask.client", ask)
        .await
        .unwrap_err();
    assert_eq!(failed.kind(), RequestErrorKind::RecipientFailure);
    assert_eq!(failed.failure_code(), Some(7));
    assert_eq!(failed.message(), "nope");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnects_to_a_restarted_vertx_and_registers_again() {
    let node = vertx::start();
    let (tcp, sockjs) = (node.tcp, node.sockjs);
    let bus = EventBus::new();
    let client = connect(&bus, &node).await;
    let _svc = client
        .consumer("client.svc", |m: Message<Question>| async move {
            m.reply(Answer {
                answer: m.body().q * 10,
            })
        })
        .await;
    let quick = DeliveryOptions::new().timeout(Duration::from_secs(2));
    let _: Message<Order> = client
        .request_with(
            "echo",
            Order {
                id: 1,
                sku: "a".into(),
            },
            quick.clone(),
        )
        .await
        .expect("echo before the restart");

    // The node dies: calls fail at once, with the reason.
    let killed = Instant::now();
    drop(node);
    let deadline = Instant::now() + WAIT;
    while client.is_connected() {
        assert!(
            Instant::now() < deadline,
            "the client did not see the node die"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let noticed = killed.elapsed();
    let asked = Instant::now();
    let down = client
        .request_with::<Order>(
            "echo",
            Order {
                id: 2,
                sku: "b".into(),
            },
            DeliveryOptions::new().timeout(WAIT),
        )
        .await
        .unwrap_err();
    assert_eq!(down.kind(), RequestErrorKind::Transport, "{down}");
    assert!(down.message().contains("is down"), "{down}");
    assert!(asked.elapsed() < WAIT / 2, "a call while down waited");
    let send = client
        .send(
            "news",
            News {
                from: "x".into(),
                n: 0,
            },
        )
        .await
        .unwrap_err();
    assert!(send.message().contains("is down"), "{send}");

    // A new node on the same port: the client connects again by itself.
    let restarted = Instant::now();
    let node = vertx::try_start(tcp, sockjs).expect("the node starts again on the same port");
    let ready = restarted.elapsed();
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        let reply = client
            .request_with::<Order>(
                "echo",
                Order {
                    id: 3,
                    sku: "c".into(),
                },
                quick.clone(),
            )
            .await;
        match reply {
            Ok(reply) => {
                assert_eq!(reply.body().id, 3);
                break;
            }
            Err(e) => {
                assert!(
                    restarted.elapsed() < Duration::from_secs(30),
                    "no reply 30 s after the restart: {e}"
                );
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
    let gap = killed.elapsed();
    let after_ready = restarted.elapsed().saturating_sub(ready);
    println!(
        "reconnection: the client saw the node die after {noticed:?}; the new node took {ready:?} to start; \
         the first request succeeded {after_ready:?} after it was ready ({attempts} attempts), {gap:?} after the kill"
    );

    // Its consumer was registered again on the new node.
    let ask = Ask {
        address: "client.svc".into(),
        body: Question { q: 4 },
    };
    let answer: Message<Answer> = client
        .request("ask.client", ask)
        .await
        .expect("ask.client after the restart");
    assert_eq!(*answer.body(), Answer { answer: 40 });
    client.close().await;
    drop(node);
}

/// A codecbus bridge closing connections silent for 300 ms, with a
/// consumer that answers after a second: the client's pings keep its
/// connection (the request waiting across the silence gets its reply);
/// without them the connection goes, and the waiting request fails at
/// once with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pings_keep_a_connection_and_a_lost_one_fails_its_requests() {
    use codecbus_bus::bridge::{Bridge, BridgeOptions, PermittedOptions};

    let remote = EventBus::new();
    let _slow = remote.consumer("slow", |m: Message<Question>| async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        m.reply(Answer {
            answer: m.body().q + 1,
        })
    });
    let options = BridgeOptions::new()
        .inbound(PermittedOptions::new().address("slow"))
        .typed::<Question>("slow")
        .idle_timeout(Duration::from_millis(300));
    let server = Bridge::new(&remote, options)
        .unwrap()
        .listen("127.0.0.1:0")
        .await
        .unwrap();
    let bus = EventBus::new();

    let pinging = BridgeClient::connect(
        &bus,
        server.local_addr(),
        BridgeClientOptions::new().ping_interval(Duration::from_millis(100)),
    )
    .await
    .unwrap();
    let answer: Message<Answer> = pinging
        .request("slow", Question { q: 1 })
        .await
        .expect("the pinged connection lasts through the wait");
    assert_eq!(*answer.body(), Answer { answer: 2 });
    pinging.close().await;

    let silent = BridgeClient::connect(
        &bus,
        server.local_addr(),
        BridgeClientOptions::new().ping_interval(Duration::from_secs(60)),
    )
    .await
    .unwrap();
    let asked = Instant::now();
    let lost = silent
        .request::<Answer>("slow", Question { q: 1 })
        .await
        .unwrap_err();
    assert_eq!(lost.kind(), RequestErrorKind::Transport, "{lost}");
    assert!(lost.message().contains("was lost"), "{lost}");
    assert!(
        asked.elapsed() < Duration::from_millis(900),
        "the request waited for the reply that could not come"
    );
    // It connects again by itself (and is closed again, being silent).
    let deadline = Instant::now() + WAIT;
    while !silent.is_connected() {
        assert!(Instant::now() < deadline, "no reconnection");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    silent.close().await;
    server.shutdown().await;
}

/// Two consumers of one address share one registration with the bridge:
/// a publish from the other side reaches both, the address stays
/// registered while one is left, and goes with the last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumers_of_one_address_share_its_registration() {
    use codecbus_bus::PublishErrorKind;
    use codecbus_bus::bridge::{Bridge, BridgeOptions, PermittedOptions};

    let remote = EventBus::new();
    let options = BridgeOptions::new()
        .outbound(PermittedOptions::new().address("news"))
        .typed::<News>("news");
    let server = Bridge::new(&remote, options)
        .unwrap()
        .listen("127.0.0.1:0")
        .await
        .unwrap();
    let bus = EventBus::new();
    let client = BridgeClient::connect(&bus, server.local_addr(), BridgeClientOptions::new())
        .await
        .unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let consumer = |name: &'static str| {
        let tx = tx.clone();
        move |m: Message<News>| {
            let _ = tx.send((name, m.body().n));
            async {}
        }
    };
    let first = client.consumer("news", consumer("first")).await;
    let second = client.consumer("news", consumer("second")).await;
    let published = |n| {
        let remote = remote.clone();
        async move {
            let deadline = Instant::now() + WAIT;
            loop {
                match remote
                    .publish(
                        "news",
                        News {
                            from: "remote".into(),
                            n,
                        },
                    )
                    .await
                {
                    Ok(_) => return Ok(()),
                    Err(e)
                        if Instant::now() < deadline
                            && e.kind() == PublishErrorKind::NoHandlers =>
                    {
                        // The register frame is on its way.
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    };
    published(1).await.unwrap();
    let mut got = vec![next(&mut rx).await, next(&mut rx).await];
    got.sort();
    assert_eq!(got, [("first", 1), ("second", 1)]);

    first.unregister().await;
    published(2).await.unwrap();
    assert_eq!(next(&mut rx).await, ("second", 2));

    second.unregister().await;
    // The unregister frame reaches the bridge: its consumer goes.
    let deadline = Instant::now() + WAIT;
    loop {
        match remote
            .publish(
                "news",
                News {
                    from: "remote".into(),
                    n: 3,
                },
            )
            .await
        {
            Err(e) if e.kind() == PublishErrorKind::NoHandlers => break,
            _ => {
                assert!(Instant::now() < deadline, "the address stayed registered");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
    assert!(
        rx.try_recv().is_err(),
        "a message after the last unregister"
    );
    client.close().await;
    server.shutdown().await;
}

/// A conversation from Vert.x's side: Vert.x requests a codecbus consumer
/// (`converse.client`), which replies asking for an answer; the reply
/// reaches Vert.x with a reply address, Vert.x's answer there (asking in
/// turn) reaches the consumer's `reply_and_request`, and the consumer's
/// last word reaches Vert.x.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vertx_answers_a_codecbus_reply_that_asks() {
    let node = vertx::start();
    let bus = EventBus::new();
    let client = connect(&bus, &node).await;
    let (heard_tx, mut heard) = mpsc::unbounded_channel();
    let _talk = client
        .consumer("client.talk", move |m: Message<Question>| {
            let heard_tx = heard_tx.clone();
            async move {
                let said = Answer {
                    answer: m.body().q + 1,
                };
                let answer = m.reply_and_request::<JsValue>(said).await;
                // Vert.x's answer asks in turn: answered here (an object:
                // Vert.x's TCP bridge takes no other body).
                if let Ok(answer) = &answer {
                    let _ = answer.reply(JsValue::from(codecbus_json::jsobj! {"bye": true}));
                }
                let _ = heard_tx.send(answer.map(|a| a.body().clone()).map_err(|e| e.kind()));
            }
        })
        .await;
    let ask = Ask {
        address: "client.talk".into(),
        body: Question { q: 1 },
    };
    let outcome: Message<JsValue> = client
        .request("converse.client", ask)
        .await
        .expect("converse.client");
    assert_eq!(
        outcome.body().to_string(),
        r#"{"asked":true,"last":{"bye":true},"reply":{"answer":2}}"#
    );
    let answer = next(&mut heard).await.expect("Vert.x's answer");
    assert_eq!(answer.to_string(), r#"{"ok":true}"#);
    client.close().await;
}

/// A consumer of `news` on `client`, where the reference reports what its
/// `converse.turn` heard; registered before this returns.
async fn reports(client: &BridgeClient) -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    let _news = client
        .consumer("news", move |m: Message<JsValue>| {
            let _ = tx.send(m.body().to_string());
            async {}
        })
        .await;
    // The registration is a frame ahead of the echo's request.
    let _: Message<JsValue> = client.request("echo", JsValue::Null).await.unwrap();
    rx
}

/// A conversation from codecbus's side: Vert.x's reply to a request asks
/// for an answer (`converse.turn`'s `replyAndRequest`), so the message
/// `request` returns expects one; the client's `reply_and_request` there
/// reaches Vert.x asking in turn, and Vert.x's answer to it is the call's
/// result (which expects nothing more). A plain `reply` on the turn
/// reaches Vert.x as a plain answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codecbus_answers_a_vertx_reply_that_asks() {
    let node = vertx::start();
    let bus = EventBus::new();
    let client = connect(&bus, &node).await;
    let mut heard = reports(&client).await;

    let asking: Message<Asking> = client
        .request("converse.turn", Question { q: 1 })
        .await
        .expect("converse.turn");
    assert_eq!(
        *asking.body(),
        Asking {
            ask: Question { q: 1 }
        }
    );
    assert_eq!(asking.address(), "converse.turn");
    assert!(asking.expects_reply(), "Vert.x's reply asks for an answer");
    let last = tokio::time::timeout(
        WAIT,
        asking.reply_and_request::<JsValue>(Answer { answer: 2 }),
    )
    .await
    .expect("Vert.x's answer within 10 s")
    .expect("Vert.x answers the answer that asks");
    assert_eq!(last.body().to_string(), r#"{"heard":{"answer":2}}"#);
    assert!(!last.expects_reply());
    let again = last.reply(JsValue::Null).unwrap_err();
    assert_eq!(again.kind(), ReplyErrorKind::NoReplyExpected, "{again}");
    assert_eq!(
        next(&mut heard).await,
        r#"{"asked":true,"heard":{"answer":2}}"#
    );
    let answered = asking.reply(Answer { answer: 3 }).unwrap_err();
    assert_eq!(
        answered.kind(),
        ReplyErrorKind::AlreadyAnswered,
        "{answered}"
    );

    // A plain answer on the turn: Vert.x hears it, and asks nothing more.
    let asking: Message<JsValue> = client
        .request("converse.turn", Question { q: 2 })
        .await
        .expect("converse.turn");
    asking
        .reply(Answer { answer: 4 })
        .expect("the turn takes a reply");
    assert_eq!(
        next(&mut heard).await,
        r#"{"asked":false,"heard":{"answer":4}}"#
    );
    client.close().await;
}

/// A turn failed with `fail` reaches Vert.x as a failure, code and text; a
/// turn dropped unanswered, or whose reply is not the type asked for, fails
/// at once; a plain Vert.x reply expects no answer (`reply` and `fail` on
/// it are `NoReplyExpected`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codecbus_fails_a_vertx_reply_that_asks_and_a_plain_one_takes_no_answer() {
    let node = vertx::start();
    let bus = EventBus::new();
    let client = connect(&bus, &node).await;
    let mut heard = reports(&client).await;

    let asking: Message<JsValue> = client
        .request("converse.turn", Question { q: 1 })
        .await
        .expect("converse.turn");
    asking.fail(7, "not now").expect("the turn takes a failure");
    assert_eq!(
        next(&mut heard).await,
        r#"{"failed":7,"message":"not now"}"#
    );

    let asking: Message<JsValue> = client
        .request("converse.turn", Question { q: 2 })
        .await
        .expect("converse.turn");
    drop(asking);
    let dropped = next(&mut heard).await;
    assert!(
        dropped.starts_with(r#"{"failed":-1,"message":"No reply"#),
        "{dropped}"
    );

    // A reply that asks, and is not the type asked for: the refusal is
    // Vert.x's answer.
    let wrong = client
        .request::<News>("converse.turn", Question { q: 3 })
        .await
        .unwrap_err();
    assert_eq!(wrong.kind(), RequestErrorKind::Codec, "{wrong}");
    let refused = next(&mut heard).await;
    assert!(
        refused.starts_with(r#"{"failed":-1,"message":"The reply from address converse.turn is"#),
        "{refused}"
    );

    let plain: Message<Order> = client
        .request(
            "echo",
            Order {
                id: 1,
                sku: "tea".into(),
            },
        )
        .await
        .expect("echo replies");
    assert!(!plain.expects_reply());
    let reply = plain.reply(Answer { answer: 1 }).unwrap_err();
    assert_eq!(reply.kind(), ReplyErrorKind::NoReplyExpected, "{reply}");
    let fail = plain.fail(1, "no").unwrap_err();
    assert_eq!(fail.kind(), ReplyErrorKind::NoReplyExpected, "{fail}");
    client.close().await;
}

/// A request cancelled while it waits forgets its reply address: with room
/// for two waiting requests, five cancelled ones leave the room free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_request_forgets_its_reply_address() {
    use codecbus_bus::bridge::{Bridge, BridgeOptions, PermittedOptions};

    let remote = EventBus::new();
    // Answers after a minute: its requests are cancelled before.
    let _slow = remote.consumer("slow", |m: Message<JsValue>| async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        drop(m);
    });
    let _echo = remote.consumer("echo", |m: Message<JsValue>| async move {
        m.reply(m.body().clone())
    });
    let permits = BridgeOptions::new()
        .inbound(PermittedOptions::new().address("slow"))
        .inbound(PermittedOptions::new().address("echo"));
    let server = Bridge::new(&remote, permits)
        .unwrap()
        .listen("127.0.0.1:0")
        .await
        .unwrap();
    let bus = EventBus::new();
    let client = BridgeClient::connect(&bus, server.local_addr(), options().max_pending_replies(2))
        .await
        .unwrap();
    for _ in 0..5 {
        let cancelled = tokio::time::timeout(
            Duration::from_millis(50),
            client.request::<JsValue>("slow", JsValue::from(1)),
        )
        .await;
        assert!(cancelled.is_err(), "the slow request is cancelled");
    }
    let echoed: Message<JsValue> = client.request("echo", JsValue::from(7)).await.unwrap();
    assert_eq!(echoed.body(), &JsValue::from(7));
    client.close().await;
    server.shutdown().await;
}
