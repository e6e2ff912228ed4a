//! Flow control, streams, producers, interceptors.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use codecbus_bus::{
    ConsumerOptions, DeliveryContext, DeliveryKind, DeliveryOptions, EventBus, Message,
    PublishErrorKind, RequestErrorKind, SendErrorKind, Verdict,
};
use futures_util::StreamExt;

// The clock is paused: a sleep returns only once every task is idle (the
// runtime advances the clock then), so a message that would still be
// handled has been, however long it would take, and no real time passes.
#[tokio::test(start_paused = true)]
async fn pause_fetch_and_resume() {
    let bus = EventBus::new();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let consumer = bus.consumer("flow", move |m: Message<u32>| {
        let tx = tx.clone();
        async move { tx.send(*m.body()).unwrap() }
    });
    consumer.pause();
    for n in 0..5u32 {
        bus.send("flow", n).await.unwrap();
    }
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(rx.try_recv().is_err(), "paused: nothing handled");
    consumer.fetch(2);
    assert_eq!(rx.recv().await, Some(0));
    assert_eq!(rx.recv().await, Some(1));
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(rx.try_recv().is_err(), "fetch(2) let exactly two through");
    consumer.resume();
    for n in 2..5 {
        assert_eq!(rx.recv().await, Some(n));
    }
    consumer.fetch(10); // no effect while flowing
    bus.send("flow", 5u32).await.unwrap();
    assert_eq!(rx.recv().await, Some(5));
}

#[tokio::test]
async fn a_paused_consumer_can_be_unregistered() {
    let bus = EventBus::new();
    let consumer = bus.consumer("p", |_m: Message<u8>| async {});
    consumer.pause();
    bus.send("p", 1u8).await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), consumer.unregister())
        .await
        .expect("unregister does not hang on a paused consumer");
}

#[tokio::test]
async fn a_stream_consumer_can_answer_requests_and_ends_on_unregister() {
    let bus = EventBus::new();
    let mut stream = bus.consumer_stream::<String>("s");
    let requester = tokio::spawn({
        let bus = bus.clone();
        async move { bus.request::<usize>("s", "four".to_string()).await }
    });
    let m = stream.next().await.unwrap();
    m.reply(m.body().len()).unwrap();
    assert_eq!(*requester.await.unwrap().unwrap().body(), 4);
    assert_eq!(stream.address(), "s");
    stream.unregister().await;
    assert_eq!(
        bus.send("s", "x".to_string()).await.unwrap_err().kind(),
        SendErrorKind::NoHandlers
    );
}

/// The documented contrast: `let _ =` keeps a handler consumer (as in
/// Vert.x) and unregisters a stream consumer at once (nothing could read
/// it).
#[tokio::test]
async fn let_underscore_keeps_a_handler_consumer_and_drops_a_stream() {
    let bus = EventBus::new();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let _ = bus.consumer("handled", move |m: Message<u8>| {
        let tx = tx.clone();
        async move { tx.send(*m.body()).unwrap() }
    });
    bus.send("handled", 7u8).await.unwrap();
    assert_eq!(rx.recv().await, Some(7));

    let _ = bus.consumer_stream::<u8>("pulled");
    let err = bus.send("pulled", 7u8).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::NoHandlers);
}

#[tokio::test]
async fn dropping_a_stream_unregisters_it_and_fails_its_queued_requests() {
    let bus = EventBus::new();
    let stream = bus.consumer_stream::<u8>("d");
    let pending = tokio::spawn({
        let bus = bus.clone();
        async move { bus.request::<u8>("d", 1u8).await }
    });
    tokio::task::yield_now().await;
    drop(stream);
    let err = pending.await.unwrap().unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    assert_eq!(
        bus.send("d", 1u8).await.unwrap_err().kind(),
        SendErrorKind::NoHandlers
    );
    assert_eq!(bus.metrics().discarded, 1);
}

#[tokio::test]
async fn producers_send_and_publish_with_their_options() {
    let bus = EventBus::new();
    let mut a = bus.consumer_stream::<u32>("p");
    let mut b = bus.consumer_stream::<u32>("p");
    let sender = bus
        .sender::<u32>("p")
        .delivery_options(DeliveryOptions::new().header("via", "sender"));
    sender.write(1).await.unwrap();
    sender.write(2).await.unwrap();
    let (m1, m2) = (a.recv().await.unwrap(), b.recv().await.unwrap());
    assert_eq!((*m1.body(), *m2.body()), (1, 2), "round-robin");
    assert_eq!(m1.headers().get("via"), Some("sender"));

    let publisher = bus.publisher::<u32>("p");
    assert!(publisher.is_publisher() && !sender.is_publisher());
    assert_eq!(publisher.address(), "p");
    publisher.write(3).await.unwrap();
    assert_eq!(*a.recv().await.unwrap().body(), 3);
    assert_eq!(*b.recv().await.unwrap().body(), 3);

    let nowhere = bus.publisher::<u32>("nowhere");
    assert_eq!(
        nowhere.write(1).await.unwrap_err().kind(),
        SendErrorKind::NoHandlers
    );
}

#[tokio::test]
async fn interceptors_see_address_headers_codec_and_may_drop() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let inbound_seen = Arc::new(AtomicUsize::new(0));
    let log = Arc::clone(&seen);
    let inbound = Arc::clone(&inbound_seen);
    let bus = EventBus::builder()
        .outbound_interceptor(move |ctx: &mut DeliveryContext<'_>| {
            log.lock().unwrap().push((
                ctx.address().to_owned(),
                ctx.kind(),
                ctx.codec_name(),
                ctx.headers().get("k").map(str::to_owned),
            ));
            ctx.headers_mut().insert("stamped", "yes");
            if ctx.address() == "blocked" {
                Verdict::Drop
            } else {
                Verdict::Continue
            }
        })
        .inbound_interceptor(move |ctx: &mut DeliveryContext<'_>| {
            inbound.fetch_add(1, Ordering::SeqCst);
            assert!(ctx.type_name().contains("String"));
            if ctx.headers().get("drop-in") == Some("1") {
                Verdict::Drop
            } else {
                Verdict::Continue
            }
        })
        .build()
        .unwrap();
    let _c = bus.consumer("echo", |m: Message<String>| async move {
        assert_eq!(m.headers().get("stamped"), Some("yes"));
        m.reply(m.body().clone())
    });
    let _b = bus.consumer("blocked", |_m: Message<String>| async {});
    let options = DeliveryOptions::new().header("k", "v");
    let _: Message<String> = bus
        .request_with("echo", "hi".to_string(), options)
        .await
        .unwrap();
    let err = bus.send("blocked", "no".to_string()).await.unwrap_err();
    assert_eq!(err.kind(), SendErrorKind::Dropped);
    assert_eq!(err.into_body::<String>().unwrap().as_str(), "no");
    assert_eq!(
        bus.publish("blocked", "no".to_string())
            .await
            .unwrap_err()
            .kind(),
        PublishErrorKind::Dropped
    );

    // Dropped inbound: the request fails at once, no reply.
    let options = DeliveryOptions::new().header("drop-in", "1");
    let err = bus
        .request_with::<String>("echo", "x".to_string(), options)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);

    let seen = seen.lock().unwrap();
    assert_eq!(
        seen[0],
        (
            "echo".to_owned(),
            DeliveryKind::Request,
            Some("string"),
            Some("v".to_owned())
        )
    );
    assert_eq!(seen[1].1, DeliveryKind::Reply);
    assert_eq!(seen[2].1, DeliveryKind::Send);
    assert_eq!(inbound_seen.load(Ordering::SeqCst), 2);
    assert_eq!(bus.metrics().dropped, 3);
}

/// A conversation turn dropped by an outbound interceptor fails with
/// `Dropped` (not "expects no reply"), and the requester learns nothing
/// but the silence of a dropped reply.
#[tokio::test]
async fn a_dropped_conversation_turn_is_reported_as_dropped() {
    let bus = EventBus::builder()
        .outbound_interceptor(|ctx: &mut DeliveryContext<'_>| {
            if ctx.kind() == DeliveryKind::Reply && ctx.headers().get("secret").is_some() {
                Verdict::Drop
            } else {
                Verdict::Continue
            }
        })
        .build()
        .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let _c = bus.consumer("ask", move |m: Message<u8>| {
        let tx = tx.clone();
        async move {
            let options = codecbus_bus::ReplyOptions::new().header("secret", "1");
            let err = m
                .reply_and_request_with::<u8>(1u8, options)
                .await
                .unwrap_err();
            tx.send((err.kind(), err.to_string())).unwrap();
            m.reply(2u8).expect("the request can still be answered");
        }
    });
    let r: Message<u8> = bus.request("ask", 0u8).await.unwrap();
    assert_eq!(*r.body(), 2);
    let (kind, text) = rx.recv().await.unwrap();
    assert_eq!(kind, RequestErrorKind::Dropped, "{text}");
    assert!(text.contains("interceptor"), "{text}");
    assert_eq!(bus.metrics().dropped, 1);
}

#[tokio::test]
async fn local_consumers_and_local_only_options_work_in_process() {
    let bus = EventBus::new();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let _c = bus.local_consumer("here", move |m: Message<u8>| {
        let tx = tx.clone();
        async move { tx.send(*m.body()).unwrap() }
    });
    bus.send_with("here", 1u8, DeliveryOptions::new().local_only(true))
        .await
        .unwrap();
    bus.publish_with("here", 2u8, DeliveryOptions::new().local_only(true))
        .await
        .unwrap();
    assert_eq!(rx.recv().await, Some(1));
    assert_eq!(rx.recv().await, Some(2));
}

#[test]
#[should_panic(expected = "capacity of at least 1")]
fn a_zero_capacity_queue_is_refused() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let bus = EventBus::new();
        let _ = bus.consumer_stream_with::<u8>("z", ConsumerOptions::new().queue_capacity(0));
    });
}
