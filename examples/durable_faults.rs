//! Durable sends under faults: a `nats-server -js` (its store in a
//! temporary directory) on a free loopback port, a consumer group of two
//! nodes in child processes, and a sender that stores N durable sends
//! while the consumer processes are killed (SIGKILL) and restarted, and
//! the server is killed (SIGKILL) and restarted on the same store.
//!
//! With `--servers 3` the servers are a cluster (routes, JetStream
//! clustered), each node is attached to a server of its own and fails over
//! to the next of its list, and the address's stream has `--replicas`
//! copies. The server kills then take one server at a time, each restarted
//! and caught up before the next: the stream's leader first, then the
//! others. After each kill the run measures the time without service (the
//! kill → the first store of a send started after it).
//!
//! Each fault comes once its share of the sends is stored; sends a little
//! past it (8 per sending task) may start before it, the rest wait for
//! it, so every fault finds sends in flight and sends left to make.
//!
//! A send that fails (the server is down) is retried with the same message
//! id until it is stored, so a retry of a send the server did store is
//! dropped as a duplicate. Every consumer process prints the id of each
//! message it handled before returning; the sender counts them. Prints
//! sent, acknowledged, handled (unique), duplicates and lost; exits 1 when
//! anything is lost.
//!
//! ```text
//! cargo run --release --features jetstream --example durable_faults               # full size
//! cargo run --release --features jetstream --example durable_faults -- --sends 3000 --consumer-kills 1 --server-kills 1
//! cargo run --release --features jetstream --example durable_faults -- --servers 3 --replicas 3 --consumer-kills 0
//! ```
//!
//! Needs `nats-server` on `PATH` (or `CODECBUS_NATS_SERVER=/path`).

#[path = "../bus/tests/common/nats.rs"]
mod harness;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use codecbus::MessageCodec;
use codecbus::bus::{
    DeliveryOptions, DurableOptions, EventBus, MESSAGE_ID_HEADER, Message, NatsOptions,
};

const USAGE: &str = "\
usage: durable_faults [--sends N] [--consumer-kills N] [--server-kills N] [--senders N]
                      [--ack-wait MS] [--deadline S]
                      [--servers N] [--replicas N] [--store-timeout MS]

  --sends N           durable sends to the address `orders` (100000)
  --consumer-kills N  SIGKILLs of a consumer process, each restarted (3)
  --server-kills N    SIGKILLs of nats-server, restarted on the same store (3)
  --senders N         sending tasks, each retrying its send until stored (8)
  --ack-wait MS       the address's ack wait: how soon a killed consumer's
                      messages come again (2000)
  --deadline S        how long to wait for every message after the last send (120)
  --servers N         nats-servers: 1, or a cluster of 3 to 5 joined by routes (1)
  --replicas N        servers storing each message of the stream, at most --servers (1)
  --store-timeout MS  how long a send waits for the server's confirmation
                      before it fails and is retried (5000)

Exit status 1 when a message is lost (never handled, not dead-lettered).";

/// The body of every send.
#[derive(MessageCodec, Clone, Debug)]
#[codec(name = "faults.order")]
struct Order {
    id: u64,
    item: String,
}

#[derive(Clone)]
struct Settings {
    sends: u64,
    consumer_kills: u32,
    server_kills: u32,
    senders: u64,
    ack_wait: Duration,
    deadline: Duration,
    servers: usize,
    replicas: usize,
    store_timeout: Duration,
}

fn parse(args: &[String]) -> Result<Settings, String> {
    let mut s = Settings {
        sends: 100_000,
        consumer_kills: 3,
        server_kills: 3,
        senders: 8,
        ack_wait: Duration::from_secs(2),
        deadline: Duration::from_secs(120),
        servers: 1,
        replicas: 1,
        store_timeout: Duration::from_secs(5),
    };
    let mut args = args.iter();
    while let Some(a) = args.next() {
        let v = args.next().ok_or_else(|| format!("{a} needs a value"))?;
        let n = || v.parse::<u64>().map_err(|e| format!("{a}: {e}"));
        let small = || u32::try_from(n()?).map_err(|e| format!("{a}: {e}"));
        match a.as_str() {
            "--sends" => s.sends = n()?,
            "--consumer-kills" => s.consumer_kills = small()?,
            "--server-kills" => s.server_kills = small()?,
            "--senders" => s.senders = n()?.max(1),
            "--ack-wait" => s.ack_wait = Duration::from_millis(n()?),
            "--deadline" => s.deadline = Duration::from_secs(n()?),
            "--servers" => s.servers = usize::try_from(n()?).map_err(|e| format!("{a}: {e}"))?,
            "--replicas" => s.replicas = usize::try_from(n()?).map_err(|e| format!("{a}: {e}"))?,
            "--store-timeout" => s.store_timeout = Duration::from_millis(n()?),
            _ => return Err(format!("unknown argument `{a}`")),
        }
    }
    if s.sends == 0 {
        return Err("--sends must be at least 1".into());
    }
    if s.servers != 1 && !(3..=5).contains(&s.servers) {
        return Err("--servers must be 1, or 3 to 5 (a cluster)".into());
    }
    if s.replicas == 0 || s.replicas > s.servers {
        return Err(format!(
            "--replicas must be between 1 and --servers ({})",
            s.servers
        ));
    }
    Ok(s)
}

/// What every node declares: the stream's settings must be the same on
/// each (a difference fails `connect`); the store timeout is the node's own.
#[derive(Clone, Copy)]
struct Declared {
    ack_wait: Duration,
    replicas: usize,
    store_timeout: Duration,
}

impl Declared {
    fn of(s: &Settings) -> Self {
        Self {
            ack_wait: s.ack_wait,
            replicas: s.replicas,
            store_timeout: s.store_timeout,
        }
    }

    fn options(self) -> DurableOptions {
        DurableOptions::new()
            .ack_wait(self.ack_wait)
            .max_deliveries(50)
            .redelivery_delay(Duration::from_millis(100))
            .replicas(self.replicas)
            .store_timeout(self.store_timeout)
    }
}

/// `urls`: one URL, or a comma-separated list tried in its order (the
/// node's own server first).
async fn connect(urls: &str, name: &str, declared: Declared) -> Result<EventBus, String> {
    EventBus::builder()
        .nats(
            NatsOptions::new(urls)
                .retain_server_order()
                .connection_name(name)
                .max_reconnect_delay(Duration::from_millis(200))
                .durable("orders", declared.options()),
        )
        .connect()
        .await
        .map_err(|e| {
            let cause = std::error::Error::source(&e)
                .map(|c| format!(": {c}"))
                .unwrap_or_default();
            format!("{e}{cause}")
        })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    // `--consume URLS NAME ACK_WAIT_MS REPLICAS`: one consumer node (a
    // child process).
    if args.first().map(String::as_str) == Some("--consume") {
        let [_, urls, name, ack_wait, replicas] = &args[..] else {
            eprintln!("usage: durable_faults --consume URLS NAME ACK_WAIT_MS REPLICAS");
            return ExitCode::from(2);
        };
        let (Ok(ack_wait), Ok(replicas)) = (ack_wait.parse(), replicas.parse()) else {
            eprintln!("durable_faults --consume: ACK_WAIT_MS and REPLICAS are numbers");
            return ExitCode::from(2);
        };
        let declared = Declared {
            ack_wait: Duration::from_millis(ack_wait),
            replicas,
            store_timeout: Duration::from_secs(5),
        };
        return runtime.block_on(consume(urls, name, declared));
    }
    let s = match parse(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(drive(s))
}

/// A consumer node: prints `h {id}` for every message it handled (before
/// the handler returns, so before the acknowledgement), `ready` once
/// subscribed; exits when its standard input closes (its parent is gone).
async fn consume(urls: &str, name: &str, declared: Declared) -> ExitCode {
    let bus = match connect(urls, name, declared).await {
        Ok(bus) => bus,
        Err(e) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(2);
        }
    };
    let _orders = bus.consumer("orders", |m: Message<Order>| async move {
        // Idempotent by id: the parent counts a second handling of an id
        // as a duplicate, never as a second order.
        let mut out = std::io::stdout().lock();
        writeln!(out, "h {}", m.body().id).map_err(|e| e.to_string())?;
        out.flush().map_err(|e| e.to_string())
    });
    if let Err(e) = bus.flush().await {
        eprintln!("{name}: {e}");
    }
    println!("ready");
    // Until the parent closes our standard input.
    let _ = tokio::task::spawn_blocking(|| {
        let mut sink = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
    })
    .await;
    ExitCode::SUCCESS
}

/// How many times each id was handled, over every consumer process.
struct Tally {
    counts: Mutex<Vec<u32>>,
}

impl Tally {
    fn handled(&self, id: u64) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = usize::try_from(id).ok().and_then(|i| counts.get_mut(i)) {
            *c += 1;
        }
    }

    /// (unique ids handled, total handlings)
    fn figures(&self) -> (u64, u64) {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let unique = counts.iter().filter(|c| **c > 0).count() as u64;
        let total = counts.iter().map(|c| u64::from(*c)).sum();
        (unique, total)
    }
}

/// One consumer process and the thread reading what it handled.
struct Node {
    name: String,
    child: Child,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Node {
    fn spawn(name: &str, urls: &str, declared: Declared, tally: &Arc<Tally>) -> Self {
        let exe = std::env::current_exe().expect("this example's path");
        let mut child = Command::new(exe)
            .args([
                "--consume",
                urls,
                name,
                &declared.ack_wait.as_millis().to_string(),
                &declared.replicas.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start a consumer process");
        let stdout = child.stdout.take().expect("its stdout");
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let tally = Arc::clone(tally);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(id) = line.strip_prefix("h ").and_then(|n| n.parse().ok()) {
                    tally.handled(id);
                } else if line == "ready" {
                    let _ = ready_tx.send(());
                }
            }
        });
        // A consumer that cannot start prints why and exits; go on anyway:
        // the run then reports what is lost.
        let _ = ready_rx.recv_timeout(Duration::from_secs(30));
        Self {
            name: name.to_owned(),
            child,
            reader: Some(reader),
        }
    }

    /// SIGKILL, then read what it printed before dying.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        // Closing its standard input ends it; kill it if it lingers.
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill();
    }
}

/// The server, or the cluster of servers, the run kills and restarts.
enum Servers {
    One(harness::NatsServer),
    Cluster(harness::NatsCluster),
}

impl Servers {
    fn start(s: &Settings) -> Option<Self> {
        if s.servers == 1 {
            let config = harness::Config {
                jetstream: true,
                ..harness::Config::default()
            };
            harness::NatsServer::start_with("durable_faults", &config).map(Self::One)
        } else {
            harness::NatsCluster::start("durable_faults", s.servers).map(Self::Cluster)
        }
    }

    /// The server list of node `i`: its own server first, then the next
    /// ones (the sender is node 0, the consumers 1 and 2).
    fn urls_for(&self, i: usize) -> String {
        match self {
            Self::One(server) => server.url(),
            Self::Cluster(cluster) => cluster.urls_from(i % cluster.servers().len()).join(","),
        }
    }

    fn server_mut(&mut self, i: usize) -> &mut harness::NatsServer {
        match self {
            Self::One(server) => server,
            Self::Cluster(cluster) => cluster.server_mut(i),
        }
    }

    fn count(&self) -> usize {
        match self {
            Self::One(_) => 1,
            Self::Cluster(cluster) => cluster.servers().len(),
        }
    }

    /// `s1`, `s2`, ...
    fn name(i: usize) -> String {
        format!("s{}", i + 1)
    }
}

/// The stream of `orders` as the cluster sees it.
struct StreamState {
    /// The server that leads it (`s1`, ...).
    leader: String,
    /// The servers holding its other replicas.
    followers: Vec<String>,
    /// Whether every follower is current.
    current: bool,
}

async fn stream_state(js: &async_nats::jetstream::Context) -> Option<StreamState> {
    let mut stream = js.get_stream("codecbus_orders").await.ok()?;
    let info = stream.info().await.ok()?;
    let cluster = info.cluster.as_ref()?;
    Some(StreamState {
        leader: cluster.leader.clone()?,
        followers: cluster.replicas.iter().map(|r| r.name.clone()).collect(),
        current: cluster.replicas.iter().all(|r| r.current),
    })
}

/// When service stopped and came back, in microseconds since the start:
/// `killed` is set after a server's kill, `resumed` by the first send that
/// started after it and was stored.
struct Service {
    started: Instant,
    killed: AtomicU64,
    resumed: AtomicU64,
}

impl Service {
    fn now(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// A send that started at `began` (micros) was stored just now.
    fn stored(&self, began: u64) {
        if began >= self.killed.load(Ordering::SeqCst) {
            let _ =
                self.resumed
                    .compare_exchange(0, self.now(), Ordering::SeqCst, Ordering::SeqCst);
        }
    }

    /// A server was killed just now.
    fn kill(&self) {
        self.resumed.store(0, Ordering::SeqCst);
        self.killed.store(self.now(), Ordering::SeqCst);
    }

    /// Kill → service back, once it is.
    fn gap(&self) -> Option<Duration> {
        let resumed = self.resumed.load(Ordering::SeqCst);
        let killed = self.killed.load(Ordering::SeqCst);
        (resumed != 0).then(|| Duration::from_micros(resumed.saturating_sub(killed)))
    }
}

/// One server kill: which server, its role, and how long service was out.
struct Kill {
    server: String,
    role: &'static str,
    gap: Option<Duration>,
    caught_up: Option<Duration>,
}

async fn drive(s: Settings) -> ExitCode {
    let Some(mut servers) = Servers::start(&s) else {
        eprintln!("durable_faults needs nats-server (see above)");
        return ExitCode::from(2);
    };
    let declared = Declared::of(&s);
    let started = Instant::now();
    let sender = match connect(&servers.urls_for(0), "sender", declared).await {
        Ok(bus) => bus,
        Err(e) => {
            eprintln!("durable_faults: {e}");
            return ExitCode::from(2);
        }
    };
    // A plain client of the cluster, to ask JetStream for the stream's
    // leader and replicas.
    let js = match &servers {
        Servers::One(_) => None,
        Servers::Cluster(cluster) => {
            let addrs: Vec<async_nats::ServerAddr> = cluster
                .urls()
                .iter()
                .filter_map(|u| u.parse().ok())
                .collect();
            match async_nats::connect(addrs).await {
                Ok(client) => Some(async_nats::jetstream::new(client)),
                Err(e) => {
                    eprintln!("durable_faults: {e}");
                    return ExitCode::from(2);
                }
            }
        }
    };
    let tally = Arc::new(Tally {
        counts: Mutex::new(vec![0; usize::try_from(s.sends).unwrap_or(usize::MAX)]),
    });
    let dead = Arc::new(AtomicU64::new(0));
    let dead_count = Arc::clone(&dead);
    let dead_tally = Arc::clone(&tally);
    let _dead = sender.consumer("orders.dead", move |m: Message<Order>| {
        dead_count.fetch_add(1, Ordering::Relaxed);
        dead_tally.handled(m.body().id);
        async {}
    });
    let consumer_urls = [servers.urls_for(1), servers.urls_for(2)];
    let mut nodes = vec![
        Node::spawn("c1", &consumer_urls[0], declared, &tally),
        Node::spawn("c2", &consumer_urls[1], declared, &tally),
    ];
    let service = Arc::new(Service {
        started,
        killed: AtomicU64::new(u64::MAX),
        resumed: AtomicU64::new(0),
    });

    // The faults, spread over the sends: consumer kills and server kills
    // alternate.
    let faults = s.consumer_kills + s.server_kills;
    let mut plan = Vec::new();
    let (mut c, mut k) = (0, 0);
    while c < s.consumer_kills || k < s.server_kills {
        if c < s.consumer_kills {
            plan.push(true);
            c += 1;
        }
        if k < s.server_kills {
            plan.push(false);
            k += 1;
        }
    }
    // Fault `i` comes after the first `at(i)` sends are stored.
    let at = |i: usize| s.sends * (i as u64 + 1) / (u64::from(faults) + 1);
    // Sends a little past the next fault's (8 per sending task, so that
    // sends are in flight when it comes) wait until that fault happened:
    // every fault comes while sends remain, however long the previous
    // one took to recover.
    let limit = |i: usize| at(i).saturating_add(8 * s.senders);
    let gate = Arc::new(AtomicU64::new(if plan.is_empty() {
        u64::MAX
    } else {
        limit(0)
    }));

    // The senders: each takes the next id and retries it, with the same
    // message id, until the server stored it.
    let next = Arc::new(AtomicU64::new(0));
    let acked = Arc::new(AtomicU64::new(0));
    let retries = Arc::new(AtomicU64::new(0));
    let mut senders = Vec::new();
    for _ in 0..s.senders {
        let (bus, next, acked, retries, service, gate) = (
            sender.clone(),
            Arc::clone(&next),
            Arc::clone(&acked),
            Arc::clone(&retries),
            Arc::clone(&service),
            Arc::clone(&gate),
        );
        let total = s.sends;
        senders.push(tokio::spawn(async move {
            loop {
                let id = next.fetch_add(1, Ordering::Relaxed);
                if id >= total {
                    break;
                }
                while id >= gate.load(Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                let give_up = Instant::now() + Duration::from_secs(120);
                loop {
                    let options =
                        DeliveryOptions::new().header(MESSAGE_ID_HEADER, format!("order-{id}"));
                    let order = Order {
                        id,
                        item: "tea".to_owned(),
                    };
                    let began = service.now();
                    match bus.send_with("orders", order, options).await {
                        Ok(()) => {
                            service.stored(began);
                            acked.fetch_add(1, Ordering::Relaxed);
                            break;
                        }
                        Err(e) if Instant::now() < give_up => {
                            retries.fetch_add(1, Ordering::Relaxed);
                            if retries.load(Ordering::Relaxed) % 500 == 1 {
                                eprintln!(
                                    "send {id} failed, retrying with the same message id: {e}"
                                );
                            }
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                        Err(e) => {
                            eprintln!("send {id} given up: {e}");
                            break;
                        }
                    }
                }
            }
        }));
    }

    let mut server_down = Duration::ZERO;
    let mut consumer_kills = 0;
    let mut kills: Vec<Kill> = Vec::new();
    // The first server killed (the stream's leader, in a cluster); the
    // next kills take the servers after it in turn.
    let mut first_victim = None;
    let planned = plan.len();
    let open_gate = |i: usize| {
        let next = if i + 1 < planned {
            limit(i + 1)
        } else {
            u64::MAX
        };
        gate.store(next, Ordering::SeqCst);
    };
    for (i, consumer) in plan.into_iter().enumerate() {
        let at = at(i);
        while acked.load(Ordering::Relaxed) < at && senders.iter().any(|t| !t.is_finished()) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if consumer {
            // c1, c2, c1, ...
            let which = consumer_kills % 2;
            consumer_kills += 1;
            let node = &mut nodes[which];
            let name = node.name.clone();
            node.kill();
            open_gate(i);
            println!(
                "{:>7.1} s  SIGKILL consumer {name} after {at} sends; restarting it",
                started.elapsed().as_secs_f64()
            );
            tokio::time::sleep(Duration::from_millis(300)).await;
            let urls = consumer_urls[which].clone();
            let tally = Arc::clone(&tally);
            nodes[which] =
                tokio::task::spawn_blocking(move || Node::spawn(&name, &urls, declared, &tally))
                    .await
                    .expect("respawn");
            continue;
        }
        // The stream's state, asked again for a while when JetStream is
        // slow to answer (a loaded machine).
        let mut state = None;
        if let Some(js) = &js {
            let until = Instant::now() + Duration::from_secs(10);
            while state.is_none() && Instant::now() < until {
                state = stream_state(js).await;
                if state.is_none() {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        let leader_index = state
            .as_ref()
            .and_then(|st| st.leader.strip_prefix('s')?.parse::<usize>().ok())
            .and_then(|n| n.checked_sub(1));
        let victim = match first_victim {
            None => {
                let first = leader_index.unwrap_or(0);
                first_victim = Some(first);
                first
            }
            Some(first) => (first + kills.len()) % servers.count(),
        };
        let name = Servers::name(victim);
        let role = match (&js, leader_index, &state) {
            (None, _, _) => "the only server",
            (Some(_), Some(l), _) if l == victim => "stream leader",
            (Some(_), _, Some(st)) if st.followers.contains(&name) => "follower",
            (Some(_), _, Some(_)) => "no replica",
            (Some(_), _, None) => "stream state unknown",
        };
        println!(
            "{:>7.1} s  SIGKILL nats-server {name} ({role}) after {at} sends; restarting it on the same store",
            started.elapsed().as_secs_f64()
        );
        let down = Instant::now();
        tokio::task::block_in_place(|| servers.server_mut(victim).kill());
        service.kill();
        open_gate(i);
        tokio::time::sleep(Duration::from_millis(1000)).await;
        tokio::task::block_in_place(|| servers.server_mut(victim).start_again());
        server_down += down.elapsed();
        // Service back (bounded: the run reports a kill it never saw
        // recover), and in a cluster every replica current again before
        // the next kill, so that a majority always holds the stream.
        let wait_until = Instant::now() + Duration::from_secs(60);
        while service.gap().is_none()
            && Instant::now() < wait_until
            && senders.iter().any(|t| !t.is_finished())
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let mut caught_up = None;
        if let Some(js) = &js {
            while Instant::now() < wait_until {
                if stream_state(js).await.is_some_and(|st| st.current) {
                    caught_up = Some(down.elapsed());
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        let gap = service.gap();
        println!(
            "{:>7.1} s  service back {} after the kill{}",
            started.elapsed().as_secs_f64(),
            gap.map_or("never".to_owned(), |g| format!("{} ms", g.as_millis())),
            caught_up.map_or(String::new(), |c| format!(
                "; every replica current {} ms after it",
                c.as_millis()
            ))
        );
        kills.push(Kill {
            server: name,
            role,
            gap,
            caught_up,
        });
    }
    for t in senders {
        let _ = t.await;
    }
    let sent_in = started.elapsed();
    let acked = acked.load(Ordering::Relaxed);
    println!(
        "{:>7.1} s  all {} sends done ({acked} stored); waiting for the consumers",
        sent_in.as_secs_f64(),
        s.sends
    );

    let deadline = Instant::now() + s.deadline;
    loop {
        let (unique, _) = tally.figures();
        if unique >= s.sends || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Late duplicates: one more ack wait.
    tokio::time::sleep(s.ack_wait).await;
    let total_time = started.elapsed();
    drop(nodes);
    sender.close().await;
    let (unique, total) = tally.figures();
    let dead = dead.load(Ordering::Relaxed);
    let lost = s.sends - unique;
    println!();
    println!("servers               {}", s.servers);
    println!("replicas              {}", s.replicas);
    println!("sends                 {}", s.sends);
    println!("stored (Ok)           {acked}");
    println!("send retries          {}", retries.load(Ordering::Relaxed));
    println!("consumer kills        {}", s.consumer_kills);
    println!(
        "server kills          {} (down {:.1} s in all)",
        s.server_kills,
        server_down.as_secs_f64()
    );
    for kill in &kills {
        println!(
            "  {} ({}): without service {}{}",
            kill.server,
            kill.role,
            kill.gap.map_or("until the end".to_owned(), |g| format!(
                "{} ms",
                g.as_millis()
            )),
            kill.caught_up.map_or(String::new(), |c| format!(
                ", replicas current after {} ms",
                c.as_millis()
            ))
        );
    }
    let longest = kills.iter().filter_map(|k| k.gap).max();
    if let Some(longest) = longest {
        println!("longest gap           {} ms", longest.as_millis());
    }
    println!("handled (unique)      {unique}");
    println!("handled (total)       {total}");
    println!("duplicates            {}", total - unique);
    println!("dead letters          {dead}");
    println!("lost                  {lost}");
    println!(
        "time                  {:.1} s sending ({:.0} stored sends/s with the faults), {:.1} s in all",
        sent_in.as_secs_f64(),
        acked as f64 / sent_in.as_secs_f64(),
        total_time.as_secs_f64()
    );
    if lost == 0 && acked == s.sends {
        println!("nothing lost");
        ExitCode::SUCCESS
    } else {
        eprintln!("LOST {lost} of {} ({acked} stored)", s.sends);
        ExitCode::from(1)
    }
}
