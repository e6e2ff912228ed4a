//! The public settings of a durable address (NATS JetStream): its stream,
//! its consumers, redelivery and the dead-letter address, with their
//! defaults; the header names a durable message carries.

use std::fmt;
use std::time::Duration;

/// The user header whose value is a durable message's id: the server
/// stores one message per id within the stream's duplicate window
/// ([`DurableOptions::duplicate_window`]), so a send retried with the same
/// id after an error is stored once. Set it with
/// [`DeliveryOptions::header`](crate::DeliveryOptions::header);
/// without it the bus generates a unique id and sets this header, so the
/// handler sees the id either way (to make its work idempotent).
pub const MESSAGE_ID_HEADER: &str = "Message-Id";

/// On a dead letter: the address the message was sent to.
pub const DEAD_LETTER_ADDRESS_HEADER: &str = "Dead-Letter-Address";

/// On a dead letter: how many times the message was delivered.
pub const DEAD_LETTER_DELIVERIES_HEADER: &str = "Dead-Letter-Deliveries";

/// On a dead letter: why it was given up (the handler's last error, or
/// "not acknowledged" when its deliveries ran out on timeouts).
pub const DEAD_LETTER_REASON_HEADER: &str = "Dead-Letter-Reason";

/// When the server removes stored messages of a durable address (the
/// stream's retention policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Retention {
    /// Messages stay until the stream's limits (maximum age, maximum
    /// bytes) remove the oldest. The default: nothing stored is removed
    /// because nobody consumed it yet.
    #[default]
    Limits,
    /// A message is removed once every consumer that existed when it was
    /// stored has acknowledged it. A publish made while no node consumes
    /// the address is not kept for later nodes.
    Interest,
    /// A message is removed once acknowledged (a work queue). Only for
    /// addresses that are sent to, never published to: the server refuses
    /// a second node's consumer of publishes.
    WorkQueue,
}

impl fmt::Display for Retention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Limits => "limits",
            Self::Interest => "interest",
            Self::WorkQueue => "work queue",
        })
    }
}

/// How a durable address is stored and delivered (NATS JetStream), given
/// to [`NatsOptions::durable`](crate::NatsOptions::durable).
///
/// Every setting has a default, stated on its method. The stream and the
/// consumers are created with these settings when the bus connects, or
/// checked against them when they exist: a difference fails `connect`
/// with a [`Config`](crate::BuildErrorKind::Config) error naming the
/// setting; the bus never reconfigures an existing stream.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use codecbus_bus::{DurableOptions, Retention};
///
/// let options = DurableOptions::new()
///     .retention(Retention::Limits)
///     .max_age(Duration::from_secs(24 * 3600))
///     .ack_wait(Duration::from_secs(10))
///     .max_deliveries(3)
///     .dead_letter("orders.failed"); // without it: "<address>.dead"
/// # let _ = options;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct DurableOptions {
    pub(crate) retention: Retention,
    pub(crate) max_age: Option<Duration>,
    pub(crate) max_bytes: Option<u64>,
    pub(crate) replicas: usize,
    pub(crate) placement_cluster: Option<String>,
    pub(crate) placement_tags: Vec<String>,
    pub(crate) duplicate_window: Duration,
    pub(crate) ack_wait: Duration,
    pub(crate) max_deliveries: Option<u32>,
    pub(crate) redelivery_delay: Duration,
    pub(crate) dead_letter: Option<String>,
    pub(crate) max_in_flight: usize,
    pub(crate) store_timeout: Duration,
}

/// How long a durable send waits for the server's confirmation by default:
/// 5 seconds (see [`DurableOptions::store_timeout`]).
pub const DEFAULT_STORE_TIMEOUT: Duration = Duration::from_secs(5);

/// The default maximum age of a stored message: 7 days.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);

impl Default for DurableOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl DurableOptions {
    /// The defaults: [`Retention::Limits`], messages kept 7 days, no byte
    /// limit, 1 replica, a duplicate window of 2 minutes, an ack wait of
    /// 30 seconds, at most 5 deliveries, a redelivery delay of 1 second,
    /// dead letters to `{address}.dead`, at most 256 messages in flight
    /// per consumer node, a store timeout of 5 seconds.
    pub fn new() -> Self {
        Self {
            retention: Retention::Limits,
            max_age: Some(DEFAULT_MAX_AGE),
            max_bytes: None,
            replicas: 1,
            placement_cluster: None,
            placement_tags: Vec::new(),
            duplicate_window: Duration::from_secs(120),
            ack_wait: Duration::from_secs(30),
            max_deliveries: Some(5),
            redelivery_delay: Duration::from_secs(1),
            dead_letter: None,
            max_in_flight: 256,
            store_timeout: DEFAULT_STORE_TIMEOUT,
        }
    }

    /// When stored messages are removed (default [`Retention::Limits`]).
    pub fn retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }

    /// How long a message is kept at most (default 7 days).
    pub fn max_age(mut self, age: Duration) -> Self {
        self.max_age = Some(age);
        self
    }

    /// Keeps messages without an age limit.
    pub fn unlimited_age(mut self) -> Self {
        self.max_age = None;
        self
    }

    /// The most bytes the stream holds; the oldest messages go first
    /// (default: no limit).
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = Some(bytes);
        self
    }

    /// How many servers of a NATS cluster store each message (default 1;
    /// 3 or 5 in a cluster that must survive the loss of servers).
    pub fn replicas(mut self, replicas: usize) -> Self {
        self.replicas = replicas;
        self
    }

    /// Places the stream in the NATS cluster `name` (the `cluster { name }`
    /// of its servers), for a supercluster whose clusters are joined by
    /// gateways; by default the stream goes to the cluster of the server
    /// the first node is connected to. Its replicas all live in that
    /// cluster.
    pub fn placement_cluster(mut self, name: impl Into<String>) -> Self {
        self.placement_cluster = Some(name.into());
        self
    }

    /// Places the stream on servers that carry every one of these tags
    /// (`server_tags` in their config: a region, a disk class...); each
    /// replica goes to a different server among them (default: no tags,
    /// any server).
    pub fn placement_tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.placement_tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// How long the server remembers a message id to drop a duplicate
    /// (default 2 minutes; see [`MESSAGE_ID_HEADER`]).
    pub fn duplicate_window(mut self, window: Duration) -> Self {
        self.duplicate_window = window;
        self
    }

    /// How long a delivered message may stay unacknowledged before the
    /// server delivers it again (default 30 seconds): a handler that takes
    /// longer gets its message a second time, and a consumer node that
    /// died gives its messages back after this long. The clock starts when
    /// the server delivers the message to the node, so it also covers the
    /// time the message waits in the consumer's queue behind up to
    /// [`max_in_flight`](DurableOptions::max_in_flight) others.
    pub fn ack_wait(mut self, wait: Duration) -> Self {
        self.ack_wait = wait;
        self
    }

    /// How many times a message is delivered at most (default 5); after
    /// the last failed or timed-out delivery it goes to the dead-letter
    /// address.
    pub fn max_deliveries(mut self, deliveries: u32) -> Self {
        self.max_deliveries = Some(deliveries);
        self
    }

    /// Redelivers without a limit: nothing goes to a dead-letter address.
    pub fn unlimited_deliveries(mut self) -> Self {
        self.max_deliveries = None;
        self
    }

    /// How long after a failed delivery the message comes again (default 1
    /// second).
    pub fn redelivery_delay(mut self, delay: Duration) -> Self {
        self.redelivery_delay = delay;
        self
    }

    /// The dead-letter address (default `{address}.dead`). It is durable
    /// too: declared with these settings, but unlimited deliveries, unless
    /// declared on its own with [`NatsOptions::durable`](crate::NatsOptions::durable).
    pub fn dead_letter(mut self, address: impl Into<String>) -> Self {
        self.dead_letter = Some(address.into());
        self
    }

    /// How many delivered, not yet acknowledged messages a node holds at
    /// most per consumer (default 256); keep it at most the consumers'
    /// queue capacity.
    pub fn max_in_flight(mut self, messages: usize) -> Self {
        self.max_in_flight = messages;
        self
    }

    /// How long a durable `send` or `publish` waits for the server to
    /// confirm that it stored the message (default 5 seconds). Past it the
    /// call fails with a `Transport` error saying so; the message may or
    /// may not be stored (sending it again with the same
    /// [`MESSAGE_ID_HEADER`] stores it once). While the server is down or
    /// restarting, each send waits this long at most: a shorter timeout
    /// gives the caller its error (and the body back) sooner, a longer one
    /// rides out a slower failover. A setting of this node only: not part
    /// of the stream, so nodes may differ.
    pub fn store_timeout(mut self, timeout: Duration) -> Self {
        self.store_timeout = timeout;
        self
    }

    /// The dead-letter address of `address` under these settings; `None`
    /// with unlimited deliveries.
    pub(crate) fn dead_letter_for(&self, address: &str) -> Option<String> {
        self.max_deliveries?;
        Some(
            self.dead_letter
                .clone()
                .unwrap_or_else(|| format!("{address}.dead")),
        )
    }

    /// Checks the settings for `address`.
    pub(crate) fn check(&self, address: &str) -> Result<(), String> {
        let bad = |what: &str| Err(format!("durable address {address:?}: {what}"));
        if !(1..=5).contains(&self.replicas) {
            return bad("replicas must be between 1 and 5");
        }
        if self.placement_cluster.as_deref() == Some("") {
            return bad("the placement cluster name is empty");
        }
        if self.placement_tags.iter().any(String::is_empty) {
            return bad("a placement tag is empty");
        }
        if self.ack_wait < Duration::from_millis(100) {
            return bad("the ack wait must be at least 100 ms");
        }
        if self.max_deliveries == Some(0) {
            return bad("max deliveries must be at least 1");
        }
        if self.store_timeout < Duration::from_millis(10) {
            return bad("the store timeout must be at least 10 ms");
        }
        if self.max_in_flight == 0 {
            return bad("max in flight must be at least 1");
        }
        if self.max_age == Some(Duration::ZERO) {
            return bad("a max age of 0 would keep nothing (use unlimited_age)");
        }
        if self.max_bytes.is_some_and(|b| b > i64::MAX as u64) {
            return bad("max bytes is too large");
        }
        if self.dead_letter_for(address).as_deref() == Some(address) {
            return bad("the dead-letter address must differ from the address");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::DurableOptions;

    #[test]
    fn the_dead_letter_address_is_named_or_derived_and_none_when_unlimited() {
        let named = DurableOptions::new()
            .max_deliveries(3)
            .dead_letter("orders.failed");
        assert_eq!(
            named.dead_letter_for("orders").as_deref(),
            Some("orders.failed")
        );
        let derived = DurableOptions::new();
        assert_eq!(
            derived.dead_letter_for("orders").as_deref(),
            Some("orders.dead")
        );
        let unlimited = DurableOptions::new().unlimited_deliveries();
        assert_eq!(unlimited.dead_letter_for("orders"), None);
    }
}
