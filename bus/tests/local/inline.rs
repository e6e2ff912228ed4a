//! A request to an idle local consumer starts its handler on the
//! requester's task, and a message from the cluster to the one consumer of
//! its address starts it on the task that received it; everything a
//! consumer promises still holds: one run at a time, queue order, pause,
//! unregister, failures.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use codecbus_bus::{
    ConsumerOptions, DeliveryOptions, EventBus, InMemoryCluster, Message, RequestErrorKind,
};

/// Counts the runs going on at once, and the most ever seen.
#[derive(Default)]
struct Overlap {
    now: AtomicUsize,
    most: AtomicUsize,
}

impl Overlap {
    fn enter(&self) {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
    }

    fn leave(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_request_to_an_idle_consumer_starts_its_handler_on_the_requesters_task() {
    let bus = EventBus::new();
    let _c = bus.consumer("where", |m: Message<u8>| async move {
        m.reply(tokio::task::try_id().map(|id| id.to_string()))
    });
    let requester = tokio::spawn({
        let bus = bus.clone();
        async move {
            let reply = bus.request::<Option<String>>("where", 1u8).await.unwrap();
            (tokio::task::id().to_string(), reply.body().clone())
        }
    });
    let (requester, handler) = requester.await.unwrap();
    assert_eq!(Some(requester), handler);
}

#[tokio::test]
async fn a_send_queued_before_a_request_is_handled_first() {
    let bus = EventBus::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let _c = bus.consumer("order", {
        let seen = Arc::clone(&seen);
        move |m: Message<u32>| {
            seen.lock().unwrap().push(*m.body());
            async move { m.reply(*m.body()) }
        }
    });
    for n in 1..=5u32 {
        bus.send("order", n).await.unwrap();
    }
    // The five sends wait in the queue: the request must not overtake them.
    let reply = bus.request::<u32>("order", 6u32).await.unwrap();
    assert_eq!(*reply.body(), 6);
    assert_eq!(*seen.lock().unwrap(), [1, 2, 3, 4, 5, 6]);
}

#[tokio::test]
async fn a_handler_that_waits_is_finished_and_the_consumer_takes_nothing_meanwhile() {
    let bus = EventBus::new();
    let overlap = Arc::new(Overlap::default());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let _c = bus.consumer("slow", {
        let (overlap, seen) = (Arc::clone(&overlap), Arc::clone(&seen));
        move |m: Message<u32>| {
            let (overlap, seen) = (Arc::clone(&overlap), Arc::clone(&seen));
            async move {
                overlap.enter();
                tokio::time::sleep(Duration::from_millis(20)).await;
                seen.lock().unwrap().push(*m.body());
                overlap.leave();
                m.reply(*m.body())
            }
        }
    });
    // Started here, then waiting in its sleep: finished by a task of its own.
    let first = tokio::spawn({
        let bus = bus.clone();
        async move { bus.request::<u32>("slow", 1u32).await.map(|m| *m.body()) }
    });
    tokio::time::sleep(Duration::from_millis(5)).await;
    // Busy: these go to the queue and wait for the first run to end.
    bus.send("slow", 2u32).await.unwrap();
    let third = bus.request::<u32>("slow", 3u32).await.unwrap();
    assert_eq!(first.await.unwrap().unwrap(), 1);
    assert_eq!(*third.body(), 3);
    assert_eq!(*seen.lock().unwrap(), [1, 2, 3]);
    assert_eq!(overlap.most.load(Ordering::SeqCst), 1, "one run at a time");
}

// Paused clock: the sleep returns once every task is idle, so a run that
// would start has started (and no real time passes).
#[tokio::test(start_paused = true)]
async fn a_paused_consumer_runs_nothing_until_it_resumes() {
    let bus = EventBus::new();
    let runs = Arc::new(AtomicUsize::new(0));
    let c = bus.consumer("paused", {
        let runs = Arc::clone(&runs);
        move |m: Message<u8>| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move { m.reply(*m.body()) }
        }
    });
    c.pause();
    let waiting = tokio::spawn({
        let bus = bus.clone();
        async move { bus.request::<u8>("paused", 7u8).await.map(|m| *m.body()) }
    });
    // Within the request's 30 s timeout.
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(runs.load(Ordering::SeqCst), 0, "queued, not run");
    c.resume();
    assert_eq!(waiting.await.unwrap().unwrap(), 7);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn failures_and_panics_of_a_handler_started_here_fail_the_request() {
    let bus = EventBus::new();
    let _c = bus.consumer("fails", |m: Message<u8>| async move {
        match *m.body() {
            0 => Err("zero is not allowed"),
            1 => panic!("one is worse"),
            n => m.reply(n).map_err(|_| "no reply"),
        }
    });
    let err = bus.request::<u8>("fails", 0u8).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert!(err.to_string().contains("zero is not allowed"), "{err}");
    let err = bus.request::<u8>("fails", 1u8).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert!(err.to_string().contains("one is worse"), "{err}");
    // The consumer keeps running, and the bus counted both.
    assert_eq!(*bus.request::<u8>("fails", 2u8).await.unwrap().body(), 2);
    let metrics = bus.metrics();
    assert_eq!(metrics.panics, 1);
    assert_eq!(metrics.recipient_failures, 2);
    assert_eq!(metrics.handled, 3);
}

#[tokio::test]
async fn a_handler_that_drops_its_message_fails_the_request_at_once() {
    let bus = EventBus::new();
    let _c = bus.consumer("drops", |_m: Message<u8>| async {});
    let options = DeliveryOptions::new().timeout(Duration::from_secs(30));
    let start = std::time::Instant::now();
    let err = bus
        .request_with::<u8>("drops", 1u8, options)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert!(start.elapsed() < Duration::from_secs(5), "not the timeout");
}

#[tokio::test]
async fn unregister_from_a_handler_started_here_returns() {
    let bus = EventBus::new();
    let handle = Arc::new(Mutex::new(None));
    let c = bus.consumer("once", {
        let handle = Arc::clone(&handle);
        move |m: Message<u8>| {
            let handle = Arc::clone(&handle);
            async move {
                let consumer: Option<codecbus_bus::MessageConsumer> = handle.lock().unwrap().take();
                if let Some(consumer) = consumer {
                    consumer.unregister().await;
                }
                m.reply(*m.body())
            }
        }
    });
    *handle.lock().unwrap() = Some(c);
    let reply = tokio::time::timeout(Duration::from_secs(5), bus.request::<u8>("once", 1u8))
        .await
        .expect("no deadlock")
        .unwrap();
    assert_eq!(*reply.body(), 1);
    let err = bus.request::<u8>("once", 2u8).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::NoHandlers);
}

#[tokio::test]
async fn unregister_waits_for_a_run_started_on_a_requesters_task() {
    let bus = EventBus::new();
    let done = Arc::new(AtomicBool::new(false));
    let c = bus.consumer("long", {
        let done = Arc::clone(&done);
        move |m: Message<u8>| {
            let done = Arc::clone(&done);
            async move {
                tokio::time::sleep(Duration::from_millis(40)).await;
                done.store(true, Ordering::SeqCst);
                m.reply(*m.body())
            }
        }
    });
    let request = tokio::spawn({
        let bus = bus.clone();
        async move { bus.request::<u8>("long", 1u8).await.map(|m| *m.body()) }
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    c.unregister().await;
    assert!(
        done.load(Ordering::SeqCst),
        "the handler is not running any more"
    );
    assert_eq!(request.await.unwrap().unwrap(), 1);
}

#[tokio::test]
async fn a_chain_of_requests_deeper_than_the_nesting_bound_is_answered() {
    const DEPTH: u32 = 40;
    let bus = EventBus::new();
    let mut consumers = Vec::new();
    for i in 0..DEPTH {
        let next = bus.clone();
        consumers.push(bus.consumer(&format!("chain.{i}"), move |m: Message<u32>| {
            let next = next.clone();
            async move {
                let n = *m.body();
                let answer = if i + 1 == DEPTH {
                    n
                } else {
                    *next
                        .request::<u32>(&format!("chain.{}", i + 1), n + 1)
                        .await
                        .unwrap()
                        .body()
                };
                m.reply(answer)
            }
        }));
    }
    let reply = bus.request::<u32>("chain.0", 0u32).await.unwrap();
    assert_eq!(*reply.body(), DEPTH - 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_and_sends_from_many_tasks_run_one_at_a_time() {
    const TASKS: usize = 8;
    const EACH: usize = 300;
    let bus = EventBus::new();
    let overlap = Arc::new(Overlap::default());
    let handled = Arc::new(AtomicUsize::new(0));
    let _c = bus.consumer_with("busy", ConsumerOptions::new().queue_capacity(10_000), {
        let (overlap, handled) = (Arc::clone(&overlap), Arc::clone(&handled));
        move |m: Message<usize>| {
            let (overlap, handled) = (Arc::clone(&overlap), Arc::clone(&handled));
            async move {
                overlap.enter();
                if m.body().is_multiple_of(7) {
                    tokio::task::yield_now().await;
                }
                handled.fetch_add(1, Ordering::SeqCst);
                overlap.leave();
                let _ = m.reply(*m.body());
            }
        }
    });
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let bus = bus.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..EACH {
                let n = t * EACH + i;
                if n.is_multiple_of(3) {
                    bus.send("busy", n).await.unwrap();
                } else {
                    let reply = bus.request::<usize>("busy", n).await.unwrap();
                    assert_eq!(*reply.body(), n);
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    tokio::time::timeout(Duration::from_secs(10), async {
        while handled.load(Ordering::SeqCst) < TASKS * EACH {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("every message handled");
    assert_eq!(overlap.most.load(Ordering::SeqCst), 1, "one run at a time");
}

#[tokio::test]
async fn messages_from_the_cluster_keep_their_order_and_run_one_at_a_time() {
    const N: u32 = 200;
    let cluster = InMemoryCluster::new();
    let node = || {
        EventBus::builder()
            .in_memory_cluster(&cluster)
            .build()
            .expect("a node")
    };
    let (a, b) = (node(), node());
    let overlap = Arc::new(Overlap::default());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let _c = b.consumer_with("remote", ConsumerOptions::new().queue_capacity(1_000), {
        let (overlap, seen) = (Arc::clone(&overlap), Arc::clone(&seen));
        move |m: Message<u32>| {
            let (overlap, seen) = (Arc::clone(&overlap), Arc::clone(&seen));
            async move {
                overlap.enter();
                // Some runs wait, so later messages find the consumer busy
                // and queue behind them.
                if m.body().is_multiple_of(5) {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                seen.lock().unwrap().push(*m.body());
                overlap.leave();
                let _ = m.reply(*m.body());
            }
        }
    });
    for n in 0..N {
        if n.is_multiple_of(2) {
            a.send("remote", n).await.unwrap();
        } else {
            a.publish("remote", n).await.unwrap();
        }
    }
    assert_eq!(*a.request::<u32>("remote", N).await.unwrap().body(), N);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, (0..=N).collect::<Vec<_>>(), "in the order sent");
    assert_eq!(overlap.most.load(Ordering::SeqCst), 1, "one run at a time");
}
