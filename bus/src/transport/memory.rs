// The in-memory cluster: several buses of one process joined as NATS
// joins them, with nothing but memory between them. A node subscribes an
// address while it has an exported consumer there (as a NATS node holds
// its two subscriptions); a send or request goes to one subscribed node
// (round robin, as a queue group), a publish to each; every message is
// really encoded into a frame and decoded by codec name on arrival, by the
// same inbound path as over NATS (`cluster.rs`), and the frame's size is
// held to `max_payload` as a NATS server counts it. A request carries
// where its answer goes (a one-shot slot, the reply subject's stand-in),
// and an answer that expects one in turn carries the next slot.
//
// Delivery happens in the sender's task: decoding and enqueueing never
// wait, so there is no reader task, and the transport needs no runtime of
// its own until a request awaits its answer.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::oneshot;

use crate::base::error::{PublishError, RequestError, SendError};
use crate::base::reply::ReplyEnvelope;
use crate::transport::cluster::{self, Answered, Answers, Delivered, Frame, Refuse};
use crate::transport::{BoxFuture, Node, Outbound, RemoteCounts, RemoteTransport};

/// The largest message of an [`InMemoryCluster`] by default, headers
/// included: 1 MiB, a NATS server's default `max_payload`.
pub const DEFAULT_MAX_PAYLOAD: usize = 1024 * 1024;

/// Names the transport in logs.
const FROM: &str = "the in-memory cluster";

/// A cluster of buses inside one process, with the semantics of the NATS
/// cluster: for tests of multi-node code in plain `cargo test`, without a
/// server (Vert.x users know the idea as the fake cluster manager).
///
/// Every bus built with [`EventBusBuilder::in_memory_cluster`] joins it.
/// Between them, as over NATS: a `send` or `request` goes to one node with
/// a consumer of the address (round robin), a `publish` to every such
/// node; local-only consumers and local-only messages stay on their node;
/// bodies are encoded with their codec and decoded by codec name on the
/// receiving node (a type without a registered codec cannot leave its
/// node, a codec the receiver does not know is a `Codec` error); headers
/// travel, and a message larger than [`max_payload`](Self::max_payload)
/// is refused with `PayloadTooLarge`. A send or publish that no node takes
/// is dropped without an error (NATS is at-most-once); a request that no
/// node takes fails at once with `NoHandlers`.
///
/// Cheap to clone: clones are the same cluster.
///
/// # Examples
///
/// ```
/// use codecbus_bus::{EventBus, InMemoryCluster, Message};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let cluster = InMemoryCluster::new();
/// let a = EventBus::builder().in_memory_cluster(&cluster).build().unwrap();
/// let b = EventBus::builder().in_memory_cluster(&cluster).build().unwrap();
/// let _c = b.consumer("double", |m: Message<u64>| async move { m.reply(*m.body() * 2) });
/// // `a` has no consumer of its own: the request crosses to `b`, encoded.
/// let four: Message<u64> = a.request("double", 2u64).await.unwrap();
/// assert_eq!(*four.body(), 4);
/// assert_eq!(b.metrics().remote_received, 1);
/// # }
/// ```
///
/// [`EventBusBuilder::in_memory_cluster`]: crate::EventBusBuilder::in_memory_cluster
#[derive(Clone, Default)]
pub struct InMemoryCluster {
    hub: Arc<Hub>,
}

impl InMemoryCluster {
    /// A new, empty cluster with a `max_payload` of
    /// [`DEFAULT_MAX_PAYLOAD`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A new, empty cluster whose messages may be at most `bytes` long,
    /// headers included (as a NATS server's `max_payload`).
    pub fn with_max_payload(bytes: usize) -> Self {
        Self {
            hub: Arc::new(Hub {
                max_payload: bytes,
                ..Hub::default()
            }),
        }
    }

    /// The largest message, headers included.
    pub fn max_payload(&self) -> usize {
        self.hub.max_payload
    }

    /// How many nodes subscribe `address` (have an exported consumer of
    /// it) now.
    pub fn subscribers(&self, address: &str) -> usize {
        self.hub
            .lock()
            .get(address)
            .map_or(0, |members| members.nodes.len())
    }

    /// The transport of a new node of this cluster, for the bus behind
    /// `node`.
    pub(crate) fn join(&self, node: Weak<dyn Node>) -> MemoryTransport {
        MemoryTransport {
            link: Arc::new(Link {
                hub: Arc::clone(&self.hub),
            }),
            id: self.hub.next_id.fetch_add(1, Ordering::Relaxed),
            node,
            closed: AtomicBool::new(false),
        }
    }
}

impl fmt::Debug for InMemoryCluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryCluster")
            .field("max_payload", &self.hub.max_payload)
            .field("addresses", &self.hub.lock().len())
            .finish()
    }
}

/// The subscriptions of the cluster: address to the nodes that have an
/// exported consumer of it.
struct Hub {
    max_payload: usize,
    next_id: AtomicU64,
    addresses: Mutex<HashMap<Arc<str>, Members>>,
}

impl Default for Hub {
    fn default() -> Self {
        Self {
            max_payload: DEFAULT_MAX_PAYLOAD,
            next_id: AtomicU64::new(0),
            addresses: Mutex::default(),
        }
    }
}

impl Hub {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Members>> {
        self.addresses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The node a send or request to `address` goes to (round robin).
    fn one(&self, address: &str) -> Option<Arc<dyn Node>> {
        let mut addresses = self.lock();
        let members = addresses.get_mut(address)?;
        let n = members.nodes.len();
        (0..n).find_map(|_| {
            let i = members.next % n;
            members.next = members.next.wrapping_add(1);
            members.nodes[i].1.upgrade()
        })
    }

    /// Every node subscribed to `address`.
    fn all(&self, address: &str) -> Vec<Arc<dyn Node>> {
        self.lock().get(address).map_or_else(Vec::new, |members| {
            members
                .nodes
                .iter()
                .filter_map(|(_, node)| node.upgrade())
                .collect()
        })
    }
}

#[derive(Default)]
struct Members {
    /// Node id and node, in subscription order.
    nodes: Vec<(u64, Weak<dyn Node>)>,
    /// Round-robin position.
    next: usize,
}

/// Where the answer to a request goes: the requester's slot. An answer
/// that expects an answer in turn brings the slot for it.
pub(crate) struct Slot(oneshot::Sender<(Frame, Option<Slot>)>);

/// What the conversations of a node need of the cluster.
struct Link {
    hub: Arc<Hub>,
}

impl Answers for Link {
    type To = Slot;

    const LIMIT: &'static str = "the in-memory cluster";

    fn max_payload(&self) -> usize {
        self.hub.max_payload
    }

    fn finish(self: &Arc<Self>, to: Slot, frame: Frame) -> BoxFuture<'static, ()> {
        // A requester gone meanwhile takes nothing, as over NATS.
        let _ = to.0.send((frame.received(self.hub.max_payload), None));
        Box::pin(std::future::ready(()))
    }

    fn ask(
        self: &Arc<Self>,
        to: Slot,
        frame: Frame,
        wait: Duration,
        address: &Arc<str>,
    ) -> BoxFuture<'static, Answered<Slot>> {
        let (tx, rx) = oneshot::channel();
        let sent =
            to.0.send((frame.received(self.hub.max_payload), Some(Slot(tx))));
        let address = Arc::clone(address);
        Box::pin(async move {
            if sent.is_err() {
                return Err(cluster::no_handlers(&address));
            }
            await_answer(rx, &address, wait).await
        })
    }
}

/// Awaits the answer in `rx` for at most `wait`.
async fn await_answer(
    rx: oneshot::Receiver<(Frame, Option<Slot>)>,
    address: &str,
    wait: Duration,
) -> Answered<Slot> {
    match tokio::time::timeout(wait, rx).await {
        Ok(Ok(answer)) => Ok(answer),
        // The answering node went away without a word: as over NATS, the
        // requester learns it from its timeout.
        Ok(Err(_)) => {
            tokio::time::sleep(wait).await;
            Err(cluster::timed_out(address, wait))
        }
        Err(_) => Err(cluster::timed_out(address, wait)),
    }
}

/// One node's side of an [`InMemoryCluster`].
pub(crate) struct MemoryTransport {
    link: Arc<Link>,
    id: u64,
    node: Weak<dyn Node>,
    closed: AtomicBool,
}

impl MemoryTransport {
    /// The frame of `out`, or why it cannot leave.
    fn frame(&self, out: &Outbound) -> Result<Frame, Refuse> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Refuse::Transport(format!(
                "the bus is closed: it left its in-memory cluster; the message to address {} was not sent",
                out.address
            )));
        }
        let frame = cluster::frame(out, None)?;
        if let Some(message) = cluster::too_large(
            "Message",
            &out.address,
            &frame,
            self.link.hub.max_payload,
            <Link as Answers>::LIMIT,
        ) {
            return Err(Refuse::TooLarge(message));
        }
        Ok(frame)
    }

    /// Subscribes or unsubscribes `address` as this node's consumers want.
    fn sync(&self, address: &Arc<str>) {
        let mut addresses = self.link.hub.lock();
        // Asked under the hub's lock: of racing changes, the last one to
        // get here sees the latest table.
        let want = !self.closed.load(Ordering::Acquire)
            && self
                .node
                .upgrade()
                .is_some_and(|node| node.local().has_exported(address));
        let members = addresses.entry(Arc::clone(address)).or_default();
        let has = members.nodes.iter().position(|(id, _)| *id == self.id);
        match (want, has) {
            (true, None) => members.nodes.push((self.id, Weak::clone(&self.node))),
            (false, Some(i)) => {
                members.nodes.remove(i);
            }
            _ => {}
        }
        if members.nodes.is_empty() {
            addresses.remove(address);
        }
    }

    /// Leaves the cluster: no address of this node is subscribed any more.
    fn leave(&self) {
        self.closed.store(true, Ordering::Release);
        let mut addresses = self.link.hub.lock();
        addresses.retain(|_, members| {
            members.nodes.retain(|(id, _)| *id != self.id);
            !members.nodes.is_empty()
        });
    }
}

impl Drop for MemoryTransport {
    fn drop(&mut self) {
        self.leave();
    }
}

impl RemoteTransport for MemoryTransport {
    fn send(&self, out: Outbound) -> BoxFuture<'_, Result<(), SendError>> {
        let result = self.frame(&out).map(|frame| {
            if let Some(node) = self.link.hub.one(&out.address) {
                // A send expects no answer: nothing to do after it.
                let frame = frame.received(self.link.hub.max_payload);
                let _ = cluster::deliver_send(&node, &out.address, frame, false, FROM);
            }
        });
        Box::pin(std::future::ready(
            result.map_err(|refuse| refuse.into_error(out)),
        ))
    }

    fn publish(&self, out: Outbound) -> BoxFuture<'_, Result<(), PublishError>> {
        let result = self.frame(&out).map(|frame| {
            let frame = frame.received(self.link.hub.max_payload);
            for node in self.link.hub.all(&out.address) {
                cluster::deliver_publish(&node, &out.address, &frame, FROM);
            }
        });
        Box::pin(std::future::ready(
            result.map_err(|refuse| refuse.into_error(out)),
        ))
    }

    fn request(
        &self,
        out: Outbound,
        timeout: Duration,
        inner: Arc<dyn Node>,
    ) -> BoxFuture<'_, Result<ReplyEnvelope, RequestError>> {
        Box::pin(async move {
            let frame = match self.frame(&out) {
                Ok(frame) => frame,
                Err(refuse) => return Err(refuse.into_error(out)),
            };
            let address = Arc::clone(&out.address);
            let Some(node) = self.link.hub.one(&address) else {
                let err = cluster::no_handlers(&address);
                cluster::count_unanswered(&inner, &out, err.kind());
                return Err(err.with_address(address).with_body(out.body));
            };
            let (tx, rx) = oneshot::channel();
            let limit = self.link.hub.max_payload;
            match cluster::deliver_send(&node, &address, frame.received(limit), true, FROM) {
                Delivered::Done { .. } => {}
                Delivered::Failed(failure) => {
                    let _ = tx.send((failure.received(limit), None));
                }
                Delivered::Awaiting { rx: answer, .. } => {
                    tokio::spawn(cluster::answer(
                        Arc::clone(&self.link),
                        Arc::downgrade(&node),
                        Arc::clone(&address),
                        Slot(tx),
                        answer,
                    ));
                }
            }
            drop(node);
            let (frame, to) = match await_answer(rx, &address, timeout).await {
                Ok(answer) => answer,
                Err(err) => {
                    cluster::count_unanswered(&inner, &out, err.kind());
                    return Err(err.with_address(address));
                }
            };
            cluster::read_answer(&self.link, &inner, &address, frame, to)
        })
    }

    fn consumer_added(&self, address: &Arc<str>) {
        self.sync(address);
    }

    fn consumer_removed(&self, address: &Arc<str>) {
        self.sync(address);
    }

    fn flush(&self) -> BoxFuture<'_, Result<(), String>> {
        // Subscriptions change as consumers come and go, at once.
        Box::pin(std::future::ready(Ok(())))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        self.leave();
        Box::pin(std::future::ready(()))
    }

    fn counts(&self) -> RemoteCounts {
        RemoteCounts::default()
    }
}
