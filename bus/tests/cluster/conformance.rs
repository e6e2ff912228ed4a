//! One suite, two clusters: every case runs across two (or three) bus
//! nodes joined by the in-memory cluster, and again across a real
//! `nats-server` started by the harness (feature `nats`). What a user's
//! multi-node code sees must not depend on which one carries it: routing
//! (one node of the queue group for a send, every node for a publish),
//! requests and conversations, headers, codecs by name, failures, the size
//! limit.

use crate::common;
#[cfg(feature = "nats")]
use crate::harness;
use crate::tally;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use codecbus_bus::{
    DeliveryOptions, EventBus, InMemoryCluster, Message, PublishErrorKind, RequestErrorKind,
    SendErrorKind,
};
use codecbus_core::MessageCodec;
use codecbus_core::ext::SharedStr;
use codecbus_json::{JsObj, jsobj};
use common::eventually;
use tally::{Tally, counting};

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "test.order")]
struct Order {
    id: u64,
    items: Vec<String>,
    note: Option<String>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "test.quote", immutable)]
struct Quote {
    order: u64,
    total_cents: i64,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "test.document", immutable)]
struct Document {
    title: SharedStr,
    tags: Vec<SharedStr>,
    blob: bytes::Bytes,
}

fn order(id: u64) -> Order {
    Order {
        id,
        items: vec!["tea".into(), "cake".into()],
        note: id.is_multiple_of(2).then(|| "even".to_owned()),
    }
}

/// What joins the nodes of a case.
enum Cluster {
    InMemory(InMemoryCluster),
    #[cfg(feature = "nats")]
    Nats(harness::NatsServer),
}

impl Cluster {
    fn in_memory(max_payload: Option<usize>) -> Self {
        Self::InMemory(
            max_payload.map_or_else(InMemoryCluster::new, InMemoryCluster::with_max_payload),
        )
    }

    #[cfg(feature = "nats")]
    fn nats(test: &str, max_payload: Option<usize>) -> Self {
        let config = harness::Config {
            max_payload,
            // The server's own view: which nodes are still connected.
            monitor: true,
            ..harness::Config::default()
        };
        Self::Nats(harness::NatsServer::for_test_with(test, &config))
    }

    /// Waits until `nodes` nodes are in the cluster: a closed node has
    /// left it. In memory a node leaves as `close` returns; a NATS server
    /// forgets a closed connection (and its subscriptions) once it has
    /// read its end of the socket, a moment later.
    #[cfg_attr(not(feature = "nats"), allow(unused_variables))]
    async fn wait_for_nodes(&self, nodes: usize) {
        match self {
            Self::InMemory(_) => {}
            #[cfg(feature = "nats")]
            Self::Nats(server) => {
                eventually("the server forgot the closed node", || {
                    server.connections().len() == nodes
                })
                .await;
            }
        }
    }

    /// A new node, with a 2 s request timeout.
    async fn node(&self) -> EventBus {
        let builder = EventBus::builder().default_timeout(Duration::from_secs(2));
        match self {
            Self::InMemory(cluster) => builder.in_memory_cluster(cluster).build().unwrap(),
            #[cfg(feature = "nats")]
            Self::Nats(server) => builder
                .nats(common::nats_options(&server.url()))
                .connect()
                .await
                .expect("connect to the test server"),
        }
    }
}

/// The messages a NATS server delivered to the subscriptions of `address`
/// (a plain one: its subjects are `codecbus.s.{address}` and
/// `codecbus.p.{address}`), by its own count.
#[cfg(feature = "nats")]
fn server_delivered(server: &harness::NatsServer, address: &str) -> u64 {
    let subjects = [
        format!("codecbus.s.{address}"),
        format!("codecbus.p.{address}"),
    ];
    let connz = server
        .monitor("/connz?subs=detail&limit=1024")
        .expect("the server's monitoring endpoint");
    let connections = connz["connections"].as_array().cloned().unwrap_or_default();
    connections
        .iter()
        .flat_map(|c| {
            c["subscriptions_list_detail"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|sub| subjects.iter().any(|s| sub["subject"].as_str() == Some(s)))
        .map(|sub| sub["msgs"].as_u64().unwrap_or(0))
        .sum()
}

impl Cluster {
    /// Waits until nothing more can arrive for `address` on `nodes`, with
    /// `expected` messages delivered: on NATS the server's own count of
    /// what it delivered to the address's subscriptions is `expected`
    /// (final once every node flushed: each one's messages were processed
    /// before its flush was answered), and the nodes read as many; in
    /// memory (where each message goes into the inboxes at once) the nodes
    /// read `expected`. And every message a node gave its consumers was
    /// handled. A late or duplicate delivery would be counted by then: no
    /// sleep needed to see one.
    async fn settled(&self, nodes: &[&EventBus], address: &str, expected: u64) {
        for node in nodes {
            node.flush().await.unwrap();
        }
        #[cfg(feature = "nats")]
        if let Self::Nats(server) = self {
            eventually("the server delivered them", || {
                server_delivered(server, address) >= expected
            })
            .await;
            assert_eq!(
                server_delivered(server, address),
                expected,
                "the server delivered each message once to each node"
            );
        }
        #[cfg(not(feature = "nats"))]
        let _ = address;
        let received = || {
            nodes
                .iter()
                .map(|n| n.metrics().remote_received)
                .sum::<u64>()
        };
        eventually("the nodes read and handled them", || {
            received() >= expected
                && nodes.iter().all(|n| {
                    let m = n.metrics();
                    m.handled == m.delivered
                })
        })
        .await;
        assert_eq!(received(), expected);
    }
}

/// Runs each case against the in-memory cluster (`in_memory::`) and, with
/// the `nats` feature, against a `nats-server` (`nats::`); a case may ask
/// for a `max_payload`.
macro_rules! suite {
    ($($case:ident $(: max_payload = $max:expr)?;)*) => {
        mod in_memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let max: Option<usize> = None $(.or(Some($max)))?;
                    super::$case(super::Cluster::in_memory(max)).await;
                }
            )*
        }

        #[cfg(feature = "nats")]
        mod nats {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let max: Option<usize> = None $(.or(Some($max)))?;
                    let cluster = super::Cluster::nats(stringify!($case), max);
                    super::$case(cluster).await;
                }
            )*
        }
    };
}

suite! {
    send_goes_to_exactly_one_consumer_across_both_nodes;
    publish_reaches_every_consumer_on_every_node_once;
    request_reply_with_derived_types_and_headers;
    request_reply_with_jsobj;
    shared_strings_and_bytes_cross_nodes;
    conversations_of_several_turns_cross_nodes;
    conversation_turns_fail_across_nodes;
    conversation_turns_to_a_node_that_cannot_answer;
    unknown_codec_on_the_receiving_node;
    recipient_failure_crosses_the_wire;
    no_responders_and_timeout;
    oversize_payloads_fail_at_send: max_payload = 1024;
    local_consumers_never_subscribe_and_last_unregister_unsubscribes;
    headers_with_whitespace_at_an_end_are_refused_at_the_sender;
    a_handler_never_runs_on_the_senders_task;
    a_requester_that_closes_mid_request_fails_and_its_turn_finds_nobody;
    addresses_over_the_limit_are_refused_at_the_sender;
    a_closed_node_refuses_flush_and_messages;
}

async fn send_goes_to_exactly_one_consumer_across_both_nodes(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let tally = Tally::default();
    let _a1 = counting(&a, "work", "a1", &tally);
    let _a2 = counting(&a, "work", "a2", &tally);
    let _b1 = counting(&b, "work", "b1", &tally);
    a.flush().await.unwrap();
    b.flush().await.unwrap();

    const N: u64 = 200;
    for n in 0..N {
        let sender = if n.is_multiple_of(2) { &a } else { &b };
        sender.send("work", n).await.unwrap();
    }
    eventually("every send handled", || tally.total() == N as usize).await;
    c.settled(&[&a, &b], "work", N).await;
    let mut all: Vec<u64> = ["a1", "a2", "b1"]
        .iter()
        .flat_map(|w| tally.get(w))
        .collect();
    all.sort_unstable();
    assert_eq!(
        all,
        (0..N).collect::<Vec<_>>(),
        "each send handled exactly once"
    );
    let on_a = tally.get("a1").len() + tally.get("a2").len();
    let on_b = tally.get("b1").len();
    // NATS picks a queue member at random; both nodes get a share, and on
    // node a its two consumers take turns.
    assert!(on_a > 0 && on_b > 0, "a: {on_a}, b: {on_b}");
    let (a1, a2) = (tally.get("a1").len(), tally.get("a2").len());
    assert!(
        a1.abs_diff(a2) <= 1,
        "round-robin inside node a: {a1} vs {a2}"
    );
    assert_eq!(a.metrics().remote_received + b.metrics().remote_received, N);
}

async fn publish_reaches_every_consumer_on_every_node_once(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let tally = Tally::default();
    let _a1 = counting(&a, "news", "a1", &tally);
    let _a2 = counting(&a, "news", "a2", &tally);
    let _b1 = counting(&b, "news", "b1", &tally);
    let local_tally = tally.clone();
    let _a_local = a.local_consumer("news", move |m: Message<u64>| {
        let t = local_tally.clone();
        async move { t.add("a-local", *m.body()) }
    });
    let b_local_tally = tally.clone();
    let _b_local = b.local_consumer("news", move |m: Message<u64>| {
        let t = b_local_tally.clone();
        async move { t.add("b-local", *m.body()) }
    });
    a.flush().await.unwrap();
    b.flush().await.unwrap();

    for n in 0..10u64 {
        a.publish("news", n).await.unwrap();
    }
    eventually("every publish handled", || tally.total() == 40).await;
    // Once per node: one message each, however many consumers.
    c.settled(&[&a, &b], "news", 20).await;
    for who in ["a1", "a2", "b1", "a-local"] {
        assert_eq!(tally.get(who), (0..10).collect::<Vec<_>>(), "{who}");
    }
    // A local consumer on another node never hears a remote publish.
    assert!(tally.get("b-local").is_empty());
    // One NATS message per publish and node, however many consumers.
    assert_eq!(a.metrics().remote_received, 10);
    assert_eq!(b.metrics().remote_received, 10);

    // A publish with nobody anywhere is not an error across a cluster.
    a.publish("nobody.listens", 1u64).await.unwrap();
}

async fn request_reply_with_derived_types_and_headers(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let _pricing = b.consumer("pricing", |m: Message<Order>| async move {
        let trace = m.headers().get("trace-id").unwrap_or("none").to_owned();
        let total = m.body().items.len() as i64 * 250;
        m.reply_with(
            Quote {
                order: m.body().id,
                total_cents: total,
            },
            codecbus_bus::ReplyOptions::new()
                .header("priced-by", "b")
                .header("trace-seen", trace),
        )
    });
    b.flush().await.unwrap();

    for id in 0..20 {
        let options = DeliveryOptions::new().header("Trace-Id", "t-1");
        let reply: Message<Quote> = a.request_with("pricing", order(id), options).await.unwrap();
        assert_eq!(
            reply.body(),
            &Quote {
                order: id,
                total_cents: 500
            }
        );
        assert_eq!(reply.headers().get("priced-by"), Some("b"));
        assert_eq!(reply.headers().get("trace-seen"), Some("t-1"));
        assert_eq!(reply.address(), "pricing");
    }
    // The reply decoded on `a` is its own: nobody else holds it.
    let mut reply: Message<Quote> = a.request("pricing", order(99)).await.unwrap();
    assert_eq!(reply.headers().get("trace-seen"), Some("none"));
    assert!(reply.body_mut().is_some());

    // A reply of the wrong type for the requester.
    let err = a.request::<Order>("pricing", order(1)).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::TypeMismatch);

    // A request of the wrong type for the consumer.
    let err = a.request::<Quote>("pricing", 5u64).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::TypeMismatch);
    assert!(
        err.to_string().contains("test::Order") || err.to_string().contains("Order"),
        "{err}"
    );
}

async fn request_reply_with_jsobj(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let _echo = b.consumer("json.echo", |m: Message<JsObj>| async move {
        let answer = m.body().set("seen", true);
        m.reply(answer)
    });
    b.flush().await.unwrap();
    let order = jsobj! {
        "id": 7,
        "customer": { "name": "Ada", "tier": "gold" },
        "items": [{ "sku": "tea", "qty": 2 }, { "sku": "cake", "qty": 1 }],
    };
    let reply: Message<JsObj> = a.request("json.echo", order.clone()).await.unwrap();
    assert_eq!(reply.body(), &order.set("seen", true));
}

/// A body of `SharedStr` and `bytes::Bytes` fields (which the receiving
/// node decodes as slices of the received buffer) arrives whole, and its
/// reply too, with non-ASCII text, an empty string and binary bytes.
async fn shared_strings_and_bytes_cross_nodes(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let _echo = b.consumer("shared.echo", |m: Message<Document>| async move {
        let mut tags = m.body().tags.clone();
        tags.push(SharedStr::from_static("seen"));
        m.reply(Document {
            title: m.body().title.clone(),
            tags,
            blob: m.body().blob.clone(),
        })
    });
    b.flush().await.unwrap();
    let doc = Document {
        title: "Grüße, 世界".into(),
        tags: vec!["".into(), "a".repeat(300).into()],
        blob: bytes::Bytes::from((0..=255u8).collect::<Vec<_>>()),
    };
    let reply: Message<Document> = a.request("shared.echo", doc.clone()).await.unwrap();
    assert_eq!(reply.body().title, doc.title);
    assert_eq!(reply.body().tags[..2], doc.tags[..]);
    assert_eq!(reply.body().tags[2], "seen");
    assert_eq!(reply.body().blob, doc.blob);
}

/// `reply_and_request` across nodes: every turn crosses NATS, in both
/// directions, with its own types and headers.
async fn conversations_of_several_turns_cross_nodes(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let _count = common::counting_conversation(&b, "count");
    // Types change from turn to turn; headers travel with each.
    let _checkout = b.consumer("checkout", |m: Message<Order>| async move {
        let total = m.body().items.len() as i64 * 250;
        let quote = Quote {
            order: m.body().id,
            total_cents: total,
        };
        let options = codecbus_bus::ReplyOptions::new().header("turn", "quote");
        let accepted: Message<bool> = m.reply_and_request_with(quote, options).await.unwrap();
        let seen = accepted.headers().get("turn").unwrap_or("none").to_owned();
        let done = if *accepted.body() {
            "paid"
        } else {
            "cancelled"
        };
        accepted.reply_with(
            done.to_owned(),
            codecbus_bus::ReplyOptions::new().header("seen", seen),
        )
    });
    b.flush().await.unwrap();

    assert_eq!(common::count_with(&a, "count").await, [1, 3, 5, 7, 1008]);

    for accept in [true, false] {
        let quote: Message<Quote> = a.request("checkout", order(4)).await.unwrap();
        assert_eq!(quote.body().total_cents, 500);
        assert_eq!(quote.headers().get("turn"), Some("quote"));
        assert!(quote.expects_reply());
        let options = codecbus_bus::ReplyOptions::new().header("turn", "accept");
        let done: Message<String> = quote.reply_and_request_with(accept, options).await.unwrap();
        let expected = if accept { "paid" } else { "cancelled" };
        assert_eq!(done.body(), expected);
        assert_eq!(done.headers().get("seen"), Some("accept"));
    }
    assert_eq!(
        a.metrics().recipient_failures + b.metrics().recipient_failures,
        0
    );
}

/// How a turn ends when the other side does not answer it properly: the
/// replier waiting in `reply_and_request` learns it, across NATS, with the
/// same error kinds as in process.
async fn conversation_turns_fail_across_nodes(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let (results, mut outcomes) = tokio::sync::mpsc::unbounded_channel();
    let _ask = b.consumer("ask", move |m: Message<u64>| {
        let results = results.clone();
        async move {
            let options = codecbus_bus::ReplyOptions::new().timeout(Duration::from_millis(300));
            let started = Instant::now();
            let answer = m.reply_and_request_with::<u64>(*m.body(), options).await;
            let outcome = answer
                .map(|a| *a.body())
                .map_err(|e| (e.kind(), e.failure_code(), e.to_string()));
            results.send((outcome, started.elapsed())).unwrap();
        }
    });
    b.flush().await.unwrap();
    let mut next = async || outcomes.recv().await.unwrap();

    // A plain answer.
    let q: Message<u64> = a.request("ask", 1u64).await.unwrap();
    q.reply(10u64).expect("the requester still waits");
    assert_eq!(next().await.0, Ok(10));

    // The requester fails the turn with a code.
    let q: Message<u64> = a.request("ask", 2u64).await.unwrap();
    q.fail(7, "no thanks").expect("the requester still waits");
    let (outcome, _) = next().await;
    assert_eq!(
        outcome,
        Err((
            RequestErrorKind::RecipientFailure,
            Some(7),
            "no thanks".to_owned()
        ))
    );

    // The requester drops the turn without answering.
    let q: Message<u64> = a.request("ask", 3u64).await.unwrap();
    drop(q);
    let (outcome, waited) = next().await;
    let (kind, _, text) = outcome.unwrap_err();
    assert_eq!(kind, RequestErrorKind::RecipientFailure, "{text}");
    assert!(text.contains("without replying"), "{text}");
    assert!(waited < Duration::from_millis(300), "{waited:?}");

    // The requester answers with the wrong type for the replier.
    let q: Message<u64> = a.request("ask", 4u64).await.unwrap();
    q.reply("four".to_owned())
        .expect("the requester still waits");
    let (kind, _, text) = next().await.0.unwrap_err();
    assert_eq!(kind, RequestErrorKind::TypeMismatch, "{text}");

    // The requester answers with a type that cannot leave its node.
    #[derive(MessageCodec, Clone, Debug)]
    #[codec(unregistered)]
    struct Unencodable;
    let q: Message<u64> = a.request("ask", 5u64).await.unwrap();
    q.reply(Unencodable).expect("the requester still waits");
    let (kind, _, text) = next().await.0.unwrap_err();
    assert_eq!(kind, RequestErrorKind::Codec, "{text}");

    // The requester never answers: the replier's own timeout applies.
    let q: Message<u64> = a.request("ask", 6u64).await.unwrap();
    let (outcome, waited) = next().await;
    assert_eq!(outcome.unwrap_err().0, RequestErrorKind::Timeout);
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_secs(2),
        "{waited:?}"
    );
    drop(q);
    assert_eq!(b.metrics().timeouts, 1);
}

/// A turn the requester cannot decode: its failure goes back to the
/// replier at once.
async fn conversation_turns_to_a_node_that_cannot_answer(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let (results, mut outcomes) = tokio::sync::mpsc::unbounded_channel();
    let _ask = b.consumer("ask.quote", move |m: Message<u64>| {
        let results = results.clone();
        async move {
            let quote = Quote {
                order: *m.body(),
                total_cents: 1,
            };
            let options = codecbus_bus::ReplyOptions::new().timeout(Duration::from_secs(5));
            let started = Instant::now();
            let err = m
                .reply_and_request_with::<u64>(quote, options)
                .await
                .unwrap_err();
            results
                .send((err.kind(), err.to_string(), started.elapsed()))
                .unwrap();
        }
    });
    b.flush().await.unwrap();

    // `a` cannot decode the turn: both sides learn it at once.
    a.unregister_codec("test.quote").unwrap();
    let err = a.request::<Quote>("ask.quote", 1u64).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::Codec, "{err}");
    let (kind, text, waited) = outcomes.recv().await.unwrap();
    assert_eq!(kind, RequestErrorKind::Codec, "{text}");
    assert!(text.contains("test.quote"), "{text}");
    assert!(waited < Duration::from_secs(2), "{waited:?}");
}

/// The requester's node closes while its request waits: the request fails
/// at once with `Transport` (not at its timeout, and never with the
/// reply), and the replier's turn, sent after, finds nobody where the
/// requester was (`NoHandlers`, at once), as the guide says.
async fn a_requester_that_closes_mid_request_fails_and_its_turn_finds_nobody(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let (results, mut outcomes) = tokio::sync::mpsc::unbounded_channel();
    let (go, wait) = tokio::sync::watch::channel(false);
    let _ask = b.consumer("ask.late", move |m: Message<u64>| {
        let results = results.clone();
        let mut wait = wait.clone();
        async move {
            // Answer only once the requester's node has gone.
            wait.wait_for(|go| *go).await.unwrap();
            let options = codecbus_bus::ReplyOptions::new().timeout(Duration::from_secs(5));
            let started = Instant::now();
            let outcome = m
                .reply_and_request_with::<u64>(*m.body() + 1, options)
                .await
                .map(|turn| *turn.body())
                .map_err(|e| (e.kind(), e.to_string()));
            results.send((outcome, started.elapsed())).unwrap();
        }
    });
    b.flush().await.unwrap();

    let request = tokio::spawn({
        let a = a.clone();
        async move { a.request::<u64>("ask.late", 1u64).await.map(|m| *m.body()) }
    });
    eventually("the request reached b", || b.metrics().delivered == 1).await;
    let closing = Instant::now();
    a.close().await;
    let err = request.await.unwrap().unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::Transport, "{err}");
    assert!(
        closing.elapsed() < Duration::from_secs(1),
        "failed at the close, not at the 2 s timeout: {:?}",
        closing.elapsed()
    );
    assert_eq!(a.metrics().timeouts, 0);

    c.wait_for_nodes(1).await;
    go.send(true).unwrap();
    let (outcome, waited) = outcomes.recv().await.unwrap();
    let (kind, text) = outcome.unwrap_err();
    assert_eq!(kind, RequestErrorKind::NoHandlers, "{text}");
    assert_eq!(text, "No handlers for address ask.late");
    assert!(waited < Duration::from_secs(2), "{waited:?}");
}

async fn unknown_codec_on_the_receiving_node(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let handled = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&handled);
    let _orders = b.consumer("orders", move |m: Message<Order>| {
        seen.fetch_add(1, Ordering::SeqCst);
        async move { m.reply(1u64) }
    });
    b.flush().await.unwrap();
    assert!(b.unregister_codec("test.order").is_some());

    let err = a.request::<u64>("orders", order(1)).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::Codec);
    assert!(err.to_string().contains("\"test.order\""), "{err}");
    assert_eq!(b.metrics().undecodable, 1);

    a.send("orders", order(2)).await.unwrap();
    a.publish("orders", order(3)).await.unwrap();
    eventually("send and publish counted as undecodable", || {
        b.metrics().undecodable == 3
    })
    .await;
    assert_eq!(handled.load(Ordering::SeqCst), 0);

    // A type without any codec cannot leave the sending node.
    a.unregister_codec("test.quote").unwrap();
    let q = Quote {
        order: 1,
        total_cents: 2,
    };
    let err = a.send("orders", q.clone()).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::Codec);
    assert!(err.to_string().contains("no codec registered"), "{err}");
    assert_eq!(err.into_body::<Quote>().as_deref(), Some(&q));
}

async fn recipient_failure_crosses_the_wire(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let _strict = b.consumer("strict", |m: Message<String>| async move {
        match m.body().as_str() {
            "fail" => {
                m.fail(422, "not acceptable").expect("the requester waits");
                Ok(())
            }
            "err" => Err("handler said no"),
            "panic" => panic!("boom"),
            "drop" => Ok(()),
            _ => {
                m.reply("fine".to_owned()).expect("the requester waits");
                Ok(())
            }
        }
    });
    b.flush().await.unwrap();

    let err = a
        .request::<String>("strict", "fail".to_owned())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert_eq!(
        (err.failure_code(), err.to_string().as_str()),
        (Some(422), "not acceptable")
    );

    let err = a
        .request::<String>("strict", "err".to_owned())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert_eq!(err.to_string(), "handler said no");
    assert_eq!(err.failure_code(), None);

    let err = a
        .request::<String>("strict", "panic".to_owned())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert!(err.to_string().contains("boom"), "{err}");

    let err = a
        .request::<String>("strict", "drop".to_owned())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert!(err.to_string().starts_with("No reply"), "{err}");

    let ok: Message<String> = a.request("strict", "hi".to_owned()).await.unwrap();
    assert_eq!(ok.body(), "fine");
    assert_eq!(a.metrics().recipient_failures, 4);
}

async fn no_responders_and_timeout(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);

    let started = Instant::now();
    let err = a.request::<u64>("nowhere", 1u64).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::NoHandlers);
    assert_eq!(err.to_string(), "No handlers for address nowhere");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "no responders is immediate"
    );

    let _mute = b.consumer("mute", |m: Message<u64>| async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        m.reply(0u64)
    });
    b.flush().await.unwrap();
    let started = Instant::now();
    let options = DeliveryOptions::new().timeout(Duration::from_millis(150));
    let err = a
        .request_with::<u64>("mute", 1u64, options)
        .await
        .unwrap_err();
    let waited = started.elapsed();
    assert_eq!(err.kind(), RequestErrorKind::Timeout);
    assert!(
        err.to_string()
            .starts_with("Timed out after waiting 150(ms)"),
        "{err}"
    );
    assert!(
        waited >= Duration::from_millis(150) && waited < Duration::from_secs(1),
        "{waited:?}"
    );
    assert_eq!(a.metrics().timeouts, 1);
}

async fn oversize_payloads_fail_at_send(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let _big = b.consumer("big", |m: Message<String>| async move {
        m.reply("x".repeat(m.body().len() * 4))
    });
    b.flush().await.unwrap();
    let body = "y".repeat(2000);

    let err = a.send("big", body.clone()).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::PayloadTooLarge);
    let text = err.to_string();
    assert!(
        text.contains("is 2012 bytes (2003 of body, 9 of codec name and headers), over ")
            && text.ends_with("'s max_payload of 1024 bytes"),
        "{text}"
    );
    assert_eq!(err.into_body::<String>().as_deref(), Some(&body));

    let err = a.publish("big", body.clone()).await.unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::PayloadTooLarge);
    let err = a.request::<String>("big", body).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::PayloadTooLarge);

    // A reply over the limit comes back as the replier's error.
    let err = a
        .request::<String>("big", "z".repeat(300))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::PayloadTooLarge);
    assert!(err.to_string().contains("Reply to address big"), "{err}");

    let ok: Message<String> = a.request("big", "z".repeat(10)).await.unwrap();
    assert_eq!(ok.body().len(), 40);
}

async fn local_consumers_never_subscribe_and_last_unregister_unsubscribes(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let _local = a.local_consumer("private", |m: Message<u64>| async move {
        m.reply(*m.body() + 1)
    });
    a.flush().await.unwrap();
    let err = b.request::<u64>("private", 1u64).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::NoHandlers);
    // On its own node a local consumer answers (nothing crosses NATS).
    let two: Message<u64> = a.request("private", 1u64).await.unwrap();
    assert_eq!(*two.body(), 2);
    assert_eq!(b.metrics().remote_received + a.metrics().remote_received, 0);

    let c1 = b.consumer("shared", |m: Message<u64>| async move { m.reply(1u64) });
    let c2 = b.consumer("shared", |m: Message<u64>| async move { m.reply(2u64) });
    b.flush().await.unwrap();
    let _: Message<u64> = a.request("shared", 0u64).await.unwrap();
    c1.unregister().await;
    b.flush().await.unwrap();
    let r: Message<u64> = a.request("shared", 0u64).await.unwrap();
    assert_eq!(*r.body(), 2, "still subscribed while a consumer is left");
    c2.unregister().await;
    b.flush().await.unwrap();
    let err = a.request::<u64>("shared", 0u64).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::NoHandlers);

    // A stream consumer unsubscribes when dropped.
    let stream = b.consumer_stream::<u64>("streamed");
    b.flush().await.unwrap();
    a.send("streamed", 1u64).await.unwrap();
    drop(stream);
    b.flush().await.unwrap();
    let err = a.request::<u64>("streamed", 0u64).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::NoHandlers);
}

/// A header value with whitespace at either end cannot cross NATS as it is
/// (a NATS client trims it): every cluster transport refuses it at the
/// sender, for a send, a publish, a request and a reply alike, with the
/// error of a header NATS cannot carry (`Transport`). Whitespace inside a
/// value, and an empty value, travel exactly.
async fn headers_with_whitespace_at_an_end_are_refused_at_the_sender(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let (seen, mut arrivals) = tokio::sync::mpsc::unbounded_channel();
    let _headers = b.consumer("headers", move |m: Message<String>| {
        let seen = seen.clone();
        async move {
            let inner = m.headers().get("Inner").map(str::to_owned);
            let empty = m.headers().get("Empty").map(str::to_owned);
            seen.send((m.body().clone(), inner, empty)).unwrap();
            let padded = m.body() == "reply padded";
            let options = if padded {
                codecbus_bus::ReplyOptions::new().header("Padded", "  spaced  ")
            } else {
                codecbus_bus::ReplyOptions::new().header("Inner", "a  b\tc")
            };
            let _ = m.reply_with("answer".to_owned(), options);
        }
    });
    b.flush().await.unwrap();

    for value in ["  spaced  ", " lead", "trail ", "\ttab", "nbsp\u{a0}", " "] {
        let padded = || DeliveryOptions::new().header("Padded", value);
        let want = "the value of header `Padded` cannot travel over NATS (no whitespace at its start or end: NATS clients trim it)";
        let body = "x".to_owned();
        let err = a
            .send_with("headers", body.clone(), padded())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), SendErrorKind::Transport, "{value:?}: {err}");
        assert_eq!(
            err.to_string(),
            format!("message to address headers: {want}")
        );
        assert_eq!(err.into_body::<String>().as_deref(), Some(&body));
        let err = a
            .publish_with("headers", body.clone(), padded())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), PublishErrorKind::Transport, "{value:?}: {err}");
        let err = a
            .request_with::<String>("headers", body.clone(), padded())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), RequestErrorKind::Transport, "{value:?}: {err}");
        assert!(err.to_string().ends_with(want), "{err}");
    }

    // Inside a value, and an empty value: exactly as sent, both ways.
    let options = DeliveryOptions::new()
        .header("Inner", "x  y\tz")
        .header("Empty", "");
    let reply: Message<String> = a
        .request_with("headers", "exact".to_owned(), options)
        .await
        .unwrap();
    assert_eq!(reply.headers().get("Inner"), Some("a  b\tc"));
    let (body, inner, empty) = arrivals.recv().await.unwrap();
    assert_eq!(body, "exact", "no refused message arrived");
    assert_eq!(inner.as_deref(), Some("x  y\tz"));
    assert_eq!(empty.as_deref(), Some(""));

    // A reply that cannot travel: the requester gets the replier's error.
    let err = a
        .request::<String>("headers", "reply padded".to_owned())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::Transport, "{err}");
    assert!(
        err.to_string()
            .starts_with("Reply from address headers: the value of header `Padded`"),
        "{err}"
    );
    assert_eq!(arrivals.recv().await.unwrap().0, "reply padded");
    assert_eq!(b.metrics().remote_received, 2);
}

/// Whatever carries the cluster, a node's handler never runs on the stack
/// of the task that sent it the message (before `send` returns): the
/// receiving node reads it on a task of its own. One sender's messages
/// arrive in the order sent.
async fn a_handler_never_runs_on_the_senders_task(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let (ran, mut runs) = tokio::sync::mpsc::unbounded_channel();
    // One consumer of the address: the case where a node may start the
    // handler on the task that read the message.
    let _where = b.consumer("where", move |m: Message<u64>| {
        let started_on = tokio::task::try_id();
        ran.send((*m.body(), started_on)).unwrap();
        async move {
            let _ = m.reply(*m.body());
        }
    });
    b.flush().await.unwrap();

    const SENDS: u64 = 50;
    let sender = tokio::spawn(async move {
        for n in 0..SENDS {
            a.send("where", n).await.unwrap();
        }
        a.publish("where", SENDS).await.unwrap();
        let reply: Message<u64> = a.request("where", SENDS + 1).await.unwrap();
        assert_eq!(*reply.body(), SENDS + 1);
        tokio::task::id()
    });
    let sender = sender.await.unwrap();
    let mut order = Vec::new();
    for _ in 0..=SENDS + 1 {
        let (n, started_on) = runs.recv().await.unwrap();
        assert!(started_on.is_some(), "a handler runs on a task");
        assert_ne!(
            started_on,
            Some(sender),
            "message {n} ran on the sender's task"
        );
        order.push(n);
    }
    // The publish travels apart (its own subject on NATS); the sends and
    // the request after them keep their order.
    order.retain(|&n| n != SENDS);
    let mut sent: Vec<u64> = (0..SENDS).collect();
    sent.push(SENDS + 1);
    assert_eq!(order, sent, "in the order sent");
}

/// An address is at most 3 000 bytes escaped for the wire
/// (`book/src/wire.md`) to leave its node, on every cluster transport: a
/// longer one is refused at the sender with `Transport`, whatever its
/// consumers; nothing leaves for a local-only consumer, which keeps
/// working, as does an in-process bus.
async fn addresses_over_the_limit_are_refused_at_the_sender(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let longest = "x".repeat(3000);
    let too_long = "y".repeat(4004);
    // 1 002 bytes, 3 006 escaped (`%C3%A9` each).
    let escapes_too_long = "é".repeat(501);
    let _longest = b.consumer(
        &longest,
        |m: Message<u64>| async move { m.reply(*m.body()) },
    );
    let _too_long = b.consumer(
        &too_long,
        |m: Message<u64>| async move { m.reply(*m.body()) },
    );
    b.flush().await.unwrap();

    let r: Message<u64> = a.request(&longest, 1u64).await.unwrap();
    assert_eq!(*r.body(), 1);

    for (address, want) in [
        (
            &too_long,
            "address of 4004 bytes is too long to leave its node: the cluster's limit is 3000 bytes, escaped",
        ),
        (
            &escapes_too_long,
            "address of 1002 bytes (3006 bytes escaped for the wire) is too long to leave its node: the cluster's limit is 3000 bytes, escaped",
        ),
    ] {
        for node in [&a, &b] {
            let err = node.send(address, 2u64).await.unwrap_err();
            assert_eq!(err.kind(), SendErrorKind::Transport);
            assert_eq!(err.to_string(), want);
            assert_eq!(err.into_body::<u64>().as_deref(), Some(&2));
            let err = node.publish(address, 2u64).await.unwrap_err();
            assert_eq!(err.kind(), PublishErrorKind::Transport);
            assert_eq!(err.to_string(), want);
            let err = node.request::<u64>(address, 2u64).await.unwrap_err();
            assert_eq!(err.kind(), RequestErrorKind::Transport);
            assert_eq!(err.to_string(), want);
        }
    }
    assert_eq!(b.metrics().remote_received, 1);

    // Nothing leaves for a local-only consumer: its node serves it.
    let _local = a.local_consumer(&too_long, |m: Message<u64>| async move {
        m.reply(*m.body() + 1)
    });
    let r: Message<u64> = a.request(&too_long, 3u64).await.unwrap();
    assert_eq!(*r.body(), 4);
    // Nor in process.
    let alone = EventBus::new();
    let _c = alone.consumer(
        &too_long,
        |m: Message<u64>| async move { m.reply(*m.body()) },
    );
    let r: Message<u64> = alone.request(&too_long, 5u64).await.unwrap();
    assert_eq!(*r.body(), 5);
}

/// After `close`, a node's `flush` fails with `Transport` "the bus is
/// closed", as do its cluster messages; the other nodes go on.
async fn a_closed_node_refuses_flush_and_messages(c: Cluster) {
    let (a, b) = (c.node().await, c.node().await);
    let _echo = b.consumer("echo", |m: Message<u64>| async move { m.reply(*m.body()) });
    b.flush().await.unwrap();
    a.flush().await.unwrap();
    let r: Message<u64> = a.request("echo", 1u64).await.unwrap();
    assert_eq!(*r.body(), 1);

    a.close().await;
    for _ in 0..2 {
        let err: codecbus_bus::FlushError = a.flush().await.unwrap_err();
        assert_eq!(err.to_string(), "the bus is closed");
        a.close().await; // again: nothing to do
    }
    let err = a.send("echo", 2u64).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::Transport);
    assert!(err.to_string().starts_with("the bus is closed: "), "{err}");
    let err = a.publish("echo", 2u64).await.unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::Transport);
    assert!(err.to_string().starts_with("the bus is closed: "), "{err}");
    let err = a.request::<u64>("echo", 2u64).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::Transport);
    assert!(err.to_string().starts_with("the bus is closed: "), "{err}");

    b.flush().await.unwrap();
    let r: Message<u64> = b.request("echo", 3u64).await.unwrap();
    assert_eq!(*r.body(), 3);
}
