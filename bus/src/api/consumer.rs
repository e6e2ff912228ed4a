//! Consumers: a handler, run by its consumer's scheduler
//! (`transport/local/scheduler.rs`: on the consumer's own task, or started
//! by a request or a message from the cluster that finds it idle), or a
//! stream to pull from.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use codecbus_core::MessageType;
use tokio::task::JoinHandle;

use crate::api::message::Message;
use crate::base::error::{ReplyError, ReplyErrorKind, RequestErrorKind};
use crate::engine::routing;
use crate::engine::state::State;
use crate::engine::{Control, Envelope, Handler, Host, QueueRx, Runner, Started};
use crate::telemetry::record::{Event, record};
use crate::telemetry::spans;

/// What a handler may return: `()`, or `Result<(), E>` where an `Err` fails
/// a pending request with [`RecipientFailure`](RequestErrorKind::RecipientFailure)
/// and `E`'s text, and is logged at debug level.
///
/// The result of [`Message::reply`] or [`Message::fail`] fits: a handler
/// ending in `m.reply(x)` returns whether its reply reached a requester,
/// and a reply that did not (the requester gave up, an interceptor dropped
/// it) is logged rather than lost silently.
///
/// One error is not a failure: a [`ReplyError`](crate::ReplyError) of kind
/// [`NoReplyExpected`](crate::ReplyErrorKind::NoReplyExpected). As in
/// Vert.x, replying to a message that expects no reply (one from `send` or
/// `publish`) does nothing, so a request-style handler that also consumes
/// sends handled them: its run counts as a success, and on a durable
/// address the message is acknowledged rather than redelivered and
/// dead-lettered. The error is still logged at debug level.
///
/// Sealed: implemented for these two shapes only.
pub trait HandlerResult: sealed::Sealed + Send {
    #[doc(hidden)]
    fn into_failure(self) -> Option<String>;
}

impl HandlerResult for () {
    fn into_failure(self) -> Option<String> {
        None
    }
}

impl<E: fmt::Display + Send + 'static> HandlerResult for Result<(), E> {
    fn into_failure(self) -> Option<String> {
        let err = self.err()?;
        let any: &dyn Any = &err;
        if let Some(reply) = any.downcast_ref::<ReplyError>()
            && reply.kind() == ReplyErrorKind::NoReplyExpected
        {
            tracing::debug!(error = %reply, "handler replied to a message that expects no reply");
            return None;
        }
        Some(err.to_string())
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for () {}
    impl<E> Sealed for Result<(), E> {}
}

/// The handle of a consumer registered with a handler
/// ([`EventBus::consumer`](crate::EventBus::consumer)).
///
/// Dropping the handle leaves the consumer registered (as in Vert.x): the
/// handler keeps taking messages until
/// [`unregister`](MessageConsumer::unregister) removes it, the bus shuts
/// down ([`EventBus::shutdown`](crate::EventBus::shutdown), or its last
/// handle is dropped) or the consumer's runtime does. Keep the handle to pause, resume or unregister the consumer;
/// `let _ = bus.consumer(..)` is fine for one that lives as long as the
/// runtime. (A [`MessageStream`] is the opposite: dropping it unregisters
/// its consumer, since nothing could read it any more.)
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let bus = codecbus_bus::EventBus::new();
/// let consumer = bus.consumer("a", |_m: codecbus_bus::Message<u8>| async {});
/// assert_eq!(consumer.address(), "a");
/// consumer.unregister().await;
/// assert!(bus.send("a", 1u8).await.is_err());
/// # }
/// ```
pub struct MessageConsumer {
    inner: Arc<State>,
    address: Arc<str>,
    id: u64,
    control: Arc<Control>,
    task: JoinHandle<()>,
}

impl MessageConsumer {
    /// Starts the consumer task of `runner` (registered at `address` as
    /// consumer `id`), taking messages from `rx`.
    pub(crate) fn spawn<H: Handler>(
        inner: Arc<State>,
        address: Arc<str>,
        id: u64,
        rx: QueueRx,
        runner: Arc<Runner<H>>,
    ) -> Self {
        let control = Arc::clone(runner.control());
        let task = crate::engine::spawn(runner, rx, id, &inner.tasks);
        Self {
            inner,
            address,
            id,
            control,
            task,
        }
    }

    /// The address the consumer listens on.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Stops handing messages to the handler (Vert.x `pause`). Messages keep
    /// queueing until the queue is full; then senders get `QueueFull`. A
    /// handler already running finishes; once `pause` returns, no other run
    /// starts until [`fetch`](Self::fetch) or [`resume`](Self::resume).
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::{ConsumerOptions, EventBus, Message, SendErrorKind};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = EventBus::new();
    /// let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    /// let options = ConsumerOptions::new().queue_capacity(2);
    /// let c = bus.consumer_with("p", options, move |m: Message<u32>| {
    ///     tx.send(*m.body()).unwrap();
    ///     async {}
    /// });
    /// c.pause();
    /// bus.send("p", 1u32).await.unwrap(); // waits (a held message still counts)
    /// tokio::task::yield_now().await;
    /// bus.send("p", 2u32).await.unwrap(); // waits in the queue: it is full
    /// assert_eq!(bus.send("p", 3u32).await.unwrap_err().kind(), SendErrorKind::QueueFull);
    /// c.fetch(1);
    /// assert_eq!(rx.recv().await, Some(1));
    /// c.resume();
    /// assert_eq!(rx.recv().await, Some(2));
    /// # }
    /// ```
    pub fn pause(&self) {
        self.control.pause();
    }

    /// Hands messages to the handler again, without limit (Vert.x `resume`).
    pub fn resume(&self) {
        self.control.resume();
    }

    /// Lets a paused consumer handle `n` more messages (Vert.x `fetch`); no
    /// effect on a consumer that is not paused.
    pub fn fetch(&self, n: u64) {
        self.control.fetch(n);
    }

    /// Unregisters the consumer. When the future completes, the handler is
    /// not running and will never be called again: messages still queued
    /// are discarded (a request among them fails at once with
    /// [`RecipientFailure`](RequestErrorKind::RecipientFailure), no reply)
    /// and counted in [`Metrics::discarded`](crate::Metrics::discarded).
    ///
    /// Called from inside the consumer's own handler it does not wait for
    /// that handler to finish (it cannot); the handler is not called again.
    ///
    /// # Cancel safety
    ///
    /// The consumer is unregistered in the first poll; cancelling after
    /// that only stops waiting for a running handler to finish.
    ///
    /// # Examples
    ///
    /// See [`MessageConsumer`].
    pub async fn unregister(self) {
        self.control.stop();
        self.inner.unregister(&self.address, self.id);
        let own_task =
            tokio::task::try_id() == Some(self.task.id()) || self.control.runs_on_this_thread();
        if !own_task {
            // The dispatcher catches handler panics, so a join error can
            // only be the runtime cancelling it: nothing left to wait for.
            let _ = self.task.await;
        }
    }
}

impl fmt::Debug for MessageConsumer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageConsumer")
            .field("address", &&*self.address)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// A handler of `T` as its consumer's scheduler runs it: takes an
/// envelope as the message of a `T` (inbound interceptors, type check) and
/// calls the handler with it, in the message's span (traces on).
pub(crate) struct Typed<T, F> {
    handler: F,
    inner: Weak<State>,
    address: Arc<str>,
    _body: PhantomData<fn() -> T>,
}

impl<T, F> Typed<T, F> {
    /// `handler`, for a consumer of the bus `inner` at `address`.
    pub(crate) fn new(handler: F, inner: &Arc<State>, address: Arc<str>) -> Self {
        Self {
            handler,
            inner: Arc::downgrade(inner),
            address,
            _body: PhantomData,
        }
    }
}

impl<T, F, Fut> Handler for Typed<T, F>
where
    T: MessageType + Send + Sync + 'static,
    F: FnMut(Message<T>) -> Fut + Send + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: HandlerResult,
{
    type Run = Fut;

    fn start(&mut self, mut env: Envelope) -> Option<Started<Self::Run>> {
        let Some(inner) = self.inner.upgrade() else {
            // The bus is gone: nobody could take a reply.
            env.completion.fail(
                RequestErrorKind::NoHandlers,
                format!("No handlers for address {}", env.address),
            );
            return None;
        };
        if let Err(dropped) =
            routing::intercept_in::<T>(&inner, &env.address, &mut env.headers, env.kind)
        {
            inbound_panic(&mut env, dropped);
            return None;
        }
        let message = typed(&inner, env, |message: Message<T>| message)?;
        let span = message.span().map(|d| spans::handle(d, &self.address));
        let future = match &span {
            None => (self.handler)(message),
            Some(span) => span.in_scope(|| (self.handler)(message)),
        };
        Some(Started {
            run: future,
            span,
            host: inner,
        })
    }

    fn failure(output: Fut::Output) -> Option<String> {
        output.into_failure()
    }

    fn host(&self) -> Option<Arc<dyn Host>> {
        self.inner.upgrade().map(|inner| inner as Arc<dyn Host>)
    }
}

/// An envelope its interceptors let through as the message a consumer of
/// `T` (a handler's or a stream's) takes, counted, and handed to `then`;
/// a body of another type fails the message.
#[inline(always)]
fn typed<T: MessageType + Send + Sync + 'static, R>(
    inner: &Arc<State>,
    env: Envelope,
    then: impl FnOnce(Message<T>) -> R,
) -> Option<R> {
    match Message::<T>::from_envelope(env, inner) {
        Ok(message) => {
            record(&inner.counters, None, Event::Handled);
            Some(then(message))
        }
        Err(env) => {
            env.completion
                .fail(RequestErrorKind::TypeMismatch, type_mismatch::<T>(&env));
            None
        }
    }
}

/// Counts `n` messages discarded from `rx`'s queue.
fn discarded(rx: &QueueRx, inner: &State, n: u64) {
    if n > 0 {
        record(&inner.counters, rx.probe(), Event::Discarded(n));
    }
}

#[cold]
fn type_mismatch<T>(env: &Envelope) -> String {
    format!(
        "The consumer at address {} expects `{}`",
        env.address,
        std::any::type_name::<T>()
    )
}

/// Closes the queue and drops what is left in it (pending requests then
/// fail with "no reply").
fn discard(rx: &mut QueueRx, inner: &State) {
    let n = rx.discard_all();
    discarded(rx, inner, n);
}

/// A consumer whose messages are pulled: a
/// [`Stream`](futures_core::Stream) of [`Message<T>`], or
/// [`recv`](MessageStream::recv) in a loop
/// ([`EventBus::consumer_stream`](crate::EventBus::consumer_stream)).
///
/// Its queue is the buffer: while nobody polls, messages wait there until
/// it is full, and then senders get `QueueFull`.
///
/// Dropping the stream unregisters the consumer, unlike dropping a
/// [`MessageConsumer`] handle: a dropped stream cannot take any message, and
/// a consumer left registered behind it would swallow its share of sends
/// and leave requests unanswered until their timeout. Messages still queued
/// are discarded (counted in [`Metrics::discarded`](crate::Metrics::discarded);
/// a request among them fails at once). Keep the stream in a named variable
/// for as long as the consumer should listen: `let _ = ...` drops it at
/// once, as a statement of its own does (which the `#[must_use]` warns about):
///
/// ```compile_fail
/// #![deny(unused_must_use)]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let bus = codecbus_bus::EventBus::new();
/// bus.consumer_stream::<u32>("numbers"); // error: unused `MessageStream`
/// # }
/// ```
///
/// # Examples
///
/// ```
/// use futures_util::StreamExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let bus = codecbus_bus::EventBus::new();
/// let stream = bus.consumer_stream::<u32>("numbers");
/// for n in 1..=3u32 {
///     bus.send("numbers", n).await.unwrap();
/// }
/// let got: Vec<u32> = stream.take(3).map(|m| *m.body()).collect().await;
/// assert_eq!(got, [1, 2, 3]);
/// # }
/// ```
#[must_use = "dropping a MessageStream unregisters its consumer at once; keep it in a named variable while the consumer should listen"]
pub struct MessageStream<T> {
    inner: Arc<State>,
    address: Arc<str>,
    id: u64,
    rx: QueueRx,
    registered: bool,
    _body: PhantomData<fn() -> T>,
}

impl<T: MessageType + Send + Sync + 'static> MessageStream<T> {
    pub(crate) fn new(inner: Arc<State>, address: Arc<str>, id: u64, rx: QueueRx) -> Self {
        Self {
            inner,
            address,
            id,
            rx,
            registered: true,
            _body: PhantomData,
        }
    }

    /// The next message; `None` after [`unregister`](MessageStream::unregister).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a message is only taken from the queue when it is
    /// returned.
    ///
    /// # Examples
    ///
    /// See [`EventBus::consumer_stream`](crate::EventBus::consumer_stream).
    pub async fn recv(&mut self) -> Option<Message<T>> {
        std::future::poll_fn(|cx| self.poll_message(cx)).await
    }

    fn poll_message(&mut self, cx: &mut Context<'_>) -> Poll<Option<Message<T>>> {
        loop {
            let Some(mut env) = std::task::ready!(self.rx.poll_recv(cx)) else {
                return Poll::Ready(None);
            };
            self.rx.taken();
            if let Err(dropped) =
                routing::intercept_in::<T>(&self.inner, &env.address, &mut env.headers, env.kind)
            {
                inbound_panic(&mut env, dropped);
                continue;
            }
            if let Some(message) = typed(&self.inner, env, |message: Message<T>| message) {
                return Poll::Ready(Some(message));
            }
        }
    }
}

impl<T> MessageStream<T> {
    /// The address the consumer listens on.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Unregisters the consumer and discards the messages still queued (a
    /// request among them fails at once, no reply). The stream then ends.
    ///
    /// # Cancel safety
    ///
    /// Completes in its first poll.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let bus = codecbus_bus::EventBus::new();
    /// let stream = bus.consumer_stream::<u8>("x");
    /// stream.unregister().await;
    /// assert!(bus.send("x", 1u8).await.is_err());
    /// # }
    /// ```
    pub async fn unregister(mut self) {
        self.close();
    }

    fn close(&mut self) {
        if std::mem::take(&mut self.registered) {
            self.inner.unregister(&self.address, self.id);
            discard(&mut self.rx, &self.inner);
        }
    }
}

impl<T: MessageType + Send + Sync + 'static> futures_core::Stream for MessageStream<T> {
    type Item = Message<T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Message<T>>> {
        self.get_mut().poll_message(cx)
    }
}

impl<T> Drop for MessageStream<T> {
    fn drop(&mut self) {
        if self.registered {
            tracing::debug!(
                address = &*self.address,
                id = self.id,
                "consumer stream dropped: unregistering its consumer"
            );
        }
        self.close();
    }
}

impl<T> fmt::Debug for MessageStream<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageStream")
            .field("address", &&*self.address)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// A message an inbound interceptor dropped: when it panicked, a pending
/// request fails at once with the panic's text (a plain drop fails it as a
/// message dropped unanswered).
#[cold]
fn inbound_panic(env: &mut Envelope, dropped: routing::Intercepted) {
    if dropped.panic.is_some() {
        let text = dropped.text(&format!(
            "Message to address {} dropped by an inbound interceptor",
            env.address
        ));
        env.completion
            .fail(RequestErrorKind::RecipientFailure, text);
    }
}
