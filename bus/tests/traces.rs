//! Traces across nodes: the bus's spans, exported through
//! `tracing-opentelemetry` to an in-memory OpenTelemetry exporter, form one
//! trace per message with the right parent links, locally, across NATS
//! (W3C Trace Context in the headers, the global propagator's) and through
//! a JetStream redelivery. Each test uses its own addresses and picks its
//! spans by them; the subscriber, exporter and propagator are this
//! binary's, installed once.
#![cfg(all(feature = "opentelemetry", feature = "nats"))]

mod common;
#[path = "common/nats.rs"]
mod harness;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use codecbus_bus::{EventBus, Message};
use opentelemetry::Value;
use opentelemetry::trace::{SpanId, TraceId, TracerProvider as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_subscriber::layer::SubscriberExt;

/// The exporter every span of this binary ends up in.
fn exporter() -> &'static InMemorySpanExporter {
    static EXPORTER: OnceLock<InMemorySpanExporter> = OnceLock::new();
    EXPORTER.get_or_init(|| {
        // The bus writes and reads contexts with the global propagator.
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let tracer = provider.tracer("codecbus-tests");
        let subscriber =
            tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(tracer));
        tracing::subscriber::set_global_default(subscriber).expect("install the test subscriber");
        exporter
    })
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn text(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|v| v.as_str().into_owned())
}

/// The finished spans about `address`.
fn spans_at(address: &str) -> Vec<SpanData> {
    exporter()
        .get_finished_spans()
        .expect("read the exporter")
        .into_iter()
        .filter(|s| text(s, "address").as_deref() == Some(address))
        .collect()
}

/// Waits until the spans about `address` have `names` (each as many times
/// as listed, in any order), then returns them.
async fn wait_for(address: &str, names: &[&str]) -> Vec<SpanData> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let spans = spans_at(address);
        let mut found: Vec<&str> = spans.iter().map(|s| &*s.name).collect();
        found.sort_unstable();
        let mut wanted = names.to_vec();
        wanted.sort_unstable();
        if found == wanted {
            return spans;
        }
        assert!(
            Instant::now() < deadline,
            "spans at {address}: found {found:?}, waiting for {wanted:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn one<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let mut matching = spans.iter().filter(|s| s.name == name);
    let span = matching.next().unwrap_or_else(|| panic!("no {name} span"));
    assert!(matching.next().is_none(), "more than one {name} span");
    span
}

fn all<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn id(span: &SpanData) -> SpanId {
    span.span_context.span_id()
}

fn trace(span: &SpanData) -> TraceId {
    span.span_context.trace_id()
}

/// Asserts that `child`'s parent is `parent`, in the same trace.
fn assert_child(child: &SpanData, parent: &SpanData) {
    assert_eq!(
        trace(child),
        trace(parent),
        "{} and {} in one trace",
        child.name,
        parent.name
    );
    assert_eq!(
        child.parent_span_id,
        id(parent),
        "{}'s parent is {}",
        child.name,
        parent.name
    );
}

async fn traced_node(url: &str) -> EventBus {
    exporter();
    EventBus::builder()
        .traces(true)
        .default_timeout(Duration::from_secs(5))
        .nats(common::nats_options(url))
        .connect()
        .await
        .expect("connect to the test server")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_and_its_reply_are_one_trace_across_nodes() {
    let server =
        harness::NatsServer::for_test("a_request_and_its_reply_are_one_trace_across_nodes");
    let (a, b) = (
        traced_node(&server.url()).await,
        traced_node(&server.url()).await,
    );
    let _echo = b.consumer("trace.echo", |m: Message<String>| async move {
        tracing::info!("handling"); // attributed to the handler's span
        m.reply(m.body().to_uppercase())
    });
    b.flush().await.unwrap();

    let reply: Message<String> = a.request("trace.echo", "hi".to_string()).await.unwrap();
    assert_eq!(reply.body(), "HI");

    let spans = wait_for(
        "trace.echo",
        &["request", "receive", "deliver", "handle", "reply"],
    )
    .await;
    let request = one(&spans, "request");
    let receive = one(&spans, "receive");
    let deliver = one(&spans, "deliver");
    let handle = one(&spans, "handle");
    let reply_span = one(&spans, "reply");
    assert_eq!(
        request.parent_span_id,
        SpanId::INVALID,
        "the request starts the trace"
    );
    assert_child(receive, request);
    assert_child(deliver, receive);
    assert_child(handle, deliver);
    assert_child(reply_span, deliver);
    assert_eq!(text(request, "outcome").as_deref(), Some("ok"));
    assert_eq!(text(handle, "outcome").as_deref(), Some("ok"));
    assert_eq!(text(request, "codec").as_deref(), Some("string"));
    let Some(Value::I64(size)) = attribute(request, "body_size") else {
        panic!("the encoded size: {:?}", attribute(request, "body_size"));
    };
    assert!(*size > 2, "{size}");
    assert_eq!(attribute(receive, "body_size"), Some(&Value::I64(*size)));
    // The reply carries the reply span's context back, as W3C Trace Context.
    let traceparent = reply.headers().get("traceparent").expect("traceparent");
    assert_eq!(
        traceparent,
        format!("00-{}-{}-01", trace(request), id(reply_span))
    );
    // Without vendor state no `tracestate` travels (W3C Trace Context: an
    // empty one is not sent).
    assert_eq!(reply.headers().get("tracestate"), None);
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_to_two_nodes_is_one_trace() {
    let server = harness::NatsServer::for_test("a_publish_to_two_nodes_is_one_trace");
    let url = server.url();
    let (a, b, c) = (
        traced_node(&url).await,
        traced_node(&url).await,
        traced_node(&url).await,
    );
    let _on_b = b.consumer("trace.news", |_m: Message<String>| async {});
    let _on_c = c.consumer("trace.news", |_m: Message<String>| async {});
    b.flush().await.unwrap();
    c.flush().await.unwrap();

    a.publish("trace.news", "extra".to_string()).await.unwrap();

    let spans = wait_for(
        "trace.news",
        &[
            "publish", "receive", "receive", "deliver", "deliver", "handle", "handle",
        ],
    )
    .await;
    let publish = one(&spans, "publish");
    let receives = all(&spans, "receive");
    for receive in &receives {
        assert_child(receive, publish);
        let deliver = spans
            .iter()
            .find(|s| s.name == "deliver" && s.parent_span_id == id(receive))
            .expect("a delivery under each receive");
        let handle = spans
            .iter()
            .find(|s| s.name == "handle" && s.parent_span_id == id(deliver))
            .expect("a handler run under each delivery");
        assert_child(handle, deliver);
    }
    assert_ne!(id(receives[0]), id(receives[1]));
    for node in [a, b, c] {
        node.close().await;
    }
}

/// The one span named `name` whose parent is `parent`.
fn child_of<'a>(spans: &'a [SpanData], name: &str, parent: &SpanData) -> &'a SpanData {
    let mut matching = spans
        .iter()
        .filter(|s| s.name == name && s.parent_span_id == id(parent));
    let span = matching
        .next()
        .unwrap_or_else(|| panic!("no {name} span under {}", parent.name));
    assert!(
        matching.next().is_none(),
        "more than one {name} span under {}",
        parent.name
    );
    assert_child(span, parent);
    span
}

/// A conversation of three turns at `address`, `replier` answering the
/// request with a question, `requester` answering that with another
/// question, `replier` ending it; then checks that every turn is in the
/// request's trace, each reply under the delivery of what it answers.
async fn converse(requester: &EventBus, replier: &EventBus, address: &'static str, remote: bool) {
    let _c = replier.consumer(address, |m: Message<u32>| async move {
        let answer: Message<u32> = m
            .reply_and_request(*m.body() + 1)
            .await
            .map_err(|e| e.to_string())?;
        answer.reply(*answer.body() + 1).map_err(|e| e.to_string())
    });
    replier.flush().await.unwrap();
    {
        let first: Message<u32> = requester.request(address, 1u32).await.unwrap();
        assert_eq!(*first.body(), 2);
        let last: Message<u32> = first.reply_and_request(*first.body() + 1).await.unwrap();
        assert_eq!(*last.body(), 4);
    }
    let mut names = vec![
        "request", "deliver", "handle", "reply", "deliver", "reply", "deliver", "reply",
    ];
    if remote {
        names.push("receive");
    }
    let spans = wait_for(address, &names).await;
    let request = one(&spans, "request");
    let delivery = if remote {
        child_of(&spans, "deliver", child_of(&spans, "receive", request))
    } else {
        child_of(&spans, "deliver", request)
    };
    child_of(&spans, "handle", delivery);
    // Turn by turn: the reply, its delivery to the other side (a `deliver`
    // of kind `reply`), the answer under that delivery.
    let question = child_of(&spans, "reply", delivery);
    let asked = child_of(&spans, "deliver", question);
    assert_eq!(text(asked, "kind").as_deref(), Some("reply"));
    let answer = child_of(&spans, "reply", asked);
    let answered = child_of(&spans, "deliver", answer);
    assert_eq!(text(answered, "kind").as_deref(), Some("reply"));
    let last = child_of(&spans, "reply", answered);
    assert_eq!(text(last, "outcome").as_deref(), Some("ok"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_is_one_trace_turn_after_turn() {
    exporter();
    let bus = EventBus::builder().traces(true).build().unwrap();
    converse(&bus, &bus, "trace.talk", false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_across_nodes_is_one_trace_turn_after_turn() {
    let server =
        harness::NatsServer::for_test("a_conversation_across_nodes_is_one_trace_turn_after_turn");
    let (a, b) = (
        traced_node(&server.url()).await,
        traced_node(&server.url()).await,
    );
    converse(&a, &b, "trace.talk.remote", true).await;
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_request_is_one_trace_with_context_in_its_headers() {
    exporter();
    let bus = EventBus::builder().traces(true).build().unwrap();
    let _c = bus.consumer("trace.local", |m: Message<u32>| async move {
        let traceparent = m
            .headers()
            .get("traceparent")
            .unwrap_or_default()
            .to_owned();
        m.reply(traceparent)
    });
    let reply: Message<String> = bus.request("trace.local", 1u32).await.unwrap();
    let spans = wait_for("trace.local", &["request", "deliver", "handle", "reply"]).await;
    let request = one(&spans, "request");
    let deliver = one(&spans, "deliver");
    assert_child(deliver, request);
    assert_child(one(&spans, "handle"), deliver);
    assert_child(one(&spans, "reply"), deliver);
    // The consumer saw the requester's context in the headers.
    assert_eq!(
        reply.body(),
        &format!("00-{}-{}-01", trace(request), id(request))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_marked_on_their_spans() {
    exporter();
    let bus = EventBus::builder().traces(true).build().unwrap();
    let _c = bus.consumer(
        "trace.fails",
        |m: Message<u32>| async move { m.fail(3, "no") },
    );
    let err = bus.request::<u32>("trace.fails", 1u32).await.unwrap_err();
    assert_eq!(err.failure_code(), Some(3));
    assert!(bus.send("trace.nobody", 1u32).await.is_err());
    let spans = wait_for("trace.fails", &["request", "deliver", "handle", "reply"]).await;
    // `fail` is the delivery's reply, a failure; the handler itself
    // returned normally.
    let reply = one(&spans, "reply");
    assert_child(reply, one(&spans, "deliver"));
    assert_eq!(text(reply, "outcome").as_deref(), Some("RECIPIENT_FAILURE"));
    assert_eq!(
        text(one(&spans, "handle"), "outcome").as_deref(),
        Some("ok")
    );
    let request = one(&spans, "request");
    assert_eq!(
        text(request, "outcome").as_deref(),
        Some("RECIPIENT_FAILURE")
    );
    assert!(matches!(
        request.status,
        opentelemetry::trace::Status::Error { .. }
    ));
    // A handler's error is the outcome of its run.
    let _e = bus.consumer("trace.errs", |_m: Message<u32>| async move {
        Err::<(), _>("no stock")
    });
    let err = bus.request::<u32>("trace.errs", 1u32).await.unwrap_err();
    assert_eq!(err.to_string(), "no stock");
    let spans = wait_for("trace.errs", &["request", "deliver", "handle"]).await;
    let handle = one(&spans, "handle");
    assert_eq!(text(handle, "outcome").as_deref(), Some("error"));
    assert!(matches!(
        handle.status,
        opentelemetry::trace::Status::Error { .. }
    ));
    assert_eq!(text(one(&spans, "deliver"), "body").as_deref(), Some("u32"));
    // A panic is its run's outcome, and counted as one.
    let _p = bus.consumer("trace.panics", |m: Message<u32>| async move {
        assert!(*m.body() > 1, "out of order");
    });
    let err = bus.request::<u32>("trace.panics", 1u32).await.unwrap_err();
    assert!(err.to_string().contains("out of order"), "{err}");
    let spans = wait_for("trace.panics", &["request", "deliver", "handle"]).await;
    let handle = one(&spans, "handle");
    assert_eq!(text(handle, "outcome").as_deref(), Some("panic"));
    assert!(matches!(
        handle.status,
        opentelemetry::trace::Status::Error { .. }
    ));
    assert_eq!(bus.metrics().panics, 1);
    let send = wait_for("trace.nobody", &["send"]).await;
    assert_eq!(text(&send[0], "outcome").as_deref(), Some("NO_HANDLERS"));
}

/// A consumer at `address` answering with the `traceparent` it got
/// (empty without one).
fn echo_traceparent(bus: &EventBus, address: &str) -> codecbus_bus::MessageConsumer {
    bus.consumer(address, |m: Message<u32>| async move {
        let traceparent = m
            .headers()
            .get("traceparent")
            .unwrap_or_default()
            .to_owned();
        m.reply(traceparent)
    })
}

/// The finished span of the program's own named `name`.
fn caller_span(name: &str) -> SpanData {
    let spans: Vec<SpanData> = exporter()
        .get_finished_spans()
        .expect("read the exporter")
        .into_iter()
        .filter(|s| s.name == name)
        .collect();
    assert_eq!(spans.len(), 1, "one {name} span");
    spans.into_iter().next().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_sampling_a_trace_starts_by_chance_and_a_sampled_caller_is_followed() {
    use tracing::Instrument;

    exporter();
    let bus = EventBus::builder()
        .traces(true)
        .trace_sampling(0.0)
        .build()
        .unwrap();
    let _skip = echo_traceparent(&bus, "trace.sampling.outside");
    let _join = echo_traceparent(&bus, "trace.sampling.inside");
    // Outside any span, a ratio of 0 starts no trace: no span, no context.
    for _ in 0..20 {
        let reply: Message<String> = bus.request("trace.sampling.outside", 1u32).await.unwrap();
        assert_eq!(reply.body(), "");
    }
    // Inside the program's own (sampled) span, the bus joins its trace.
    let reply: Message<String> = bus
        .request("trace.sampling.inside", 1u32)
        .instrument(tracing::info_span!("caller.sampled"))
        .await
        .unwrap();
    let spans = wait_for(
        "trace.sampling.inside",
        &["request", "deliver", "handle", "reply"],
    )
    .await;
    let caller = caller_span("caller.sampled");
    let request = one(&spans, "request");
    assert_child(request, &caller);
    assert_child(one(&spans, "deliver"), request);
    assert_eq!(
        reply.body(),
        &format!("00-{}-{}-01", trace(request), id(request))
    );
    // Every span of this test has been exported by now (the simple
    // exporter exports as each span ends): none about the first address.
    assert!(spans_at("trace.sampling.outside").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsampled_caller_gets_no_spans_and_its_context_travels_on() {
    use opentelemetry::trace::{SpanContext, TraceContextExt, TraceFlags, TraceState};
    use tracing::Instrument;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    exporter();
    // Every trace the bus starts is sampled; this one was decided
    // upstream, not sampled.
    let bus = EventBus::builder().traces(true).build().unwrap();
    let _c = echo_traceparent(&bus, "trace.unsampled");
    let upstream = SpanContext::new(
        TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
        SpanId::from_hex("00f067aa0ba902b7").unwrap(),
        TraceFlags::default(),
        true,
        TraceState::default(),
    );
    let caller = tracing::info_span!("caller.unsampled");
    caller
        .set_parent(opentelemetry::Context::new().with_remote_span_context(upstream))
        .unwrap();
    let caller_id = caller.context().span().span_context().span_id();
    let reply: Message<String> = bus
        .request("trace.unsampled", 1u32)
        .instrument(caller)
        .await
        .unwrap();
    // The consumer got the caller's trace, its flags "not sampled": its
    // parent is the request's own span, unsampled too (a child of the
    // caller's), so the handler runs in that trace and what it replies or
    // sends carries it on.
    let (head, tail) = reply.body().split_at(36);
    assert_eq!(head, "00-4bf92f3577b34da6a3ce929d0e0e4736-");
    assert!(tail.ends_with("-00"), "{}", reply.body());
    assert_ne!(
        &tail[..16],
        caller_id.to_string(),
        "the request's span is the parent"
    );
    // A sampled request after it, to know the exporter has had time.
    let _marker = echo_traceparent(&bus, "trace.unsampled.marker");
    let _: Message<String> = bus.request("trace.unsampled.marker", 1u32).await.unwrap();
    wait_for(
        "trace.unsampled.marker",
        &["request", "deliver", "handle", "reply"],
    )
    .await;
    assert!(spans_at("trace.unsampled").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn across_nodes_the_senders_sampling_decision_is_followed() {
    use tracing::Instrument;

    let server =
        harness::NatsServer::for_test("across_nodes_the_senders_sampling_decision_is_followed");
    exporter();
    let node = || async {
        EventBus::builder()
            .traces(true)
            .trace_sampling(0.0)
            .default_timeout(Duration::from_secs(5))
            .nats(common::nats_options(&server.url()))
            .connect()
            .await
            .expect("connect to the test server")
    };
    let (a, b) = (node().await, node().await);
    let _skip = echo_traceparent(&b, "trace.remote.skip");
    let _join = echo_traceparent(&b, "trace.remote.join");
    b.flush().await.unwrap();
    // A request outside any trace is not sampled at the sender, and the
    // receiving node starts none either.
    let reply: Message<String> = a.request("trace.remote.skip", 1u32).await.unwrap();
    assert_eq!(reply.body(), "");
    // One made in a sampled trace is traced on both nodes, as one trace.
    let _: Message<String> = a
        .request("trace.remote.join", 1u32)
        .instrument(tracing::info_span!("caller.remote"))
        .await
        .unwrap();
    let spans = wait_for(
        "trace.remote.join",
        &["request", "receive", "deliver", "handle", "reply"],
    )
    .await;
    let caller = caller_span("caller.remote");
    let request = one(&spans, "request");
    assert_child(request, &caller);
    let receive = one(&spans, "receive");
    assert_child(receive, request);
    assert_child(one(&spans, "deliver"), receive);
    assert!(spans_at("trace.remote.skip").is_empty());
    a.close().await;
    b.close().await;
}

/// The trace id of the context a peer outside the bus sampled out
/// (`traceparent` flags `00`), and its parent span.
const FOREIGN_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const FOREIGN_PARENT: &str = "b7ad6b7169203331";

/// What a node's handlers saw of a context that came from outside.
struct Forwarding {
    /// The `traceparent` of the request, as the handler saw it.
    seen: tokio::sync::mpsc::UnboundedReceiver<String>,
    /// The `traceparent` of the message the handler sent on.
    forwarded: tokio::sync::mpsc::UnboundedReceiver<String>,
    _consumers: [codecbus_bus::MessageConsumer; 2],
}

/// A consumer at `address` on `bus` that sends its body on to
/// `{address}.next` (a consumer on the same node) and answers with `0`,
/// each recording the `traceparent` it got.
fn forwarding(bus: &EventBus, address: &str) -> Forwarding {
    let (seen_tx, seen) = tokio::sync::mpsc::unbounded_channel();
    let (forwarded_tx, forwarded) = tokio::sync::mpsc::unbounded_channel();
    let next = format!("{address}.next");
    let sender = bus.clone();
    let first = bus.consumer(address, move |m: Message<u32>| {
        let (sender, next, seen_tx) = (sender.clone(), next.clone(), seen_tx.clone());
        async move {
            let _ = seen_tx.send(
                m.headers()
                    .get("traceparent")
                    .unwrap_or_default()
                    .to_owned(),
            );
            sender.send(&next, *m.body()).await.unwrap();
            m.reply(0u32)
        }
    });
    let second = bus.consumer(&format!("{address}.next"), move |m: Message<u32>| {
        let _ = forwarded_tx.send(
            m.headers()
                .get("traceparent")
                .unwrap_or_default()
                .to_owned(),
        );
        async {}
    });
    Forwarding {
        seen,
        forwarded,
        _consumers: [first, second],
    }
}

/// Asserts that `traceparent` continues the foreign trace, not sampled,
/// from a span of its own.
fn continues_the_foreign_trace(traceparent: Option<&str>, what: &str) {
    let traceparent = traceparent.unwrap_or_else(|| panic!("{what} has no traceparent"));
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(parts.len(), 4, "{what}: {traceparent}");
    assert_eq!(
        (parts[0], parts[1], parts[3]),
        ("00", FOREIGN_TRACE, "00"),
        "{what} stays in the foreign trace, not sampled: {traceparent}"
    );
    assert_eq!(parts[2].len(), 16, "{what}: {traceparent}");
    assert_ne!(parts[2], FOREIGN_PARENT, "{what} names a span of its own");
    assert_ne!(parts[2], "0000000000000000", "{what}: {traceparent}");
}

async fn within_5_s(rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("recorded within 5 s")
        .expect("the consumer is open")
}

/// Checks what `forwarding` recorded after one request carrying the
/// foreign context, then that no span about `address` was exported (a
/// parent-based sampler records none of an unsampled trace).
async fn the_foreign_context_went_on(address: &str, f: &mut Forwarding) {
    use tracing::Instrument;

    let seen = within_5_s(&mut f.seen).await;
    assert_eq!(seen, format!("00-{FOREIGN_TRACE}-{FOREIGN_PARENT}-00"));
    let forwarded = within_5_s(&mut f.forwarded).await;
    continues_the_foreign_trace(Some(&forwarded), "the handler's send");
    // A sampled request after it, to know the exporter has had every span
    // of the first (the simple exporter exports each as it ends).
    let marker = format!("{address}.marker");
    let local = EventBus::builder().traces(true).build().unwrap();
    let _marker = echo_traceparent(&local, &marker);
    let _: Message<String> = local
        .request(&marker, 1u32)
        .instrument(tracing::info_span!("caller.marker"))
        .await
        .unwrap();
    wait_for(&marker, &["request", "deliver", "handle", "reply"]).await;
    assert!(spans_at(address).is_empty(), "{:?}", spans_at(address));
    assert!(spans_at(&format!("{address}.next")).is_empty());
}

/// A request from a peer outside the bus (a plain NATS client) whose trace
/// was sampled out upstream: the node keeps the context on everything the
/// handler does, flag `00`, with every trace sampled and with sampling.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsampled_context_from_a_foreign_peer_stays_on_the_reply_and_the_handlers_sends() {
    use async_nats::HeaderMap;

    let server = harness::NatsServer::for_test(
        "an_unsampled_context_from_a_foreign_peer_stays_on_the_reply_and_the_handlers_sends",
    );
    exporter();
    let raw = async_nats::connect(server.url()).await.unwrap();
    for (ratio, address) in [(1.0, "trace.foreign.all"), (0.0, "trace.foreign.sampled")] {
        let node = EventBus::builder()
            .traces(true)
            .trace_sampling(ratio)
            .default_timeout(Duration::from_secs(5))
            .nats(common::nats_options(&server.url()))
            .connect()
            .await
            .expect("connect to the test server");
        let mut f = forwarding(&node, address);
        node.flush().await.unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("Codecbus-Codec", "1 u32");
        let traceparent = format!("00-{FOREIGN_TRACE}-{FOREIGN_PARENT}-00");
        headers.insert("traceparent", traceparent.as_str());
        let reply = raw
            .request_with_headers(
                format!("codecbus.s.{address}"),
                headers,
                codecbus_core::to_vec(&7u32).unwrap().into(),
            )
            .await
            .unwrap();
        let reply_headers = reply.headers.as_ref().expect("the reply's headers");
        assert_eq!(reply_headers.get("Codecbus-Failure"), None, "{reply:?}");
        continues_the_foreign_trace(
            reply_headers.get("traceparent").map(|v| v.as_str()),
            &format!("the reply (sampling {ratio})"),
        );
        the_foreign_context_went_on(address, &mut f).await;
        node.close().await;
    }
}

/// The same through the in-memory cluster: the foreign context as a header
/// of a node that makes no traces of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsampled_context_from_another_node_stays_on_the_reply_in_memory() {
    use codecbus_bus::{DeliveryOptions, InMemoryCluster};

    exporter();
    let cluster = InMemoryCluster::new();
    let peer = EventBus::builder()
        .in_memory_cluster(&cluster)
        .build()
        .unwrap();
    for (ratio, address) in [(1.0, "trace.memory.all"), (0.0, "trace.memory.sampled")] {
        let node = EventBus::builder()
            .traces(true)
            .trace_sampling(ratio)
            .in_memory_cluster(&cluster)
            .build()
            .unwrap();
        let mut f = forwarding(&node, address);
        let traceparent = format!("00-{FOREIGN_TRACE}-{FOREIGN_PARENT}-00");
        let reply: Message<u32> = peer
            .request_with(
                address,
                7u32,
                DeliveryOptions::new().header("traceparent", traceparent),
            )
            .await
            .unwrap();
        continues_the_foreign_trace(
            reply.headers().get("traceparent"),
            &format!("the reply (sampling {ratio})"),
        );
        the_foreign_context_went_on(address, &mut f).await;
        node.close().await;
    }
    peer.close().await;
}

// Paused clock: the sleep returns once every task is idle, so a span a
// late task would make has been made (and no real time passes).
#[tokio::test(start_paused = true)]
async fn without_traces_no_span_is_made() {
    exporter();
    let bus = EventBus::new();
    let _c = bus.consumer("trace.off", |m: Message<u32>| async move { m.reply(2u32) });
    let reply: Message<u32> = bus.request("trace.off", 1u32).await.unwrap();
    assert_eq!(*reply.body(), 2);
    assert!(reply.headers().get("traceparent").is_none());
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(spans_at("trace.off").is_empty());
}

#[cfg(feature = "jetstream")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redelivered_durable_message_stays_in_its_trace() {
    use codecbus_bus::{DurableOptions, NatsOptions};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    let server = harness::jetstream_for_test("a_redelivered_durable_message_stays_in_its_trace");
    exporter();
    let durable = DurableOptions::new()
        .ack_wait(Duration::from_secs(2))
        .redelivery_delay(Duration::from_millis(50))
        .max_deliveries(3);
    let bus = EventBus::builder()
        .traces(true)
        .nats(
            NatsOptions::new(server.url())
                .connection_name("traced")
                .durable("trace.durable", durable),
        )
        .connect()
        .await
        .unwrap();
    let calls = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&calls);
    let _c = bus.consumer("trace.durable", move |m: Message<u32>| {
        let first = seen.fetch_add(1, Ordering::SeqCst) == 0;
        async move {
            if first {
                Err(format!("not yet ({})", m.body()))
            } else {
                Ok(())
            }
        }
    });
    bus.flush().await.unwrap();
    bus.send("trace.durable", 7u32).await.unwrap();

    let spans = wait_for(
        "trace.durable",
        &[
            "send", "receive", "receive", "deliver", "deliver", "handle", "handle",
        ],
    )
    .await;
    let send = one(&spans, "send");
    let mut deliveries: Vec<i64> = all(&spans, "receive")
        .into_iter()
        .map(|receive| {
            assert_child(receive, send);
            match attribute(receive, "delivery") {
                Some(Value::I64(n)) => *n,
                other => panic!("delivery: {other:?}"),
            }
        })
        .collect();
    deliveries.sort_unstable();
    assert_eq!(deliveries, [1, 2]);
    bus.close().await;
}
