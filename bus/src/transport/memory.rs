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
// Delivery happens on the receiving node's reader task, as over NATS: a
// message goes into the node's inbox (a channel, so one sender's messages
// keep their order), and the node's reader decodes and delivers it, and
// may start the handler of an address's one consumer there, never on the
// sender's stack. The reader starts on the runtime current when the node
// first subscribes (or, failing that, when a message first comes), and
// again if that runtime went away.
//
// A node that closes leaves: its subscriptions go, its own requests still
// waiting fail with `Transport` (the slot they wait on goes with them, so
// a further turn sent there finds nobody: `NoHandlers`, as a NATS reply
// subject of a closed connection), and flush fails as over NATS.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};

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
/// travel (a header NATS cannot carry, such as a value with whitespace at
/// either end, is refused with `Transport`, as over NATS), an address over
/// the cluster's length limit is refused with `Transport`, and a message
/// larger than [`max_payload`](Self::max_payload) is refused with
/// `PayloadTooLarge`. A send or publish that no node takes is dropped
/// without an error (NATS is at-most-once); a request that no node takes
/// fails at once with `NoHandlers`.
///
/// As over NATS, a node reads what the others send it on a task of its
/// own, in the order each sender sent it: a handler never runs on the
/// sender's stack (the one consumer of an address may start on the
/// receiving node's reader task, as on a NATS node's). A node that closes
/// leaves the cluster: its requests still waiting fail with `Transport`,
/// and [`flush`](crate::EventBus::flush) fails as it does on NATS.
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
            inbox: Arc::new(Inbox {
                node,
                reader: Mutex::new(None),
            }),
            closed: AtomicBool::new(false),
            left: watch::Sender::new(false),
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
    /// The nodes that joined and have not left, for the shapes they tell
    /// each other.
    nodes: Mutex<Vec<(u64, Weak<dyn Node>)>>,
}

impl Default for Hub {
    fn default() -> Self {
        Self {
            max_payload: DEFAULT_MAX_PAYLOAD,
            next_id: AtomicU64::new(0),
            addresses: Mutex::default(),
            nodes: Mutex::default(),
        }
    }
}

impl Hub {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Members>> {
        self.addresses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn nodes(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Weak<dyn Node>)>> {
        self.nodes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The node a send or request to `address` goes to (round robin).
    fn one(&self, address: &str) -> Option<Arc<Inbox>> {
        let mut addresses = self.lock();
        let members = addresses.get_mut(address)?;
        let n = members.nodes.len();
        (0..n).find_map(|_| {
            let i = members.next % n;
            members.next = members.next.wrapping_add(1);
            let inbox = &members.nodes[i].1;
            inbox.is_alive().then(|| Arc::clone(inbox))
        })
    }

    /// Every node subscribed to `address`.
    fn all(&self, address: &str) -> Vec<Arc<Inbox>> {
        self.lock().get(address).map_or_else(Vec::new, |members| {
            members
                .nodes
                .iter()
                .filter(|(_, inbox)| inbox.is_alive())
                .map(|(_, inbox)| Arc::clone(inbox))
                .collect()
        })
    }
}

#[derive(Default)]
struct Members {
    /// Node id and node, in subscription order.
    nodes: Vec<(u64, Arc<Inbox>)>,
    /// Round-robin position.
    next: usize,
}

/// Where the answer to a request goes: the requester's slot. An answer
/// that expects an answer in turn brings the slot for it.
pub(crate) struct Slot(oneshot::Sender<(Frame, Option<Slot>)>);

/// A message for a node's consumers, as its reader takes it from its
/// inbox: the frame as it arrived (`Frame::received`).
enum Incoming {
    Send(Arc<str>, Frame),
    Request(Arc<str>, Frame, Slot),
    /// One frame for every node the publish reaches.
    Publish(Arc<str>, Arc<Frame>),
}

/// A node as other nodes reach it: what they send it goes into its inbox,
/// which its reader task reads in order.
struct Inbox {
    node: Weak<dyn Node>,
    /// The reader's channel, once it runs.
    reader: Mutex<Option<mpsc::UnboundedSender<Incoming>>>,
}

impl Inbox {
    /// Whether the node is still there.
    fn is_alive(&self) -> bool {
        self.node.strong_count() > 0
    }

    /// Starts the reader on the current runtime, unless it runs.
    fn start(&self, link: &Arc<Link>) {
        let mut reader = self.reader.lock().unwrap_or_else(PoisonError::into_inner);
        if reader.as_ref().is_none_or(mpsc::UnboundedSender::is_closed) {
            *reader = self.spawn(link);
        }
    }

    /// Hands `incoming` to the node's reader, starting one on the current
    /// runtime when none runs (the runtime it ran on went away). Without a
    /// runtime to read it, the message is lost, as one for a NATS node
    /// whose reader is gone (a request's requester learns it from its
    /// timeout).
    fn put(&self, incoming: Incoming, link: &Arc<Link>) {
        let mut reader = self.reader.lock().unwrap_or_else(PoisonError::into_inner);
        let incoming = match reader.as_ref() {
            Some(tx) => match tx.send(incoming) {
                Ok(()) => return,
                Err(mpsc::error::SendError(back)) => back,
            },
            None => incoming,
        };
        *reader = self.spawn(link);
        if reader.as_ref().is_none_or(|tx| tx.send(incoming).is_err()) {
            tracing::warn!(
                "message from {FROM} lost: the receiving node has no tokio runtime to read it on"
            );
        }
    }

    /// A reader task on the current runtime, and its channel.
    fn spawn(&self, link: &Arc<Link>) -> Option<mpsc::UnboundedSender<Incoming>> {
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let (tx, rx) = mpsc::unbounded_channel();
        runtime.spawn(read(rx, Weak::clone(&self.node), Arc::clone(link)));
        Some(tx)
    }
}

/// A node's reader: delivers what its inbox holds, in order, through the
/// cluster's inbound path (as the NATS reader of an address does), until
/// the node goes away.
async fn read(mut inbox: mpsc::UnboundedReceiver<Incoming>, node: Weak<dyn Node>, link: Arc<Link>) {
    let limit = link.hub.max_payload;
    while let Some(incoming) = inbox.recv().await {
        let Some(inner) = node.upgrade() else { break };
        match incoming {
            Incoming::Send(address, frame) => {
                // A send expects no answer: nothing to do after it.
                let _ = cluster::deliver_send(&inner, &address, frame, false, FROM);
            }
            Incoming::Publish(address, frame) => {
                cluster::deliver_publish(&inner, &address, &frame, FROM);
            }
            Incoming::Request(address, frame, to) => {
                match cluster::deliver_send(&inner, &address, frame, true, FROM) {
                    Delivered::Done { .. } => {}
                    Delivered::Failed(failure) => {
                        let _ = to.0.send((failure.received(limit), None));
                    }
                    Delivered::Awaiting { rx, .. } => {
                        tokio::spawn(cluster::answer(
                            Arc::clone(&link),
                            Arc::downgrade(&inner),
                            address,
                            to,
                            rx,
                        ));
                    }
                }
            }
        }
    }
}

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

/// The error of a flush, or of a request still waiting, once the node has
/// left the cluster: the NATS transport's.
const CLOSED: &str = "the bus is closed";

/// One node's side of an [`InMemoryCluster`].
pub(crate) struct MemoryTransport {
    link: Arc<Link>,
    id: u64,
    /// This node as the others reach it.
    inbox: Arc<Inbox>,
    closed: AtomicBool,
    /// Set once the node left: the requests still waiting fail.
    left: watch::Sender<bool>,
}

impl MemoryTransport {
    /// The frame of `out`, or why it cannot leave.
    fn frame(&self, out: &Outbound) -> Result<Frame, Refuse> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Refuse::Transport(format!(
                "{CLOSED}: it left its in-memory cluster; the message to address {} was not sent",
                out.address
            )));
        }
        cluster::check_address(&out.address).map_err(Refuse::Transport)?;
        let frame = cluster::frame(out, cluster::Writing::default())?;
        if let Some(message) = cluster::too_large(
            "Message",
            &out.address,
            &frame,
            self.link.hub.max_payload,
            <Link as Answers>::LIMIT,
        ) {
            return Err(Refuse::TooLarge(message));
        }
        Ok(frame.received(self.link.hub.max_payload))
    }

    /// Subscribes or unsubscribes `address` as this node's consumers want.
    fn sync(&self, address: &Arc<str>) {
        let mut addresses = self.link.hub.lock();
        // Asked under the hub's lock: of racing changes, the last one to
        // get here sees the latest table. An address too long to leave a
        // node is not subscribed, as NATS refuses its subject.
        let want = !self.closed.load(Ordering::Acquire)
            && cluster::check_address(address).is_ok()
            && self
                .inbox
                .node
                .upgrade()
                .is_some_and(|node| node.local().has_exported(address));
        let members = addresses.entry(Arc::clone(address)).or_default();
        let has = members.nodes.iter().position(|(id, _)| *id == self.id);
        match (want, has) {
            (true, None) => {
                // The reader runs where the node's consumers register, as
                // a NATS node's on the runtime that connected it.
                self.inbox.start(&self.link);
                members.nodes.push((self.id, Arc::clone(&self.inbox)));
            }
            (false, Some(i)) => {
                members.nodes.remove(i);
            }
            _ => {}
        }
        if members.nodes.is_empty() {
            addresses.remove(address);
        }
    }

    /// Leaves the cluster: no address of this node is subscribed any more,
    /// and its requests still waiting fail.
    fn leave(&self) {
        self.closed.store(true, Ordering::Release);
        {
            let mut addresses = self.link.hub.lock();
            addresses.retain(|_, members| {
                members.nodes.retain(|(id, _)| *id != self.id);
                !members.nodes.is_empty()
            });
        }
        self.left.send_replace(true);
        // The others forget this node's shapes.
        let others: Vec<Arc<dyn Node>> = {
            let mut nodes = self.link.hub.nodes();
            nodes.retain(|(id, node)| *id != self.id && node.strong_count() > 0);
            nodes
                .iter()
                .filter_map(|(_, node)| node.upgrade())
                .collect()
        };
        let name = node_name(self.id);
        for other in others {
            other.peers().forget(&name);
        }
    }
}

/// A node's name in the shapes' report.
fn node_name(id: u64) -> String {
    format!("in-memory node {id}")
}

impl Drop for MemoryTransport {
    fn drop(&mut self) {
        self.leave();
    }
}

impl RemoteTransport for MemoryTransport {
    fn send(&self, out: Outbound) -> BoxFuture<'_, Result<(), SendError>> {
        let result = self.frame(&out).map(|frame| {
            if let Some(inbox) = self.link.hub.one(&out.address) {
                let address = Arc::clone(&out.address);
                inbox.put(Incoming::Send(address, frame), &self.link);
            }
        });
        Box::pin(std::future::ready(
            result.map_err(|refuse| refuse.into_error(out)),
        ))
    }

    fn publish(&self, out: Outbound) -> BoxFuture<'_, Result<(), PublishError>> {
        let result = self.frame(&out).map(|frame| {
            let frame = Arc::new(frame);
            for inbox in self.link.hub.all(&out.address) {
                let address = Arc::clone(&out.address);
                inbox.put(Incoming::Publish(address, Arc::clone(&frame)), &self.link);
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
            let Some(inbox) = self.link.hub.one(&address) else {
                let err = cluster::no_handlers(&address);
                cluster::count_unanswered(&inner, &out, err.kind());
                return Err(err.with_address(address).with_body(out.body));
            };
            // Watched before the request leaves: a close from now on
            // ends the wait.
            let mut left = self.left.subscribe();
            let (tx, rx) = oneshot::channel();
            inbox.put(
                Incoming::Request(Arc::clone(&address), frame, Slot(tx)),
                &self.link,
            );
            drop(inbox);
            let answered = tokio::select! {
                answered = await_answer(rx, &address, timeout) => answered,
                _ = left.wait_for(|left| *left) => Err(RequestError::new(
                    crate::base::error::RequestErrorKind::Transport,
                    format!(
                        "{CLOSED}: it left its in-memory cluster while the request to address {address} awaited its reply"
                    ),
                )),
            };
            let (frame, to) = match answered {
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
        let flushed = if self.closed.load(Ordering::Acquire) {
            Err(CLOSED.to_owned())
        } else {
            Ok(())
        };
        Box::pin(std::future::ready(flushed))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        self.leave();
        Box::pin(std::future::ready(()))
    }

    fn counts(&self) -> RemoteCounts {
        RemoteCounts::default()
    }

    fn joined(&self) {
        // The nodes of the cluster and this one tell each other their
        // shapes, through the same announcement as over NATS.
        let Some(me) = self.inbox.node.upgrade() else {
            return;
        };
        let others: Vec<(u64, Arc<dyn Node>)> = {
            let mut nodes = self.link.hub.nodes();
            nodes.retain(|(_, node)| node.strong_count() > 0);
            let others = nodes
                .iter()
                .filter_map(|(id, node)| Some((*id, node.upgrade()?)))
                .collect();
            nodes.push((self.id, Weak::clone(&self.inbox.node)));
            others
        };
        #[cfg(feature = "shapes")]
        {
            let mine = cluster::announcement(&*me);
            let name = node_name(self.id);
            for (id, other) in others {
                let theirs = cluster::announcement(&*other);
                let _ = cluster::learn(&*me, &node_name(id), theirs.as_bytes(), FROM);
                let _ = cluster::learn(&*other, &name, mine.as_bytes(), FROM);
            }
        }
        #[cfg(not(feature = "shapes"))]
        drop((me, others));
    }
}
