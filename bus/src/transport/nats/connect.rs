// Connecting: turns `NatsOptions` into a connected client (server URLs,
// the event callback that counts dropped messages, disconnects and
// permission violations and notices the close), and `Link`, the
// connection as every other part of the transport shares it.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

use async_nats::{Client, Event, ServerAddr};
use tokio::sync::watch;

use crate::base::error::{BuildError, BuildErrorKind};
use crate::base::metrics::bump;
use crate::telemetry::ClientEvents;
use crate::transport::cluster::Writing;
use crate::transport::nats::options::{NatsEvent, NatsOptions};
use crate::transport::nats::refusals::Refusals;
use crate::transport::nats::wire::{self, Violation};

/// What the client's events tell about the connection, counted for
/// `Metrics`.
#[derive(Default)]
pub(crate) struct ClientCounts {
    /// Messages the client dropped for a reader that fell behind.
    pub(super) dropped: AtomicU64,
    /// Times the connection was lost.
    pub(super) disconnects: AtomicU64,
    /// Publishes and subscriptions the server refused (permissions).
    pub(super) denied: AtomicU64,
}

/// Counts a client event in the bus's counters and, with metrics on, in
/// its series (`series` picks which).
fn count(counter: &AtomicU64, reported: Option<&ClientEvents>, series: fn(&ClientEvents)) {
    bump(counter, 1);
    if let Some(reported) = reported {
        series(reported);
    }
}

/// A connected client, before the bus around it exists.
pub(crate) struct Connected {
    pub(super) client: Client,
    pub(super) prefix: Arc<str>,
    pub(super) servers: String,
    pub(super) closed: watch::Receiver<bool>,
    pub(super) counts: Arc<ClientCounts>,
    pub(super) refusals: Arc<Refusals>,
    #[cfg(feature = "jetstream")]
    pub(super) durables: Option<Arc<crate::transport::nats::jetstream::Durables>>,
    pub(super) writing: Writing,
    /// The connection name, which begins this node's name among its peers.
    pub(super) name: Option<String>,
}

/// Connects to the servers in `options`.
/// `reported` are the metrics counters of what the client's events tell
/// (metrics on).
pub(crate) async fn connect(
    mut options: NatsOptions,
    reported: Option<ClientEvents>,
) -> Result<Connected, BuildError> {
    let reported = reported.map(Arc::new);
    let config = |message: String| BuildError::new(BuildErrorKind::Config, message, None);
    let mut connect = options.take_connect_options().await.map_err(config)?;
    let mut addrs = Vec::new();
    for url in options.servers.iter().flat_map(|s| s.split(',')) {
        let url = url.trim();
        let addr: ServerAddr = url
            .parse()
            .map_err(|e| config(format!("invalid NATS server URL {url:?}: {e}")))?;
        addrs.push(addr);
    }
    if addrs.is_empty() {
        return Err(config("no NATS server URL given".to_owned()));
    }
    let servers = options.servers.join(",");
    let (closed_tx, closed) = watch::channel(false);
    let who = servers.clone();
    let counts = Arc::new(ClientCounts::default());
    let counted_by_client = Arc::clone(&counts);
    let refusals = Arc::new(Refusals::default());
    let refused_by_client = Arc::clone(&refusals);
    let on_event: Option<Arc<dyn Fn(NatsEvent) + Send + Sync>> =
        options.on_event.take().map(Arc::from);
    connect = connect.event_callback(move |event| {
        let closed_tx = closed_tx.clone();
        let who = who.clone();
        let counts = Arc::clone(&counted_by_client);
        let refusals = Arc::clone(&refused_by_client);
        let on_event = on_event.clone();
        let reported = reported.clone();
        async move {
            match &event {
                Event::Connected => {
                    // Permissions are the new connection's.
                    refusals.forget();
                    tracing::info!(servers = %who, "NATS connection (re)established");
                }
                Event::Disconnected => {
                    count(&counts.disconnects, reported.as_deref(), ClientEvents::disconnected);
                    tracing::warn!(servers = %who, "NATS connection lost; reconnecting");
                }
                Event::Closed => {
                    tracing::debug!(servers = %who, "NATS connection closed");
                    let _ = closed_tx.send(true);
                }
                Event::SlowConsumer(sid) => {
                    // async-nats raises one event per message it drops.
                    count(&counts.dropped, reported.as_deref(), ClientEvents::dropped);
                    tracing::warn!(
                        servers = %who,
                        sid,
                        "NATS slow consumer: the client dropped a message for a subscription whose reader fell behind"
                    );
                }
                Event::ServerError(async_nats::ServerError::Other(text)) => {
                    match wire::permission_violation(text) {
                        Some(Violation::Publish(subject)) => {
                            count(&counts.denied, reported.as_deref(), ClientEvents::denied);
                            tracing::warn!(
                                servers = %who,
                                subject,
                                "the NATS server refused a publish: this connection has no permission to publish to the subject"
                            );
                            refusals.record(subject, Instant::now());
                        }
                        Some(Violation::Subscribe(subject)) => {
                            count(&counts.denied, reported.as_deref(), ClientEvents::denied);
                            tracing::warn!(
                                servers = %who,
                                subject,
                                "the NATS server refused a subscription: this node's consumers will not receive remote messages on the subject"
                            );
                        }
                        None => tracing::warn!(servers = %who, error = %text, "NATS server error"),
                    }
                }
                other => tracing::debug!(servers = %who, event = %other, "NATS event"),
            }
            if let Some(on_event) = on_event {
                // A panic here would end the client's event task, and with
                // it every later event (the bus waits for `Closed`).
                let event = NatsEvent::of_client(&event);
                let call = std::panic::AssertUnwindSafe(|| on_event(event));
                if std::panic::catch_unwind(call).is_err() {
                    tracing::error!(servers = %who, "the NatsOptions::on_event callback panicked");
                }
            }
        }
    });
    let client = connect.connect(addrs).await.map_err(|e| {
        BuildError::new(
            BuildErrorKind::Connect,
            format!("cannot connect to NATS at {servers}"),
            Some(Box::new(e)),
        )
    })?;
    tracing::debug!(servers = %servers, max_payload = client.max_payload(), "connected to NATS");
    #[cfg(feature = "jetstream")]
    let durables = {
        let declared = std::mem::take(&mut options.durable);
        crate::transport::nats::jetstream::setup(
            &client,
            &options.subject_prefix,
            declared,
            options.node_name(),
            options.jetstream_domain.as_deref(),
            &servers,
        )
        .await?
    };
    Ok(Connected {
        client,
        prefix: Arc::from(options.subject_prefix.as_str()),
        servers,
        closed,
        counts,
        refusals,
        #[cfg(feature = "jetstream")]
        durables,
        writing: options.writing(),
        name: options.name.clone(),
    })
}
