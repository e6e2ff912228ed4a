//! Mistakes and what the bus says of them: a bus that was shut down, a
//! failure code the wire reserves, a handler mixing `fail` with errors of
//! its own, and interceptors that panic (caught on both sides, the message
//! dropped).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use codecbus_bus::{
    DeliveryContext, DeliveryKind, EventBus, Message, PublishErrorKind, ReplyErrorKind,
    RequestErrorKind, SendErrorKind, Verdict,
};

#[tokio::test]
async fn after_a_shutdown_a_message_to_nobody_says_the_bus_is_shut_down() {
    let bus = EventBus::new();
    let _c = bus.consumer("jobs", |m: Message<u32>| async move { m.reply(*m.body()) });
    // Before: an address without a consumer is just that.
    let err = bus.send("nowhere", 1u32).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::NoHandlers);

    bus.shutdown(Duration::from_secs(5)).await.unwrap();

    let err = bus.send("jobs", 1u32).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::ShutDown);
    assert_eq!(
        err.to_string(),
        "The event bus is shut down: no consumer at address jobs"
    );
    assert_eq!(err.kind().as_str(), "SHUT_DOWN");
    // The body comes back, as for any message refused before delivery.
    assert_eq!(err.into_body::<u32>().as_deref(), Some(&1));
    let err = bus.publish("jobs", 2u32).await.unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::ShutDown);
    let err = bus.request::<u32>("jobs", 3u32).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::ShutDown);
    assert!(err.to_string().contains("shut down"), "{err}");

    // A consumer registered after the shutdown is not shut down.
    let _later = bus.consumer(
        "later",
        |m: Message<u32>| async move { m.reply(*m.body() + 1) },
    );
    let reply: Message<u32> = bus.request("later", 1u32).await.unwrap();
    assert_eq!(*reply.body(), 2);
}

/// The deadline is the whole of the shutdown, grace included: with a
/// handler that never ends and one that would take a minute, it returns
/// at the deadline, not after it (on tokio's paused clock, which moves
/// exactly as far as the timers ask).
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn shutdown_returns_within_its_deadline_whatever_the_handlers_do() {
    for deadline in [
        Duration::from_millis(300),
        Duration::from_millis(40),
        Duration::from_secs(2),
    ] {
        let bus = EventBus::new();
        let _stuck = bus.consumer("stuck", |_m: Message<u32>| std::future::pending::<()>());
        let _slow = bus.consumer("slow", |_m: Message<u32>| async {
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
        bus.send("stuck", 1u32).await.unwrap();
        bus.send("slow", 1u32).await.unwrap();
        bus.send("slow", 2u32).await.unwrap();
        tokio::task::yield_now().await;

        let started = tokio::time::Instant::now();
        let err = bus.shutdown(deadline).await.unwrap_err();
        let took = started.elapsed();
        assert!(took <= deadline, "shutdown({deadline:?}) took {took:?}");
        assert!(
            took >= deadline * 3 / 4,
            "shutdown({deadline:?}) gave up at {took:?}"
        );
        assert_eq!(err.stopped(), ["slow".to_owned(), "stuck".to_owned()]);
        assert_eq!(err.discarded(), 1, "{err}");
    }
}

#[tokio::test]
async fn fail_refuses_the_reserved_code_and_every_other_code_comes_back() {
    let bus = EventBus::new();
    let _c = bus.consumer("coded", |m: Message<i32>| async move {
        let code = *m.body();
        match m.fail(code, format!("failed with {code}")) {
            Err(e) if e.kind() == ReplyErrorKind::ReservedCode => {
                // Nothing was sent: the message can still be answered.
                assert!(e.to_string().contains("-1 is reserved"), "{e}");
                m.fail(-2, "minus one is reserved")
            }
            other => other,
        }
    });
    for code in [i32::MIN, -2, 0, 1, 422, i32::MAX] {
        let err = bus.request::<i32>("coded", code).await.unwrap_err();
        assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
        assert_eq!(err.failure_code(), Some(code), "{err}");
    }
    let err = bus.request::<i32>("coded", -1).await.unwrap_err();
    assert_eq!(
        (err.failure_code(), err.to_string().as_str()),
        (Some(-2), "minus one is reserved")
    );
}

#[tokio::test]
async fn a_handler_mixes_fail_and_errors_of_its_own_without_map_err() {
    let bus = EventBus::new();
    let _c = bus.consumer("parse", |m: Message<String>| async move {
        if m.body().is_empty() {
            return m.fail(400, "empty");
        }
        if m.body() == "boxed" {
            let err: Box<dyn std::error::Error + Send + Sync> = "a boxed error".into();
            return Err(err.into());
        }
        if m.body() == "text" {
            return Err("a plain text".into());
        }
        let n: u64 = m.body().parse().map_err(|e| format!("not a number: {e}"))?;
        m.reply(n + 1)
    });
    let two: Message<u64> = bus.request("parse", "1".to_string()).await.unwrap();
    assert_eq!(*two.body(), 2);
    for (body, code, text) in [
        ("", Some(400), "empty"),
        ("x", None, "not a number: invalid digit found in string"),
        ("boxed", None, "a boxed error"),
        ("text", None, "a plain text"),
    ] {
        let err = bus
            .request::<u64>("parse", body.to_string())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), RequestErrorKind::RecipientFailure, "{body:?}");
        assert_eq!((err.failure_code(), err.to_string().as_str()), (code, text));
    }
}

/// A panicking interceptor drops the message on either side: the sender's
/// task does not unwind, the consumer is not reached, and the drop is
/// counted.
#[tokio::test(flavor = "current_thread")]
async fn a_panicking_interceptor_drops_the_message_outbound_and_inbound() {
    let handled = Arc::new(AtomicUsize::new(0));
    let bus = EventBus::builder()
        .outbound_interceptor(|ctx: &mut DeliveryContext<'_>| {
            if ctx.address() == "out.panics" {
                panic!("outbound interceptor broke");
            }
            Verdict::Continue
        })
        .inbound_interceptor(|ctx: &mut DeliveryContext<'_>| {
            if ctx.address() == "in.panics" && ctx.kind() != DeliveryKind::Reply {
                panic!("inbound interceptor broke");
            }
            Verdict::Continue
        })
        .build()
        .unwrap();
    for address in ["out.panics", "in.panics"] {
        let handled = Arc::clone(&handled);
        let _ = bus.consumer(address, move |m: Message<u8>| {
            handled.fetch_add(1, Ordering::Relaxed);
            async move { m.reply(0u8) }
        });
    }

    let err = bus.send("out.panics", 1u8).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::Dropped);
    let err = bus.publish("out.panics", 1u8).await.unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::Dropped);
    let err = bus.request::<u8>("out.panics", 1u8).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::Dropped);

    let err = bus.request::<u8>("in.panics", 1u8).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure, "{err}");
    bus.send("in.panics", 1u8).await.unwrap();
    tokio::task::yield_now().await;

    assert_eq!(handled.load(Ordering::Relaxed), 0);
    assert_eq!(bus.metrics().dropped, 5, "{:?}", bus.metrics());
    // The bus goes on: the interceptors ran and nothing is left locked.
    let _ok = bus.consumer("fine", |m: Message<u8>| async move { m.reply(*m.body()) });
    let reply: Message<u8> = bus.request("fine", 9u8).await.unwrap();
    assert_eq!(*reply.body(), 9);
}
