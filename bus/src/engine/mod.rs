//! The engine: the shared state of a bus, routing of send, publish and
//! request, reply waiting, the codec registry. It knows the api's types
//! only through what is handed down, and the transports through
//! `transport::Node` and `transport::RemoteTransport`.

pub(crate) mod registry;
pub(crate) mod routing;
pub(crate) mod state;
pub(crate) mod waiting;

// The transports' types the api names, handed down through the engine:
// the messages a consumer takes from its queue, the scheduler of its
// handler's runs, and the clusters a bus joins.
pub(crate) use crate::transport::local::{
    Control, Envelope, Handler, Host, Inline, QueueRx, Runner, Started, spawn,
};
pub(crate) use crate::transport::memory::InMemoryCluster;
#[cfg(feature = "nats")]
pub(crate) use crate::transport::nats::NatsOptions;

/// Connects to the NATS servers of `options`, the client's events counted
/// in `telemetry`.
#[cfg(feature = "nats")]
pub(crate) async fn connect_nats(
    options: NatsOptions,
    telemetry: &crate::telemetry::Telemetry,
) -> Result<crate::transport::nats::Connected, crate::base::error::BuildError> {
    crate::transport::nats::connect(options, telemetry.client_events()).await
}
