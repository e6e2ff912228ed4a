// Where a handler consumer's handler runs: the one scheduler of handler
// runs, owned by the consumer.
//
// Contract:
// * One run at a time (`Claim`). A run starts on the consumer's own task
//   (for a queued message) or, when the consumer is idle and flowing, on the
//   task delivering the message (the inline start, `Inline`): its first
//   step runs there, in the consumer's runtime context and tracing context,
//   and whatever it then awaits continues on the consumer's own task,
//   which drives the parked run before it takes another message. Nothing
//   of a run is ever spawned onto the delivering task's runtime.
// * One run lifecycle for both starts (`Runner::begin`, `Runner::step`,
//   `Runner::end`): the message taken (inbound interceptors, type check)
//   and the handler called under `catch_unwind`, each step polled under
//   `catch_unwind`, timed, settled (the completion failed if the handler
//   failed or panicked, a durable delivery marked handled), released.
//   User code never runs where a panic could leave the claim held.
// * The consumer's task is a future (`Dispatch`) whose drop (an aborted
//   task, a dropped runtime) fails a parked run's completion and a held
//   message's, releases the claim and marks the consumer gone; a run
//   parked after that by a delivering task is failed by that task, so no
//   requester waits for a consumer that no longer runs.
// * Nesting: a handler's own request may start another handler inline, up
//   to `MAX_NESTED` deep on one thread; deeper, it is queued.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use futures_util::FutureExt;
use futures_util::future::CatchUnwind;
use futures_util::task::AtomicWaker;
use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio::task::AbortHandle;
use tracing::Span;

use crate::base::error::{RequestErrorKind, panic_text};
use crate::base::interceptor::DeliveryKind;
use crate::base::metrics::Counters;
use crate::base::reply::Completion;
use crate::telemetry::probe::{Probe, Start};
use crate::telemetry::record::{Event, record, record_in};
use crate::transport::local::claim::{Attempt, Claim, Demand};
use crate::transport::local::envelope::Envelope;
use crate::transport::local::queue::{Inline, QueueRx};

/// What a consumer's handler is to its scheduler: the api's handler of a
/// body type, behind the message it makes of an envelope.
pub(crate) trait Handler: Send + 'static {
    /// One run of the handler.
    type Run: Future + Send + 'static;

    /// Takes `env` for the handler (inbound interceptors, type check) and
    /// calls it. `None` when the message was let go before the handler (an
    /// interceptor dropped it; a body of another type, whose completion is
    /// failed). Called under the claim, inside `catch_unwind`.
    fn start(&mut self, env: Envelope) -> Option<Started<Self::Run>>;

    /// The handler's failure text, if a run's `output` says it failed.
    /// Called inside `catch_unwind` (it may format a user's error).
    fn failure(output: <Self::Run as Future>::Output) -> Option<String>;

    /// The bus, if it is still there (to record a run whose start
    /// panicked).
    fn host(&self) -> Option<Arc<dyn Host>>;
}

/// What the scheduler needs of the bus: where runs are counted.
pub(crate) trait Host: Send + Sync + 'static {
    /// The bus counters.
    fn counters(&self) -> &Counters;
}

/// A run the handler started.
pub(crate) struct Started<R> {
    pub(crate) run: R,
    /// The run's span (the message is traced).
    pub(crate) span: Option<Span>,
    /// The bus the run settles in.
    pub(crate) host: Arc<dyn Host>,
}

/// How deep runs started by delivering tasks may nest on one thread (a
/// handler's request whose handler starts here too, and so on); deeper, a
/// request is queued for its consumer's task.
const MAX_NESTED: usize = 8;

/// How many times a delivering task looks again for a claim that a run
/// on another thread holds (a few microseconds at most), before it
/// queues its message ([`Runner::claim`](Inline::claim)).
const SPINS: u32 = 100;

thread_local! {
    /// The consumer whose handler this thread is running for a delivering
    /// task, and how many such runs are nested here.
    static RUNNING: std::cell::Cell<*const Control> = const { std::cell::Cell::new(std::ptr::null()) };
    static NESTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Marks the thread as running `control`'s handler for as long as it lives.
struct Here(*const Control);

impl Here {
    fn enter(control: &Control) -> Self {
        NESTED.set(NESTED.get() + 1);
        Self(RUNNING.replace(control))
    }
}

impl Drop for Here {
    fn drop(&mut self) {
        RUNNING.set(self.0);
        NESTED.set(NESTED.get() - 1);
    }
}

/// Whether a delivery of `kind` to an address with `consumers` here may
/// start the handler on the delivering task
/// ([`Room::send_or_run`](super::queue::Room::send_or_run)): a request made
/// on this node (its requester waits for the run anyway), or any message
/// `from_cluster` for an address with one consumer here (several stay
/// parallel on their own tasks). Traced or not: a run sees the same
/// context either way.
#[inline]
pub(crate) fn runs_here(from_cluster: bool, kind: DeliveryKind, consumers: usize) -> bool {
    if from_cluster {
        consumers == 1
    } else {
        kind == DeliveryKind::Request
    }
}

/// Whether a run started here would see the tracing context it sees on
/// the consumer's task: a traced message's run is in its own span
/// anyway; an untraced one must not see the deliverer's current span
/// when the consumer's task runs in another (free when no subscriber was
/// ever set).
#[inline]
fn same_context(traced: bool, context: &Span) -> bool {
    traced || !tracing::dispatcher::has_been_set() || Span::current().id() == context.id()
}

/// How a consumer is steered from outside: pause, fetch, resume, stop.
pub(crate) struct Control {
    claim: Claim,
    /// The consumer's task, woken when a run it waits for ends, a run is
    /// handed to it, demand comes, or the consumer stops.
    wake: AtomicWaker,
}

impl Control {
    /// Stops handing messages to the handler; a run going on finishes.
    pub(crate) fn pause(&self) {
        self.claim.pause();
    }

    /// Hands messages to the handler again, without limit.
    pub(crate) fn resume(&self) {
        self.claim.resume();
        self.wake.wake();
    }

    /// Lets a paused consumer handle `n` more messages.
    pub(crate) fn fetch(&self, n: u64) {
        self.claim.fetch(n);
        self.wake.wake();
    }

    /// Stops the consumer: no run starts after this; its task discards
    /// what is queued and ends once a run going on has.
    pub(crate) fn stop(&self) {
        self.claim.stop();
        self.wake.wake();
    }

    /// Whether this thread is running the consumer's handler for a
    /// delivering task.
    pub(crate) fn runs_on_this_thread(&self) -> bool {
        std::ptr::eq(RUNNING.get(), self)
    }

    fn release(&self) {
        if self.claim.release() {
            self.wake.wake();
        }
    }
}

/// A handler consumer's handler and everything a run of it needs, shared
/// by the consumer's task and the tasks that start runs inline.
pub(crate) struct Runner<H: Handler> {
    control: Arc<Control>,
    /// A run waits in the seat for the consumer's task to drive it.
    parked: AtomicBool,
    address: Arc<str>,
    /// The consumer's runtime (where it was registered): a run's first step
    /// made inline runs in its context.
    runtime: Handle,
    /// The span current where the consumer was registered: its task runs
    /// in it, and so does an inline run.
    context: Span,
    seat: Mutex<Seat<H>>,
}

/// A run whose panics are caught.
type Caught<R> = CatchUnwind<AssertUnwindSafe<R>>;

/// What the claim guards: whoever holds it locks this, uncontended.
struct Seat<H: Handler> {
    handler: H,
    /// A run that waited for something, driven by the consumer's task.
    /// Kept allocated from one run to the next.
    run: Pin<Box<Option<Caught<H::Run>>>>,
    end: Option<RunEnd>,
    /// The consumer's task has ended: nobody would drive a parked run.
    gone: bool,
}

/// What a run settles once its handler returned.
struct RunEnd {
    completion: Completion,
    host: Option<Arc<dyn Host>>,
    start: Option<Start>,
    span: Option<Span>,
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
    fn of(result: std::thread::Result<Option<String>>) -> Self {
        match result {
            Ok(None) => Self::Ok,
            Ok(Some(text)) => Self::Failed(text),
            Err(panic) => Self::Panicked(panic_text(&*panic)),
        }
    }
}

impl<H: Handler> Runner<H> {
    /// The runner of `handler` for a consumer at `address`, on the current
    /// runtime (which the consumer's task is spawned onto).
    pub(crate) fn new(handler: H, address: Arc<str>) -> Arc<Self> {
        Arc::new(Self {
            control: Arc::new(Control {
                claim: Claim::new(),
                wake: AtomicWaker::new(),
            }),
            parked: AtomicBool::new(false),
            address,
            runtime: Handle::current(),
            context: Span::current(),
            seat: Mutex::new(Seat {
                handler,
                run: Box::pin(None),
                end: None,
                gone: false,
            }),
        })
    }

    /// How the consumer is steered.
    pub(crate) fn control(&self) -> &Arc<Control> {
        &self.control
    }

    fn seat(&self) -> MutexGuard<'_, Seat<H>> {
        // User code runs under the lock only inside `catch_unwind`.
        self.seat.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a run of `env` under the claim: the handler called and its
    /// first step polled with `cx`. `Ready(None)`: the message was let go
    /// before the handler; `Pending`: the run waits, in the seat.
    #[inline]
    fn begin(
        &self,
        seat: &mut Seat<H>,
        env: Envelope,
        start: Option<Start>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<(Handled, RunEnd)>> {
        let completion = env.completion.clone();
        match std::panic::catch_unwind(AssertUnwindSafe(|| seat.handler.start(env))) {
            Ok(None) => Poll::Ready(None),
            Ok(Some(started)) => {
                seat.run
                    .set(Some(AssertUnwindSafe(started.run).catch_unwind()));
                seat.end = Some(RunEnd {
                    completion,
                    host: Some(started.host),
                    start,
                    span: started.span,
                });
                Self::step(seat, cx)
            }
            Err(panic) => Poll::Ready(Some((
                Handled::Panicked(panic_text(&*panic)),
                RunEnd {
                    completion,
                    host: seat.handler.host(),
                    start,
                    span: None,
                },
            ))),
        }
    }

    /// Polls the run in the seat, in its span; once it ended, what it
    /// settles.
    #[inline]
    fn step(seat: &mut Seat<H>, cx: &mut Context<'_>) -> Poll<Option<(Handled, RunEnd)>> {
        let Seat { run, end, .. } = seat;
        let Some(future) = run.as_mut().as_pin_mut() else {
            return Poll::Ready(None);
        };
        let entered = end.as_ref().and_then(|e| e.span.as_ref()).map(Span::enter);
        let result = std::task::ready!(future.poll(cx))
            .and_then(|output| std::panic::catch_unwind(AssertUnwindSafe(|| H::failure(output))));
        drop(entered);
        run.set(None);
        Poll::Ready(end.take().map(|end| (Handled::of(result), end)))
    }

    /// Settles a run that ended, then releases the claim.
    #[inline]
    fn end(&self, ended: Option<(Handled, RunEnd)>, probe: Option<&Probe>) {
        if let Some((handled, end)) = ended {
            if let (Some(start), Some(probe)) = (end.start, probe) {
                probe.processing_time(start.seconds());
            }
            let counters = end.host.as_deref().map(Host::counters);
            settle(
                handled,
                &end.completion,
                &self.address,
                counters,
                end.span.as_ref(),
            );
        }
        self.control.release();
    }

    /// Fails a parked run nobody will drive (the consumer's task is
    /// gone), then releases the claim.
    fn abandon(&self, seat: &mut Seat<H>) {
        let end = seat.end.take();
        // Dropping the handler's future runs its code (destructors).
        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| seat.run.set(None)));
        if let Some(end) = end {
            end.completion
                .fail(RequestErrorKind::RecipientFailure, gone_text(&self.address));
        }
        self.control.release();
    }
}

impl<H: Handler> Inline for Runner<H> {
    /// The claim for a run on this task. When another thread's run holds
    /// it and runs right now (it has not parked: it is no handler waiting
    /// for something), the claim is looked at again for a few
    /// microseconds: such a run usually ends within one or two, and a run
    /// started here then costs no wake-up, where a queued message costs
    /// two (the consumer's task, then its requester). Under requests from
    /// several threads to one consumer the queued path had fed itself:
    /// every queued message made the next one likelier to find the claim
    /// held, and the CPU per request doubled.
    #[inline]
    fn claim(&self, traced: bool) -> bool {
        if NESTED.get() >= MAX_NESTED || !same_context(traced, &self.context) {
            return false;
        }
        let claim = &self.control.claim;
        if claim.try_claim() {
            return true;
        }
        if self.control.runs_on_this_thread() {
            return false;
        }
        for _ in 0..SPINS {
            if !claim.held_by_a_run() {
                return claim.try_claim();
            }
            if self.parked.load(Ordering::Acquire) {
                return false;
            }
            std::hint::spin_loop();
        }
        false
    }

    fn run(&self, env: Envelope, probe: Option<&Probe>) {
        let _runtime = self.runtime.enter();
        let _context = self.context.enter();
        let here = Here::enter(&self.control);
        let start = probe.and_then(Probe::start);
        let mut seat = self.seat();
        let noop = &mut Context::from_waker(Waker::noop());
        match self.begin(&mut seat, env, start, noop) {
            Poll::Ready(ended) => {
                drop(seat);
                drop(here);
                self.end(ended, probe);
            }
            // The run waits: the consumer's task drives it from here on
            // (its first poll there registers that task's waker).
            Poll::Pending if seat.gone => self.abandon(&mut seat),
            Poll::Pending => {
                self.parked.store(true, Ordering::Release);
                drop(seat);
                self.control.wake.wake();
            }
        }
    }
}

/// Spawns the consumer task of `runner` (consumer `id`), taking messages
/// from `rx`, counted in `tasks` until it ends.
pub(crate) fn spawn<H: Handler>(
    runner: Arc<Runner<H>>,
    rx: QueueRx,
    id: u64,
    tasks: &Arc<Tasks>,
) -> tokio::task::JoinHandle<()> {
    let runtime = runner.runtime.clone();
    let control = Arc::clone(&runner.control);
    let address = Arc::clone(&runner.address);
    let task = runtime.spawn(Dispatch {
        runner,
        rx,
        held: None,
        credit: false,
        ending: false,
        tasks: Arc::clone(tasks),
        id,
    });
    tasks.started(
        id,
        Running {
            address,
            control,
            abort: task.abort_handle(),
        },
    );
    task
}

/// The consumer tasks of one bus, so that a shutdown can wait for them,
/// stop them and, past its deadline, abort them.
#[derive(Default)]
pub(crate) struct Tasks {
    running: Mutex<HashMap<u64, Running>>,
    /// Woken whenever a task ends.
    ended: Notify,
}

/// A consumer task that has not ended yet.
struct Running {
    address: Arc<str>,
    control: Arc<Control>,
    abort: AbortHandle,
}

impl Tasks {
    fn running(&self) -> MutexGuard<'_, HashMap<u64, Running>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn started(&self, id: u64, task: Running) {
        let mut running = self.running();
        // A task that ended before it was listed (its runtime shutting
        // down) is not listed at all.
        if !task.abort.is_finished() {
            running.insert(id, task);
        }
    }

    fn ended(&self, id: u64) {
        self.running().remove(&id);
        self.ended.notify_waiters();
    }

    /// Whether every task ended.
    fn all_ended(&self) -> bool {
        let mut running = self.running();
        running.retain(|_, task| !task.abort.is_finished());
        running.is_empty()
    }

    /// Waits until every consumer task has ended.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub(crate) async fn joined(&self) {
        loop {
            let ended = self.ended.notified();
            tokio::pin!(ended);
            ended.as_mut().enable();
            if self.all_ended() {
                return;
            }
            ended.await;
        }
    }

    /// Stops every consumer (what is queued is discarded once its current
    /// run ends); with `abort`, also aborts its task, which fails the run
    /// going on. The addresses of the consumers still running.
    pub(crate) fn stop_all(&self, abort: bool) -> Vec<Arc<str>> {
        let running = self.running();
        let mut addresses = Vec::with_capacity(running.len());
        for task in running.values() {
            task.control.stop();
            if abort {
                task.abort.abort();
            }
            addresses.push(Arc::clone(&task.address));
        }
        addresses.sort();
        addresses.dedup();
        addresses
    }
}

/// The consumer's task: one message at a time, in queue order, and none
/// while a run goes on (its own, or one a delivering task started, which
/// it drives once that run waits).
struct Dispatch<H: Handler> {
    runner: Arc<Runner<H>>,
    rx: QueueRx,
    /// A message taken from the queue and waiting for demand or for the
    /// claim; it still counts against the queue's capacity.
    held: Option<Envelope>,
    /// A credit of demand was taken for `held`.
    credit: bool,
    /// Unregistered or closed: what is queued is discarded once no run
    /// goes on.
    ending: bool,
    tasks: Arc<Tasks>,
    id: u64,
}

impl<H: Handler> Future for Dispatch<H> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let runner = &*this.runner;
        let _context = runner.context.enter();
        loop {
            runner.control.wake.register(cx.waker());
            // A run that waits, this task's or one handed over: driven to
            // its end before anything else.
            if runner.parked.load(Ordering::Acquire) {
                let mut seat = runner.seat();
                let ended = std::task::ready!(Runner::step(&mut seat, cx));
                runner.parked.store(false, Ordering::Release);
                drop(seat);
                runner.end(ended, this.rx.probe());
            }
            if this.ending || runner.control.claim.is_stopped() {
                this.ending = true;
                if !runner.control.claim.shut() {
                    // A run goes on; its end (or its handing over) wakes us.
                    return Poll::Pending;
                }
                let held = this.held.take().is_some();
                if held {
                    this.rx.taken();
                }
                let n = u64::from(held) + this.rx.discard_all();
                this.credit = false;
                discarded(&this.rx, runner, n);
                runner.seat().gone = true;
                return Poll::Ready(());
            }
            let env = match this.held.take() {
                Some(env) => env,
                None => match this.rx.poll_recv(cx) {
                    Poll::Ready(Some(env)) => env,
                    Poll::Ready(None) => {
                        this.ending = true;
                        continue;
                    }
                    Poll::Pending => return Poll::Pending,
                },
            };
            if !this.credit {
                match runner.control.claim.demand() {
                    Demand::Flowing => {}
                    Demand::Credit => this.credit = true,
                    Demand::Wait => {
                        this.held = Some(env);
                        return Poll::Pending;
                    }
                    Demand::Stopped => {
                        this.held = Some(env);
                        continue;
                    }
                }
            }
            match runner.control.claim.claim_queued(this.credit) {
                Attempt::Claimed => {}
                Attempt::Busy => {
                    this.held = Some(env);
                    return Poll::Pending;
                }
                // Paused since the demand was read: read it again.
                Attempt::Paused | Attempt::Stopped => {
                    this.held = Some(env);
                    continue;
                }
            }
            this.credit = false;
            // Handed over: it no longer counts against the queue (only
            // now: until the claim, an inline start must not overtake it).
            this.rx.taken();
            let probe = this.rx.probe();
            let start = probe.and_then(Probe::start);
            let mut seat = runner.seat();
            match runner.begin(&mut seat, env, start, cx) {
                Poll::Ready(ended) => {
                    drop(seat);
                    runner.end(ended, probe);
                }
                Poll::Pending => {
                    runner.parked.store(true, Ordering::Release);
                    return Poll::Pending;
                }
            }
        }
    }
}

impl<H: Handler> Drop for Dispatch<H> {
    fn drop(&mut self) {
        // Ended normally, nothing is left; dropped before (the task
        // aborted, its runtime shut down), nothing may wait for it.
        let runner = &*self.runner;
        runner.control.claim.stop();
        let mut seat = runner.seat();
        seat.gone = true;
        if runner.parked.swap(false, Ordering::AcqRel) {
            runner.abandon(&mut seat);
        }
        drop(seat);
        let mut n = 0;
        if let Some(env) = self.held.take() {
            self.rx.taken();
            env.completion.fail(
                RequestErrorKind::RecipientFailure,
                gone_text(&runner.address),
            );
            n += 1;
        }
        n += self.rx.discard_all();
        discarded(&self.rx, runner, n);
        runner.control.claim.shut();
        self.tasks.ended(self.id);
    }
}

#[cold]
fn gone_text(address: &str) -> String {
    format!(
        "The consumer at address {address} stopped before handling the message: its task ended (its runtime shut down or the task was aborted)"
    )
}

/// Counts `n` messages discarded from `rx`'s queue.
fn discarded<H: Handler>(rx: &QueueRx, runner: &Runner<H>, n: u64) {
    if n > 0
        && let Some(host) = runner.seat().handler.host()
    {
        record(host.counters(), rx.probe(), Event::Discarded(n));
    }
}

/// Settles a run of a handler at `address` by how it `handled` the
/// message: the `completion` failed if the handler did, or a durable
/// delivery marked handled, and the run recorded (a panic counted; with
/// `span`, traces on, its outcome).
fn settle(
    handled: Handled,
    completion: &Completion,
    address: &str,
    counters: Option<&Counters>,
    span: Option<&Span>,
) {
    // Recorded first: whoever the completion wakes sees it counted.
    let event = match &handled {
        Handled::Ok => Event::Ended(None),
        Handled::Failed(_) => Event::HandlerFailed,
        Handled::Panicked(_) => Event::Panicked,
    };
    if let Some(counters) = counters {
        record_in(counters, None, span, event);
    }
    match handled {
        Handled::Ok => {
            if let Completion::Ack(ack) = completion {
                ack.handled();
            }
        }
        Handled::Failed(text) => {
            tracing::debug!(address, error = %text, "handler returned an error");
            completion.fail(RequestErrorKind::RecipientFailure, text);
        }
        Handled::Panicked(text) => {
            tracing::warn!(address, panic = %text, "handler panicked; the consumer keeps running");
            completion.fail(
                RequestErrorKind::RecipientFailure,
                format!("Handler at address {address} panicked: {text}"),
            );
        }
    }
}
