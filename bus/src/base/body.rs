//! What can be passed as a message body.

use std::sync::Arc;

use codecbus_core::MessageCodec;

/// A value that can be sent as a message body of type
/// [`Body`](IntoBody::Body): any [`MessageCodec`] type by value, or
/// [`Shared`] to hand over an `Arc` the caller keeps.
///
/// Sealed: implemented by the bus only.
pub trait IntoBody: sealed::Sealed {
    /// The message type consumers receive.
    type Body: MessageCodec + Send + Sync + 'static;

    /// The body behind an `Arc`.
    fn into_arc(self) -> Arc<Self::Body>;
}

/// An `Arc` passed as a body as it is, without a new allocation: the
/// sender keeps its own handle. For an immutable type every local consumer
/// then sees the very allocation the sender holds (`Arc::ptr_eq`); other
/// types are still deep-copied for each consumer.
///
/// (Passing an `Arc<T>` by value instead sends a message of type `Arc<T>`,
/// which consumers of `T` do not take.)
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use codecbus_bus::{EventBus, Message, Shared};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let bus = EventBus::new();
/// let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
/// let _c = bus.consumer("big", move |m: Message<String>| {
///     let tx = tx.clone();
///     async move { tx.send(Arc::clone(m.body_arc())).unwrap(); }
/// });
/// let body = Arc::new("a large immutable text".to_string());
/// bus.publish("big", Shared(Arc::clone(&body))).await.unwrap();
/// assert!(Arc::ptr_eq(&rx.recv().await.unwrap(), &body)); // not copied
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Shared<T>(pub Arc<T>);

impl<T> From<Arc<T>> for Shared<T> {
    fn from(arc: Arc<T>) -> Self {
        Self(arc)
    }
}

impl<T: MessageCodec + Send + Sync + 'static> IntoBody for T {
    type Body = T;
    #[inline]
    fn into_arc(self) -> Arc<T> {
        Arc::new(self)
    }
}

impl<T: MessageCodec + Send + Sync + 'static> IntoBody for Shared<T> {
    type Body = T;
    #[inline]
    fn into_arc(self) -> Arc<T> {
        self.0
    }
}

mod sealed {
    pub trait Sealed {}
    impl<T: codecbus_core::MessageCodec> Sealed for T {}
    impl<T> Sealed for super::Shared<T> {}
}
