//! The message a consumer receives (and a requester gets back).

use std::any::type_name;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use codecbus_core::{AnyBody, MessageType};

use crate::base::body::IntoBody;
use crate::base::error::{
    NO_FAILURE_CODE, ReplyError, ReplyErrorKind, RequestError, RequestErrorKind,
};
use crate::base::headers::{DELIVERY_HEADER, Headers};
use crate::base::interceptor::DeliveryKind;
use crate::base::options::ReplyOptions;
use crate::base::reply::{
    self, Ack, Closed, Completion, Failure, Outcome, ReplyEnvelope, ReplyTx, Turn,
};
use crate::engine::Envelope;
use crate::engine::routing;
use crate::engine::state::State;
use crate::engine::waiting;
use crate::telemetry::record::{Event, record, record_end};
use crate::telemetry::spans::{self, SpanSlot};

/// A message delivered to a consumer, or the reply a requester received.
///
/// The body sits behind an `Arc` and is this recipient's own: for an
/// immutable type it is the allocation every other recipient sees too; for
/// any other type it is a deep copy made for this recipient alone, which it
/// may change ([`body_mut`](Message::body_mut), [`into_body`](Message::into_body)).
///
/// A message that expects a reply (from `request`, or a reply sent with
/// `reply_and_request`) is answered once with [`reply`](Message::reply) or
/// [`fail`](Message::fail); further answers are refused with a
/// [`ReplyError`](crate::ReplyError). Dropping it unanswered fails the
/// request at once with
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
///     m.reply(text) // the handler's result: a reply nobody took is logged
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
    /// What awaits the message: nothing, an answer, or its
    /// acknowledgement.
    awaits: Awaits,
    /// How many times the message was delivered (1 unless durable).
    delivery: u32,
    /// The delivery's span (traces on): open while the message lives.
    span: SpanSlot,
}

/// What awaits a message once it is delivered.
enum Awaits {
    /// Nothing: a send or a publish.
    Nothing,
    /// An answer: the requester (or the replier of a conversation's turn),
    /// through the bus that delivered it.
    Reply(ReplyTx, Arc<State>),
    /// The acknowledgement of a durable delivery (NATS JetStream).
    Ack(MessageAck),
}

/// A durable delivery's share of its acknowledgement, handled by intent: a
/// stream consumer's message when [`Message::ack`] is called, a handler
/// consumer's by its scheduler once the handler returned without an error
/// (or by `ack`, earlier). A share let go unhandled gives the message back
/// for redelivery, and [`Message::fail`] fails it.
struct MessageAck {
    ack: Arc<Ack>,
}

impl<T: MessageType + Send + Sync + 'static> Message<T> {
    /// The message for one consumer, `Err` when the body is not a `T`.
    pub(crate) fn from_envelope(env: Envelope, inner: &Arc<State>) -> Result<Self, Envelope> {
        let Envelope {
            address,
            mut headers,
            body,
            kind,
            completion,
            span,
        } = env;
        let body = match body.downcast::<T>() {
            Ok(body) => body,
            Err(body) => {
                return Err(Envelope {
                    address,
                    headers,
                    body,
                    kind,
                    completion,
                    span,
                });
            }
        };
        let (awaits, delivery) = match completion {
            Completion::None => (Awaits::Nothing, 1),
            Completion::Reply(tx) => (Awaits::Reply(tx, Arc::clone(inner)), 1),
            Completion::Ack(ack) => {
                let delivery = headers
                    .get(DELIVERY_HEADER)
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(1);
                headers.remove(DELIVERY_HEADER);
                let ack = MessageAck { ack };
                (Awaits::Ack(ack), delivery)
            }
        };
        Ok(Self {
            body,
            headers,
            address,
            kind,
            awaits,
            delivery,
            span,
        })
    }

    /// The reply message a requester receives: checks the type, then applies
    /// the local-delivery transform unless the body is already its own.
    pub(crate) fn from_reply(env: ReplyEnvelope, inner: &Arc<State>) -> Result<Self, RequestError> {
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
        // A reply that expects an answer gets a span of its own (traces
        // on, the request traced), under which the answer's `reply` span
        // is made.
        let span = match &reply {
            Some(_) if inner.telemetry.trace_turn() => {
                SpanSlot::turn(&address, type_name::<T>(), &headers)
            }
            _ => SpanSlot::NONE,
        };
        Ok(Self {
            body,
            headers,
            address,
            kind: DeliveryKind::Reply,
            awaits: match reply {
                Some(turn) => Awaits::Reply(turn.tx, Arc::clone(inner)),
                None => Awaits::Nothing,
            },
            delivery: 1,
            span,
        })
    }

    /// The delivery's span (traces on).
    pub(crate) fn span(&self) -> Option<&tracing::Span> {
        self.span.get()
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

    /// How many times the server has delivered this message, counting
    /// this delivery: 1 the first time, more when a durable address
    /// (NATS JetStream, `NatsOptions::durable`) redelivers it after a
    /// failed, panicked or timed-out handler or a consumer node that went
    /// away. Always 1 for a message that is not durable.
    pub fn delivery_count(&self) -> u32 {
        self.delivery
    }

    /// Whether the message came from a durable address: it is
    /// acknowledged once handled, and redelivered until then (at least
    /// once, so possibly more than once). A handler consumer's message is
    /// acknowledged when the handler returns without an error; a stream
    /// consumer's when [`ack`](Message::ack) is called. Dropped without
    /// either, the message is negatively acknowledged and redelivered;
    /// [`fail`](Message::fail) asks for redelivery with a reason.
    pub fn is_durable(&self) -> bool {
        matches!(self.awaits, Awaits::Ack(_))
    }

    /// Marks a durable message handled: the server is told so (the message
    /// is acknowledged) once every delivery of it here was handled and let
    /// go. A stream consumer calls it once it has done its work; until
    /// then, a message dropped (a `?`, a panic, a loop left early) is
    /// negatively acknowledged and delivered again, counted in
    /// [`delivery_count`](Message::delivery_count), and after the address's
    /// most deliveries it goes to the dead-letter address. A handler
    /// consumer need not call it: its message is acknowledged when the
    /// handler returns without an error. A later [`fail`](Message::fail)
    /// still fails the message. Nothing for a message that is not durable.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = codecbus_bus::EventBus::new();
    /// let mut stream = bus.consumer_stream::<u32>("jobs");
    /// bus.send("jobs", 7u32).await.unwrap();
    /// let job = stream.recv().await.unwrap();
    /// // ... the work ...
    /// job.ack(); // in process nothing to acknowledge; on a durable address, done
    /// # }
    /// ```
    pub fn ack(&self) {
        if let Awaits::Ack(share) = &self.awaits {
            share.ack.handled();
        }
    }

    /// Vert.x's `isSend`: `false` for a published message, `true` otherwise.
    pub fn is_send(&self) -> bool {
        self.kind != DeliveryKind::Publish
    }

    /// Whether the sender waits for an answer that has not been given yet
    /// (Vert.x: the message has a reply address).
    pub fn expects_reply(&self) -> bool {
        matches!(&self.awaits, Awaits::Reply(tx, _) if tx.is_open())
    }

    /// Answers the request with `body` (Vert.x `reply`).
    ///
    /// The requester receives the body through the type's transform: the
    /// same allocation for an immutable type (pass [`Shared`](crate::Shared)
    /// to reply with an `Arc` you hold, e.g. the request's own body), a
    /// deep copy otherwise.
    ///
    /// For a request from another node, `Ok` means the reply was handed to
    /// the cluster transport (whether that requester still waits is not
    /// known here; a reply it cannot encode or send is logged and counted
    /// there).
    ///
    /// # Errors
    ///
    /// A [`ReplyError`] when the reply reaches no requester, with the body
    /// handed back ([`into_body`](crate::Error::into_body)):
    /// [`NoReplyExpected`](ReplyErrorKind::NoReplyExpected) (the message
    /// came from `send` or `publish`; Vert.x ignores such a reply),
    /// [`AlreadyAnswered`](ReplyErrorKind::AlreadyAnswered),
    /// [`RequesterGone`](ReplyErrorKind::RequesterGone) (the request timed
    /// out or was cancelled), [`Dropped`](ReplyErrorKind::Dropped) (by an
    /// outbound interceptor). A handler may return it as its own result
    /// (`async move { m.reply(x) }`): the bus then logs it at debug level.
    /// `let _ = m.reply(x);` ignores it on purpose.
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
    ///     m.reply(Shared(Arc::clone(m.body_arc())))
    /// });
    /// let body = Arc::new("ping".to_string());
    /// let back: Message<String> = bus.request("echo", Shared(Arc::clone(&body))).await.unwrap();
    /// assert!(Arc::ptr_eq(back.body_arc(), &body));
    /// # }
    /// ```
    ///
    /// Answering twice:
    ///
    /// ```
    /// use codecbus_bus::{EventBus, Message, ReplyErrorKind};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    /// let _c = bus.consumer("once", move |m: Message<u8>| {
    ///     m.reply(1u8).unwrap();
    ///     let again = m.reply(2u8).unwrap_err();
    ///     tx.send(again.kind()).unwrap(); // the handler owns `tx`
    ///     async {}
    /// });
    /// let first: Message<u8> = bus.request("once", 0u8).await.unwrap();
    /// assert_eq!(*first.body(), 1);
    /// assert_eq!(rx.recv().await, Some(ReplyErrorKind::AlreadyAnswered));
    /// # }
    /// ```
    pub fn reply<B: IntoBody>(&self, body: B) -> Result<(), ReplyError> {
        self.reply_with(body, ReplyOptions::new())
    }

    /// [`reply`](Message::reply) with headers (a plain reply waits for
    /// nothing, so the options' timeout does not apply).
    ///
    /// # Errors
    ///
    /// As [`reply`](Message::reply).
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{EventBus, Message, ReplyOptions};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let _c = bus.consumer("a", |m: Message<u32>| async move {
    ///     m.reply_with(*m.body() + 1, ReplyOptions::new().header("by", "a"))
    /// });
    /// let r: Message<u32> = bus.request("a", 1u32).await.unwrap();
    /// assert_eq!((*r.body(), r.headers().get("by")), (2, Some("a")));
    /// # }
    /// ```
    pub fn reply_with<B: IntoBody>(
        &self,
        body: B,
        options: ReplyOptions,
    ) -> Result<(), ReplyError> {
        self.send_reply(body.into_arc(), options.headers, None)
    }

    /// Answers the request with `body`; `answer` is where the replier awaits
    /// an answer to it (`reply_and_request`), and for how long.
    fn send_reply<R: Send + Sync + 'static>(
        &self,
        body: Arc<R>,
        headers: Headers,
        answer: Option<(ReplyTx, Duration)>,
    ) -> Result<(), ReplyError> {
        match self.span.get() {
            None => self.complete_reply(body, headers, answer),
            Some(delivery) => self.traced_reply(delivery, body, headers, answer),
        }
    }

    /// [`send_reply`](Self::send_reply) in a `reply` span (traces on), its
    /// context in the reply's headers.
    #[inline(never)]
    fn traced_reply<R: Send + Sync + 'static>(
        &self,
        delivery: &tracing::Span,
        body: Arc<R>,
        mut headers: Headers,
        answer: Option<(ReplyTx, Duration)>,
    ) -> Result<(), ReplyError> {
        let span = spans::reply(delivery, &self.address);
        let _entered = span.enter();
        spans::inject(&span, &mut headers);
        let result = self.complete_reply(body, headers, answer);
        record_end(&span, Event::ended(&result));
        result
    }

    fn complete_reply<R: Send + Sync + 'static>(
        &self,
        body: Arc<R>,
        mut headers: Headers,
        answer: Option<(ReplyTx, Duration)>,
    ) -> Result<(), ReplyError> {
        let Awaits::Reply(tx, inner) = &self.awaits else {
            return Err(self.reply_error(ReplyErrorKind::NoReplyExpected, body));
        };
        if routing::intercept_out::<R>(inner, &self.address, &mut headers, DeliveryKind::Reply)
            .is_err()
        {
            return Err(self.reply_error(ReplyErrorKind::Dropped, body));
        }
        let env = ReplyEnvelope {
            address: Arc::clone(&self.address),
            headers,
            body: body as AnyBody,
            type_name: type_name::<R>(),
            transformed: false,
            reply: answer.map(|(tx, wait)| Box::new(Turn { tx, wait })),
        };
        if let Err((closed, outcome)) = tx.complete(Outcome::Reply(env)) {
            let body = match outcome {
                Outcome::Reply(env) => Some(env.body),
                Outcome::Failure(_) => None,
            };
            return Err(self.closed_error(closed, body));
        }
        record(&inner.counters, None, Event::Replied);
        Ok(())
    }

    #[cold]
    fn reply_error<R: Send + Sync + 'static>(
        &self,
        kind: ReplyErrorKind,
        body: Arc<R>,
    ) -> ReplyError {
        let text = match kind {
            ReplyErrorKind::Dropped => "dropped by an outbound interceptor",
            _ => "not taken: the message expects no reply",
        };
        tracing::debug!(address = &*self.address, ?kind, "reply not sent");
        ReplyError::new(kind, format!("Reply to address {} {text}", self.address))
            .with_address(Arc::clone(&self.address))
            .with_body(body as AnyBody)
    }

    #[cold]
    fn closed_error(&self, closed: Closed, body: Option<AnyBody>) -> ReplyError {
        let (kind, text) = match closed {
            Closed::Answered => (
                ReplyErrorKind::AlreadyAnswered,
                "the message was answered already",
            ),
            Closed::RequesterGone => (
                ReplyErrorKind::RequesterGone,
                "the requester stopped waiting (timed out or cancelled)",
            ),
        };
        tracing::debug!(address = &*self.address, ?kind, "reply not taken");
        let err = ReplyError::new(
            kind,
            format!("Reply to address {} not taken: {text}", self.address),
        )
        .with_address(Arc::clone(&self.address));
        match body {
            Some(body) => err.with_body(body),
            None => err,
        }
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
    /// answered already, or its requester stopped waiting: the text says
    /// which, as [`reply`](Message::reply)'s error does); `Dropped` when
    /// an outbound interceptor drops the reply. In these last cases the
    /// body is handed back ([`into_body`](crate::Error::into_body)). When the requester is on
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
    ///     password.reply(password.body() == "hunter2")
    /// });
    /// let ask: Message<String> = bus.request("login", "alice".to_string()).await.unwrap();
    /// assert_eq!(ask.body(), "password?");
    /// let ok = ask.reply_and_request::<bool>("hunter2".to_string()).await.unwrap();
    /// assert!(*ok.body());
    /// # }
    /// ```
    pub async fn reply_and_request<R>(
        &self,
        body: impl IntoBody,
    ) -> Result<Message<R>, RequestError>
    where
        R: MessageType + Send + Sync + 'static,
    {
        self.reply_and_request_with(body, ReplyOptions::new()).await
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
    pub async fn reply_and_request_with<R>(
        &self,
        body: impl IntoBody,
        options: ReplyOptions,
    ) -> Result<Message<R>, RequestError>
    where
        R: MessageType + Send + Sync + 'static,
    {
        let (env, inner) = self.reply_and_await(body.into_arc(), options).await?;
        Message::from_reply(env, &inner)
    }

    /// [`reply_and_request_with`](Message::reply_and_request_with) up to the
    /// answer's envelope, whatever its type, and the bus it came through
    /// (the Vert.x bridge reads it with the type's registered codec).
    pub(crate) async fn reply_and_await<B: Send + Sync + 'static>(
        &self,
        body: Arc<B>,
        options: ReplyOptions,
    ) -> Result<(ReplyEnvelope, Arc<State>), RequestError> {
        let ReplyOptions { timeout, headers } = options;
        let Awaits::Reply(_, inner) = &self.awaits else {
            return Err(no_reply_expected(&self.address).with_body(body as AnyBody));
        };
        let inner = Arc::clone(inner);
        let timeout = timeout.unwrap_or(inner.default_timeout);
        let (tx, rx) = reply::channel();
        if let Err(err) = self.send_reply(body, headers, Some((tx, timeout))) {
            // The reply's own error says why (expects no reply, answered
            // already, requester gone, dropped) and hands the body back;
            // for the conversation, nobody takes the turn: Vert.x's
            // `NO_HANDLERS`, or `Dropped` for an interceptor's doing.
            return Err(err.map_kind(|kind| match kind {
                ReplyErrorKind::Dropped => RequestErrorKind::Dropped,
                _ => RequestErrorKind::NoHandlers,
            }));
        }
        let env = waiting::await_reply(rx, &self.address, timeout)
            .await
            .inspect_err(|err| {
                let probe = inner.telemetry.probe(&self.address);
                record(
                    &inner.counters,
                    probe.as_deref(),
                    Event::ReplyFailed(err.kind()),
                );
            })?;
        Ok((env, inner))
    }

    /// Fails the request with `code` and `message`: the requester gets a
    /// [`RecipientFailure`](RequestErrorKind::RecipientFailure) error whose
    /// [`failure_code`](crate::Error::failure_code) is `code` and whose text
    /// is `message` (Vert.x `fail`).
    ///
    /// # Errors
    ///
    /// A [`ReplyError`] when the failure reaches no requester:
    /// [`NoReplyExpected`](ReplyErrorKind::NoReplyExpected),
    /// [`AlreadyAnswered`](ReplyErrorKind::AlreadyAnswered) or
    /// [`RequesterGone`](ReplyErrorKind::RequesterGone), as for
    /// [`reply`](Message::reply).
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{EventBus, Message, RequestErrorKind};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let _c = bus.consumer("strict", |m: Message<String>| async move {
    ///     m.fail(422, "not acceptable")
    /// });
    /// let err = bus.request::<String>("strict", "x".to_string()).await.unwrap_err();
    /// assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    /// assert_eq!((err.failure_code(), err.to_string().as_str()), (Some(422), "not acceptable"));
    /// # }
    /// ```
    ///
    /// The code is the requester's
    /// [`failure_code`](crate::RequestError::failure_code), whatever `i32`
    /// it is but `-1`: that is the wire's (and Vert.x's) "no code", and is
    /// refused here ([`ReservedCode`](ReplyErrorKind::ReservedCode)) rather
    /// than read back as `None` by the requester.
    ///
    /// ```
    /// use codecbus_bus::{EventBus, Message, ReplyErrorKind, RequestErrorKind};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let _c = bus.consumer("minus", |m: Message<u8>| async move {
    ///     let refused = m.fail(-1, "no code");
    ///     assert_eq!(refused.as_ref().unwrap_err().kind(), ReplyErrorKind::ReservedCode);
    ///     refused // returned, it fails the request with its text
    /// });
    /// let err = bus.request::<u8>("minus", 1u8).await.unwrap_err();
    /// assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    /// assert_eq!(err.failure_code(), None);
    /// assert!(err.to_string().contains("-1 is reserved"), "{err}");
    /// # }
    /// ```
    ///
    /// For a durable message (see [`is_durable`](Message::is_durable))
    /// `fail` asks for redelivery instead: the message is not
    /// acknowledged, the server delivers it again after the address's
    /// redelivery delay, and after its maximum number of deliveries it goes
    /// to the dead-letter address with `message` as the reason.
    pub fn fail(&self, code: i32, message: impl Into<String>) -> Result<(), ReplyError> {
        if code == NO_FAILURE_CODE {
            return Err(reserved_code(&self.address));
        }
        self.fail_coded(code, message.into())
    }

    /// [`fail`](Self::fail) with any code, `-1` ("no code") included: for
    /// failures that come from the wire (a bridge client's), or that have
    /// no code of their own.
    pub(crate) fn fail_coded(&self, code: i32, message: String) -> Result<(), ReplyError> {
        match self.span.get() {
            None => self.complete_failure(code, message),
            Some(delivery) => {
                let span = spans::reply(delivery, &self.address);
                let result = span.in_scope(|| self.complete_failure(code, message));
                // A failure sent is the reply's outcome too.
                let failure = match &result {
                    Ok(()) => RequestErrorKind::RecipientFailure.as_str(),
                    Err(err) => err.kind().as_str(),
                };
                record_end(&span, Event::Ended(Some(failure)));
                result
            }
        }
    }

    fn complete_failure(&self, code: i32, message: String) -> Result<(), ReplyError> {
        if let Awaits::Ack(share) = &self.awaits {
            return share
                .ack
                .fail(Failure {
                    kind: RequestErrorKind::RecipientFailure,
                    code,
                    message,
                })
                .map_err(|closed| self.closed_error(closed, None));
        }
        let Awaits::Reply(tx, _) = &self.awaits else {
            tracing::debug!(
                address = &*self.address,
                "failure for a message that expects no reply"
            );
            return Err(ReplyError::new(
                ReplyErrorKind::NoReplyExpected,
                format!(
                    "Failure for address {} not taken: the message expects no reply",
                    self.address
                ),
            )
            .with_address(Arc::clone(&self.address)));
        };
        tx.complete(Outcome::Failure(Failure {
            kind: RequestErrorKind::RecipientFailure,
            code,
            message,
        }))
        .map_err(|(closed, _)| self.closed_error(closed, None))
    }
}

/// A further turn of a message that expects no reply: nobody takes it
/// (Vert.x's `NO_HANDLERS`), said as [`Message::reply`]'s error says it.
fn no_reply_expected(address: &Arc<str>) -> RequestError {
    RequestError::new(
        RequestErrorKind::NoHandlers,
        format!("Reply to address {address} not taken: the message expects no reply"),
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

/// The refusal of `fail(-1, ..)` at `address`.
#[cold]
fn reserved_code(address: &str) -> ReplyError {
    ReplyError::new(
        ReplyErrorKind::ReservedCode,
        format!(
            "Failure for address {address} not sent: failure code -1 is reserved for \"no code\" on the wire (as in Vert.x), so the requester could not read it back; use another code"
        ),
    )
}
