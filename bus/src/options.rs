//! Per-message and per-consumer options.

use std::time::Duration;

use crate::headers::Headers;

/// Options for one `send`, `publish`, `request` or reply: timeout, headers,
/// local-only (Vert.x's `DeliveryOptions`).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use codecbus_bus::DeliveryOptions;
///
/// let options = DeliveryOptions::new()
///     .with_timeout(Duration::from_millis(250))
///     .with_header("trace-id", "7f3a")
///     .with_local_only(true);
/// assert_eq!(options.timeout(), Some(Duration::from_millis(250)));
/// assert_eq!(options.headers().get("trace-id"), Some("7f3a"));
/// assert!(options.is_local_only());
/// ```
#[derive(Debug, Clone, Default)]
pub struct DeliveryOptions {
    timeout: Option<Duration>,
    headers: Headers,
    local_only: bool,
}

impl DeliveryOptions {
    /// No timeout override, no headers, not local-only.
    pub const fn new() -> Self {
        Self {
            timeout: None,
            headers: Headers::new(),
            local_only: false,
        }
    }

    /// How long a request waits for its reply; without it the bus default
    /// applies ([`EventBusBuilder::default_timeout`](crate::EventBusBuilder::default_timeout),
    /// 30 s unless changed). Ignored by `send` and `publish`.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Adds one header.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.append(name, value);
        self
    }

    /// Replaces all headers.
    #[must_use]
    pub fn with_headers(mut self, headers: Headers) -> Self {
        self.headers = headers;
        self
    }

    /// Deliver only to consumers in this process, never through a cluster
    /// transport. (Without a cluster transport every delivery is local.)
    #[must_use]
    pub fn with_local_only(mut self, local_only: bool) -> Self {
        self.local_only = local_only;
        self
    }

    /// The timeout override, if any.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The headers sent with the message.
    pub fn headers(&self) -> &Headers {
        &self.headers
    }

    /// The headers, to change in place.
    pub fn headers_mut(&mut self) -> &mut Headers {
        &mut self.headers
    }

    /// Whether delivery is restricted to this process.
    pub fn is_local_only(&self) -> bool {
        self.local_only
    }

    pub(crate) fn into_parts(self) -> (Option<Duration>, Headers, bool) {
        (self.timeout, self.headers, self.local_only)
    }
}

/// The default time a request waits for its reply (30 s, as in Vert.x).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The default capacity of a consumer's queue.
pub const DEFAULT_QUEUE_CAPACITY: usize = 1000;

/// Options for one consumer: its queue capacity and whether a cluster
/// transport may export it.
///
/// # Examples
///
/// ```
/// use codecbus_bus::ConsumerOptions;
///
/// let options = ConsumerOptions::new().with_queue_capacity(16).with_local_only(true);
/// assert_eq!(options.queue_capacity(), Some(16));
/// assert!(options.is_local_only());
/// ```
#[derive(Debug, Clone, Default)]
pub struct ConsumerOptions {
    capacity: Option<usize>,
    local_only: bool,
}

impl ConsumerOptions {
    /// The bus default capacity, exported.
    pub const fn new() -> Self {
        Self {
            capacity: None,
            local_only: false,
        }
    }

    /// The number of messages that may wait for this consumer. When the
    /// queue is full, `send`, `publish` and `request` fail fast with a
    /// `QueueFull` kind (see the crate docs on back-pressure).
    ///
    /// # Panics
    ///
    /// The consumer registration panics when `capacity` is 0.
    #[must_use]
    pub fn with_queue_capacity(mut self, capacity: usize) -> Self {
        self.capacity = Some(capacity);
        self
    }

    /// Keep the consumer to this process: a cluster transport never
    /// exports it (Vert.x `localConsumer`).
    #[must_use]
    pub fn with_local_only(mut self, local_only: bool) -> Self {
        self.local_only = local_only;
        self
    }

    /// The capacity override, if any.
    pub fn queue_capacity(&self) -> Option<usize> {
        self.capacity
    }

    /// Whether the consumer stays local.
    pub fn is_local_only(&self) -> bool {
        self.local_only
    }
}
