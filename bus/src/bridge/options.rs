//! What a bridge lets through, and its limits.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use codecbus_core::MessageType;
use codecbus_json::JsValue;

use crate::bridge::carry::{Carry, Typed};
use crate::bridge::events::{self, BridgeEvent, Hook, Verdict};
use crate::bridge::permit::PermittedOptions;

/// The largest frame a client may send unless set otherwise: 1 MiB and
/// 64 KiB, so that a body of 1 MiB fits with its address, headers and the
/// rest of its frame.
pub const DEFAULT_MAX_FRAME: usize = 1024 * 1024 + 64 * 1024;
/// How many addresses one connection may register unless set otherwise
/// (Vert.x's SockJS bridge: `maxHandlersPerSocket`, 1 000).
pub const DEFAULT_MAX_REGISTRATIONS: usize = 1000;
/// How many requests may wait for their answer on one connection, in each
/// direction, unless set otherwise.
pub const DEFAULT_MAX_PENDING_REPLIES: usize = 1000;
/// How many connections a bridge serves at once unless set otherwise.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// The longest address a client may name unless set otherwise (Vert.x's
/// SockJS bridge: `maxAddressLength`, 200).
pub const DEFAULT_MAX_ADDRESS_LENGTH: usize = 200;
/// How long a connection may stay silent (no frame, not even a `ping`)
/// before it is closed, unless set otherwise.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a request from the bus waits for a client's answer unless
/// set otherwise (Vert.x's SockJS bridge: `replyTimeout`, 30 s).
pub const DEFAULT_REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long writing to a client may stall before its connection is
/// closed, unless set otherwise.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// How many bytes one connection may hold unless set otherwise: 16 MiB
/// (sixteen 1 MiB bodies on their way).
pub const DEFAULT_CONNECTION_BUDGET: usize = 16 * 1024 * 1024;
/// How many bytes all the connections of a bridge may hold unless set
/// otherwise: 256 MiB.
pub const DEFAULT_BRIDGE_BUDGET: usize = 256 * 1024 * 1024;

/// The limits of a bridge and its connections, copied into each.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) max_frame: usize,
    pub(crate) max_registrations: usize,
    pub(crate) max_pending_replies: usize,
    pub(crate) max_connections: usize,
    pub(crate) max_address_length: usize,
    pub(crate) idle_timeout: Duration,
    pub(crate) reply_timeout: Duration,
    pub(crate) write_timeout: Duration,
    pub(crate) connection_budget: usize,
    pub(crate) bridge_budget: usize,
}

/// The options of a bridge: what may come in from clients (`inbound`:
/// their sends, publishes and answers), what may go out to them
/// (`outbound`: registrations and the messages they receive), the types
/// bodies take at each address, and the limits of each connection.
///
/// Nothing is permitted unless an entry lists it.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use codecbus_core::MessageCodec;
/// use codecbus_bus::bridge::{BridgeOptions, PermittedOptions};
///
/// #[derive(MessageCodec, Clone, Debug)]
/// struct Order { id: u64, sku: String }
///
/// let options = BridgeOptions::new()
///     .inbound(PermittedOptions::new().address("shop.orders"))
///     .outbound(PermittedOptions::new().address_regex("^news\\..+"))
///     .typed::<Order>("shop.orders")
///     .max_frame(64 * 1024)
///     .idle_timeout(Duration::from_secs(30));
/// ```
#[derive(Clone)]
pub struct BridgeOptions {
    pub(crate) inbound: Vec<PermittedOptions>,
    pub(crate) outbound: Vec<PermittedOptions>,
    pub(crate) types: HashMap<String, Vec<Arc<dyn Carry>>>,
    pub(crate) limits: Limits,
    pub(crate) hook: Option<Hook>,
}

impl Default for BridgeOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for BridgeOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let types: HashMap<&str, Vec<&str>> = self
            .types
            .iter()
            .map(|(a, c)| (a.as_str(), c.iter().map(|c| c.type_name()).collect()))
            .collect();
        f.debug_struct("BridgeOptions")
            .field("inbound", &self.inbound)
            .field("outbound", &self.outbound)
            .field("types", &types)
            .field("limits", &self.limits)
            .field("on_event", &self.hook.is_some())
            .finish()
    }
}

impl BridgeOptions {
    /// Options that permit nothing, with the default limits.
    pub fn new() -> Self {
        Self {
            inbound: Vec::new(),
            outbound: Vec::new(),
            types: HashMap::new(),
            limits: Limits {
                max_frame: DEFAULT_MAX_FRAME,
                max_registrations: DEFAULT_MAX_REGISTRATIONS,
                max_pending_replies: DEFAULT_MAX_PENDING_REPLIES,
                max_connections: DEFAULT_MAX_CONNECTIONS,
                max_address_length: DEFAULT_MAX_ADDRESS_LENGTH,
                idle_timeout: DEFAULT_IDLE_TIMEOUT,
                reply_timeout: DEFAULT_REPLY_TIMEOUT,
                write_timeout: DEFAULT_WRITE_TIMEOUT,
                connection_budget: DEFAULT_CONNECTION_BUDGET,
                bridge_budget: DEFAULT_BRIDGE_BUDGET,
            },
            hook: None,
        }
    }

    /// Adds an inbound permission: clients may send and publish to what it
    /// admits (Vert.x's `addInboundPermitted`).
    #[must_use]
    pub fn inbound(mut self, permitted: PermittedOptions) -> Self {
        self.inbound.push(permitted);
        self
    }

    /// Adds an outbound permission: clients may register what it admits,
    /// and receive its messages (Vert.x's `addOutboundPermitted`).
    #[must_use]
    pub fn outbound(mut self, permitted: PermittedOptions) -> Self {
        self.outbound.push(permitted);
        self
    }

    /// Bodies at `address` are `T`s: a client's body sent or published
    /// there is decoded as a `T` (its JSON read as the MessagePack `T`'s
    /// codec reads), and a client that registers `address` receives its
    /// `T` messages as JSON. A client's answer to a request made there is
    /// a [`JsValue`]; see [`typed_request`](Self::typed_request).
    ///
    /// An address may take several types: a body is decoded as the first
    /// of them that reads it, and a registration receives each. An address
    /// with no type declared carries `JsValue`.
    #[must_use]
    pub fn typed<T>(self, address: impl Into<String>) -> Self
    where
        T: MessageType + Send + Sync + 'static,
    {
        self.typed_request::<T, JsValue>(address)
    }

    /// As [`typed`](Self::typed), and a client's answer to a request of
    /// type `T` at `address` is an `R`.
    #[must_use]
    pub fn typed_request<T, R>(mut self, address: impl Into<String>) -> Self
    where
        T: MessageType + Send + Sync + 'static,
        R: MessageType + Send + Sync + 'static,
    {
        self.types
            .entry(address.into())
            .or_default()
            .push(Arc::new(Typed::<T, R>::new()));
        self
    }

    /// The largest frame (its JSON, without the 4 length bytes) a client
    /// may send: a longer one gets an `err` frame (`frame_too_large`) and
    /// is skipped as it arrives, never held; the connection goes on. (A
    /// SockJS message over twice the limit cannot be skipped: after its
    /// `err` frame the session ends.) Default [`DEFAULT_MAX_FRAME`].
    #[must_use]
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.limits.max_frame = bytes;
        self
    }

    /// How many addresses one connection may register; one more gets an
    /// `err` frame (`max_handlers_reached`). Default
    /// [`DEFAULT_MAX_REGISTRATIONS`].
    #[must_use]
    pub fn max_registrations(mut self, n: usize) -> Self {
        self.limits.max_registrations = n;
        self
    }

    /// How many of a connection's requests may wait for their reply at
    /// once, and how many requests from the bus may wait for the client's
    /// answer: one more client request gets an `err` frame at its reply
    /// address, one more bus request fails with `RecipientFailure`.
    /// Default [`DEFAULT_MAX_PENDING_REPLIES`].
    #[must_use]
    pub fn max_pending_replies(mut self, n: usize) -> Self {
        self.limits.max_pending_replies = n;
        self
    }

    /// How many connections the bridge serves at once; more are closed
    /// as they come. Default [`DEFAULT_MAX_CONNECTIONS`].
    #[must_use]
    pub fn max_connections(mut self, n: usize) -> Self {
        self.limits.max_connections = n;
        self
    }

    /// The longest address a client may name; a longer one gets an `err`
    /// frame (`max_address_length_reached`). Default
    /// [`DEFAULT_MAX_ADDRESS_LENGTH`].
    #[must_use]
    pub fn max_address_length(mut self, bytes: usize) -> Self {
        self.limits.max_address_length = bytes;
        self
    }

    /// How long a connection may stay silent before it is closed: clients
    /// keep it open with `ping` frames. Default [`DEFAULT_IDLE_TIMEOUT`].
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.limits.idle_timeout = timeout;
        self
    }

    /// How long a request from the bus waits for the client's answer
    /// before it fails. Default [`DEFAULT_REPLY_TIMEOUT`].
    #[must_use]
    pub fn reply_timeout(mut self, timeout: Duration) -> Self {
        self.limits.reply_timeout = timeout;
        self
    }

    /// How long writing to a client may stall (a client that does not
    /// read) before its connection is closed. Default
    /// [`DEFAULT_WRITE_TIMEOUT`].
    #[must_use]
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.limits.write_timeout = timeout;
        self
    }

    /// How many bytes one connection may hold: its frames waiting to be
    /// written, and the client's requests on their way through the bus
    /// (counted by their frames until their answers are written). Over it,
    /// the bridge reads nothing more from the client until what it holds
    /// drains (TCP's own back-pressure then reaches the client), and
    /// messages for the client wait in its registrations' queues: a client
    /// that does not read slows only itself, and is closed after the write
    /// timeout. A frame is always taken whole, so a connection may pass
    /// its budget by one frame and its answer. Default
    /// [`DEFAULT_CONNECTION_BUDGET`].
    #[must_use]
    pub fn connection_budget(mut self, bytes: usize) -> Self {
        self.limits.connection_budget = bytes;
        self
    }

    /// How many bytes all the bridge's connections (on every transport it
    /// serves) may hold together. Over it, each connection holding more
    /// than its first 256 KiB waits as over its own budget, so connections
    /// in good health go on while others fill the bridge. Default
    /// [`DEFAULT_BRIDGE_BUDGET`].
    #[must_use]
    pub fn bridge_budget(mut self, bytes: usize) -> Self {
        self.limits.bridge_budget = bytes;
        self
    }

    /// The bridge's event hook (Vert.x's bridge event handler): called
    /// for each [`BridgeEvent`] of each connection, on the connection's
    /// task, before the bridge acts on it, and answered with the event's
    /// [`allow`](BridgeEvent::allow) or [`refuse`](BridgeEvent::refuse).
    /// It may take its time (a token looked up): the connection's next
    /// frame waits for it. It may change the frame, store what it learnt
    /// for the connection's later events, and grant the connection
    /// authorities ([`BridgeConnection::grant`](crate::bridge::BridgeConnection::grant)).
    /// A hook that panics refuses the event.
    ///
    /// # Examples
    ///
    /// A token checked on a connection's first frame, its user put into
    /// the headers of every frame after it:
    ///
    /// ```
    /// use codecbus_bus::bridge::{BridgeEventType, BridgeOptions, PermittedOptions};
    ///
    /// struct User(String);
    ///
    /// let options = BridgeOptions::new()
    ///     .inbound(PermittedOptions::new().address("orders").required_authority("shop"))
    ///     .on_event(|mut event| async move {
    ///         if !matches!(event.kind(), BridgeEventType::Send | BridgeEventType::Publish) {
    ///             return event.allow();
    ///         }
    ///         let connection = event.connection().clone();
    ///         if connection.get::<User>().is_none() {
    ///             // A real hook asks an identity service here.
    ///             match event.header("token") {
    ///                 Some("s3cret") => {
    ///                     connection.insert(User("ada".into()));
    ///                     connection.grant("shop");
    ///                 }
    ///                 _ => return event.refuse(),
    ///             }
    ///         }
    ///         let user = connection.get::<User>().map(|u| u.0.clone()).unwrap_or_default();
    ///         event.set_header("user", user);
    ///         event.allow()
    ///     });
    /// ```
    #[must_use]
    pub fn on_event<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(BridgeEvent) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Verdict> + Send + 'static,
    {
        self.hook = Some(events::hook(hook));
        self
    }
}
