// Spans (traces on): one per send, publish and request at the sender, one
// per message arriving from the cluster (`receive`), one per delivery to a
// consumer, one per handler run and one per reply. A delivery's span is
// made when the message is enqueued, as a child of the span current then
// (the operation's, or the `receive` of a message from the cluster), and
// travels in the envelope; the handler runs in a child of it, and a reply
// is a child of it too.
//
// With the `opentelemetry` feature, the sender's span context is written
// into the message headers by the program's global OpenTelemetry
// propagator (`opentelemetry::global::get_text_map_propagator`; W3C Trace
// Context, `traceparent` and `tracestate`, with `TraceContextPropagator`)
// and a `receive` span takes the context the propagator finds there as
// its parent, so one trace crosses nodes. That needs the
// `tracing-opentelemetry` layer in the subscriber and a propagator set
// (the global default writes nothing); without them the headers stay as
// they are.

use tracing::field::Empty;
use tracing::{Span, info_span};

use crate::base::headers::Headers;
use crate::base::interceptor::DeliveryKind;

/// A delivery's span, travelling with the message: empty (one null
/// pointer) unless traces are on. Dropping an empty one is a test of the
/// pointer, the span's own drop kept out of line.
#[derive(Default)]
pub(crate) struct SpanSlot(Option<Box<Span>>);

impl SpanSlot {
    /// No span (traces off).
    pub(crate) const NONE: Self = Self(None);

    /// A new `deliver` span (see [`deliver`]); none when the subscriber
    /// takes no such span.
    #[cold]
    #[inline(never)]
    pub(crate) fn deliver(address: &str, kind: DeliveryKind, body: &str) -> Self {
        let span = deliver(address, kind, body);
        if span.is_disabled() {
            Self::NONE
        } else {
            Self(Some(Box::new(span)))
        }
    }

    /// A `deliver` span (kind `reply`) for a reply that expects an answer,
    /// a turn of a conversation: a child of the `reply` span that made it
    /// when `headers` carry its context (feature `opentelemetry`), else of
    /// the current span. The answer's `reply` span is its child, so the
    /// trace goes on turn after turn. None when the subscriber takes no
    /// such span.
    #[cold]
    #[inline(never)]
    pub(crate) fn turn(address: &str, body: &str, headers: &Headers) -> Self {
        let span = deliver(address, DeliveryKind::Reply, body);
        if span.is_disabled() {
            return Self::NONE;
        }
        adopt_remote_parent(&span, headers);
        Self(Some(Box::new(span)))
    }

    /// The span, if there is one.
    #[inline]
    pub(crate) fn get(&self) -> Option<&Span> {
        self.0.as_deref()
    }
}

impl Drop for SpanSlot {
    #[inline]
    fn drop(&mut self) {
        if let Some(span) = self.0.take() {
            close(span);
        }
    }
}

#[cold]
#[inline(never)]
fn close(span: Box<Span>) {
    drop(span);
}

/// The span of an operation at the sender: its name and OpenTelemetry
/// kind, the address and codec; the encoded size and outcome are recorded
/// later.
macro_rules! operation_span {
    ($name:literal, $kind:literal, $address:expr, $codec:expr) => {
        info_span!(
            target: "codecbus_bus",
            $name,
            address = $address,
            codec = $codec,
            body_size = Empty,
            outcome = Empty,
            otel.kind = $kind,
            otel.status_code = Empty,
        )
    };
}

/// The span of a `send`.
pub(crate) fn send(address: &str, codec: &str) -> Span {
    operation_span!("send", "producer", address, codec)
}

/// The span of a `publish`.
pub(crate) fn publish(address: &str, codec: &str) -> Span {
    operation_span!("publish", "producer", address, codec)
}

/// The span of a `request`, until its reply (or failure).
pub(crate) fn request(address: &str, codec: &str) -> Span {
    operation_span!("request", "client", address, codec)
}

/// The span of a message from the cluster arriving for this node's
/// consumers, a child of the sender's span when the headers carry its
/// context (feature `opentelemetry`).
#[cfg_attr(not(feature = "nats"), allow(dead_code))]
pub(crate) fn receive(address: &str, codec: &str, body_size: usize, headers: &Headers) -> Span {
    let body_size = as_i64(body_size);
    let span = info_span!(
        target: "codecbus_bus",
        parent: None,
        "receive",
        address,
        codec,
        body_size,
        delivery = Empty,
        otel.kind = "consumer",
    );
    adopt_remote_parent(&span, headers);
    span
}

/// The span of one delivery to one consumer (of the Rust type `body`), a
/// child of the current span; it lasts until the consumer is done with
/// the message.
pub(crate) fn deliver(address: &str, kind: DeliveryKind, body: &str) -> Span {
    info_span!(
        target: "codecbus_bus",
        "deliver",
        address,
        kind = kind_name(kind),
        body,
        otel.kind = if kind == DeliveryKind::Request { "server" } else { "consumer" },
    )
}

/// The span of a handler's run on the message delivered in `delivery`.
pub(crate) fn handle(delivery: &Span, address: &str) -> Span {
    info_span!(
        target: "codecbus_bus",
        parent: delivery,
        "handle",
        address,
        outcome = Empty,
        otel.status_code = Empty,
    )
}

/// The span of a reply (or failure) to the message delivered in
/// `delivery`.
pub(crate) fn reply(delivery: &Span, address: &str) -> Span {
    info_span!(
        target: "codecbus_bus",
        parent: delivery,
        "reply",
        address,
        outcome = Empty,
        otel.kind = "producer",
        otel.status_code = Empty,
    )
}

/// Records the encoded size of the message of the current span.
#[cfg_attr(not(feature = "nats"), allow(dead_code))]
pub(crate) fn body_size(bytes: usize) {
    Span::current().record("body_size", as_i64(bytes));
}

/// A size as a signed integer: OpenTelemetry's integer attributes are
/// `i64`, and an unsigned value would be exported as text.
fn as_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn kind_name(kind: DeliveryKind) -> &'static str {
    match kind {
        DeliveryKind::Send => "send",
        DeliveryKind::Publish => "publish",
        DeliveryKind::Request => "request",
        DeliveryKind::Reply => "reply",
    }
}

/// Writes `span`'s context into `headers` with the global propagator.
#[cfg(feature = "opentelemetry")]
pub(crate) fn inject(span: &Span, headers: &mut Headers) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    struct Carrier<'a>(&'a mut Headers);
    impl opentelemetry::propagation::Injector for Carrier<'_> {
        fn set(&mut self, key: &str, value: String) {
            // W3C Trace Context: a `tracestate` without vendor entries is
            // not sent at all; one a forwarded message carried from an
            // earlier trace goes too.
            if value.is_empty() {
                self.0.remove(key);
            } else {
                self.0.insert(key, value);
            }
        }
    }
    let cx = span.context();
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&cx, &mut Carrier(headers));
    });
}

/// Without the `opentelemetry` feature no context is written.
#[cfg(not(feature = "opentelemetry"))]
#[inline]
pub(crate) fn inject(_span: &Span, _headers: &mut Headers) {}

/// The context `headers` carry, read by the global propagator; `None`
/// when they carry none it reads (or it is the default, which reads
/// nothing).
#[cfg(feature = "opentelemetry")]
pub(crate) fn extract(headers: &Headers) -> Option<opentelemetry::Context> {
    use opentelemetry::trace::TraceContextExt;

    struct Carrier<'a>(&'a Headers);
    impl opentelemetry::propagation::Extractor for Carrier<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key)
        }
        fn keys(&self) -> Vec<&str> {
            self.0.iter().map(|(name, _)| name).collect()
        }
    }
    let cx = opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.extract(&Carrier(headers))
    });
    cx.span().span_context().is_valid().then_some(cx)
}

/// Makes the context `headers` carry the parent of `span`, which must not
/// have been entered yet.
#[cfg(feature = "opentelemetry")]
fn adopt_remote_parent(span: &Span, headers: &Headers) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    if let Some(cx) = extract(headers) {
        // Err only without the OpenTelemetry layer: nothing to link then.
        let _ = span.set_parent(cx);
    }
}

#[cfg(not(feature = "opentelemetry"))]
fn adopt_remote_parent(_span: &Span, _headers: &Headers) {}
