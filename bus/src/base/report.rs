//! What a successful publish reports.

/// The outcome of a [`publish`](crate::EventBus::publish) that reached at
/// least one consumer (or the cluster): how many consumers of this node got
/// the message, how many refused it because their queue was full, and how
/// many because it does not conform to their spec.
///
/// A publish that some consumers refused is not an error (as in Vert.x,
/// one full consumer never fails a publish), but it is never silent
/// either: the refusals are here, in [`Metrics::refused`](crate::Metrics::refused)
/// and in a `tracing` event.
///
/// In a cluster the message goes to the NATS server once and every node,
/// this one included, hands it to its exported consumers and counts those
/// deliveries and refusals in its own metrics; the report then counts only
/// this node's local-only consumers, served directly
/// ([`to_cluster`](PublishReport::to_cluster) is `true`).
///
/// # Examples
///
/// ```
/// use codecbus_bus::{ConsumerOptions, EventBus};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let bus = EventBus::new();
/// let one = ConsumerOptions::new().queue_capacity(1);
/// let mut fast = bus.consumer_stream::<u32>("ticks");
/// let _slow = bus.consumer_stream_with::<u32>("ticks", one);
///
/// let first = bus.publish("ticks", 1u32).await.unwrap();
/// assert_eq!((first.delivered(), first.refused()), (2, 0));
/// let second = bus.publish("ticks", 2u32).await.unwrap(); // `_slow` is full
/// assert_eq!((second.delivered(), second.refused()), (1, 1));
/// assert!(!second.all_delivered());
/// assert_eq!(bus.metrics().refused, 1);
/// assert_eq!(*fast.recv().await.unwrap().body(), 1);
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PublishReport {
    delivered: usize,
    refused: usize,
    invalid: usize,
    to_cluster: bool,
}

impl PublishReport {
    pub(crate) fn new(delivered: usize, refused: usize, invalid: usize, to_cluster: bool) -> Self {
        Self {
            delivered,
            refused,
            invalid,
            to_cluster,
        }
    }

    /// How many consumers of this node got the message (in a cluster: of
    /// its local-only consumers).
    pub fn delivered(&self) -> usize {
        self.delivered
    }

    /// How many consumers of this node did not get it because their queue
    /// was full (in a cluster: of its local-only consumers).
    pub fn refused(&self) -> usize {
        self.refused
    }

    /// How many consumers of this node refused it because it does not
    /// conform to their spec (`ConsumerOptions::spec` (feature `json`);
    /// in a cluster: of its local-only consumers).
    pub fn invalid(&self) -> usize {
        self.invalid
    }

    /// Whether no consumer counted here refused the message.
    pub fn all_delivered(&self) -> bool {
        self.refused == 0 && self.invalid == 0
    }

    /// Whether the message went to the cluster's server, which hands it to
    /// every node with an exported consumer of the address (this one
    /// included); those deliveries are not counted here.
    pub fn to_cluster(&self) -> bool {
        self.to_cluster
    }
}
