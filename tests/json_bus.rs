//! The JSON values on the bus: a `JsObj` is shared by every local consumer
//! (one allocation, zero copies), a `serde_json::Value` is deep-copied for
//! each of them; request/reply with a `JsObj` body.

use std::sync::Arc;

use codecbus::bus::{EventBus, Message, Shared};
use codecbus::json::{JsArray, JsObj, JsPath, JsValue};
use codecbus::{jsarr, jsobj};
use serde_json::json;

/// An order with enough members to use the tree representation.
fn big_order() -> JsObj {
    let lines: JsArray = (0..100)
        .map(|i| jsobj! { "sku": (format!("sku-{i}")), "qty": i })
        .collect();
    let mut order = jsobj! {
        "id": 7,
        "customer": { "name": "Ada", "tier": "gold" },
        "lines": lines,
    };
    for i in 0..1000 {
        order.insert(format!("attr{i:04}"), i);
    }
    order
}

#[test]
fn both_json_codecs_are_registered() {
    let bus = EventBus::new();
    let obj = bus.codec_for::<JsObj>().unwrap();
    assert_eq!((obj.name(), obj.is_immutable()), ("json-obj-value", true));
    let arr = bus.codec_for::<JsArray>().unwrap();
    assert_eq!((arr.name(), arr.is_immutable()), ("json-array-value", true));
    let sj = bus.codec_for::<serde_json::Value>().unwrap();
    assert_eq!((sj.name(), sj.is_immutable()), ("serde-json-value", false));
}

#[tokio::test]
async fn published_jsobj_reaches_three_consumers_as_one_allocation() {
    let bus = EventBus::new();
    let mut streams: Vec<_> = (0..3)
        .map(|_| bus.consumer_stream::<JsObj>("orders"))
        .collect();

    // Sent as a `Shared` Arc the sender keeps: every consumer sees it.
    for body in [big_order(), jsobj! { "small": true }] {
        let body = Arc::new(body);
        bus.publish("orders", Shared(Arc::clone(&body)))
            .await
            .unwrap();
        let mut got = Vec::new();
        for s in &mut streams {
            let mut m = s.recv().await.unwrap();
            assert!(Arc::ptr_eq(m.body_arc(), &body), "the sender's allocation");
            assert!(m.body().ptr_eq(&body));
            assert!(m.body_mut().is_none(), "shared, so not mutable in place");
            got.push(m);
        }
        assert_eq!(Arc::strong_count(&body), 4);

        // A consumer "changes" it by making a new value; nobody else sees it.
        let path: JsPath = "/customer/tier".parse().unwrap();
        let changed = got[0].body().set_in(&path, "platinum");
        assert_eq!(changed.get_in(&path), Some(&JsValue::from("platinum")));
        for m in &got {
            assert_eq!(m.body(), &*body);
            assert_ne!(m.body().get_in(&path), Some(&JsValue::from("platinum")));
        }
    }

    // Given away by value: the three consumers still share one allocation.
    bus.publish("orders", big_order()).await.unwrap();
    let first = streams[0].recv().await.unwrap();
    for s in &mut streams[1..] {
        let m = s.recv().await.unwrap();
        assert!(Arc::ptr_eq(m.body_arc(), first.body_arc()));
    }
    assert_eq!(first.body(), &big_order());
}

#[tokio::test]
async fn published_serde_json_value_reaches_three_consumers_as_deep_copies() {
    let bus = EventBus::new();
    let mut streams: Vec<_> = (0..3)
        .map(|_| bus.consumer_stream::<serde_json::Value>("orders"))
        .collect();
    let original = json!({
        "id": 7,
        "customer": { "name": "Ada", "tier": "gold" },
        "lines": [{ "sku": "tea", "qty": 2 }, { "sku": "cake", "qty": 1 }],
    });
    let body = Arc::new(original.clone());
    bus.publish("orders", Shared(Arc::clone(&body)))
        .await
        .unwrap();

    let mut got = Vec::new();
    for s in &mut streams {
        got.push(s.recv().await.unwrap());
    }
    for (i, m) in got.iter().enumerate() {
        assert!(
            !Arc::ptr_eq(m.body_arc(), &body),
            "a copy, not the sender's"
        );
        for other in &got[i + 1..] {
            assert!(!Arc::ptr_eq(m.body_arc(), other.body_arc()));
        }
        assert_eq!(m.body(), &original);
    }
    assert_eq!(
        Arc::strong_count(&body),
        1,
        "no consumer holds the original"
    );

    // Each consumer owns its copy and changes it deep inside.
    for (i, m) in got.iter_mut().enumerate() {
        let v = m.body_mut().expect("a deep copy is the consumer's own");
        *v.pointer_mut("/lines/0/qty").unwrap() = json!(100 + i);
        v["customer"]["tier"] = json!(format!("tier {i}"));
    }
    for (i, m) in got.iter().enumerate() {
        assert_eq!(m.body().pointer("/lines/0/qty"), Some(&json!(100 + i)));
        assert_eq!(m.body()["customer"]["tier"], json!(format!("tier {i}")));
    }
    assert_eq!(*body, original, "the sender's value never changed");
}

#[tokio::test]
async fn request_reply_with_a_jsobj_body() {
    let bus = EventBus::new();

    // Prices an order: replies with a new object that shares the lines.
    let _pricing = bus.consumer("orders.price", |m: Message<JsObj>| async move {
        let qty: i64 = m
            .body()
            .get("lines")
            .and_then(JsValue::as_array)
            .map(|lines| {
                lines
                    .iter()
                    .filter_map(|l| l.as_object()?.get("qty")?.as_i64())
                    .sum()
            })
            .unwrap_or(0);
        m.reply(m.body().set("total", qty * 250).set("status", "priced"))
    });
    // Echoes the very allocation it received.
    let _echo = bus.consumer("orders.echo", |m: Message<JsObj>| async move {
        m.reply(Shared(Arc::clone(m.body_arc())))
    });

    let order = jsobj! {
        "id": 7,
        "lines": [{ "sku": "tea", "qty": 2 }, { "sku": "cake", "qty": 1 }],
    };
    let body = Arc::new(order.clone());
    let priced: Message<JsObj> = bus
        .request("orders.price", Shared(Arc::clone(&body)))
        .await
        .unwrap();
    assert_eq!(
        priced.body(),
        &jsobj! {
            "id": 7,
            "lines": [{ "sku": "tea", "qty": 2 }, { "sku": "cake", "qty": 1 }],
            "status": "priced",
            "total": 750,
        }
    );
    assert_eq!(*body, order, "the request body is unchanged");
    let lines = |o: &JsObj| o.get("lines").cloned().unwrap();
    assert!(
        lines(priced.body()).ptr_eq(&lines(&body)),
        "the reply shares the request's lines"
    );

    let echoed: Message<JsObj> = bus
        .request("orders.echo", Shared(Arc::clone(&body)))
        .await
        .unwrap();
    assert!(
        Arc::ptr_eq(echoed.body_arc(), &body),
        "not copied either way"
    );

    // Arrays travel the same way.
    let _len = bus.consumer("arrays.len", |m: Message<JsArray>| async move {
        m.reply(m.body().len() as u64)
    });
    let n: Message<u64> = bus
        .request("arrays.len", jsarr![1, "two", [3]])
        .await
        .unwrap();
    assert_eq!(*n.body(), 3);
}
