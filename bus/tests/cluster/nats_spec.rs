//! Consumers guarded by a JSON spec across NATS: the receiving node checks
//! while it decodes, a remote requester learns every violation, and the
//! refusals are counted on the node that refused.
#![cfg(all(feature = "nats", feature = "json"))]

use crate::common;
use crate::harness;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use codecbus_bus::{ConsumerOptions, EventBus, Message, RequestErrorKind};
use codecbus_json::spec::{Spec, integer, string};
use codecbus_json::{JsObj, JsValue, jsobj, jsobj_spec};
use common::eventually;
use harness::NatsServer;

async fn node(server: &NatsServer) -> EventBus {
    common::nats_node(&server.url()).await
}

fn order_spec() -> Spec {
    jsobj_spec! { "sku": string().length(1..=12), "qty": integer().range(1..=100) }
}

/// A consumer of `JsObj` at `address` on `bus` that counts its calls and
/// replies with the body.
fn counting(bus: &EventBus, address: &str, options: ConsumerOptions) -> Arc<AtomicUsize> {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    let _ = bus.consumer_with(address, options, move |m: Message<JsObj>| {
        seen.fetch_add(1, Ordering::SeqCst);
        async move { m.reply(m.body().clone()) }
    });
    calls
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_request_learns_every_violation() {
    let server = NatsServer::for_test("a_remote_request_learns_every_violation");
    let (a, b) = (node(&server).await, node(&server).await);
    let calls = counting(&b, "orders", ConsumerOptions::new().spec(order_spec()));
    b.flush().await.unwrap();

    let ok: Message<JsObj> = a
        .request("orders", jsobj! { "sku": "tea", "qty": 2 })
        .await
        .unwrap();
    assert_eq!(ok.body(), &jsobj! { "sku": "tea", "qty": 2 });

    // The decode stops at the first violation; the answer still lists all.
    let err = a
        .request::<JsObj>("orders", jsobj! { "sku": "", "qty": 0, "extra": true })
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert_eq!(
        err.to_string(),
        "Body refused at address orders: it does not conform to the consumer's spec: \
         /extra: expected no such member (the object is strict), found true; \
         /qty: expected integer in 1..=100, found 0; \
         /sku: expected string of 1..=12 characters, found a string of 0 characters"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let m = b.metrics();
    assert_eq!((m.remote_received, m.delivered, m.invalid), (2, 1, 1));
    assert_eq!(a.metrics().invalid, 0, "counted where it was refused");

    // A body of another type is a type mismatch, as without a spec.
    let err = a
        .request::<JsObj>("orders", JsValue::from(5))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::TypeMismatch, "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_sends_and_publishes_are_refused_and_counted_on_each_node() {
    let server =
        NatsServer::for_test("remote_sends_and_publishes_are_refused_and_counted_on_each_node");
    let (a, b, c) = (
        node(&server).await,
        node(&server).await,
        node(&server).await,
    );
    let on_b = counting(&b, "orders", ConsumerOptions::new().spec(order_spec()));
    let on_c = counting(&c, "orders", ConsumerOptions::new().spec(order_spec()));
    b.flush().await.unwrap();
    c.flush().await.unwrap();

    let bad = jsobj! { "sku": "tea", "qty": 1000 };
    a.send("orders", bad.clone()).await.unwrap();
    a.publish("orders", bad.clone()).await.unwrap();
    eventually("the send refused on one node, the publish on both", || {
        b.metrics().invalid + c.metrics().invalid == 3
    })
    .await;
    let mut counts = [b.metrics().invalid, c.metrics().invalid];
    counts.sort_unstable();
    assert_eq!(counts, [1, 2]);
    assert_eq!(on_b.load(Ordering::SeqCst) + on_c.load(Ordering::SeqCst), 0);

    a.publish("orders", jsobj! { "sku": "tea", "qty": 10 })
        .await
        .unwrap();
    eventually("a conforming publish handled on both nodes", || {
        on_b.load(Ordering::SeqCst) == 1 && on_c.load(Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(b.metrics().handled + c.metrics().handled, 2);
}

/// Consumers with different guards (or none) at one address: the node
/// decodes as usual and each consumer's guard checks its own delivery.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumers_with_different_specs_on_one_node_each_check() {
    let server = NatsServer::for_test("consumers_with_different_specs_on_one_node_each_check");
    let (a, b) = (node(&server).await, node(&server).await);
    let strict = counting(&b, "orders", ConsumerOptions::new().spec(order_spec()));
    let open = counting(&b, "orders", ConsumerOptions::new());
    b.flush().await.unwrap();

    a.publish("orders", jsobj! { "sku": "", "qty": 1 })
        .await
        .unwrap();
    eventually(
        "the open consumer got it, the strict one refused it",
        || open.load(Ordering::SeqCst) == 1 && b.metrics().invalid == 1,
    )
    .await;
    assert_eq!(strict.load(Ordering::SeqCst), 0);

    // A request the strict consumer refuses goes to the open one.
    for _ in 0..4 {
        let reply: Message<JsObj> = a
            .request("orders", jsobj! { "sku": "", "qty": 1 })
            .await
            .unwrap();
        assert_eq!(reply.body(), &jsobj! { "sku": "", "qty": 1 });
    }
    assert_eq!(strict.load(Ordering::SeqCst), 0);
    assert_eq!(open.load(Ordering::SeqCst), 5);
}
