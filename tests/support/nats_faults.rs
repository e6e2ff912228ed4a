//! Fault scenarios for the bus across NATS, shared by the short form in
//! `tests/nats_faults.rs` and the full-size run of `examples/nats_faults.rs`.
//!
//! Two bus nodes (two NATS connections) talk through a real `nats-server`
//! on a loopback port (`bus/tests/common/nats.rs` starts it), which is
//! killed with SIGKILL and started again on the same port while requests
//! flow. Every phase is bounded: a request is guarded by its own timeout
//! plus a hang bound, waits for recovery have deadlines, and each phase
//! ends after a fixed count. A broken invariant is collected as a line of
//! text in `Figures::broken`, so a run reports every figure before it
//! fails.

#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use codecbus::MessageCodec;
use codecbus::bus::{DeliveryOptions, EventBus, Message, Metrics, NatsOptions, RequestErrorKind};

use crate::harness::{Config as ServerConfig, NatsServer};

/// A message with a payload of chosen size, for the slow-consumer phases.
#[derive(MessageCodec, Clone, Debug)]
#[codec(name = "faults.blob")]
pub struct Blob {
    pub seq: u64,
    pub data: String,
}

const DOUBLE: &str = "faults.double";
const NEWS: &str = "faults.news";
const SLOW: &str = "faults.slow";
const BLOCKED: &str = "faults.blocked";

/// The server's limits for a client that does not read its socket
/// (defaults: 64 MB pending, 10 s write deadline), lowered so that the
/// blocked node trips them within its block (3 s; 1.5 s in the test).
pub const SERVER_LIMITS: &str = "max_pending: 8MB\nwrite_deadline: \"1s\"";

/// Sizes and limits of one run.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Requests in the stream the restarts hit.
    pub requests: u64,
    /// Server kills (SIGKILL) and restarts during that stream.
    pub restarts: u32,
    /// How long the server stays down at each restart.
    pub down: Duration,
    /// The long outage after the stream.
    pub outage: Duration,
    /// Each request's timeout.
    pub timeout: Duration,
    /// The requester's pause after a request failed at once (a connection
    /// error, no responders) before it sends the next one; it never
    /// retries a request.
    pub backoff: Duration,
    /// `NatsOptions::max_reconnect_delay` of both nodes.
    pub reconnect_delay: Duration,
    /// Invariant: failed requests per restart.
    pub max_failures_per_restart: usize,
    /// Invariant: restart → first successful request.
    pub recovery_limit: Duration,
    /// Invariant: end of the long outage → first successful request.
    pub outage_recovery_limit: Duration,
    /// Invariant: how late past its timeout a request may resolve.
    pub lateness_limit: Duration,
    /// Publishes to a consumer whose handler is slow (1 ms per message).
    pub slow_messages: u64,
    /// Body size of those publishes.
    pub slow_size: usize,
    /// Publishes to a node whose handler blocks its runtime thread.
    pub blocked_messages: u64,
    /// Body size of those publishes.
    pub blocked_size: usize,
    /// How long that node's handler blocks its runtime (once).
    pub block: Duration,
}

impl Settings {
    /// The figures of the full run (RELIABILITY.md).
    pub fn full() -> Self {
        Self {
            requests: 4_000,
            restarts: 5,
            down: Duration::from_secs(1),
            outage: Duration::from_secs(30),
            timeout: Duration::from_millis(500),
            backoff: Duration::from_millis(200),
            reconnect_delay: Duration::from_millis(200),
            max_failures_per_restart: 10,
            recovery_limit: Duration::from_secs(1),
            outage_recovery_limit: Duration::from_secs(5),
            lateness_limit: Duration::from_millis(250),
            slow_messages: 20_000,
            slow_size: 1024,
            blocked_messages: 2_000,
            blocked_size: 64 * 1024,
            block: Duration::from_secs(3),
        }
    }
}

/// How one request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Replied,
    Failed(RequestErrorKind),
    /// Not resolved within its timeout plus the hang bound.
    Hung,
}

#[derive(Clone, Copy, Debug)]
struct Outcome {
    start: Instant,
    end: Instant,
    how: End,
}

/// Figures of one restart.
#[derive(Clone, Debug, Default)]
pub struct RestartFigures {
    /// Requests that failed from the kill to the next kill (or the end).
    pub failures: usize,
    /// nats-server process start → accepting connections.
    pub server_start: Duration,
    /// Server restarted → first successful request ends.
    pub recovery: Option<Duration>,
}

/// What a slow-consumer phase saw.
#[derive(Clone, Debug, Default)]
pub struct SlowFigures {
    pub offered: u64,
    /// `publish` returned `Ok` on the sending node.
    pub published: u64,
    /// `remote_received` on the consuming node.
    pub received: u64,
    pub delivered: u64,
    pub refused: u64,
    pub handled: u64,
    /// Lines of the server log mentioning a slow consumer.
    pub server_reports: Vec<String>,
    pub elapsed: Duration,
    /// Whether the node received publishes again afterwards.
    pub back: Option<bool>,
}

/// Everything a run measured.
#[derive(Clone, Debug, Default)]
pub struct Figures {
    pub requests: u64,
    pub replied: u64,
    pub failed: BTreeMap<String, usize>,
    pub hung: u64,
    pub wrong_replies: u64,
    /// Failures before the first kill (the server was up).
    pub failures_before_faults: usize,
    pub slowest_success: Duration,
    /// The latest a request resolved past its timeout.
    pub max_lateness: Duration,
    pub restarts: Vec<RestartFigures>,
    pub outage: Duration,
    pub outage_failures: usize,
    pub outage_recovery: Option<Duration>,
    pub after_outage_ok: u64,
    pub after_outage_failed: u64,
    pub publishes_after_outage: (u64, u64),
    pub slow: SlowFigures,
    pub blocked: Option<SlowFigures>,
    pub panics: usize,
    pub broken: Vec<String>,
}

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Counts panics anywhere in the process (bus tasks included) from now on.
pub fn count_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        previous(info);
    }));
}

fn options(url: &str, s: &Settings) -> NatsOptions {
    NatsOptions::new(url)
        .connection_timeout(Duration::from_secs(2))
        .max_reconnect_delay(s.reconnect_delay)
}

async fn node(url: &str, s: &Settings) -> Result<EventBus, String> {
    EventBus::builder()
        .default_timeout(s.timeout)
        .nats(options(url, s))
        .connect()
        .await
        .map_err(|e| format!("connect to {url}: {e}"))
}

#[derive(Default)]
struct Stream {
    outcomes: Mutex<Vec<Outcome>>,
    done: AtomicU64,
    stop: AtomicBool,
}

impl Stream {
    fn done(&self) -> u64 {
        self.done.load(Ordering::SeqCst)
    }

    fn snapshot(&self) -> Vec<Outcome> {
        self.outcomes.lock().unwrap().clone()
    }

    /// The first successful request ending at or after `since`.
    fn first_success_since(&self, since: Instant) -> Option<Instant> {
        self.outcomes
            .lock()
            .unwrap()
            .iter()
            .find(|o| o.how == End::Replied && o.end >= since)
            .map(|o| o.end)
    }
}

/// One request after the other, at most `n`, until told to stop. Returns
/// the count of wrong replies.
async fn requester(bus: EventBus, n: u64, stream: Arc<Stream>, s: Settings) -> u64 {
    let hang = s.timeout + Duration::from_secs(5);
    let mut wrong = 0;
    for i in 0..n {
        if stream.stop.load(Ordering::SeqCst) {
            break;
        }
        let start = Instant::now();
        let request = bus.request_with::<u64>(DOUBLE, i, DeliveryOptions::new().timeout(s.timeout));
        let how = match tokio::time::timeout(hang, request).await {
            Err(_) => End::Hung,
            Ok(Ok(reply)) => {
                if *reply.body() != i.wrapping_mul(2) {
                    wrong += 1;
                }
                End::Replied
            }
            Ok(Err(e)) => End::Failed(e.kind()),
        };
        let end = Instant::now();
        stream
            .outcomes
            .lock()
            .unwrap()
            .push(Outcome { start, end, how });
        stream.done.fetch_add(1, Ordering::SeqCst);
        if matches!(how, End::Failed(kind) if kind != RequestErrorKind::Timeout) {
            tokio::time::sleep(s.backoff).await;
        }
    }
    wrong
}

/// Runs `f` on the server off the runtime (starting one blocks).
async fn with_server(server: &Arc<Mutex<NatsServer>>, f: fn(&mut NatsServer)) {
    let server = Arc::clone(server);
    tokio::task::spawn_blocking(move || f(&mut server.lock().unwrap()))
        .await
        .expect("server control");
}

/// Polls until a request ending at or after `since` succeeded, for at most
/// `bound`.
async fn await_success(stream: &Stream, since: Instant, bound: Duration) -> Option<Instant> {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(at) = stream.first_success_since(since) {
            return Some(at);
        }
        if Instant::now() > deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn kind_name(how: End) -> String {
    match how {
        End::Failed(kind) => format!("{kind:?}"),
        other => format!("{other:?}"),
    }
}

/// Runs every phase against a server of its own: `Ok(None)` when
/// `nats-server` is not installed (after printing how to install it),
/// `Err` when the run could not start (no connection); broken invariants
/// are in `Figures::broken`.
pub async fn run(test: &str, s: &Settings) -> Result<Option<Figures>, String> {
    let config = ServerConfig {
        extra: Some(SERVER_LIMITS.to_owned()),
        ..ServerConfig::default()
    };
    let Some(server) = NatsServer::start_with(test, &config) else {
        return Ok(None);
    };
    let url = server.url();
    let server = Arc::new(Mutex::new(server));
    let mut f = Figures::default();
    let panics_before = PANICS.load(Ordering::SeqCst);

    let a = node(&url, s).await?;
    let b = node(&url, s).await?;
    let _double = b.consumer(DOUBLE, |m: Message<u64>| async move {
        m.reply(m.body().wrapping_mul(2))
    });
    let news = Arc::new(AtomicU64::new(0));
    let _news = {
        let news = Arc::clone(&news);
        b.consumer(NEWS, move |_: Message<u64>| {
            news.fetch_add(1, Ordering::SeqCst);
            async {}
        })
    };
    b.flush().await.map_err(|e| format!("flush: {e}"))?;

    restarts(&a, &server, s, &mut f).await;
    outage(&a, &server, s, &mut f).await;

    // Publishes resume too: b's plain subscription came back.
    let before = news.load(Ordering::SeqCst);
    let mut sent = 0;
    for n in 0..10u64 {
        if a.publish(NEWS, n).await.is_ok() {
            sent += 1;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while news.load(Ordering::SeqCst) - before < sent && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    f.publishes_after_outage = (sent, news.load(Ordering::SeqCst) - before);
    if f.publishes_after_outage != (10, 10) {
        f.broken.push(format!(
            "publishes after the outage: {} accepted, {} received (want 10, 10)",
            f.publishes_after_outage.0, f.publishes_after_outage.1
        ));
    }

    f.slow = slow_handler(&a, &b, &server, s).await;
    check_books("slow handler", &f.slow, &mut f.broken);
    if s.blocked_messages > 0 {
        let blocked = blocked_node(&a, &url, &server, s).await?;
        if blocked.back == Some(false) {
            f.broken
                .push("blocked node: no publish reached it again within 10 s".to_owned());
        }
        check_books("blocked node", &blocked, &mut f.broken);
        f.blocked = Some(blocked);
    }

    a.close().await;
    b.close().await;
    f.panics = PANICS.load(Ordering::SeqCst) - panics_before;
    if f.panics > 0 {
        f.broken.push(format!("{} panics", f.panics));
    }
    Ok(Some(f))
}

/// The stream of `s.requests` requests with `s.restarts` kills spread over
/// it.
async fn restarts(a: &EventBus, server: &Arc<Mutex<NatsServer>>, s: &Settings, f: &mut Figures) {
    let stream = Arc::new(Stream::default());
    let task = tokio::spawn(requester(
        a.clone(),
        s.requests,
        Arc::clone(&stream),
        s.clone(),
    ));
    let mut marks = Vec::new();
    for k in 1..=u64::from(s.restarts) {
        let threshold = s.requests * k / (u64::from(s.restarts) + 1);
        while stream.done() < threshold && !task.is_finished() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        if task.is_finished() {
            f.broken.push(format!(
                "the stream ended before restart {k} (too few requests)"
            ));
            break;
        }
        let killed = Instant::now();
        with_server(server, NatsServer::kill).await;
        tokio::time::sleep(s.down).await;
        let restarted = Instant::now();
        with_server(server, NatsServer::start_again).await;
        let ready = Instant::now();
        // Before the next kill, the bus must be serving again (the bound
        // only keeps a broken bus from hanging the run).
        let recovered = await_success(&stream, restarted, Duration::from_secs(15)).await;
        marks.push((killed, restarted, ready, recovered));
    }
    match task.await {
        Ok(wrong) => f.wrong_replies += wrong,
        Err(e) => f.broken.push(format!("the requester task failed: {e}")),
    }
    let outcomes = stream.snapshot();
    tally(&outcomes, s, f);
    f.failures_before_faults = outcomes
        .iter()
        .filter(|o| o.how != End::Replied && marks.first().is_none_or(|m| o.end < m.0))
        .count();
    if f.failures_before_faults > 0 {
        f.broken.push(format!(
            "{} requests failed before the first kill",
            f.failures_before_faults
        ));
    }
    for (i, &(killed, restarted, ready, recovered)) in marks.iter().enumerate() {
        let until = marks.get(i + 1).map(|m| m.0);
        let failures = outcomes
            .iter()
            .filter(|o| {
                o.how != End::Replied && o.end >= killed && until.is_none_or(|next| o.end < next)
            })
            .count();
        let r = RestartFigures {
            failures,
            server_start: ready - restarted,
            recovery: recovered.map(|at| at - restarted),
        };
        if failures > s.max_failures_per_restart {
            f.broken.push(format!(
                "restart {}: {failures} requests failed (limit {})",
                i + 1,
                s.max_failures_per_restart
            ));
        }
        match r.recovery {
            Some(d) if d <= s.recovery_limit => {}
            Some(d) => f.broken.push(format!(
                "restart {}: serving again {d:?} after the restart (limit {:?})",
                i + 1,
                s.recovery_limit
            )),
            None => f
                .broken
                .push(format!("restart {}: never served again", i + 1)),
        }
        f.restarts.push(r);
    }
}

/// Counts outcomes and checks each resolved within its timeout.
fn tally(outcomes: &[Outcome], s: &Settings, f: &mut Figures) {
    for o in outcomes {
        f.requests += 1;
        let took = o.end - o.start;
        match o.how {
            End::Replied => {
                f.replied += 1;
                f.slowest_success = f.slowest_success.max(took);
            }
            End::Hung => f.hung += 1,
            End::Failed(_) => {}
        }
        if o.how != End::Replied {
            *f.failed.entry(kind_name(o.how)).or_default() += 1;
        }
        f.max_lateness = f.max_lateness.max(took.saturating_sub(s.timeout));
    }
    if f.hung > 0 {
        f.broken.push(format!(
            "{} requests did not resolve within their timeout + 5 s",
            f.hung
        ));
    }
    if f.wrong_replies > 0 {
        f.broken
            .push(format!("{} requests got a wrong reply", f.wrong_replies));
    }
    if f.max_lateness > s.lateness_limit {
        f.broken.push(format!(
            "a request resolved {:?} after its timeout (limit {:?})",
            f.max_lateness, s.lateness_limit
        ));
    }
}

/// The long outage: down for `s.outage`, then serving again within
/// `s.outage_recovery_limit`, then 100 requests that must all succeed.
async fn outage(a: &EventBus, server: &Arc<Mutex<NatsServer>>, s: &Settings, f: &mut Figures) {
    const AFTER: usize = 100;
    let stream = Arc::new(Stream::default());
    let task = tokio::spawn(requester(
        a.clone(),
        u64::MAX,
        Arc::clone(&stream),
        s.clone(),
    ));
    while stream.done() < 10 && !task.is_finished() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    f.outage = s.outage;
    with_server(server, NatsServer::kill).await;
    tokio::time::sleep(s.outage).await;
    let restarted = Instant::now();
    with_server(server, NatsServer::start_again).await;
    let recovered = await_success(
        &stream,
        restarted,
        s.outage_recovery_limit + Duration::from_secs(10),
    )
    .await;
    f.outage_recovery = recovered.map(|at| at - restarted);
    if let Some(at) = recovered {
        let deadline = Instant::now() + Duration::from_secs(30);
        while stream.snapshot().iter().filter(|o| o.end > at).count() < AFTER
            && Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    stream.stop.store(true, Ordering::SeqCst);
    match task.await {
        Ok(wrong) => f.wrong_replies += wrong,
        Err(e) => f.broken.push(format!("the requester task failed: {e}")),
    }
    let outcomes = stream.snapshot();
    let mut phase = Figures::default();
    tally(&outcomes, s, &mut phase);
    f.broken.append(&mut phase.broken);
    f.hung += phase.hung;
    f.max_lateness = f.max_lateness.max(phase.max_lateness);
    f.outage_failures = outcomes
        .iter()
        .filter(|o| o.how != End::Replied && recovered.is_none_or(|at| o.end < at))
        .count();
    for o in outcomes
        .iter()
        .filter(|o| recovered.is_some_and(|at| o.end > at))
    {
        if o.how == End::Replied {
            f.after_outage_ok += 1;
        } else {
            f.after_outage_failed += 1;
        }
    }
    match f.outage_recovery {
        Some(d) if d <= s.outage_recovery_limit => {}
        Some(d) => f.broken.push(format!(
            "after the {:?} outage: serving again {d:?} after the restart (limit {:?})",
            s.outage, s.outage_recovery_limit
        )),
        None => f.broken.push(format!(
            "after the {:?} outage: never served again",
            s.outage
        )),
    }
    if f.after_outage_failed > 0 || (recovered.is_some() && f.after_outage_ok < AFTER as u64) {
        f.broken.push(format!(
            "after the outage: {} of the next requests failed, {} succeeded (want {AFTER} successes)",
            f.after_outage_failed, f.after_outage_ok
        ));
    }
}

fn delta(after: &Metrics, before: &Metrics) -> (u64, u64, u64, u64) {
    (
        after.remote_received - before.remote_received,
        after.delivered - before.delivered,
        after.refused - before.refused,
        after.handled - before.handled,
    )
}

/// Waits until `metrics` stop changing for `quiet` (at most `bound`) and
/// returns the last reading.
async fn settle(metrics: impl Fn() -> Metrics, quiet: Duration, bound: Duration) -> Metrics {
    let deadline = Instant::now() + bound;
    let mut last = metrics();
    let mut since = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = metrics();
        let moved = (now.remote_received, now.delivered, now.refused, now.handled)
            != (
                last.remote_received,
                last.delivered,
                last.refused,
                last.handled,
            );
        if moved {
            since = Instant::now();
            last = now;
        } else if since.elapsed() >= quiet && now.handled >= now.delivered {
            return now;
        }
        if Instant::now() > deadline {
            return now;
        }
    }
}

fn slow_lines(server: &Arc<Mutex<NatsServer>>) -> Vec<String> {
    server
        .lock()
        .unwrap()
        .log()
        .lines()
        .filter(|l| l.to_ascii_lowercase().contains("slow consumer"))
        .map(str::to_owned)
        .collect()
}

/// Publishes as fast as `a` can to a consumer on `b` that handles one
/// message per millisecond.
/// Publishes `count` blobs carrying `data`; returns how many NATS took.
async fn publish_blobs(bus: &EventBus, address: &str, count: u64, data: &str) -> u64 {
    let mut published = 0;
    for seq in 0..count {
        let blob = Blob {
            seq,
            data: data.to_owned(),
        };
        if bus.publish(address, blob).await.is_ok() {
            published += 1;
        }
    }
    published
}

async fn slow_handler(
    a: &EventBus,
    b: &EventBus,
    server: &Arc<Mutex<NatsServer>>,
    s: &Settings,
) -> SlowFigures {
    let _slow = b.consumer(SLOW, |_: Message<Blob>| async {
        tokio::time::sleep(Duration::from_millis(1)).await;
    });
    let _ = b.flush().await;
    let reports_before = slow_lines(server).len();
    let before = b.metrics();
    let started = Instant::now();
    let published = publish_blobs(a, SLOW, s.slow_messages, &"x".repeat(s.slow_size)).await;
    let _ = a.flush().await;
    let after = settle(
        || b.metrics(),
        Duration::from_millis(500),
        Duration::from_secs(60),
    )
    .await;
    let (received, delivered, refused, handled) = delta(&after, &before);
    SlowFigures {
        offered: s.slow_messages,
        published,
        received,
        delivered,
        refused,
        handled,
        server_reports: slow_lines(server).split_off(reports_before),
        elapsed: started.elapsed(),
        back: None,
    }
}

/// A node whose handler blocks its runtime's only thread for `s.block` on
/// the first message: its NATS client cannot read the socket meanwhile, so
/// the server's buffer for it grows until the server gives up on it.
async fn blocked_node(
    a: &EventBus,
    url: &str,
    server: &Arc<Mutex<NatsServer>>,
    s: &Settings,
) -> Result<SlowFigures, String> {
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let url = url.to_owned();
    let settings = s.clone();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let bus = match node(&url, &settings).await {
                Ok(bus) => bus,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            let first = AtomicBool::new(true);
            let block = settings.block;
            let _blocked = bus.consumer(BLOCKED, move |_: Message<Blob>| {
                // Deliberately blocking: a handler stuck in synchronous
                // work holds the runtime's only thread, NATS client
                // included.
                if first.swap(false, Ordering::SeqCst) {
                    std::thread::sleep(block);
                }
                async {}
            });
            let _ = bus.flush().await;
            let _ = ready_tx.send(Ok(bus.clone()));
            let _ = stop_rx.await;
            bus.close().await;
        });
    });
    let c = ready_rx
        .await
        .map_err(|_| "the blocked node's thread ended".to_owned())??;
    let reports_before = slow_lines(server).len();
    let before = c.metrics();
    let started = Instant::now();
    let published =
        publish_blobs(a, BLOCKED, s.blocked_messages, &"y".repeat(s.blocked_size)).await;
    let _ = a.flush().await;
    let after = settle(
        || c.metrics(),
        s.block + Duration::from_secs(1),
        Duration::from_secs(60),
    )
    .await;
    let (received, delivered, refused, handled) = delta(&after, &before);
    // Once unblocked, the node reconnects and resubscribes by itself: a
    // publish reaches it again.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut back = false;
    while !back && Instant::now() < deadline {
        let probe = Blob {
            seq: u64::MAX,
            data: String::new(),
        };
        let _ = a.publish(BLOCKED, probe).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        back = c.metrics().remote_received > after.remote_received;
    }
    let figures = SlowFigures {
        back: Some(back),
        offered: s.blocked_messages,
        published,
        received,
        delivered,
        refused,
        handled,
        server_reports: slow_lines(server).split_off(reports_before),
        elapsed: started.elapsed(),
    };
    let _ = stop_tx.send(());
    drop(c);
    tokio::task::spawn_blocking(move || thread.join())
        .await
        .map_err(|e| format!("join: {e}"))?
        .map_err(|_| "the blocked node's thread panicked".to_owned())?;
    Ok(figures)
}

fn check_books(what: &str, s: &SlowFigures, broken: &mut Vec<String>) {
    if s.received != s.delivered + s.refused {
        broken.push(format!(
            "{what}: received {} != delivered {} + refused {}",
            s.received, s.delivered, s.refused
        ));
    }
    if s.handled != s.delivered {
        broken.push(format!(
            "{what}: handled {} != delivered {}",
            s.handled, s.delivered
        ));
    }
    if s.received > s.published {
        broken.push(format!(
            "{what}: received {} > published {} (duplicates)",
            s.received, s.published
        ));
    }
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

fn slow_row(out: &mut String, name: &str, s: &SlowFigures) {
    let lost = s.published.saturating_sub(s.received);
    let _ = writeln!(
        out,
        "| {name} | {} offered, {} published; received {}, delivered {}, refused {} (counted), handled {}; lost in NATS {lost}; server slow-consumer reports: {}; {}{} |",
        s.offered,
        s.published,
        s.received,
        s.delivered,
        s.refused,
        s.handled,
        s.server_reports.len(),
        ms(s.elapsed),
        match s.back {
            Some(true) => "; receiving again afterwards",
            Some(false) => "; NOT receiving again afterwards",
            None => "",
        },
    );
}

impl Figures {
    /// A Markdown table of the figures.
    pub fn table(&self, s: &Settings) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "| scenario | figure |\n|---|---|");
        let failed: Vec<String> = self
            .failed
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        let _ = writeln!(
            out,
            "| stream: {} requests (timeout {}), {} kills + restarts {} later | {} replied; failed: {}; hung: {}; wrong replies: {}; slowest reply {}; latest resolution {} past the timeout |",
            s.requests,
            ms(s.timeout),
            s.restarts,
            ms(s.down),
            self.replied,
            if failed.is_empty() {
                "none".to_owned()
            } else {
                failed.join(", ")
            },
            self.hung,
            self.wrong_replies,
            ms(self.slowest_success),
            ms(self.max_lateness),
        );
        for (i, r) in self.restarts.iter().enumerate() {
            let _ = writeln!(
                out,
                "| restart {} | {} failed; server up in {}; first reply {} after the restart |",
                i + 1,
                r.failures,
                ms(r.server_start),
                r.recovery.map_or("never".to_owned(), ms),
            );
        }
        let _ = writeln!(
            out,
            "| outage of {} | {} requests failed during it; first reply {} after the restart; next {} requests: {} failed; publishes after it: {}/{} received |",
            ms(self.outage),
            self.outage_failures,
            self.outage_recovery.map_or("never".to_owned(), ms),
            self.after_outage_ok + self.after_outage_failed,
            self.after_outage_failed,
            self.publishes_after_outage.1,
            self.publishes_after_outage.0,
        );
        slow_row(&mut out, "slow handler (1 ms/message)", &self.slow);
        if let Some(b) = &self.blocked {
            slow_row(
                &mut out,
                &format!(
                    "blocked node (runtime blocked {} by a handler)",
                    ms(s.block)
                ),
                b,
            );
        }
        let _ = writeln!(out, "| panics | {} |", self.panics);
        out
    }
}
