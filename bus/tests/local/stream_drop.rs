//! Dropping a consumer stream, or unregistering a handler consumer, while
//! other threads deliver to it: every message delivered to it is either
//! handed out or counted as discarded, never lost without a count, and the
//! books balance.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use codecbus_bus::{EventBus, Message, MessageStream};
use codecbus_core::MessageCodec;

/// Not immutable: each delivery deep-copies 16 KiB, which widens the
/// window in which a delivery holds room in a queue it reserved.
#[derive(MessageCodec, Clone)]
struct Blob {
    bytes: Vec<u8>,
}

/// Two tasks publishing `Blob`s to `blobs` until `stop`.
fn publishers(bus: &EventBus, stop: &Arc<AtomicBool>) -> Vec<tokio::task::JoinHandle<()>> {
    (0..2)
        .map(|_| {
            let (bus, stop) = (bus.clone(), Arc::clone(stop));
            tokio::spawn(async move {
                let blob = Arc::new(Blob {
                    bytes: vec![7; 16 * 1024],
                });
                while !stop.load(Ordering::Relaxed) {
                    let _ = bus
                        .publish("blobs", codecbus_bus::Shared(Arc::clone(&blob)))
                        .await;
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect()
}

/// Runs `round` for 2 s (at least 200 times) while two tasks publish, then
/// checks that every delivery was handled or counted as discarded.
async fn churn<F, Fut>(mut round: F)
where
    F: FnMut(EventBus, usize) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let bus = EventBus::new();
    let stop = Arc::new(AtomicBool::new(false));
    let publishers = publishers(&bus, &stop);
    let mut rounds = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while std::time::Instant::now() < deadline || rounds < 200 {
        round(bus.clone(), rounds).await;
        rounds += 1;
        tokio::task::yield_now().await;
    }
    stop.store(true, Ordering::Relaxed);
    for p in publishers {
        p.await.unwrap();
    }
    let m = bus.metrics();
    assert!(m.delivered > 0, "nothing was delivered in {rounds} rounds");
    assert_eq!(
        m.delivered,
        m.handled + m.discarded,
        "messages delivered to a consumer that went away went uncounted ({rounds} rounds): {m:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_counts_every_message_it_was_given() {
    // Each stream takes a message or none, then is dropped with whatever is
    // in flight to it.
    churn(|bus, round| async move {
        let mut stream: MessageStream<Blob> = bus.consumer_stream("blobs");
        if round % 2 == 0 {
            let _ = tokio::time::timeout(Duration::from_millis(1), stream.recv()).await;
        }
        drop(stream);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unregistered_handler_consumer_counts_every_message_it_was_given() {
    churn(|bus, round| async move {
        let consumer = bus.consumer("blobs", |_m: Message<Blob>| async {});
        if round % 2 == 0 {
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        consumer.unregister().await;
    })
    .await;
}
