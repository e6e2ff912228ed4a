// Telemetry: what the bus reports beyond its own counters (`metrics.rs`).
//
// * Metrics (feature `metrics`): each address's counters, gauges and
//   histograms through the `metrics` crate facade. `Telemetry::probe`
//   finds an address's handles (`probe::Probe`) in a cache, so an
//   operation looks up once and then updates handles; a consumer keeps
//   its address's probe for its whole life. Without the feature, or with
//   metrics off, `probe` is `None` and nothing else happens.
// * Traces: spans for every operation, delivery, handler run and reply
//   (`spans.rs`), made only when the bus was built with traces on, for the
//   messages of sampled traces (`sampling.rs`).

#[cfg(feature = "metrics")]
pub(crate) mod options;
pub(crate) mod probe;
pub(crate) mod record;
pub(crate) mod sampling;
pub(crate) mod spans;

use std::sync::Arc;

#[cfg(feature = "jetstream")]
pub(crate) use probe::Settled;
pub(crate) use probe::{Chain, ClientEvents, Probe, Side};
pub(crate) use sampling::{Decision, Sampling};

/// The telemetry switches and state of one bus.
pub(crate) struct Telemetry {
    traces: bool,
    sampling: Sampling,
    #[cfg(feature = "metrics")]
    metrics: Option<recorder::Recorder>,
}

impl Telemetry {
    /// Traces on or off (sampled as `sampling` says), metrics off.
    pub(crate) fn new(traces: bool, sampling: Sampling) -> Self {
        Self {
            traces,
            sampling,
            #[cfg(feature = "metrics")]
            metrics: None,
        }
    }

    /// Metrics as `options` say (`None`: off).
    #[cfg(feature = "metrics")]
    pub(crate) fn with_metrics(mut self, options: Option<&options::MetricsOptions>) -> Self {
        self.metrics = options.map(recorder::Recorder::new);
        self
    }

    /// Whether neither traces nor metrics are on: an operation then has
    /// nothing to observe, told by one test.
    #[inline]
    pub(crate) fn quiet(&self) -> bool {
        #[cfg(feature = "metrics")]
        let metrics = self.metrics.is_some();
        #[cfg(not(feature = "metrics"))]
        let metrics = false;
        !self.traces && !metrics
    }

    /// Whether a span made now would be taken: traces on, and the current
    /// subscriber takes INFO spans of the bus's target. When it would not
    /// (no subscriber, or one that filters them out), the bus skips the
    /// work of making spans and writing context.
    #[inline]
    pub(crate) fn tracing_now(&self) -> bool {
        self.traces && tracing::span_enabled!(target: "codecbus_bus", tracing::Level::INFO)
    }

    /// Whether an operation made now gets spans, or carries an unsampled
    /// context on.
    #[inline]
    pub(crate) fn trace_operation(&self) -> Decision {
        if self.tracing_now() {
            self.sampling.operation()
        } else {
            Decision::Skip
        }
    }

    /// Whether a message arriving from the cluster with `headers` gets
    /// spans.
    #[inline]
    pub(crate) fn trace_arrival(&self, headers: &crate::base::headers::Headers) -> bool {
        self.tracing_now() && self.sampling.arrival(headers)
    }

    /// Whether a conversation's turn arriving now (a reply that expects
    /// an answer) gets a span: when the request around it is traced.
    #[inline]
    pub(crate) fn trace_turn(&self) -> bool {
        self.tracing_now() && self.sampling.continued()
    }

    /// The metric handles `address` counts under; `None` with metrics off
    /// or for an excluded address.
    #[inline]
    pub(crate) fn probe(&self, address: &str) -> Option<Arc<Probe>> {
        #[cfg(feature = "metrics")]
        {
            self.metrics.as_ref()?.probe(address)
        }
        #[cfg(not(feature = "metrics"))]
        {
            let _ = address;
            None
        }
    }

    /// The counters of what the cluster client reports (metrics on).
    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    pub(crate) fn client_events(&self) -> Option<ClientEvents> {
        #[cfg(feature = "metrics")]
        {
            self.metrics
                .as_ref()
                .map(|recorder| ClientEvents::new(&recorder.names))
        }
        #[cfg(not(feature = "metrics"))]
        None
    }
}

#[cfg(feature = "metrics")]
mod recorder {
    use std::collections::HashMap;
    use std::hash::BuildHasherDefault;
    use std::sync::{Arc, Mutex, PoisonError, RwLock};

    use super::options::{MetricsOptions, OTHER};
    use super::probe::{Names, Probe};
    use crate::base::hash::AddressHasher;

    /// Addresses remembered with their probe; past this many, an address
    /// seen for the first time is resolved on every message instead
    /// (rules, then the label table), so memory stays bounded too.
    const CACHE_LIMIT: usize = 4096;

    type Map<V> = HashMap<Arc<str>, V, BuildHasherDefault<AddressHasher>>;

    pub(super) struct Recorder {
        options: MetricsOptions,
        pub(super) names: Arc<Names>,
        /// Address to probe (`None`: excluded).
        cache: RwLock<Map<Option<Arc<Probe>>>>,
        /// Label to probe: at most `max_addresses` entries plus `_other`.
        labels: Mutex<Map<Arc<Probe>>>,
    }

    impl Recorder {
        pub(super) fn new(options: &MetricsOptions) -> Self {
            let names = Arc::new(Names::new(&options.prefix));
            names.describe();
            Self {
                options: options.clone(),
                names,
                cache: RwLock::default(),
                labels: Mutex::default(),
            }
        }

        #[inline]
        pub(super) fn probe(&self, address: &str) -> Option<Arc<Probe>> {
            let cache = self.cache.read().unwrap_or_else(PoisonError::into_inner);
            match cache.get(address) {
                Some(probe) => probe.clone(),
                None => {
                    drop(cache);
                    self.resolve(address)
                }
            }
        }

        #[cold]
        fn resolve(&self, address: &str) -> Option<Arc<Probe>> {
            let probe = self.options.label_of(address).map(|label| {
                let mut labels = self.labels.lock().unwrap_or_else(PoisonError::into_inner);
                let label =
                    if labels.contains_key(&label) || labels.len() < self.options.max_addresses {
                        label
                    } else {
                        Arc::from(OTHER)
                    };
                Arc::clone(labels.entry(Arc::clone(&label)).or_insert_with(|| {
                    Arc::new(Probe::new(
                        Arc::clone(&self.names),
                        &label,
                        self.options.timings,
                    ))
                }))
            });
            let mut cache = self.cache.write().unwrap_or_else(PoisonError::into_inner);
            if cache.len() < CACHE_LIMIT {
                cache.insert(Arc::from(address), probe.clone());
            }
            probe
        }
    }
}
