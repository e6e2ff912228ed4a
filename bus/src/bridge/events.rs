//! Bridge events, as Vert.x has them (`BridgeEvent`): a hook of the user's
//! ([`BridgeOptions::on_event`](crate::bridge::BridgeOptions::on_event)),
//! called for each event of each connection, which sees the frame and the
//! connection, may take its time (look a token up), may refuse, and may
//! change the frame.

use std::any::{Any, TypeId};
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::FutureExt as _;
use serde_json::{Map, Value};

/// What happened on a bridge connection: the events of Vert.x's
/// `BridgeEventType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BridgeEventType {
    /// A client connected. Refused: the connection is closed at once.
    SocketCreated,
    /// The connection closed. Its verdict is not asked for.
    SocketClosed,
    /// The connection fell silent for the idle timeout. Allowed: it is
    /// closed; refused: it is kept, and the idle timeout starts again.
    SocketIdle,
    /// The client pinged. Refused: no `pong`, the client's `err` frame.
    SocketPing,
    /// The client sends (a `send` frame: a message, a request, or the
    /// answer to a request from the bus).
    Send,
    /// The client publishes.
    Publish,
    /// A message goes out to the client (a message of one of its
    /// registrations). Refused: the client does not get it (a request
    /// fails at once).
    Receive,
    /// The client registers an address.
    Register,
    /// The client's registration is in place. Its verdict is not asked
    /// for.
    Registered,
    /// The client unregisters an address.
    Unregister,
}

/// One connection of a bridge, as its events see it: where it comes from,
/// the client certificate it presented over TLS, and what the hook stored
/// for it: the authorities it was granted (checked against
/// [`PermittedOptions::required_authority`](crate::bridge::PermittedOptions::required_authority))
/// and values of any type. Clones share the connection.
#[derive(Clone)]
pub struct BridgeConnection {
    inner: Arc<Connection>,
}

struct Connection {
    id: u64,
    peer: Option<SocketAddr>,
    transport: &'static str,
    certificates: Vec<Vec<u8>>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    authorities: BTreeSet<String>,
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl fmt::Debug for BridgeConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BridgeConnection")
            .field("id", &self.inner.id)
            .field("peer", &self.inner.peer)
            .field("transport", &self.inner.transport)
            .field("certificates", &self.inner.certificates.len())
            .field("authorities", &self.state().authorities)
            .finish_non_exhaustive()
    }
}

impl BridgeConnection {
    pub(crate) fn new(
        id: u64,
        peer: Option<SocketAddr>,
        transport: &'static str,
        certificates: Vec<Vec<u8>>,
    ) -> Self {
        Self {
            inner: Arc::new(Connection {
                id,
                peer,
                transport,
                certificates,
                state: Mutex::new(State::default()),
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The lock is held only here, around map operations that do not
        // panic; a poisoned one is used as it is.
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The connection's number within its bridge.
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    /// The client's address.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.inner.peer
    }

    /// The transport: `"tcp"`, `"tls"`, `"sockjs"` (SockJS over a
    /// WebSocket) or `"websocket"` (the raw WebSocket).
    pub fn transport(&self) -> &'static str {
        self.inner.transport
    }

    /// The certificate chain the client presented over TLS, each in DER,
    /// its own first; empty without TLS or without a client certificate.
    pub fn peer_certificates(&self) -> &[Vec<u8>] {
        &self.inner.certificates
    }

    /// Grants the connection `authority`: what a permission's
    /// [`required_authority`](crate::bridge::PermittedOptions::required_authority)
    /// asks for. A connection granted none is not logged in.
    pub fn grant(&self, authority: impl Into<String>) {
        self.state().authorities.insert(authority.into());
    }

    /// Takes `authority` back.
    pub fn revoke(&self, authority: &str) {
        self.state().authorities.remove(authority);
    }

    /// Whether the connection was granted `authority`.
    pub fn has_authority(&self, authority: &str) -> bool {
        self.state().authorities.contains(authority)
    }

    /// The authorities granted, sorted.
    pub fn authorities(&self) -> Vec<String> {
        self.state().authorities.iter().cloned().collect()
    }

    /// Stores `value` for the connection (one per type): what a later
    /// event of the same connection finds with [`get`](Self::get), say
    /// the user a token named.
    pub fn insert<T: Send + Sync + 'static>(&self, value: T) {
        self.state()
            .values
            .insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The value of type `T` stored for the connection.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let value = self.state().values.get(&TypeId::of::<T>()).cloned()?;
        value.downcast::<T>().ok()
    }

    /// Removes the value of type `T`.
    pub fn remove<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let value = self.state().values.remove(&TypeId::of::<T>())?;
        value.downcast::<T>().ok()
    }
}

/// One event of a bridge connection, handed to the hook, which answers it
/// with [`allow`](Self::allow) or [`refuse`](Self::refuse).
///
/// The frame is the JSON object the client sent (`Send`, `Publish`,
/// `Register`, `Unregister`, `SocketPing`) or is about to receive
/// (`Receive`), as Vert.x's `getRawMessage`; changed through
/// [`frame_mut`](Self::frame_mut), it goes on as changed (a header added,
/// say).
#[derive(Debug)]
pub struct BridgeEvent {
    kind: BridgeEventType,
    frame: Option<Map<String, Value>>,
    connection: BridgeConnection,
}

impl BridgeEvent {
    pub(crate) fn new(
        kind: BridgeEventType,
        frame: Option<Map<String, Value>>,
        connection: &BridgeConnection,
    ) -> Self {
        Self {
            kind,
            frame,
            connection: connection.clone(),
        }
    }

    /// What happened.
    pub fn kind(&self) -> BridgeEventType {
        self.kind
    }

    /// The frame, for the events that have one.
    pub fn frame(&self) -> Option<&Map<String, Value>> {
        self.frame.as_ref()
    }

    /// The frame, to change.
    pub fn frame_mut(&mut self) -> Option<&mut Map<String, Value>> {
        self.frame.as_mut()
    }

    /// The frame's `address`, when it has one.
    pub fn address(&self) -> Option<&str> {
        self.frame.as_ref()?.get("address")?.as_str()
    }

    /// The frame's header `name`, when it has it as a string.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.frame.as_ref()?.get("headers")?.get(name)?.as_str()
    }

    /// Sets the frame's header `name` (making `headers` when it has none).
    /// Nothing for an event without a frame.
    pub fn set_header(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let Some(frame) = self.frame.as_mut() else {
            return;
        };
        let headers = frame
            .entry("headers")
            .or_insert_with(|| Value::Object(Map::new()));
        if !headers.is_object() {
            *headers = Value::Object(Map::new());
        }
        if let Value::Object(headers) = headers {
            headers.insert(name.into(), Value::String(value.into()));
        }
    }

    /// The connection.
    pub fn connection(&self) -> &BridgeConnection {
        &self.connection
    }

    /// Lets the event go on, with its frame as it is now.
    pub fn allow(self) -> Verdict {
        Verdict {
            allowed: true,
            frame: self.frame,
        }
    }

    /// Stops the event: the client gets the refusal's `err` frame (as from
    /// Vert.x: `blocked by bridgeEvent handler` on TCP, `rejected` on
    /// SockJS), a message is not delivered, a connection is closed.
    pub fn refuse(self) -> Verdict {
        Verdict {
            allowed: false,
            frame: None,
        }
    }
}

/// The hook's answer to a [`BridgeEvent`].
#[derive(Debug)]
#[must_use = "a verdict is the hook's answer: return it"]
pub struct Verdict {
    allowed: bool,
    frame: Option<Map<String, Value>>,
}

impl Verdict {
    /// Whether the event goes on.
    pub fn is_allowed(&self) -> bool {
        self.allowed
    }
}

/// The hook, as the bridge keeps it.
pub(crate) type Hook =
    Arc<dyn Fn(BridgeEvent) -> Pin<Box<dyn Future<Output = Verdict> + Send>> + Send + Sync>;

/// Makes a hook of the user's function.
pub(crate) fn hook<F, Fut>(f: F) -> Hook
where
    F: Fn(BridgeEvent) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Verdict> + Send + 'static,
{
    Arc::new(move |event| Box::pin(f(event)))
}

/// Asks `hook` about an event: the frame to go on with (`Some`, the
/// frame as the hook left it, `None` for an event without one) or `None`
/// when refused. A hook that panics refuses, and the panic is logged.
pub(crate) async fn ask(
    hook: &Hook,
    kind: BridgeEventType,
    frame: Option<Map<String, Value>>,
    connection: &BridgeConnection,
) -> Option<Option<Map<String, Value>>> {
    let event = BridgeEvent::new(kind, frame, connection);
    // The call inside the future: a hook that panics before it returns
    // one is caught as well.
    match AssertUnwindSafe(async { hook(event).await })
        .catch_unwind()
        .await
    {
        Ok(verdict) if verdict.allowed => Some(verdict.frame),
        Ok(_) => None,
        Err(_) => {
            tracing::error!(
                connection = connection.id(),
                event = ?kind,
                "the bridge's event hook panicked: the event is refused"
            );
            None
        }
    }
}
