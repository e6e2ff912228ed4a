//! Per-message and per-consumer options.

use std::time::Duration;

use crate::base::headers::Headers;

/// The setters the options of a message and of a reply share: the timeout
/// (documented by the caller: what it bounds differs) and the headers.
macro_rules! timeout_and_headers {
    ($timeout:literal) => {
        #[doc = $timeout]
        #[must_use]
        pub fn timeout(mut self, timeout: Duration) -> Self {
            self.timeout = Some(timeout);
            self
        }

        /// Adds one header.
        #[must_use]
        pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.headers.append(name, value);
            self
        }

        /// Replaces all headers.
        #[must_use]
        pub fn headers(mut self, headers: Headers) -> Self {
            self.headers = headers;
            self
        }
    };
}

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
///     .timeout(Duration::from_millis(250))
///     .header("trace-id", "7f3a")
///     .local_only(true);
/// ```
///
/// Setters take the options by value and return them, as tokio's and
/// async-nats's builders do; a message's own headers are read from the
/// [`Message`](crate::Message) that carries them.
#[derive(Debug, Clone, Default)]
pub struct DeliveryOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) headers: Headers,
    pub(crate) local_only: bool,
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

    timeout_and_headers!(
        "How long a request waits for its reply; without it the bus default \
         applies (the builder's `default_timeout`, 30 s unless changed). \
         Ignored by `send` and `publish`."
    );

    /// Deliver only to consumers in this process, never through a cluster
    /// transport. (Without a cluster transport every delivery is local.)
    #[must_use]
    pub fn local_only(mut self, local_only: bool) -> Self {
        self.local_only = local_only;
        self
    }

    pub(crate) fn into_parts(self) -> (Option<Duration>, Headers, bool) {
        (self.timeout, self.headers, self.local_only)
    }
}

/// Options for a reply: its headers and, for a turn of a conversation
/// ([`Message::reply_and_request_with`](crate::Message::reply_and_request_with)),
/// how long to wait for the answer. A reply goes back to its requester
/// wherever that is, so there is no local-only setting.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use codecbus_bus::ReplyOptions;
///
/// let options = ReplyOptions::new().header("by", "pricing").timeout(Duration::from_secs(2));
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Default)]
pub struct ReplyOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) headers: Headers,
}

impl ReplyOptions {
    /// No headers; a turn waits for the bus default timeout.
    pub const fn new() -> Self {
        Self {
            timeout: None,
            headers: Headers::new(),
        }
    }

    timeout_and_headers!(
        "How long a turn of a conversation waits for its answer; without it \
         the bus default applies. Ignored by a plain reply."
    );
}

/// The default time a request waits for its reply (30 s, as in Vert.x).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The default capacity of a consumer's queue.
pub const DEFAULT_QUEUE_CAPACITY: usize = 1000;

/// Options for one consumer: its queue capacity, whether a cluster
/// transport may export it, and (feature `json`) a spec its bodies must
/// conform to.
///
/// # Examples
///
/// ```
/// use codecbus_bus::ConsumerOptions;
///
/// let options = ConsumerOptions::new().queue_capacity(16).local_only(true);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ConsumerOptions {
    pub(crate) capacity: Option<usize>,
    pub(crate) local_only: bool,
    #[cfg(feature = "json")]
    pub(crate) spec: Option<codecbus_json::spec::Spec>,
}

impl ConsumerOptions {
    /// The bus default capacity, exported, no spec.
    pub const fn new() -> Self {
        Self {
            capacity: None,
            local_only: false,
            #[cfg(feature = "json")]
            spec: None,
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
    pub fn queue_capacity(mut self, capacity: usize) -> Self {
        self.capacity = Some(capacity);
        self
    }

    /// Keep the consumer to this process: a cluster transport never
    /// exports it (Vert.x `localConsumer`).
    #[must_use]
    pub fn local_only(mut self, local_only: bool) -> Self {
        self.local_only = local_only;
        self
    }

    /// Guard the consumer with a JSON spec: a body that does not conform
    /// never reaches it. The consumer must take [`JsValue`], [`JsObj`] or
    /// [`JsArray`] bodies.
    ///
    /// The check runs where the message is delivered, before any room is
    /// taken in the consumer's queue. A refused `send` or `publish` fails
    /// with the kind `Invalid` (a publish only when no consumer took the
    /// message; [`PublishReport::invalid`](crate::PublishReport::invalid)
    /// counts the others); a refused `request` with `RecipientFailure`.
    /// The error's message lists every violation with its JSON Pointer
    /// (the first 16, then how many more). Each refusal is counted in
    /// [`Metrics::invalid`](crate::Metrics::invalid).
    ///
    /// Across NATS the receiving node checks while it decodes
    /// ([`Spec::decode`](codecbus_json::spec::Spec::decode)) when every
    /// consumer there is guarded by this one registration's spec, so an
    /// invalid message is never built; a remote requester gets the same
    /// `RecipientFailure`, a remote `send` or `publish` is counted and
    /// logged at `warn` (it has no one to answer).
    ///
    /// [`JsValue`]: codecbus_json::JsValue
    /// [`JsObj`]: codecbus_json::JsObj
    /// [`JsArray`]: codecbus_json::JsArray
    ///
    /// # Panics
    ///
    /// Registering the consumer panics when its body type is not one of
    /// the three JSON types.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{ConsumerOptions, EventBus, Message, RequestErrorKind};
    /// use codecbus_json::spec::{integer, string};
    /// use codecbus_json::{JsObj, jsobj, jsobj_spec};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let spec = jsobj_spec! { "sku": string().length(1..=12), "qty": integer().range(1..=100) };
    /// let options = ConsumerOptions::new().spec(spec);
    /// let _orders = bus.consumer_with("orders", options, |m: Message<JsObj>| async move {
    ///     m.reply(m.body().clone()) // only conforming orders get here
    /// });
    ///
    /// let ok: Message<JsObj> = bus.request("orders", jsobj! { "sku": "tea", "qty": 2 }).await.unwrap();
    /// assert_eq!(ok.body(), &jsobj! { "sku": "tea", "qty": 2 });
    ///
    /// let err = bus
    ///     .request::<JsObj>("orders", jsobj! { "sku": "", "qty": 0 })
    ///     .await
    ///     .unwrap_err();
    /// assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    /// assert_eq!(
    ///     err.message(),
    ///     "Body refused at address orders: it does not conform to the consumer's spec: \
    ///      /qty: expected integer in 1..=100, found 0; \
    ///      /sku: expected string of 1..=12 characters, found a string of 0 characters"
    /// );
    /// assert_eq!(bus.metrics().invalid, 1);
    /// # }
    /// ```
    #[cfg(feature = "json")]
    #[cfg_attr(docsrs, doc(cfg(feature = "json")))]
    #[must_use]
    pub fn spec(mut self, spec: impl Into<codecbus_json::spec::Spec>) -> Self {
        self.spec = Some(spec.into());
        self
    }
}
