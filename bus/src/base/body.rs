//! What can be passed as a message body.

use std::sync::Arc;

use codecbus_core::MessageType;

/// A value that can be sent as a message body of type
/// [`Body`](IntoBody::Body): any [`MessageType`] by value, or
/// [`Shared`] to hand over an `Arc` the caller keeps.
///
/// Sealed: implemented by the bus only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a message type of the bus",
    label = "not a message type",
    note = "`Arc<T>` and `Box<T>` only point to a message: send the `T` itself, or an `Arc<T>` you keep as `Shared(arc)`; consumers and replies take `T`",
    note = "a message type derives `MessageCodec` or is one of codecbus's own codecs; a codec written by hand adds `impl MessageType for MyType {{}}`"
)]
pub trait IntoBody: sealed::Sealed {
    /// The message type consumers receive.
    type Body: MessageType + Send + Sync + 'static;

    /// The body behind an `Arc`.
    fn into_arc(self) -> Arc<Self::Body>;
}

/// An `Arc` passed as a body as it is, without a new allocation: the
/// sender keeps its own handle. For an immutable type every local consumer
/// then sees the very allocation the sender holds (`Arc::ptr_eq`); other
/// types are still deep-copied for each consumer.
///
/// This is the one way to send a body you keep: an `Arc<T>` (or a
/// `Box<T>`) passed by value is no [`MessageType`], and `cargo check`
/// stops at the call with "`Arc<T>` is not a message type of the bus" and
/// this advice, instead of a run-time `TypeMismatch` (consumers of `T`
/// would not take an `Arc<T>`).
///
/// ```compile_fail
/// # use std::sync::Arc;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let bus = codecbus_bus::EventBus::new();
/// let _ = bus.send("big", Arc::new("text".to_string())).await; // use Shared(arc)
/// # }
/// ```
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
///     tx.send(Arc::clone(m.body_arc())).unwrap();
///     async {}
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

impl<T: MessageType + Send + Sync + 'static> IntoBody for T {
    type Body = T;
    #[inline]
    fn into_arc(self) -> Arc<T> {
        Arc::new(self)
    }
}

impl<T: MessageType + Send + Sync + 'static> IntoBody for Shared<T> {
    type Body = T;
    #[inline]
    fn into_arc(self) -> Arc<T> {
        self.0
    }
}

mod sealed {
    pub trait Sealed {}
    impl<T: codecbus_core::MessageType> Sealed for T {}
    impl<T> Sealed for super::Shared<T> {}
}
