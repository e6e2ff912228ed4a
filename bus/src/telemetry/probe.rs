// Metric handles (feature `metrics`): the `metrics` crate's counters,
// gauges and histograms for one address label, created once and then
// updated without a lookup. Without the feature every type here is
// uninhabited, so an `Option` of one is always `None` and the code that
// updates it compiles away.
//
// Some handles count cluster events only (sizes on the wire, undecodable
// messages, the client's drops): unused without the `nats` feature.
#![cfg_attr(not(feature = "nats"), allow(dead_code))]

#[cfg(feature = "metrics")]
pub(crate) use enabled::*;

#[cfg(not(feature = "metrics"))]
pub(crate) use disabled::*;

/// Why a delivery was refused, as the `reason` label says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RefusedBy {
    QueueFull,
    Invalid,
    NoHandlers,
    TypeMismatch,
}

/// Which interceptor chain dropped a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chain {
    Outbound,
    Inbound,
}

/// How a durable message was settled with the server.
#[cfg(feature = "jetstream")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Settled {
    Acked,
    Redelivered,
    DeadLettered,
}

#[cfg(feature = "jetstream")]
impl Settled {
    /// The `outcome` label.
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    fn label(self) -> &'static str {
        match self {
            Self::Acked => "acked",
            Self::Redelivered => "redelivered",
            Self::DeadLettered => "dead_lettered",
        }
    }
}

/// Where a received message came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Local,
    Remote,
}

#[cfg(feature = "metrics")]
mod enabled {
    use std::sync::OnceLock;

    use ::metrics::{Counter, Gauge, Histogram, Label};

    #[cfg(feature = "jetstream")]
    use super::Settled;
    use super::{Chain, RefusedBy, Side};
    use crate::base::error::{RequestErrorKind, SendErrorKind};

    /// The series names, built once from the prefix.
    pub(crate) struct Names {
        pub(crate) handlers: String,
        pub(crate) pending: String,
        pub(crate) sent: String,
        pub(crate) published: String,
        pub(crate) received: String,
        pub(crate) delivered: String,
        pub(crate) refused: String,
        pub(crate) discarded: String,
        pub(crate) dropped: String,
        pub(crate) reply_failures: String,
        pub(crate) undecodable: String,
        pub(crate) remote_dropped: String,
        pub(crate) remote_disconnects: String,
        pub(crate) remote_denied: String,
        pub(crate) settled: String,
        pub(crate) processing_time: String,
        pub(crate) request_time: String,
        pub(crate) bytes_written: String,
        pub(crate) bytes_read: String,
    }

    impl Names {
        pub(crate) fn new(prefix: &str) -> Self {
            let name = |suffix: &str| format!("{prefix}_{suffix}");
            Self {
                handlers: name("handlers"),
                pending: name("pending"),
                sent: name("sent_total"),
                published: name("published_total"),
                received: name("received_total"),
                delivered: name("delivered_total"),
                refused: name("refused_total"),
                discarded: name("discarded_total"),
                dropped: name("dropped_total"),
                reply_failures: name("reply_failures_total"),
                undecodable: name("undecodable_total"),
                remote_dropped: name("remote_dropped_total"),
                remote_disconnects: name("remote_disconnects_total"),
                remote_denied: name("remote_denied_total"),
                settled: name("durable_settled_total"),
                processing_time: name("processing_time_seconds"),
                request_time: name("request_time_seconds"),
                bytes_written: name("bytes_written"),
                bytes_read: name("bytes_read"),
            }
        }

        /// Describes every series to the recorder (help text and unit).
        pub(crate) fn describe(&self) {
            use ::metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
            describe_gauge!(self.handlers.clone(), "Consumers registered at the address");
            describe_gauge!(
                self.pending.clone(),
                "Messages queued for the address's consumers and not handled yet"
            );
            describe_counter!(self.sent.clone(), "Messages sent (send and request)");
            describe_counter!(self.published.clone(), "Messages published");
            describe_counter!(
                self.received.clone(),
                "Messages that arrived for this node's consumers (side: local or remote)"
            );
            describe_counter!(self.delivered.clone(), "Messages enqueued for a consumer");
            describe_counter!(
                self.refused.clone(),
                "Deliveries refused (reason: QUEUE_FULL, INVALID, NO_HANDLERS, TYPE_MISMATCH)"
            );
            describe_counter!(
                self.discarded.clone(),
                "Queued messages discarded because their consumer was unregistered"
            );
            describe_counter!(
                self.dropped.clone(),
                "Messages dropped by an interceptor (interceptor: outbound or inbound)"
            );
            describe_counter!(
                self.reply_failures.clone(),
                "Requests that ended without a reply (failure: the error kind)"
            );
            describe_counter!(
                self.undecodable.clone(),
                "Messages from the cluster this node could not decode"
            );
            describe_counter!(
                self.remote_dropped.clone(),
                "Messages the cluster client dropped because this node's reader fell behind"
            );
            describe_counter!(
                self.remote_disconnects.clone(),
                "Times this node's cluster connection was lost"
            );
            describe_counter!(
                self.remote_denied.clone(),
                "Publishes and subscriptions the cluster server refused for lack of permission"
            );
            describe_counter!(
                self.settled.clone(),
                "Durable messages settled with the server (outcome: acked, redelivered, dead_lettered)"
            );
            describe_histogram!(
                self.processing_time.clone(),
                Unit::Seconds,
                "Time a handler took for one message"
            );
            describe_histogram!(
                self.request_time.clone(),
                Unit::Seconds,
                "Time from a request to its reply, at the requester"
            );
            describe_histogram!(
                self.bytes_written.clone(),
                Unit::Bytes,
                "Encoded size of a body sent to the cluster"
            );
            describe_histogram!(
                self.bytes_read.clone(),
                Unit::Bytes,
                "Encoded size of a body received from the cluster"
            );
        }
    }

    /// The `reason` label of each [`RefusedBy`], in its order: the spelling
    /// of the matching error kind.
    const REFUSED: [&str; 4] = [
        SendErrorKind::QueueFull.as_str(),
        SendErrorKind::Invalid.as_str(),
        SendErrorKind::NoHandlers.as_str(),
        SendErrorKind::TypeMismatch.as_str(),
    ];

    /// The handles of one address label. Each series is registered with
    /// the recorder when it first gets a value, so a series that never
    /// had one (timings off, the cluster's byte sizes on a local-only
    /// address) is never exported, rather than exported empty (a summary
    /// whose quantiles would read 0 where nothing was measured). After
    /// that, an update is one atomic load more than a handle held outright.
    pub(crate) struct Probe {
        label: Label,
        names: std::sync::Arc<Names>,
        sent: OnceLock<Counter>,
        published: OnceLock<Counter>,
        received: [OnceLock<Counter>; 2],
        delivered: OnceLock<Counter>,
        refused: [OnceLock<Counter>; 4],
        discarded: OnceLock<Counter>,
        dropped: [OnceLock<Counter>; 2],
        undecodable: OnceLock<Counter>,
        handlers: OnceLock<Gauge>,
        pending: OnceLock<Gauge>,
        processing_time: OnceLock<Histogram>,
        request_time: OnceLock<Histogram>,
        bytes_written: OnceLock<Histogram>,
        bytes_read: OnceLock<Histogram>,
        /// Whether handler runs and requests are timed.
        timed: bool,
    }

    impl Probe {
        /// The handles of `address_label`, none registered yet.
        pub(crate) fn new(names: std::sync::Arc<Names>, address_label: &str, timed: bool) -> Self {
            Self {
                label: Label::new("address", address_label.to_owned()),
                names,
                sent: OnceLock::new(),
                published: OnceLock::new(),
                received: Default::default(),
                delivered: OnceLock::new(),
                refused: Default::default(),
                discarded: OnceLock::new(),
                dropped: Default::default(),
                undecodable: OnceLock::new(),
                handlers: OnceLock::new(),
                pending: OnceLock::new(),
                processing_time: OnceLock::new(),
                request_time: OnceLock::new(),
                bytes_written: OnceLock::new(),
                bytes_read: OnceLock::new(),
                timed,
            }
        }

        /// The address label, and `extra` when given.
        fn labels(&self, extra: Option<(&'static str, &'static str)>) -> Vec<Label> {
            let mut labels = vec![self.label.clone()];
            labels.extend(extra.map(|(key, value)| Label::new(key, value)));
            labels
        }

        /// The counter in `cell`, registered as `name` (with `extra`) on
        /// first use.
        #[inline]
        fn counter<'a>(
            &self,
            cell: &'a OnceLock<Counter>,
            name: fn(&Names) -> &String,
            extra: Option<(&'static str, &'static str)>,
        ) -> &'a Counter {
            cell.get_or_init(|| ::metrics::counter!(name(&self.names).clone(), self.labels(extra)))
        }

        #[inline]
        fn gauge<'a>(&self, cell: &'a OnceLock<Gauge>, name: fn(&Names) -> &String) -> &'a Gauge {
            cell.get_or_init(|| ::metrics::gauge!(name(&self.names).clone(), self.labels(None)))
        }

        #[inline]
        fn histogram<'a>(
            &self,
            cell: &'a OnceLock<Histogram>,
            name: fn(&Names) -> &String,
        ) -> &'a Histogram {
            cell.get_or_init(|| ::metrics::histogram!(name(&self.names).clone(), self.labels(None)))
        }

        #[inline]
        pub(crate) fn sent(&self) {
            self.counter(&self.sent, |n| &n.sent, None).increment(1);
        }

        #[inline]
        pub(crate) fn published(&self) {
            self.counter(&self.published, |n| &n.published, None)
                .increment(1);
        }

        #[inline]
        pub(crate) fn received(&self, side: Side) {
            let value = match side {
                Side::Local => "local",
                Side::Remote => "remote",
            };
            self.counter(
                &self.received[side as usize],
                |n| &n.received,
                Some(("side", value)),
            )
            .increment(1);
        }

        #[inline]
        pub(crate) fn delivered(&self, n: u64) {
            if n > 0 {
                self.counter(&self.delivered, |n| &n.delivered, None)
                    .increment(n);
            }
        }

        #[inline]
        pub(crate) fn refused(&self, by: RefusedBy, n: u64) {
            if n > 0 {
                let i = by as usize;
                self.counter(
                    &self.refused[i],
                    |n| &n.refused,
                    Some(("reason", REFUSED[i])),
                )
                .increment(n);
            }
        }

        pub(crate) fn discarded(&self, n: u64) {
            self.counter(&self.discarded, |n| &n.discarded, None)
                .increment(n);
        }

        pub(crate) fn dropped(&self, chain: Chain) {
            let value = match chain {
                Chain::Outbound => "outbound",
                Chain::Inbound => "inbound",
            };
            self.counter(
                &self.dropped[chain as usize],
                |n| &n.dropped,
                Some(("interceptor", value)),
            )
            .increment(1);
        }

        pub(crate) fn undecodable(&self) {
            self.counter(&self.undecodable, |n| &n.undecodable, None)
                .increment(1);
        }

        /// A request that ended in `kind` (rare: looked up each time).
        pub(crate) fn reply_failure(&self, kind: RequestErrorKind) {
            let labels = [self.label.clone(), Label::new("failure", kind.as_str())];
            ::metrics::counter!(self.names.reply_failures.clone(), labels.to_vec()).increment(1);
        }

        /// A durable message settled with the server. Looked up each time
        /// (next to the server's round trip it costs nothing), so an
        /// address without durable messages has no such series.
        #[cfg(feature = "jetstream")]
        pub(crate) fn settled(&self, outcome: Settled) {
            let labels = [self.label.clone(), Label::new("outcome", outcome.label())];
            ::metrics::counter!(self.names.settled.clone(), labels.to_vec()).increment(1);
        }

        pub(crate) fn handler_added(&self) {
            self.gauge(&self.handlers, |n| &n.handlers).increment(1.0);
        }

        pub(crate) fn handler_removed(&self) {
            self.gauge(&self.handlers, |n| &n.handlers).decrement(1.0);
        }

        /// Messages queued for a consumer.
        #[inline]
        pub(crate) fn pending_add(&self, n: usize) {
            self.gauge(&self.pending, |n| &n.pending)
                .increment(n as f64);
        }

        /// Queued messages handed over or discarded.
        #[inline]
        pub(crate) fn pending_sub(&self, n: usize) {
            self.gauge(&self.pending, |n| &n.pending)
                .decrement(n as f64);
        }

        /// The start of a timing (a handler run, a request); `None` with
        /// timings off.
        #[inline]
        pub(crate) fn start(&self) -> Option<Start> {
            self.timed.then(|| Start(quanta::Instant::now()))
        }

        #[inline]
        pub(crate) fn processing_time(&self, seconds: f64) {
            self.histogram(&self.processing_time, |n| &n.processing_time)
                .record(seconds);
        }

        #[inline]
        pub(crate) fn request_time(&self, seconds: f64) {
            self.histogram(&self.request_time, |n| &n.request_time)
                .record(seconds);
        }

        #[inline]
        pub(crate) fn bytes_written(&self, bytes: usize) {
            self.histogram(&self.bytes_written, |n| &n.bytes_written)
                .record(bytes as f64);
        }

        #[inline]
        pub(crate) fn bytes_read(&self, bytes: usize) {
            self.histogram(&self.bytes_read, |n| &n.bytes_read)
                .record(bytes as f64);
        }
    }

    /// When a timed span (a handler run, a request) started: read only with
    /// metrics on.
    #[derive(Clone, Copy)]
    pub(crate) struct Start(quanta::Instant);

    impl Start {
        /// Seconds since the start.
        #[inline]
        pub(crate) fn seconds(self) -> f64 {
            self.0.elapsed().as_secs_f64()
        }
    }

    /// A consumer queue's handles (`None` with metrics off).
    #[derive(Clone)]
    pub(crate) struct ProbeRef(Option<std::sync::Arc<Probe>>);

    impl ProbeRef {
        #[inline]
        pub(crate) fn get(&self) -> Option<&Probe> {
            self.0.as_deref()
        }
    }

    impl From<Option<std::sync::Arc<Probe>>> for ProbeRef {
        fn from(probe: Option<std::sync::Arc<Probe>>) -> Self {
            Self(probe)
        }
    }

    /// The node's counters of what its cluster client reports: messages
    /// it dropped, connections lost, refusals for lack of permission.
    pub(crate) struct ClientEvents {
        dropped: Counter,
        disconnects: Counter,
        denied: Counter,
    }

    impl ClientEvents {
        pub(crate) fn new(names: &Names) -> Self {
            Self {
                dropped: ::metrics::counter!(names.remote_dropped.clone()),
                disconnects: ::metrics::counter!(names.remote_disconnects.clone()),
                denied: ::metrics::counter!(names.remote_denied.clone()),
            }
        }

        pub(crate) fn dropped(&self) {
            self.dropped.increment(1);
        }

        pub(crate) fn disconnected(&self) {
            self.disconnects.increment(1);
        }

        pub(crate) fn denied(&self) {
            self.denied.increment(1);
        }
    }
}

#[cfg(not(feature = "metrics"))]
mod disabled {
    #[cfg(feature = "jetstream")]
    use super::Settled;
    use super::{Chain, RefusedBy, Side};
    use crate::base::error::RequestErrorKind;

    /// Never made without the `metrics` feature.
    pub(crate) enum Probe {}

    #[allow(clippy::unused_self)]
    impl Probe {
        pub(crate) fn sent(&self) {
            match *self {}
        }
        pub(crate) fn published(&self) {
            match *self {}
        }
        pub(crate) fn received(&self, _: Side) {
            match *self {}
        }
        pub(crate) fn delivered(&self, _: u64) {
            match *self {}
        }
        pub(crate) fn refused(&self, _: RefusedBy, _: u64) {
            match *self {}
        }
        pub(crate) fn discarded(&self, _: u64) {
            match *self {}
        }
        pub(crate) fn dropped(&self, _: Chain) {
            match *self {}
        }
        pub(crate) fn undecodable(&self) {
            match *self {}
        }
        pub(crate) fn reply_failure(&self, _: RequestErrorKind) {
            match *self {}
        }
        #[cfg(feature = "jetstream")]
        pub(crate) fn settled(&self, _: Settled) {
            match *self {}
        }
        pub(crate) fn handler_added(&self) {
            match *self {}
        }
        pub(crate) fn handler_removed(&self) {
            match *self {}
        }
        pub(crate) fn pending_add(&self, _: usize) {
            match *self {}
        }
        pub(crate) fn pending_sub(&self, _: usize) {
            match *self {}
        }
        pub(crate) fn start(&self) -> Option<Start> {
            match *self {}
        }
        pub(crate) fn processing_time(&self, _: f64) {
            match *self {}
        }
        pub(crate) fn request_time(&self, _: f64) {
            match *self {}
        }
        pub(crate) fn bytes_written(&self, _: usize) {
            match *self {}
        }
        pub(crate) fn bytes_read(&self, _: usize) {
            match *self {}
        }
    }

    /// Never made without the `metrics` feature.
    #[derive(Clone, Copy)]
    pub(crate) enum Start {}

    impl Start {
        pub(crate) fn seconds(self) -> f64 {
            match self {}
        }
    }

    /// A consumer queue's handles: none without the `metrics` feature, so
    /// nothing is stored or tested.
    #[derive(Clone)]
    pub(crate) struct ProbeRef;

    impl ProbeRef {
        #[inline(always)]
        pub(crate) fn get(&self) -> Option<&Probe> {
            None
        }
    }

    impl From<Option<std::sync::Arc<Probe>>> for ProbeRef {
        fn from(_: Option<std::sync::Arc<Probe>>) -> Self {
            Self
        }
    }

    /// Never made without the `metrics` feature.
    pub(crate) enum ClientEvents {}

    impl ClientEvents {
        pub(crate) fn dropped(&self) {
            match *self {}
        }
        pub(crate) fn disconnected(&self) {
            match *self {}
        }
        pub(crate) fn denied(&self) {
            match *self {}
        }
    }
}
