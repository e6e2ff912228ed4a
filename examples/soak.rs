//! Load and fault scenarios on the in-process bus at full size, each
//! bounded and self-stopping, with the figures RELIABILITY.md reports.
//!
//! ```text
//! cargo run --release --example soak                 # full size (~10 s)
//! cargo run --release --example soak -- --scale 0.1  # a tenth of each count
//! ```

#[path = "../tests/support/soak.rs"]
mod soak;

use std::time::Instant;

const USAGE: &str = "\
usage: soak [--scale F] [--messages N] [--paused N] [--ordered N] [--panics N] [--churn N]

  --scale F      multiplies every count below (default 1.0)
  --messages N   mixed send/publish/request messages, 8 producers, 4 consumers (1000000)
  --paused N     sends offered to a paused consumer with the default queue (1000000)
  --ordered N    sends from one sender to one consumer, checked in order (100000)
  --panics N     requests to a handler that panics on every 10th (1000), then N more
  --churn N      publishes while consumers register and unregister (200000)";

struct Counts {
    messages: u64,
    paused: u64,
    ordered: u64,
    panics: u64,
    churn: u64,
}

fn parse() -> Result<Counts, String> {
    let mut c = Counts {
        messages: 1_000_000,
        paused: 1_000_000,
        ordered: 100_000,
        panics: 1_000,
        churn: 200_000,
    };
    let mut scale = 1.0f64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "-h" || a == "--help" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let v = args.next().ok_or_else(|| format!("{a} needs a value"))?;
        let n = || v.parse::<u64>().map_err(|e| format!("{a}: {e}"));
        match a.as_str() {
            "--scale" => scale = v.parse().map_err(|e| format!("--scale: {e}"))?,
            "--messages" => c.messages = n()?,
            "--paused" => c.paused = n()?,
            "--ordered" => c.ordered = n()?,
            "--panics" => c.panics = n()?,
            "--churn" => c.churn = n()?,
            _ => return Err(format!("unknown argument `{a}`")),
        }
    }
    if !(scale > 0.0 && scale.is_finite()) {
        return Err("--scale must be a positive number".into());
    }
    let s = |n: u64| ((n as f64 * scale) as u64).max(10);
    Ok(Counts {
        messages: s(c.messages),
        paused: s(c.paused),
        ordered: s(c.ordered),
        panics: s(c.panics),
        churn: s(c.churn),
    })
}

/// (current RSS, peak RSS) in KiB, from /proc (0 where unavailable).
fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn main() {
    let c = match parse() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("soak: {e}\n\n{USAGE}");
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("runtime");
    let mut failed = false;
    let mut step = |name: &str, f: &mut dyn FnMut() -> Result<String, String>| {
        let start = Instant::now();
        let (rss0, _) = rss_kib();
        match f() {
            Ok(figures) => {
                let (rss1, peak) = rss_kib();
                println!(
                    "ok    {name:<10} {:>7.2} s  {figures}; RSS {rss0} -> {rss1} KiB (peak {peak} KiB)",
                    start.elapsed().as_secs_f64()
                );
            }
            Err(e) => {
                failed = true;
                println!("FAIL  {name:<10} {e}");
            }
        }
    };
    step("mixed", &mut || {
        let r = rt.block_on(soak::mixed(c.messages, 8, 4))?;
        Ok(format!(
            "{} messages: sends {} ok / {} refused, publishes {} deliveries / {} refused, requests {} replied / {} refused; received {}, lost 0, duplicated 0",
            r.messages,
            r.sends_ok,
            r.sends_refused,
            r.publish_deliveries,
            r.publish_refusals,
            r.requests_replied,
            r.requests_refused,
            r.received
        ))
    });
    step("ordered", &mut || {
        let retries = rt.block_on(soak::ordered(c.ordered))?;
        Ok(format!(
            "{} messages in order ({retries} retries after QueueFull)",
            c.ordered
        ))
    });
    step("paused", &mut || {
        let (accepted, refused) = rt.block_on(soak::paused(c.paused))?;
        Ok(format!(
            "{} offered: {accepted} queued, {refused} refused and counted",
            c.paused
        ))
    });
    step("panics", &mut || {
        let failures = rt.block_on(soak::panicking(c.panics, c.panics))?;
        Ok(format!(
            "{} requests: {failures} recipient failures within the 100 ms timeout, then {} more all answered",
            c.panics, c.panics
        ))
    });
    step("churn", &mut || {
        let cycles = rt.block_on(soak::churn(c.churn))?;
        Ok(format!(
            "{} publishes, {cycles} consumers came and went; none served after unregister, none lost",
            c.churn
        ))
    });
    if failed {
        std::process::exit(1);
    }
}
