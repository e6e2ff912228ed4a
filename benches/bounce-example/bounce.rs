//! The bounce: request/reply echo on the bus with JSON and derived payloads,
//! immutable (shared, zero-copy) against deep-copied, next to a bare tokio
//! channel round trip (the floor), a direct call of the echo handler (what
//! no bus can beat) and the request/reply of the actor libraries kameo,
//! ractor and actix, all carrying the same `Arc` body.
//!
//! ```text
//! cargo run --release --example bounce
//! cargo run --release --example bounce -- --duration 2000 --payloads obj,arr100
//! ```
//!
//! Prints a table (round trips per second, ns per round trip with the
//! quartiles of its slices, the ratios to the floor and to the direct call,
//! of copied to immutable, bytes allocated per delivery), the immutable bus
//! against each alternative, the MessagePack size of each payload, and
//! writes a bar chart as SVG.
//!
//! The example of the package `codecbus-bounce-example`, one of the
//! workspace's default members, so the command above works from the root.

#[path = "../support/mod.rs"]
mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use plotters::prelude::*;
use support::bounce::{IMPLS, case};
use support::payloads::PAYLOADS;

/// Counts the bytes allocated, to report what each delivery copies.
struct Counting;

static ALLOCATED: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const USAGE: &str = "\
usage: bounce [--duration MS] [--payloads LIST] [--impls LIST] [--svg PATH]

  --duration MS     measuring time per payload and implementation (default 700)
  --payloads LIST   comma-separated, from: obj,arr4,arr100,twitter (default all)
  --impls LIST      comma-separated, from: direct_call,raw_channel,kameo_ask,
                    ractor_call,actix_send,jsobj,derived_immutable,
                    serde_json_value,derived_copied (default all)
  --svg PATH        where to write the chart (default target/bounce.svg)
  -h, --help        this text";

struct Options {
    duration: Duration,
    payloads: Vec<&'static str>,
    impls: Vec<&'static str>,
    svg: PathBuf,
}

fn pick(list: &str, known: &[&'static str], what: &str) -> Result<Vec<&'static str>, String> {
    list.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            known
                .iter()
                .find(|k| **k == s)
                .copied()
                .ok_or_else(|| format!("unknown {what} `{s}`; known: {}", known.join(",")))
        })
        .collect()
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options {
        duration: Duration::from_millis(700),
        payloads: PAYLOADS.to_vec(),
        impls: IMPLS.to_vec(),
        // In the workspace's target folder.
        svg: Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .expect("the workspace root")
            .join("target/bounce.svg"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            "--duration" => {
                let ms: u64 = value("--duration")?
                    .parse()
                    .map_err(|e| format!("--duration: {e}"))?;
                if ms == 0 {
                    return Err("--duration must be at least 1 ms".into());
                }
                opts.duration = Duration::from_millis(ms);
            }
            "--payloads" => opts.payloads = pick(&value("--payloads")?, &PAYLOADS, "payload")?,
            "--impls" => opts.impls = pick(&value("--impls")?, &IMPLS, "implementation")?,
            "--svg" => opts.svg = PathBuf::from(value("--svg")?),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(opts)
}

struct Row {
    payload: &'static str,
    implementation: &'static str,
    per_sec: f64,
    ns: f64,
    /// The first and third quartiles of the slices' ns per round trip.
    ns_quartiles: (f64, f64),
    alloc_per_delivery: f64,
    encoded_len: Option<usize>,
}

/// Slices per case: implementations of one payload take turns, one slice
/// each, so a burst of noise on the machine hits all of them alike; the
/// median slice is reported.
const SLICES: u32 = 7;

/// A batch size for `c` that takes about 2 ms (also warms it up).
fn calibrate(rt: &tokio::runtime::Runtime, c: &support::bounce::Case) -> u64 {
    c.block_on(rt, async {
        let mut batch = 1u64;
        loop {
            let start = Instant::now();
            c.run(batch).await;
            if start.elapsed() > Duration::from_millis(2) || batch >= 1 << 20 {
                return batch;
            }
            batch *= 2;
        }
    })
}

/// Round trips per second over one slice of `duration`.
fn slice(
    rt: &tokio::runtime::Runtime,
    c: &support::bounce::Case,
    batch: u64,
    duration: Duration,
) -> f64 {
    c.block_on(rt, async {
        let (mut rounds, start) = (0u64, Instant::now());
        while start.elapsed() < duration {
            c.run(batch).await;
            rounds += batch;
        }
        rounds as f64 / start.elapsed().as_secs_f64()
    })
}

/// Bytes allocated per delivery (two deliveries per round trip).
fn allocation(rt: &tokio::runtime::Runtime, c: &support::bounce::Case, batch: u64) -> f64 {
    c.block_on(rt, async {
        let probe = batch.clamp(1, 200);
        let before = ALLOCATED.load(Ordering::Relaxed);
        c.run(probe).await;
        (ALLOCATED.load(Ordering::Relaxed) - before) as f64 / probe as f64 / 2.0
    })
}

fn main() {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("bounce: {e}\n\n{USAGE}");
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let _guard = rt.enter();

    let total = opts.payloads.len() * opts.impls.len();
    let mut rows = Vec::new();
    let started = Instant::now();
    println!(
        "bounce: sequential request/reply echo at address `bounce`, {} ms per case in {SLICES} interleaved slices (median), requester and consumer on one tokio thread (actix: on actix-rt's, a tokio current-thread runtime too)\n",
        opts.duration.as_millis()
    );
    let mut n = 0;
    for payload in &opts.payloads {
        let cases: Vec<_> = opts
            .impls
            .iter()
            .filter_map(|implementation| {
                let c = case(&rt, payload, implementation);
                if c.is_none() {
                    n += 1;
                    println!(
                        "[{n:>2}/{total}] {payload:<8} {implementation:<18} skipped (no derived struct for this payload)"
                    );
                }
                c
            })
            .collect();
        println!(
            "           {payload:<8} measuring {} implementations in {SLICES} interleaved slices ...",
            cases.len()
        );
        let batches: Vec<u64> = cases.iter().map(|c| calibrate(&rt, c)).collect();
        let mut rates = vec![Vec::new(); cases.len()];
        let per_slice = opts.duration / SLICES;
        for _ in 0..SLICES {
            for (k, c) in cases.iter().enumerate() {
                rates[k].push(slice(&rt, c, batches[k], per_slice));
            }
        }
        for ((c, mut r), batch) in cases.iter().zip(rates).zip(batches) {
            n += 1;
            r.sort_by(f64::total_cmp);
            let per_sec = r[r.len() / 2];
            // Rates sorted up: the slow quartile is the low rate's.
            let ns_quartiles = (1e9 / r[r.len() * 3 / 4], 1e9 / r[r.len() / 4]);
            println!(
                "[{n:>2}/{total}] {payload:<8} {:<18} {per_sec:>12.0} round trips/s",
                c.implementation
            );
            rows.push(Row {
                payload,
                implementation: c.implementation,
                per_sec,
                ns: 1e9 / per_sec,
                ns_quartiles,
                alloc_per_delivery: allocation(&rt, c, batch),
                encoded_len: c.encoded_len,
            });
        }
    }

    print_table(&rows);
    match chart(&rows, &opts.svg) {
        Ok(()) => println!("\nchart: {}", opts.svg.display()),
        Err(e) => eprintln!("\nchart not written: {e}"),
    }
    println!("total time {:.1} s", started.elapsed().as_secs_f64());
}

fn find<'a>(rows: &'a [Row], payload: &str, implementation: &str) -> Option<&'a Row> {
    rows.iter()
        .find(|r| r.payload == payload && r.implementation == implementation)
}

/// A ratio, with fewer decimals as it grows (`-` when there is none).
fn ratio(v: Option<f64>) -> String {
    match v {
        None => "-".to_string(),
        Some(v) if v < 10.0 => format!("{v:.2}x"),
        Some(v) if v < 100.0 => format!("{v:.1}x"),
        Some(v) => format!("{v:.0}x"),
    }
}

/// Nanoseconds, with a decimal below a microsecond.
fn nanos(v: f64) -> String {
    if v < 1000.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// The bus's implementations with immutable (shared) payloads.
const IMMUTABLE: [&str; 2] = ["jsobj", "derived_immutable"];

/// What the immutable bus is set against, after the table.
const ALTERNATIVES: [&str; 5] = [
    "raw_channel",
    "direct_call",
    "kameo_ask",
    "ractor_call",
    "actix_send",
];

fn print_table(rows: &[Row]) {
    println!(
        "\n{:<8} {:<18} {:>14} {:>10} {:>15} {:>9} {:>10} {:>11} {:>14}",
        "payload",
        "implementation",
        "round trips/s",
        "ns/round",
        "ns q1-q3",
        "vs floor",
        "vs direct",
        "copied/imm",
        "alloc B/deliv"
    );
    println!("{}", "-".repeat(118));
    for r in rows {
        let over = |other: &str| find(rows, r.payload, other).map(|o| r.ns / o.ns);
        let immutable = match r.implementation {
            "serde_json_value" => over("jsobj"),
            "derived_copied" => over("derived_immutable"),
            _ => None,
        };
        let (q1, q3) = r.ns_quartiles;
        println!(
            "{:<8} {:<18} {:>14.0} {:>10} {:>15} {:>9} {:>10} {:>11} {:>14.0}",
            r.payload,
            r.implementation,
            r.per_sec,
            nanos(r.ns),
            format!("{}-{}", nanos(q1), nanos(q3)),
            ratio(over("raw_channel")),
            ratio(over("direct_call")),
            ratio(immutable),
            r.alloc_per_delivery
        );
    }
    println!(
        "\n(ns/round: the median slice's; ns q1-q3: the quartiles of the {SLICES} slices; vs floor and vs direct:"
    );
    println!(
        " ns per round trip over the bare channel's (raw_channel) and over the direct call's (direct_call),"
    );
    println!(
        " same payload; copied/imm: deep-copied over immutable, same payload; alloc B/deliv: bytes allocated"
    );
    println!(" per delivery, two deliveries per round trip)");

    let against: Vec<&str> = ALTERNATIVES
        .iter()
        .copied()
        .filter(|a| rows.iter().any(|r| r.implementation == *a))
        .collect();
    let bus: Vec<&Row> = rows
        .iter()
        .filter(|r| IMMUTABLE.contains(&r.implementation))
        .collect();
    if !against.is_empty() && !bus.is_empty() {
        println!(
            "\nThe immutable bus against each alternative: its ns per round trip over theirs, same payload"
        );
        print!("{:<8} {:<18}", "payload", "bus");
        for a in &against {
            print!(" {:>13}", format!("vs {a}"));
        }
        println!();
        for r in bus {
            print!("{:<8} {:<18}", r.payload, r.implementation);
            for a in &against {
                print!(
                    " {:>13}",
                    ratio(find(rows, r.payload, a).map(|o| r.ns / o.ns))
                );
            }
            println!();
        }
    }

    let mut sizes: BTreeMap<(usize, &str), BTreeMap<&str, usize>> = BTreeMap::new();
    for r in rows {
        if let Some(len) = r.encoded_len {
            let order = PAYLOADS
                .iter()
                .position(|p| *p == r.payload)
                .unwrap_or(usize::MAX);
            sizes
                .entry((order, r.payload))
                .or_default()
                .insert(r.implementation, len);
        }
    }
    println!("\nMessagePack size of each payload (what a cluster delivery would send)");
    for ((_, payload), by_impl) in sizes {
        let list: Vec<String> = by_impl.iter().map(|(i, n)| format!("{i} {n} B")).collect();
        println!("  {payload:<8} {}", list.join(", "));
    }
}

fn chart(rows: &[Row], path: &PathBuf) -> Result<(), Box<dyn std::error::Error>> {
    if rows.is_empty() {
        return Err("nothing measured".into());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let payloads: Vec<&str> = PAYLOADS
        .iter()
        .copied()
        .filter(|p| rows.iter().any(|r| r.payload == *p))
        .collect();
    let impls: Vec<&str> = IMPLS
        .iter()
        .copied()
        .filter(|i| rows.iter().any(|r| r.implementation == *i))
        .collect();
    let slots = payloads.len() * (impls.len() + 1) + 7; // room for the legend
    let max = rows.iter().map(|r| r.per_sec).fold(1.0, f64::max) * 8.0;
    let min = rows
        .iter()
        .map(|r| r.per_sec)
        .fold(f64::MAX, f64::min)
        .max(1.0)
        / 2.0;

    let root = SVGBackend::new(path, (1400, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "codecbus bounce: round trips per second (log scale)",
            ("sans-serif", 22),
        )
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..slots as f64, (min..max).log_scale())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .y_desc("round trips / s")
        .draw()?;
    for (pi, payload) in payloads.iter().enumerate() {
        let base = (pi * (impls.len() + 1)) as f64;
        for (ii, implementation) in impls.iter().enumerate() {
            if let Some(r) = find(rows, payload, implementation) {
                let x = base + ii as f64 + 0.5;
                let color = color_of(implementation);
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x, min), (x + 0.9, r.per_sec)],
                    color.filled(),
                )))?;
            }
        }
        chart.draw_series(std::iter::once(Text::new(
            payload.to_string(),
            (base + impls.len() as f64 / 2.0 - 0.2, max / 2.5),
            ("sans-serif", 16),
        )))?;
    }
    for implementation in &impls {
        let color = color_of(implementation);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(-1.0, min), (-1.0, min)],
                color.filled(),
            )))?
            .label(*implementation)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Each implementation's colour in the chart: greys for the references,
/// muted ones for the actor libraries, the bus's as before.
fn color_of(implementation: &str) -> RGBColor {
    match implementation {
        "direct_call" => RGBColor(40, 40, 40),
        "raw_channel" => RGBColor(120, 120, 120),
        "kameo_ask" => RGBColor(148, 103, 189),
        "ractor_call" => RGBColor(140, 86, 75),
        "actix_send" => RGBColor(227, 119, 194),
        "jsobj" => RGBColor(31, 119, 180),
        "derived_immutable" => RGBColor(44, 160, 44),
        "serde_json_value" => RGBColor(214, 39, 40),
        "derived_copied" => RGBColor(255, 127, 14),
        _ => RGBColor(188, 189, 34),
    }
}
