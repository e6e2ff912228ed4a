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
//! **A whole cluster in one command.** With `--servers` or `--nodes` the
//! example starts the servers itself (`nats-server` on `PATH`, or
//! `CODECBUS_NATS_SERVER`): one, or a cluster of 3 to 5 joined by routes on
//! loopback ports, and that many bus nodes, each attached to a server of
//! its own (node `i` to server `i mod servers`) with the whole list to fail
//! over to. Every node serves the pricing address and asks it; once a
//! second it publishes to every node. Each second a line shows the quotes
//! each node served and the client messages each server carried; halfway
//! through, one server is killed (SIGKILL) and started again 3 s later,
//! and its nodes move to the next server of their list:
//!
//! ```text
//! cargo run --release --example cluster -- --servers 3 --nodes 6
//! ```
//!
//! Options: `--seconds S` (how long, default 20), `--kill-at S` (when to
//! kill server 2; default halfway, with 3 servers or more), `--no-kill`,
//! `--in-flight N` (requests each node keeps in flight, default 8). Ends
//! with the figures: quotes per second, requests failed, and the CPU time
//! per request of the nodes and of the servers. Exit status 1 when a node
//! or a server carried nothing after the restart.
//!
//! The request and reply types carry explicit codec names, so nodes built
//! from different binaries agree on them.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use codecbus::bus::{EventBus, Message, NatsOptions, RequestErrorKind};

#[path = "../bus/tests/common/nats.rs"]
mod harness;
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
    Demo,
}

struct Args {
    role: Role,
    url: String,
    count: Option<u64>,
    demo: Demo,
}

/// The settings of the one-command demo.
struct Demo {
    servers: usize,
    nodes: usize,
    seconds: u64,
    kill_at: Option<u64>,
    in_flight: usize,
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: cluster (--serve | --ask) [--url nats://HOST:PORT] [--count N]\n       \
         cluster [--servers N] [--nodes N] [--seconds S] [--kill-at S | --no-kill] [--in-flight N]\n\n\
         --servers: 1, or 3 to 5 (default 3); --nodes: 1 to 64 (default 6); --seconds: at least 1;\n\
         --kill-at S: kill server 2 after S seconds (before the end; needs 3 servers or more)"
    );
    ExitCode::from(2)
}

fn parse() -> Option<Args> {
    let mut role = None;
    let mut url = "nats://127.0.0.1:4222".to_owned();
    let mut count = None;
    let mut demo = Demo {
        servers: 3,
        nodes: 6,
        seconds: 20,
        kill_at: None,
        in_flight: 8,
    };
    let (mut kill_at, mut no_kill, mut url_given) = (None, false, false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--serve" => role = Some(Role::Serve),
            "--ask" => role = Some(Role::Ask),
            "--url" => {
                url = args.next()?;
                url_given = true;
            }
            "--count" => count = Some(args.next()?.parse().ok()?),
            "--servers" => demo.servers = args.next()?.parse().ok()?,
            "--nodes" => demo.nodes = args.next()?.parse().ok()?,
            "--seconds" => demo.seconds = args.next()?.parse().ok()?,
            "--kill-at" => kill_at = Some(args.next()?.parse().ok()?),
            "--no-kill" => no_kill = true,
            "--in-flight" => demo.in_flight = args.next()?.parse().ok()?,
            _ => return None,
        }
    }
    let role = match role {
        Some(role) => role,
        // `--url` and `--count` belong to `--serve` and `--ask`.
        None if url_given || count.is_some() => return None,
        // Demo flags alone, or none at all: the demo.
        None => Role::Demo,
    };
    if demo.servers != 1 && !(3..=5).contains(&demo.servers) {
        return None;
    }
    if !(1..=64).contains(&demo.nodes) || demo.seconds == 0 || demo.in_flight == 0 {
        return None;
    }
    demo.kill_at = match (no_kill, kill_at) {
        (true, Some(_)) => return None,
        (true, None) => None,
        (false, Some(at)) if at >= demo.seconds || demo.servers < 3 => return None,
        (false, Some(at)) => Some(at),
        (false, None) if demo.servers >= 3 => Some(demo.seconds / 2),
        (false, None) => None,
    };
    Some(Args {
        role,
        url,
        count,
        demo,
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
            let code = e
                .failure_code()
                .map_or_else(|| "none".to_owned(), |c| c.to_string());
            println!("refused as expected: {e} (code {code})");
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
        Role::Demo => demo::run(&args.demo).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cluster: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The one-command demo: servers, nodes, traffic, a server kill.
mod demo {
    use super::*;
    use crate::harness::{Config, NatsCluster, NatsServer};

    const NEWS: &str = "cluster.news";

    /// The servers the demo started.
    enum Servers {
        One(NatsServer),
        Cluster(NatsCluster),
    }

    impl Servers {
        fn all(&self) -> &[NatsServer] {
            match self {
                Self::One(server) => std::slice::from_ref(server),
                Self::Cluster(cluster) => cluster.servers(),
            }
        }

        /// Node `i`'s list: server `i mod n` first, then the next ones.
        fn urls_for(&self, i: usize) -> Vec<String> {
            let all = self.all();
            (0..all.len())
                .map(|k| all[(i + k) % all.len()].url())
                .collect()
        }

        /// The server each named connection is attached to (`-` when none).
        fn attachments(&self, names: &[String]) -> String {
            let seen: Vec<Vec<String>> = self
                .all()
                .iter()
                .map(|s| s.connections().into_iter().map(|c| c.name).collect())
                .collect();
            names
                .iter()
                .map(|name| {
                    let at = seen
                        .iter()
                        .position(|names| names.contains(name))
                        .map_or("-".to_owned(), |i| format!("s{}", i + 1));
                    format!("{name}→{at}")
                })
                .collect::<Vec<_>>()
                .join(" ")
        }

        /// Client messages (in and out) each server carried so far, by
        /// the connections it has now.
        fn carried(&self) -> Vec<u64> {
            self.all()
                .iter()
                .map(|s| s.connections().iter().map(|c| c.in_msgs + c.out_msgs).sum())
                .collect()
        }
    }

    /// CPU time (user + system) of process `pid` so far (`self` for this
    /// one), from `/proc`; zero where it cannot be read.
    fn cpu(pid: &str) -> Duration {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return Duration::ZERO;
        };
        // Fields after `(comm)`: state is the first; utime and stime are
        // the 12th and 13th, in clock ticks (100 a second on Linux).
        let Some((_, rest)) = stat.rsplit_once(')') else {
            return Duration::ZERO;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
        };
        Duration::from_millis((ticks(11) + ticks(12)) * 10)
    }

    fn servers_cpu(servers: &Servers) -> Duration {
        servers
            .all()
            .iter()
            .filter_map(NatsServer::pid)
            .map(|pid| cpu(&pid.to_string()))
            .sum()
    }

    /// What every node counts.
    #[derive(Default)]
    struct Counts {
        served: AtomicU64,
        asked: AtomicU64,
        failed: AtomicU64,
        news: AtomicU64,
    }

    async fn node(servers: &Servers, i: usize, name: &str) -> Result<EventBus, String> {
        EventBus::builder()
            .default_timeout(Duration::from_secs(1))
            .nats(
                NatsOptions::with_servers(servers.urls_for(i))
                    .retain_server_order()
                    .connection_name(name)
                    .connection_timeout(Duration::from_secs(2))
                    .max_reconnect_delay(Duration::from_millis(100)),
            )
            .connect()
            .await
            .map_err(|e| format!("{name}: {e}"))
    }

    pub(super) async fn run(d: &Demo) -> Result<(), String> {
        let servers = tokio::task::block_in_place(|| {
            if d.servers == 1 {
                let config = Config {
                    monitor: true,
                    ..Config::default()
                };
                NatsServer::start_with("cluster demo", &config).map(Servers::One)
            } else {
                NatsCluster::start("cluster demo", d.servers).map(Servers::Cluster)
            }
        })
        .ok_or("the demo needs nats-server (see above)")?;
        let mut servers = servers;
        let names: Vec<String> = (1..=d.nodes).map(|i| format!("n{i}")).collect();
        let mut buses = Vec::new();
        let mut counts = Vec::new();
        let mut guards = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let bus = node(&servers, i, name).await?;
            let c = Arc::new(Counts::default());
            let served = Arc::clone(&c);
            guards.push(bus.consumer(PRICING, move |m: Message<PriceRequest>| {
                served.served.fetch_add(1, Ordering::Relaxed);
                let PriceRequest { sku, qty } = m.body().clone();
                let unit = unit_price(&sku);
                let replied = m.reply(PriceQuote {
                    sku,
                    qty,
                    unit_cents: unit,
                    total_cents: unit * i64::from(qty),
                    served_by: u32::try_from(i).unwrap_or(u32::MAX),
                });
                async move { replied }
            }));
            let news = Arc::clone(&c);
            guards.push(bus.consumer(NEWS, move |_: Message<u64>| {
                news.news.fetch_add(1, Ordering::Relaxed);
                async {}
            }));
            bus.flush().await.map_err(|e| e.to_string())?;
            buses.push(bus);
            counts.push(c);
        }
        println!(
            "{} server(s), {} node(s): {}",
            d.servers,
            d.nodes,
            tokio::task::block_in_place(|| servers.attachments(&names))
        );

        // Every node asks with `in_flight` tasks until the end.
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut tasks = Vec::new();
        for (bus, c) in buses.iter().zip(&counts) {
            for t in 0..d.in_flight {
                let (bus, c, stop) = (bus.clone(), Arc::clone(c), Arc::clone(&stop));
                tasks.push(tokio::spawn(async move {
                    let mut n = t as u64;
                    while !stop.load(Ordering::Relaxed) {
                        let request = PriceRequest {
                            sku: format!("sku-{}", n % 7),
                            qty: u32::try_from(n % 5 + 1).unwrap_or(1),
                        };
                        match bus.request::<PriceQuote>(PRICING, request).await {
                            Ok(_) => c.asked.fetch_add(1, Ordering::Relaxed),
                            Err(_) => {
                                c.failed.fetch_add(1, Ordering::Relaxed);
                                tokio::time::sleep(Duration::from_millis(20)).await;
                                0
                            }
                        };
                        n += 1;
                    }
                }));
            }
        }

        let cpu_start = (cpu("self"), servers_cpu(&servers));
        let mut killed_cpu = Duration::ZERO;
        let started = Instant::now();
        let mut last_served: Vec<u64> = vec![0; d.nodes];
        let mut last_carried = tokio::task::block_in_place(|| servers.carried());
        let restart_at = d.kill_at.map(|at| at + 3);
        let mut after_restart: Option<(Vec<u64>, Vec<u64>)> = None;
        for second in 1..=d.seconds {
            tokio::time::sleep_until((started + Duration::from_secs(second)).into()).await;
            for (i, bus) in buses.iter().enumerate() {
                let _ = bus.publish(NEWS, second * 100 + i as u64).await;
            }
            let served: Vec<u64> = counts
                .iter()
                .map(|c| c.served.load(Ordering::Relaxed))
                .collect();
            let carried = tokio::task::block_in_place(|| servers.carried());
            let per_node: Vec<String> = served
                .iter()
                .zip(&last_served)
                .enumerate()
                .map(|(i, (now, before))| format!("{} {:>5}", names[i], now - before))
                .collect();
            let per_server: Vec<String> = carried
                .iter()
                .zip(&last_carried)
                .enumerate()
                .map(|(i, (now, before))| format!("s{} {:>6}", i + 1, now.saturating_sub(*before)))
                .collect();
            println!(
                "{second:>3} s  quotes served: {}  | client msgs: {}",
                per_node.join("  "),
                per_server.join("  ")
            );
            last_served = served;
            last_carried = carried;
            if Some(second) == d.kill_at {
                let victim = 1;
                let server = match &mut servers {
                    Servers::Cluster(cluster) => cluster.server_mut(victim),
                    Servers::One(server) => server,
                };
                killed_cpu += server.pid().map_or(Duration::ZERO, |p| cpu(&p.to_string()));
                tokio::task::block_in_place(|| server.kill());
                println!(
                    "      SIGKILL s{}; its nodes move to the next server of their list",
                    victim + 1
                );
                tokio::time::sleep(Duration::from_millis(500)).await;
                println!(
                    "      {}",
                    tokio::task::block_in_place(|| servers.attachments(&names))
                );
            }
            if Some(second) == restart_at {
                let server = match &mut servers {
                    Servers::Cluster(cluster) => cluster.server_mut(1),
                    Servers::One(server) => server,
                };
                tokio::task::block_in_place(|| server.start_again());
                println!(
                    "      s2 started again (nodes stay where they are until their server goes)"
                );
                // Counters from here on: everything must still move.
                let carried = tokio::task::block_in_place(|| servers.carried());
                after_restart = Some((last_served.clone(), carried));
            }
        }
        stop.store(true, Ordering::Relaxed);
        for task in tasks {
            let _ = task.await;
        }
        let elapsed = started.elapsed();
        let cpu_nodes = cpu("self").saturating_sub(cpu_start.0);
        let cpu_servers = (servers_cpu(&servers) + killed_cpu).saturating_sub(cpu_start.1);
        let total = |f: fn(&Counts) -> &AtomicU64| -> u64 {
            counts.iter().map(|c| f(c).load(Ordering::Relaxed)).sum()
        };
        let (asked, failed, news) = (
            total(|c| &c.asked),
            total(|c| &c.failed),
            total(|c| &c.news),
        );
        let rate = asked as f64 / elapsed.as_secs_f64();
        let per = |cpu: Duration| cpu.as_secs_f64() * 1e6 / asked.max(1) as f64;
        println!();
        println!("servers               {}", d.servers);
        println!("nodes                 {}", d.nodes);
        println!(
            "quotes                {asked} in {:.1} s ({rate:.0}/s)",
            elapsed.as_secs_f64()
        );
        println!("requests failed       {failed}");
        println!(
            "publishes received    {news} of {} (every node, every second)",
            d.seconds * (d.nodes * d.nodes) as u64
        );
        println!(
            "cpu per quote         {:.1} µs nodes + {:.1} µs servers = {:.1} µs (a quote is 2 messages)",
            per(cpu_nodes),
            per(cpu_servers),
            per(cpu_nodes + cpu_servers)
        );
        println!(
            "final attachments     {}",
            tokio::task::block_in_place(|| servers.attachments(&names))
        );
        for bus in &buses {
            bus.close().await;
        }
        drop(guards);
        // After the restart every node served and every live server
        // carried client traffic; a server that got no node back (nodes
        // stay where they moved) carries only publishes, and those count.
        if let Some((served_then, carried_then)) = after_restart {
            let idle: Vec<&String> = names
                .iter()
                .zip(last_served.iter().zip(&served_then))
                .filter(|(_, (now, then))| now <= then)
                .map(|(name, _)| name)
                .collect();
            if !idle.is_empty() {
                return Err(format!(
                    "nodes that served nothing after the restart: {idle:?}"
                ));
            }
            let quiet = last_carried
                .iter()
                .zip(&carried_then)
                .filter(|(now, then)| now <= then)
                .count();
            if quiet == last_carried.len() {
                return Err("no server carried traffic after the restart".to_owned());
            }
        }
        println!("ok");
        Ok(())
    }
}
