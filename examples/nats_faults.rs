//! The bus across NATS under faults, at full size: a `nats-server` on a
//! free loopback port killed (SIGKILL) and restarted during a stream of
//! requests between two bus nodes, a long outage, and slow consumers.
//! Bounded and self-stopping; prints a figures table and exits non-zero
//! when an invariant is broken. RELIABILITY.md reports its figures.
//!
//! ```text
//! cargo run --release --example nats_faults                 # full size (~50 s)
//! cargo run --release --example nats_faults -- --outage 5   # a shorter outage
//! ```
//!
//! Needs `nats-server` on `PATH` (or `CODECBUS_NATS_SERVER=/path`).

#[path = "../tests/support/nats_faults.rs"]
mod faults;
#[path = "../bus/tests/common/nats.rs"]
mod harness;

use std::time::Duration;

const USAGE: &str = "\
usage: nats_faults [--requests N] [--restarts N] [--down MS] [--outage S] [--timeout MS]
                   [--backoff MS] [--reconnect-delay MS] [--slow N] [--blocked N]

  --requests N          requests in the stream the restarts hit (4000)
  --restarts N          server kills (SIGKILL) + restarts during the stream (5)
  --down MS             how long the server stays down at each restart (1000)
  --outage S            the long outage after the stream, in seconds (30)
  --timeout MS          each request's timeout (500)
  --backoff MS          the requester's pause after a request failed at once (200)
  --reconnect-delay MS  NatsOptions::max_reconnect_delay of both nodes (200)
  --slow N              publishes to a consumer that handles one per ms (20000)
  --blocked N           64 KiB publishes to a node whose handler blocks its runtime 3 s (2000; 0 skips)

Invariants (exit 1 when one breaks): no panic; every request resolves within
its timeout (+250 ms); at most 10 failures per restart; a reply within 1 s of
each restart and within 5 s of the end of the outage; the next 100 requests and
10 publishes after the outage all succeed; the consumers' books balance.";

fn parse() -> Result<faults::Settings, String> {
    let mut s = faults::Settings::full();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "-h" || a == "--help" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let v = args.next().ok_or_else(|| format!("{a} needs a value"))?;
        let n = || v.parse::<u64>().map_err(|e| format!("{a}: {e}"));
        let ms = || n().map(Duration::from_millis);
        match a.as_str() {
            "--requests" => s.requests = n()?,
            "--restarts" => s.restarts = u32::try_from(n()?).map_err(|e| format!("{a}: {e}"))?,
            "--down" => s.down = ms()?,
            "--outage" => s.outage = Duration::from_secs(n()?),
            "--timeout" => s.timeout = ms()?,
            "--backoff" => s.backoff = ms()?,
            "--reconnect-delay" => s.reconnect_delay = ms()?,
            "--slow" => s.slow_messages = n()?,
            "--blocked" => s.blocked_messages = n()?,
            _ => return Err(format!("unknown argument `{a}`")),
        }
    }
    if s.requests < u64::from(s.restarts) + 1 {
        return Err("--requests must exceed --restarts".into());
    }
    Ok(s)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let s = match parse() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}\n\n{USAGE}");
            std::process::exit(2);
        }
    };
    faults::count_panics();
    let started = std::time::Instant::now();
    let figures = match faults::run("nats_faults", &s).await {
        Ok(Some(f)) => f,
        Ok(None) => {
            eprintln!("nats_faults needs nats-server (see above)");
            std::process::exit(2);
        }
        Err(e) => {
            eprintln!("nats_faults could not run: {e}");
            std::process::exit(2);
        }
    };
    println!("{}", figures.table(&s));
    if let Some(b) = &figures.blocked {
        for line in b.server_reports.iter().take(3) {
            println!("server: {line}");
        }
    }
    for line in figures.slow.server_reports.iter().take(3) {
        println!("server: {line}");
    }
    println!("total {:.1} s", started.elapsed().as_secs_f64());
    if figures.broken.is_empty() {
        println!("all invariants held");
    } else {
        for b in &figures.broken {
            eprintln!("BROKEN: {b}");
        }
        std::process::exit(1);
    }
}
