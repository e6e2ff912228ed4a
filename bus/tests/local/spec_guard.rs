//! Consumers guarded by a JSON spec, in process: a body that does not
//! conform never reaches the handler, the caller learns why (every
//! violation with its pointer), and every refusal is counted.
#![cfg(feature = "json")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use codecbus_bus::{
    ConsumerOptions, EventBus, Message, MessageStream, PublishErrorKind, RequestErrorKind,
    SendErrorKind, Shared,
};
use codecbus_json::spec::{array_of, integer, string};
use codecbus_json::{JsArray, JsObj, JsValue, jsarr, jsobj, jsobj_spec};
use futures_util::FutureExt;

fn order_spec() -> codecbus_json::spec::Spec {
    jsobj_spec! {
        "sku": string().length(1..=12),
        "qty": integer().range(1..=100),
        "tags"?: array_of(string()),
    }
}

/// The next message the stream holds already, if any.
fn now<T: codecbus_core::MessageType + Send + Sync + 'static>(
    stream: &mut MessageStream<T>,
) -> Option<Message<T>> {
    stream.recv().now_or_never().flatten()
}

fn guarded() -> ConsumerOptions {
    ConsumerOptions::new().spec(order_spec())
}

const BAD_ORDER_REASONS: &str = "it does not conform to the consumer's spec: \
    /qty: expected integer in 1..=100, found 0; \
    /sku: expected string of 1..=12 characters, found a string of 0 characters";

/// A handler consumer of `JsObj` at `address` that counts its calls and
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

#[tokio::test]
async fn request_with_a_nonconforming_body_fails_listing_every_violation() {
    let bus = EventBus::new();
    let calls = counting(&bus, "orders", guarded());

    let ok: Message<JsObj> = bus
        .request("orders", jsobj! { "sku": "tea", "qty": 2 })
        .await
        .unwrap();
    assert_eq!(ok.body(), &jsobj! { "sku": "tea", "qty": 2 });

    let err = bus
        .request::<JsObj>("orders", jsobj! { "sku": "", "qty": 0 })
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert_eq!(
        err.to_string(),
        format!("Body refused at address orders: {BAD_ORDER_REASONS}")
    );
    assert_eq!(err.address(), Some("orders"));
    assert_eq!(
        err.into_body::<JsObj>().as_deref(),
        Some(&jsobj! { "sku": "", "qty": 0 })
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    let m = bus.metrics();
    assert_eq!((m.sent, m.delivered, m.invalid, m.handled), (2, 1, 1, 1));
}

#[tokio::test]
async fn send_and_publish_refused_by_every_consumer_fail_with_invalid() {
    let bus = EventBus::new();
    let calls = counting(&bus, "orders", guarded());
    let bad = jsobj! { "sku": "tea", "qty": 101, "tags": ["a", 7] };

    let err = bus.send("orders", bad.clone()).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::Invalid);
    assert_eq!(
        err.to_string(),
        "Body refused at address orders: it does not conform to the consumer's spec: \
         /qty: expected integer in 1..=100, found 101; /tags/1: expected string, found 7"
    );
    assert_eq!(err.into_body::<JsObj>().as_deref(), Some(&bad));

    let err = bus.publish("orders", bad.clone()).await.unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::Invalid);
    assert!(
        err.to_string().contains("/tags/1: expected string"),
        "{err}"
    );

    bus.send("orders", jsobj! { "sku": "tea", "qty": 1 })
        .await
        .unwrap();
    let report = bus
        .publish("orders", jsobj! { "sku": "tea", "qty": 1, "tags": ["x"] })
        .await
        .unwrap();
    assert_eq!((report.delivered(), report.invalid()), (1, 0));

    let m = bus.metrics();
    // Each send and publish ended in exactly one of `delivered` and
    // `invalid`.
    assert_eq!((m.sent, m.published, m.delivered, m.invalid), (2, 2, 2, 2));
    while calls.load(Ordering::SeqCst) < 2 {
        tokio::task::yield_now().await;
    }
    assert_eq!(bus.metrics().handled, 2);
}

#[tokio::test]
async fn a_publish_reaches_the_consumers_whose_spec_it_meets() {
    let bus = EventBus::new();
    let mut strict = bus.consumer_stream_with::<JsObj>("orders", guarded());
    let mut open = bus.consumer_stream::<JsObj>("orders");
    let mut strict_too = bus.consumer_stream_with::<JsObj>("orders", guarded());

    let bad = jsobj! { "sku": "tea", "qty": 0 };
    let report = bus.publish("orders", bad.clone()).await.unwrap();
    assert_eq!(
        (report.delivered(), report.refused(), report.invalid()),
        (1, 0, 2)
    );
    assert!(!report.all_delivered());
    assert_eq!(open.recv().await.unwrap().body(), &bad);

    let good = jsobj! { "sku": "tea", "qty": 3 };
    let report = bus.publish("orders", good.clone()).await.unwrap();
    assert_eq!((report.delivered(), report.invalid()), (3, 0));
    assert!(report.all_delivered());
    for stream in [&mut strict, &mut open, &mut strict_too] {
        assert_eq!(stream.recv().await.unwrap().body(), &good);
    }
    assert_eq!(bus.metrics().invalid, 2);
}

#[tokio::test]
async fn a_send_a_spec_refuses_goes_to_a_consumer_that_takes_it() {
    let bus = EventBus::new();
    let mut strict = bus.consumer_stream_with::<JsObj>("orders", guarded());
    let mut open = bus.consumer_stream::<JsObj>("orders");
    for qty in [0, 500, 7] {
        bus.send("orders", jsobj! { "sku": "tea", "qty": qty })
            .await
            .unwrap();
    }
    // Round-robin over two consumers, the strict one skipped for the two
    // bodies it refuses. Local delivery is done when `send` returns.
    let qty = |m: Option<Message<JsObj>>| m.expect("a message").body().get("qty").cloned();
    assert_eq!(qty(now(&mut open)), Some(JsValue::from(0)));
    assert_eq!(qty(now(&mut open)), Some(JsValue::from(500)));
    assert!(now(&mut open).is_none());
    assert_eq!(qty(now(&mut strict)), Some(JsValue::from(7)));
    assert_eq!(
        bus.metrics().invalid,
        0,
        "a send another consumer took is not refused"
    );
}

#[tokio::test]
async fn a_conforming_immutable_body_is_still_shared_not_copied() {
    let bus = EventBus::new();
    let mut a = bus.consumer_stream_with::<JsObj>("orders", guarded());
    let mut b = bus.consumer_stream_with::<JsObj>("orders", guarded());
    let body = Arc::new(jsobj! { "sku": "tea", "qty": 5 });
    bus.publish("orders", Shared(Arc::clone(&body)))
        .await
        .unwrap();
    let (ma, mb) = (a.recv().await.unwrap(), b.recv().await.unwrap());
    assert!(Arc::ptr_eq(ma.body_arc(), &body));
    assert!(Arc::ptr_eq(mb.body_arc(), &body));
}

#[tokio::test]
async fn value_and_array_consumers_are_guarded_too() {
    let bus = EventBus::new();
    let numbers = array_of(integer().min(0)).length(1..=3);
    let mut arrays = bus
        .consumer_stream_with::<JsArray>("numbers", ConsumerOptions::new().spec(numbers.clone()));
    let mut values =
        bus.consumer_stream_with::<JsValue>("values", ConsumerOptions::new().spec(numbers));

    let err = bus.send("numbers", jsarr![1, -2, 3, 4]).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::Invalid);
    assert_eq!(
        err.to_string(),
        "Body refused at address numbers: it does not conform to the consumer's spec: \
         (root): expected array of 1..=3 items, found an array of 4 items; \
         /1: expected integer >= 0, found -2"
    );
    bus.send("numbers", jsarr![1, 2]).await.unwrap();
    assert_eq!(arrays.recv().await.unwrap().body(), &jsarr![1, 2]);

    let err = bus.send("values", JsValue::from("text")).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::Invalid);
    assert!(
        err.to_string()
            .ends_with("(root): expected array of 1..=3 items, found \"text\""),
        "{err}"
    );
    bus.send("values", JsValue::from(jsarr![0])).await.unwrap();
    assert_eq!(
        values.recv().await.unwrap().body(),
        &JsValue::from(jsarr![0])
    );
}

#[tokio::test]
async fn a_long_list_of_violations_is_cut_and_counted() {
    let bus = EventBus::new();
    let _numbers = bus.consumer_stream_with::<JsArray>(
        "numbers",
        ConsumerOptions::new().spec(array_of(integer().min(0))),
    );
    let body: JsArray = (0..40).map(|i| JsValue::from(-1 - i)).collect();
    let err = bus.send("numbers", body).await.unwrap_err();
    let text = err.to_string();
    assert_eq!(text.matches("expected integer >= 0").count(), 16, "{text}");
    assert!(text.contains("/15: expected"), "{text}");
    assert!(!text.contains("/16: expected"), "{text}");
    assert!(text.ends_with("; and 24 more"), "{text}");
}

#[tokio::test]
#[should_panic(
    expected = "the consumer at address numbers takes `u32`: a spec guards JsValue, JsObj or JsArray bodies only"
)]
async fn a_spec_on_a_consumer_of_another_type_is_refused_at_registration() {
    let bus = EventBus::new();
    let _c = bus.consumer_stream_with::<u32>("numbers", ConsumerOptions::new().spec(integer()));
}
