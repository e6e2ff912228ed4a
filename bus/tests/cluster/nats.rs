//! The bus across NATS: two bus nodes in this process, each with its own
//! connection to a real `nats-server` started by the harness. What any
//! cluster must do (routing, requests, conversations, codecs, failures,
//! the size limit) is in `conformance.rs`, run against NATS and the
//! in-memory cluster alike; this file has what only NATS has.
#![cfg(feature = "nats")]

use crate::common;
use crate::harness;
use crate::tally;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use codecbus_bus::{
    BuildErrorKind, ConsumerOptions, DeliveryOptions, EventBus, Message, RequestErrorKind,
    SendErrorKind,
};
use harness::{Config, NatsServer};

use common::{eventually, nats_options as options};
use tally::{Tally, counting};

async fn node(server: &NatsServer) -> EventBus {
    common::nats_node(&server.url()).await
}

#[tokio::test]
async fn connect_errors_are_clear() {
    let url = harness::unreachable_url();
    let err = EventBus::builder()
        .nats(options(&url))
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Connect);
    assert!(err.to_string().contains(&url), "{err}");
    common::build_error_texts(&err);

    let err = EventBus::builder()
        .nats(codecbus_bus::NatsOptions::with_servers(Vec::<String>::new()))
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Config);
    assert!(err.to_string().contains("no NATS server URL"), "{err}");

    let err = EventBus::builder()
        .nats(options(&url).subject_prefix("bad prefix"))
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Config);
    assert!(err.to_string().contains("subject prefix"), "{err}");

    let err = EventBus::builder()
        .nats(options(&url).credentials_file("/nonexistent/user.creds"))
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Config);
    assert!(err.to_string().contains("/nonexistent/user.creds"), "{err}");
}

/// A node whose NATS client buffer overflows (a "slow consumer" on the
/// client side, forced with a buffer of one message): the drops are counted
/// in `remote_dropped` and reported to `on_event`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_side_slow_consumer_is_counted() {
    use codecbus_bus::NatsEvent;

    let server = NatsServer::for_test("client_side_slow_consumer_is_counted");
    let a = node(&server).await;
    let events = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&events);
    let b = EventBus::builder()
        .nats(
            options(&server.url())
                .subscription_capacity(1)
                .on_event(move |event| {
                    if matches!(event, NatsEvent::SlowConsumer(_)) {
                        seen.fetch_add(1, Ordering::SeqCst);
                    }
                }),
        )
        .connect()
        .await
        .unwrap();
    let _burst = b.consumer_with(
        "burst",
        ConsumerOptions::new().queue_capacity(100_000),
        |_m: Message<u64>| async {},
    );
    b.flush().await.unwrap();
    const N: u64 = 20_000;
    for i in 0..N {
        a.publish("burst", i).await.unwrap();
    }
    a.flush().await.unwrap();
    eventually("the client drops messages", || {
        b.metrics().remote_dropped > 0
    })
    .await;
    // Wait for quiet: nothing received or dropped for 200 ms.
    let mut last = b.metrics();
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = b.metrics();
        if now == last {
            break;
        }
        last = now;
    }
    let m = b.metrics();
    assert!(m.remote_dropped > 0 && m.remote_received > 0, "{m:?}");
    assert!(m.remote_received + m.remote_dropped <= N, "{m:?}");
    assert_eq!(m.delivered, m.remote_received);
    assert_eq!(events.load(Ordering::SeqCst) as u64, m.remote_dropped);
    assert_eq!(a.metrics().remote_dropped, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_drains_in_flight_requests() {
    let server = NatsServer::for_test("close_drains_in_flight_requests");
    let (a, b) = (node(&server).await, node(&server).await);
    let _slow = b.consumer("slow", |m: Message<u64>| async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        m.reply(*m.body() * 10)
    });
    b.flush().await.unwrap();
    let a2 = a.clone();
    let pending = tokio::spawn(async move { a2.request::<u64>("slow", 4u64).await });
    eventually("the request reached b", || b.metrics().handled == 1).await;
    b.close().await;
    let reply = pending
        .await
        .unwrap()
        .expect("the request in flight was answered");
    assert_eq!(*reply.body(), 40);

    let err = b.send("slow", 1u64).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::Transport);
    assert!(err.to_string().contains("closed"), "{err}");
    let err = a.request::<u64>("slow", 1u64).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::NoHandlers);
    b.close().await; // twice is fine
    a.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_restart_mid_stream() {
    let mut server = NatsServer::for_test("server_restart_mid_stream");
    let (a, b) = (node(&server).await, node(&server).await);
    let published = Tally::default();
    let _double = b.consumer(
        "double",
        |m: Message<u64>| async move { m.reply(*m.body() * 2) },
    );
    let _news = counting(&b, "news", "b", &published);
    b.flush().await.unwrap();
    let short = || DeliveryOptions::new().timeout(Duration::from_millis(300));

    for n in 0..20u64 {
        let r: Message<u64> = a.request_with("double", n, short()).await.unwrap();
        assert_eq!(*r.body(), n * 2);
    }

    server.kill();
    // During the outage requests fail within their timeout, never hang.
    for n in 0..5u64 {
        let started = Instant::now();
        let err = a
            .request_with::<u64>("double", n, short())
            .await
            .unwrap_err();
        assert!(
            matches!(
                err.kind(),
                RequestErrorKind::Timeout | RequestErrorKind::Transport
            ),
            "{err:?}"
        );
        assert!(
            started.elapsed() < Duration::from_millis(600),
            "{:?}",
            started.elapsed()
        );
    }

    server.restart();
    // Both clients reconnect and resubscribe on their own.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match a.request_with::<u64>("double", 21u64, short()).await {
            Ok(r) => {
                assert_eq!(*r.body(), 42);
                break;
            }
            Err(e) => {
                assert!(Instant::now() < deadline, "no recovery after restart: {e}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    for n in 0..20u64 {
        let r: Message<u64> = a.request_with("double", n, short()).await.unwrap();
        assert_eq!(*r.body(), n * 2);
    }
    // Publishes resume too (b's plain subscription came back).
    a.publish("news", 7u64).await.unwrap();
    eventually("publish after restart", || published.get("b") == [7]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_authentication() {
    let config = Config {
        token: Some("s3cret".to_owned()),
        ..Config::default()
    };
    let server = NatsServer::for_test_with("token_authentication", &config);
    let err = EventBus::builder()
        .nats(options(&server.url()))
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Connect);
    assert!(err.to_string().contains(&server.url()), "{err}");
    let err = EventBus::builder()
        .nats(options(&server.url()).token("wrong"))
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Connect);

    let a = EventBus::builder()
        .nats(options(&server.url()).token("s3cret"))
        .connect()
        .await
        .unwrap();
    let b = EventBus::builder()
        .nats(options(&server.url()).token("s3cret").connection_name("b"))
        .connect()
        .await
        .unwrap();
    let _c = b.consumer("auth", |m: Message<u64>| async move { m.reply(*m.body()) });
    b.flush().await.unwrap();
    let r: Message<u64> = a.request("auth", 5u64).await.unwrap();
    assert_eq!(*r.body(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_password_authentication() {
    let config = Config {
        user_password: Some(("ada".to_owned(), "lovelace".to_owned())),
        ..Config::default()
    };
    let server = NatsServer::for_test_with("user_password_authentication", &config);
    for bad in [None, Some(("ada", "babbage"))] {
        let mut o = options(&server.url());
        if let Some((u, p)) = bad {
            o = o.user_and_password(u, p);
        }
        let err = EventBus::builder().nats(o).connect().await.unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::Connect);
        // The bus's message names the server; the client's error, as the
        // source, says why, and the message does not repeat it.
        assert!(err.to_string().contains(&server.url()), "{err}");
        let texts = common::build_error_texts(&err);
        assert!(
            texts[1].to_lowercase().contains("authorization"),
            "{texts:?}"
        );
    }
    let a = EventBus::builder()
        .nats(options(&server.url()).user_and_password("ada", "lovelace"))
        .connect()
        .await
        .unwrap();
    let _c = a.consumer(
        "auth",
        |m: Message<u64>| async move { m.reply(*m.body() + 1) },
    );
    a.flush().await.unwrap();
    let r: Message<u64> = a.request("auth", 5u64).await.unwrap();
    assert_eq!(*r.body(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subject_prefixes_keep_applications_apart() {
    let server = NatsServer::for_test("subject_prefixes_keep_applications_apart");
    let a = node(&server).await;
    let other = EventBus::builder()
        .nats(options(&server.url()).subject_prefix("other.app"))
        .connect()
        .await
        .unwrap();
    let _c = other.consumer("x", |m: Message<u64>| async move { m.reply(1u64) });
    other.flush().await.unwrap();
    let err = a.request::<u64>("x", 0u64).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::NoHandlers);
    let r: Message<u64> = other.request("x", 0u64).await.unwrap();
    assert_eq!(*r.body(), 1);

    // Addresses that are not subject tokens are escaped, not refused.
    let b = node(&server).await;
    for (i, address) in ["a b", "a..b", "", "x.*.>", "é%", "a.b"]
        .into_iter()
        .enumerate()
    {
        let n = i as u64;
        let _c = a.consumer(address, move |m: Message<u64>| async move {
            m.reply(*m.body() + n)
        });
        a.flush().await.unwrap();
        let r: Message<u64> = b.request(address, 100u64).await.unwrap();
        assert_eq!(*r.body(), 100 + n, "{address:?}");
    }
    let err = b.request::<u64>(&"x".repeat(4000), 1u64).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::Transport);
    assert!(err.to_string().contains("too long"), "{err}");
}

/// The wire contract seen from a plain NATS client: what a node in another
/// language would send and receive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wire_contract_from_a_plain_nats_client() {
    use async_nats::HeaderMap;

    let server = NatsServer::for_test("wire_contract_from_a_plain_nats_client");
    let b = node(&server).await;
    let _c = b.consumer("wire.double", |m: Message<u64>| async move {
        if *m.body() == 13 {
            m.fail(13, "unlucky")
        } else {
            m.reply_with(
                *m.body() * 2,
                codecbus_bus::ReplyOptions::new().header("x-by", "b"),
            )
        }
    });
    let seen = Tally::default();
    let _p = counting(&b, "wire.news", "b", &seen);
    b.flush().await.unwrap();
    let raw = async_nats::connect(server.url()).await.unwrap();
    let headers = |version: &str, codec: &str| {
        let mut h = HeaderMap::new();
        h.insert("Codecbus-Codec", format!("{version} {codec}").as_str());
        h.insert("x-trace", "t");
        h
    };
    let body = |n: u64| codecbus_core::to_vec(&n).unwrap().into();

    // A request: subject `codecbus.s.<address>`, reply in the codec of u64.
    let reply = raw
        .request_with_headers("codecbus.s.wire.double", headers("1", "u64"), body(21))
        .await
        .unwrap();
    // The node names the codec in the payload: 0xC1, wire version 2, the
    // name as a MessagePack str, then the body.
    let h = reply.headers.as_ref().unwrap();
    assert_eq!(h.get("Codecbus-Codec"), None);
    assert_eq!(h.get("x-by").map(|v| v.as_str()), Some("b"));
    let prefix = b"\xc1\x02\xa3u64";
    assert_eq!(&reply.payload[..prefix.len()], prefix);
    assert_eq!(
        codecbus_core::from_slice::<u64>(&reply.payload[prefix.len()..]).unwrap(),
        42
    );
    // A request may name its codec the same way, with no header at all.
    let mut prefixed = prefix.to_vec();
    prefixed.extend_from_slice(&codecbus_core::to_vec(&4u64).unwrap());
    let reply = raw
        .request("codecbus.s.wire.double", prefixed.into())
        .await
        .unwrap();
    let h = reply.headers.as_ref().unwrap();
    assert_eq!(h.get("Codecbus-Codec"), None);
    assert_eq!(&reply.payload[..], b"\xc1\x02\xa3u64\x08");
    // So may a node of the previous build, with version 1 in its prefix.
    let reply = raw
        .request(
            "codecbus.s.wire.double",
            b"\xc1\x01\xa3u64\x05".to_vec().into(),
        )
        .await
        .unwrap();
    assert_eq!(&reply.payload[..], b"\xc1\x02\xa3u64\x0a");

    // A failure reply: kind, code and message.
    let reply = raw
        .request_with_headers("codecbus.s.wire.double", headers("1", "u64"), body(13))
        .await
        .unwrap();
    let h = reply.headers.as_ref().unwrap();
    assert_eq!(
        h.get("Codecbus-Failure").map(|v| v.as_str()),
        Some("2 RECIPIENT_FAILURE 13")
    );
    assert_eq!(&reply.payload[..], b"unlucky");

    // A version this node does not read, an unknown codec, bad bytes.
    for (version, codec, payload, needle) in [
        ("2", "u64", body(1), "the header form is version 1"),
        ("3", "u64", body(1), "reads versions 1 and 2"),
        ("1", "no.such.codec", body(1), "\"no.such.codec\""),
        ("1", "u64", b"\xc1".to_vec().into(), "cannot decode"),
    ] {
        let reply = raw
            .request_with_headers("codecbus.s.wire.double", headers(version, codec), payload)
            .await
            .unwrap();
        let h = reply.headers.as_ref().unwrap();
        assert_eq!(
            h.get("Codecbus-Failure").map(|v| v.as_str()),
            Some("2 CODEC -1")
        );
        let text = String::from_utf8_lossy(&reply.payload);
        assert!(text.contains(needle), "{text}");
    }
    assert_eq!(b.metrics().undecodable, 4);

    // A publish: subject `codecbus.p.<address>`.
    raw.publish_with_headers("codecbus.p.wire.news", headers("1", "u64"), body(5))
        .await
        .unwrap();
    raw.publish("codecbus.p.wire.news", body(6)).await.unwrap(); // no headers: not ours
    raw.flush().await.unwrap();
    eventually("the raw publish arrived", || seen.get("b") == [5]).await;
    eventually("the headerless one was counted", || {
        b.metrics().undecodable == 5
    })
    .await;
}

/// The next message a raw subscription sees, within 5 s.
async fn sniffed(sub: &mut async_nats::Subscriber) -> async_nats::Message {
    tokio::time::timeout(Duration::from_secs(5), futures_util::StreamExt::next(sub))
        .await
        .expect("a message within 5 s")
        .expect("the subscription is open")
}

/// A node with `compress_above(threshold)` on `server`.
async fn compressing_node(server: &NatsServer, threshold: usize) -> EventBus {
    EventBus::builder()
        .default_timeout(Duration::from_secs(5))
        .nats(options(&server.url()).compress_above(threshold))
        .connect()
        .await
        .expect("connect to the test server")
}

/// A JSON-like document of about `bytes` bytes encoded: records with
/// repeating field names and similar values, as an API's responses are.
fn document(bytes: usize) -> codecbus_json::JsObj {
    let records: Vec<codecbus_json::JsValue> = (0..bytes / 100)
        .map(|i| {
            let record = serde_json::json!({
                "id": i,
                "user": format!("user-{}", i % 50),
                "text": format!("status update number {i} from the feed"),
                "lang": "en",
                "retweeted": i % 3 == 0,
            });
            codecbus_json::JsValue::from(record)
        })
        .collect();
    std::iter::once(("statuses", codecbus_json::JsArray::from_iter(records))).collect()
}

/// Large bodies leave compressed and every node reads them, whether or
/// not it compresses itself; a raw subscriber sees the compressed form.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_bodies_travel_compressed() {
    let server = NatsServer::for_test("large_bodies_travel_compressed");
    let (a, b) = (compressing_node(&server, 1024).await, node(&server).await);
    let _echo = b.consumer("lz4.echo", |m: Message<codecbus_json::JsObj>| async move {
        let body = m.body().clone();
        m.reply(body)
    });
    b.flush().await.unwrap();
    let raw = async_nats::connect(server.url()).await.unwrap();
    let mut sniff = raw.subscribe("codecbus.s.lz4.echo").await.unwrap();
    raw.flush().await.unwrap();

    let doc = document(475_000);
    let plain = codecbus_core::to_vec(&doc).unwrap().len();
    assert!(plain > 390_000, "{plain}");
    let back: Message<codecbus_json::JsObj> = a.request("lz4.echo", doc.clone()).await.unwrap();
    assert_eq!(back.body(), &doc);

    // What crossed the server: the codec prefix, the mark, a third or
    // less of the bytes.
    let seen = sniffed(&mut sniff).await;
    let prefix = b"\xc1\x02\xaejson-obj-value\xc1";
    assert_eq!(&seen.payload[..prefix.len()], prefix);
    assert!(
        seen.payload.len() * 3 < plain,
        "{} bytes on the wire for {plain}",
        seen.payload.len()
    );
    eprintln!(
        "{plain} bytes of body, {} on the wire compressed",
        seen.payload.len()
    );

    // Under the threshold: plain.
    let small: codecbus_json::JsObj = std::iter::once(("a", 1)).collect();
    let _: Message<codecbus_json::JsObj> = a.request("lz4.echo", small).await.unwrap();
    let seen = sniffed(&mut sniff).await;
    assert_eq!(
        seen.payload[prefix.len() - 1],
        0x81,
        "a fixmap of one entry"
    );
    a.close().await;
    b.close().await;
}

/// The server's `max_payload` bounds the uncompressed size as well: a
/// sender refuses a body that would inflate past it, and a receiver
/// refuses one that declares more, without allocating it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_size_limit_holds_for_compressed_bodies() {
    let config = Config {
        max_payload: Some(64 * 1024),
        ..Config::default()
    };
    let server = NatsServer::for_test_with("the_size_limit_holds_for_compressed_bodies", &config);
    let (a, b) = (compressing_node(&server, 1024).await, node(&server).await);
    let seen = Tally::default();
    let _c = counting(&b, "lz4.limit", "b", &seen);
    b.flush().await.unwrap();
    // 200 000 bytes that compress to a few hundred: over the limit all
    // the same.
    let body = "z".repeat(200_000);
    let err = a.send("lz4.limit", body.clone()).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::PayloadTooLarge);
    assert!(
        err.to_string()
            .contains("uncompressed, over the NATS server's max_payload of 65536"),
        "{err}"
    );
    assert_eq!(err.into_body::<String>().as_deref(), Some(&body));

    // A peer's message declaring 1 GiB: undecodable, nothing inflated.
    let raw = async_nats::connect(server.url()).await.unwrap();
    let mut bomb = b"\xc1\x01\xa6string\xc1\xce\x40\x00\x00\x00".to_vec();
    bomb.extend_from_slice(&[0x1f, 0x00, 0x01, 0x00]);
    raw.publish("codecbus.s.lz4.limit", bomb.into())
        .await
        .unwrap();
    raw.flush().await.unwrap();
    eventually("the bomb was counted as undecodable", || {
        b.metrics().undecodable == 1
    })
    .await;
    assert!(seen.get("b").is_empty());
    a.close().await;
    b.close().await;
}
