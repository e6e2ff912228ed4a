//! The bus's metrics as Prometheus text: a bus with metrics on, the
//! `metrics-exporter-prometheus` recorder serving `/metrics` over HTTP, and a
//! known amount of traffic, so every number on the page can be checked.
//!
//! ```text
//! cargo run -p codecbus-metrics-examples --example prometheus
//! curl -s http://127.0.0.1:9464/metrics | grep codecbus_eventbus
//! ```
//!
//! It sends, publishes and requests once, prints
//! `serving metrics on http://127.0.0.1:9464/metrics` and then serves until
//! killed (Ctrl-C), or for `--seconds S`. What to look for, with the
//! default counts:
//!
//! - `codecbus_eventbus_sent_total{address="orders"} 20` and
//!   `codecbus_eventbus_delivered_total{address="orders"} 20`: 20 sends to one
//!   consumer;
//! - `codecbus_eventbus_published_total{address="prices"} 5` and
//!   `codecbus_eventbus_delivered_total{address="prices"} 10`: 5 publishes
//!   reach both consumers;
//! - `codecbus_eventbus_handlers{address="prices"} 2`;
//! - `codecbus_eventbus_request_time_seconds_count{address="quotes"} 10` and
//!   its quantiles: the round trips of 10 answered requests;
//! - `codecbus_eventbus_reply_failures_total{address="checks",failure="RECIPIENT_FAILURE"} 3`:
//!   3 requests the handler refused with `fail`;
//! - `codecbus_eventbus_reply_failures_total{address="nowhere",failure="NO_HANDLERS"} 2`:
//!   2 requests to an address without consumers;
//! - `codecbus_eventbus_processing_time_seconds{address="quotes",...}`: how long
//!   the handlers ran.
//!
//! Options: `--listen HOST:PORT` (default `127.0.0.1:9464`), `--orders N`
//! (sends, default 20), `--prices N` (publishes, default 5), `--quotes N`
//! (answered requests, default 10), `--failures N` (requests refused by the
//! handler, default 3), `--unrouted N` (requests to an address without
//! consumers, default 2), `--seconds S` (serve for S seconds, then exit;
//! default: until Ctrl-C).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use codecbus::bus::{EventBus, Message, MessageConsumer, MetricsOptions, RequestErrorKind};
use metrics_exporter_prometheus::PrometheusBuilder;
use tokio::sync::mpsc;

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

/// What the command line asked for.
struct Args {
    listen: SocketAddr,
    orders: u32,
    prices: u32,
    quotes: u32,
    failures: u32,
    unrouted: u32,
    seconds: Option<u64>,
}

const USAGE: &str = "usage: prometheus [--listen HOST:PORT] [--orders N] [--prices N] \
                     [--quotes N] [--failures N] [--unrouted N] [--seconds S]";

fn parse() -> Result<Args, String> {
    fn value<T: std::str::FromStr>(flag: &str, value: Option<String>) -> Result<T, String> {
        let value = value.ok_or_else(|| format!("{flag} needs a value"))?;
        value
            .parse()
            .map_err(|_| format!("{flag}: cannot read {value:?}"))
    }
    let mut args = Args {
        listen: SocketAddr::from(([127, 0, 0, 1], 9464)),
        orders: 20,
        prices: 5,
        quotes: 10,
        failures: 3,
        unrouted: 2,
        seconds: None,
    };
    let mut argv = std::env::args().skip(1);
    while let Some(flag) = argv.next() {
        match flag.as_str() {
            "--listen" => args.listen = value(&flag, argv.next())?,
            "--orders" => args.orders = value(&flag, argv.next())?,
            "--prices" => args.prices = value(&flag, argv.next())?,
            "--quotes" => args.quotes = value(&flag, argv.next())?,
            "--failures" => args.failures = value(&flag, argv.next())?,
            "--unrouted" => args.unrouted = value(&flag, argv.next())?,
            "--seconds" => args.seconds = Some(value(&flag, argv.next())?),
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown option {other:?}\n{USAGE}")),
        }
    }
    Ok(args)
}

/// The traffic: every send and publish handled, every request answered or
/// failed, before this returns. The consumers it returns stay registered
/// while they are kept (the handler gauges show them).
async fn drive(bus: &EventBus, args: &Args) -> Result<Vec<MessageConsumer>, String> {
    // Each handler of a send or publish reports here, so the counts are
    // final (nothing pending) when the traffic is done.
    let (handled_tx, mut handled) = mpsc::unbounded_channel::<()>();

    let tx = handled_tx.clone();
    let orders = bus.consumer(ORDERS, move |_m: Message<u32>| {
        let tx = tx.clone();
        async move {
            let _ = tx.send(());
        }
    });
    let mut consumers = vec![orders];
    for _ in 0..2 {
        let tx = handled_tx.clone();
        consumers.push(bus.consumer(PRICES, move |_m: Message<u32>| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(());
            }
        }));
    }
    consumers.push(bus.consumer(QUOTES, |m: Message<u32>| async move {
        let _ = m.reply(u64::from(*m.body()) * 100);
    }));
    consumers.push(bus.consumer(CHECKS, |m: Message<u32>| async move {
        let _ = m.fail(422, format!("check {} refused", m.body()));
    }));

    for n in 0..args.orders {
        bus.send(ORDERS, n)
            .await
            .map_err(|e| format!("send to {ORDERS}: {e}"))?;
    }
    for n in 0..args.prices {
        bus.publish(PRICES, n)
            .await
            .map_err(|e| format!("publish to {PRICES}: {e}"))?;
    }
    for n in 0..args.quotes {
        let quote: Message<u64> = bus
            .request(QUOTES, n)
            .await
            .map_err(|e| format!("request to {QUOTES}: {e}"))?;
        if *quote.body() != u64::from(n) * 100 {
            return Err(format!("unexpected quote {} for {n}", quote.body()));
        }
    }
    for n in 0..args.failures {
        match bus.request::<u64>(CHECKS, n).await {
            Err(e) if e.kind() == RequestErrorKind::RecipientFailure => {}
            other => return Err(format!("expected a recipient failure, got {other:?}")),
        }
    }
    for n in 0..args.unrouted {
        match bus.request::<u64>(NOWHERE, n).await {
            Err(e) if e.kind() == RequestErrorKind::NoHandlers => {}
            other => return Err(format!("expected no handlers, got {other:?}")),
        }
    }

    let expected = u64::from(args.orders) + 2 * u64::from(args.prices);
    for _ in 0..expected {
        tokio::time::timeout(Duration::from_secs(10), handled.recv())
            .await
            .map_err(|_| "the handlers did not finish within 10 s".to_owned())?
            .ok_or("the handlers stopped")?;
    }
    Ok(consumers)
}

async fn run(args: Args) -> Result<(), String> {
    // The recorder first: the bus reports to whichever recorder is
    // installed when it reports.
    PrometheusBuilder::new()
        .with_http_listener(args.listen)
        .install()
        .map_err(|e| format!("cannot serve metrics on {}: {e}", args.listen))?;
    let bus = EventBus::builder()
        .default_timeout(Duration::from_secs(5))
        .metrics(MetricsOptions::new())
        .build()
        .map_err(|e| format!("cannot build the bus: {e}"))?;

    let consumers = drive(&bus, &args).await?;
    println!("serving metrics on http://{}/metrics", args.listen);

    match args.seconds {
        Some(seconds) => tokio::time::sleep(Duration::from_secs(seconds)).await,
        None => tokio::signal::ctrl_c()
            .await
            .map_err(|e| format!("waiting for Ctrl-C: {e}"))?,
    }
    drop(consumers);
    bus.close().await;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("prometheus: {e}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("prometheus: {e}");
            ExitCode::FAILURE
        }
    }
}
