//! Many concurrent requests on a multi-thread runtime: every one answered
//! exactly once, nothing lost.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use codecbus_bus::{EventBus, Message};

const TASKS: u64 = 8;
const PER_TASK: u64 = 12_500; // 100,000 in all
const CONSUMERS: usize = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hundred_thousand_requests_from_eight_tasks_to_four_consumers() {
    let bus = EventBus::new();
    let handled = Arc::new(AtomicU64::new(0));
    let per_consumer: Vec<Arc<AtomicU64>> = (0..CONSUMERS).map(|_| Arc::default()).collect();
    let consumers: Vec<_> = per_consumer
        .iter()
        .map(|count| {
            let (count, handled) = (Arc::clone(count), Arc::clone(&handled));
            bus.consumer("stress", move |m: Message<u64>| {
                count.fetch_add(1, Ordering::Relaxed);
                handled.fetch_add(1, Ordering::Relaxed);
                async move { m.reply(*m.body()) }
            })
        })
        .collect();

    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let bus = bus.clone();
            tokio::spawn(async move {
                let mut answered = Vec::with_capacity(PER_TASK as usize);
                for i in 0..PER_TASK {
                    let id = t * PER_TASK + i;
                    let reply: Message<u64> = bus.request("stress", id).await.unwrap();
                    assert_eq!(*reply.body(), id, "each reply answers its own request");
                    answered.push(id);
                }
                answered
            })
        })
        .collect();
    let mut all = HashSet::new();
    for task in tasks {
        for id in task.await.unwrap() {
            assert!(all.insert(id), "request {id} answered twice");
        }
    }
    assert_eq!(all.len() as u64, TASKS * PER_TASK);
    assert_eq!(
        handled.load(Ordering::Relaxed),
        TASKS * PER_TASK,
        "every request handled exactly once"
    );
    for count in &per_consumer {
        assert!(
            count.load(Ordering::Relaxed) > 0,
            "round-robin reached every consumer"
        );
    }
    let m = bus.metrics();
    assert_eq!(m.sent, TASKS * PER_TASK);
    assert_eq!((m.delivered, m.replies, m.refused), (m.sent, m.sent, 0));
    for c in consumers {
        c.unregister().await;
    }
}
