//! The builder of an [`EventBus`]: defaults, codecs, interceptors,
//! traces and metrics, and the cluster transport it joins (NATS, or an
//! in-memory cluster).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use codecbus_core::CodecRegistration;

use crate::api::bus::EventBus;
use crate::base::error::BuildError;
use crate::base::interceptor::{DeliveryContext, Interceptors, Verdict};
use crate::base::options::{DEFAULT_QUEUE_CAPACITY, DEFAULT_TIMEOUT};
use crate::engine::InMemoryCluster;
use crate::engine::registry::Registry;
use crate::engine::state::{Joined, Parts, State};
#[cfg(feature = "nats")]
use crate::engine::{NatsOptions, connect_nats};
use crate::telemetry::{Sampling, Telemetry};

/// Builds an [`EventBus`]: default timeout and queue capacity, extra codec
/// registrations, interceptors, telemetry, and the cluster it joins.
///
/// The type parameter is the cluster transport, chosen once:
/// [`InProcess`] (the default) and [`InMemory`] builders are finished with
/// [`build`](EventBusBuilder::build), a `Nats` one (feature `nats`) only
/// with `connect().await`. A builder joins at most one cluster,
/// and a NATS builder cannot be finished without connecting: the compiler
/// says so, not a run-time error.
///
/// ```compile_fail
/// # use codecbus_bus::{EventBus, InMemoryCluster};
/// let cluster = InMemoryCluster::new();
/// // no method `in_memory_cluster` on a builder that joined a cluster already
/// let _ = EventBus::builder().in_memory_cluster(&cluster).in_memory_cluster(&cluster);
/// ```
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use codecbus_bus::EventBus;
///
/// let bus = EventBus::builder()
///     .default_timeout(Duration::from_secs(5))
///     .default_queue_capacity(64)
///     .build()
///     .unwrap();
/// assert_eq!(bus.default_timeout(), Duration::from_secs(5));
/// ```
#[must_use]
pub struct EventBusBuilder<C = InProcess> {
    default_timeout: Duration,
    default_capacity: usize,
    codecs: Vec<CodecRegistration>,
    interceptors: Interceptors,
    traces: bool,
    trace_sampling: f64,
    #[cfg(feature = "metrics")]
    metrics: Option<crate::telemetry::options::MetricsOptions>,
    cluster: C,
}

/// The cluster transports of an [`EventBusBuilder`], its type parameter
/// (`codecbus_bus::builder`):
/// which one a builder has decides how it is finished.
pub mod states {
    #[cfg(doc)]
    use super::EventBusBuilder;
    use crate::engine::InMemoryCluster;
    #[cfg(feature = "nats")]
    use crate::engine::NatsOptions;

    /// No cluster: the bus is purely in-process
    /// ([`EventBusBuilder::build`]).
    #[derive(Debug, Clone, Copy, Default)]
    pub struct InProcess;

    /// A node of an [`InMemoryCluster`](crate::InMemoryCluster)
    /// ([`EventBusBuilder::in_memory_cluster`], then `build`).
    #[derive(Debug, Clone)]
    pub struct InMemory(pub(crate) InMemoryCluster);

    /// A node of a NATS cluster ([`EventBusBuilder::nats`], then
    /// `connect().await`).
    #[cfg(feature = "nats")]
    #[cfg_attr(docsrs, doc(cfg(feature = "nats")))]
    #[derive(Debug)]
    pub struct Nats(pub(crate) NatsOptions);

    /// The states finished with [`build`](EventBusBuilder::build):
    /// [`InProcess`] and [`InMemory`]. A [`Nats`](self) builder is not one
    /// of them, and calling `build` on it is a compile error that says to
    /// `connect().await` instead.
    ///
    /// Sealed: implemented by these two states only.
    #[diagnostic::on_unimplemented(
        message = "a builder that joins NATS is finished with `connect().await`, not `build()`",
        label = "use `.connect().await` here",
        note = "`connect` reaches the NATS server before it returns the bus: `EventBus::builder().nats(options).connect().await?`"
    )]
    pub trait Build: sealed::Joins {}

    impl Build for InProcess {}
    impl Build for InMemory {}

    // The sealed supertrait of `Build`: reachable as a bound, nameable by
    // no one outside the crate, so its crate-private type is never seen.
    #[allow(private_interfaces)]
    pub(super) mod sealed {
        use crate::engine::state::Joined;

        /// What a finished builder joins.
        pub trait Joins {
            fn joined(self) -> Joined;
        }

        impl Joins for super::InProcess {
            fn joined(self) -> Joined {
                Joined::Alone
            }
        }

        impl Joins for super::InMemory {
            fn joined(self) -> Joined {
                Joined::InMemory(self.0)
            }
        }
    }
}

use states::{InMemory, InProcess};

impl Default for EventBusBuilder<InProcess> {
    fn default() -> Self {
        Self {
            default_timeout: DEFAULT_TIMEOUT,
            default_capacity: DEFAULT_QUEUE_CAPACITY,
            codecs: Vec::new(),
            interceptors: Interceptors::default(),
            traces: false,
            trace_sampling: 1.0,
            #[cfg(feature = "metrics")]
            metrics: None,
            cluster: InProcess,
        }
    }
}

impl<C> EventBusBuilder<C> {
    /// How long a request waits for its reply unless its options say
    /// otherwise ([`DEFAULT_TIMEOUT`] by default).
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// The queue capacity of consumers that do not set their own
    /// ([`DEFAULT_QUEUE_CAPACITY`] by default).
    ///
    /// # Panics
    ///
    /// When `capacity` is 0.
    pub fn default_queue_capacity(mut self, capacity: usize) -> Self {
        assert!(
            capacity > 0,
            "a consumer queue needs a capacity of at least 1"
        );
        self.default_capacity = capacity;
        self
    }

    /// Adds a codec registration to those collected from `inventory` (for
    /// hand-written codecs, or types registered under a name of your
    /// choosing). The same registration twice is harmless; a clash is a
    /// build error.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{BuildErrorKind, EventBus};
    /// use codecbus_core::CodecRegistration;
    ///
    /// let err = EventBus::builder()
    ///     .codec(CodecRegistration::of::<Vec<u32>>("numbers"))
    ///     .codec(CodecRegistration::of::<Vec<u64>>("numbers"))
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(err.kind(), BuildErrorKind::CodecConflict);
    /// // The cause names the codec and both types.
    /// let text = err.to_string();
    /// assert!(text.contains("\"numbers\"") && text.contains("Vec<u32>") && text.contains("Vec<u64>"));
    /// ```
    pub fn codec(mut self, registration: CodecRegistration) -> Self {
        self.codecs.push(registration);
        self
    }

    /// Adds an interceptor that sees every message this bus sends, publishes,
    /// requests or replies, before delivery; it may change the headers and
    /// may drop the message. Interceptors run in the order added.
    ///
    /// An interceptor that panics drops the message, outbound and inbound
    /// alike: the panic is caught (it never unwinds into the sender's task
    /// or the consumer's), logged at error level with its text, and the
    /// message counts in [`Metrics::dropped`](crate::Metrics::dropped), as
    /// a [`Verdict::Drop`] would. The operation fails with its `Dropped`
    /// kind.
    ///
    /// # Examples
    ///
    /// See [`DeliveryContext`](crate::DeliveryContext).
    pub fn outbound_interceptor<F>(mut self, interceptor: F) -> Self
    where
        F: Fn(&mut DeliveryContext<'_>) -> Verdict + Send + Sync + 'static,
    {
        self.interceptors.outbound.push(Arc::new(interceptor));
        self
    }

    /// Adds an interceptor that sees every message just before a consumer
    /// of this bus handles it (or its stream yields it); it may change the
    /// headers that consumer sees and may drop the message. One that panics
    /// drops the message, as an outbound one does (see
    /// [`outbound_interceptor`](Self::outbound_interceptor)): a request
    /// then fails with `RecipientFailure`.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{DeliveryContext, EventBus, Message, Verdict};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let seen = Arc::new(AtomicUsize::new(0));
    /// let counter = Arc::clone(&seen);
    /// let bus = EventBus::builder()
    ///     .inbound_interceptor(move |_ctx: &mut DeliveryContext<'_>| {
    ///         counter.fetch_add(1, Ordering::Relaxed);
    ///         Verdict::Continue
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let _c = bus.consumer("a", |m: Message<u8>| async move { m.reply(0u8) });
    /// let _: Message<u8> = bus.request("a", 1u8).await.unwrap();
    /// assert_eq!(seen.load(Ordering::Relaxed), 1);
    /// # }
    /// ```
    pub fn inbound_interceptor<F>(mut self, interceptor: F) -> Self
    where
        F: Fn(&mut DeliveryContext<'_>) -> Verdict + Send + Sync + 'static,
    {
        self.interceptors.inbound.push(Arc::new(interceptor));
        self
    }

    /// Makes a `tracing` span for every send, publish and request, every
    /// delivery to a consumer, every handler run and every reply (off by
    /// default: no span is made, nothing is spent). A handler runs inside
    /// its delivery's span, so what it logs is attributed to the message.
    /// When the program's subscriber filters the bus's spans out (target
    /// `codecbus_bus`, level INFO), the bus makes none and writes no
    /// context, at the cost of one check per message. See the
    /// [crate docs](crate#traces) for the spans and their fields.
    pub fn traces(mut self, on: bool) -> Self {
        self.traces = on;
        self
    }

    /// With [`traces`](Self::traces) on, the share of traces the bus
    /// starts, from 0 to 1 (default 1: every message is traced). Sampling
    /// is decided once, where a trace starts, and followed by everything
    /// after it:
    ///
    /// * a send, publish or request made inside a span joins that span's
    ///   trace, traced when the trace is sampled (its OpenTelemetry
    ///   context says so; any span without one counts as sampled); inside
    ///   an unsampled OpenTelemetry span its spans are unsampled children
    ///   of that span (made, not exported), so the handler runs in that
    ///   trace and the context travels on with flag `00` for whoever
    ///   samples downstream;
    /// * one made outside any span starts a trace with probability
    ///   `ratio`;
    /// * a message from the cluster with a `traceparent` header (feature
    ///   `opentelemetry`, read through the global propagator) gets spans
    ///   in that trace, sampled or not as its flag says, so its reply and
    ///   what its handler sends keep the context; one without context is
    ///   traced only when `ratio` is 1.
    ///
    /// A message outside every trace that is not drawn makes no span: it
    /// costs about what it costs with traces off. With OpenTelemetry, let the SDK's
    /// sampler follow its parent (`Sampler::ParentBased`) so that what the
    /// bus samples is exported.
    ///
    /// # Errors
    ///
    /// A ratio that is not a number from 0 to 1 makes
    /// [`build`](Self::build) (or `connect`) fail with
    /// [`BuildErrorKind::Config`](crate::BuildErrorKind::Config).
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::EventBus;
    ///
    /// // Spans for one trace in a hundred.
    /// let bus = EventBus::builder()
    ///     .traces(true)
    ///     .trace_sampling(0.01)
    ///     .build()
    ///     .unwrap();
    /// # drop(bus);
    /// assert!(EventBus::builder().trace_sampling(1.5).build().is_err());
    /// ```
    pub fn trace_sampling(mut self, ratio: f64) -> Self {
        self.trace_sampling = ratio;
        self
    }

    /// Reports per-address metrics through the [`metrics`](https://docs.rs/metrics)
    /// crate facade, to whatever recorder the program installs (Prometheus,
    /// StatsD, OpenTelemetry, ...). Off by default. Install the recorder
    /// before building the bus: the bus registers its series with the
    /// recorder it finds when an address is first used.
    ///
    /// [`EventBus::metrics`] keeps counting either way; the two agree.
    ///
    /// # Examples
    ///
    /// See [`MetricsOptions`](crate::MetricsOptions).
    #[cfg(feature = "metrics")]
    #[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
    pub fn metrics(mut self, options: crate::telemetry::options::MetricsOptions) -> Self {
        self.metrics = Some(options);
        self
    }

    /// The same settings with another cluster transport, and the one it
    /// had.
    fn rejoin<D>(self, cluster: D) -> (EventBusBuilder<D>, C) {
        let builder = EventBusBuilder {
            default_timeout: self.default_timeout,
            default_capacity: self.default_capacity,
            codecs: self.codecs,
            interceptors: self.interceptors,
            traces: self.traces,
            trace_sampling: self.trace_sampling,
            #[cfg(feature = "metrics")]
            metrics: self.metrics,
            cluster,
        };
        (builder, self.cluster)
    }

    /// Builds the bus on `joined`, in the calling thread.
    fn start(self, joined: Joined) -> Result<EventBus, BuildError> {
        let parts = self.into_parts()?;
        Ok(EventBus {
            state: State::start(parts, joined),
        })
    }

    fn telemetry(&self) -> Result<Telemetry, BuildError> {
        let sampling = Sampling::new(self.trace_sampling).ok_or_else(|| {
            BuildError::new(
                crate::base::error::BuildErrorKind::Config,
                format!(
                    "trace_sampling is {}: the share of traces sampled is a number from 0 to 1",
                    self.trace_sampling
                ),
                None,
            )
        })?;
        let telemetry = Telemetry::new(self.traces, sampling);
        #[cfg(feature = "metrics")]
        let telemetry = telemetry.with_metrics(self.metrics.as_ref());
        Ok(telemetry)
    }

    /// The bus's parts: its codecs (checked), interceptors, defaults and
    /// telemetry (its settings checked).
    fn into_parts(self) -> Result<Parts, BuildError> {
        let telemetry = self.telemetry()?;
        let registry = Registry::build(&self.codecs).map_err(BuildError::codec)?;
        Ok(Parts {
            registry,
            interceptors: self.interceptors,
            default_timeout: self.default_timeout,
            default_capacity: self.default_capacity,
            telemetry,
        })
    }
}

impl EventBusBuilder<InProcess> {
    /// Joins an [`InMemoryCluster`](crate::InMemoryCluster): the bus built
    /// exports its consumers (all but local-only ones) to the cluster's
    /// other buses and sends, publishes and requests through it, as it
    /// would through NATS, with no server. For tests of multi-node code.
    ///
    /// # Examples
    ///
    /// See [`InMemoryCluster`](crate::InMemoryCluster).
    pub fn in_memory_cluster(self, cluster: &InMemoryCluster) -> EventBusBuilder<InMemory> {
        self.rejoin(InMemory(cluster.clone())).0
    }
}

impl<C> EventBusBuilder<C> {
    /// Builds the bus, collecting every codec registration linked into the
    /// program (the derive submits one per type) plus those added with
    /// [`codec`](EventBusBuilder::codec): in process, or as a node of its
    /// in-memory cluster. A NATS builder is finished with
    /// `connect().await` instead (calling `build` on it is a compile
    /// error that says so).
    ///
    /// Only crates linked into the binary contribute registrations.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::CodecConflict`](crate::BuildErrorKind::CodecConflict)
    /// when two different types use one codec name, or one type is
    /// registered under two names (its cause, a
    /// [`RegistryError`](crate::RegistryError) told in its text and handed
    /// over by [`BuildError::cause`], names the types and the names);
    /// [`BuildErrorKind::Config`](crate::BuildErrorKind::Config) for a
    /// setting out of its range ([`trace_sampling`](Self::trace_sampling)).
    pub fn build(self) -> Result<EventBus, BuildError>
    where
        C: states::Build,
    {
        let (builder, cluster) = self.rejoin(InProcess);
        builder.start(states::sealed::Joins::joined(cluster))
    }
}

#[cfg(feature = "nats")]
#[cfg_attr(docsrs, doc(cfg(feature = "nats")))]
impl EventBusBuilder<InProcess> {
    /// Joins a cluster through NATS: the bus built by
    /// [`connect`](EventBusBuilder::connect) exports its consumers (all but
    /// local-only ones) and sends, publishes and requests through the NATS
    /// server. See the [crate docs](crate#cluster-nats) for the mapping.
    ///
    /// # Examples
    ///
    /// See [`NatsOptions`](crate::NatsOptions). A NATS builder has no
    /// `build`: it is finished by connecting.
    ///
    /// ```compile_fail
    /// # use codecbus_bus::{EventBus, NatsOptions};
    /// let _ = EventBus::builder().nats(NatsOptions::new("nats://127.0.0.1:4222")).build();
    /// ```
    pub fn nats(self, options: NatsOptions) -> EventBusBuilder<states::Nats> {
        self.rejoin(states::Nats(options)).0
    }
}

#[cfg(feature = "nats")]
#[cfg_attr(docsrs, doc(cfg(feature = "nats")))]
impl EventBusBuilder<states::Nats> {
    /// Builds the bus and connects it to the NATS server before returning
    /// it.
    ///
    /// # Errors
    ///
    /// As the in-process [`build`](EventBusBuilder::build), and
    /// [`BuildErrorKind::Connect`](crate::BuildErrorKind::Connect) when no
    /// server can be reached or one refuses the connection (authentication,
    /// TLS): the message names the servers, and ends with the `async-nats`
    /// error, its [`cause`](BuildError::cause). [`BuildErrorKind::Config`](crate::BuildErrorKind::Config) for
    /// an invalid subject prefix or server URL, or an unreadable
    /// credentials file.
    ///
    /// # Cancel safety
    ///
    /// Cancelling drops the connection being made; nothing else happened.
    ///
    /// # Panics
    ///
    /// When called outside a tokio runtime.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use codecbus_bus::{EventBus, Message, NatsOptions};
    ///
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let bus = EventBus::builder()
    ///     .nats(NatsOptions::new("nats://127.0.0.1:4222"))
    ///     .connect()
    ///     .await?;
    /// let _c = bus.consumer("double", |m: Message<u64>| async move {
    ///     m.reply(*m.body() * 2)
    /// });
    /// bus.flush().await?; // the consumer is now reachable from other nodes
    /// let four: Message<u64> = bus.request("double", 2u64).await?;
    /// assert_eq!(*four.body(), 4);
    /// bus.close().await;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(self) -> Result<EventBus, BuildError> {
        let (builder, states::Nats(options)) = self.rejoin(InProcess);
        let parts = builder.into_parts()?;
        let connected = connect_nats(options, &parts.telemetry).await?;
        let state = State::start(parts, Joined::Nats(Box::new(connected)));
        // The peers hear of this node's shapes before its first message.
        if let Some(remote) = &state.remote {
            remote.announced().await;
        }
        Ok(EventBus { state })
    }
}

impl<C: fmt::Debug> fmt::Debug for EventBusBuilder<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("EventBusBuilder");
        d.field("default_timeout", &self.default_timeout)
            .field("default_queue_capacity", &self.default_capacity)
            .field("codecs", &self.codecs)
            .field("traces", &self.traces)
            .field("trace_sampling", &self.trace_sampling);
        #[cfg(feature = "metrics")]
        d.field("metrics", &self.metrics);
        d.field("cluster", &self.cluster);
        d.finish_non_exhaustive()
    }
}

/// Making a bus: here, beside the builder, so that the handle does not
/// depend on its builder.
impl EventBus {
    /// A bus with the defaults and every codec registration linked into the
    /// program: `EventBus::builder().build()` for programs whose codec
    /// registrations are known not to conflict.
    ///
    /// # Panics
    ///
    /// When the linked registrations conflict: two types under one codec
    /// name, or one type under two names (the message names both), a
    /// mistake in the program like a duplicate route. Use
    /// [`EventBusBuilder::build`] to get that as a [`BuildError`] instead.
    ///
    /// # Examples
    ///
    /// ```
    /// let bus = codecbus_bus::EventBus::new();
    /// assert!(bus.codecs().iter().any(|c| c.name() == "string"));
    /// ```
    #[allow(clippy::new_without_default)] // a `Default` that can panic would surprise
    pub fn new() -> Self {
        match Self::builder().build() {
            Ok(bus) => bus,
            // The whole chain: the message alone does not name the types.
            Err(err) => panic!("{err}"),
        }
    }

    /// A builder, to set defaults, codecs, interceptors, telemetry and the
    /// cluster transport.
    pub fn builder() -> EventBusBuilder<InProcess> {
        EventBusBuilder::default()
    }
}
