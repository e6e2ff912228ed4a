// The shared state of one bus, below everything that acts on it: the local
// consumer table, the codec registry, the counters, the interceptors, the
// defaults and the optional remote transport. Consumer registration lives
// here because it touches the table and the transport together. A remote
// transport sees this state only through `transport::Node`.

use std::any::{TypeId, type_name};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use codecbus_core::CodecRegistration;

use crate::base::guard::GuardRef;
use crate::base::interceptor::Interceptors;
use crate::base::metrics::Counters;
use crate::base::options::ConsumerOptions;
use crate::engine::registry::Registry;
use crate::telemetry::Telemetry;
use crate::transport::local::{self, Host, Inline, LocalTable, QueueRx, Slot, Tasks};
use crate::transport::{Named, Node, RemoteTransport};

pub(crate) struct State {
    pub(crate) local: LocalTable,
    registry: RwLock<Registry>,
    pub(crate) counters: Counters,
    pub(crate) interceptors: Interceptors,
    pub(crate) default_timeout: Duration,
    default_capacity: usize,
    pub(crate) remote: Option<Arc<dyn RemoteTransport>>,
    pub(crate) telemetry: Telemetry,
    /// The handler consumers' tasks, for a shutdown to join.
    pub(crate) tasks: Arc<Tasks>,
    /// Set by `EventBus::shutdown`: a message that then finds no consumer
    /// fails as refused by a shut-down bus, not as sent to nobody.
    shut_down: std::sync::atomic::AtomicBool,
    /// What this node learned of its peers' codecs.
    pub(crate) peers: crate::transport::cluster::Peers,
}

/// What a new bus is made of, but for its cluster transport.
pub(crate) struct Parts {
    pub(crate) registry: Registry,
    pub(crate) interceptors: Interceptors,
    pub(crate) default_timeout: Duration,
    pub(crate) default_capacity: usize,
    pub(crate) telemetry: Telemetry,
}

/// The cluster a new bus joins.
pub(crate) enum Joined {
    /// None: the bus is in-process.
    Alone,
    /// An in-memory cluster.
    InMemory(crate::transport::memory::InMemoryCluster),
    /// A NATS server, connected (boxed: made once per bus).
    #[cfg(feature = "nats")]
    Nats(Box<crate::transport::nats::Connected>),
}

impl State {
    /// A new bus's state, its transport started for it.
    pub(crate) fn start(parts: Parts, joined: Joined) -> Arc<Self> {
        let state = Arc::new_cyclic(|weak: &std::sync::Weak<State>| {
            let node: std::sync::Weak<dyn Node> = weak.clone();
            let remote: Option<Arc<dyn RemoteTransport>> = match joined {
                Joined::Alone => None,
                Joined::InMemory(cluster) => Some(Arc::new(cluster.join(node))),
                #[cfg(feature = "nats")]
                Joined::Nats(connected) => Some(Arc::new(
                    crate::transport::nats::NatsTransport::start(*connected, node),
                )),
            };
            Self::new(parts, remote)
        });
        if let Some(remote) = &state.remote {
            remote.joined();
        }
        state
    }

    fn new(parts: Parts, remote: Option<Arc<dyn RemoteTransport>>) -> Self {
        let Parts {
            registry,
            interceptors,
            default_timeout,
            default_capacity,
            telemetry,
        } = parts;
        Self {
            local: LocalTable::default(),
            registry: RwLock::new(registry),
            counters: Counters::default(),
            interceptors,
            default_timeout,
            default_capacity,
            remote,
            telemetry,
            tasks: Arc::default(),
            shut_down: std::sync::atomic::AtomicBool::new(false),
            peers: crate::transport::cluster::Peers::default(),
        }
    }

    /// Marks the bus as shut down (`EventBus::shutdown`).
    pub(crate) fn mark_shut_down(&self) {
        self.shut_down
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether `EventBus::shutdown` was called.
    pub(crate) fn is_shut_down(&self) -> bool {
        self.shut_down.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn registry(&self) -> RwLockReadGuard<'_, Registry> {
        self.registry.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn registry_mut(&self) -> RwLockWriteGuard<'_, Registry> {
        self.registry
            .write()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The remote transport, unless the delivery is local-only.
    pub(crate) fn remote(&self, local_only: bool) -> Option<&Arc<dyn RemoteTransport>> {
        if local_only {
            None
        } else {
            self.remote.as_ref()
        }
    }

    /// The remote transport for a point-to-point message: none when the
    /// delivery is local-only, or when every consumer of the address here
    /// is local-only (a local consumer is reached from its own node).
    pub(crate) fn remote_for_one(
        &self,
        address: &str,
        local_only: bool,
    ) -> Option<&Arc<dyn RemoteTransport>> {
        let remote = self.remote(local_only)?;
        if self.local.only_local_only(address) {
            None
        } else {
            Some(remote)
        }
    }

    /// Adds a consumer of `T` at `address`: its queue, and with `inline`
    /// the handler a delivering task may start itself (`Inline`).
    pub(crate) fn register<T: 'static>(
        &self,
        address: &str,
        options: &ConsumerOptions,
        inline: Option<Arc<dyn Inline>>,
    ) -> (Arc<str>, u64, QueueRx) {
        let capacity = options.capacity.unwrap_or(self.default_capacity);
        assert!(
            capacity > 0,
            "a consumer queue needs a capacity of at least 1"
        );
        let guard = guard_for::<T>(address, options);
        let probe = self.telemetry.probe(address);
        if let Some(probe) = &probe {
            probe.handler_added();
        }
        let (tx, rx) = local::queue(capacity, probe, inline);
        let id = self.local.next_id();
        let local_only = options.local_only;
        let (address, first_exported) = self.local.add(
            address,
            Slot {
                id,
                type_id: TypeId::of::<T>(),
                type_name: type_name::<T>(),
                local_only,
                guard,
                tx,
            },
        );
        if first_exported && let Some(remote) = &self.remote {
            remote.consumer_added(&address);
        }
        tracing::debug!(
            address = &*address,
            id,
            capacity,
            local_only,
            body = type_name::<T>(),
            "consumer registered"
        );
        (address, id, rx)
    }

    /// Removes every consumer, as `unregister` does each: no message
    /// reaches them any more, and their queues close once what is in them
    /// is taken.
    pub(crate) fn unregister_all(&self) {
        for (address, consumers) in self.local.remove_all() {
            if let Some(remote) = &self.remote {
                remote.consumer_removed(&address);
            }
            if let Some(probe) = self.telemetry.probe(&address) {
                (0..consumers).for_each(|_| probe.handler_removed());
            }
            tracing::debug!(
                address = &*address,
                "consumers unregistered by the shutdown"
            );
        }
    }

    pub(crate) fn unregister(&self, address: &Arc<str>, id: u64) {
        let (removed, last_exported) = self.local.remove(address, id);
        if last_exported && let Some(remote) = &self.remote {
            remote.consumer_removed(address);
        }
        if removed {
            if let Some(probe) = self.telemetry.probe(address) {
                probe.handler_removed();
            }
            tracing::debug!(address = &**address, id, "consumer unregistered");
        }
    }
}

impl Host for State {
    fn counters(&self) -> &Counters {
        &self.counters
    }
}

impl Node for State {
    fn local(&self) -> &LocalTable {
        &self.local
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn codec_by_name(&self, name: &str) -> Option<(CodecRegistration, Named)> {
        self.registry().resolve(name)
    }

    fn codec_by_type(&self, type_id: TypeId) -> Option<CodecRegistration> {
        self.registry().by_type(type_id)
    }

    fn default_timeout(&self) -> Duration {
        self.default_timeout
    }

    fn telemetry(&self) -> &Telemetry {
        &self.telemetry
    }

    fn shapes(&self) -> codecbus_core::shape::ShapeSet {
        self.registry().list().iter().map(|c| c.shape()).collect()
    }

    fn peers(&self) -> &crate::transport::cluster::Peers {
        &self.peers
    }
}

/// The guard a consumer of `T` registered with `options` gets.
///
/// # Panics
///
/// When the options hold a spec and `T` is not a JSON body type.
#[cfg(feature = "json")]
fn guard_for<T: 'static>(address: &str, options: &ConsumerOptions) -> Option<GuardRef> {
    let spec = options.spec.as_ref()?;
    match crate::base::guard::spec_guard::<T>(spec) {
        Ok(guard) => Some(guard),
        Err(body) => panic!(
            "the consumer at address {address} takes `{body}`: a spec guards JsValue, JsObj or JsArray bodies only"
        ),
    }
}

#[cfg(not(feature = "json"))]
#[allow(clippy::extra_unused_type_parameters)] // the same signature as with `json`
fn guard_for<T: 'static>(_address: &str, _options: &ConsumerOptions) -> Option<GuardRef> {
    None
}
