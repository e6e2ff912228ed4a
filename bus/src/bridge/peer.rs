//! One end of a bridge connection, whichever side it is on: a bridge's
//! connection to one of its clients (`conn.rs`), or a `BridgeClient`'s
//! connection to a bridge (`client.rs`). A peer owns what both have: the
//! writer of the connection's frames, the reply addresses it gives the
//! other end and the answers awaited there, the requests from the other end
//! served through the bus and answered, and the frames of its
//! [`Dialect`]. What is left to each side is what the other end may ask of
//! it.

use std::collections::HashMap;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use codecbus_core::MessageType;
use futures_util::task::AtomicWaker;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio::time::timeout;

use crate::api::message::Message;
use crate::base::error::{NO_FAILURE_CODE, RequestError, RequestErrorKind};
use crate::bridge::answer::{Answer, Answered, Boxed, Replier, Reply};
use crate::bridge::budget::{Budget, Charge};
use crate::bridge::events::{self, BridgeConnection, BridgeEventType, Hook};
use crate::bridge::json::encode_json;
use crate::bridge::permit::{Permits, refusal};
use crate::bridge::transport::Sink;
use crate::bridge::vocab::{Dialect, Outgoing};

/// How many frames one flush takes at most, and how many bytes: a burst
/// of answers leaves in few writes, and a long one still flushes as it
/// goes.
const BATCH_FRAMES: usize = 64;
const BATCH_BYTES: usize = 64 * 1024;

/// What goes to the writer.
pub(crate) enum Out {
    /// A frame, which the transport sends as its own.
    Frame(Outgoing),
    /// Write what is queued, then close.
    Close,
}

impl Out {
    /// The bytes of the frame (none for `Close`).
    fn len(&self) -> usize {
        match self {
            Out::Frame(frame) => frame.json().len(),
            Out::Close => 0,
        }
    }
}

/// The limits a peer keeps.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PeerLimits {
    /// How many answers may be awaited from the other end at once.
    pub(crate) max_pending: usize,
    /// How long an answer is awaited.
    pub(crate) answer_wait: Duration,
    /// How long writing may stall before the connection is given up.
    pub(crate) write_timeout: Duration,
}

/// One end of a connection: what its reader, its writer, the bus's
/// consumers of its registrations and its waiting requests share.
pub(crate) struct Peer {
    pub(crate) dialect: Dialect,
    limits: PeerLimits,
    /// What this connection holds, in bytes: its frames waiting to be
    /// written and the other end's requests not answered yet.
    pub(crate) budget: Arc<Budget>,
    /// The frames waiting for the writer. Bounded in bytes, not in
    /// frames: each is charged to the budget until written, and over
    /// budget the connection reads nothing more and deliveries from the
    /// bus wait. (A queue bounded in frames made a frame wait for room, in
    /// line behind answers that waited in the connection's unpolled
    /// requests: a client that sent more requests than the queue held
    /// before reading wedged its connection, and the bridge's shutdown.)
    outbox: mpsc::UnboundedSender<(Out, Charge)>,
    /// The reply addresses given to the other end, each with the answer
    /// awaited there.
    pending: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    next_reply: AtomicU64,
    /// Makes this connection's reply addresses its own.
    nonce: u64,
    /// What a bridge's connection lets out to its client; `None` for a
    /// client's connection.
    gate: Option<Gate>,
    /// The writer's waker.
    polling: Arc<Polling>,
}

/// What a bridge's connection lets out to its client: the outbound
/// permissions, the authorities they may require of the connection, and
/// the event hook's `Receive`.
pub(crate) struct Gate {
    pub(crate) outbound: Arc<Permits>,
    pub(crate) connection: BridgeConnection,
    pub(crate) hook: Option<Hook>,
}

/// The writing of a peer's frames. It runs in the connection's own task,
/// beside its reading ([`beside`](Self::beside)), not in a task of its
/// own: the frames answered from one burst of reading leave in one flush
/// once that reading pauses (it finds nothing more to read, or it lets
/// the writer flush, [`Peer::flush_now`]), with no other task to wake
/// (measured against a writer task of its own: 1.13 times the requests
/// per second on one connection, and a round trip one request at a time
/// about 3 µs longer, the reading's last empty read coming before the
/// write). Frames from
/// other tasks (deliveries, answers awaited apart) reach it through the
/// outbox. Dropping it stops the writing.
pub(crate) struct Writer {
    writing: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// The waker the writing is polled with ([`Polling`]).
    polling: Arc<Polling>,
    waker: Waker,
}

/// The writing's waker. A frame queued by the connection's own task (an
/// answer made while it reads) would wake that task while it runs: the
/// runtime then polls it once more for nothing, and wakes an idle worker
/// to take it, which moved the connection from thread to thread (about
/// one context switch every twelve requests on one busy connection). The
/// writing is polled after the reading in every poll of the task, so a
/// wake while that poll goes on is only noted ([`WOKEN`]); one that comes
/// while the writing itself is polled (another task's frame, or the
/// cooperative budget running out) wakes the task once the poll ends,
/// and one at any other time wakes it at once.
struct Polling {
    state: AtomicU8,
    task: AtomicWaker,
}

/// [`Polling::state`]: the connection's task is polling the reading or
/// the writing.
const POLLING: u8 = 1;
/// [`Polling::state`]: the writing was woken meanwhile.
const WOKEN: u8 = 2;
/// [`Polling::state`]: the reading paused for the writing to flush.
const FLUSH: u8 = 4;

impl Wake for Polling {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.state.fetch_or(WOKEN, Ordering::AcqRel) & POLLING == 0 {
            self.task.wake();
        }
    }
}

/// Which writer's reading this thread is polling now, if any: a
/// [`Peer::flush_now`] pauses only the reading its own writer polls (its
/// pause returns `Pending` with no waker, counting on that writer to poll
/// the reading again at once). Set for the length of one poll of the
/// reading, and put back as it was when that ends, even by a panic.
struct Reading(*const Polling);

thread_local! {
    static READING: std::cell::Cell<*const Polling> = const { std::cell::Cell::new(std::ptr::null()) };
}

impl Reading {
    /// Marks `polling`'s reading as polled on this thread until dropped.
    fn enter(polling: &Arc<Polling>) -> Self {
        Self(READING.replace(Arc::as_ptr(polling)))
    }

    /// Whether this thread is polling `polling`'s reading.
    fn is(polling: &Arc<Polling>) -> bool {
        READING.get() == Arc::as_ptr(polling)
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        READING.set(self.0);
    }
}

impl Writer {
    /// Runs `work` with the writing going on beside it: `work`'s output,
    /// or `None` (and `work` dropped) once the writing has ended (the
    /// connection failed or was closed).
    ///
    /// Cancel safety: dropping the future drops `work` and leaves the
    /// writing as it was.
    pub(crate) async fn beside<T>(&mut self, work: impl Future<Output = T>) -> Option<T> {
        let mut work = pin!(work);
        poll_fn(|cx| {
            let polling = &self.polling;
            polling.task.register(cx.waker());
            loop {
                polling.state.store(POLLING, Ordering::Release);
                let reading = Reading::enter(polling);
                let polled = work.as_mut().poll(cx);
                drop(reading);
                if let Poll::Ready(done) = polled {
                    polling.state.store(0, Ordering::Release);
                    return Poll::Ready(Some(done));
                }
                let Some(writing) = &mut self.writing else {
                    polling.state.store(0, Ordering::Release);
                    return Poll::Ready(None);
                };
                // What woke the writing so far is seen by this poll (the
                // swap acquires what the waking thread queued before).
                let before = polling.state.swap(POLLING, Ordering::AcqRel);
                let done = writing
                    .as_mut()
                    .poll(&mut Context::from_waker(&self.waker))
                    .is_ready();
                let after = polling.state.swap(0, Ordering::AcqRel);
                if done {
                    self.writing = None;
                    return Poll::Ready(None);
                }
                if before & FLUSH != 0 {
                    continue;
                }
                if after & WOKEN != 0 {
                    cx.waker().wake_by_ref();
                }
                return Poll::Pending;
            }
        })
        .await
    }

    /// Whether the writing has ended.
    fn is_finished(&self) -> bool {
        self.writing.is_none()
    }

    /// Writes until the writing ends.
    async fn finish(&mut self) {
        if let Some(writing) = &mut self.writing {
            writing.await;
            self.writing = None;
        }
    }
}

impl Peer {
    /// A peer writing to `sink` in `dialect`, and its writer, which the
    /// caller runs beside its reading ([`Writer::beside`]).
    pub(crate) fn start<W: Sink>(
        dialect: Dialect,
        sink: W,
        limits: PeerLimits,
        budget: Arc<Budget>,
        gate: Option<Gate>,
    ) -> (Arc<Self>, Writer) {
        let (outbox, rx) = mpsc::unbounded_channel();
        let polling = Arc::new(Polling {
            state: AtomicU8::new(0),
            task: AtomicWaker::new(),
        });
        let writer = Writer {
            writing: Some(Box::pin(write_all(sink, rx, limits.write_timeout))),
            waker: Waker::from(Arc::clone(&polling)),
            polling,
        };
        let peer = Arc::new(Self {
            dialect,
            limits,
            budget,
            outbox,
            pending: Mutex::new(HashMap::new()),
            next_reply: AtomicU64::new(1),
            nonce: nonce(),
            gate,
            polling: Arc::clone(&writer.polling),
        });
        (peer, writer)
    }

    /// Queues `frame` for the other end, its bytes held against the
    /// budget until written; `false` once the connection is closing.
    /// Never waits (see `outbox`).
    pub(crate) async fn write(&self, frame: Outgoing) -> bool {
        self.send(Out::Frame(frame), self.budget.charge(0))
    }

    /// Lets the writer write what the reading queued so far, then goes
    /// on: within [`Writer::beside`] the reading pauses, the writer runs
    /// and the reading is polled again at once, in the same poll of the
    /// task (no wake-up, no trip through the runtime's queue). Elsewhere
    /// (another task, or no writer beside) it does nothing.
    pub(crate) async fn flush_now(&self) {
        let mut paused = false;
        poll_fn(|_| {
            if paused || !Reading::is(&self.polling) {
                return Poll::Ready(());
            }
            paused = true;
            self.polling.state.fetch_or(FLUSH, Ordering::AcqRel);
            Poll::Pending
        })
        .await;
    }

    /// Queues `out` for the writer, with `charge` (what it held so far:
    /// a request's bytes, for its answer), made to cover the frame's bytes
    /// and let go once it is written; `false` once the connection is
    /// closing.
    pub(crate) fn send(&self, out: Out, mut charge: Charge) -> bool {
        charge.cover(out.len());
        self.outbox.send((out, charge)).is_ok()
    }

    /// Queues an `err` frame saying `message`; `false` once the
    /// connection is closing.
    pub(crate) async fn err(&self, message: &str) -> bool {
        self.write(Outgoing::of(&self.dialect.err(message))).await
    }

    /// Queues an `err` frame saying `message` and why; `false` once the
    /// connection is closing.
    pub(crate) async fn err_detail(&self, message: &str, detail: &str) -> bool {
        self.write(Outgoing::of(&self.dialect.err_detail(message, detail)))
            .await
    }

    /// Writes what is queued and closes the writing side, within the write
    /// timeout (past it the writer is stopped); the answers awaited fail.
    pub(crate) async fn close(&self, mut writer: Writer) {
        let wait = self.limits.write_timeout;
        if !writer.is_finished() && self.send(Out::Close, self.budget.charge(0)) {
            let _ = timeout(wait, writer.finish()).await;
        }
        drop(writer);
        self.forget_all();
    }

    /// Every answer awaited fails at once (`Gone`), and what waits for
    /// room in the budget goes on.
    pub(crate) fn forget_all(&self) {
        self.pending().clear();
        self.budget.close();
    }

    fn pending(&self) -> MutexGuard<'_, HashMap<String, oneshot::Sender<Answer>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new reply address of this connection: `__cb.`, 12 hex digits of
    /// its nonce, `.` and a count in hex, at most 34 characters (a bridge
    /// takes at most 36: vertx-web's limit, which codecbus's bridge holds
    /// too).
    fn reply_address(&self) -> String {
        let n = self.next_reply.fetch_add(1, Ordering::Relaxed);
        format!("__cb.{:012x}.{n:x}", self.nonce & 0xffff_ffff_ffff)
    }

    /// A new reply address at which an answer is awaited, and the answer
    /// when it comes (an `Err` when the connection goes first); `None`
    /// when as many answers as the limit allows are awaited already.
    pub(crate) fn expect(&self) -> Option<(String, oneshot::Receiver<Answer>)> {
        let mut pending = self.pending();
        if pending.len() >= self.limits.max_pending {
            return None;
        }
        let reply_address = self.reply_address();
        let (tx, rx) = oneshot::channel();
        pending.insert(reply_address.clone(), tx);
        Some((reply_address, rx))
    }

    /// No answer is awaited at `reply_address` any more.
    pub(crate) fn forget(&self, reply_address: &str) {
        self.pending().remove(reply_address);
    }

    /// Whether an answer is awaited at `address`.
    pub(crate) fn awaits(&self, address: &str) -> bool {
        self.pending().contains_key(address)
    }

    /// Hands `answer` to what awaits it at `address`; `false` when nothing
    /// does.
    pub(crate) fn answer(&self, address: &str, answer: Answer) -> bool {
        let waiting = self.pending().remove(address);
        match waiting {
            Some(tx) => {
                let _ = tx.send(answer);
                true
            }
            None => false,
        }
    }

    /// A reply address of this connection at which the other end owes
    /// `replier` (of a message to `address`) an answer, for the frame that
    /// asks it; the answer is handed to the replier by a task of its own,
    /// so that the asking goes on meanwhile (requests overlap, as in
    /// Vert.x). `None`, and the replier failed, when as many answers as
    /// the limit allows are awaited already.
    pub(crate) fn await_answer(
        self: &Arc<Self>,
        replier: Replier,
        address: &str,
    ) -> Option<String> {
        let Some((reply_address, answer)) = self.expect() else {
            replier.refuse(address, self.limits.max_pending);
            return None;
        };
        let peer = Arc::clone(self);
        let waiting = reply_address.clone();
        let address = address.to_string();
        tokio::spawn(async move {
            let wait = peer.limits.answer_wait;
            let answered = replier.settle(async { answer.await.ok() }, wait).await;
            peer.forget(&waiting);
            peer.answered(answered, &address).await;
        });
        Some(reply_address)
    }

    /// What answering a message awaiting the other end's answer gave (of a
    /// message to `address`): a refused answer is the other end's `err`
    /// frame (a bridge's client) or a warning (a client), and the next turn
    /// of the conversation, once given, goes to the other end.
    pub(crate) async fn answered(self: &Arc<Self>, answered: Answered, address: &str) {
        match answered {
            Answered::Done => {}
            Answered::Refused(why) => {
                if self.dialect == Dialect::Client {
                    tracing::warn!(address, %why, "an answer from the Vert.x bridge was refused");
                } else {
                    self.err_detail("invalid_body", &why).await;
                }
            }
            Answered::Next { at, next } => {
                let frame = self.answer_out(at, Arc::from(address), next.await);
                self.write(frame).await;
            }
        }
    }

    /// What answers the other end's request (at its `reply_address`, sent
    /// to `address`): the reply's frame, with an address to answer at when
    /// the replier asks for an answer; or the failure's frame.
    pub(crate) fn answer_out(
        self: &Arc<Self>,
        reply_address: String,
        address: Arc<str>,
        outcome: Result<Reply, RequestError>,
    ) -> Outgoing {
        let dialect = self.dialect;
        match outcome {
            Ok(mut reply) => {
                let ask = reply
                    .ask
                    .take()
                    .and_then(|replier| self.await_answer(replier, &address));
                // Made here, not by the writer: the reply's values are let
                // go on the thread that made them (the request's), which
                // the allocator serves far faster than values freed on
                // another thread (measured: 15 % of CPU per request for
                // bodies of a few dozen values).
                match reply.json() {
                    Ok(body) => dialect.message(
                        &reply_address,
                        ask.as_deref(),
                        &reply.headers,
                        body.as_bytes(),
                        true,
                    ),
                    Err(e) => dialect.answer_failure(&reply_address, &address, &e),
                }
            }
            Err(e) => dialect.answer_failure(&reply_address, &address, &e),
        }
    }

    /// The other end's request to `address` (`request`, its way through
    /// the bus), answered at its `reply_address` when it completes; its
    /// bytes (`charge`) are held until its answer is written.
    pub(crate) fn answer_request(
        self: &Arc<Self>,
        request: Boxed<'static, Result<Reply, RequestError>>,
        reply_address: String,
        address: Arc<str>,
        charge: Charge,
    ) -> impl Future<Output = ()> + Send + 'static {
        let peer = Arc::clone(self);
        async move {
            let answered = peer.answer_out(reply_address, address, request.await);
            peer.send(Out::Frame(answered), charge);
        }
    }

    /// Hands a message of a registration to the other end: as a message
    /// frame, when the outbound permissions admit its body; a request with
    /// a reply address of this connection, whose answer is decoded as an
    /// `R` and replied.
    pub(crate) async fn deliver<T, R>(self: &Arc<Self>, m: Message<T>)
    where
        T: MessageType + Send + Sync + 'static,
        R: MessageType + Send + Sync + 'static,
    {
        // A connection over its budget takes no more from the bus until it
        // drains: the consumer waits here, and its queue holds the rest.
        self.budget.room().await;
        let address = m.address().to_string();
        let body = match encode_json(m.body()) {
            Ok(body) => body,
            Err(why) => {
                tracing::warn!(address, %why, "a message cannot cross the bridge as JSON");
                let _ = m.fail_coded(
                    NO_FAILURE_CODE,
                    format!(
                        "The message to address {address} cannot cross the bridge as JSON: {why}"
                    ),
                );
                return;
            }
        };
        if let Some(gate) = &self.gate
            && let Some(why) = refusal(
                gate.outbound.permit(&address, Some(&body)),
                &gate.connection,
            )
        {
            // Not for this client: dropped, as Vert.x does (a request then
            // fails at once: its message was dropped unanswered).
            tracing::debug!(
                address,
                why,
                "outbound message refused by the bridge's permissions"
            );
            return;
        }
        if !m.expects_reply() {
            let frame =
                self.dialect
                    .message(&address, None, m.headers(), body.as_bytes(), m.is_send());
            if let Some(frame) = self.receive(frame).await {
                self.write(frame).await;
            }
            return;
        }
        let headers = m.headers().clone();
        let Some(reply_address) = self.await_answer(Replier::new::<T, R>(m), &address) else {
            return;
        };
        let sent = self.dialect.message(
            &address,
            Some(&reply_address),
            &headers,
            body.as_bytes(),
            true,
        );
        let Some(sent) = self.receive(sent).await else {
            self.answer(
                &reply_address,
                Answer::Failed(RequestError::new(
                    RequestErrorKind::RecipientFailure,
                    format!(
                        "The message to address {address} was refused by the bridge's event hook"
                    ),
                )),
            );
            return;
        };
        // A frame that cannot go means the connection is closing: the
        // answer's wait then ends with the others (`Gone`).
        self.write(sent).await;
    }

    /// A frame on its way to the client, as the event hook lets it go
    /// (`Receive`), changed or not; `None` when it refuses it.
    async fn receive(&self, frame: Outgoing) -> Option<Outgoing> {
        let Some(Gate {
            connection,
            hook: Some(hook),
            ..
        }) = &self.gate
        else {
            return Some(frame);
        };
        let object = serde_json::from_slice::<Map<String, Value>>(frame.json()).ok();
        match events::ask(hook, BridgeEventType::Receive, object, connection).await {
            Some(Some(changed)) => Some(Outgoing::of(&Value::Object(changed))),
            Some(None) => Some(frame),
            None => {
                tracing::debug!(
                    connection = connection.id(),
                    "a message refused by the bridge's event hook"
                );
                None
            }
        }
    }
}

/// A number that makes one connection's reply addresses unlike another's.
fn nonce() -> u64 {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    // Mixed (splitmix64's finaliser), so that the 48 bits kept differ.
    let mut x =
        time ^ (u64::from(std::process::id()) << 32) ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Writes a connection's frames until it closes, stalls or fails; beats
/// when the transport does and nothing was written for a while. The frames
/// waiting when one is taken are written with it, in one flush; their
/// bytes are let go once it is done.
async fn write_all<W: Sink>(
    mut sink: W,
    mut rx: mpsc::UnboundedReceiver<(Out, Charge)>,
    write_timeout: Duration,
) {
    let mut closing = false;
    let mut written: Vec<Charge> = Vec::with_capacity(BATCH_FRAMES);
    while !closing {
        let out = match sink.heartbeat() {
            Some(every) => match timeout(every, rx.recv()).await {
                Ok(out) => out,
                Err(_) => {
                    if !matches!(timeout(write_timeout, sink.beat()).await, Ok(Ok(()))) {
                        return;
                    }
                    continue;
                }
            },
            None => rx.recv().await,
        };
        let Some(first) = out else { break };
        let mut bytes = 0;
        let mut next = Some(first);
        while let Some((out, charge)) = next.take() {
            let frame = match out {
                Out::Frame(frame) => frame,
                Out::Close => {
                    closing = true;
                    break;
                }
            };
            bytes += frame.json().len();
            sink.feed(frame);
            written.push(charge);
            if written.len() < BATCH_FRAMES && bytes < BATCH_BYTES {
                next = rx.try_recv().ok();
            }
        }
        if !written.is_empty() {
            if !matches!(timeout(write_timeout, sink.flush()).await, Ok(Ok(()))) {
                return;
            }
            written.clear();
        }
    }
    let _ = timeout(write_timeout, sink.close()).await;
}

#[cfg(test)]
mod tests {

    use serde_json::json;

    use super::*;
    use crate::bridge::budget::Pool;

    /// A sink that records how many frames each flush wrote.
    #[derive(Clone, Default)]
    struct Recorder {
        queued: Arc<Mutex<usize>>,
        flushes: Arc<Mutex<Vec<usize>>>,
    }

    impl Recorder {
        fn flushes(&self) -> Vec<usize> {
            self.flushes.lock().unwrap().clone()
        }

        fn written(&self) -> usize {
            self.flushes().iter().sum()
        }
    }

    impl Sink for Recorder {
        fn feed(&mut self, _: Outgoing) {
            *self.queued.lock().unwrap() += 1;
        }

        async fn flush(&mut self) -> std::io::Result<()> {
            let n = std::mem::take(&mut *self.queued.lock().unwrap());
            self.flushes.lock().unwrap().push(n);
            Ok(())
        }

        async fn close(&mut self) {}
    }

    fn peer(sink: &Recorder) -> (Arc<Peer>, Writer) {
        Peer::start(
            Dialect::Tcp,
            sink.clone(),
            PeerLimits {
                max_pending: 16,
                answer_wait: Duration::from_secs(5),
                write_timeout: Duration::from_secs(5),
            },
            Budget::new(usize::MAX, &Pool::new(usize::MAX)),
            None,
        )
    }

    fn frame(n: usize) -> Outgoing {
        Outgoing::of(&json!({"type": "message", "n": n}))
    }

    #[tokio::test(flavor = "current_thread")]
    async fn flush_now_writes_what_the_reading_queued_and_goes_on() {
        let sink = Recorder::default();
        let (peer, mut writer) = peer(&sink);
        let done = writer
            .beside(async {
                for n in 0..3 {
                    peer.write(frame(n)).await;
                }
                assert_eq!(sink.flushes(), [] as [usize; 0]);
                peer.flush_now().await;
                assert_eq!(sink.flushes(), [3]);
                for n in 0..2 {
                    peer.write(frame(n)).await;
                }
                peer.flush_now().await;
                assert_eq!(sink.flushes(), [3, 2]);
                "read on"
            })
            .await;
        assert_eq!(done, Some("read on"));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn flush_now_away_from_the_writer_does_nothing() {
        let sink = Recorder::default();
        let (peer, _writer) = peer(&sink);
        peer.write(frame(0)).await;
        timeout(Duration::from_secs(5), peer.flush_now())
            .await
            .expect("flush_now returns at once where no writer runs beside it");
        assert_eq!(sink.flushes(), [] as [usize; 0]);
    }

    /// A `flush_now` of another task, while the connection's task polls
    /// its reading on another thread, goes on at once: only the reading
    /// beside its writer pauses.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn flush_now_of_another_task_goes_on() {
        let sink = Recorder::default();
        let (peer, mut writer) = peer(&sink);
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let connection = {
            let stop = Arc::clone(&stop);
            tokio::spawn(async move {
                writer
                    .beside(async {
                        // Polled for a while each time, and often.
                        while !stop.load(Ordering::Relaxed) {
                            for _ in 0..2_000 {
                                std::hint::spin_loop();
                            }
                            tokio::task::yield_now().await;
                        }
                    })
                    .await
            })
        };
        let other = Arc::clone(&peer);
        let flushes = tokio::spawn(async move {
            for _ in 0..5_000 {
                other.flush_now().await;
                tokio::task::yield_now().await;
            }
        });
        let outcome = timeout(Duration::from_secs(10), flushes).await;
        stop.store(true, Ordering::Relaxed);
        assert!(outcome.is_ok(), "a flush_now of another task waited");
        assert_eq!(connection.await.unwrap(), Some(()));
    }

    /// Frames queued by other tasks while the connection's task is being
    /// polled (its reading, or its writing) are written: the writing's
    /// wake-ups noted during a poll are never lost.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn frames_from_other_tasks_are_written_whenever_they_come() {
        const FRAMES: usize = 4000;
        let sink = Recorder::default();
        let (peer, mut writer) = peer(&sink);
        let senders: Vec<_> = (0..2)
            .map(|_| {
                let peer = Arc::clone(&peer);
                tokio::spawn(async move {
                    for n in 0..FRAMES / 2 {
                        peer.write(frame(n)).await;
                        if n % 7 == 0 {
                            tokio::task::yield_now().await;
                        }
                    }
                })
            })
            .collect();
        // The connection's task, polled by the runtime alone: a wake-up
        // of the writing that got lost would leave frames unwritten.
        let reader = Arc::clone(&peer);
        let connection = tokio::spawn(async move {
            let reading = async {
                // A reading that is polled often, and pauses for the
                // writer now and then, while the frames come; then one
                // that waits.
                for n in 0..FRAMES {
                    if n % 3 == 0 {
                        reader.flush_now().await;
                    }
                    tokio::task::yield_now().await;
                }
                std::future::pending::<()>().await;
            };
            writer.beside(reading).await;
        });
        let outcome = timeout(Duration::from_secs(20), async {
            for sender in senders {
                sender.await.unwrap();
            }
            while sink.written() < FRAMES {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await;
        connection.abort();
        assert!(
            outcome.is_ok(),
            "{} of {FRAMES} frames written",
            sink.written()
        );
    }
}
