//! `publish`: every consumer, shared vs copied bodies, mismatches, full
//! queues.

use crate::common;

use std::sync::Arc;

use codecbus_bus::{ConsumerOptions, EventBus, Message, PublishErrorKind, Shared};
use common::{Copied, Frozen, channel};

#[tokio::test]
async fn publish_reaches_every_consumer_once() {
    let bus = EventBus::new();
    let (tx, mut rx) = channel();
    let _consumers: Vec<_> = (0..5)
        .map(|i| {
            let tx = tx.clone();
            bus.consumer("news", move |m: Message<String>| {
                let tx = tx.clone();
                async move { tx.send((i, m.body().clone())).unwrap() }
            })
        })
        .collect();
    bus.publish("news", "extra".to_string()).await.unwrap();
    let mut got: Vec<_> = (0..5).map(|_| rx.try_recv()).collect::<Vec<_>>();
    // Consumers run on their own tasks: wait for all five.
    for slot in &mut got {
        if slot.is_err() {
            *slot = Ok(rx.recv().await.unwrap());
        }
    }
    let mut ids: Vec<_> = got.into_iter().map(|r| r.unwrap()).collect();
    ids.sort();
    assert_eq!(
        ids,
        (0..5).map(|i| (i, "extra".to_string())).collect::<Vec<_>>()
    );
    let m = bus.metrics();
    assert_eq!((m.published, m.delivered), (1, 5));
}

#[tokio::test]
async fn immutable_publish_shares_one_allocation_and_copies_nothing() {
    let bus = EventBus::new();
    let mut streams: Vec<_> = (0..4)
        .map(|_| bus.consumer_stream::<Frozen>("frozen"))
        .collect();
    let body = Arc::new(Frozen::new("a big immutable document"));
    bus.publish("frozen", Shared(Arc::clone(&body)))
        .await
        .unwrap();
    for s in &mut streams {
        let m = s.recv().await.unwrap();
        assert!(
            Arc::ptr_eq(m.body_arc(), &body),
            "every consumer sees the sender's allocation"
        );
    }
    assert_eq!(body.clones.get(), 0, "the immutable path never clones");

    // Also when the sender gives the value away: all consumers share it.
    bus.publish("frozen", Frozen::new("moved")).await.unwrap();
    let first = streams[0].recv().await.unwrap();
    for s in &mut streams[1..] {
        assert!(Arc::ptr_eq(
            s.recv().await.unwrap().body_arc(),
            first.body_arc()
        ));
    }
    assert_eq!(first.body().clones.get(), 0);
}

#[tokio::test]
async fn copied_publish_gives_each_consumer_its_own_copy() {
    let bus = EventBus::new();
    let mut streams: Vec<_> = (0..3)
        .map(|_| bus.consumer_stream::<Copied>("copied"))
        .collect();
    let body = Arc::new(Copied::new(&[1, 2, 3]));
    bus.publish("copied", Shared(Arc::clone(&body)))
        .await
        .unwrap();
    assert_eq!(body.clones.get(), 3, "one deep copy per consumer");

    let mut messages = Vec::new();
    for s in &mut streams {
        messages.push(s.recv().await.unwrap());
    }
    for (i, a) in messages.iter().enumerate() {
        assert!(!Arc::ptr_eq(a.body_arc(), &body));
        for b in &messages[i + 1..] {
            assert!(!Arc::ptr_eq(a.body_arc(), b.body_arc()));
        }
    }
    // A consumer mutating its copy is seen by nobody else.
    let mut first = messages.remove(0);
    first
        .body_mut()
        .expect("a copy is the consumer's own")
        .items
        .push(4);
    assert_eq!(first.body().items, [1, 2, 3, 4]);
    for other in &messages {
        assert_eq!(other.body().items, [1, 2, 3]);
    }
    assert_eq!(body.items, [1, 2, 3], "the sender's value is untouched");
    let owned: Copied = messages.remove(0).into_body();
    assert_eq!(owned.items, [1, 2, 3]);
}

#[tokio::test]
async fn a_shared_immutable_body_cannot_be_mutated_in_place() {
    let bus = EventBus::new();
    let mut a = bus.consumer_stream::<Frozen>("f");
    let mut b = bus.consumer_stream::<Frozen>("f");
    bus.publish("f", Frozen::new("x")).await.unwrap();
    let mut ma = a.recv().await.unwrap();
    let mb = b.recv().await.unwrap();
    assert!(ma.body_mut().is_none(), "shared with another consumer");
    drop(mb);
    assert!(ma.body_mut().is_some(), "the last holder owns it");
}

#[tokio::test]
async fn publish_without_consumers_is_no_handlers() {
    let bus = EventBus::new();
    let err = bus.publish("nobody", 1u8).await.unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::NoHandlers);
    assert_eq!(err.to_string(), "No handlers for address nobody");
}

#[tokio::test]
async fn publish_skips_consumers_of_another_type() {
    let bus = EventBus::new();
    let mut numbers = bus.consumer_stream::<u32>("mixed");
    let _texts = bus.consumer_stream::<String>("mixed");
    bus.publish("mixed", 5u32).await.unwrap();
    assert_eq!(*numbers.recv().await.unwrap().body(), 5);
    assert_eq!(bus.metrics().type_mismatches, 1);

    let err = bus.publish("mixed", 5u64).await.unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::TypeMismatch);
}

#[tokio::test]
async fn publish_to_a_full_consumer_delivers_to_the_others_and_reports_it() {
    let bus = EventBus::new();
    let mut slow = bus.consumer_stream_with::<u32>("fan", ConsumerOptions::new().queue_capacity(1));
    let mut fast = bus.consumer_stream::<u32>("fan");
    let report = bus.publish("fan", 1u32).await.unwrap();
    assert_eq!((report.delivered(), report.refused()), (2, 0));
    assert!(report.all_delivered() && !report.to_cluster());
    // A partial delivery is a success, with the refusal in the report.
    let report = bus.publish("fan", 2u32).await.unwrap();
    assert_eq!((report.delivered(), report.refused()), (1, 1));
    assert!(!report.all_delivered());
    assert_eq!(*fast.recv().await.unwrap().body(), 1);
    assert_eq!(*fast.recv().await.unwrap().body(), 2);
    assert_eq!(*slow.recv().await.unwrap().body(), 1);
    let m = bus.metrics();
    assert_eq!((m.published, m.delivered, m.refused), (2, 3, 1));
}

#[tokio::test]
async fn publish_refused_by_every_consumer_fails_and_hands_the_body_back() {
    let bus = EventBus::new();
    let one = ConsumerOptions::new().queue_capacity(1);
    let _a = bus.consumer_stream_with::<u32>("full", one.clone());
    let _b = bus.consumer_stream_with::<u32>("full", one);
    bus.publish("full", 1u32).await.unwrap();
    let err = bus.publish("full", 2u32).await.unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::QueueFull);
    assert_eq!(
        err.to_string(),
        "Queue full at address full: every consumer's queue is at capacity"
    );
    assert_eq!(err.into_body::<u32>().as_deref(), Some(&2));
    assert_eq!(bus.metrics().refused, 2);
}

#[tokio::test]
async fn a_publisher_producer_succeeds_on_a_partial_delivery() {
    let bus = EventBus::new();
    let _slow = bus.consumer_stream_with::<u32>("p", ConsumerOptions::new().queue_capacity(1));
    let mut fast = bus.consumer_stream::<u32>("p");
    let producer = bus.publisher::<u32>("p");
    producer.write(1).await.unwrap();
    producer.write(2).await.unwrap();
    assert_eq!(*fast.recv().await.unwrap().body(), 1);
    assert_eq!(*fast.recv().await.unwrap().body(), 2);
    assert_eq!(bus.metrics().refused, 1);
}
