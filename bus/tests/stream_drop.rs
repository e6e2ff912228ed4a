//! Dropping a consumer stream while other threads deliver to it: every
//! message delivered to it is either handed out or counted as discarded,
//! never lost without a count, and the books balance.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use codecbus_bus::{EventBus, MessageStream};
use codecbus_core::MessageCodec;

/// Not immutable: each delivery deep-copies 16 KiB, which widens the
/// window in which a delivery holds room in a queue it reserved.
#[derive(MessageCodec, Clone)]
struct Blob {
    bytes: Vec<u8>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_counts_every_message_it_was_given() {
    let bus = EventBus::new();
    let stop = Arc::new(AtomicBool::new(false));
    let publishers: Vec<_> = (0..2)
        .map(|_| {
            let (bus, stop) = (bus.clone(), Arc::clone(&stop));
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
        .collect();

    // Streams come and go while the publishers run; each takes a message
    // or two, then is dropped with whatever is in flight to it.
    let mut rounds = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while std::time::Instant::now() < deadline || rounds < 200 {
        let mut stream: MessageStream<Blob> = bus.consumer_stream("blobs");
        if rounds % 2 == 0 {
            let _ = tokio::time::timeout(Duration::from_millis(1), stream.recv()).await;
        }
        drop(stream);
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
        "messages delivered to a dropped stream went uncounted ({rounds} rounds): {m:?}"
    );
}
