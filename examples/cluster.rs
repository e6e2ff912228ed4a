//! Two processes, one bus: a pricing service and a client exchanging
//! requests through a NATS server. Needs a running `nats-server`.
//!
//! ```text
//! nats-server -a 127.0.0.1 -p 4222                          # terminal 1
//! cargo run --example cluster -- --serve                     # terminal 2
//! cargo run --example cluster -- --ask --count 5             # terminal 3
//! ```
//!
//! Options: `--url nats://HOST:PORT` (default `nats://127.0.0.1:4222`),
//! `--count N` (`--ask`: requests to make, default 5; `--serve`: exit after
//! answering N pricing requests, default: serve until Ctrl-C).
//!
//! The request and reply types carry explicit codec names, so nodes built
//! from different binaries agree on them.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use codecbus::bus::{EventBus, Message, NatsOptions, RequestErrorKind};
use codecbus::json::JsObj;
use codecbus::{MessageCodec, jsobj};

/// What the client asks.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "cluster.price-request")]
struct PriceRequest {
    sku: String,
    qty: u32,
}

/// What the service answers; immutable, so it is shared, never copied, on
/// local delivery.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "cluster.price-quote", immutable)]
struct PriceQuote {
    sku: String,
    qty: u32,
    unit_cents: i64,
    total_cents: i64,
    served_by: u32,
}

const PRICING: &str = "cluster.pricing";
const ECHO: &str = "cluster.echo";

enum Role {
    Serve,
    Ask,
}

struct Args {
    role: Role,
    url: String,
    count: Option<u64>,
}

fn usage() -> ExitCode {
    eprintln!("usage: cluster (--serve | --ask) [--url nats://HOST:PORT] [--count N]");
    ExitCode::from(2)
}

fn parse() -> Option<Args> {
    let mut role = None;
    let mut url = "nats://127.0.0.1:4222".to_owned();
    let mut count = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--serve" => role = Some(Role::Serve),
            "--ask" => role = Some(Role::Ask),
            "--url" => url = args.next()?,
            "--count" => count = Some(args.next()?.parse().ok()?),
            _ => return None,
        }
    }
    Some(Args {
        role: role?,
        url,
        count,
    })
}

fn unit_price(sku: &str) -> i64 {
    // A stable price per SKU.
    sku.bytes().map(i64::from).sum::<i64>() % 900 + 100
}

async fn connect(url: &str, name: &str) -> Result<EventBus, String> {
    EventBus::builder()
        .default_timeout(Duration::from_secs(5))
        .nats(
            NatsOptions::new(url)
                .connection_name(name)
                .connection_timeout(Duration::from_secs(3))
                .max_reconnect_delay(Duration::from_millis(500)),
        )
        .connect()
        .await
        .map_err(|e| e.to_string())
}

async fn serve(url: &str, count: Option<u64>) -> Result<(), String> {
    let bus = connect(url, "cluster-serve").await?;
    let pid = std::process::id();
    let answered = Arc::new(AtomicU64::new(0));
    let (done_tx, mut done) = tokio::sync::mpsc::unbounded_channel::<()>();
    let counter = Arc::clone(&answered);
    let _pricing = bus.consumer(PRICING, move |m: Message<PriceRequest>| {
        let counter = Arc::clone(&counter);
        let done_tx = done_tx.clone();
        async move {
            let PriceRequest { sku, qty } = m.body().clone();
            if qty == 0 {
                return m.fail(400, format!("quantity of {sku} must be at least 1"));
            }
            let unit = unit_price(&sku);
            let replied = m.reply(PriceQuote {
                sku,
                qty,
                unit_cents: unit,
                total_cents: unit * i64::from(qty),
                served_by: pid,
            });
            let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
            if count == Some(n) {
                let _ = done_tx.send(());
            }
            // A reply nobody took (the requester gave up) is logged by the bus.
            replied
        }
    });
    let _echo = bus.consumer(ECHO, move |m: Message<JsObj>| async move {
        m.reply(m.body().set("served_by", u64::from(pid)))
    });
    bus.flush().await.map_err(|e| e.to_string())?;
    println!("serving {PRICING} and {ECHO} on {url} (pid {pid})");
    println!("ready");
    match count {
        Some(_) => {
            done.recv().await;
        }
        None => {
            tokio::signal::ctrl_c().await.map_err(|e| e.to_string())?;
        }
    }
    bus.close().await;
    println!("quoted {} requests; bye", answered.load(Ordering::SeqCst));
    Ok(())
}

async fn ask(url: &str, count: u64) -> Result<(), String> {
    let bus = connect(url, "cluster-ask").await?;
    let pid = std::process::id();

    // A refused request first; the service may still be starting, so
    // "no handlers" is retried for a while.
    let deadline = Instant::now() + Duration::from_secs(10);
    let refused = loop {
        let empty = PriceRequest {
            sku: "sku-0".into(),
            qty: 0,
        };
        match bus.request::<PriceQuote>(PRICING, empty).await {
            Err(e) if e.kind() == RequestErrorKind::NoHandlers && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => break other,
        }
    };
    match refused {
        Err(e) if e.kind() == RequestErrorKind::RecipientFailure => {
            println!("refused as expected: {e} (code {})", e.failure_code());
        }
        other => return Err(format!("expected a recipient failure, got {other:?}")),
    }

    let echo: Message<JsObj> = bus
        .request(ECHO, jsobj! { "hello": "from ask", "pid": u64::from(pid) })
        .await
        .map_err(|e| format!("echo failed: {e}"))?;
    println!("echo: {}", echo.body());

    let started = Instant::now();
    for n in 0..count {
        let request = PriceRequest {
            sku: format!("sku-{}", n % 7),
            qty: u32::try_from(n % 5 + 1).unwrap_or(1),
        };
        let quote: Message<PriceQuote> = bus
            .request(PRICING, request)
            .await
            .map_err(|e| format!("request {n} failed: {e}"))?;
        let q = quote.body();
        println!(
            "quote {n}: {} x {} = {} cents (served by pid {}, asked by pid {pid})",
            q.qty, q.sku, q.total_cents, q.served_by
        );
        if q.served_by == pid || q.total_cents != q.unit_cents * i64::from(q.qty) {
            return Err(format!("unexpected quote {q:?}"));
        }
    }
    let elapsed = started.elapsed();
    println!(
        "{count} requests in {elapsed:?} ({:.0} µs per round trip)",
        elapsed.as_secs_f64() * 1e6 / count.max(1) as f64
    );
    bus.close().await;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let Some(args) = parse() else {
        return usage();
    };
    let result = match args.role {
        Role::Serve => serve(&args.url, args.count).await,
        Role::Ask => ask(&args.url, args.count.unwrap_or(5)).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cluster: {e}");
            ExitCode::FAILURE
        }
    }
}
