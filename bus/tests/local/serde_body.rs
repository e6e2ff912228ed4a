//! A serde type as a message body (`codecbus_core::Serde<T>`): in process
//! each consumer gets its own deep copy; across NATS the body is encoded
//! with rmp-serde and decoded on the other node by its codec name.

#[cfg(feature = "nats")]
use crate::common;
#[cfg(feature = "nats")]
use crate::harness;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use codecbus_bus::{EventBus, Message};
use codecbus_core::{Serde, serde_codec};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
enum Status {
    Open,
    Held { reason: String },
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct LegacyOrder {
    id: u64,
    lines: Vec<(String, u32)>,
    status: Status,
    note: Option<String>,
    attributes: BTreeMap<String, f64>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct LegacyReceipt {
    order: u64,
    total_cents: i64,
    held: bool,
}

serde_codec!(LegacyOrder, "test.legacy.order.v1");
serde_codec!(LegacyReceipt, "test.legacy.receipt.v1");

fn order(id: u64) -> LegacyOrder {
    LegacyOrder {
        id,
        lines: vec![("tea".into(), 2), ("cake".into(), 1)],
        status: if id.is_multiple_of(2) {
            Status::Open
        } else {
            Status::Held {
                reason: "stock".into(),
            }
        },
        note: id.is_multiple_of(3).then(|| "thirds".to_owned()),
        attributes: BTreeMap::from([("weight".to_owned(), 1.25)]),
    }
}

fn receipt(order: &LegacyOrder) -> LegacyReceipt {
    LegacyReceipt {
        order: order.id,
        total_cents: order.lines.iter().map(|(_, q)| i64::from(*q) * 250).sum(),
        held: order.status != Status::Open,
    }
}

#[tokio::test]
async fn each_local_consumer_gets_its_own_deep_copy() {
    let bus = EventBus::new();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut consumers = Vec::new();
    for name in ["a", "b"] {
        let tx = tx.clone();
        consumers.push(
            bus.consumer("legacy", move |mut m: Message<Serde<LegacyOrder>>| {
                let tx = tx.clone();
                async move {
                    let seen = m.body().0.clone();
                    let address = std::ptr::from_ref(&m.body().0) as usize;
                    // Its own copy: it may change it.
                    let mine = m
                        .body_mut()
                        .expect("a deep copy held by this consumer alone");
                    mine.lines.push((name.to_owned(), 99));
                    mine.status = Status::Held {
                        reason: name.to_owned(),
                    };
                    let _ = tx.send((name, seen, address, m.body().0.clone()));
                }
            }),
        );
    }
    drop(tx);

    // Sent as a shared `Arc`: the sender keeps a handle on its own value.
    let sent = Arc::new(Serde(order(7)));
    let _ = bus
        .publish("legacy", codecbus_bus::Shared(Arc::clone(&sent)))
        .await
        .unwrap();

    let mut got = Vec::new();
    for _ in 0..2 {
        let one = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("both consumers run")
            .unwrap();
        got.push(one);
    }
    got.sort_by_key(|(name, ..)| *name);
    for (name, seen, address, changed) in &got {
        assert_eq!(seen, &order(7), "{name} saw the value as sent");
        assert_ne!(
            *address,
            std::ptr::from_ref(&sent.0) as usize,
            "{name} got a copy"
        );
        assert!(changed.lines.iter().any(|(sku, _)| sku == name));
    }
    assert_ne!(got[0].2, got[1].2, "one copy per consumer");
    // Neither consumer's change reached the sender or the other consumer.
    assert_eq!(sent.0, order(7));
    assert!(!got[0].3.lines.iter().any(|(sku, _)| sku == "b"));
}

#[tokio::test]
async fn local_request_and_reply_with_serde_bodies() {
    let bus = EventBus::new();
    let _pricing = bus.consumer("pricing", |m: Message<Serde<LegacyOrder>>| async move {
        let _ = m.reply(Serde(receipt(m.body())));
    });
    let reply: Message<Serde<LegacyReceipt>> =
        bus.request("pricing", Serde(order(3))).await.unwrap();
    assert_eq!(reply.body().0, receipt(&order(3)));
}

#[cfg(feature = "nats")]
mod nats {
    use super::*;
    use harness::NatsServer;

    async fn node(server: &NatsServer) -> EventBus {
        common::nats_node(&server.url()).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn request_and_reply_cross_nodes_decoded_by_name() {
        let server = NatsServer::for_test("request_and_reply_cross_nodes_decoded_by_name");
        let (a, b) = (node(&server).await, node(&server).await);
        let _pricing = b.consumer(
            "legacy.pricing",
            |m: Message<Serde<LegacyOrder>>| async move {
                let _ = m.reply(Serde(receipt(m.body())));
            },
        );
        b.flush().await.unwrap();

        for id in 0..12 {
            let sent = order(id);
            let reply: Message<Serde<LegacyReceipt>> = a
                .request("legacy.pricing", Serde(sent.clone()))
                .await
                .unwrap();
            assert_eq!(reply.body().0, receipt(&sent), "order {id}");
        }

        // The body that crossed is the consumer's own value, decoded on `b`.
        let (tx, mut rx) = mpsc::unbounded_channel();
        let _echo = b.consumer("legacy.echo", move |m: Message<Serde<LegacyOrder>>| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(m.body().0.clone());
            }
        });
        b.flush().await.unwrap();
        a.send("legacy.echo", Serde(order(5))).await.unwrap();
        let got = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("the send crosses")
            .unwrap();
        assert_eq!(got, order(5));
    }
}
