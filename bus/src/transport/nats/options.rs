//! The public NATS configuration of a bus.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::transport::cluster::{WireVersion, Writing};
use crate::transport::nats::wire;

/// The default subject prefix: every subject the bus uses starts with it.
pub const DEFAULT_SUBJECT_PREFIX: &str = "codecbus";

#[cfg(feature = "unstable-async-nats")]
type Configure =
    Box<dyn FnOnce(async_nats::ConnectOptions) -> async_nats::ConnectOptions + Send + Sync>;

/// A user's callback for connection events.
pub(crate) type OnEvent = Box<dyn Fn(NatsEvent) + Send + Sync>;

/// An event of a bus's NATS connection, as
/// [`NatsOptions::on_event`] sees it.
///
/// New kinds of events may be added in a minor release: match with a
/// wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NatsEvent {
    /// The connection was established, at first or again after a loss.
    Connected,
    /// The connection was lost; the client is reconnecting (counted in
    /// [`Metrics::remote_disconnects`](crate::Metrics::remote_disconnects)).
    Disconnected,
    /// The server announced that it is shutting down (lame duck mode):
    /// the client will move to another server of the cluster.
    LameDuckMode,
    /// The connection is draining (the bus is closing).
    Draining,
    /// The connection is closed for good.
    Closed,
    /// The client dropped a message for a subscription whose reader fell
    /// behind (counted in [`Metrics::remote_dropped`](crate::Metrics::remote_dropped));
    /// the value is the subscription's id on the connection. One event per
    /// dropped message.
    SlowConsumer(u64),
    /// The server reported an error (authorization, a protocol violation,
    /// a publish or subscription refused for lack of permission — counted
    /// in [`Metrics::remote_denied`](crate::Metrics::remote_denied) —
    /// ...); the text is the server's.
    ServerError(String),
    /// The client failed (TLS, a refused reconnection, ...); the text is
    /// the client's.
    ClientError(String),
}

impl NatsEvent {
    /// The event for the NATS client's own.
    pub(crate) fn of_client(event: &async_nats::Event) -> Self {
        use async_nats::Event;
        match event {
            Event::Connected => Self::Connected,
            Event::Disconnected => Self::Disconnected,
            Event::LameDuckMode => Self::LameDuckMode,
            Event::Draining => Self::Draining,
            Event::Closed => Self::Closed,
            Event::SlowConsumer(sid) => Self::SlowConsumer(*sid),
            Event::ServerError(e) => Self::ServerError(e.to_string()),
            Event::ClientError(e) => Self::ClientError(e.to_string()),
        }
    }
}

impl fmt::Display for NatsEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Connected => f.write_str("connected"),
            Self::Disconnected => f.write_str("disconnected"),
            Self::LameDuckMode => f.write_str("the server entered lame duck mode"),
            Self::Draining => f.write_str("draining"),
            Self::Closed => f.write_str("closed"),
            Self::SlowConsumer(sid) => {
                write!(f, "slow consumer: a message for subscription {sid} dropped")
            }
            Self::ServerError(e) => write!(f, "server error: {e}"),
            Self::ClientError(e) => write!(f, "client error: {e}"),
        }
    }
}

/// How a bus joins a cluster through NATS: server URLs, the subject
/// prefix, the connection name, authentication and TLS.
///
/// Every setting here is this crate's own: none of its types comes from
/// the NATS client library (`async-nats`, a 0.x crate), so a new release
/// of that library does not change this API. The one exception is
/// explicitly named: [`configure_async_nats`](NatsOptions::configure_async_nats),
/// behind the `unstable-async-nats` feature, which hands over the client's
/// own options and follows that library's versioning (see its
/// documentation).
///
/// Give it to [`EventBusBuilder::nats`](crate::EventBusBuilder::nats) and
/// finish with [`connect`](crate::EventBusBuilder::connect), which connects
/// before returning the bus.
///
/// # Examples
///
/// ```no_run
/// use std::time::Duration;
/// use codecbus_bus::{EventBus, NatsOptions};
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let bus = EventBus::builder()
///     .nats(
///         NatsOptions::new("nats://127.0.0.1:4222")
///             .subject_prefix("shop")
///             .connection_name("pricing-1")
///             .token("s3cret")
///             .max_reconnect_delay(Duration::from_millis(500)),
///     )
///     .connect()
///     .await?;
/// # bus.close().await;
/// # Ok(())
/// # }
/// ```
#[must_use]
pub struct NatsOptions {
    pub(crate) servers: Vec<String>,
    pub(crate) subject_prefix: String,
    pub(super) name: Option<String>,
    user_password: Option<(String, String)>,
    token: Option<String>,
    nkey: Option<String>,
    credentials_file: Option<PathBuf>,
    require_tls: bool,
    retain_server_order: bool,
    tls_first: bool,
    root_certificates: Option<PathBuf>,
    client_certificate: Option<(PathBuf, PathBuf)>,
    connection_timeout: Option<Duration>,
    max_reconnect_delay: Option<Duration>,
    max_reconnects: Option<usize>,
    ping_interval: Option<Duration>,
    subscription_capacity: Option<usize>,
    compress_above: Option<usize>,
    wire_version: WireVersion,
    #[cfg(feature = "unstable-async-nats")]
    configure: Option<Configure>,
    pub(crate) on_event: Option<OnEvent>,
    #[cfg(feature = "jetstream")]
    pub(crate) jetstream_domain: Option<String>,
    #[cfg(feature = "jetstream")]
    pub(crate) durable: Vec<(
        String,
        crate::transport::nats::durable_options::DurableOptions,
    )>,
}

impl NatsOptions {
    /// Options for the server at `url` (`nats://host:port`, `tls://…`, or
    /// `host:port`; several comma-separated URLs are accepted: the bus
    /// splits them), with the default subject prefix `codecbus`.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            servers: vec![url.into()],
            subject_prefix: DEFAULT_SUBJECT_PREFIX.to_owned(),
            name: None,
            user_password: None,
            token: None,
            nkey: None,
            credentials_file: None,
            require_tls: false,
            retain_server_order: false,
            tls_first: false,
            root_certificates: None,
            client_certificate: None,
            connection_timeout: None,
            max_reconnect_delay: None,
            max_reconnects: None,
            ping_interval: None,
            subscription_capacity: None,
            compress_above: None,
            wire_version: WireVersion::default(),
            #[cfg(feature = "unstable-async-nats")]
            configure: None,
            on_event: None,
            #[cfg(feature = "jetstream")]
            jetstream_domain: None,
            #[cfg(feature = "jetstream")]
            durable: Vec::new(),
        }
    }

    /// Options for several servers of one NATS cluster; the client picks
    /// one and fails over to the others (in the order given with
    /// [`retain_server_order`](NatsOptions::retain_server_order)). An
    /// empty list fails `connect` with `BuildErrorKind::Config`.
    pub fn with_servers<I, S>(urls: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut options = Self::new(String::new());
        options.servers = urls.into_iter().map(Into::into).collect();
        options
    }

    /// Adds a server URL.
    pub fn server(mut self, url: impl Into<String>) -> Self {
        self.servers.push(url.into());
        self
    }

    /// The first token(s) of every subject the bus uses (default
    /// `codecbus`). Buses that should talk to each other use the same
    /// prefix; different prefixes keep applications apart on one server.
    /// It must be a valid NATS subject without wildcards, of at most 64
    /// bytes (checked by `connect`).
    pub fn subject_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.subject_prefix = prefix.into();
        self
    }

    /// The connection name the server shows in its monitoring.
    pub fn connection_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Authenticates with a user and password.
    pub fn user_and_password(
        mut self,
        user: impl Into<String>,
        password: impl Into<String>,
    ) -> Self {
        self.user_password = Some((user.into(), password.into()));
        self
    }

    /// Authenticates with a token.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Authenticates with an NKey seed (`SU…`).
    pub fn nkey(mut self, seed: impl Into<String>) -> Self {
        self.nkey = Some(seed.into());
        self
    }

    /// Authenticates with a `.creds` file (JWT and NKey seed), read by
    /// `connect`.
    pub fn credentials_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.credentials_file = Some(path.into());
        self
    }

    /// Requires TLS: connecting to a server without it fails.
    pub fn require_tls(mut self, required: bool) -> Self {
        self.require_tls = required;
        self
    }

    /// Starts TLS before the server's greeting (the server needs
    /// `handshake_first`); implies [`require_tls`](NatsOptions::require_tls).
    pub fn tls_first(mut self) -> Self {
        self.tls_first = true;
        self.require_tls = true;
        self
    }

    /// Trusts the CA certificates in this PEM file (besides the system's).
    /// `connect` reads it first: a file it cannot read, or without a
    /// `-----BEGIN CERTIFICATE-----` block, is a `BuildErrorKind::Config`
    /// error naming the file.
    pub fn root_certificates(mut self, path: impl Into<PathBuf>) -> Self {
        self.root_certificates = Some(path.into());
        self
    }

    /// Presents this client certificate and key (PEM files), for servers
    /// that verify clients. `connect` checks that the files can be read and
    /// hold a certificate and a private key, or fails with
    /// `BuildErrorKind::Config` naming the file.
    pub fn client_certificate(mut self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        self.client_certificate = Some((cert.into(), key.into()));
        self
    }

    /// How long `connect` (and each reconnection attempt) may take to
    /// establish a connection (`async-nats` default: 5 s).
    pub fn connection_timeout(mut self, timeout: Duration) -> Self {
        self.connection_timeout = Some(timeout);
        self
    }

    /// The longest pause between two reconnection attempts after the
    /// connection is lost (`async-nats` default: exponential back-off up to
    /// 4 s). Attempts start at once and double from 1 ms up to this cap.
    pub fn max_reconnect_delay(mut self, delay: Duration) -> Self {
        self.max_reconnect_delay = Some(delay);
        self
    }

    /// Gives up after this many failed reconnection attempts in a row
    /// (default: never gives up).
    pub fn max_reconnects(mut self, attempts: usize) -> Self {
        self.max_reconnects = Some(attempts);
        self
    }

    /// Tries the servers in the order given, at the first connection and
    /// at every reconnection, instead of in a random order (the default,
    /// which spreads the nodes of a cluster over its servers). With the
    /// list in the same order on every node, every node connects to the
    /// first server while it is up; with each node's list starting with a
    /// server of its own (its site's, its rack's), nodes stay near it and
    /// fail over to the next server of the list when it is lost. Servers
    /// the cluster announces come after the given ones.
    pub fn retain_server_order(mut self) -> Self {
        self.retain_server_order = true;
        self
    }

    /// How many messages the client buffers for each subscription while
    /// the node's reader is behind (`async-nats` default: 65 536). Past it
    /// the client drops messages, counted in
    /// [`Metrics::remote_dropped`](crate::Metrics::remote_dropped) and
    /// reported as [`NatsEvent::SlowConsumer`]. `connect` refuses 0
    /// (`BuildErrorKind::Config`).
    pub fn subscription_capacity(mut self, messages: usize) -> Self {
        self.subscription_capacity = Some(messages);
        self
    }

    /// Compresses every body larger than `bytes` (encoded) with LZ4 before
    /// it leaves this node, requests, publishes, sends, replies and durable
    /// messages alike (off by default). Worth it for large bodies that
    /// repeat themselves; what LZ4 saves depends on the data (on the
    /// MessagePack bodies of JSON documents: an event catalog of repeated
    /// keys and small numbers 18× smaller, a Twitter search response 6.4×,
    /// text-heavy documents about 2× (prose paragraphs 1.8×), arrays of
    /// floats 1.4×). A body that does not get smaller leaves as it is, and
    /// one at or under `bytes` pays nothing. Every node reads compressed
    /// and plain bodies alike, so nodes may differ in this setting. The
    /// server's `max_payload` limits the uncompressed size as well:
    /// compression saves bandwidth, it does not raise the limit. The
    /// guide's wire contract chapter says how a compressed body is marked,
    /// for peers in other languages.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::NatsOptions;
    ///
    /// let options = NatsOptions::new("nats://127.0.0.1:4222").compress_above(64 * 1024);
    /// # drop(options);
    /// ```
    pub fn compress_above(mut self, bytes: usize) -> Self {
        self.compress_above = Some(bytes);
        self
    }

    /// The version of the wire contract this node writes (default
    /// [`WireVersion::V2`], the codec named in the payload's prefix):
    /// every send, publish, request, reply, failure and durable message
    /// it sends is in this version. A node reads both versions whatever
    /// it writes, so nodes of either setting talk to each other.
    ///
    /// Set [`WireVersion::V1`] while the deployment still has readers of
    /// version 1 only (the codec named in the `Codecbus-Codec` header,
    /// the body plain MessagePack): a peer in another language written
    /// from version 1 of the guide's wire contract chapter, another tool
    /// of that time, or, during a rolling deploy, nodes of a build from
    /// before wire version 2 (which refuse its prefix). Version 1 has no
    /// compressed form: with it,
    /// [`compress_above`](NatsOptions::compress_above) has no effect
    /// (every body leaves plain; `connect` logs a warning when both are
    /// set). It also costs what a header costs, which `async-nats` parses
    /// on both sides. Once every reader reads version 2, drop the
    /// setting.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{NatsOptions, WireVersion};
    ///
    /// // Peers of version 1 still read what this node sends.
    /// let options = NatsOptions::new("nats://127.0.0.1:4222").wire_version(WireVersion::V1);
    /// # drop(options);
    /// ```
    pub fn wire_version(mut self, version: WireVersion) -> Self {
        self.wire_version = version;
        self
    }

    /// How the node writes what it sends: its wire version and
    /// compression threshold (none in version 1, which has no compressed
    /// form).
    pub(crate) fn writing(&self) -> Writing {
        if self.compress_above.is_some() && !self.wire_version.prefixed() {
            tracing::warn!(
                compress_above = self.compress_above,
                "NatsOptions::compress_above has no effect with wire_version(WireVersion::V1): \
                 version 1 has no compressed form, so every body leaves plain"
            );
        }
        Writing {
            version: self.wire_version,
            compress_above: self.compress_above.filter(|_| self.wire_version.prefixed()),
        }
    }

    /// How often the client pings the server to notice a dead connection
    /// (`async-nats` default: 60 s).
    pub fn ping_interval(mut self, interval: Duration) -> Self {
        self.ping_interval = Some(interval);
        self
    }

    /// Calls `f` with every connection event (connected, disconnected,
    /// slow consumer, server errors…), after the bus has logged and
    /// counted it. `f` runs on the client's event task: keep it short (the
    /// client queues at most 128 events and drops the rest while they wait).
    /// A panic in `f` is caught and logged.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{NatsEvent, NatsOptions};
    ///
    /// let options = NatsOptions::new("nats://127.0.0.1:4222").on_event(|event| {
    ///     if event == NatsEvent::Disconnected {
    ///         eprintln!("lost the NATS server; reconnecting");
    ///     }
    /// });
    /// # drop(options);
    /// ```
    pub fn on_event<F>(mut self, f: F) -> Self
    where
        F: Fn(NatsEvent) + Send + Sync + 'static,
    {
        self.on_event = Some(Box::new(f));
        self
    }

    /// **Unstable escape hatch:** applies any other setting of the NATS
    /// client library, `async-nats`, to its `ConnectOptions`, after those
    /// above (for example `client_capacity`, or `tls_client_config` with a
    /// custom `rustls` configuration). The bus installs its own event
    /// callback, replacing one set here: use
    /// [`on_event`](NatsOptions::on_event) to see the events.
    ///
    /// Only with the `unstable-async-nats` feature. This method is the one
    /// place where this crate's API exposes `async-nats`, a 0.x crate whose
    /// every minor release may break its API: the signature follows the
    /// `async-nats` version this crate depends on (0.51 today), and a
    /// release of this crate that moves to a newer `async-nats` changes it
    /// without a major version bump. Code that uses it may need changes
    /// then; code that does not is unaffected.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::NatsOptions;
    ///
    /// let options = NatsOptions::new("nats://127.0.0.1:4222")
    ///     .configure_async_nats(|o| o.client_capacity(4096).read_buffer_capacity(65535));
    /// # drop(options);
    /// ```
    #[cfg(feature = "unstable-async-nats")]
    #[cfg_attr(docsrs, doc(cfg(feature = "unstable-async-nats")))]
    pub fn configure_async_nats<F>(mut self, f: F) -> Self
    where
        F: FnOnce(async_nats::ConnectOptions) -> async_nats::ConnectOptions + Send + Sync + 'static,
    {
        self.configure = Some(Box::new(f));
        self
    }

    /// Makes `address` durable (at-least-once, on NATS JetStream): a
    /// `send` or `publish` to it from this bus is stored by the server
    /// before it returns `Ok`, and this node's consumers of it acknowledge
    /// each message once handled; a failed, panicked or timed-out handler
    /// gets it again, up to the maximum number of deliveries, after which
    /// it goes to the dead-letter address. `send` reaches one consumer in
    /// the cluster, `publish` every node with a consumer (each node has its
    /// own durable consumer, named after its
    /// [`connection_name`](NatsOptions::connection_name), which durable
    /// addresses require). Requests to the address stay as they are
    /// (NATS core, at most once).
    ///
    /// Declare the address on every node that sends to or consumes it,
    /// with the same settings: the server's stream and consumers are
    /// created by the first node to connect and checked by the others
    /// (see [`DurableOptions`](crate::DurableOptions)). The server must run JetStream
    /// (`nats-server -js`).
    ///
    /// The guide (`book/src/cluster.md`, "Durable addresses") says when to use them, what they cost
    /// and what handlers must do (be idempotent: a message may come twice).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use codecbus_bus::{DurableOptions, EventBus, Message, NatsOptions};
    ///
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let bus = EventBus::builder()
    ///     .nats(
    ///         NatsOptions::new("nats://127.0.0.1:4222")
    ///             .connection_name("billing-1")
    ///             .durable("payments", DurableOptions::new().max_deliveries(3)),
    ///     )
    ///     .connect()
    ///     .await?;
    /// let _c = bus.consumer("payments", |m: Message<String>| async move {
    ///     // at least once: the same payment may come twice (m.delivery_count())
    ///     println!("charging {}", m.body());
    /// });
    /// bus.send("payments", "order 7".to_string()).await?; // stored once Ok
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "jetstream")]
    #[cfg_attr(docsrs, doc(cfg(feature = "jetstream")))]
    pub fn durable(
        mut self,
        address: impl Into<String>,
        options: crate::transport::nats::durable_options::DurableOptions,
    ) -> Self {
        self.durable.push((address.into(), options));
        self
    }

    /// The JetStream domain that holds this bus's durable addresses (the
    /// `domain` in the `jetstream { }` block of the servers that store
    /// them). Without it the durable addresses live in the JetStream of
    /// the server (or cluster) the node is connected to. A node at an edge
    /// site whose server is a leaf node of a central cluster names the
    /// central domain to share its durable addresses, or its own to keep
    /// them at the site. `connect` refuses an empty name or one with `.`,
    /// `*`, `>` or white space (`BuildErrorKind::Config`); a domain no
    /// server answers for fails `connect` with `BuildErrorKind::Connect`.
    #[cfg(feature = "jetstream")]
    pub fn jetstream_domain(mut self, domain: impl Into<String>) -> Self {
        self.jetstream_domain = Some(domain.into());
        self
    }

    /// The connection name, which names this node's durable consumers.
    #[cfg(feature = "jetstream")]
    pub(crate) fn node_name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The `async-nats` options these settings stand for. Reads the
    /// credentials file, if one is set.
    pub(crate) async fn take_connect_options(
        &mut self,
    ) -> Result<async_nats::ConnectOptions, String> {
        wire::check_prefix(&self.subject_prefix)?;
        let mut o = async_nats::ConnectOptions::new();
        if let Some(name) = &self.name {
            o = o.name(name);
        }
        if let Some((user, password)) = &self.user_password {
            o = o.user_and_password(user.clone(), password.clone());
        }
        if let Some(token) = &self.token {
            o = o.token(token.clone());
        }
        if let Some(seed) = &self.nkey {
            o = o.nkey(seed.clone());
        }
        if let Some(path) = &self.credentials_file {
            o = o.credentials_file(path).await.map_err(|e| {
                format!(
                    "cannot read the NATS credentials file {}: {e}",
                    path.display()
                )
            })?;
        }
        if self.require_tls {
            o = o.require_tls(true);
        }
        if self.tls_first {
            o = o.tls_first();
        }
        if let Some(path) = &self.root_certificates {
            check_pem(path, "root certificates", "CERTIFICATE-----")?;
            o = o.add_root_certificates(path.clone());
        }
        if let Some((cert, key)) = &self.client_certificate {
            check_pem(cert, "client certificate", "CERTIFICATE-----")?;
            check_pem(key, "client key", "PRIVATE KEY-----")?;
            o = o.add_client_certificate(cert.clone(), key.clone());
        }
        if let Some(timeout) = self.connection_timeout {
            o = o.connection_timeout(timeout);
        }
        if let Some(cap) = self.max_reconnect_delay {
            o = o.reconnect_delay_callback(move |attempts| reconnect_delay(attempts, cap));
        }
        if let Some(n) = self.max_reconnects {
            o = o.max_reconnects(n);
        }
        if self.retain_server_order {
            o = o.retain_servers_order();
        }
        if let Some(interval) = self.ping_interval {
            o = o.ping_interval(interval);
        }
        match self.subscription_capacity {
            Some(0) => {
                return Err(
                    "a NATS subscription capacity of 0 messages: it must be at least 1".to_owned(),
                );
            }
            Some(capacity) => o = o.subscription_capacity(capacity),
            None => {}
        }
        #[cfg(feature = "unstable-async-nats")]
        if let Some(configure) = self.configure.take() {
            o = configure(o);
        }
        Ok(o)
    }
}

/// Checks that the PEM file at `path` can be read and holds a `-----BEGIN
/// …{label}` block: the NATS client would report a missing file without
/// its name, and skip a file without certificates in silence (the server's
/// certificate then fails as signed by an unknown issuer).
fn check_pem(path: &std::path::Path, what: &str, label: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the NATS {what} file {}: {e}", path.display()))?;
    let found = text
        .lines()
        .any(|line| line.starts_with("-----BEGIN ") && line.ends_with(label));
    if found {
        Ok(())
    } else {
        Err(format!(
            "the NATS {what} file {} holds no PEM block ending in `{label}`",
            path.display()
        ))
    }
}

/// Exponential back-off from 0 (first attempt) doubling from 1 ms, capped.
fn reconnect_delay(attempts: usize, cap: Duration) -> Duration {
    if attempts <= 1 {
        return Duration::ZERO;
    }
    let exp = u32::try_from(attempts - 2).unwrap_or(u32::MAX).min(30);
    Duration::from_millis(1u64 << exp).min(cap)
}

impl fmt::Debug for NatsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Secrets are never printed, only whether they are set.
        f.debug_struct("NatsOptions")
            .field("servers", &self.servers)
            .field("subject_prefix", &self.subject_prefix)
            .field("connection_name", &self.name)
            .field("user", &self.user_password.as_ref().map(|(u, _)| u))
            .field("password", &self.user_password.as_ref().map(|_| "***"))
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("nkey", &self.nkey.as_ref().map(|_| "***"))
            .field("credentials_file", &self.credentials_file)
            .field("require_tls", &self.require_tls)
            .field("retain_server_order", &self.retain_server_order)
            .field("tls_first", &self.tls_first)
            .field("root_certificates", &self.root_certificates)
            .field("subscription_capacity", &self.subscription_capacity)
            .field("compress_above", &self.compress_above)
            .field("wire_version", &self.wire_version)
            .field(
                "client_certificate",
                &self.client_certificate.as_ref().map(|(c, _)| c),
            )
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_capped() {
        let cap = Duration::from_millis(100);
        assert_eq!(reconnect_delay(1, cap), Duration::ZERO);
        assert_eq!(reconnect_delay(2, cap), Duration::from_millis(1));
        assert_eq!(reconnect_delay(5, cap), Duration::from_millis(8));
        assert_eq!(reconnect_delay(50, cap), cap);
        assert_eq!(reconnect_delay(usize::MAX, cap), cap);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_zero_subscription_capacity_is_refused() {
        let mut o = NatsOptions::new("nats://x:1").subscription_capacity(0);
        let Err(err) = o.take_connect_options().await else {
            panic!("a zero capacity was accepted")
        };
        assert!(err.contains("capacity of 0"), "{err}");
        let mut o = NatsOptions::new("nats://x:1").subscription_capacity(1);
        assert!(o.take_connect_options().await.is_ok());
    }

    #[cfg(feature = "unstable-async-nats")]
    #[tokio::test(flavor = "current_thread")]
    async fn the_escape_hatch_applies_last() {
        let mut o = NatsOptions::new("nats://x:1")
            .connection_name("stable")
            .configure_async_nats(|o| o.name("raw").max_reconnects(3));
        let connect = o.take_connect_options().await.expect("valid options");
        let text = format!("{connect:?}");
        assert!(text.contains(r#""name": Some("raw")"#), "{text}");
        assert!(text.contains(r#""max_reconnects": Some(3)"#), "{text}");
    }

    #[test]
    fn events_have_their_own_type() {
        let client = async_nats::Event::SlowConsumer(7);
        assert_eq!(NatsEvent::of_client(&client), NatsEvent::SlowConsumer(7));
        assert_eq!(
            NatsEvent::of_client(&async_nats::Event::Disconnected).to_string(),
            "disconnected"
        );
    }

    #[test]
    fn debug_hides_secrets() {
        let o = NatsOptions::new("nats://x:1")
            .user_and_password("u", "hunter2")
            .token("tok3n")
            .nkey("SUSEED");
        let text = format!("{o:?}");
        assert!(!text.contains("hunter2") && !text.contains("tok3n") && !text.contains("SUSEED"));
        assert!(text.contains("\"u\""));
    }
}
