//! Load and fault scenarios for the in-process bus, shared by the short
//! forms in `tests/soak.rs` and the sized runs of `examples/soak.rs`.
//!
//! Each scenario runs to completion by itself (bounded counts, no
//! open-ended loops), checks its own books, and returns what it counted;
//! a broken invariant is an `Err` naming it.

#![allow(dead_code, unreachable_pub)]

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use codecbus::MessageCodec;
use codecbus::bus::{
    ConsumerOptions, DeliveryOptions, EventBus, Message, PublishErrorKind, RequestErrorKind,
    SendErrorKind,
};

/// One message of a soak run.
#[derive(MessageCodec, Clone, Debug)]
#[codec(name = "soak.tick")]
pub struct Tick {
    pub producer: u32,
    pub seq: u64,
}

/// A failed check, with what was seen.
pub type Check = Result<(), String>;

fn ensure(ok: bool, what: impl FnOnce() -> String) -> Check {
    if ok { Ok(()) } else { Err(what()) }
}

/// What the mixed scenario counted.
#[derive(Debug, Default)]
pub struct MixedReport {
    pub messages: u64,
    pub sends_ok: u64,
    pub sends_refused: u64,
    pub publish_deliveries: u64,
    pub publish_refusals: u64,
    pub requests_replied: u64,
    pub requests_refused: u64,
    pub requests_other: u64,
    pub received: u64,
}

#[derive(Default)]
struct Seen {
    // (producer, seq) of sends and requests, over all consumers
    once: HashSet<(u32, u64)>,
    // (consumer, producer, seq) of publishes
    per_consumer: HashSet<(usize, u32, u64)>,
    duplicates: u64,
}

/// `messages` mixed sends, publishes and requests from `producers` tasks to
/// `consumers` consumers: none lost, none duplicated, every request ends
/// exactly once, and `offered == delivered + refused` for each kind.
pub async fn mixed(messages: u64, producers: u32, consumers: usize) -> Result<MixedReport, String> {
    let bus = EventBus::new();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let received = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();
    for c in 0..consumers {
        let seen = Arc::clone(&seen);
        let received = Arc::clone(&received);
        handles.push(bus.consumer("soak", move |m: Message<Tick>| {
            let seen = Arc::clone(&seen);
            let received = Arc::clone(&received);
            async move {
                let t = m.body();
                received.fetch_add(1, Ordering::Relaxed);
                let mut s = seen.lock().expect("seen");
                let fresh = if m.is_send() || m.expects_reply() {
                    s.once.insert((t.producer, t.seq))
                } else {
                    s.per_consumer.insert((c, t.producer, t.seq))
                };
                if !fresh {
                    s.duplicates += 1;
                }
                drop(s);
                if m.expects_reply() {
                    // A requester that gave up is counted on its side.
                    let _ = m.reply(t.seq);
                }
            }
        }));
    }

    let per_producer = messages / u64::from(producers);
    let mut tasks = Vec::new();
    for p in 0..producers {
        let bus = bus.clone();
        tasks.push(tokio::spawn(async move {
            let mut r = MixedReport::default();
            for i in 0..per_producer {
                let tick = Tick {
                    producer: p,
                    seq: i,
                };
                match i % 3 {
                    0 => match bus.send("soak", tick).await {
                        Ok(()) => r.sends_ok += 1,
                        Err(e) if e.kind() == SendErrorKind::QueueFull => r.sends_refused += 1,
                        Err(e) => return Err(format!("send failed: {e}")),
                    },
                    1 => match bus.publish("soak", tick).await {
                        Ok(report) => {
                            r.publish_deliveries += report.delivered() as u64;
                            r.publish_refusals += report.refused() as u64;
                        }
                        // Refused by every consumer.
                        Err(e) if e.kind() == PublishErrorKind::QueueFull => {
                            r.publish_refusals += consumers as u64;
                        }
                        Err(e) => return Err(format!("publish failed: {e}")),
                    },
                    _ => match bus.request::<u64>("soak", tick).await {
                        Ok(reply) if *reply.body() == i => r.requests_replied += 1,
                        Ok(reply) => return Err(format!("reply {} to request {i}", reply.body())),
                        Err(e) if e.kind() == RequestErrorKind::QueueFull => {
                            r.requests_refused += 1
                        }
                        Err(_) => r.requests_other += 1,
                    },
                }
                r.messages += 1;
                if i.is_multiple_of(64) {
                    tokio::task::yield_now().await;
                }
            }
            Ok(r)
        }));
    }
    let mut total = MixedReport::default();
    for t in tasks {
        let r = t.await.map_err(|e| format!("producer panicked: {e}"))??;
        total.messages += r.messages;
        total.sends_ok += r.sends_ok;
        total.sends_refused += r.sends_refused;
        total.publish_deliveries += r.publish_deliveries;
        total.publish_refusals += r.publish_refusals;
        total.requests_replied += r.requests_replied;
        total.requests_refused += r.requests_refused;
        total.requests_other += r.requests_other;
    }
    // Everything accepted is in a queue: wait until the consumers drained.
    let expected = total.sends_ok + total.publish_deliveries + total.requests_replied;
    for _ in 0..10_000 {
        if received.load(Ordering::Relaxed) >= expected {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    for h in handles {
        h.unregister().await;
    }
    total.received = received.load(Ordering::Relaxed);
    let s = seen.lock().expect("seen");
    let metrics = bus.metrics();

    ensure(s.duplicates == 0, || {
        format!("{} duplicated deliveries", s.duplicates)
    })?;
    ensure(total.received == expected, || {
        format!(
            "lost messages: {} accepted, {} received",
            expected, total.received
        )
    })?;
    ensure(total.requests_other == 0, || {
        format!("{} requests failed otherwise", total.requests_other)
    })?;
    let requests = total.requests_replied + total.requests_refused + total.requests_other;
    ensure(
        requests == (0..per_producer).filter(|i| i % 3 == 2).count() as u64 * u64::from(producers),
        || format!("{requests} requests ended, expected one end each"),
    )?;
    ensure(
        total.messages == per_producer * u64::from(producers),
        || "messages not all offered".into(),
    )?;
    // the bus's own books agree with the producers' and consumers'
    ensure(metrics.delivered == expected, || {
        format!("bus delivered {} != {expected}", metrics.delivered)
    })?;
    let refused = total.sends_refused + total.publish_refusals + total.requests_refused;
    ensure(metrics.refused == refused, || {
        format!("bus refused {} != {refused}", metrics.refused)
    })?;
    Ok(total)
}

/// `messages` sends from one sender to one consumer arrive in order (the
/// sender retries a refused message before sending the next one).
pub async fn ordered(messages: u64) -> Result<u64, String> {
    let bus = EventBus::new();
    let next = Arc::new(AtomicU64::new(0));
    let out_of_order = Arc::new(AtomicU64::new(0));
    let consumer = {
        let (next, out_of_order) = (Arc::clone(&next), Arc::clone(&out_of_order));
        bus.consumer("ordered", move |m: Message<Tick>| {
            let (next, out_of_order) = (Arc::clone(&next), Arc::clone(&out_of_order));
            async move {
                if next.fetch_add(1, Ordering::Relaxed) != m.body().seq {
                    out_of_order.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    let mut retries = 0;
    for seq in 0..messages {
        loop {
            match bus.send("ordered", Tick { producer: 0, seq }).await {
                Ok(()) => break,
                Err(e) if e.kind() == SendErrorKind::QueueFull => {
                    retries += 1;
                    tokio::task::yield_now().await;
                }
                Err(e) => return Err(format!("send {seq}: {e}")),
            }
        }
    }
    while next.load(Ordering::Relaxed) < messages {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    consumer.unregister().await;
    ensure(out_of_order.load(Ordering::Relaxed) == 0, || {
        format!(
            "{} messages out of order",
            out_of_order.load(Ordering::Relaxed)
        )
    })?;
    Ok(retries)
}

/// A paused consumer with the default queue offered `messages` sends: the
/// queue takes its capacity, every other message is refused and counted.
/// Returns (accepted, refused).
pub async fn paused(messages: u64) -> Result<(u64, u64), String> {
    let bus = EventBus::new();
    let consumer = bus.consumer("paused", |_m: Message<Tick>| async {});
    consumer.pause();
    let (mut accepted, mut refused) = (0u64, 0u64);
    for seq in 0..messages {
        match bus.send("paused", Tick { producer: 0, seq }).await {
            Ok(()) => accepted += 1,
            Err(e) if e.kind() == SendErrorKind::QueueFull => refused += 1,
            Err(e) => return Err(format!("send {seq}: {e}")),
        }
    }
    let metrics = bus.metrics();
    consumer.unregister().await;
    let capacity = codecbus::bus::DEFAULT_QUEUE_CAPACITY as u64;
    ensure(accepted == capacity.min(messages), || {
        format!("{accepted} accepted, queue holds {capacity}")
    })?;
    ensure(refused == messages - accepted, || {
        format!("{refused} refused of {messages}")
    })?;
    ensure(metrics.refused == refused, || {
        format!("bus counted {} refusals", metrics.refused)
    })?;
    Ok((accepted, refused))
}

/// A handler that panics on every 10th message: each of those requests
/// fails with `RecipientFailure` within 100 ms — the requests carry a
/// 100 ms timeout, so a failure that came later would be a `Timeout` — the
/// rest are answered; afterwards `after` more requests all succeed. Returns
/// the number of failures seen.
pub async fn panicking(requests: u64, after: u64) -> Result<u64, String> {
    // The default panic hook with RUST_BACKTRACE=1 symbolizes a backtrace
    // for every panic (hundreds of milliseconds for the first one): that is
    // the hook's time, not the bus's. Print one line instead while this
    // runs.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| eprintln!("handler panic: {info}")));
    let result = panicking_inner(requests, after).await;
    std::panic::set_hook(default_hook);
    result
}

async fn panicking_inner(requests: u64, after: u64) -> Result<u64, String> {
    let bus = EventBus::new();
    let calm = Arc::new(AtomicBool::new(false));
    let consumer = {
        let calm = Arc::clone(&calm);
        bus.consumer("fragile", move |m: Message<Tick>| {
            let calm = Arc::clone(&calm);
            async move {
                assert!(
                    calm.load(Ordering::Relaxed) || !m.body().seq.is_multiple_of(10),
                    "every 10th message panics"
                );
                m.reply(m.body().seq)
            }
        })
    };
    let options = DeliveryOptions::new().timeout(Duration::from_millis(100));
    let mut failures = 0;
    for seq in 0..requests {
        let result = bus
            .request_with::<u64>("fragile", Tick { producer: 0, seq }, options.clone())
            .await;
        match result {
            Ok(r) => ensure(!seq.is_multiple_of(10) && *r.body() == seq, || {
                format!("request {seq} answered")
            })?,
            Err(e) => {
                ensure(
                    seq.is_multiple_of(10) && e.kind() == RequestErrorKind::RecipientFailure,
                    || format!("request {seq}: {e}"),
                )?;
                failures += 1;
            }
        }
    }
    calm.store(true, Ordering::Relaxed);
    for seq in 0..after {
        bus.request::<u64>("fragile", Tick { producer: 1, seq })
            .await
            .map_err(|e| format!("request {seq} after the panics: {e}"))?;
    }
    let panics = bus.metrics().panics;
    consumer.unregister().await;
    ensure(panics == failures, || {
        format!("bus counted {panics} panics, requesters saw {failures}")
    })?;
    Ok(failures)
}

/// Transient consumers registered and unregistered while `messages`
/// publishes flow: none of them gets a message after its `unregister()`
/// returned, and a consumer that stays gets every message. Returns the
/// number of transient consumers that came and went.
pub async fn churn(messages: u64) -> Result<u64, String> {
    let bus = EventBus::new();
    let stable_seen = Arc::new(AtomicU64::new(0));
    let stable = {
        let seen = Arc::clone(&stable_seen);
        bus.consumer_with(
            "churn",
            ConsumerOptions::new().queue_capacity(messages as usize + 1),
            move |_m: Message<Tick>| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.fetch_add(1, Ordering::Relaxed);
                }
            },
        )
    };
    let late = Arc::new(AtomicU64::new(0));
    let publisher = {
        let bus = bus.clone();
        tokio::spawn(async move {
            for seq in 0..messages {
                match bus.publish("churn", Tick { producer: 0, seq }).await {
                    // a transient consumer's queue may be full (reported in the
                    // Ok value); the stable one has room
                    Ok(_) => {}
                    Err(e) if e.kind() == PublishErrorKind::QueueFull => {}
                    Err(e) => return Err(format!("publish {seq}: {e}")),
                }
                if seq.is_multiple_of(16) {
                    tokio::task::yield_now().await;
                }
            }
            Ok(())
        })
    };
    let mut cycles = 0;
    while !publisher.is_finished() {
        let gone = Arc::new(AtomicBool::new(false));
        let c = {
            let (gone, late) = (Arc::clone(&gone), Arc::clone(&late));
            bus.consumer_with(
                "churn",
                ConsumerOptions::new().queue_capacity(64),
                move |_m: Message<Tick>| {
                    let (gone, late) = (Arc::clone(&gone), Arc::clone(&late));
                    async move {
                        if gone.load(Ordering::SeqCst) {
                            late.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                },
            )
        };
        tokio::task::yield_now().await;
        c.unregister().await;
        gone.store(true, Ordering::SeqCst);
        cycles += 1;
        tokio::task::yield_now().await;
    }
    publisher
        .await
        .map_err(|e| format!("publisher panicked: {e}"))??;
    while stable_seen.load(Ordering::Relaxed) < messages {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    stable.unregister().await;
    ensure(late.load(Ordering::Relaxed) == 0, || {
        format!(
            "{} messages delivered after unregister() returned",
            late.load(Ordering::Relaxed)
        )
    })?;
    ensure(stable_seen.load(Ordering::Relaxed) == messages, || {
        "the stable consumer missed messages".into()
    })?;
    Ok(cycles)
}
