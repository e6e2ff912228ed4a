//! A live view of a bus's metrics in the browser: a bus with metrics on,
//! the Prometheus recorder of `metrics-exporter-prometheus`, and a small
//! HTTP server with a page that polls `/metrics` every second and shows,
//! per address, the message rate, pending queue, failures and request round
//! trip (p50/p99), with charts of the last minutes.
//!
//! ```text
//! cargo run -p codecbus-metrics-examples --example dashboard
//! # open http://127.0.0.1:3000/
//! ```
//!
//! It generates traffic until killed (Ctrl-C): sends to `orders`, publishes
//! to `prices` (two consumers), requests to `quotes` (answered after a
//! varying delay, so the percentiles differ), requests to `checks` (always
//! refused: `RECIPIENT_FAILURE`), now and then a request to `nowhere` (no
//! consumers: `NO_HANDLERS`), and sends to `audit`, whose slow consumer lets
//! a queue build up and drain.
//!
//! Options: `--listen HOST:PORT` (default `127.0.0.1:3000`; port 0 picks a
//! free one, and the line printed says which), `--rate N` (sends to `orders`
//! per second, default 40; the other addresses get a share of it),
//! `--seconds S` (exit after S seconds; default: until Ctrl-C).
//!
//! `--burst` sends a known, finite burst instead and then stays idle, so the
//! page shows exact numbers: `--orders N` sends (default 30), `--prices N`
//! publishes (default 8), `--quotes N` answered requests (default 12),
//! `--failures N` refused requests (default 4), `--unrouted N` requests
//! without consumers (default 3) and `--held N` messages left pending in
//! the queue of a paused consumer at `audit` (default 5).
//!
//! The page, its style and script and the charting library (uPlot, in
//! `vendor/uplot` with its licence) are built into the binary; the page loads
//! nothing from elsewhere.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use codecbus::bus::{EventBus, Message, MessageConsumer, MetricsOptions, RequestErrorKind};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tokio::sync::mpsc;

const INDEX: &str = include_str!("index.html");
const SCRIPT: &str = include_str!("dashboard.js");
const STYLE: &str = include_str!("dashboard.css");
const UPLOT_JS: &str = include_str!("vendor/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("vendor/uplot/uPlot.min.css");

/// Sends here; one consumer.
const ORDERS: &str = "orders";
/// Publishes here; two consumers.
const PRICES: &str = "prices";
/// Requests here; answered.
const QUOTES: &str = "quotes";
/// Requests here; always refused by the handler (`RECIPIENT_FAILURE`).
const CHECKS: &str = "checks";
/// Requests here; nobody listens (`NO_HANDLERS`).
const NOWHERE: &str = "nowhere";
/// Sends here; a slow (or, in a burst, paused) consumer, so messages wait.
const AUDIT: &str = "audit";

/// The finite traffic of `--burst`.
#[derive(Clone, Copy)]
struct Burst {
    orders: u32,
    prices: u32,
    quotes: u32,
    failures: u32,
    unrouted: u32,
    held: u32,
}

/// What the command line asked for.
struct Args {
    listen: SocketAddr,
    rate: u32,
    seconds: Option<u64>,
    burst: Option<Burst>,
}

const USAGE: &str = "usage: dashboard [--listen HOST:PORT] [--rate N] [--seconds S] \
                     [--burst [--orders N] [--prices N] [--quotes N] [--failures N] \
                     [--unrouted N] [--held N]]";

fn parse() -> Result<Args, String> {
    fn value<T: std::str::FromStr>(flag: &str, value: Option<String>) -> Result<T, String> {
        let value = value.ok_or_else(|| format!("{flag} needs a value"))?;
        value
            .parse()
            .map_err(|_| format!("{flag}: cannot read {value:?}"))
    }
    let mut listen = SocketAddr::from(([127, 0, 0, 1], 3000));
    let mut rate = 40;
    let mut seconds = None;
    let mut burst = false;
    let mut counts = Burst {
        orders: 30,
        prices: 8,
        quotes: 12,
        failures: 4,
        unrouted: 3,
        held: 5,
    };
    let mut burst_flags = false;
    let mut argv = std::env::args().skip(1);
    while let Some(flag) = argv.next() {
        let count = match flag.as_str() {
            "--listen" => {
                listen = value(&flag, argv.next())?;
                continue;
            }
            "--rate" => {
                rate = value(&flag, argv.next())?;
                continue;
            }
            "--seconds" => {
                seconds = Some(value(&flag, argv.next())?);
                continue;
            }
            "--burst" => {
                burst = true;
                continue;
            }
            "--orders" => &mut counts.orders,
            "--prices" => &mut counts.prices,
            "--quotes" => &mut counts.quotes,
            "--failures" => &mut counts.failures,
            "--unrouted" => &mut counts.unrouted,
            "--held" => &mut counts.held,
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown option {other:?}\n{USAGE}")),
        };
        *count = value(&flag, argv.next())?;
        burst_flags = true;
    }
    if burst_flags && !burst {
        return Err(format!("the burst counts need --burst\n{USAGE}"));
    }
    if rate == 0 {
        return Err("--rate must be at least 1".to_owned());
    }
    Ok(Args {
        listen,
        rate,
        seconds,
        burst: burst.then_some(counts),
    })
}

/// Handlers that report each message they handled on a channel.
fn counting_consumer(
    bus: &EventBus,
    address: &str,
    handled: &mpsc::UnboundedSender<()>,
) -> MessageConsumer {
    let handled = handled.clone();
    bus.consumer(address, move |_m: Message<u32>| {
        let handled = handled.clone();
        async move {
            let _ = handled.send(());
        }
    })
}

/// The answering consumers: `quotes` replies, `checks` refuses.
fn answering_consumers(bus: &EventBus, delay: bool) -> Vec<MessageConsumer> {
    vec![
        bus.consumer(QUOTES, move |m: Message<u32>| async move {
            if delay {
                // 1 to 12 ms, varying with the request: a spread to show.
                let ms = u64::from(*m.body() % 12) + 1;
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
            let _ = m.reply(u64::from(*m.body()) * 100);
        }),
        bus.consumer(CHECKS, |m: Message<u32>| async move {
            let _ = m.fail(422, format!("check {} refused", m.body()));
        }),
    ]
}

async fn expect_failure(bus: &EventBus, address: &str, n: u32, kind: RequestErrorKind) {
    match bus.request::<u64>(address, n).await {
        Err(e) if e.kind() == kind => {}
        other => eprintln!("dashboard: {address}: expected {kind:?}, got {other:?}"),
    }
}

/// Sends the burst and waits until every message is handled (except the
/// held ones); returns the consumers, which stay registered while kept.
async fn burst(bus: &EventBus, counts: Burst) -> Result<Vec<MessageConsumer>, String> {
    let (handled_tx, mut handled) = mpsc::unbounded_channel();
    let mut consumers = vec![counting_consumer(bus, ORDERS, &handled_tx)];
    consumers.push(counting_consumer(bus, PRICES, &handled_tx));
    consumers.push(counting_consumer(bus, PRICES, &handled_tx));
    consumers.extend(answering_consumers(bus, false));
    let audit = counting_consumer(bus, AUDIT, &handled_tx);
    audit.pause();
    consumers.push(audit);

    for n in 0..counts.orders {
        bus.send(ORDERS, n).await.map_err(|e| e.to_string())?;
    }
    for n in 0..counts.prices {
        bus.publish(PRICES, n).await.map_err(|e| e.to_string())?;
    }
    for n in 0..counts.quotes {
        bus.request::<u64>(QUOTES, n)
            .await
            .map_err(|e| e.to_string())?;
    }
    for n in 0..counts.failures {
        expect_failure(bus, CHECKS, n, RequestErrorKind::RecipientFailure).await;
    }
    for n in 0..counts.unrouted {
        expect_failure(bus, NOWHERE, n, RequestErrorKind::NoHandlers).await;
    }
    for n in 0..counts.held {
        bus.send(AUDIT, n).await.map_err(|e| e.to_string())?;
    }
    let expected = u64::from(counts.orders) + 2 * u64::from(counts.prices);
    for _ in 0..expected {
        tokio::time::timeout(Duration::from_secs(10), handled.recv())
            .await
            .map_err(|_| "the burst's handlers did not finish within 10 s".to_owned())?
            .ok_or("the burst's handlers stopped")?;
    }
    Ok(consumers)
}

/// Traffic until the process ends, at about `rate` sends to `orders` a
/// second; the other addresses get a share of it.
fn ongoing(bus: &EventBus, rate: u32) -> Vec<MessageConsumer> {
    let (handled_tx, mut handled) = mpsc::unbounded_channel();
    let mut consumers = vec![counting_consumer(bus, ORDERS, &handled_tx)];
    consumers.push(counting_consumer(bus, PRICES, &handled_tx));
    consumers.push(counting_consumer(bus, PRICES, &handled_tx));
    consumers.extend(answering_consumers(bus, true));
    // A slow consumer: 5 messages a second at most.
    consumers.push(bus.consumer(AUDIT, |_m: Message<u32>| async {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }));
    tokio::spawn(async move { while handled.recv().await.is_some() {} });

    // Ten ticks a second.
    let per_tick = f64::from(rate) / 10.0;
    // Numbers the requests, so each asks its own delay (see `quotes`).
    let asked = Arc::new(AtomicU64::new(0));
    let bus = bus.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        let mut owed = 0.0;
        for t in 0u32.. {
            tick.tick().await;
            owed += per_tick;
            let n = owed.floor();
            owed -= n;
            // n is small and non-negative.
            let n = n as u32;
            for i in 0..n {
                let _ = bus.send(ORDERS, i).await;
            }
            if t % 2 == 0 {
                let _ = bus.publish(PRICES, t).await;
            }
            // Requests run side by side, so a slow one does not slow the ticks.
            for _ in 0..n.div_ceil(2) {
                let bus = bus.clone();
                // Below 1000, so it fits.
                let k = (asked.fetch_add(1, Ordering::Relaxed) % 1000) as u32;
                tokio::spawn(async move {
                    let _ = bus.request::<u64>(QUOTES, k).await;
                });
            }
            if t % 5 == 0 {
                expect_failure(&bus, CHECKS, t, RequestErrorKind::RecipientFailure).await;
            }
            if t % 30 == 0 {
                expect_failure(&bus, NOWHERE, t, RequestErrorKind::NoHandlers).await;
            }
            // Waves of audit messages: 10 a second for 6 s, then none for
            // 6 s, so its queue (drained at 5 a second) grows and drains.
            if (t / 60) % 2 == 0 {
                let _ = bus.send(AUDIT, t).await;
            }
        }
    });
    consumers
}

async fn metrics_text(handle: PrometheusHandle) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        handle.render(),
    )
}

fn router(handle: PrometheusHandle) -> Router {
    fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse + Clone {
        ([(header::CONTENT_TYPE, content_type)], body)
    }
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX) }),
        )
        .route(
            "/assets/dashboard.js",
            get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }),
        )
        .route(
            "/assets/dashboard.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE) }),
        )
        .route(
            "/assets/uPlot.iife.min.js",
            get(|| async { asset("text/javascript; charset=utf-8", UPLOT_JS) }),
        )
        .route(
            "/assets/uPlot.min.css",
            get(|| async { asset("text/css; charset=utf-8", UPLOT_CSS) }),
        )
        .route("/metrics", get(move || metrics_text(handle.clone())))
}

async fn run(args: Args) -> Result<(), String> {
    // The recorder first: the bus reports to whichever recorder is
    // installed when it reports.
    let handle = PrometheusBuilder::new()
        .install_recorder()
        .map_err(|e| format!("cannot install the Prometheus recorder: {e}"))?;
    // The summaries' windows roll on upkeep; the exporter leaves it to us.
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        loop {
            tick.tick().await;
            upkeep.run_upkeep();
        }
    });

    let bus = EventBus::builder()
        .default_timeout(Duration::from_secs(5))
        .metrics(MetricsOptions::new())
        .build()
        .map_err(|e| format!("cannot build the bus: {e}"))?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot read the listening address: {e}"))?;

    let consumers = match args.burst {
        Some(counts) => burst(&bus, counts).await?,
        None => ongoing(&bus, args.rate),
    };
    println!("serving the dashboard on http://{local}/");

    let server = axum::serve(listener, router(handle));
    tokio::select! {
        served = server => served.map_err(|e| format!("serving: {e}"))?,
        () = stop(args.seconds) => {}
    }
    drop(consumers);
    bus.close().await;
    Ok(())
}

/// After `seconds`, or on Ctrl-C.
async fn stop(seconds: Option<u64>) {
    match seconds {
        Some(s) => tokio::time::sleep(Duration::from_secs(s)).await,
        None => {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("dashboard: {e}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dashboard: {e}");
            ExitCode::FAILURE
        }
    }
}
