//! Consumers: a handler on its own task (a request, or a message from the
//! cluster, that finds it idle starts it on the delivering task), or a
//! stream to pull from.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll};

use codecbus_core::MessageCodec;
use futures_util::FutureExt;
use futures_util::future::CatchUnwind;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tracing::Instrument;

use crate::api::message::Message;
use crate::base::error::{ReplyError, ReplyErrorKind, RequestErrorKind};
use crate::base::reply::Completion;
use crate::engine::routing;
use crate::engine::state::State;
use crate::engine::{Envelope, Inline, QueueRx};
use crate::telemetry::probe::{Probe, Start};
use crate::telemetry::record::{Event, record, record_in};
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

// The run claim (`Control::run`): one handler run at a time, whether the
// consumer's task or the task delivering a message started it.
const IDLE: u8 = 0;
const BUSY: u8 = 1;
// No run starts any more: the consumer is gone.
const SHUT: u8 = 2;
// Somebody waits for the claim (set beside `BUSY`).
const WAITING: u8 = 4;

struct Control {
    stopped: AtomicBool,
    demand: AtomicU64,
    notify: Notify,
    run: AtomicU8,
    /// Woken when a run that had waiters ends.
    idle: Notify,
}

impl Control {
    fn new() -> Self {
        Self {
            stopped: AtomicBool::new(false),
            demand: AtomicU64::new(FLOWING),
            notify: Notify::new(),
            run: AtomicU8::new(IDLE),
            idle: Notify::new(),
        }
    }

    /// Claims the run without waiting, for a run the delivering task
    /// starts: only while the consumer is idle and flowing.
    #[inline]
    fn try_claim(&self) -> bool {
        self.demand.load(Ordering::Acquire) == FLOWING
            && !self.stopped.load(Ordering::Acquire)
            && self
                .run
                .compare_exchange(IDLE, BUSY, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
    }

    /// Waits for the run claim and takes it (`to` = `BUSY`), or shuts the
    /// consumer once no run is going on (`to` = `SHUT`). `false` once shut.
    async fn claim(&self, to: u8) -> bool {
        loop {
            let idle = self.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            let mut now = self.run.load(Ordering::Acquire);
            loop {
                let next = match now {
                    IDLE => to,
                    SHUT => return false,
                    BUSY => BUSY | WAITING,
                    _ => break,
                };
                match self
                    .run
                    .compare_exchange(now, next, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) if now == IDLE => return true,
                    Ok(_) => break,
                    Err(actual) => now = actual,
                }
            }
            // Busy, and the run's end will wake this waiter.
            idle.await;
        }
    }

    /// Ends a run: the consumer is idle again.
    #[inline]
    fn release(&self) {
        if self.run.swap(IDLE, Ordering::AcqRel) & WAITING != 0 {
            self.idle.notify_waiters();
        }
    }

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
        runner: Arc<Runner<T, F, Fut>>,
    ) -> Self
    where
        T: MessageCodec + Send + Sync + 'static,
        F: Fn(Message<T>) -> Fut + Send + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: HandlerResult,
    {
        let control = Arc::clone(&runner.control);
        let task = tokio::spawn(dispatch(
            rx,
            runner,
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
        let own_task = tokio::task::try_id() == Some(self.task.id())
            || RUNNING.get() == Arc::as_ptr(&self.control);
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

/// A handler consumer's handler, shared by the consumer's task and the
/// tasks that start a run themselves (when the consumer is idle,
/// see [`Inline`]).
pub(crate) struct Runner<T, F, Fut: Future> {
    control: Arc<Control>,
    inner: Weak<State>,
    address: Box<str>,
    /// Itself: a run that waits is finished on a task of its own.
    this: Weak<Self>,
    seat: Mutex<Seat<F, Fut>>,
    _body: PhantomData<fn() -> T>,
}

/// What the run claim guards: whoever holds it locks this, uncontended.
struct Seat<F, Fut: Future> {
    handler: F,
    /// A run started by the delivering task that waited for something:
    /// finished by a task of its own (`Runner::finish`).
    run: Pin<Box<Option<CatchUnwind<AssertUnwindSafe<Fut>>>>>,
    end: Option<RunEnd>,
}

impl<F, Fut: Future> Seat<F, Fut> {
    /// Calls the handler, catching a panic (under the run claim).
    fn call<T>(&self, message: Message<T>) -> std::thread::Result<Fut>
    where
        F: Fn(Message<T>) -> Fut,
    {
        std::panic::catch_unwind(AssertUnwindSafe(|| (self.handler)(message)))
    }
}

/// What a run that waited settles once its handler returned.
struct RunEnd {
    guard: Completion,
    inner: Arc<State>,
    start: Option<Start>,
}

// How deep runs started by delivering tasks may nest on one thread (a
// handler's request whose handler starts here too, and so on); deeper,
// a request is queued for its consumer's task.
const MAX_NESTED: usize = 8;

thread_local! {
    /// The consumer whose handler this thread is running for a delivering
    /// task, and how many such runs are nested here.
    static RUNNING: std::cell::Cell<*const Control> = const { std::cell::Cell::new(std::ptr::null()) };
    static NESTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Marks the thread as running `control`'s handler for as long as it lives.
struct Here(*const Control);

impl Here {
    fn enter(control: &Arc<Control>) -> Self {
        NESTED.set(NESTED.get() + 1);
        Self(RUNNING.replace(Arc::as_ptr(control)))
    }
}

impl Drop for Here {
    fn drop(&mut self) {
        RUNNING.set(self.0);
        NESTED.set(NESTED.get() - 1);
    }
}

impl<T, F, Fut> Runner<T, F, Fut>
where
    T: MessageCodec + Send + Sync + 'static,
    F: Fn(Message<T>) -> Fut + Send + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: HandlerResult,
{
    /// The runner of `handler`, for a consumer of the bus `inner` at
    /// `address`.
    pub(crate) fn new(handler: F, inner: &Arc<State>, address: &str) -> Arc<Self> {
        Arc::new_cyclic(|this| Self {
            control: Arc::new(Control::new()),
            inner: Arc::downgrade(inner),
            address: address.into(),
            this: Weak::clone(this),
            seat: Mutex::new(Seat {
                handler,
                run: Box::pin(None),
                end: None,
            }),
            _body: PhantomData,
        })
    }

    fn seat(&self) -> std::sync::MutexGuard<'_, Seat<F, Fut>> {
        // A panic in the handler is caught inside, never under the lock.
        self.seat.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Calls the handler, catching a panic (under the run claim); the seat
    /// is unlocked again when it returns, before the future is awaited.
    fn call(&self, message: Message<T>) -> std::thread::Result<Fut> {
        self.seat().call(message)
    }

    /// Drives a run that waited to its end, then settles it and ends the
    /// claim.
    async fn finish(self: Arc<Self>) {
        let ended = std::future::poll_fn(|cx| {
            let _here = Here::enter(&self.control);
            let mut seat = self.seat();
            let Some(run) = seat.run.as_mut().as_pin_mut() else {
                return Poll::Ready(None);
            };
            let result = std::task::ready!(run.poll(cx));
            seat.run.set(None);
            Poll::Ready(seat.end.take().map(|end| (result, end)))
        })
        .await;
        if let Some((result, end)) = ended {
            if end.start.is_some() {
                let probe = end.inner.telemetry.probe(&self.address);
                timed(end.start, probe.as_deref());
            }
            let handled = Handled::of(result.map(HandlerResult::into_failure));
            settle(handled, end.guard, &self.address, &end.inner, None);
        }
        self.control.release();
    }

    /// [`Inline::run`]; with `TIMED`, the run's time goes to `probe`.
    #[inline(always)]
    fn run_timed<const TIMED: bool>(&self, env: Envelope, probe: Option<&Probe>) {
        let Some(inner) = self.inner.upgrade() else {
            // Unreachable while a delivery borrows the bus; fails the
            // request rather than leaving it to its timeout.
            env.completion.fail(
                RequestErrorKind::NoHandlers,
                format!("No handlers for address {}", env.address),
            );
            self.control.release();
            return;
        };
        let Some((message, guard)) = admit::<T>(&inner, env) else {
            self.control.release();
            return;
        };
        let start = if TIMED {
            probe.and_then(Probe::start)
        } else {
            None
        };
        let here = Here::enter(&self.control);
        let mut seat = self.seat();
        let result = match seat.call(message) {
            Ok(future) => {
                seat.run.set(Some(AssertUnwindSafe(future).catch_unwind()));
                let run = seat.run.as_mut().as_pin_mut().expect("set above");
                // The first step, with no waker: a run that waits is polled
                // again at once by its own task, which registers that
                // task's waker.
                match run.poll(&mut Context::from_waker(std::task::Waker::noop())) {
                    Poll::Ready(result) => {
                        seat.run.set(None);
                        result.map(HandlerResult::into_failure)
                    }
                    Poll::Pending => {
                        seat.end = Some(RunEnd {
                            guard,
                            inner,
                            start,
                        });
                        drop(seat);
                        drop(here);
                        // `self` is borrowed from a live `Arc`: the
                        // upgrade cannot fail.
                        if let Some(this) = self.this.upgrade() {
                            tokio::spawn(this.finish());
                        }
                        return;
                    }
                }
            }
            Err(panic) => Err(panic),
        };
        drop(seat);
        drop(here);
        if TIMED {
            timed(start, probe);
        }
        settle(Handled::of(result), guard, &self.address, &inner, None);
        self.control.release();
    }
}

impl<T, F, Fut> Inline for Runner<T, F, Fut>
where
    T: MessageCodec + Send + Sync + 'static,
    F: Fn(Message<T>) -> Fut + Send + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: HandlerResult,
{
    #[inline]
    fn claim(&self) -> bool {
        NESTED.get() < MAX_NESTED && self.control.try_claim()
    }

    fn run(&self, env: Envelope, probe: Option<&Probe>) {
        // Two copies: without metric handles, no timing code in the run.
        match probe {
            None => self.run_timed::<false>(env, None),
            Some(probe) => self.run_timed::<true>(env, Some(probe)),
        }
    }
}

/// Takes `env` for a handler of `T`: the inbound interceptors, then
/// [`typed`] (the type check and the count). The message and the
/// dispatcher's own claim on its completion, to fail the request (or the
/// durable delivery) if the handler errs or panics after the message
/// itself is gone, and to mark a durable delivery handled once the
/// handler returned `Ok`.
fn admit<T: MessageCodec + Send + Sync + 'static>(
    inner: &Arc<State>,
    mut env: Envelope,
) -> Option<(Message<T>, Completion)> {
    if !routing::intercept_in::<T>(inner, &env.address, &mut env.headers, env.kind) {
        return None;
    }
    let guard = env.completion.clone();
    typed(inner, env, |mut message: Message<T>| {
        message.ack_after_handler();
        (message, guard)
    })
}

/// An envelope its interceptors let through as the message a consumer of
/// `T` (a handler's or a stream's) takes, counted, and handed to `then`;
/// a body of another type fails the message.
#[inline(always)]
fn typed<T: MessageCodec + Send + Sync + 'static, R>(
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

/// A run's time since `start` in the address's series (metrics and
/// timings on).
#[inline]
fn timed(start: Option<Start>, probe: Option<&Probe>) {
    if let (Some(start), Some(probe)) = (start, probe) {
        probe.processing_time(start.seconds());
    }
}

/// Settles a run of a handler at `address` by how it `handled` the
/// message: the completion `guard` failed if the handler did, or a durable
/// delivery marked handled, and the run recorded (a panic counted; with
/// `span`, traces on, its outcome).
fn settle(
    handled: Handled,
    guard: Completion,
    address: &str,
    inner: &State,
    span: Option<&tracing::Span>,
) {
    // Recorded first: whoever the completion wakes sees it counted.
    let event = match &handled {
        Handled::Ok => Event::Ended(None),
        Handled::Failed(_) => Event::HandlerFailed,
        Handled::Panicked(_) => Event::Panicked,
    };
    record_in(&inner.counters, None, span, event);
    match handled {
        Handled::Ok => {
            if let Completion::Ack(ack) = &guard {
                ack.handled();
            }
        }
        Handled::Failed(text) => {
            tracing::debug!(address, error = %text, "handler returned an error");
            guard.fail(RequestErrorKind::RecipientFailure, text);
        }
        Handled::Panicked(text) => {
            tracing::warn!(address, panic = %text, "handler panicked; the consumer keeps running");
            guard.fail(
                RequestErrorKind::RecipientFailure,
                format!("Handler at address {address} panicked: {text}"),
            );
        }
    }
}

/// The consumer task: one message at a time, in queue order (and none
/// while a run started by a delivering task goes on).
async fn dispatch<T, F, Fut>(
    mut rx: QueueRx,
    runner: Arc<Runner<T, F, Fut>>,
    inner: Arc<State>,
    address: Arc<str>,
) where
    T: MessageCodec + Send + Sync + 'static,
    F: Fn(Message<T>) -> Fut + Send + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: HandlerResult,
{
    let control = &runner.control;
    while let Some(env) = rx.recv().await {
        let claimed = control.acquire().await && control.claim(BUSY).await;
        // handed over (or discarded): it no longer counts against the
        // queue (only now: until the claim, a request must not overtake it)
        rx.taken();
        // Unregistered while a run started elsewhere went on: discarded.
        if !claimed || control.stopped.load(Ordering::Acquire) {
            if claimed {
                control.release();
            }
            discarded(&rx, &inner, 1);
            break;
        }
        let Some((message, guard)) = admit::<T>(&inner, env) else {
            control.release();
            continue;
        };
        let start = rx.probe().and_then(|p| p.start());
        // Catch a panic both while creating the future and while polling it.
        // The handler's failure text, if it returned one, or its panic.
        let span = message.span().map(|d| spans::handle(d, &address));
        let handled = match &span {
            None => Handled::of(match runner.call(message) {
                Ok(future) => AssertUnwindSafe(future)
                    .catch_unwind()
                    .await
                    .map(HandlerResult::into_failure),
                Err(panic) => Err(panic),
            }),
            Some(span) => {
                let made = span.in_scope(|| runner.call(message));
                Box::pin(traced_run(made, span)).await
            }
        };
        timed(start, rx.probe());
        settle(handled, guard, &address, &inner, span.as_ref());
        control.release();
    }
    // A run started by a delivering task ends first; none starts after.
    control.claim(SHUT).await;
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
/// `made` in it, catching a panic.
#[inline(never)]
async fn traced_run<Fut>(made: std::thread::Result<Fut>, span: &tracing::Span) -> Handled
where
    Fut: Future,
    Fut::Output: HandlerResult,
{
    Handled::of(match made {
        Ok(future) => AssertUnwindSafe(future)
            .catch_unwind()
            .instrument(span.clone())
            .await
            .map(HandlerResult::into_failure),
        Err(panic) => Err(panic),
    })
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
