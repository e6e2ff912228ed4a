//! A delivery reserves room in a consumer's queue before it copies the
//! body: a consumer whose queue is full costs no deep copy, for `send`,
//! `request` and `publish` alike. `Copied` counts every clone its
//! `transform` makes.

use crate::common;

use std::sync::Arc;

use codecbus_bus::{
    ConsumerOptions, EventBus, Message, MessageStream, PublishErrorKind, RequestErrorKind,
    SendErrorKind, Shared,
};
use common::Copied;

/// A stream consumer of `Copied` at `address` with room for one message;
/// nobody reads it, so it is full after one delivery.
fn one_slot(bus: &EventBus, address: &str) -> MessageStream<Copied> {
    bus.consumer_stream_with(address, ConsumerOptions::new().queue_capacity(1))
}

#[tokio::test]
async fn a_send_refused_by_a_full_queue_makes_no_copy() {
    let bus = EventBus::new();
    let _full = one_slot(&bus, "copies");
    let body = Arc::new(Copied::new(&[1, 2, 3]));
    bus.send("copies", Shared(Arc::clone(&body))).await.unwrap();
    assert_eq!(body.clones.get(), 1, "the delivered message is a copy");

    for _ in 0..10 {
        let err = bus
            .send("copies", Shared(Arc::clone(&body)))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), SendErrorKind::QueueFull);
        // The caller's own allocation comes back, not a copy.
        let back = err.into_body::<Copied>().unwrap();
        assert!(Arc::ptr_eq(&back, &body));
    }
    assert_eq!(body.clones.get(), 1, "ten refusals, no copy");
    assert_eq!(bus.metrics().refused, 10);
}

#[tokio::test]
async fn a_request_refused_by_every_full_queue_makes_no_copy() {
    let bus = EventBus::new();
    let _a = one_slot(&bus, "copies");
    let _b = one_slot(&bus, "copies");
    let body = Arc::new(Copied::new(&[4]));
    // One message fills each queue.
    bus.send("copies", Shared(Arc::clone(&body))).await.unwrap();
    bus.send("copies", Shared(Arc::clone(&body))).await.unwrap();
    assert_eq!(body.clones.get(), 2);

    let err = bus
        .request::<Copied>("copies", Shared(Arc::clone(&body)))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::QueueFull);
    assert_eq!(body.clones.get(), 2, "both consumers refused: no copy");
}

#[tokio::test]
async fn a_publish_copies_once_per_consumer_with_room() {
    let bus = EventBus::new();
    let mut open = bus.consumer_stream::<Copied>("copies");
    let _full = one_slot(&bus, "copies");
    let body = Arc::new(Copied::new(&[5]));
    let first = bus
        .publish("copies", Shared(Arc::clone(&body)))
        .await
        .unwrap();
    assert_eq!((first.delivered(), first.refused()), (2, 0));
    assert_eq!(body.clones.get(), 2);

    let second = bus
        .publish("copies", Shared(Arc::clone(&body)))
        .await
        .unwrap();
    assert_eq!((second.delivered(), second.refused()), (1, 1));
    assert_eq!(body.clones.get(), 3, "the full consumer cost no copy");

    // Both copies in the open consumer's queue are its own.
    for _ in 0..2 {
        let m: Message<Copied> = open.recv().await.unwrap();
        assert!(!Arc::ptr_eq(m.body_arc(), &body));
        assert_eq!(m.body().items, [5]);
    }
}

#[tokio::test]
async fn a_publish_refused_by_every_consumer_makes_no_copy() {
    let bus = EventBus::new();
    let _a = one_slot(&bus, "copies");
    let _b = one_slot(&bus, "copies");
    let body = Arc::new(Copied::new(&[6]));
    bus.publish("copies", Shared(Arc::clone(&body)))
        .await
        .unwrap();
    assert_eq!(body.clones.get(), 2);

    let err = bus
        .publish("copies", Shared(Arc::clone(&body)))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::QueueFull);
    assert_eq!(body.clones.get(), 2);
    let m = bus.metrics();
    assert_eq!((m.delivered, m.refused), (2, 2));
}
