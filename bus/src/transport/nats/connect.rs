// Connecting: turns `NatsOptions` into a connected client (server URLs,
// the event callback that counts dropped messages and notices the close),
// and `Link`, the connection as every other part of the transport shares
// it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

use async_nats::{Client, Event, ServerAddr};
use tokio::sync::watch;

use crate::error::{BuildError, BuildErrorKind};
use crate::metrics::bump;
use crate::transport::nats::options::{NatsEvent, NatsOptions};

/// A connected client, before the bus around it exists.
pub(crate) struct Connected {
    pub(super) client: Client,
    pub(super) prefix: Arc<str>,
    pub(super) servers: String,
    pub(super) closed: watch::Receiver<bool>,
    pub(super) dropped: Arc<AtomicU64>,
    #[cfg(feature = "jetstream")]
    pub(super) durables: Option<Arc<crate::transport::nats::jetstream::Durables>>,
}

/// Connects to the servers in `options`.
pub(crate) async fn connect(mut options: NatsOptions) -> Result<Connected, BuildError> {
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
    let dropped = Arc::new(AtomicU64::new(0));
    let dropped_by_client = Arc::clone(&dropped);
    let on_event: Option<Arc<dyn Fn(NatsEvent) + Send + Sync>> =
        options.on_event.take().map(Arc::from);
    connect = connect.event_callback(move |event| {
        let closed_tx = closed_tx.clone();
        let who = who.clone();
        let dropped = Arc::clone(&dropped_by_client);
        let on_event = on_event.clone();
        async move {
            match &event {
                Event::Connected => {
                    tracing::info!(servers = %who, "NATS connection (re)established")
                }
                Event::Disconnected => {
                    tracing::warn!(servers = %who, "NATS connection lost; reconnecting");
                }
                Event::Closed => {
                    tracing::debug!(servers = %who, "NATS connection closed");
                    let _ = closed_tx.send(true);
                }
                Event::SlowConsumer(sid) => {
                    // async-nats raises one event per message it drops.
                    bump(&dropped, 1);
                    tracing::warn!(
                        servers = %who,
                        sid,
                        "NATS slow consumer: the client dropped a message for a subscription whose reader fell behind"
                    );
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
            &servers,
        )
        .await?
    };
    Ok(Connected {
        client,
        prefix: Arc::from(options.subject_prefix.as_str()),
        servers,
        closed,
        dropped,
        #[cfg(feature = "jetstream")]
        durables,
    })
}

/// The connection, as the control task, the readers and the transport share it.
pub(super) struct Link {
    pub(super) client: Client,
    pub(super) prefix: Arc<str>,
    pub(super) servers: String,
    pub(super) closing: AtomicBool,
    /// Messages the client dropped for a reader that fell behind.
    pub(super) dropped: Arc<AtomicU64>,
    /// The durable addresses (JetStream), if any.
    #[cfg(feature = "jetstream")]
    pub(super) durables: Option<Arc<crate::transport::nats::jetstream::Durables>>,
}
