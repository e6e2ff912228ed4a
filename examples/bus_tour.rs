//! The in-process event bus with a derived type: send (round-robin),
//! publish (to every consumer), request/reply, and each reply error kind.
//!
//! ```text
//! cargo run --example bus_tour
//! ```

use std::time::Duration;

use codecbus::MessageCodec;
use codecbus::bus::{DeliveryOptions, EventBus, Message, RequestErrorKind};

/// Sent to the warehouse: deep-copied for each consumer, which may change it.
#[derive(MessageCodec, Clone, Debug)]
#[codec(name = "tour.order")]
struct Order {
    id: u64,
    sku: String,
    quantity: u32,
}

/// Broadcast to every listener: immutable, so all of them share it.
#[derive(MessageCodec, Debug)]
#[codec(immutable, name = "tour.price")]
struct Price {
    sku: String,
    cents: i64,
}

/// The warehouse's answer to an order.
#[derive(MessageCodec, Clone, Debug)]
#[codec(name = "tour.receipt")]
struct Receipt {
    order: u64,
    worker: u32,
}

#[tokio::main]
async fn main() {
    // Collects every derived codec of this program; no registration calls.
    let bus = EventBus::new();
    println!("codecs registered at start:");
    for reg in bus
        .codecs()
        .iter()
        .filter(|r| r.name().starts_with("tour."))
    {
        let how = if reg.is_immutable() {
            "shared"
        } else {
            "deep-copied"
        };
        println!("  {:<14} {:<28} {how}", reg.name(), reg.type_name());
    }

    // Three workers at one address: `send` and `request` go round-robin.
    let mut workers = Vec::new();
    for worker in 1..=3u32 {
        workers.push(
            bus.consumer("warehouse", move |mut m: Message<Order>| async move {
                if m.body().quantity == 0 {
                    return m.fail(422, "quantity must be positive");
                }
                // This consumer owns its copy of the order.
                if let Some(order) = m.body_mut() {
                    order.sku.make_ascii_uppercase();
                }
                // The handler's result: a reply nobody takes (to a `send`,
                // or after the requester gave up) is an `Err` the bus logs.
                m.reply(Receipt {
                    order: m.body().id,
                    worker,
                })
            }),
        );
    }
    for id in 1..=3 {
        let order = Order {
            id,
            sku: "tea".into(),
            quantity: 2,
        };
        let receipt: Message<Receipt> = bus.request("warehouse", order).await.expect("receipt");
        println!(
            "request  order {id} -> handled by worker {}",
            receipt.body().worker
        );
    }
    bus.send(
        "warehouse",
        Order {
            id: 4,
            sku: "cake".into(),
            quantity: 1,
        },
    )
    .await
    .expect("send");
    println!("send     order 4 -> one worker, no reply expected");

    // Two listeners: `publish` reaches both, with the same allocation.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let listeners: Vec<_> = ["display", "audit"]
        .into_iter()
        .map(|name| {
            let tx = tx.clone();
            // The handler owns its sender (runs are one at a time): no
            // clone per message.
            bus.consumer("prices", move |m: Message<Price>| {
                tx.send((name, m.into_arc())).expect("listener channel");
                async {}
            })
        })
        .collect();
    let published = bus
        .publish(
            "prices",
            Price {
                sku: "tea".into(),
                cents: 475,
            },
        )
        .await
        .expect("publish");
    let (first, a) = rx.recv().await.expect("first listener");
    let (second, b) = rx.recv().await.expect("second listener");
    println!(
        "publish  price {} {} -> {first} and {second} ({} delivered, {} refused), same allocation: {}",
        a.sku,
        a.cents,
        published.delivered(),
        published.refused(),
        std::sync::Arc::ptr_eq(&a, &b)
    );

    // The reply error kinds, with Vert.x failure numbering.
    let failed = bus
        .request::<Receipt>(
            "warehouse",
            Order {
                id: 5,
                sku: "tea".into(),
                quantity: 0,
            },
        )
        .await
        .expect_err("a zero quantity is refused");
    report("recipient failure", &failed);
    debug_assert_eq!(failed.kind(), RequestErrorKind::RecipientFailure);

    let nobody = bus
        .request::<Receipt>(
            "nowhere",
            Order {
                id: 6,
                sku: "tea".into(),
                quantity: 1,
            },
        )
        .await
        .expect_err("no consumer at `nowhere`");
    report("no handlers", &nobody);

    let _slow = bus.consumer("slow", |m: Message<Order>| async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        m.reply(Receipt {
            order: m.body().id,
            worker: 0,
        })
    });
    let timed_out = bus
        .request_with::<Receipt>(
            "slow",
            Order {
                id: 7,
                sku: "tea".into(),
                quantity: 1,
            },
            DeliveryOptions::new().timeout(Duration::from_millis(50)),
        )
        .await
        .expect_err("the slow consumer misses the deadline");
    report("timeout", &timed_out);

    let mismatch = bus
        .request::<Receipt>("warehouse", "not an order".to_string())
        .await
        .expect_err("the warehouse takes orders only");
    report("type mismatch", &mismatch);

    for w in workers.into_iter().chain(listeners) {
        w.unregister().await;
    }
    let m = bus.metrics();
    println!("\nmetrics: {m:?}");
}

fn report(what: &str, err: &codecbus::bus::RequestError) {
    println!(
        "error    {what:<18} kind {}, code {:?}: {err}",
        err.kind(),
        err.failure_code(),
    );
}
