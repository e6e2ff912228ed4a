// Which messages get spans (traces on): head sampling, decided once per
// trace where it starts and followed everywhere after.
//
// * An operation (send, publish, request) inside a trace follows it: a
//   current span whose OpenTelemetry context is sampled (or, without that
//   feature or layer, any current span) gets the operation traced; a
//   current context that is not sampled gets it untraced, that context
//   still written into the headers so the decision travels on. An
//   operation outside any span starts a trace with the bus's ratio
//   (`EventBusBuilder::trace_sampling`).
// * A message from the cluster follows the context it carries. With the
//   `opentelemetry` feature that is the context the global propagator
//   reads from its headers, sampled or not: either way the message gets
//   its spans, children of that context, so that the context goes on with
//   the reply and with every message the handler sends; for an unsampled
//   context they are unsampled too (W3C flag `00`), and a parent-based
//   SDK sampler records none of them. Without the feature it follows the
//   sampled flag of its `traceparent`. A message without context is
//   traced only when every trace is (ratio 1): with sampling, traces
//   start at operations.
// * A reply that expects an answer (a conversation's turn) follows the
//   request around it.
//
// A message outside every trace makes no span at all: what it costs is
// this decision, a thread-local draw and a look at the current span.

use std::cell::Cell;
use std::hash::{BuildHasher, RandomState};

use tracing::Span;

use crate::base::headers::Headers;

/// The sampling ratio of a bus: which share of the traces it starts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sampling {
    /// A draw below this starts a trace.
    threshold: u64,
    /// Every trace sampled (ratio 1): no draw, and a message without
    /// context is traced too.
    all: bool,
}

/// What an operation does about traces.
pub(crate) enum Decision {
    /// Its spans are made.
    Trace,
    /// No span; nothing to write.
    Skip,
    /// No span, but the current span's context (not sampled) is written
    /// into the headers, so the rest of its trace follows that decision.
    #[cfg_attr(not(feature = "opentelemetry"), allow(dead_code))]
    Carry(Span),
}

/// The trace around the current code.
enum Parent {
    None,
    Sampled,
    #[cfg_attr(not(feature = "opentelemetry"), allow(dead_code))]
    NotSampled(Span),
}

impl Sampling {
    /// Every trace sampled.
    pub(crate) const ALL: Self = Self {
        threshold: u64::MAX,
        all: true,
    };

    /// Starts a share `ratio` of the traces; `None` unless `ratio` is a
    /// number from 0 to 1.
    pub(crate) fn new(ratio: f64) -> Option<Self> {
        if !(0.0..=1.0).contains(&ratio) {
            return None;
        }
        if ratio == 1.0 {
            return Some(Self::ALL);
        }
        // `as` saturates; 2^64 itself is out of reach below 1.
        let threshold = (ratio * 18_446_744_073_709_551_616.0) as u64;
        Some(Self {
            threshold,
            all: false,
        })
    }

    /// The decision for an operation made now.
    pub(crate) fn operation(&self) -> Decision {
        match parent() {
            Parent::Sampled => Decision::Trace,
            Parent::NotSampled(span) => Decision::Carry(span),
            Parent::None if self.all || draw() < self.threshold => Decision::Trace,
            Parent::None => Decision::Skip,
        }
    }

    /// Whether a message from the cluster with `headers` gets spans: with
    /// the `opentelemetry` feature, whenever the global propagator finds
    /// a context in them, sampled or not, so that the context travels on
    /// with the reply and with what the handler sends.
    #[cfg(feature = "opentelemetry")]
    pub(crate) fn arrival(&self, headers: &Headers) -> bool {
        self.all || super::spans::extract(headers).is_some()
    }

    /// Whether a message from the cluster with `headers` gets spans:
    /// without the `opentelemetry` feature no context can travel on, and
    /// the message follows the sampled flag of its `traceparent`.
    #[cfg(not(feature = "opentelemetry"))]
    pub(crate) fn arrival(&self, headers: &Headers) -> bool {
        match headers.get("traceparent").and_then(sampled_flag) {
            Some(sampled) => sampled,
            None => self.all,
        }
    }

    /// Whether work continuing the current code's trace (a reply's turn)
    /// is traced.
    pub(crate) fn continued(&self) -> bool {
        match parent() {
            Parent::Sampled => true,
            Parent::NotSampled(_) => false,
            Parent::None => self.all,
        }
    }
}

/// The trace around the current code: the current span, sampled unless
/// its OpenTelemetry context (when there is one) says otherwise.
fn parent() -> Parent {
    let current = Span::current();
    if current.is_none() {
        return Parent::None;
    }
    #[cfg(feature = "opentelemetry")]
    {
        use opentelemetry::trace::TraceContextExt;
        use tracing_opentelemetry::OpenTelemetrySpanExt;

        let cx = current.context();
        let span_context = cx.span().span_context().clone();
        // An invalid context: no OpenTelemetry layer; the span is the
        // program's own trace then.
        if span_context.is_valid() && !span_context.is_sampled() {
            return Parent::NotSampled(current);
        }
    }
    Parent::Sampled
}

/// The sampled flag of a W3C `traceparent` value
/// (`{version}-{trace id}-{parent id}-{flags}`); `None` when it is not
/// one.
#[cfg(not(feature = "opentelemetry"))]
fn sampled_flag(traceparent: &str) -> Option<bool> {
    let mut parts = traceparent.trim().split('-');
    let (version, trace, parent, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let hex = |s: &str, len: usize| s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit());
    if !(hex(version, 2) && hex(trace, 32) && hex(parent, 16) && hex(flags, 2)) {
        return None;
    }
    // Version 00 has exactly four fields; a later one may add more.
    if version == "00" && parts.next().is_some() {
        return None;
    }
    let flags = u8::from_str_radix(flags, 16).ok()?;
    Some(flags & 1 == 1)
}

thread_local! {
    /// This thread's sampling draws (xorshift64*), seeded at random.
    static DRAWS: Cell<u64> = Cell::new(RandomState::new().hash_one(0x5eed_u64) | 1);
}

/// A uniform draw over `u64`.
fn draw() -> u64 {
    DRAWS.with(|state| {
        let mut x = state.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_outside_zero_to_one_are_refused() {
        for ratio in [-0.1, 1.01, f64::NAN, f64::INFINITY] {
            assert!(Sampling::new(ratio).is_none(), "{ratio}");
        }
        assert!(Sampling::new(0.0).is_some());
        assert!(Sampling::new(1.0).unwrap().all);
    }

    #[test]
    fn outside_any_span_a_share_of_operations_is_traced() {
        let count = |ratio: f64| {
            let sampling = Sampling::new(ratio).unwrap();
            (0..100_000)
                .filter(|_| matches!(sampling.operation(), Decision::Trace))
                .count()
        };
        assert_eq!(count(0.0), 0);
        assert_eq!(count(1.0), 100_000);
        // 1 000 expected; ±5 standard deviations.
        let one_percent = count(0.01);
        assert!((850..=1150).contains(&one_percent), "{one_percent}");
        let half = count(0.5);
        assert!((49_200..=50_800).contains(&half), "{half}");
    }

    #[cfg(not(feature = "opentelemetry"))]
    #[test]
    fn an_arrival_follows_the_sampled_flag_it_carries() {
        let sampling = Sampling::new(0.0).unwrap();
        let with = |value: &str| {
            let mut headers = Headers::new();
            headers.insert("traceparent", value);
            sampling.arrival(&headers)
        };
        let id = "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7";
        assert!(with(&format!("00-{id}-01")));
        assert!(with(&format!("00-{id}-03")));
        assert!(!with(&format!("00-{id}-00")));
        assert!(with(&format!("01-{id}-01-extra")));
        // Not a traceparent: as if there were none.
        assert!(!with(&format!("00-{id}-01-extra")));
        assert!(!with("00-xyz-01"));
        assert!(!sampling.arrival(&Headers::new()));
        assert!(Sampling::ALL.arrival(&Headers::new()));
    }
}
