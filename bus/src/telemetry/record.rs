// One record per event. Everything the bus counts happens here, once:
// the bus's own counters (`EventBus::metrics`), with metrics on the
// address's series (`probe.rs`), and with traces on the outcome of the
// span the event ends (`record_in`), from the same event. A new event, or
// a new sink, is one change in this file; the code where the event
// happens names the event and nothing else.
//
// What is measured rather than counted (handler and request times, sizes
// on the wire, the pending and handler gauges) goes straight to the probe.

use tracing::Span;

use crate::base::error::{Error, KindName, RequestErrorKind};
use crate::base::metrics::{Counters, bump};
#[cfg(feature = "jetstream")]
use crate::telemetry::probe::Settled;
use crate::telemetry::probe::{Chain, Probe, RefusedBy, Side};

/// Something that happened to a message, as the bus counts it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// A `send` or `request` was made.
    Sent,
    /// A `publish` was made.
    Published,
    /// A message arrived for this node's consumers: made here (`Local`,
    /// counted in the series only), or from the cluster (`Remote`).
    Received(Side),
    /// Messages were enqueued for consumers.
    Delivered(u64),
    /// Deliveries were refused, for this reason.
    Refused(RefusedBy, u64),
    /// An interceptor dropped a message.
    Dropped(Chain),
    /// Queued messages were discarded (their consumer went away).
    Discarded(u64),
    /// A message was handed to a handler or taken from a stream.
    Handled,
    /// A reply was sent.
    Replied,
    /// A handler panicked.
    Panicked,
    /// A handler returned an error.
    HandlerFailed,
    /// An operation ended (a send, publish, request, reply or handler
    /// run): well (`None`), or with the failure of this name.
    Ended(Option<&'static str>),
    /// A request (or a conversation's turn) ended without a reply, with
    /// this failure: a timeout and a recipient failure are counted in the
    /// bus counters too.
    ReplyFailed(RequestErrorKind),
    /// A message from the cluster could not be decoded.
    Undecodable,
    /// The first message from the cluster under one of a codec's aliases
    /// (an older peer's name for it) was decoded.
    OldCodecName,
    /// A peer's shape of a codec that this node cannot read was learned.
    #[cfg_attr(not(feature = "shapes"), allow(dead_code))]
    ShapeMismatch,
    /// A peer's other shape of a codec, which this node reads, was
    /// learned.
    #[cfg_attr(not(feature = "shapes"), allow(dead_code))]
    ShapeDifference,
    /// A durable message was settled with the server.
    #[cfg(feature = "jetstream")]
    Settled(Settled),
}

impl Event {
    /// The end of an operation that returned `result`.
    #[inline]
    pub(crate) fn ended<T, K: KindName>(result: &Result<T, Error<K>>) -> Self {
        Self::Ended(result.as_ref().err().map(|err| err.kind().name()))
    }
}

/// [`record`], and with `span` (traces on) the outcome of the span's
/// operation when `event` ends it: `ok`, the failure's name, `error` (the
/// handler returned one) or `panic`.
#[inline]
pub(crate) fn record_in(
    counters: &Counters,
    probe: Option<&Probe>,
    span: Option<&Span>,
    event: Event,
) {
    record(counters, probe, event);
    if let Some(span) = span {
        outcome(span, event);
    }
}

/// [`record_in`] for an event that nothing but its span reads (the end of
/// a reply, where no bus may be at hand).
#[inline]
pub(crate) fn record_end(span: &Span, event: Event) {
    debug_assert!(matches!(event, Event::Ended(_)), "counted nowhere else");
    outcome(span, event);
}

/// Records `event` in `counters` and, with metrics on, under the
/// address of `probe`.
#[inline]
pub(crate) fn record(counters: &Counters, probe: Option<&Probe>, event: Event) {
    match event {
        Event::Sent => bump(&counters.sent, 1),
        Event::Published => bump(&counters.published, 1),
        Event::Received(Side::Local) => 0,
        Event::Received(Side::Remote) => bump(&counters.remote_received, 1),
        Event::Delivered(n) => bump(&counters.delivered, n),
        Event::Refused(by, n) => {
            let counter = match by {
                RefusedBy::QueueFull => &counters.refused,
                RefusedBy::Invalid => &counters.invalid,
                RefusedBy::NoHandlers => &counters.no_handlers,
                RefusedBy::TypeMismatch => &counters.type_mismatches,
            };
            bump(counter, n)
        }
        Event::Dropped(_) => bump(&counters.dropped, 1),
        Event::Discarded(n) => bump(&counters.discarded, n),
        Event::Handled => bump(&counters.handled, 1),
        Event::Replied => bump(&counters.replies, 1),
        Event::Panicked => bump(&counters.panics, 1),
        Event::HandlerFailed | Event::Ended(_) => 0,
        Event::ReplyFailed(RequestErrorKind::Timeout) => bump(&counters.timeouts, 1),
        Event::ReplyFailed(RequestErrorKind::RecipientFailure) => {
            bump(&counters.recipient_failures, 1)
        }
        Event::ReplyFailed(_) => 0,
        Event::Undecodable => bump(&counters.undecodable, 1),
        Event::OldCodecName => bump(&counters.old_codec_names, 1),
        Event::ShapeMismatch => bump(&counters.shape_mismatches, 1),
        Event::ShapeDifference => bump(&counters.shape_differences, 1),
        #[cfg(feature = "jetstream")]
        Event::Settled(outcome) => bump(
            match outcome {
                Settled::Acked => &counters.durable_acked,
                Settled::Redelivered => &counters.durable_redelivered,
                Settled::DeadLettered => &counters.dead_lettered,
            },
            1,
        ),
    };
    if let Some(probe) = probe {
        series(probe, event);
    }
}

/// The event in the address's series (metrics on).
#[inline(never)]
fn series(probe: &Probe, event: Event) {
    match event {
        Event::Sent => probe.sent(),
        Event::Published => probe.published(),
        Event::Received(side) => probe.received(side),
        Event::Delivered(n) => probe.delivered(n),
        Event::Refused(by, n) => probe.refused(by, n),
        Event::Dropped(chain) => probe.dropped(chain),
        Event::Discarded(n) => probe.discarded(n),
        Event::ReplyFailed(kind) => probe.reply_failure(kind),
        Event::Undecodable => probe.undecodable(),
        #[cfg(feature = "jetstream")]
        Event::Settled(outcome) => probe.settled(outcome),
        // The bus's own totals, or a span's alone; no series of their own.
        Event::Handled
        | Event::OldCodecName
        | Event::ShapeMismatch
        | Event::ShapeDifference
        | Event::Replied
        | Event::Panicked
        | Event::HandlerFailed
        | Event::Ended(_) => {}
    }
}

/// The event as its span's outcome (traces on), when it ends the span's
/// operation.
#[inline(never)]
fn outcome(span: &Span, event: Event) {
    let failure = match event {
        Event::Ended(failure) => failure,
        Event::HandlerFailed => Some("error"),
        Event::Panicked => Some("panic"),
        _ => return,
    };
    match failure {
        None => {
            span.record("outcome", "ok");
        }
        Some(failure) => {
            span.record("outcome", failure);
            span.record("otel.status_code", "ERROR");
        }
    }
}
