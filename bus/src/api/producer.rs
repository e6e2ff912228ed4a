//! A sender bound to one address, and the bus methods that make one.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use codecbus_core::MessageType;

use crate::api::bus::EventBus;
use crate::base::body::IntoBody;
use crate::base::error::SendError;
use crate::base::options::DeliveryOptions;

/// Sends or publishes messages of type `T` to one address with fixed
/// delivery options (Vert.x `MessageProducer`), from
/// [`EventBus::sender`] or [`EventBus::publisher`]. Cheap to clone.
///
/// # Examples
///
/// ```
/// use codecbus_bus::DeliveryOptions;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let bus = codecbus_bus::EventBus::new();
/// let mut stream = bus.consumer_stream::<String>("audit");
/// let producer = bus
///     .sender::<String>("audit")
///     .delivery_options(DeliveryOptions::new().header("source", "billing"));
/// producer.write("invoice 12 paid".to_string()).await.unwrap();
/// let m = stream.recv().await.unwrap();
/// assert_eq!((m.body().as_str(), m.headers().get("source")), ("invoice 12 paid", Some("billing")));
/// # }
/// ```
pub struct MessageProducer<T> {
    bus: EventBus,
    address: Arc<str>,
    options: DeliveryOptions,
    publish: bool,
    _body: PhantomData<fn(T)>,
}

impl<T> Clone for MessageProducer<T> {
    fn clone(&self) -> Self {
        Self {
            bus: self.bus.clone(),
            address: Arc::clone(&self.address),
            options: self.options.clone(),
            publish: self.publish,
            _body: PhantomData,
        }
    }
}

impl<T: MessageType + Send + Sync + 'static> MessageProducer<T> {
    pub(crate) fn new(bus: EventBus, address: &str, publish: bool) -> Self {
        Self {
            bus,
            address: Arc::from(address),
            options: DeliveryOptions::new(),
            publish,
            _body: PhantomData,
        }
    }

    /// The producer with `options` for every message (Vert.x
    /// `deliveryOptions`).
    #[must_use]
    pub fn delivery_options(mut self, options: DeliveryOptions) -> Self {
        self.options = options;
        self
    }

    /// Sends (or, for a publisher, publishes) `body`.
    ///
    /// # Errors
    ///
    /// As [`EventBus::send`]; a publisher's errors are those of
    /// [`EventBus::publish`] mapped to the same kinds. As there, a publish
    /// that some consumers refused (full queues) and others got is not an
    /// error; the refusals are counted in
    /// [`Metrics::refused`](crate::Metrics::refused). Use
    /// [`EventBus::publish`] to see them in the returned
    /// [`PublishReport`](crate::PublishReport).
    ///
    /// # Cancel safety
    ///
    /// As [`EventBus::send`].
    ///
    /// # Examples
    ///
    /// See [`MessageProducer`].
    pub async fn write<B: IntoBody<Body = T>>(&self, body: B) -> Result<(), SendError> {
        if self.publish {
            self.bus
                .publish_with(&self.address, body, self.options.clone())
                .await
                .map(drop)
                .map_err(SendError::from)
        } else {
            self.bus
                .send_with(&self.address, body, self.options.clone())
                .await
        }
    }
}

impl<T> MessageProducer<T> {
    /// The address every message goes to.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Whether the producer publishes (rather than sends).
    pub fn is_publisher(&self) -> bool {
        self.publish
    }
}

impl<T> fmt::Debug for MessageProducer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageProducer")
            .field("address", &&*self.address)
            .field("publish", &self.publish)
            .field("options", &self.options)
            .finish()
    }
}

impl EventBus {
    /// A producer that `send`s every message to `address` (Vert.x `sender`).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = codecbus_bus::EventBus::new();
    /// let mut stream = bus.consumer_stream::<u32>("jobs");
    /// let producer = bus.sender::<u32>("jobs");
    /// producer.write(7).await.unwrap();
    /// assert_eq!(*stream.recv().await.unwrap().body(), 7);
    /// # }
    /// ```
    pub fn sender<T: MessageType + Send + Sync + 'static>(
        &self,
        address: &str,
    ) -> MessageProducer<T> {
        MessageProducer::new(self.clone(), address, false)
    }

    /// A producer that `publish`es every message to `address` (Vert.x
    /// `publisher`).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = codecbus_bus::EventBus::new();
    /// let mut a = bus.consumer_stream::<u32>("news");
    /// let mut b = bus.consumer_stream::<u32>("news");
    /// bus.publisher::<u32>("news").write(1).await.unwrap();
    /// assert_eq!((*a.recv().await.unwrap().body(), *b.recv().await.unwrap().body()), (1, 1));
    /// # }
    /// ```
    pub fn publisher<T: MessageType + Send + Sync + 'static>(
        &self,
        address: &str,
    ) -> MessageProducer<T> {
        MessageProducer::new(self.clone(), address, true)
    }
}
