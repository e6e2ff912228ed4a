//! Shutting a bus down: queued messages handled before `shutdown` returns,
//! a deadline that cuts a slow handler short and says what was lost, and a
//! bus whose last handle is dropped leaving no task (and, clustered, no
//! connection) behind.

#[cfg(feature = "nats")]
use crate::common;
#[cfg(feature = "nats")]
use crate::harness;

use std::time::{Duration, Instant};

use codecbus_bus::{DeliveryOptions, EventBus, Message, RequestErrorKind};
use tokio::sync::mpsc;

#[tokio::test]
async fn shutdown_handles_what_is_queued_then_joins_the_consumers() {
    let bus = EventBus::new();
    let (tx, mut rx) = mpsc::unbounded_channel();
    for address in ["a", "b"] {
        let tx = tx.clone();
        let _ = bus.consumer(address, move |m: Message<u32>| {
            let tx = tx.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                tx.send(*m.body()).unwrap();
            }
        });
    }
    drop(tx);
    for n in 0..10u32 {
        bus.send(if n % 2 == 0 { "a" } else { "b" }, n)
            .await
            .unwrap();
    }
    bus.shutdown(Duration::from_secs(10)).await.unwrap();
    let mut got = Vec::new();
    while let Ok(n) = rx.try_recv() {
        got.push(n);
    }
    got.sort_unstable();
    assert_eq!(got, (0..10).collect::<Vec<_>>());
    // The consumers' tasks ended: their handlers (holding the sender) are
    // dropped, so the channel is closed.
    assert!(rx.recv().await.is_none());
    assert!(bus.send("a", 1u32).await.is_err());
}

#[tokio::test]
async fn a_deadline_stops_a_slow_handler_and_reports_what_was_lost() {
    let bus = EventBus::new();
    let _slow = bus.consumer("slow", |m: Message<u32>| async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        m.reply(0u32)
    });
    // One request being handled, two more queued behind it.
    let long = DeliveryOptions::new().timeout(Duration::from_secs(60));
    let requests: Vec<_> = (0..3u32)
        .map(|n| {
            let bus = bus.clone();
            let long = long.clone();
            tokio::spawn(async move { bus.request_with::<u32>("slow", n, long).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = Instant::now();
    let err = bus
        .shutdown(Duration::from_millis(200))
        .await
        .expect_err("the handler cannot finish in time");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(err.stopped(), ["slow".to_owned()]);
    assert_eq!(err.discarded(), 2, "{err}");
    for request in requests {
        let failed = request.await.unwrap().expect_err("nobody answers");
        assert_eq!(
            failed.kind(),
            RequestErrorKind::RecipientFailure,
            "{failed}"
        );
    }
}

/// Waits (at most 5 s) until the runtime has at most `tasks` alive.
async fn settle_to(tasks: usize) -> usize {
    let metrics = tokio::runtime::Handle::current().metrics();
    let deadline = Instant::now() + Duration::from_secs(5);
    while metrics.num_alive_tasks() > tasks && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    metrics.num_alive_tasks()
}

#[tokio::test]
async fn dropping_the_last_handle_leaves_no_task_behind() {
    let before = settle_to(0).await;
    let bus = EventBus::new();
    for address in ["a", "b", "c"] {
        let _ = bus.consumer(address, |m: Message<u32>| async move {
            tokio::time::sleep(Duration::from_millis(1)).await;
            m.reply(*m.body())
        });
    }
    let _: Message<u32> = bus.request("a", 1u32).await.unwrap();
    bus.send("b", 2u32).await.unwrap();
    assert!(
        tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks()
            >= before + 3
    );
    drop(bus);
    assert_eq!(
        settle_to(before).await,
        before,
        "consumer tasks outlived the bus"
    );
}

#[cfg(feature = "nats")]
#[tokio::test]
async fn dropping_the_last_handle_of_a_clustered_bus_closes_its_connection() {
    let config = harness::Config {
        monitor: true,
        ..harness::Config::default()
    };
    let server =
        harness::NatsServer::for_test_with("dropping_the_last_handle_of_a_clustered_bus", &config);
    let before = settle_to(0).await;
    let bus = common::nats_node(&server.url()).await;
    let _ = bus.consumer("echo", |m: Message<u32>| async move { m.reply(*m.body()) });
    bus.flush().await.unwrap();
    let _: Message<u32> = bus.request("echo", 1u32).await.unwrap();
    assert_eq!(server.connections().len(), 1);
    drop(bus);
    common::eventually("the server sees no connection", || {
        server.connections().is_empty()
    })
    .await;
    assert_eq!(settle_to(before).await, before, "tasks outlived the bus");
}
