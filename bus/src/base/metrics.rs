//! Bus counters, kept by `telemetry/record.rs`, the one place that
//! records every event.

use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of the bus counters, from [`EventBus::metrics`](crate::EventBus::metrics).
///
/// Accounting: every `send` and `request` counts once in `sent`, every
/// `publish` once in `published`. Each point-to-point message then ends in
/// exactly one of `delivered` (enqueued for one consumer), `refused` (every
/// candidate queue was full), `invalid` (refused by the consumers' spec),
/// `no_handlers`, `type_mismatches` or `dropped`; a publish adds one to
/// `delivered`, `refused` or `invalid` *per consumer*. So with sends only,
/// `sent == delivered + refused + invalid + no_handlers + type_mismatches +
/// dropped` holds at any quiet moment. With a cluster
/// transport a message is counted as sent where it was sent and as
/// delivered (or refused) on the node whose consumer got it, so the sum
/// holds over the cluster rather than per node.
///
/// # Examples
///
/// ```
/// use codecbus_bus::EventBus;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let bus = EventBus::new();
/// let _c = bus.consumer("a", |_m: codecbus_bus::Message<u32>| async {});
/// bus.send("a", 1u32).await.unwrap();
/// let m = bus.metrics();
/// assert_eq!((m.sent, m.delivered, m.refused), (1, 1, 0));
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Metrics {
    /// `send` and `request` calls.
    pub sent: u64,
    /// `publish` calls.
    pub published: u64,
    /// Messages enqueued for a consumer.
    pub delivered: u64,
    /// Deliveries refused because a queue was full.
    pub refused: u64,
    /// Deliveries refused because the body does not conform to the
    /// consumer's spec (`ConsumerOptions::spec` (feature `json`)),
    /// here or, for a message from the cluster, on this node.
    pub invalid: u64,
    /// Messages for an address without consumers.
    pub no_handlers: u64,
    /// Messages no consumer at the address could take (wrong body type);
    /// for a publish, each consumer skipped for its type.
    pub type_mismatches: u64,
    /// Messages dropped by an interceptor (outbound or inbound).
    pub dropped: u64,
    /// Messages handed to a handler or yielded by a consumer stream.
    pub handled: u64,
    /// Messages discarded from a queue because their consumer was
    /// unregistered first.
    pub discarded: u64,
    /// Replies sent.
    pub replies: u64,
    /// Requests (and conversation turns) of this node that ended in a
    /// recipient failure (`fail`, an error, a panic, no reply, a body the
    /// consumer's spec refused), wherever the recipient ran.
    pub recipient_failures: u64,
    /// Handlers that panicked (included in `recipient_failures` when the
    /// message was a request).
    pub panics: u64,
    /// Requests (and conversation turns) of this node that timed out.
    pub timeouts: u64,
    /// Messages this node received from the cluster transport (NATS):
    /// sends, publishes and requests for its consumers. Replies to its own
    /// requests are not counted.
    pub remote_received: u64,
    /// Messages from the cluster that this node could not decode: an
    /// unknown codec name, an unsupported wire version, or bytes the codec
    /// refused. A request among them is answered with a `Codec` error; a
    /// send or publish is logged at warn level and counted here.
    pub undecodable: u64,
    /// Old codec names this node received from the cluster: aliases of
    /// its codecs (`#[codec(aliases(...))]`, the names a type had before a
    /// rename) that messages, replies among them, arrived under and that
    /// were decoded as the codec's type. Each alias counts once, at its
    /// first message, which is logged at warn level with the alias, the
    /// codec's current name and the address: a peer that still sends an
    /// old name runs an older build. A node sends under current names
    /// only, so such a peer, which may not know them, cannot read this
    /// node's messages of that codec (a reply among them fails its request
    /// with a `Codec` error).
    pub old_codec_names: u64,
    /// Codecs of peers that this node cannot read: a peer, when the nodes
    /// met, told a shape of a codec this node has that its check finds
    /// incompatible (this node's reader, the peer's writer). Each is
    /// logged at error level, naming the peer, the codec, the field and
    /// the rule, and listed by [`EventBus::shape_report`](crate::EventBus::shape_report).
    pub shape_mismatches: u64,
    /// Codecs of peers with another shape that this node reads (a peer
    /// with a new optional field): counted, logged at info level, and
    /// delivered as usual.
    pub shape_differences: u64,
    /// Messages for this node that the cluster client dropped before the
    /// node read them: its buffer for a subscription (65 536 messages by
    /// default) overflowed because the node's reader fell behind, a NATS
    /// "slow consumer". The client reports each drop as an event and queues
    /// at most 128 events, so a burst of drops faster than the events are
    /// read is under-counted. Always 0 without a cluster transport.
    pub remote_dropped: u64,
    /// Durable messages (feature `jetstream`) this node acknowledged to the
    /// server after its consumers handled them. Always 0 without durable
    /// addresses.
    ///
    /// A message this node dead-letters is acknowledged too, but counts in
    /// [`dead_lettered`](Self::dead_lettered) only, never here: each
    /// message is settled once, in one counter. A dead letter handled by a
    /// consumer of the dead-letter address (itself a durable address) is a
    /// message of that address, and its acknowledgement counts here.
    pub durable_acked: u64,
    /// Durable messages this node gave back to the server for redelivery
    /// (a handler failed, a queue was full, the consumer went away before
    /// handling it). The server's own redeliveries after an ack wait that
    /// ran out are not counted here: this node never saw the end of those.
    pub durable_redelivered: u64,
    /// Durable messages this node stored at their dead-letter address (then
    /// acknowledged): after the most deliveries, undecodable, or refused by
    /// the consumers' spec.
    pub dead_lettered: u64,
    /// Times this node's NATS connection was lost (each followed by
    /// reconnection attempts): a server restart, a network failure, or the
    /// client giving up on bytes from the server it could not parse (a
    /// malformed header block another client published, see
    /// RELIABILITY.md). Always 0 without a cluster transport.
    pub remote_disconnects: u64,
    /// Publishes and subscriptions of this node that the NATS server
    /// refused for lack of permission (its `-ERR 'Permissions Violation
    /// …'`), each logged at warn level with its subject. A `send` or
    /// `publish` returns before the server answers, so the first one
    /// refused returned `Ok` and is counted only here; a request fails at
    /// once. For 10 s after a refusal (or until the connection is
    /// re-established) further messages to its subject fail at once with
    /// `Transport`, without leaving: those are not counted here. Always 0
    /// without a cluster transport.
    pub remote_denied: u64,
}

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) sent: AtomicU64,
    pub(crate) published: AtomicU64,
    pub(crate) delivered: AtomicU64,
    pub(crate) refused: AtomicU64,
    pub(crate) invalid: AtomicU64,
    pub(crate) no_handlers: AtomicU64,
    pub(crate) type_mismatches: AtomicU64,
    pub(crate) dropped: AtomicU64,
    pub(crate) handled: AtomicU64,
    pub(crate) discarded: AtomicU64,
    pub(crate) replies: AtomicU64,
    pub(crate) recipient_failures: AtomicU64,
    pub(crate) panics: AtomicU64,
    pub(crate) timeouts: AtomicU64,
    pub(crate) remote_received: AtomicU64,
    pub(crate) undecodable: AtomicU64,
    pub(crate) old_codec_names: AtomicU64,
    pub(crate) shape_mismatches: AtomicU64,
    pub(crate) shape_differences: AtomicU64,
    pub(crate) durable_acked: AtomicU64,
    pub(crate) durable_redelivered: AtomicU64,
    pub(crate) dead_lettered: AtomicU64,
}

/// Adds `n` to a counter; returns the previous value.
#[inline]
pub(crate) fn bump(counter: &AtomicU64, n: u64) -> u64 {
    counter.fetch_add(n, Ordering::Relaxed)
}

impl Counters {
    pub(crate) fn snapshot(&self) -> Metrics {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Metrics {
            sent: get(&self.sent),
            published: get(&self.published),
            delivered: get(&self.delivered),
            refused: get(&self.refused),
            invalid: get(&self.invalid),
            no_handlers: get(&self.no_handlers),
            type_mismatches: get(&self.type_mismatches),
            dropped: get(&self.dropped),
            handled: get(&self.handled),
            discarded: get(&self.discarded),
            replies: get(&self.replies),
            recipient_failures: get(&self.recipient_failures),
            panics: get(&self.panics),
            timeouts: get(&self.timeouts),
            remote_received: get(&self.remote_received),
            undecodable: get(&self.undecodable),
            old_codec_names: get(&self.old_codec_names),
            shape_mismatches: get(&self.shape_mismatches),
            shape_differences: get(&self.shape_differences),
            durable_acked: get(&self.durable_acked),
            durable_redelivered: get(&self.durable_redelivered),
            dead_lettered: get(&self.dead_lettered),
            // Read from the cluster transport by `EventBus::metrics`.
            remote_dropped: 0,
            remote_disconnects: 0,
            remote_denied: 0,
        }
    }
}
