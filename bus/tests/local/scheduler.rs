//! Where a handler runs, as a user meets it: a request abandoned on a
//! runtime that is then dropped, a consumer whose runtime goes away while
//! a request waits for it, a loop of requests on a current-thread runtime,
//! a panicking interceptor and error text, and the span a handler sees
//! when it starts on the requester's task and when it is queued.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use codecbus_bus::{
    DeliveryContext, DeliveryOptions, EventBus, Message, RequestErrorKind, Verdict,
};
use tokio::runtime::{Builder, Runtime};
use tokio::sync::mpsc;

fn current_thread() -> Runtime {
    Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn multi_thread() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime")
}

/// A consumer at `slow` answering after `delay`, on `rt`.
fn slow_consumer(rt: &Runtime, delay: Duration) -> EventBus {
    rt.block_on(async {
        let bus = EventBus::new();
        let _c = bus.consumer("slow", move |m: Message<u32>| async move {
            tokio::time::sleep(delay).await;
            m.reply(*m.body())
        });
        bus
    })
}

#[test]
fn a_request_given_up_on_a_runtime_that_is_then_dropped_leaves_the_consumer_working() {
    let home = multi_thread();
    let bus = slow_consumer(&home, Duration::from_millis(50));

    // A sync wrapper's way: its own runtime, a short timeout, then the
    // runtime goes. The handler started on this runtime's task.
    let other = current_thread();
    let gave_up = other.block_on(async {
        tokio::time::timeout(Duration::from_millis(1), bus.request::<u32>("slow", 1u32)).await
    });
    assert!(gave_up.is_err(), "the first request should time out");
    drop(other);

    // The consumer's own runtime still has it.
    let reply = home.block_on(async {
        tokio::time::timeout(Duration::from_secs(3), bus.request::<u32>("slow", 2u32)).await
    });
    let reply = reply.expect("the consumer answers again").expect("a reply");
    assert_eq!(*reply.body(), 2);
}

#[test]
fn a_consumer_whose_runtime_is_dropped_fails_the_request_it_was_handling() {
    let home = multi_thread();
    let bus = slow_consumer(&home, Duration::from_secs(30));
    let requester = current_thread();
    let dropper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        drop(home);
    });
    let started = std::time::Instant::now();
    let result = requester.block_on(async {
        let options = DeliveryOptions::new().timeout(Duration::from_secs(20));
        bus.request_with::<u32>("slow", 1u32, options).await
    });
    dropper.join().unwrap();
    let err = result.expect_err("the consumer is gone");
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure, "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the request waited for its timeout instead of failing: {err}"
    );
    // Nobody answers at the address any more.
    let again = requester.block_on(bus.request::<u32>("slow", 2u32));
    assert!(again.is_err());
}

#[test]
fn a_loop_of_requests_answered_at_once_lets_other_tasks_run() {
    let rt = current_thread();
    rt.block_on(async {
        let bus = EventBus::new();
        let _c = bus.consumer("now", |m: Message<u32>| async move { m.reply(*m.body()) });
        let ran = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&ran);
        tokio::spawn(async move { flag.store(true, Ordering::Release) });
        let mut seen_at = None;
        for i in 0..10_000u32 {
            let reply: Message<u32> = bus.request("now", i).await.unwrap();
            assert_eq!(*reply.body(), i);
            if seen_at.is_none() && ran.load(Ordering::Acquire) {
                seen_at = Some(i);
            }
        }
        let seen_at = seen_at.expect("the spawned task never ran during 10 000 requests");
        // A tokio channel loop yields every 128 operations.
        assert!(
            seen_at <= 1_000,
            "the spawned task ran only after {seen_at} requests"
        );
    });
}

#[test]
fn a_loop_of_sends_lets_the_consumer_run() {
    let rt = current_thread();
    rt.block_on(async {
        let bus = EventBus::builder()
            .default_queue_capacity(256)
            .build()
            .unwrap();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let _c = bus.consumer("sink", move |m: Message<u32>| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(*m.body());
            }
        });
        // More than the queue holds: the consumer must run in between.
        for i in 0..10_000u32 {
            bus.send("sink", i).await.unwrap();
        }
        let mut n = 0;
        while n < 10_000 {
            assert_eq!(rx.recv().await, Some(n));
            n += 1;
        }
    });
}

/// An inbound interceptor that panics on messages with a `boom` header.
fn panicky_bus() -> EventBus {
    EventBus::builder()
        .inbound_interceptor(|ctx: &mut DeliveryContext<'_>| {
            if ctx.headers().get("boom").is_some() {
                panic!("interceptor boom");
            }
            Verdict::Continue
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_panicking_inbound_interceptor_fails_the_request_and_the_consumer_goes_on() {
    let bus = panicky_bus();
    let _c = bus.consumer("p", |m: Message<u32>| async move { m.reply(*m.body()) });
    let boom = DeliveryOptions::new().header("boom", "1");
    let err = bus
        .request_with::<u32>("p", 1u32, boom)
        .await
        .expect_err("the interceptor panicked");
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert!(err.to_string().contains("interceptor boom"), "{err}");
    let reply: Message<u32> = tokio::time::timeout(Duration::from_secs(3), bus.request("p", 2u32))
        .await
        .expect("the consumer is not wedged")
        .unwrap();
    assert_eq!(*reply.body(), 2);
}

#[tokio::test]
async fn a_panicking_inbound_interceptor_on_a_queued_message_does_not_end_the_consumer() {
    let bus = panicky_bus();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let _c = bus.consumer("q", move |m: Message<u32>| {
        let tx = tx.clone();
        async move {
            let _ = tx.send(*m.body());
        }
    });
    let boom = DeliveryOptions::new().header("boom", "1");
    bus.send_with("q", 1u32, boom).await.unwrap();
    bus.send("q", 2u32).await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(3), rx.recv())
        .await
        .expect("the consumer's task still runs");
    assert_eq!(got, Some(2));
}

/// An error whose text panics.
struct Unprintable;

impl fmt::Display for Unprintable {
    fn fmt(&self, _f: &mut fmt::Formatter<'_>) -> fmt::Result {
        panic!("no text for this error")
    }
}

#[tokio::test]
async fn an_error_whose_text_panics_fails_the_request_and_the_consumer_goes_on() {
    let bus = EventBus::new();
    let _c = bus.consumer("e", |m: Message<u32>| async move {
        if *m.body() == 0 {
            return Err(Unprintable);
        }
        let _ = m.reply(*m.body());
        Ok(())
    });
    let err = bus.request::<u32>("e", 0u32).await.expect_err("failed");
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert!(err.to_string().contains("no text for this error"), "{err}");
    let reply: Message<u32> = tokio::time::timeout(Duration::from_secs(3), bus.request("e", 5u32))
        .await
        .expect("the consumer is not wedged")
        .unwrap();
    assert_eq!(*reply.body(), 5);
}

/// What a handler saw: the name of its current span and whether it ran on
/// the requester's task.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    span: Option<&'static str>,
    on_requester: bool,
}

/// A consumer at `seen` reporting what its handler sees, registered
/// inside `context` (if any).
fn reporting_consumer(
    bus: &EventBus,
    context: Option<&tracing::Span>,
    requester: tokio::task::Id,
) -> mpsc::UnboundedReceiver<Seen> {
    let (tx, rx) = mpsc::unbounded_channel();
    let register = || {
        let _ = bus.consumer("seen", move |m: Message<u32>| {
            let seen = Seen {
                span: tracing::Span::current().metadata().map(|m| m.name()),
                on_requester: tokio::task::try_id() == Some(requester),
            };
            tx.send(seen).unwrap();
            async move {
                let _ = m.reply(0u32);
            }
        });
    };
    match context {
        Some(span) => span.in_scope(register),
        None => register(),
    }
    rx
}

/// Runs `f` on a current-thread runtime with a `tracing` subscriber that
/// keeps every span (this thread's default).
/// (A task of its own: the handlers compare task ids.)
fn with_subscriber(f: impl std::future::Future<Output = ()> + Send + 'static) {
    let subscriber = tracing_subscriber::registry();
    let _default = tracing::subscriber::set_default(subscriber);
    current_thread().block_on(async { tokio::spawn(f).await.expect("the test task") });
}

#[test]
fn a_handler_started_on_the_requesters_task_does_not_see_its_span() {
    with_subscriber(async {
        let bus = EventBus::new();
        let me = tokio::task::id();
        let mut seen = reporting_consumer(&bus, None, me);

        // Outside any span: the request starts the handler here.
        let _: Message<u32> = bus.request("seen", 1u32).await.unwrap();
        let inline = seen.recv().await.unwrap();
        assert_eq!(
            inline,
            Seen {
                span: None,
                on_requester: true
            }
        );
        // Queued: the consumer's task, in the consumer's context.
        bus.send("seen", 2u32).await.unwrap();
        let queued = seen.recv().await.unwrap();
        assert_eq!(
            queued,
            Seen {
                span: None,
                on_requester: false
            }
        );

        // Inside the requester's span the handler still sees the
        // consumer's context, not the requester's.
        let requester = tracing::info_span!("requester");
        let _: Message<u32> =
            tracing::Instrument::instrument(bus.request::<u32>("seen", 3u32), requester.clone())
                .await
                .unwrap();
        assert_eq!(seen.recv().await.unwrap().span, None);
    });
}

#[test]
fn a_handler_sees_the_span_its_consumer_was_registered_in_inline_or_queued() {
    with_subscriber(async {
        let bus = EventBus::new();
        let me = tokio::task::id();
        let context = tracing::info_span!("consumer_context");
        let mut seen = reporting_consumer(&bus, Some(&context), me);

        // From inside the same span a request may start the handler here.
        let _: Message<u32> =
            tracing::Instrument::instrument(bus.request::<u32>("seen", 1u32), context.clone())
                .await
                .unwrap();
        let inline = seen.recv().await.unwrap();
        assert_eq!(
            inline,
            Seen {
                span: Some("consumer_context"),
                on_requester: true
            }
        );
        // From outside it, or queued, the handler is in it as well.
        let _: Message<u32> = bus.request("seen", 2u32).await.unwrap();
        assert_eq!(seen.recv().await.unwrap().span, Some("consumer_context"));
        bus.send("seen", 3u32).await.unwrap();
        assert_eq!(seen.recv().await.unwrap().span, Some("consumer_context"));
    });
}

#[test]
fn a_traced_handler_runs_in_its_span_whether_started_inline_or_queued() {
    with_subscriber(async {
        let bus = EventBus::builder().traces(true).build().unwrap();
        let me = tokio::task::id();
        let mut seen = reporting_consumer(&bus, None, me);

        let _: Message<u32> = bus.request("seen", 1u32).await.unwrap();
        let inline = seen.recv().await.unwrap();
        // Traces on no longer move the handler off the requester's task.
        assert_eq!(
            inline,
            Seen {
                span: Some("handle"),
                on_requester: true
            }
        );
        bus.send("seen", 2u32).await.unwrap();
        let queued = seen.recv().await.unwrap();
        assert_eq!(
            queued,
            Seen {
                span: Some("handle"),
                on_requester: false
            }
        );
    });
}

#[test]
fn a_handler_started_inline_spawns_onto_its_consumers_runtime() {
    let home = multi_thread();
    let (flavors, mut seen) = mpsc::unbounded_channel();
    let bus = home.block_on(async {
        let bus = EventBus::new();
        let _c = bus.consumer("spawner", move |m: Message<u32>| {
            // The handler's first step: the runtime it sees, and a task
            // spawned here, are the consumer's, not the requester's.
            flavors
                .send(tokio::runtime::Handle::current().runtime_flavor())
                .unwrap();
            let child = tokio::spawn(async { 7u32 });
            async move {
                let n = child.await.unwrap();
                m.reply(n)
            }
        });
        bus
    });
    let other = current_thread();
    let reply = other.block_on(async {
        tokio::time::timeout(Duration::from_secs(3), bus.request::<u32>("spawner", 1u32)).await
    });
    drop(other);
    assert_eq!(*reply.expect("answered").unwrap().body(), 7);
    assert_eq!(
        seen.try_recv(),
        Ok(tokio::runtime::RuntimeFlavor::MultiThread)
    );
    // And once the requester's runtime is gone, the consumer still works.
    let reply = home.block_on(bus.request::<u32>("spawner", 2u32)).unwrap();
    assert_eq!(*reply.body(), 7);
}
