//! `send`: round-robin, no handlers, type mismatch, full queue, ordering,
//! unregister, metrics.

use crate::common;

use std::time::Duration;

use codecbus_bus::{ConsumerOptions, EventBus, Message, SendErrorKind, Shared};
use common::{Frozen, channel};

#[tokio::test]
async fn send_round_robins_across_three_consumers() {
    let bus = EventBus::new();
    let (tx, mut rx) = channel();
    let consumers: Vec<_> = (0..3)
        .map(|i| {
            let tx = tx.clone();
            bus.consumer("work", move |m: Message<u32>| {
                let tx = tx.clone();
                async move { tx.send((i, *m.body())).unwrap() }
            })
        })
        .collect();
    for n in 0..9u32 {
        bus.send("work", n).await.unwrap();
    }
    let mut per_consumer = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..9 {
        let (i, n) = rx.recv().await.unwrap();
        per_consumer[i].push(n);
    }
    // Each consumer got exactly every third message, in order.
    for got in &per_consumer {
        assert_eq!(got.len(), 3, "{per_consumer:?}");
        assert!(got.windows(2).all(|w| w[1] == w[0] + 3), "{per_consumer:?}");
    }
    let m = bus.metrics();
    assert_eq!((m.sent, m.delivered, m.refused), (9, 9, 0));
    for c in consumers {
        c.unregister().await;
    }
}

#[tokio::test]
async fn send_without_consumers_fails_with_no_handlers_and_returns_the_body() {
    let bus = EventBus::new();
    let err = bus.send("void", "lost?".to_string()).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::NoHandlers);
    assert_eq!(err.to_string(), "No handlers for address void");
    assert_eq!(err.address(), Some("void"));
    assert_eq!(err.into_body::<String>().unwrap().as_str(), "lost?");
    assert_eq!(bus.metrics().no_handlers, 1);
}

#[tokio::test]
async fn send_of_another_type_is_a_type_mismatch() {
    let bus = EventBus::new();
    let _c = bus.consumer("typed", |_m: Message<u32>| async {});
    let err = bus.send("typed", "text".to_string()).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::TypeMismatch);
    let text = err.to_string();
    assert!(text.contains("u32") && text.contains("String"), "{text}");

    // An `Arc` the sender keeps goes as `Shared` (an `Arc<T>` by value
    // does not compile: the `Shared` rustdoc's compile_fail example).
    let _f = bus.consumer("frozen", |_m: Message<Frozen>| async {});
    bus.send("frozen", Shared(std::sync::Arc::new(Frozen::new("x"))))
        .await
        .unwrap();
    assert_eq!(bus.metrics().type_mismatches, 1);
}

#[tokio::test]
async fn send_picks_the_consumer_of_the_right_type_at_a_mixed_address() {
    let bus = EventBus::new();
    let mut numbers = bus.consumer_stream::<u32>("mixed");
    let mut texts = bus.consumer_stream::<String>("mixed");
    for _ in 0..3 {
        bus.send("mixed", 7u32).await.unwrap();
        bus.send("mixed", "seven".to_string()).await.unwrap();
    }
    for _ in 0..3 {
        assert_eq!(*numbers.recv().await.unwrap().body(), 7);
        assert_eq!(texts.recv().await.unwrap().body(), "seven");
    }
}

#[tokio::test]
async fn a_full_queue_refuses_visibly_and_is_counted() {
    let bus = EventBus::new();
    // A stream nobody polls: its queue of 4 fills up.
    let mut stream =
        bus.consumer_stream_with::<u32>("slow", ConsumerOptions::new().queue_capacity(4));
    for n in 0..4u32 {
        bus.send("slow", n).await.unwrap();
    }
    for n in 4..10u32 {
        let err = bus.send("slow", n).await.unwrap_err();
        assert_eq!(err.kind(), SendErrorKind::QueueFull);
        assert!(
            err.to_string().starts_with("Queue full at address slow"),
            "{err}"
        );
        assert_eq!(
            *err.into_body::<u32>().unwrap(),
            n,
            "the refused body is handed back"
        );
    }
    let m = bus.metrics();
    assert_eq!((m.sent, m.delivered, m.refused), (10, 4, 6));
    assert_eq!(m.sent, m.delivered + m.refused);
    // Nothing was lost: the four accepted ones are there, in order.
    for n in 0..4u32 {
        assert_eq!(*stream.recv().await.unwrap().body(), n);
    }
    // And capacity is back.
    bus.send("slow", 99u32).await.unwrap();
}

#[tokio::test]
async fn a_full_queue_is_skipped_for_the_next_consumer() {
    let bus = EventBus::new();
    let one = ConsumerOptions::new().queue_capacity(1);
    let _a = bus.consumer_stream_with::<u32>("pair", one.clone());
    let _b = bus.consumer_stream_with::<u32>("pair", one);
    bus.send("pair", 1u32).await.unwrap();
    bus.send("pair", 2u32).await.unwrap();
    // Both queues are full now; the third is refused.
    assert_eq!(
        bus.send("pair", 3u32).await.unwrap_err().kind(),
        SendErrorKind::QueueFull
    );
}

#[tokio::test]
async fn messages_from_one_sender_arrive_in_order() {
    let bus = EventBus::new();
    let (tx, mut rx) = channel();
    let _c = bus.consumer_with(
        "ordered",
        ConsumerOptions::new().queue_capacity(10_000),
        move |m: Message<u64>| {
            let tx = tx.clone();
            async move {
                // Yield inside the handler: order must hold regardless.
                tokio::task::yield_now().await;
                tx.send(*m.body()).unwrap();
            }
        },
    );
    for n in 0..5_000u64 {
        bus.send("ordered", n).await.unwrap();
    }
    for n in 0..5_000u64 {
        assert_eq!(rx.recv().await, Some(n));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_senders_keep_their_own_order() {
    let bus = EventBus::new();
    let mut stream = bus.consumer_stream_with::<(u8, u32)>(
        "interleaved",
        ConsumerOptions::new().queue_capacity(8_000),
    );
    let senders: Vec<_> = (0..4u8)
        .map(|s| {
            let bus = bus.clone();
            tokio::spawn(async move {
                for n in 0..2_000u32 {
                    bus.send("interleaved", (s, n)).await.unwrap();
                }
            })
        })
        .collect();
    for s in senders {
        s.await.unwrap();
    }
    let mut next = [0u32; 4];
    for _ in 0..8_000 {
        let m = stream.recv().await.unwrap();
        let (s, n) = *m.body();
        assert_eq!(n, next[s as usize], "sender {s} out of order");
        next[s as usize] += 1;
    }
}

// Paused clock: the sleep below returns once every task is idle, so a
// late delivery would have happened (and no real time passes).
#[tokio::test(start_paused = true)]
async fn nothing_is_delivered_after_unregister() {
    let bus = EventBus::new();
    let (tx, mut rx) = channel();
    let consumer = bus.consumer("gone", move |m: Message<u32>| {
        let tx = tx.clone();
        async move { tx.send(*m.body()).unwrap() }
    });
    bus.send("gone", 1u32).await.unwrap();
    assert_eq!(rx.recv().await, Some(1));
    consumer.unregister().await;
    assert_eq!(
        bus.send("gone", 2u32).await.unwrap_err().kind(),
        SendErrorKind::NoHandlers
    );
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(rx.try_recv().is_err());
}

// Paused clock: the handler's 20 ms take no real time, and the sleep
// below returns once every task is idle, so a discarded message that was
// handled anyway would have been.
#[tokio::test(start_paused = true)]
async fn unregister_waits_for_the_running_handler_and_discards_the_queue() {
    let bus = EventBus::new();
    let (started_tx, mut started) = channel();
    let (tx, mut rx) = channel();
    let consumer = bus.consumer("busy", move |m: Message<u32>| {
        let (started_tx, tx) = (started_tx.clone(), tx.clone());
        async move {
            started_tx.send(()).unwrap();
            tokio::time::sleep(Duration::from_millis(20)).await;
            tx.send(*m.body()).unwrap();
        }
    });
    for n in 0..5u32 {
        bus.send("busy", n).await.unwrap();
    }
    started.recv().await.unwrap();
    consumer.unregister().await;
    // The handler that was running finished before unregister returned...
    assert_eq!(rx.try_recv().ok(), Some(0));
    // ...and the four queued messages were discarded, never handled.
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(rx.try_recv().is_err());
    let m = bus.metrics();
    assert_eq!((m.handled, m.discarded), (1, 4));
}

#[tokio::test]
async fn a_consumer_can_unregister_itself_from_its_handler() {
    let bus = EventBus::new();
    let slot = std::sync::Arc::new(std::sync::Mutex::new(None::<codecbus_bus::MessageConsumer>));
    let (tx, mut rx) = channel();
    let handle_slot = std::sync::Arc::clone(&slot);
    let consumer = bus.consumer("once", move |m: Message<u32>| {
        let (tx, handle_slot) = (tx.clone(), std::sync::Arc::clone(&handle_slot));
        async move {
            tx.send(*m.body()).unwrap();
            let me = handle_slot.lock().unwrap().take();
            if let Some(me) = me {
                me.unregister().await;
            }
        }
    });
    *slot.lock().unwrap() = Some(consumer);
    bus.send("once", 1u32).await.unwrap();
    assert_eq!(rx.recv().await, Some(1));
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(
        bus.send("once", 2u32).await.unwrap_err().kind(),
        SendErrorKind::NoHandlers
    );
}

#[tokio::test]
async fn dropping_the_handle_keeps_the_consumer() {
    let bus = EventBus::new();
    let (tx, mut rx) = channel();
    drop(bus.consumer("kept", move |m: Message<u32>| {
        let tx = tx.clone();
        async move { tx.send(*m.body()).unwrap() }
    }));
    bus.send("kept", 5u32).await.unwrap();
    assert_eq!(rx.recv().await, Some(5));
}
