//! The message a consumer receives (and a requester gets back).

use std::any::type_name;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use codecbus_core::{AnyBody, MessageCodec};

use crate::body::IntoBody;
use crate::bus::Inner;
use crate::error::{RequestError, RequestErrorKind};
use crate::headers::Headers;
use crate::interceptor::DeliveryKind;
use crate::options::DeliveryOptions;
use crate::reply::{self, Failure, Outcome, ReplyEnvelope, ReplyTx, Turn};
use crate::transport::local::Envelope;

/// A message delivered to a consumer, or the reply a requester received.
///
/// The body sits behind an `Arc` and is this recipient's own: for an
/// immutable type it is the allocation every other recipient sees too; for
/// any other type it is a deep copy made for this recipient alone, which it
/// may change ([`body_mut`](Message::body_mut), [`into_body`](Message::into_body)).
///
/// A message that expects a reply (from `request`, or a reply sent with
/// `reply_and_request`) is answered once with [`reply`](Message::reply) or
/// [`fail`](Message::fail); further answers are ignored. Dropping it
/// unanswered fails the request at once with
/// [`RecipientFailure`](RequestErrorKind::RecipientFailure) ("no reply")
/// rather than letting the requester wait for its timeout.
///
/// # Examples
///
/// ```
/// use codecbus_bus::{EventBus, Message};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let bus = EventBus::new();
/// let _c = bus.consumer("greet", |m: Message<String>| async move {
///     let text = format!("hello {}", m.body());
///     m.reply(text);
/// });
/// let reply: Message<String> = bus.request("greet", "bob".to_string()).await.unwrap();
/// assert_eq!(reply.body(), "hello bob");
/// # }
/// ```
pub struct Message<T> {
    body: Arc<T>,
    headers: Headers,
    address: Arc<str>,
    kind: DeliveryKind,
    reply: Option<(ReplyTx, Arc<Inner>)>,
}

impl<T: MessageCodec + Send + Sync + 'static> Message<T> {
    /// The message for one consumer, `Err` when the body is not a `T`.
    pub(crate) fn from_envelope(env: Envelope, inner: &Arc<Inner>) -> Result<Self, Envelope> {
        let Envelope {
            address,
            headers,
            body,
            kind,
            reply,
        } = env;
        match body.downcast::<T>() {
            Ok(body) => Ok(Self {
                body,
                headers,
                address,
                kind,
                reply: reply.map(|tx| (tx, Arc::clone(inner))),
            }),
            Err(body) => Err(Envelope {
                address,
                headers,
                body,
                kind,
                reply,
            }),
        }
    }

    /// The reply message a requester receives: checks the type, then applies
    /// the local-delivery transform unless the body is already its own.
    pub(crate) fn from_reply(env: ReplyEnvelope, inner: &Arc<Inner>) -> Result<Self, RequestError> {
        let ReplyEnvelope {
            address,
            headers,
            body,
            type_name: actual,
            transformed,
            reply,
        } = env;
        let body = match body.downcast::<T>() {
            Ok(body) if transformed => body,
            // For an immutable type `transform` is `Arc::clone`: keep the
            // allocation without the extra reference count round trip.
            Ok(body) if T::IMMUTABLE => body,
            Ok(body) => T::transform(&body),
            Err(_) => {
                return Err(RequestError::new(
                    RequestErrorKind::TypeMismatch,
                    format!(
                        "Reply from address {address} is `{actual}`, not the expected `{}`",
                        type_name::<T>()
                    ),
                )
                .with_address(address));
            }
        };
        Ok(Self {
            body,
            headers,
            address,
            kind: DeliveryKind::Reply,
            reply: reply.map(|turn| (turn.tx, Arc::clone(inner))),
        })
    }
}

impl<T> Message<T> {
    /// The body.
    pub fn body(&self) -> &T {
        &self.body
    }

    /// The body's `Arc`, to keep or to pass on without a copy (with
    /// [`Shared`](crate::Shared)).
    pub fn body_arc(&self) -> &Arc<T> {
        &self.body
    }

    /// The body to change in place, when this recipient is its only holder:
    /// always for a deep-copied type, and for an immutable type that no one
    /// else holds any more. `None` while the allocation is shared.
    pub fn body_mut(&mut self) -> Option<&mut T> {
        Arc::get_mut(&mut self.body)
    }

    /// The body, owned: moved out when this recipient is its only holder,
    /// cloned otherwise. Drops the message, so an unanswered request fails
    /// with "no reply".
    pub fn into_body(self) -> T
    where
        T: Clone,
    {
        Arc::unwrap_or_clone(self.into_arc())
    }

    /// The body's `Arc`. Drops the message, so an unanswered request fails
    /// with "no reply".
    pub fn into_arc(self) -> Arc<T> {
        self.body
    }

    /// The message headers.
    pub fn headers(&self) -> &Headers {
        &self.headers
    }

    /// The address the message was sent to (for a reply: the address the
    /// request was sent to).
    pub fn address(&self) -> &str {
        &self.address
    }

    /// How the message travelled.
    pub fn kind(&self) -> DeliveryKind {
        self.kind
    }

    /// Vert.x's `isSend`: `false` for a published message, `true` otherwise.
    pub fn is_send(&self) -> bool {
        self.kind != DeliveryKind::Publish
    }

    /// Whether the sender waits for an answer that has not been given yet
    /// (Vert.x: the message has a reply address).
    pub fn expects_reply(&self) -> bool {
        self.reply.as_ref().is_some_and(|(tx, _)| tx.is_open())
    }

    /// Answers the request with `body`; returns whether the requester was
    /// still waiting for it. A message that expects no reply, or was
    /// already answered, ignores the call (and returns `false`), as in
    /// Vert.x. For a request from another node, `true` means the reply was
    /// handed to the cluster transport (whether that requester still waits
    /// is not known here); one an outbound interceptor drops returns `false`.
    ///
    /// The requester receives the body through the type's transform: the
    /// same allocation for an immutable type (pass [`Shared`](crate::Shared)
    /// to reply with an `Arc` you hold, e.g. the request's own body), a
    /// deep copy otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{EventBus, Message, Shared};
    /// use std::sync::Arc;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// // An echo that copies nothing for immutable types.
    /// let _c = bus.consumer("echo", |m: Message<String>| async move {
    ///     m.reply(Shared(Arc::clone(m.body_arc())));
    /// });
    /// let body = Arc::new("ping".to_string());
    /// let back: Message<String> = bus.request("echo", Shared(Arc::clone(&body))).await.unwrap();
    /// assert!(Arc::ptr_eq(back.body_arc(), &body));
    /// # }
    /// ```
    pub fn reply<B: IntoBody>(&self, body: B) -> bool {
        self.reply_with(body, DeliveryOptions::new())
    }

    /// [`reply`](Message::reply) with headers (the options' timeout and
    /// local-only flag do not apply to a reply).
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{DeliveryOptions, EventBus, Message};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let _c = bus.consumer("a", |m: Message<u32>| async move {
    ///     m.reply_with(*m.body() + 1, DeliveryOptions::new().with_header("by", "a"));
    /// });
    /// let r: Message<u32> = bus.request("a", 1u32).await.unwrap();
    /// assert_eq!((*r.body(), r.headers().get("by")), (2, Some("a")));
    /// # }
    /// ```
    pub fn reply_with<B: IntoBody>(&self, body: B, options: DeliveryOptions) -> bool {
        let (_, headers, _) = options.into_parts();
        self.send_reply(body.into_arc(), headers, None).is_ok()
    }

    /// Answers the request with `body`; `answer` is where the replier awaits
    /// an answer to it (`reply_and_request`), and for how long.
    fn send_reply<R: Send + Sync + 'static>(
        &self,
        body: Arc<R>,
        mut headers: Headers,
        answer: Option<(ReplyTx, Duration)>,
    ) -> Result<(), NotSent> {
        let Some((tx, inner)) = &self.reply else {
            tracing::debug!(
                address = &*self.address,
                "reply to a message that expects none"
            );
            return Err(NotSent::NotExpected);
        };
        if !inner.intercept_out::<R>(&self.address, &mut headers, DeliveryKind::Reply) {
            return Err(NotSent::Dropped);
        }
        let env = ReplyEnvelope {
            address: Arc::clone(&self.address),
            headers,
            body: body as AnyBody,
            type_name: type_name::<R>(),
            transformed: false,
            reply: answer.map(|(tx, wait)| Box::new(Turn { tx, wait })),
        };
        if tx.complete(Outcome::Reply(env)).is_err() {
            tracing::debug!(
                address = &*self.address,
                "reply not taken: already answered or requester gone"
            );
            return Err(NotSent::NotExpected);
        }
        crate::metrics::bump(&inner.counters.replies, 1);
        Ok(())
    }

    /// Replies with `body` and awaits the requester's answer to it: a
    /// conversation of several turns, as Vert.x's `replyAndRequest`. The
    /// bus default timeout applies.
    ///
    /// # Errors
    ///
    /// As [`EventBus::request`](crate::EventBus::request): `Timeout` when
    /// no answer comes in time, `RecipientFailure` when the requester fails
    /// or drops the reply unanswered, `TypeMismatch` when the answer is not
    /// an `R`; `NoHandlers` when this message expects no reply (or was
    /// answered already, or its requester stopped waiting); `Dropped` when
    /// an outbound interceptor drops the reply. When the requester is on
    /// another node (NATS), also `Codec`, `PayloadTooLarge` and `Transport`
    /// as for a request, and `NoHandlers` when that node's connection is
    /// gone; a requester that stopped waiting cannot be told apart from a
    /// slow one there, so the turn ends with `Timeout`.
    ///
    /// # Cancel safety
    ///
    /// Cancelling the returned future after the first poll withdraws from
    /// the conversation: a late answer is dropped. Before the first poll
    /// nothing has been sent.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{EventBus, Message};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let _c = bus.consumer("login", |m: Message<String>| async move {
    ///     let password: Message<String> = m.reply_and_request("password?".to_string()).await.unwrap();
    ///     password.reply(password.body() == "hunter2");
    /// });
    /// let ask: Message<String> = bus.request("login", "alice".to_string()).await.unwrap();
    /// assert_eq!(ask.body(), "password?");
    /// let ok: Message<bool> = ask.reply_and_request("hunter2".to_string()).await.unwrap();
    /// assert!(*ok.body());
    /// # }
    /// ```
    pub async fn reply_and_request<B, R>(&self, body: B) -> Result<Message<R>, RequestError>
    where
        B: IntoBody,
        R: MessageCodec + Send + Sync + 'static,
    {
        self.reply_and_request_with(body, DeliveryOptions::new())
            .await
    }

    /// [`reply_and_request`](Message::reply_and_request) with options
    /// (timeout and headers).
    ///
    /// # Errors
    ///
    /// As [`reply_and_request`](Message::reply_and_request).
    ///
    /// # Cancel safety
    ///
    /// As [`reply_and_request`](Message::reply_and_request).
    pub async fn reply_and_request_with<B, R>(
        &self,
        body: B,
        options: DeliveryOptions,
    ) -> Result<Message<R>, RequestError>
    where
        B: IntoBody,
        R: MessageCodec + Send + Sync + 'static,
    {
        let (timeout, headers, _) = options.into_parts();
        let Some((_, inner)) = &self.reply else {
            return Err(no_reply_expected(&self.address));
        };
        let inner = Arc::clone(inner);
        let timeout = timeout.unwrap_or(inner.default_timeout);
        let (tx, rx) = reply::channel();
        match self.send_reply(body.into_arc(), headers, Some((tx, timeout))) {
            Ok(()) => {}
            Err(NotSent::NotExpected) => return Err(no_reply_expected(&self.address)),
            Err(NotSent::Dropped) => {
                return Err(RequestError::new(
                    RequestErrorKind::Dropped,
                    format!(
                        "Reply to address {} dropped by an outbound interceptor",
                        self.address
                    ),
                )
                .with_address(Arc::clone(&self.address)));
            }
        }
        let id = crate::metrics::bump(&inner.conversation_ids, 1);
        inner.await_reply::<R>(rx, &self.address, timeout, id).await
    }

    /// Fails the request with `code` and `message`: the requester gets a
    /// [`RecipientFailure`](RequestErrorKind::RecipientFailure) error whose
    /// [`failure_code`](crate::Error::failure_code) is `code` and whose text
    /// is `message` (Vert.x `fail`). Ignored, returning `false`, when the
    /// message expects no reply or was already answered.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{EventBus, Message, ReplyFailure, RequestErrorKind};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let _c = bus.consumer("strict", |m: Message<String>| async move {
    ///     m.fail(422, "not acceptable");
    /// });
    /// let err = bus.request::<_, String>("strict", "x".to_string()).await.unwrap_err();
    /// assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    /// assert_eq!(err.failure_type(), ReplyFailure::RecipientFailure);
    /// assert_eq!((err.failure_code(), err.to_string().as_str()), (422, "not acceptable"));
    /// # }
    /// ```
    pub fn fail(&self, code: i32, message: impl Into<String>) -> bool {
        let Some((tx, _)) = &self.reply else {
            return false;
        };
        tx.complete(Outcome::Failure(Failure {
            kind: RequestErrorKind::RecipientFailure,
            code,
            message: message.into(),
        }))
        .is_ok()
    }
}

/// Why a reply was not handed to its requester.
enum NotSent {
    /// The message expects no reply, was answered already, or its
    /// requester stopped waiting.
    NotExpected,
    /// An outbound interceptor dropped it.
    Dropped,
}

fn no_reply_expected(address: &Arc<str>) -> RequestError {
    RequestError::new(
        RequestErrorKind::NoHandlers,
        format!("No handlers for address {address}: the message expects no reply"),
    )
    .with_address(Arc::clone(address))
}

impl<T: fmt::Debug> fmt::Debug for Message<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("address", &&*self.address)
            .field("kind", &self.kind)
            .field("headers", &self.headers)
            .field("body", &self.body)
            .finish_non_exhaustive()
    }
}
