// Transports: `local` (tokio channels, always there) and, behind the `nats`
// feature, a cluster transport.
//
// The seam: `State::remote` holds an optional `RemoteTransport`. Every
// public operation asks it first unless the message or consumer is
// local-only; without one (the embedded default) delivery is purely local.
// A remote transport:
// * encodes an outbound body with the registry entry for its `TypeId`
//   (`Outbound::codec`), so only registered types can leave the process;
// * decodes inbound bytes by codec name or alias (`Registry::resolve`) and hands the
//   `AnyBody` to `LocalTable::deliver_one` / `deliver_all` with
//   `CodecRegistration::transform` as the `make` closure, so local and
//   remote deliveries follow the same transform rules;
// * answers remote requests by giving the local consumer a `ReplyTx` whose
//   `ReplyRx` it awaits and encodes (the reply's `TypeId` selects the
//   codec), and delivers remote replies with `ReplyEnvelope::transformed`
//   set (a decoded body is already the requester's own);
// * learns which addresses to subscribe through `consumer_added` /
//   `consumer_removed` (exported consumers only);
// * sees the bus only through `Node` (the local table, the codecs, the
//   counters): it holds it weakly, and a request lends it strongly.
//
// Routing (routing.rs): `send` / `request` go to the remote transport unless
// they are local-only or every consumer of the address on this node is
// local-only (a local consumer is reached from its own node, as in
// Vert.x); `publish` goes to the remote transport for every exported
// consumer (this node's come back through it) and the caller serves this
// node's local-only consumers with `Scope::LocalOnly`.

pub(crate) mod cluster;
pub(crate) mod local;
pub(crate) mod memory;
#[cfg(feature = "nats")]
pub(crate) mod nats;

use std::any::TypeId;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use codecbus_core::{AnyBody, CodecRegistration};

use crate::base::error::{PublishError, RequestError, SendError};
use crate::base::headers::Headers;
use crate::base::metrics::Counters;
use crate::base::reply::ReplyEnvelope;
use crate::telemetry::{Probe, Telemetry};
use crate::transport::local::LocalTable;

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A message leaving this process.
#[cfg_attr(not(feature = "nats"), allow(dead_code))] // read by the cluster transport
pub(crate) struct Outbound {
    pub(crate) address: Arc<str>,
    /// The body's Rust type, for error messages.
    pub(crate) type_name: &'static str,
    pub(crate) headers: Headers,
    pub(crate) body: AnyBody,
    /// The body type's codec; `None` for an unregistered type, which a
    /// remote transport refuses with a `Codec` error.
    pub(crate) codec: Option<CodecRegistration>,
    /// The address's metric handles (metrics on): the encoded size is
    /// recorded.
    pub(crate) probe: Option<Arc<Probe>>,
    /// Whether the message has a span (traces on): the encoded size is
    /// recorded on it.
    pub(crate) traced: bool,
    /// The fingerprint of the codec's shape, when some peer cannot read
    /// it (`cluster::Peers::tag`): the message says so.
    pub(crate) shape: Option<u64>,
}

/// How a name off the wire named its codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Named {
    /// By its current name.
    Name,
    /// By one of its aliases (a name it had before); `first`: the first
    /// message on this node to use that alias.
    Alias { first: bool },
}

/// What a remote transport sees of the bus it serves.
#[cfg_attr(not(feature = "nats"), allow(dead_code))]
pub(crate) trait Node: Send + Sync + 'static {
    /// This node's consumers.
    fn local(&self) -> &LocalTable;

    /// The bus counters.
    fn counters(&self) -> &Counters;

    /// The codec a message names: registered as `name`, or with `name`
    /// among its aliases (and then whether this is the first such
    /// message).
    fn codec_by_name(&self, name: &str) -> Option<(CodecRegistration, Named)>;

    /// The codec registered for the type `type_id`.
    fn codec_by_type(&self, type_id: TypeId) -> Option<CodecRegistration>;

    /// How long a request waits for its reply by default.
    fn default_timeout(&self) -> Duration;

    /// Metrics and traces.
    fn telemetry(&self) -> &Telemetry;

    /// The shapes of this node's codecs.
    fn shapes(&self) -> codecbus_core::shape::ShapeSet;

    /// What this node learned of its peers' codecs.
    fn peers(&self) -> &cluster::Peers;
}

/// A cluster transport (NATS). Not implemented in-process.
#[cfg_attr(not(feature = "nats"), allow(dead_code))]
pub(crate) trait RemoteTransport: Send + Sync + 'static {
    /// Point-to-point to one consumer anywhere in the cluster (this node
    /// included).
    fn send(&self, message: Outbound) -> BoxFuture<'_, Result<(), SendError>>;

    /// To every consumer in the cluster (this node's exported consumers
    /// included; local-only consumers are served by the caller).
    fn publish(&self, message: Outbound) -> BoxFuture<'_, Result<(), PublishError>>;

    /// A request to one consumer anywhere, awaiting its reply. `node` is
    /// the requesting bus (codecs and counters).
    fn request(
        &self,
        message: Outbound,
        timeout: Duration,
        node: Arc<dyn Node>,
    ) -> BoxFuture<'_, Result<ReplyEnvelope, RequestError>>;

    /// The first exported consumer of `address` on this node registered.
    fn consumer_added(&self, address: &Arc<str>);

    /// The last exported consumer of `address` on this node went away.
    fn consumer_removed(&self, address: &Arc<str>);

    /// Resolves once every subscription change and message before it has
    /// reached the server.
    fn flush(&self) -> BoxFuture<'_, Result<(), String>>;

    /// Drains: stops taking remote messages, answers those in flight, then
    /// closes the connection.
    fn close(&self) -> BoxFuture<'_, ()>;

    /// What the transport's client counted (see [`RemoteCounts`]).
    fn counts(&self) -> RemoteCounts;

    /// The bus is made: tells the cluster this node's codecs' shapes and
    /// learns the other nodes' (`cluster::shapes`). Called once.
    fn joined(&self);

    /// Resolves once this node's shapes have left for the cluster (or
    /// could not), so that they reach the peers before its first message.
    /// At once where `joined` told them already.
    fn announced(&self) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// The counters a cluster transport keeps for [`Metrics`](crate::Metrics).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RemoteCounts {
    /// Messages for this node the transport lost before the node could
    /// read them (its client's buffer for a subscription overflowed).
    pub(crate) dropped: u64,
    /// Times the connection to the cluster was lost.
    pub(crate) disconnects: u64,
    /// Publishes and subscriptions the cluster refused for lack of
    /// permission.
    pub(crate) denied: u64,
}
