//! The bridge's listener: accepts clients, one task each, up to the
//! connection limit; stops when told or dropped.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use crate::api::bus::EventBus;
use crate::bridge::conn::{self, Shared};
use crate::bridge::error::BridgeError;
use crate::bridge::options::BridgeOptions;
use crate::bridge::tls::{Acceptor, BridgeTls};
use crate::bridge::transport::tcp;
use crate::bridge::vocab::Dialect;

/// The Vert.x TCP event bus bridge in front of an [`EventBus`]: bridge
/// clients (Vert.x's own client libraries for Python, Go, C and more, or
/// another language speaking the same frames) send, publish, request and
/// consume on the bus, within the [`BridgeOptions`]' permissions.
///
/// [`listen`](Bridge::listen) serves the TCP bridge,
/// [`listen_sockjs`](Bridge::listen_sockjs) the SockJS bridge that Vert.x's
/// JavaScript clients use from a browser; a clone serves the same bridge
/// (permissions, types, limits) on the other transport.
///
/// # Examples
///
/// ```
/// use codecbus_bus::bridge::{Bridge, BridgeOptions, PermittedOptions};
/// use codecbus_bus::{EventBus, Message};
/// use codecbus_json::JsValue;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let bus = EventBus::new();
/// let _echo = bus.consumer("echo", |m: Message<JsValue>| async move {
///     m.reply(m.body().clone())
/// });
/// let options = BridgeOptions::new().inbound(PermittedOptions::new().address("echo"));
/// let server = Bridge::new(&bus, options)?.listen("127.0.0.1:0").await?;
/// println!("bridge clients connect to {}", server.local_addr());
/// server.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Bridge {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge")
            .field("limits", &self.shared.limits)
            .finish_non_exhaustive()
    }
}

impl Bridge {
    /// A bridge to `bus` (the same bus: its consumers, codecs and
    /// interceptors), with `options`.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Regex`] when a permission's expression is invalid.
    pub fn new(bus: &EventBus, options: BridgeOptions) -> Result<Self, BridgeError> {
        Ok(Self {
            shared: Arc::new(Shared::new(bus, options)?),
        })
    }

    /// The JSON Schema (draft 2020-12) of the bodies of each typed address
    /// ([`BridgeOptions::typed`]), by address: what a client sends there,
    /// as JSON (`codecbus::shape::json_schema`). The SockJS bridge serves
    /// it at `GET {prefix}/schemas`.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::bridge::{Bridge, BridgeOptions};
    /// use codecbus_bus::{EventBus, MessageCodec};
    ///
    /// #[derive(MessageCodec, Clone)]
    /// #[codec(name = "doc.bridge.order")]
    /// struct Order {
    ///     id: u64,
    /// }
    ///
    /// let bus = EventBus::new();
    /// let bridge = Bridge::new(&bus, BridgeOptions::new().typed::<Order>("orders")).unwrap();
    /// let schemas = bridge.json_schemas();
    /// assert_eq!(schemas["orders"]["title"], "doc.bridge.order");
    /// assert_eq!(schemas["orders"]["required"][0], "id");
    /// ```
    #[must_use]
    pub fn json_schemas(&self) -> serde_json::Value {
        serde_json::from_str(&self.shared.schemas).unwrap_or_default()
    }

    /// Listens on `address` and serves clients there until the returned
    /// server is shut down or dropped.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Bind`] when the address cannot be listened on.
    ///
    /// # Cancel safety
    ///
    /// Cancelling before it returns listens on nothing.
    pub async fn listen<A>(self, address: A) -> Result<BridgeServer, BridgeError>
    where
        A: ToSocketAddrs + std::fmt::Debug,
    {
        self.serve(bind(address).await?)
    }

    /// Serves clients on a listener of the caller's.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Bind`] when the listener has no local address.
    pub fn serve(self, listener: TcpListener) -> Result<BridgeServer, BridgeError> {
        self.serve_with(listener, None)
    }

    /// Listens on `address` and serves clients there over TLS until the
    /// returned server is shut down or dropped: the TCP bridge's frames
    /// inside TLS, as Vert.x's `TcpEventBusBridge` with `setSsl(true)`.
    /// The handshake must end within the write timeout.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Bind`] when the address cannot be listened on,
    /// [`BridgeError::Tls`] when `tls` cannot be used.
    ///
    /// # Cancel safety
    ///
    /// Cancelling before it returns listens on nothing.
    pub async fn listen_tls<A>(
        self,
        address: A,
        tls: BridgeTls,
    ) -> Result<BridgeServer, BridgeError>
    where
        A: ToSocketAddrs + std::fmt::Debug,
    {
        let acceptor = tls.acceptor(false)?;
        self.serve_with(bind(address).await?, Some(acceptor))
    }

    fn serve_with(
        self,
        listener: TcpListener,
        tls: Option<Acceptor>,
    ) -> Result<BridgeServer, BridgeError> {
        let local_addr = listener.local_addr().map_err(|source| BridgeError::Bind {
            address: "the given listener".into(),
            source,
        })?;
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(accept(self.shared, listener, tls, stopped));
        tracing::debug!(%local_addr, "bridge listening");
        Ok(BridgeServer {
            local_addr,
            stop,
            task: Some(task),
        })
    }
}

/// A running bridge. Dropping it stops the bridge as
/// [`shutdown`](BridgeServer::shutdown) does, without waiting.
#[derive(Debug)]
#[must_use = "dropping a BridgeServer stops its bridge: keep it for as long as the bridge serves"]
pub struct BridgeServer {
    pub(crate) local_addr: SocketAddr,
    pub(crate) stop: watch::Sender<bool>,
    pub(crate) task: Option<JoinHandle<()>>,
}

impl BridgeServer {
    /// The address clients connect to (with its port when the bridge was
    /// asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting clients, closes every connection (their
    /// registrations unregistered, their pending requests failed) and
    /// returns once all are closed.
    ///
    /// # Cancel safety
    ///
    /// The bridge is told to stop in the first poll and stops whether the
    /// wait goes on or not; cancelling only stops the wait.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for BridgeServer {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// A listener on `address`.
pub(crate) async fn bind<A>(address: A) -> Result<TcpListener, BridgeError>
where
    A: ToSocketAddrs + std::fmt::Debug,
{
    let named = format!("{address:?}");
    TcpListener::bind(address)
        .await
        .map_err(|source| BridgeError::Bind {
            address: named,
            source,
        })
}

async fn accept(
    shared: Arc<Shared>,
    listener: TcpListener,
    tls: Option<Acceptor>,
    stop: watch::Receiver<bool>,
) {
    let serve_shared = Arc::clone(&shared);
    accept_with(
        shared,
        listener,
        stop,
        "bridge",
        move |stream, peer, stop| {
            tracing::debug!(%peer, "bridge connection");
            let shared = Arc::clone(&serve_shared);
            let tls = tls.clone();
            async move {
                let max_frame = shared.limits.max_frame;
                match tls {
                    None => {
                        let (source, sink) = tcp::tcp(stream, max_frame);
                        let origin = conn::Origin {
                            peer: Some(peer),
                            transport: "tcp",
                            certificates: Vec::new(),
                        };
                        let budget = shared.budget();
                        conn::serve(shared, source, sink, Dialect::Tcp, origin, budget, stop).await;
                    }
                    Some(tls) => {
                        let _ = stream.set_nodelay(true);
                        let wait = shared.limits.write_timeout;
                        let Some((stream, certificates)) = tls.accept(stream, wait).await else {
                            return;
                        };
                        let (source, sink) = tcp::framed(stream, max_frame);
                        let origin = conn::Origin {
                            peer: Some(peer),
                            transport: "tls",
                            certificates,
                        };
                        let budget = shared.budget();
                        conn::serve(shared, source, sink, Dialect::Tcp, origin, budget, stop).await;
                    }
                }
            }
        },
    )
    .await;
}

/// The accept loop of every transport: takes connections up to the
/// connection limit, serves each with `serve` on a task of its own, and
/// when the bridge stops, stops listening and joins them all.
pub(crate) async fn accept_with<F, Fut>(
    shared: Arc<Shared>,
    listener: TcpListener,
    mut stop: watch::Receiver<bool>,
    what: &'static str,
    mut serve: F,
) where
    F: FnMut(TcpStream, std::net::SocketAddr, watch::Receiver<bool>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    if connections.len() >= shared.limits.max_connections {
                        tracing::debug!(%peer, transport = what, "bridge connection refused: at the connection limit");
                        drop(stream);
                        continue;
                    }
                    connections.spawn(serve(stream, peer, stop.clone()));
                }
                Err(e) => {
                    // Out of file descriptors and the like: wait a little,
                    // rather than spin.
                    tracing::warn!(error = %e, transport = what, "bridge accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            },
        }
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}
