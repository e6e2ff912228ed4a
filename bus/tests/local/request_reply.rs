//! `request`: replies, failures of every kind, timeouts, conversations.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use codecbus_bus::{
    ConsumerOptions, DeliveryContext, DeliveryKind, DeliveryOptions, EventBus, Message, ReplyError,
    ReplyErrorKind, RequestErrorKind, Shared, Verdict,
};
use common::{Copied, Frozen};
use tokio::time::Instant;

fn echo_bus() -> EventBus {
    EventBus::new()
}

#[tokio::test]
async fn request_gets_a_typed_reply() {
    let bus = echo_bus();
    let _c = bus.consumer("upper", |m: Message<String>| async move {
        m.reply(m.body().to_uppercase())
    });
    let reply: Message<String> = bus.request("upper", "shout".to_string()).await.unwrap();
    assert_eq!(reply.body(), "SHOUT");
    assert_eq!(reply.address(), "upper");
    assert_eq!(bus.metrics().replies, 1);
}

#[tokio::test(start_paused = true)]
async fn no_handlers_fails_at_once_not_after_the_timeout() {
    let bus = echo_bus();
    let start = Instant::now();
    let err = bus
        .request::<String>("nobody", "hello".to_string())
        .await
        .unwrap_err();
    assert_eq!(start.elapsed(), Duration::ZERO, "no time passed");
    assert_eq!(err.kind(), RequestErrorKind::NoHandlers);
    assert_eq!(err.failure_code(), None);
    assert_eq!(err.to_string(), "No handlers for address nobody");
}

#[tokio::test(start_paused = true)]
async fn a_silent_consumer_times_out_after_the_default_30_seconds() {
    let bus = echo_bus();
    assert_eq!(bus.default_timeout(), Duration::from_secs(30));
    let _c = bus.consumer("sleepy", |m: Message<u32>| async move {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        m.reply(0u32)
    });
    let start = Instant::now();
    let err = bus.request::<u32>("sleepy", 1u32).await.unwrap_err();
    assert_eq!(start.elapsed(), Duration::from_secs(30));
    assert_eq!(err.kind(), RequestErrorKind::Timeout);
    // Named by the address the request was sent to, as across NATS.
    assert_eq!(
        err.to_string(),
        "Timed out after waiting 30000(ms) for a reply. address: sleepy"
    );
    assert_eq!(err.address(), Some("sleepy"));
    assert_eq!(bus.metrics().timeouts, 1);
}

#[tokio::test(start_paused = true)]
async fn the_timeout_comes_from_the_options_or_the_builder() {
    let bus = EventBus::builder()
        .default_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let _c = bus.consumer("sleepy", |m: Message<u32>| async move {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        drop(m);
    });
    let start = Instant::now();
    let err = bus.request::<u32>("sleepy", 1u32).await.unwrap_err();
    assert_eq!(
        (err.kind(), start.elapsed()),
        (RequestErrorKind::Timeout, Duration::from_secs(2))
    );

    let start = Instant::now();
    let options = DeliveryOptions::new().timeout(Duration::from_millis(250));
    let err = bus
        .request_with::<u32>("sleepy", 1u32, options)
        .await
        .unwrap_err();
    assert_eq!(
        (err.kind(), start.elapsed()),
        (RequestErrorKind::Timeout, Duration::from_millis(250))
    );
    assert!(
        err.to_string()
            .starts_with("Timed out after waiting 250(ms)")
    );
}

#[tokio::test]
async fn fail_reaches_the_requester_with_code_and_message() {
    let bus = echo_bus();
    let _c = bus.consumer("picky", |m: Message<String>| async move {
        m.fail(404, format!("no such item: {}", m.body()))
    });
    let err = bus
        .request::<String>("picky", "x".to_string())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert_eq!(err.failure_code(), Some(404));
    assert_eq!(err.to_string(), "no such item: x");
}

#[tokio::test]
async fn a_handler_error_is_a_recipient_failure() {
    let bus = echo_bus();
    let _c = bus.consumer("erring", |m: Message<u32>| async move {
        if *m.body() == 0 {
            return Err(format!("cannot divide by {}", m.body()));
        }
        m.reply(100 / *m.body()).map_err(|e| e.to_string())
    });
    let err = bus.request::<u32>("erring", 0u32).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert_eq!(err.to_string(), "cannot divide by 0");
    // The consumer is still there.
    let ok: Message<u32> = bus.request("erring", 4u32).await.unwrap();
    assert_eq!(*ok.body(), 25);
}

#[tokio::test]
async fn a_panicking_handler_fails_the_request_and_the_bus_keeps_running() {
    let bus = echo_bus();
    let _bomb = bus.consumer("bomb", |m: Message<u32>| async move {
        if *m.body() == 13 {
            panic!("unlucky number");
        }
        m.reply(*m.body())
    });
    let _other = bus.consumer(
        "other",
        |m: Message<u32>| async move { m.reply(*m.body() + 1) },
    );
    let err = bus.request::<u32>("bomb", 13u32).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert!(err.to_string().contains("unlucky number"), "{err}");
    // The same consumer and the others keep working.
    assert_eq!(*bus.request::<u32>("bomb", 7u32).await.unwrap().body(), 7);
    assert_eq!(*bus.request::<u32>("other", 7u32).await.unwrap().body(), 8);
    let m = bus.metrics();
    assert_eq!((m.panics, m.recipient_failures), (1, 1));
}

#[tokio::test]
async fn a_panic_before_the_first_await_is_caught_too() {
    let bus = echo_bus();
    #[allow(unreachable_code)]
    let _c = bus.consumer("sync-bomb", |_m: Message<u8>| -> std::future::Ready<()> {
        panic!("at once");
    });
    let err = bus.request::<u8>("sync-bomb", 1u8).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert!(err.to_string().contains("at once"));
}

#[tokio::test(start_paused = true)]
async fn a_message_dropped_without_reply_fails_at_once() {
    let bus = echo_bus();
    let _c = bus.consumer("mute", |_m: Message<u8>| async {});
    let start = Instant::now();
    let err = bus.request::<u8>("mute", 1u8).await.unwrap_err();
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert!(err.to_string().starts_with("No reply"), "{err}");
}

#[tokio::test]
async fn a_handler_may_reply_later_from_another_task() {
    let bus = echo_bus();
    let _c = bus.consumer("later", |m: Message<u8>| async move {
        tokio::spawn(async move {
            tokio::task::yield_now().await;
            m.reply(*m.body() * 2)
        });
    });
    assert_eq!(*bus.request::<u8>("later", 21u8).await.unwrap().body(), 42);
}

#[tokio::test]
async fn type_mismatch_on_the_way_in_and_on_the_way_back() {
    let bus = echo_bus();
    let _c = bus.consumer("numbers", |m: Message<u32>| async move {
        m.reply(m.body().to_string())
    });
    // The consumer takes u32, not String.
    let err = bus
        .request::<String>("numbers", "1".to_string())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::TypeMismatch);
    // The reply is a String, not the u64 the requester asks for.
    let err = bus.request::<u64>("numbers", 1u32).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::TypeMismatch);
    let text = err.to_string();
    assert!(text.contains("String") && text.contains("u64"), "{text}");
}

/// What `reply` and `fail` returned, as kinds.
fn outcome(result: Result<(), ReplyError>) -> Result<(), ReplyErrorKind> {
    result.map_err(|e| e.kind())
}

#[tokio::test]
async fn the_first_answer_wins_and_later_ones_are_refused() {
    let bus = echo_bus();
    let (tx, mut rx) = common::channel();
    let _c = bus.consumer("twice", move |m: Message<u8>| {
        let tx = tx.clone();
        async move {
            assert!(m.expects_reply());
            let first = outcome(m.reply(1u8));
            let second = m.reply(2u8).unwrap_err();
            let third = outcome(m.fail(1, "late"));
            assert!(!m.expects_reply());
            let text = second.to_string();
            let back = second.into_body::<u8>().map(|b| *b);
            tx.send((first, back, third, text)).unwrap();
        }
    });
    assert_eq!(*bus.request::<u8>("twice", 0u8).await.unwrap().body(), 1);
    let (first, back, third, text) = rx.recv().await.unwrap();
    assert_eq!(first, Ok(()));
    assert_eq!(back, Some(2), "the refused reply hands its body back");
    assert_eq!(third, Err(ReplyErrorKind::AlreadyAnswered));
    assert_eq!(
        text,
        "Reply to address twice not taken: the message was answered already"
    );
    assert_eq!(bus.metrics().replies, 1);
}

#[tokio::test]
async fn reply_to_a_send_or_publish_is_refused() {
    let bus = echo_bus();
    let (tx, mut rx) = common::channel();
    let _c = bus.consumer("one-way", move |m: Message<u8>| {
        let tx = tx.clone();
        async move {
            let replied = outcome(m.reply(1u8));
            let failed = outcome(m.fail(1, "no"));
            tx.send((m.expects_reply(), replied, failed, m.is_send()))
                .unwrap()
        }
    });
    let refused = Err(ReplyErrorKind::NoReplyExpected);
    bus.send("one-way", 0u8).await.unwrap();
    assert_eq!(rx.recv().await, Some((false, refused, refused, true)));
    bus.publish("one-way", 0u8).await.unwrap();
    assert_eq!(rx.recv().await, Some((false, refused, refused, false)));
    assert_eq!(bus.metrics().replies, 0);
}

#[tokio::test(start_paused = true)]
async fn reply_after_the_requester_gave_up_is_refused() {
    let bus = echo_bus();
    let (tx, mut rx) = common::channel();
    let _c = bus.consumer("late", move |m: Message<u8>| {
        let tx = tx.clone();
        async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            tx.send(outcome(m.reply(1u8))).unwrap();
        }
    });
    let options = DeliveryOptions::new().timeout(Duration::from_secs(1));
    let err = bus
        .request_with::<u8>("late", 0u8, options)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::Timeout);
    assert_eq!(rx.recv().await, Some(Err(ReplyErrorKind::RequesterGone)));
}

#[tokio::test]
async fn a_reply_dropped_by_an_interceptor_is_refused_and_fails_the_request() {
    let bus = EventBus::builder()
        .outbound_interceptor(|ctx: &mut DeliveryContext<'_>| {
            if ctx.kind() == DeliveryKind::Reply {
                Verdict::Drop
            } else {
                Verdict::Continue
            }
        })
        .build()
        .unwrap();
    let (tx, mut rx) = common::channel();
    let _c = bus.consumer("censored", move |m: Message<u8>| {
        let tx = tx.clone();
        async move {
            let result = m.reply(1u8);
            tx.send(result.as_ref().map(|_| ()).map_err(|e| e.kind()))
                .unwrap();
            result
        }
    });
    let err = bus.request::<u8>("censored", 0u8).await.unwrap_err();
    assert_eq!(rx.recv().await, Some(Err(ReplyErrorKind::Dropped)));
    // The handler returned the refusal: the requester learns why at once.
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert_eq!(
        err.to_string(),
        "Reply to address censored dropped by an outbound interceptor"
    );
}

#[tokio::test]
async fn immutable_reply_is_the_same_allocation_and_copies_nothing() {
    let bus = echo_bus();
    let _echo = bus.consumer("echo", |m: Message<Frozen>| async move {
        m.reply(Shared(Arc::clone(m.body_arc())))
    });
    let body = Arc::new(Frozen::new("bounce me"));
    let reply: Message<Frozen> = bus
        .request("echo", Shared(Arc::clone(&body)))
        .await
        .unwrap();
    assert!(
        Arc::ptr_eq(reply.body_arc(), &body),
        "request and reply share the sender's allocation"
    );
    assert_eq!(body.clones.get(), 0);
}

#[tokio::test]
async fn copied_reply_is_a_distinct_copy_each_way() {
    let bus = echo_bus();
    let (tx, mut rx) = common::channel();
    let _echo = bus.consumer("echo", move |mut m: Message<Copied>| {
        let tx = tx.clone();
        async move {
            // The consumer's copy is its own: changing it affects no one.
            m.body_mut().unwrap().items.push(99);
            tx.send(Arc::clone(m.body_arc())).unwrap();
            m.reply(Shared(Arc::clone(m.body_arc())))
        }
    });
    let body = Arc::new(Copied::new(&[1]));
    let mut reply: Message<Copied> = bus
        .request("echo", Shared(Arc::clone(&body)))
        .await
        .unwrap();
    let consumers_copy = rx.recv().await.unwrap();
    assert_eq!(body.items, [1], "the sender's value is untouched");
    assert_eq!(consumers_copy.items, [1, 99]);
    assert_eq!(reply.body().items, [1, 99]);
    assert!(!Arc::ptr_eq(reply.body_arc(), &consumers_copy));
    assert!(!Arc::ptr_eq(reply.body_arc(), &body));
    reply.body_mut().unwrap().items.clear();
    assert_eq!(consumers_copy.items, [1, 99]);
    assert_eq!(body.clones.get(), 2, "one copy in, one copy back");
}

#[tokio::test]
async fn reply_and_request_holds_a_conversation() {
    let bus = echo_bus();
    let _c = common::counting_conversation(&bus, "count");
    assert_eq!(common::count_with(&bus, "count").await, [1, 3, 5, 7, 1008]);
}

/// A further turn that nobody can take says why, as `reply` does, and
/// hands its body back: the message expects no reply (a send), it was
/// answered already, or its requester stopped waiting.
#[tokio::test(start_paused = true)]
async fn a_turn_nobody_takes_says_why_and_hands_the_body_back() {
    let bus = echo_bus();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let _c = bus.consumer("turns", move |m: Message<String>| {
        let tx = tx.clone();
        async move {
            if m.body() == "answer first" {
                m.reply("first".to_string()).unwrap();
            }
            if m.body() == "wait" {
                // The requester gives up after 10 ms.
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            let err = m
                .reply_and_request::<String>("next turn".to_string())
                .await
                .unwrap_err();
            let text = err.to_string();
            let kind = err.kind();
            let body = err.into_body::<String>().map(|b| (*b).clone());
            tx.send((kind, text, body)).unwrap();
        }
    });

    bus.send("turns", "sent".to_string()).await.unwrap();
    let first: Message<String> = bus
        .request("turns", "answer first".to_string())
        .await
        .unwrap();
    assert_eq!(first.body(), "first");
    let options = DeliveryOptions::new().timeout(Duration::from_millis(10));
    let err = bus
        .request_with::<String>("turns", "wait".to_string(), options)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::Timeout);

    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(rx.recv().await.unwrap());
    }
    let why = |needle: &str| {
        seen.iter()
            .find(|(_, text, _)| text.contains(needle))
            .unwrap_or_else(|| panic!("no turn refused with {needle:?}: {seen:?}"))
            .clone()
    };
    for needle in [
        "the message expects no reply",
        "the message was answered already",
        "the requester stopped waiting",
    ] {
        let (kind, text, body) = why(needle);
        assert_eq!(kind, RequestErrorKind::NoHandlers, "{text}");
        assert!(
            text.starts_with("Reply to address turns not taken: "),
            "{text}"
        );
        assert_eq!(body.as_deref(), Some("next turn"), "{text}");
    }
}

#[tokio::test]
async fn headers_travel_both_ways() {
    let bus = echo_bus();
    let _c = bus.consumer("h", |m: Message<u8>| async move {
        let trace = m.headers().get("trace").unwrap_or("none").to_owned();
        m.reply_with(
            0u8,
            codecbus_bus::ReplyOptions::new().header("trace", format!("{trace}-back")),
        )
    });
    let options = DeliveryOptions::new().header("Trace", "t1");
    let reply: Message<u8> = bus.request_with("h", 0u8, options).await.unwrap();
    assert_eq!(reply.headers().get("TRACE"), Some("t1-back"));
}

#[tokio::test]
async fn requests_queued_at_unregister_fail_at_once() {
    let bus = echo_bus();
    let consumer = bus.consumer_with(
        "closing",
        ConsumerOptions::new().queue_capacity(10),
        |m: Message<u8>| async move {
            tokio::time::sleep(Duration::from_millis(30)).await;
            m.reply(*m.body())
        },
    );
    let first = tokio::spawn({
        let bus = bus.clone();
        async move { bus.request::<u8>("closing", 1u8).await }
    });
    tokio::time::sleep(Duration::from_millis(5)).await;
    let second = tokio::spawn({
        let bus = bus.clone();
        async move { bus.request::<u8>("closing", 2u8).await }
    });
    tokio::time::sleep(Duration::from_millis(5)).await;
    consumer.unregister().await;
    assert_eq!(
        *first.await.unwrap().unwrap().body(),
        1,
        "the running one completes"
    );
    let err = second.await.unwrap().unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure, "{err}");
}
