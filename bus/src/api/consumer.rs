//! Consumers: a handler on its own task, or a stream to pull from.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};

use codecbus_core::MessageCodec;
use futures_util::FutureExt;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tracing::Instrument;

use crate::api::message::Message;
use crate::base::error::{ReplyError, ReplyErrorKind, RequestErrorKind};
use crate::base::reply::Completion;
use crate::engine::routing;
use crate::engine::state::State;
use crate::engine::{Envelope, QueueRx};
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

// Flow control: `demand` is the number of messages the handler may still
// take; `FLOWING` means no limit (Vert.x: not paused).
const FLOWING: u64 = u64::MAX;

struct Control {
    stopped: AtomicBool,
    demand: AtomicU64,
    notify: Notify,
}

impl Control {
    /// Waits until the handler may take one more message; `false` once the
    /// consumer is stopped.
    async fn acquire(&self) -> bool {
        loop {
            if self.stopped.load(Ordering::Acquire) {
                return false;
            }
            let demand = self.demand.load(Ordering::Acquire);
            if demand == FLOWING {
                return true;
            }
            if demand > 0 {
                if self
                    .demand
                    .compare_exchange(demand, demand - 1, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    return true;
                }
                continue;
            }
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.stopped.load(Ordering::Acquire) || self.demand.load(Ordering::Acquire) != 0 {
                continue;
            }
            notified.await;
        }
    }

    fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        self.notify.notify_one();
    }
}

/// The handle of a consumer registered with a handler
/// ([`EventBus::consumer`](crate::EventBus::consumer)).
///
/// Dropping the handle leaves the consumer registered (as in Vert.x): the
/// handler keeps taking messages until
/// [`unregister`](MessageConsumer::unregister) removes it or the runtime
/// shuts down. Keep the handle to pause, resume or unregister the consumer;
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
    pub(crate) fn spawn<T, F, Fut>(
        inner: Arc<State>,
        address: Arc<str>,
        id: u64,
        rx: QueueRx,
        handler: F,
    ) -> Self
    where
        T: MessageCodec + Send + Sync + 'static,
        F: Fn(Message<T>) -> Fut + Send + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: HandlerResult,
    {
        let control = Arc::new(Control {
            stopped: AtomicBool::new(false),
            demand: AtomicU64::new(FLOWING),
            notify: Notify::new(),
        });
        let task = tokio::spawn(dispatch(
            rx,
            handler,
            Arc::clone(&control),
            Arc::clone(&inner),
            Arc::clone(&address),
        ));
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
    /// handler already running finishes.
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
    /// let options = ConsumerOptions::new().with_queue_capacity(2);
    /// let c = bus.consumer_with("p", options, move |m: Message<u32>| {
    ///     let tx = tx.clone();
    ///     async move { tx.send(*m.body()).unwrap(); }
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
        self.control.demand.store(0, Ordering::Release);
    }

    /// Hands messages to the handler again, without limit (Vert.x `resume`).
    pub fn resume(&self) {
        self.control.demand.store(FLOWING, Ordering::Release);
        self.control.notify.notify_one();
    }

    /// Lets a paused consumer handle `n` more messages (Vert.x `fetch`); no
    /// effect on a consumer that is not paused.
    pub fn fetch(&self, n: u64) {
        let _ = self
            .control
            .demand
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |d| {
                (d != FLOWING).then(|| d.saturating_add(n).min(FLOWING - 1))
            });
        self.control.notify.notify_one();
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
        let own_task = tokio::task::try_id() == Some(self.task.id());
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

/// The consumer task: one message at a time, in queue order.
async fn dispatch<T, F, Fut>(
    mut rx: QueueRx,
    handler: F,
    control: Arc<Control>,
    inner: Arc<State>,
    address: Arc<str>,
) where
    T: MessageCodec + Send + Sync + 'static,
    F: Fn(Message<T>) -> Fut + Send + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: HandlerResult,
{
    while let Some(mut env) = rx.recv().await {
        let go = control.acquire().await;
        // handed over (or discarded): it no longer counts against the queue
        rx.taken();
        if !go {
            discarded(&rx, &inner, 1);
            break;
        }
        if !routing::intercept_in::<T>(&inner, &env.address, &mut env.headers, env.kind) {
            continue;
        }
        // The dispatcher's own claim on the message's completion, to fail
        // the request (or the durable delivery) if the handler errs or
        // panics after the message itself is gone, and to mark a durable
        // delivery handled once the handler returned Ok.
        let guard = env.completion.clone();
        let mut message = match Message::<T>::from_envelope(env, &inner) {
            Ok(message) => message,
            Err(env) => {
                env.completion
                    .fail(RequestErrorKind::TypeMismatch, type_mismatch::<T>(&env));
                continue;
            }
        };
        record(&inner.counters, None, Event::Handled);
        message.ack_after_handler();
        let start = rx.probe().and_then(|p| p.start());
        // Catch a panic both while creating the future and while polling it.
        // The handler's failure text, if it returned one, or its panic.
        let handled = match message.span().map(|d| spans::handle(d, &address)) {
            None => Handled::of(
                match std::panic::catch_unwind(AssertUnwindSafe(|| handler(message))) {
                    Ok(future) => AssertUnwindSafe(future)
                        .catch_unwind()
                        .await
                        .map(HandlerResult::into_failure),
                    Err(panic) => Err(panic),
                },
            ),
            Some(span) => {
                let made = span
                    .in_scope(|| std::panic::catch_unwind(AssertUnwindSafe(|| handler(message))));
                Box::pin(traced_run(made, span)).await
            }
        };
        if let (Some(start), Some(probe)) = (start, rx.probe()) {
            probe.processing_time(start.seconds());
        }
        match handled {
            Handled::Ok => {
                if let Completion::Ack(ack) = &guard {
                    ack.handled();
                }
            }
            Handled::Failed(text) => {
                tracing::debug!(address = &*address, error = %text, "handler returned an error");
                guard.fail(RequestErrorKind::RecipientFailure, text);
            }
            Handled::Panicked(text) => {
                record(&inner.counters, None, Event::Panicked);
                tracing::warn!(address = &*address, panic = %text, "handler panicked; the consumer keeps running");
                guard.fail(
                    RequestErrorKind::RecipientFailure,
                    format!("Handler at address {address} panicked: {text}"),
                );
            }
        }
        drop(guard);
    }
    let n = rx.discard_all_in_flight().await;
    discarded(&rx, &inner, n);
}

/// How a handler's run ended.
enum Handled {
    /// It returned `()` or `Ok(())` (or a reply nobody expected).
    Ok,
    /// It returned an error: its text.
    Failed(String),
    /// It panicked: the panic's text.
    Panicked(String),
}

impl Handled {
    /// The run's result: the handler's failure text, if any, or its panic.
    fn of(result: std::thread::Result<Option<String>>) -> Self {
        match result {
            Ok(None) => Self::Ok,
            Ok(Some(text)) => Self::Failed(text),
            Err(panic) => Self::Panicked(panic_text(&*panic)),
        }
    }
}

/// The rest of a handler's run in its span (traces on): polls the future
/// `made` in it, catching a panic, and records the outcome (`ok`, `error`
/// or `panic`).
#[inline(never)]
async fn traced_run<Fut>(made: std::thread::Result<Fut>, span: tracing::Span) -> Handled
where
    Fut: Future,
    Fut::Output: HandlerResult,
{
    let handled = Handled::of(match made {
        Ok(future) => AssertUnwindSafe(future)
            .catch_unwind()
            .instrument(span.clone())
            .await
            .map(HandlerResult::into_failure),
        Err(panic) => Err(panic),
    });
    let failure = match &handled {
        Handled::Ok => None,
        Handled::Failed(_) => Some("error"),
        Handled::Panicked(_) => Some("panic"),
    };
    spans::outcome(&span, failure);
    handled
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

fn panic_text(panic: &(dyn Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-text panic payload".to_owned()
    }
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

impl<T: MessageCodec + Send + Sync + 'static> MessageStream<T> {
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
            if !routing::intercept_in::<T>(&self.inner, &env.address, &mut env.headers, env.kind) {
                continue;
            }
            match Message::<T>::from_envelope(env, &self.inner) {
                Ok(message) => {
                    record(&self.inner.counters, None, Event::Handled);
                    return Poll::Ready(Some(message));
                }
                Err(env) => env
                    .completion
                    .fail(RequestErrorKind::TypeMismatch, type_mismatch::<T>(&env)),
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

impl<T: MessageCodec + Send + Sync + 'static> futures_core::Stream for MessageStream<T> {
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
