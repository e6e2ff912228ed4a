//! Durable addresses on NATS JetStream: bus nodes in this process against
//! a real `nats-server -js` (its store in the server's temporary
//! directory) started by the harness.
#![cfg(feature = "jetstream")]

use crate::harness;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use codecbus_bus::{
    BuildErrorKind, DEAD_LETTER_ADDRESS_HEADER, DEAD_LETTER_DELIVERIES_HEADER,
    DEAD_LETTER_REASON_HEADER, DeliveryOptions, DurableOptions, EventBus, MESSAGE_ID_HEADER,
    Message, NatsOptions,
};
use codecbus_core::MessageCodec;
use harness::{NatsServer, jetstream_for_test};

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "test.durable.payment")]
struct Payment {
    id: u64,
    cents: i64,
}

fn durable() -> DurableOptions {
    DurableOptions::new()
        .ack_wait(Duration::from_secs(2))
        .redelivery_delay(Duration::from_millis(50))
        .max_deliveries(3)
}

async fn node(server: &NatsServer, name: &str, options: DurableOptions) -> EventBus {
    try_node(server, name, options)
        .await
        .expect("connect to the test server")
}

async fn try_node(
    server: &NatsServer,
    name: &str,
    options: DurableOptions,
) -> Result<EventBus, codecbus_bus::BuildError> {
    EventBus::builder()
        .default_timeout(Duration::from_secs(2))
        .nats(
            NatsOptions::new(server.url())
                .connection_name(name)
                .connection_timeout(Duration::from_secs(2))
                .max_reconnect_delay(Duration::from_millis(50))
                .durable("payments", options),
        )
        .connect()
        .await
}

/// Polls `check` until it holds or 20 s pass (generous: a loaded machine).
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The subjects of the durable address `payments` (`{prefix}.js.s.` and
/// `{prefix}.js.p.`), and of its dead letters: each names the address's
/// stream to the server.
const SENDS: &str = "codecbus.js.s.payments";
const PUBLISHES: &str = "codecbus.js.p.payments";
const DEAD_LETTERS: &str = "codecbus.js.s.payments.dead";

/// The stream behind `subject`, as the server knows it.
async fn stream_of(server: &NatsServer, subject: &str) -> async_nats::jetstream::stream::Stream {
    let client = async_nats::connect(server.url())
        .await
        .expect("a client of the test server");
    let js = async_nats::jetstream::new(client);
    let name = js
        .stream_by_subject(subject)
        .await
        .expect("the stream of the subject");
    js.get_stream(&name).await.expect("the stream")
}

/// Waits until the server holds nothing more for the JetStream consumer
/// `consumer` (`send`, or `node-{name}` for publishes) of the stream behind
/// `subject`: every message stored for it was delivered (none pending)
/// and acknowledged (none awaiting its ack, none waiting to be delivered
/// again). From then on the server delivers it nothing until a new
/// message is stored: what the handlers saw is all they will ever see.
/// The server's own state, where a fixed sleep would miss a late
/// redelivery (and take its time).
async fn wait_until_settled(server: &NatsServer, subject: &str, consumer: &str) {
    let stream = stream_of(server, subject).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let info = stream
            .consumer_info(consumer)
            .await
            .expect("the consumer's info");
        if info.num_pending == 0 && info.num_ack_pending == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "consumer {consumer} of {subject} not settled within 20 s: {} not delivered, {} awaiting their ack",
            info.num_pending,
            info.num_ack_pending
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until the JetStream consumer `consumer` of the stream behind
/// `subject` exists on the server.
async fn wait_for_consumer(server: &NatsServer, subject: &str, consumer: &str) {
    let stream = stream_of(server, subject).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while stream.consumer_info(consumer).await.is_err() {
        assert!(
            Instant::now() < deadline,
            "no consumer {consumer} of {subject} within 20 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Records (id, delivery count) of every message a consumer saw.
#[derive(Default, Clone)]
struct Seen(Arc<Mutex<Vec<(u64, u32)>>>);

impl Seen {
    fn add(&self, id: u64, delivery: u32) {
        self.0.lock().unwrap().push((id, delivery));
    }
    fn all(&self) -> Vec<(u64, u32)> {
        self.0.lock().unwrap().clone()
    }
    fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }
    fn ids(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self.all().into_iter().map(|(id, _)| id).collect();
        ids.sort_unstable();
        ids
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_failing_twice_gets_the_message_a_third_time() {
    let server = jetstream_for_test("durable third delivery");
    let bus = node(&server, "a", durable()).await;
    let seen = Seen::default();
    let s = seen.clone();
    let _c = bus.consumer("payments", move |m: Message<Payment>| {
        let s = s.clone();
        async move {
            assert!(m.is_durable());
            s.add(m.body().id, m.delivery_count());
            if m.delivery_count() < 3 {
                Err(format!("flaky, delivery {}", m.delivery_count()))
            } else {
                Ok(())
            }
        }
    });
    bus.flush().await.unwrap();
    bus.send("payments", Payment { id: 1, cents: 100 })
        .await
        .unwrap();
    eventually("three deliveries", || seen.len() >= 3).await;
    // Nothing more comes: the server has the third delivery acknowledged.
    wait_until_settled(&server, SENDS, "send").await;
    assert_eq!(seen.all(), [(1, 1), (1, 2), (1, 3)]);
    let m = bus.metrics();
    assert_eq!(
        (m.durable_redelivered, m.durable_acked, m.dead_lettered),
        (2, 1, 0)
    );
    bus.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_always_failing_handler_sends_the_message_to_the_dead_letter_address() {
    let server = jetstream_for_test("durable dead letter");
    let bus = node(&server, "a", durable()).await;
    let attempts = Seen::default();
    let a = attempts.clone();
    let _c = bus.consumer("payments", move |m: Message<Payment>| {
        let a = a.clone();
        async move {
            a.add(m.body().id, m.delivery_count());
            if m.delivery_count() == 2 {
                panic!("a panic counts as a failure too");
            }
            Err::<(), _>("card declined")
        }
    });
    let (tx, mut dead) = tokio::sync::mpsc::unbounded_channel();
    let _d = bus.consumer("payments.dead", move |m: Message<Payment>| {
        let tx = tx.clone();
        async move {
            let h = m.headers();
            let _ = tx.send((
                m.body().clone(),
                h.get(DEAD_LETTER_ADDRESS_HEADER).map(str::to_owned),
                h.get(DEAD_LETTER_DELIVERIES_HEADER).map(str::to_owned),
                h.get(DEAD_LETTER_REASON_HEADER).map(str::to_owned),
            ));
        }
    });
    bus.flush().await.unwrap();
    let payment = Payment { id: 9, cents: -5 };
    bus.send("payments", payment.clone()).await.unwrap();
    let (body, address, deliveries, reason) =
        tokio::time::timeout(Duration::from_secs(20), dead.recv())
            .await
            .expect("a dead letter within 20 s")
            .unwrap();
    assert_eq!(body, payment);
    assert_eq!(address.as_deref(), Some("payments"));
    assert_eq!(deliveries.as_deref(), Some("3"));
    assert_eq!(reason.as_deref(), Some("card declined"));
    assert_eq!(attempts.all(), [(9, 1), (9, 2), (9, 3)]);
    // Moved once, handled no more: the server holds nothing more for
    // either consumer.
    wait_until_settled(&server, SENDS, "send").await;
    wait_until_settled(&server, DEAD_LETTERS, "send").await;
    assert!(dead.try_recv().is_err());
    assert_eq!(attempts.len(), 3);
    // Two failures given back, one dead letter; the dead letter itself
    // (durable too) acknowledged once its consumer handled it.
    let m = bus.metrics();
    assert_eq!(
        (m.durable_redelivered, m.dead_lettered, m.durable_acked),
        (2, 1, 1)
    );
    bus.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_consumer_node_picks_up_where_it_left_off() {
    let server = jetstream_for_test("durable restart");
    let sender = node(&server, "sender", durable()).await;
    let seen = Seen::default();
    let consume = |bus: &EventBus, seen: &Seen| {
        let s = seen.clone();
        bus.consumer("payments", move |m: Message<Payment>| {
            let s = s.clone();
            async move { s.add(m.body().id, m.delivery_count()) }
        })
    };
    let consumer = node(&server, "consumer", durable()).await;
    let _c = consume(&consumer, &seen);
    consumer.flush().await.unwrap();
    for id in 0..50 {
        sender
            .send("payments", Payment { id, cents: 1 })
            .await
            .unwrap();
    }
    eventually("the first 50", || seen.len() >= 50).await;
    // Nobody consumes: the next 50 are stored, not lost.
    consumer.close().await;
    drop(consumer);
    for id in 50..100 {
        sender
            .send("payments", Payment { id, cents: 1 })
            .await
            .unwrap();
    }
    publish_to_stopped_node(&sender).await;
    let again = node(&server, "consumer", durable()).await;
    let _c2 = consume(&again, &seen);
    let _p = {
        let s = seen.clone();
        again.consumer("payments", move |m: Message<String>| {
            let s = s.clone();
            async move {
                if m.body() == "while you were away" {
                    s.add(1000, m.delivery_count());
                }
            }
        })
    };
    eventually("the other 50 and the publish", || seen.len() >= 101).await;
    wait_until_settled(&server, SENDS, "send").await;
    wait_until_settled(&server, PUBLISHES, "node-consumer").await;
    let mut want: Vec<u64> = (0..100).collect();
    want.push(1000);
    assert_eq!(
        seen.ids(),
        want,
        "every message once: the acked ones were not redelivered"
    );
    sender.close().await;
    again.close().await;
}

/// A publish while the node named "consumer" is away reaches it when it
/// is back (its durable consumer of publishes kept its place).
async fn publish_to_stopped_node(sender: &EventBus) {
    sender
        .publish("payments", "while you were away".to_string())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_reaches_every_node_and_every_local_consumer_once() {
    let server = jetstream_for_test("durable publish fan-out");
    let a = node(&server, "a", durable()).await;
    let b = node(&server, "b", durable()).await;
    let got: Arc<Mutex<HashMap<&'static str, Vec<u64>>>> = Arc::default();
    let mut keep = Vec::new();
    for (bus, who) in [(&a, "a1"), (&a, "a2"), (&b, "b1")] {
        let got = Arc::clone(&got);
        keep.push(bus.consumer("payments", move |m: Message<Payment>| {
            let got = Arc::clone(&got);
            async move {
                assert_eq!(m.delivery_count(), 1);
                assert!(!m.is_send());
                got.lock()
                    .unwrap()
                    .entry(who)
                    .or_default()
                    .push(m.body().id);
            }
        }));
    }
    let got_local = Arc::clone(&got);
    keep.push(a.local_consumer("payments", move |m: Message<Payment>| {
        let got = Arc::clone(&got_local);
        async move {
            got.lock()
                .unwrap()
                .entry("a-local")
                .or_default()
                .push(m.body().id);
        }
    }));
    a.flush().await.unwrap();
    b.flush().await.unwrap();
    // Each node's consumer of publishes exists once its reader started.
    wait_for_consumer(&server, PUBLISHES, "node-a").await;
    wait_for_consumer(&server, PUBLISHES, "node-b").await;
    for id in 0..20 {
        let report = a
            .publish("payments", Payment { id, cents: 2 })
            .await
            .unwrap();
        assert!(report.to_cluster());
    }
    let count = |who: &str| got.lock().unwrap().get(who).map_or(0, Vec::len);
    eventually("every consumer has 20", || {
        ["a1", "a2", "b1", "a-local"].iter().all(|w| count(w) >= 20)
    })
    .await;
    wait_until_settled(&server, PUBLISHES, "node-a").await;
    wait_until_settled(&server, PUBLISHES, "node-b").await;
    for who in ["a1", "a2", "b1", "a-local"] {
        let mut ids = got.lock().unwrap()[who].clone();
        ids.sort_unstable();
        assert_eq!(ids, (0..20).collect::<Vec<_>>(), "{who}");
    }
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sends_are_shared_by_the_nodes_of_the_group() {
    let server = jetstream_for_test("durable work queue");
    let a = node(&server, "a", durable()).await;
    let b = node(&server, "b", durable()).await;
    let seen_a = Seen::default();
    let seen_b = Seen::default();
    let mut keep = Vec::new();
    for (bus, seen) in [(&a, &seen_a), (&b, &seen_b)] {
        let s = seen.clone();
        keep.push(bus.consumer("payments", move |m: Message<Payment>| {
            let s = s.clone();
            async move {
                // Slow enough that both nodes take a share.
                tokio::time::sleep(Duration::from_millis(2)).await;
                s.add(m.body().id, m.delivery_count())
            }
        }));
    }
    a.flush().await.unwrap();
    b.flush().await.unwrap();
    for id in 0..400 {
        a.send("payments", Payment { id, cents: 3 }).await.unwrap();
    }
    eventually("400 handled", || seen_a.len() + seen_b.len() >= 400).await;
    wait_until_settled(&server, SENDS, "send").await;
    let mut all = seen_a.ids();
    all.extend(seen_b.ids());
    all.sort_unstable();
    assert_eq!(all, (0..400).collect::<Vec<_>>(), "each send handled once");
    assert!(
        !seen_a.ids().is_empty() && !seen_b.ids().is_empty(),
        "both nodes took a share: {} and {}",
        seen_a.len(),
        seen_b.len()
    );
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_consumer_acks_by_intent_and_a_dropped_message_comes_back() {
    let server = jetstream_for_test("durable stream consumer");
    let bus = node(&server, "a", durable()).await;
    let mut stream = bus.consumer_stream::<Payment>("payments");
    bus.flush().await.unwrap();
    bus.send("payments", Payment { id: 5, cents: 5 })
        .await
        .unwrap();
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(20), stream.recv())
            .await
            .expect("delivered in time")
            .expect("the stream is open")
    };
    let first = next().await;
    assert_eq!((first.body().id, first.delivery_count()), (5, 1));
    assert!(!first.expects_reply());
    first.fail(500, "not now").unwrap();
    drop(first);
    // Dropped without `ack` (a `?` or a panic in the reading loop would
    // do the same): nobody handled it, so it comes back.
    let second = next().await;
    assert_eq!((second.body().id, second.delivery_count()), (5, 2));
    drop(second);
    let third = next().await;
    assert_eq!((third.body().id, third.delivery_count()), (5, 3));
    third.ack();
    drop(third);
    // Acknowledged: the server will not deliver it again.
    wait_until_settled(&server, SENDS, "send").await;
    let none = futures_util::FutureExt::now_or_never(stream.recv());
    assert!(none.is_none(), "acknowledged: not delivered again");
    bus.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_id_is_stored_once() {
    let server = jetstream_for_test("durable duplicates");
    let bus = node(&server, "a", durable()).await;
    let seen = Seen::default();
    let ids: Arc<Mutex<Vec<String>>> = Arc::default();
    let s = seen.clone();
    let i = Arc::clone(&ids);
    let _c = bus.consumer("payments", move |m: Message<Payment>| {
        let s = s.clone();
        let i = Arc::clone(&i);
        async move {
            s.add(m.body().id, m.delivery_count());
            let id = m.headers().get(MESSAGE_ID_HEADER).unwrap_or("").to_owned();
            i.lock().unwrap().push(id);
        }
    });
    bus.flush().await.unwrap();
    let with_id = || DeliveryOptions::new().header(MESSAGE_ID_HEADER, "payment-77");
    for _ in 0..3 {
        bus.send_with("payments", Payment { id: 77, cents: 1 }, with_id())
            .await
            .unwrap();
    }
    // Without an id each send is its own message, with a generated id.
    bus.send("payments", Payment { id: 78, cents: 1 })
        .await
        .unwrap();
    bus.send("payments", Payment { id: 78, cents: 1 })
        .await
        .unwrap();
    eventually("three messages", || seen.len() >= 3).await;
    wait_until_settled(&server, SENDS, "send").await;
    assert_eq!(seen.ids(), [77, 78, 78]);
    // Stored once: three messages in the stream for five sends.
    let stored = stream_of(&server, SENDS)
        .await
        .get_info()
        .await
        .expect("the stream's info");
    assert_eq!(stored.state.messages, 3);
    let ids = ids.lock().unwrap().clone();
    assert!(ids.contains(&"payment-77".to_owned()), "{ids:?}");
    let generated: Vec<_> = ids.iter().filter(|i| *i != "payment-77").collect();
    assert_eq!(generated.len(), 2);
    assert_ne!(generated[0], generated[1]);
    assert!(!generated[0].is_empty());
    bus.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn different_settings_for_an_existing_stream_are_a_clear_error() {
    let server = jetstream_for_test("durable settings mismatch");
    let first = node(&server, "a", durable()).await;
    let err = try_node(&server, "b", durable().max_age(Duration::from_secs(60)))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Config);
    let text = err.to_string();
    assert!(
        text.contains("\"payments\"") && text.contains("max age") && text.contains("reconfigure"),
        "{text}"
    );
    let err = try_node(&server, "b", durable().ack_wait(Duration::from_secs(9)))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Config);
    assert!(err.to_string().contains("ack wait"), "{err}");
    // The same settings are accepted.
    let same = node(&server, "b", durable()).await;
    same.close().await;
    first.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_durable_settings_fail_connect() {
    let server = jetstream_for_test("durable bad settings");
    let err = try_node(&server, "a", durable().replicas(0))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Config);
    assert!(err.to_string().contains("replicas"), "{err}");
    let err = try_node(
        &server,
        "a",
        durable().store_timeout(Duration::from_millis(1)),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Config);
    assert!(err.to_string().contains("store timeout"), "{err}");
    // Without a node name.
    let err = EventBus::builder()
        .nats(NatsOptions::new(server.url()).durable("payments", durable()))
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Config);
    assert!(err.to_string().contains("connection_name"), "{err}");
    // Without JetStream on the server.
    let plain = NatsServer::for_test("durable without jetstream");
    let err = try_node(&plain, "a", durable()).await.unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Connect);
    assert!(err.to_string().contains("-js"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_messages_survive_a_server_kill() {
    let mut server = jetstream_for_test("durable server kill");
    let sender = node(&server, "sender", durable()).await;
    for id in 0..30 {
        sender
            .send("payments", Payment { id, cents: 1 })
            .await
            .unwrap();
    }
    server.kill();
    // During the outage a send fails at once, with the body back.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match sender.send("payments", Payment { id: 99, cents: 1 }).await {
            Err(e) => {
                assert_eq!(e.kind(), codecbus_bus::SendErrorKind::Transport);
                assert_eq!(e.into_body::<Payment>().map(|p| p.id), Some(99));
                break;
            }
            Ok(()) => {
                // Sent before the client noticed: still fine, but must end.
                assert!(
                    Instant::now() < deadline,
                    "sends keep succeeding with the server down"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    server.start_again();
    let consumer = node(&server, "consumer", durable()).await;
    let seen = Seen::default();
    let s = seen.clone();
    let _c = consumer.consumer("payments", move |m: Message<Payment>| {
        let s = s.clone();
        async move { s.add(m.body().id, m.delivery_count()) }
    });
    eventually("the 30 stored before the kill", || {
        seen.ids().iter().filter(|id| **id < 30).count() >= 30
    })
    .await;
    sender.close().await;
    consumer.close().await;
}

/// A durable message the consumers' spec refuses would be refused at every
/// delivery: it goes to the dead-letter address at the first, with the
/// violations as the reason, and the handler never sees it.
#[cfg(feature = "json")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_the_consumers_spec_refuses_is_dead_lettered_at_once() {
    use codecbus_bus::ConsumerOptions;
    use codecbus_json::spec::integer;
    use codecbus_json::{JsObj, jsobj, jsobj_spec};

    let server = jetstream_for_test("durable spec refusal");
    let bus = node(&server, "a", durable()).await;
    let handled = Seen::default();
    let h = handled.clone();
    let spec = jsobj_spec! { "id": integer().min(1), "cents": integer().min(0) };
    let _c = bus.consumer_with(
        "payments",
        ConsumerOptions::new().spec(spec),
        move |m: Message<JsObj>| {
            let h = h.clone();
            async move {
                let id = m.body().get("id").and_then(|v| v.as_i64()).unwrap_or(0);
                h.add(u64::try_from(id).unwrap_or(0), m.delivery_count());
            }
        },
    );
    let (tx, mut dead) = tokio::sync::mpsc::unbounded_channel();
    let _d = bus.consumer("payments.dead", move |m: Message<JsObj>| {
        let tx = tx.clone();
        async move {
            let h = m.headers();
            let _ = tx.send((
                m.body().clone(),
                h.get(DEAD_LETTER_DELIVERIES_HEADER).map(str::to_owned),
                h.get(DEAD_LETTER_REASON_HEADER).map(str::to_owned),
            ));
        }
    });
    bus.flush().await.unwrap();

    let bad = jsobj! { "id": 4, "cents": -5 };
    bus.send("payments", bad.clone()).await.unwrap();
    bus.send("payments", jsobj! { "id": 5, "cents": 100 })
        .await
        .unwrap();
    let (body, deliveries, reason) = tokio::time::timeout(Duration::from_secs(20), dead.recv())
        .await
        .expect("a dead letter within 20 s")
        .unwrap();
    assert_eq!(body, bad);
    assert_eq!(deliveries.as_deref(), Some("1"));
    assert_eq!(
        reason.as_deref(),
        Some(
            "Body refused at address payments: it does not conform to the consumer's spec: \
             /cents: expected integer >= 0, found -5"
        )
    );
    eventually("the conforming payment handled", || handled.len() == 1).await;
    assert_eq!(handled.all(), [(5, 1)]);
    assert_eq!(bus.metrics().invalid, 1);
    eventually("the refusal dead-lettered, the rest acknowledged", || {
        let m = bus.metrics();
        (m.dead_lettered, m.durable_acked, m.durable_redelivered) == (1, 2, 0)
    })
    .await;
    bus.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_slower_than_the_ack_wait_gets_the_message_again() {
    let server = jetstream_for_test("durable ack wait");
    let options = durable().ack_wait(Duration::from_secs(1));
    let bus = node(&server, "a", options).await;
    let seen = Seen::default();
    let s = seen.clone();
    let _c = bus.consumer("payments", move |m: Message<Payment>| {
        let s = s.clone();
        async move {
            s.add(m.body().id, m.delivery_count());
            if m.delivery_count() == 1 {
                // Past the ack wait: the server delivers it again meanwhile.
                tokio::time::sleep(Duration::from_millis(2500)).await;
            }
        }
    });
    bus.flush().await.unwrap();
    bus.send("payments", Payment { id: 3, cents: 1 })
        .await
        .unwrap();
    eventually("a second delivery", || seen.len() >= 2).await;
    assert_eq!(seen.all()[..2], [(3, 1), (3, 2)]);
    bus.close().await;
}

/// A request-style handler (`async move { m.reply(x) }`) consuming sends
/// on a durable address: as in Vert.x, replying to a message that expects
/// no reply does nothing, so each message was handled and is acknowledged
/// once, never redelivered or dead-lettered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_style_handler_acknowledges_sends() {
    let server = jetstream_for_test("durable request-style handler");
    let bus = node(&server, "a", durable()).await;
    let seen = Seen::default();
    let s = seen.clone();
    let _c = bus.consumer("payments", move |m: Message<Payment>| {
        s.add(m.body().id, m.delivery_count());
        async move { m.reply(m.body().cents * 2) }
    });
    let dead = Seen::default();
    let d = dead.clone();
    let _d = bus.consumer("payments.dead", move |m: Message<Payment>| {
        d.add(m.body().id, m.delivery_count());
        async {}
    });
    bus.flush().await.unwrap();
    for id in 1..=3 {
        bus.send("payments", Payment { id, cents: 10 })
            .await
            .unwrap();
    }
    eventually("three messages acknowledged", || {
        bus.metrics().durable_acked == 3
    })
    .await;
    // Nothing comes again: the server holds nothing more for the
    // consumer, nor any dead letter.
    wait_until_settled(&server, SENDS, "send").await;
    wait_until_settled(&server, DEAD_LETTERS, "send").await;
    assert_eq!(seen.all(), [(1, 1), (2, 1), (3, 1)]);
    assert_eq!(dead.len(), 0, "nothing dead-lettered");
    let m = bus.metrics();
    assert_eq!(
        (m.durable_acked, m.durable_redelivered, m.dead_lettered),
        (3, 0, 0)
    );
    bus.close().await;
}

/// Pauses (SIGSTOP) or resumes (SIGCONT) the server: the connection stays
/// up, the server answers nothing meanwhile.
fn signal(server: &NatsServer, signal: &str) {
    let pid = server.pid().expect("the server runs");
    let status = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal} {pid}");
    // A signal is delivered when the process is next scheduled: on a busy
    // machine the server could still answer a message sent right after
    // `kill` returned. Wait until its state says it stopped (or resumed).
    let stopped = signal == "STOP";
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let stat =
            std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the server's state");
        // `pid (comm) S ...`: the state follows the command's parenthesis.
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.trim_start().chars().next());
        if (state == Some('T')) == stopped {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not take SIG{signal}: state {state:?}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A durable send waits for the server's confirmation as long as its
/// address's `store_timeout` says: shorter than JetStream's default 5 s
/// (the caller gets its error and body back sooner), and longer too (a
/// stalled server that comes back after 6 s still stores the message).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_timeout_is_the_addresses_setting() {
    let server = jetstream_for_test("durable store timeout");
    let short = node(
        &server,
        "short",
        durable().store_timeout(Duration::from_millis(300)),
    )
    .await;
    signal(&server, "STOP");
    let started = Instant::now();
    let sent = short.send("payments", Payment { id: 1, cents: 1 }).await;
    let took = started.elapsed();
    signal(&server, "CONT");
    let err = sent.unwrap_err();
    assert_eq!(err.kind(), codecbus_bus::SendErrorKind::Transport);
    let text = err.to_string();
    assert!(
        text.contains("within 300 ms") && text.contains("DurableOptions::store_timeout"),
        "{text}"
    );
    assert_eq!(
        err.into_body::<Payment>().as_deref(),
        Some(&Payment { id: 1, cents: 1 })
    );
    assert!(took < Duration::from_secs(5), "the send waited {took:?}");
    short.close().await;

    let long = node(
        &server,
        "long",
        durable().store_timeout(Duration::from_secs(30)),
    )
    .await;
    signal(&server, "STOP");
    let send = tokio::spawn({
        let long = long.clone();
        async move { long.send("payments", Payment { id: 2, cents: 2 }).await }
    });
    tokio::time::sleep(Duration::from_secs(6)).await;
    signal(&server, "CONT");
    send.await
        .unwrap()
        .expect("stored once the server came back, past JetStream's default 5 s");
    long.close().await;
}

/// A durable publish fanned out to two local consumers is acknowledged
/// only when both handled it: one that fails later than the other has
/// succeeded still gets the message again (and so does the other: its
/// handler must be idempotent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_is_acknowledged_when_every_local_consumer_handled_it() {
    let server = jetstream_for_test("durable publish, one of two fails");
    let bus = node(&server, "a", durable()).await;
    let fast = Seen::default();
    let slow = Seen::default();
    let f = fast.clone();
    let _fast = bus.consumer("payments", move |m: Message<Payment>| {
        f.add(m.body().id, m.delivery_count());
        async {}
    });
    let s = slow.clone();
    let _slow = bus.consumer("payments", move |m: Message<Payment>| {
        let s = s.clone();
        async move {
            // Fails after the other consumer has surely succeeded.
            tokio::time::sleep(Duration::from_millis(100)).await;
            s.add(m.body().id, m.delivery_count());
            if m.delivery_count() == 1 {
                Err("not yet")
            } else {
                Ok(())
            }
        }
    });
    bus.flush().await.unwrap();
    wait_for_consumer(&server, PUBLISHES, "node-a").await;
    bus.publish("payments", Payment { id: 5, cents: 1 })
        .await
        .unwrap();
    eventually("the second delivery handled by both", || {
        slow.len() == 2 && fast.len() == 2
    })
    .await;
    wait_until_settled(&server, PUBLISHES, "node-a").await;
    assert_eq!(slow.all(), [(5, 1), (5, 2)]);
    assert_eq!(fast.all(), [(5, 1), (5, 2)]);
    let m = bus.metrics();
    assert_eq!((m.durable_redelivered, m.durable_acked), (1, 1));
    bus.close().await;
}

/// A node compressing large bodies stores them compressed; every delivery
/// (a redelivery too) reads them back whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compressed_bodies_are_stored_and_redelivered_whole() {
    let server = jetstream_for_test("durable compressed");
    let bus = EventBus::builder()
        .default_timeout(Duration::from_secs(2))
        .nats(
            NatsOptions::new(server.url())
                .connection_name("compressing")
                .connection_timeout(Duration::from_secs(2))
                .durable("payments", durable())
                .compress_above(64),
        )
        .connect()
        .await
        .expect("connect to the test server");
    let (tx, mut got) = tokio::sync::mpsc::unbounded_channel();
    let _c = bus.consumer("payments", move |m: Message<String>| {
        let tx = tx.clone();
        async move {
            let _ = tx.send((m.delivery_count(), m.body().clone()));
            if m.delivery_count() == 1 {
                return Err("once more");
            }
            Ok(())
        }
    });
    bus.flush().await.unwrap();
    let text = "a ledger line, ".repeat(700);
    bus.send("payments", text.clone()).await.unwrap();
    for delivery in [1, 2] {
        let (count, body) = tokio::time::timeout(Duration::from_secs(20), got.recv())
            .await
            .expect("a delivery within 20 s")
            .unwrap();
        assert_eq!((count, body.len()), (delivery, text.len()));
        assert_eq!(body, text);
    }
    eventually("acknowledged", || bus.metrics().durable_acked == 1).await;
    // Stored as it left: the codec prefix, the mark, a fraction of the
    // body's 10 500 bytes.
    let raw = async_nats::connect(server.url()).await.unwrap();
    let stored = async_nats::jetstream::new(raw)
        .get_stream("codecbus_payments")
        .await
        .expect("the address's stream")
        .get_raw_message(1)
        .await
        .expect("the stored message");
    let prefix = b"\xc1\x02\xa6string\xc1";
    assert_eq!(&stored.payload[..prefix.len()], prefix);
    assert!(
        stored.payload.len() < 1000,
        "{} bytes stored",
        stored.payload.len()
    );
    bus.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_addresses_in_a_named_jetstream_domain() {
    let config = harness::Config {
        jetstream: true,
        jetstream_domain: Some("hub".to_owned()),
        ..harness::Config::default()
    };
    let server = NatsServer::for_test_with("durable domain", &config);
    let in_domain = |name: &str, domain: &str| {
        EventBus::builder()
            .default_timeout(Duration::from_secs(2))
            .nats(
                NatsOptions::new(server.url())
                    .connection_name(name)
                    .connection_timeout(Duration::from_secs(2))
                    .jetstream_domain(domain)
                    .durable("payments", durable().store_timeout(Duration::from_secs(1))),
            )
            .connect()
    };
    let err = in_domain("a", "a.b").await.unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Config);
    assert!(
        err.to_string().contains("JetStream domain \"a.b\""),
        "{err}"
    );
    // No server answers for this domain.
    let err = in_domain("a", "elsewhere").await.unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Connect);
    assert!(err.to_string().contains("\"payments\""), "{err}");

    let bus = in_domain("a", "hub").await.expect("the server's domain");
    let seen = Seen::default();
    let got = seen.clone();
    let _c = bus.consumer("payments", move |m: Message<Payment>| {
        got.add(m.body().id, m.delivery_count());
        async {}
    });
    bus.flush().await.expect("flush");
    bus.send("payments", Payment { id: 1, cents: 5 })
        .await
        .expect("stored in the hub domain");
    eventually("the payment handled", || seen.len() == 1).await;
    bus.close().await;
}
