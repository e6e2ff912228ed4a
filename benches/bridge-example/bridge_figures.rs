//! The TCP event bus bridge, codecbus's and Vert.x 3.9.4's, side by side in
//! one run: the same client, the same payloads, the same echo (the body
//! and the headers back, plus a header `echoed`). For each server:
//! requests per second with a window of requests in flight, the round-trip
//! time of one request at a time (median and 99th percentile), the
//! server's CPU time per request, and the memory each idle connection adds
//! to the server's process (its resident size, and for the JVM also its
//! heap in use after a full collection, through `jcmd` when the JDK has
//! it).
//!
//! The client is a load generator written to cost the servers' machine as
//! little as it can: its request frames are written once, before the runs
//! (a `send` with a `replyAddress`, the headers and the body), and sent as
//! they are; a burst of replies is answered by a burst of requests in one
//! write; a reply is checked by its frame's type, and one in 64 is read
//! whole and its body compared with the request's. Its own CPU time per
//! request is printed beside the server's, so that a run where the client
//! is the limit shows as one.
//!
//! Each server is a process of its own: codecbus's bridge is this program
//! started again with `--serve-codecbus` (a bus with the echo consumer and
//! a `Bridge` in front of it), Vert.x's is the reference node of the
//! bridge tests (`tests/vertx/ReferenceBridge.java` through
//! `scripts/vertx-reference`, which fetches `vertx3-full@3.9.4` from npm
//! once and needs java and javac). Both end with this program.
//!
//! ```text
//! cargo run --release -p codecbus-bridge-example --example bridge_figures -- --help
//! ```

use std::io::{BufRead, BufReader, Write as _};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use codecbus_bus::bridge::{Bridge, BridgeOptions, PermittedOptions};
use codecbus_bus::{EventBus, Message, ReplyOptions};
use codecbus_json::JsValue;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

const USAGE: &str = "\
bridge_figures: codecbus's TCP event bus bridge next to Vert.x 3.9.4's

  --seconds S   how long each throughput run lasts (default 2)
  --warmup S    requests before measuring, per server and payload (default 3;
                Vert.x's JIT needs it)
  --window N    requests in flight on each connection in the throughput
                runs (default 32)
  --connections N  the connections of the second throughput run (the
                first has one; default 4)
  --rtt N       requests one at a time for the round-trip times (default 2000)
  --idle N      idle connections opened for the memory figure (default 200)
  --rounds N    codecbus then Vert.x, N times; the summary takes the
                median of the rounds (default 1)
  --only NAME   codecbus or vertx alone
  --build NAME=PATH  another build of this program (another commit, a
                design under trial), measured beside as server NAME: it is
                started as PATH --serve-codecbus; repeatable
  --slow LIST   clients that send 1 MB requests and never read, for the
                memory figure under load: a run per count in the
                comma-separated list (default none; the README's: 1,100),
                each first against the floor, a codecbus bridge whose
                budget admits none of their frames (another connection's
                round trips while they only load the machine)
  --slow-seconds S  how long each of those runs lasts (default 6)
";

/// One line of an order.
struct Line {
    sku: String,
    quantity: u32,
    cents: i64,
}

/// The payload: an order with its lines.
struct Order {
    id: u64,
    customer: String,
    lines: Vec<Line>,
}

fn order(lines: usize) -> Order {
    Order {
        id: 7,
        customer: "ada@example.com".into(),
        lines: (0..lines)
            .map(|i| Line {
                sku: format!("tea-green-{i:03}"),
                quantity: 2,
                cents: 475,
            })
            .collect(),
    }
}

struct Args {
    seconds: f64,
    warmup: f64,
    window: usize,
    connections: usize,
    rtt: usize,
    idle: usize,
    rounds: usize,
    only: Option<String>,
    builds: Vec<(&'static str, String)>,
    slow: Vec<usize>,
    slow_seconds: f64,
}

fn args() -> Args {
    let mut a = Args {
        seconds: 2.0,
        warmup: 3.0,
        window: 32,
        connections: 4,
        rtt: 2000,
        idle: 200,
        rounds: 1,
        only: None,
        builds: Vec::new(),
        slow: Vec::new(),
        slow_seconds: 6.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            print!("{USAGE}");
            std::process::exit(0);
        }
        let value = it
            .next()
            .unwrap_or_else(|| fail(&format!("{flag} wants a value")));
        let number = || {
            value
                .parse::<f64>()
                .unwrap_or_else(|_| fail(&format!("{flag} {value}: not a number")))
        };
        match flag.as_str() {
            "--seconds" => a.seconds = number(),
            "--warmup" => a.warmup = number(),
            "--window" => a.window = number().max(1.0) as usize,
            "--connections" => a.connections = number().max(1.0) as usize,
            "--rtt" => a.rtt = number().max(1.0) as usize,
            "--idle" => a.idle = number() as usize,
            "--rounds" => a.rounds = number().max(1.0) as usize,
            "--only" if value == "codecbus" || value == "vertx" => a.only = Some(value),
            "--build" => match value.split_once('=') {
                // A name lives as long as the program.
                Some((name, path)) if !name.is_empty() && !path.is_empty() => {
                    a.builds.push((Box::leak(name.into()), path.to_string()));
                }
                _ => fail(&format!("--build {value}: not NAME=PATH")),
            },
            "--slow" => {
                a.slow = value
                    .split(',')
                    .map(|n| {
                        n.trim().parse().unwrap_or_else(|_| {
                            fail(&format!("--slow {value}: not a list of counts"))
                        })
                    })
                    .collect();
            }
            "--slow-seconds" => a.slow_seconds = number(),
            _ => fail(&format!("unknown flag {flag} {value}")),
        }
    }
    a
}

fn fail(why: &str) -> ! {
    eprintln!("bridge_figures: {why}\n\n{USAGE}");
    std::process::exit(2)
}

/// A server process, killed when dropped (and ending when its stdin, held
/// here, closes).
struct Server {
    name: &'static str,
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// Starts `command` and waits for its ready line, a JSON object whose
/// member `key` is the port.
fn spawn(name: &'static str, mut command: Command, key: &str) -> Server {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| fail(&format!("cannot start the {name} server: {e}")));
    let mut line = String::new();
    let stdout = child.stdout.take().expect("piped stdout");
    let _ = BufReader::new(stdout).read_line(&mut line);
    let port = serde_json::from_str::<serde_json::Value>(line.trim())
        .ok()
        .and_then(|v| v[key].as_u64())
        .and_then(|p| u16::try_from(p).ok());
    let mut server = Server {
        name,
        child,
        port: 0,
    };
    match port {
        Some(port) => server.port = port,
        None => fail(&format!("the {name} server printed {line:?}, not its port")),
    }
    server
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| fail(&format!("no free port: {e}")))
}

fn start_vertx() -> Server {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/vertx-reference");
    let prepared = Command::new("bash").arg(&script).arg("--prepare").status();
    if !prepared.is_ok_and(|s| s.success()) {
        fail("scripts/vertx-reference --prepare failed (it needs java, javac and npm)");
    }
    let mut command = Command::new("bash");
    command
        .arg(&script)
        .arg(free_port().to_string())
        .arg(free_port().to_string());
    spawn("Vert.x 3.9.4", command, "tcp")
}

fn start_codecbus() -> Server {
    let exe = std::env::current_exe().unwrap_or_else(|e| fail(&format!("current_exe: {e}")));
    start_build("codecbus", &exe.to_string_lossy())
}

/// The codecbus server of the build of this program at `exe`.
fn start_build(name: &'static str, exe: &str) -> Server {
    spawn(name, serve_command(exe), "tcp")
}

/// The command that starts the build at `exe` as a codecbus server.
fn serve_command(exe: &str) -> Command {
    let mut command = Command::new(exe);
    command.arg("--serve-codecbus");
    command
}

/// The floor of the slow-client runs: this program's codecbus server with
/// a bridge budget of 1 MiB, which admits none of the slow clients' 1 MB
/// frames (each needs more). They then load the machine and its kernel
/// (their writes fill the sockets' buffers) and not the server, which
/// serves the reading connection alone: the least that connection's round
/// trips can take here while they send, whatever the server.
fn start_floor() -> Server {
    let exe = std::env::current_exe().unwrap_or_else(|e| fail(&format!("current_exe: {e}")));
    let mut command = serve_command(&exe.to_string_lossy());
    command.env("CODECBUS_BRIDGE_BUDGET_MIB", "1");
    spawn("floor", command, "tcp")
}

/// `--serve-codecbus`: the bus with the reference's echo behind a bridge,
/// until stdin closes.
fn serve_codecbus() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let bus = EventBus::new();
        let _echo = bus.consumer("echo", |m: Message<JsValue>| async move {
            let mut headers = m.headers().clone();
            headers.insert("echoed", "true");
            m.reply_with(m.body().clone(), ReplyOptions::new().headers(headers))
        });
        let options = BridgeOptions::new()
            .inbound(PermittedOptions::new().address("echo"))
            .max_connections(100_000);
        // `CODECBUS_BRIDGE_BUDGET_MIB`: the bridge's budget, to see how
        // the memory under load follows it.
        let options = match std::env::var("CODECBUS_BRIDGE_BUDGET_MIB")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
        {
            Some(mib) => options.bridge_budget(mib << 20),
            None => options,
        };
        let server = Bridge::new(&bus, options)
            .expect("bridge options")
            .listen("127.0.0.1:0")
            .await
            .expect("listen");
        println!("{{\"tcp\":{}}}", server.local_addr().port());
        let _ = std::io::stdout().flush();
        // Ends when the parent closes stdin (or dies).
        let _ = tokio::task::spawn_blocking(|| {
            let mut sink = String::new();
            while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {
                sink.clear();
            }
        })
        .await;
        server.shutdown().await;
    });
}

/// The process's resident memory, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The process's CPU time (user and system) so far.
fn cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command's parenthesis: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks: u64 = fields
        .get(11..13)
        .map(|f| f.iter().filter_map(|t| t.parse::<u64>().ok()).sum())
        .unwrap_or(0);
    // USER_HZ is 100 on Linux.
    Duration::from_millis(ticks * 10)
}

/// What one server did with one payload.
struct Figures {
    /// Requests per second on one connection, and on several.
    per_second: [f64; 2],
    /// The server's CPU time per request, on one connection and on several.
    cpu_per_request: [Duration; 2],
    /// This client's CPU time per request, on several connections.
    client_cpu_per_request: Duration,
    /// The round trips one at a time (median, 99th percentile): with the
    /// server on the client's core, and on another.
    rtt: Vec<(&'static str, Duration, Duration)>,
}

/// A request frame, sent as it is: the body `body`'s JSON, headers `k: v`.
fn request_frame(body: &serde_json::Value) -> Vec<u8> {
    let text = serde_json::json!({
        "type": "send", "address": "echo", "replyAddress": "r",
        "headers": {"k": "v"}, "body": body,
    })
    .to_string();
    let mut frame = (text.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(text.as_bytes());
    frame
}

/// The replies' frames as they arrive, each checked.
struct Replies {
    rd: tokio::net::tcp::OwnedReadHalf,
    buf: Vec<u8>,
    /// The request's body, which a reply's must equal.
    body: serde_json::Value,
    seen: u64,
}

impl Replies {
    /// Waits for at least one reply; how many whole replies came.
    async fn read(&mut self) -> usize {
        let mut count = 0;
        loop {
            let mut at = 0;
            while let Some(head) = self.buf.get(at..at + 4) {
                let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
                let Some(frame) = self.buf.get(at + 4..at + 4 + len) else {
                    break;
                };
                check(&self.body, &mut self.seen, frame);
                at += 4 + len;
                count += 1;
            }
            self.buf.drain(..at);
            if count > 0 {
                return count;
            }
            let mut chunk = [0u8; 64 * 1024];
            match self.rd.read(&mut chunk).await {
                Ok(0) | Err(_) => fail("the server closed the connection"),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }
}

/// Checks a reply: its frame's type always, the whole reply one time in 64
/// (the first among them).
fn check(body: &serde_json::Value, seen: &mut u64, frame: &[u8]) {
    *seen += 1;
    let message = b"\"message\"";
    let is_message = frame.windows(message.len()).take(64).any(|w| w == message);
    if *seen % 64 == 1 || !is_message {
        let reply: serde_json::Value = serde_json::from_slice(frame)
            .unwrap_or_else(|e| fail(&format!("a reply is not JSON: {e}")));
        if reply["type"] != "message"
            || reply["body"] != *body
            || reply["headers"]["echoed"] != "true"
        {
            fail(&format!("a wrong reply: {reply}"));
        }
    }
}

/// A connection to `server`, as the replies' reader and the requests'
/// writer.
async fn connect(
    server: &Server,
    body: &serde_json::Value,
) -> (Replies, tokio::net::tcp::OwnedWriteHalf) {
    let stream = TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap_or_else(|e| fail(&format!("connect to {}: {e}", server.name)));
    let _ = stream.set_nodelay(true);
    let (rd, wr) = stream.into_split();
    let replies = Replies {
        rd,
        buf: Vec::new(),
        body: body.clone(),
        seen: 0,
    };
    (replies, wr)
}

/// Requests for `seconds` on `connections` connections, `window` in flight
/// on each; how many were answered.
async fn throughput(
    server: &Server,
    body: &serde_json::Value,
    frame: &[u8],
    (connections, window): (usize, usize),
    seconds: f64,
) -> u64 {
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (mut replies, mut wr) = connect(server, body).await;
        let frame = frame.to_vec();
        tasks.push(tokio::spawn(async move {
            // One frame after the other, `window` times, written a burst at
            // a time.
            let frames = frame.repeat(window);
            let burst = |n: usize| &frames[..n * frame.len()];
            if wr.write_all(burst(window)).await.is_err() {
                fail("the server closed the connection");
            }
            let mut answered = 0u64;
            let mut in_flight = window;
            while in_flight > 0 {
                let n = replies.read().await;
                answered += n as u64;
                in_flight -= n;
                if Instant::now() < deadline {
                    if wr.write_all(burst(n)).await.is_err() {
                        fail("the server closed the connection");
                    }
                    in_flight += n;
                }
            }
            answered
        }));
    }
    let mut answered = 0;
    for task in tasks {
        answered += task.await.unwrap_or(0);
    }
    answered
}

/// Pins the threads of process `pid` to `cpus` (taskset's list); whether
/// it could.
fn pin(pid: u32, cpus: &str) -> bool {
    Command::new("taskset")
        .args(["-a", "-p", "-c", cpus, &pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The round trips of `n` requests one at a time: median and 99th
/// percentile.
async fn round_trips(
    server: &Server,
    body: &serde_json::Value,
    frame: &[u8],
    n: usize,
) -> (Duration, Duration) {
    let (mut replies, mut wr) = connect(server, body).await;
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        if wr.write_all(frame).await.is_err() {
            fail("the server closed the connection");
        }
        replies.read().await;
        times.push(t.elapsed());
    }
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    (at(0.5), at(0.99))
}

async fn measure(server: &Server, body: &serde_json::Value, a: &Args) -> Figures {
    let frame = request_frame(body);
    let mut per_second = [0.0; 2];
    let mut cpu_per_request = [Duration::ZERO; 2];
    let mut client_cpu_per_request = Duration::ZERO;
    for (i, connections) in [1, a.connections].into_iter().enumerate() {
        let shape = (connections, a.window);
        throughput(server, body, &frame, shape, a.warmup).await;
        let cpu_before = cpu(server.pid());
        let own_before = cpu(std::process::id());
        let started = Instant::now();
        let done = throughput(server, body, &frame, shape, a.seconds).await;
        let elapsed = started.elapsed();
        let per = |d: Duration| d / u32::try_from(done.max(1)).unwrap_or(u32::MAX);
        per_second[i] = done as f64 / elapsed.as_secs_f64();
        cpu_per_request[i] = per(cpu(server.pid()).saturating_sub(cpu_before));
        client_cpu_per_request = per(cpu(std::process::id()).saturating_sub(own_before));
    }
    // One request at a time, its time is mostly the wake-up of a sleeping
    // thread: a few microseconds on the core that sent the request, tens
    // on another. Where the scheduler puts each server's thread decides
    // it, so both placements are measured, pinned.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let all = format!("0-{}", cpus - 1);
    let mut rtt = Vec::new();
    let me = std::process::id();
    if cpus >= 2 && pin(me, "0") && pin(server.pid(), "0") {
        let (p50, p99) = round_trips(server, body, &frame, a.rtt).await;
        rtt.push(("same core", p50, p99));
        pin(server.pid(), "1");
        let (p50, p99) = round_trips(server, body, &frame, a.rtt).await;
        rtt.push(("other core", p50, p99));
        pin(server.pid(), &all);
        pin(me, &all);
    } else {
        let (p50, p99) = round_trips(server, body, &frame, a.rtt).await;
        rtt.push(("not pinned", p50, p99));
    }
    Figures {
        per_second,
        cpu_per_request,
        client_cpu_per_request,
        rtt,
    }
}

/// What idle connections cost a server, per connection.
struct Idle {
    /// The growth of the resident size.
    rss: f64,
    /// The growth of the Java heap in use after a full collection (Vert.x,
    /// when `jcmd` is there).
    heap: Option<f64>,
}

/// The Java heap in use after a full collection, in KiB: `jcmd`'s
/// `GC.run`, then the `used` of each generation in `GC.heap_info`.
fn java_heap_kib(pid: u32) -> Option<u64> {
    let jcmd = |what: &str| {
        Command::new("jcmd")
            .arg(pid.to_string())
            .arg(what)
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    jcmd("GC.run")?;
    let info = jcmd("GC.heap_info")?;
    let used: u64 = info
        .lines()
        .filter(|l| l.contains("generation"))
        .filter_map(|l| l.split("used ").nth(1))
        .filter_map(|v| v.split('K').next()?.trim().parse::<u64>().ok())
        .sum();
    (used > 0).then_some(used)
}

/// What `n` idle connections cost `server`, each answered one `ping` (so
/// the server has set it up) and kept open.
async fn idle_memory(server: &Server, n: usize, java: bool) -> Idle {
    let heap = || {
        if java {
            java_heap_kib(server.pid())
        } else {
            None
        }
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let heap_before = heap();
    let before = rss_kib(server.pid());
    let ping = br#"{"type":"ping"}"#;
    let mut frame = (ping.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(ping);
    let mut open = Vec::with_capacity(n);
    for _ in 0..n {
        let pinged = async {
            let mut s = tokio::net::TcpStream::connect(("127.0.0.1", server.port)).await?;
            s.write_all(&frame).await?;
            let len = s.read_u32().await? as usize;
            let mut pong = vec![0; len];
            s.read_exact(&mut pong).await?;
            std::io::Result::Ok(s)
        };
        match pinged.await {
            Ok(s) => open.push(s),
            Err(e) => fail(&format!("an idle connection to {}: {e}", server.name)),
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = rss_kib(server.pid());
    let heap_after = heap();
    drop(open);
    let per = |before: u64, after: u64| after.saturating_sub(before) as f64 * 1024.0 / n as f64;
    Idle {
        rss: per(before, after),
        heap: heap_before.zip(heap_after).map(|(b, a)| per(b, a)),
    }
}

/// The p99 of `n` round trips measured from a thread and a runtime of
/// their own, so that what else this process does (the slow clients'
/// writes of 1 MB) does not delay them: what the server makes another
/// connection wait. `None` after 30 s without the answers.
fn round_trips_apart(
    server: &Server,
    body: &serde_json::Value,
    frame: &[u8],
    n: usize,
) -> Option<Duration> {
    tokio::task::block_in_place(|| {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .expect("a runtime");
                    runtime.block_on(async {
                        tokio::time::timeout(
                            Duration::from_secs(30),
                            round_trips(server, body, frame, n),
                        )
                        .await
                        .ok()
                        .map(|(_, p99)| p99)
                    })
                })
                .join()
                .unwrap_or(None)
        })
    })
}

/// The round trips of the reading connection in the slow-client runs, idle
/// and meanwhile: enough for a p99 that does not rest on a handful.
const SLOW_RTT: usize = 2000;

/// What clients that send and never read cost a server.
struct Slow {
    /// The highest resident size above the one before they came, in KiB.
    peak_kib: u64,
    /// How many requests the server took from them (their frames written
    /// whole into the socket).
    requests: u64,
    /// A reading connection's round trips meanwhile: p99 before the slow
    /// clients came, and while they send.
    p99: (Duration, Duration),
    /// Whether the server still answers once they are gone.
    alive: bool,
}

/// `n` clients each sending 1 MB echo requests for `seconds` and reading
/// nothing (a small receive buffer, so that the kernel holds little for
/// them), the server's resident size sampled throughout; a reading
/// connection measures its round trips before and meanwhile.
async fn slow_readers(server: &Server, n: usize, seconds: f64) -> Slow {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    let small = serde_json::json!({"id": 1});
    let small_frame = request_frame(&small);
    // The server settles first: it may still be letting go of the idle
    // connections of the run before.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle_p99 =
        round_trips_apart(server, &small, &small_frame, SLOW_RTT).unwrap_or(Duration::MAX);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_kib(server.pid());
    let big = serde_json::json!({"data": "x".repeat(1_000_000)});
    let frame = Arc::new(request_frame(&big));
    let stop = Arc::new(AtomicBool::new(false));
    let requests = Arc::new(AtomicU64::new(0));
    let mut clients = Vec::with_capacity(n);
    for _ in 0..n {
        let socket =
            tokio::net::TcpSocket::new_v4().unwrap_or_else(|e| fail(&format!("a socket: {e}")));
        let _ = socket.set_recv_buffer_size(16 * 1024);
        let stream = socket
            .connect(std::net::SocketAddr::from(([127, 0, 0, 1], server.port)))
            .await
            .unwrap_or_else(|e| fail(&format!("connect to {}: {e}", server.name)));
        let (frame, stop, requests) =
            (Arc::clone(&frame), Arc::clone(&stop), Arc::clone(&requests));
        clients.push(tokio::spawn(async move {
            let mut stream = stream;
            // Written a piece at a time, so that a stalled write never
            // leaves half a frame behind a new one.
            let mut at = 0;
            while !stop.load(Ordering::Relaxed) {
                match tokio::time::timeout(Duration::from_millis(200), stream.write(&frame[at..]))
                    .await
                {
                    Ok(Ok(0) | Err(_)) => break,
                    Ok(Ok(n)) => {
                        at += n;
                        if at == frame.len() {
                            at = 0;
                            requests.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    // Held back: the server reads no more; try again.
                    Err(_) => {}
                }
            }
            stream
        }));
    }
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut peak = before;
    let mut p99 = Duration::ZERO;
    let mut measured = false;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        peak = peak.max(rss_kib(server.pid()));
        if !measured && Instant::now() + Duration::from_secs_f64(seconds / 2.0) > deadline {
            // Halfway: the slow clients have filled what they may.
            p99 =
                round_trips_apart(server, &small, &small_frame, SLOW_RTT).unwrap_or(Duration::MAX);
            measured = true;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let mut streams = Vec::new();
    for client in clients {
        if let Ok(stream) = client.await {
            streams.push(stream);
        }
    }
    peak = peak.max(rss_kib(server.pid()));
    drop(streams);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let alive = tokio::time::timeout(
        Duration::from_secs(30),
        round_trips(server, &small, &small_frame, 10),
    )
    .await
    .is_ok();
    Slow {
        peak_kib: peak.saturating_sub(before),
        requests: requests.load(Ordering::Relaxed),
        p99: (idle_p99, p99),
        alive,
    }
}

/// The body as the client writes it: the JSON of its named layout.
fn json_body(body: &Order) -> serde_json::Value {
    let lines: Vec<serde_json::Value> = body
        .lines
        .iter()
        .map(|l| serde_json::json!({"sku": l.sku, "quantity": l.quantity, "cents": l.cents}))
        .collect();
    serde_json::json!({"id": body.id, "customer": body.customer, "lines": lines})
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--serve-codecbus") {
        serve_codecbus();
        return;
    }
    let a = args();
    let mut servers = Vec::new();
    if a.only.as_deref() != Some("vertx") {
        servers.push(start_codecbus());
        for (name, path) in &a.builds {
            servers.push(start_build(name, path));
        }
    }
    if a.only.as_deref() != Some("codecbus") {
        servers.push(start_vertx());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let payloads = [("1 line", json_body(&order(1))), ("16 lines", json_body(&order(16)))];
        println!(
            "{} in flight on each connection, {} s per run after {} s of warm-up; {} round trips one at a time",
            a.window, a.seconds, a.warmup, a.rtt
        );
        let many = format!("{} conns", a.connections);
        println!(
            "{:<13} {:<15} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>16}",
            "server", "payload", "req/s 1", &format!("req/s {}", a.connections), "CPU 1", &format!("CPU {}", a.connections), "client", "", "rtt p50 / p99"
        );
        let mut rows: Vec<(&str, &str, Figures)> = Vec::new();
        for _ in 0..a.rounds {
            for server in &servers {
                for (name, body) in &payloads {
                    let f = measure(server, body, &a).await;
                    let label = format!("{name} ({} B)", body.to_string().len());
                    let rtt: Vec<String> = f
                        .rtt
                        .iter()
                        .map(|(place, p50, p99)| format!("{place} {p50:.1?} / {p99:.1?}"))
                        .collect();
                    println!(
                        "{:<13} {:<15} {:>10.0} {:>10.0} {:>9.1?} {:>9.1?} {:>9.1?} {:>9} {}",
                        server.name,
                        label,
                        f.per_second[0],
                        f.per_second[1],
                        f.cpu_per_request[0],
                        f.cpu_per_request[1],
                        f.client_cpu_per_request,
                        "",
                        rtt.join(", ")
                    );
                    rows.push((server.name, name, f));
                }
            }
        }
        println!("median of {} round(s):", a.rounds);
        let median = |server: &str, payload: &str, get: &dyn Fn(&Figures) -> f64| {
            let mut v: Vec<f64> = rows
                .iter()
                .filter(|(s, p, _)| *s == server && *p == payload)
                .map(|(_, _, f)| get(f))
                .collect();
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
        };
        let places: Vec<&str> = rows
            .first()
            .map(|(_, _, f)| f.rtt.iter().map(|(place, ..)| *place).collect())
            .unwrap_or_default();
        let micros = |d: Duration| d.as_secs_f64() * 1e6;
        for (name, _) in &payloads {
            for server in &servers {
                let rtt: Vec<String> = (0..places.len())
                    .map(|i| {
                        format!(
                            "{} p50 {:.1} µs p99 {:.1} µs",
                            places[i],
                            median(server.name, name, &|f| micros(f.rtt[i].1)),
                            median(server.name, name, &|f| micros(f.rtt[i].2)),
                        )
                    })
                    .collect();
                println!(
                    "  {:<13} {:<9} 1 conn {:>7.0}/s {:>5.1} µs CPU/req; {many} {:>7.0}/s {:>5.1} µs CPU/req; {}",
                    server.name,
                    name,
                    median(server.name, name, &|f| f.per_second[0]),
                    median(server.name, name, &|f| micros(f.cpu_per_request[0])),
                    median(server.name, name, &|f| f.per_second[1]),
                    median(server.name, name, &|f| micros(f.cpu_per_request[1])),
                    rtt.join("; "),
                );
            }
            let vertx = servers.iter().find(|s| s.name.starts_with("Vert.x"));
            let ours = servers.iter().filter(|s| !s.name.starts_with("Vert.x"));
            for (c, v) in ours.filter_map(|c| Some((c, vertx?))) {
                let ratio = |get: &dyn Fn(&Figures) -> f64| {
                    median(c.name, name, get) / median(v.name, name, get)
                };
                let rtt: Vec<String> = (0..places.len())
                    .map(|i| {
                        format!(
                            "{:.2}x its p50 on the {}",
                            ratio(&|f| f.rtt[i].1.as_secs_f64()),
                            places[i]
                        )
                    })
                    .collect();
                println!(
                    "  {name}: {} {:.2}x Vert.x's requests/s on 1 connection, {:.2}x on {many}, {:.2}x its CPU per request on {many}; {}",
                    c.name,
                    ratio(&|f| f.per_second[0]),
                    ratio(&|f| f.per_second[1]),
                    ratio(&|f| f.cpu_per_request[1].as_secs_f64()),
                    rtt.join(", "),
                );
            }
        }
        for server in &servers {
            let rss = rss_kib(server.pid());
            if a.idle == 0 {
                println!("{}: RSS {rss} KiB", server.name);
                continue;
            }
            let java = server.name.starts_with("Vert.x");
            let idle = idle_memory(server, a.idle, java).await;
            let heap = match idle.heap {
                Some(heap) => format!(", the heap in use after a full GC {:.1} KiB each", heap / 1024.0),
                None if java => ", the heap not measured (no jcmd)".into(),
                None => String::new(),
            };
            println!(
                "{}: {} idle connections, RSS {:.1} KiB each (RSS {rss} KiB before){heap}",
                server.name,
                a.idle,
                idle.rss / 1024.0,
            );
        }
        let floor = (!a.slow.is_empty()).then(start_floor);
        for &n in &a.slow {
            // The floor first: what the slow clients cost the reading
            // connection when the server reads nothing of theirs.
            let mut floor_p99: Option<Duration> = None;
            for server in floor.iter().chain(&servers) {
                let slow = slow_readers(server, n, a.slow_seconds).await;
                let meanwhile = if slow.p99.1 == Duration::MAX {
                    "no answer within 30 s meanwhile".to_string()
                } else {
                    let against_floor = match floor_p99 {
                        Some(floor) => format!(
                            ", {:.2}x the floor's",
                            slow.p99.1.as_secs_f64() / floor.as_secs_f64()
                        ),
                        None => String::new(),
                    };
                    format!(
                        "{:.1?} meanwhile ({:.2}x{against_floor})",
                        slow.p99.1,
                        slow.p99.1.as_secs_f64() / slow.p99.0.as_secs_f64()
                    )
                };
                if server.name == "floor" && slow.p99.1 != Duration::MAX {
                    floor_p99 = Some(slow.p99.1);
                }
                let name = if server.name == "floor" {
                    "floor (a bridge that admits none of their frames)"
                } else {
                    server.name
                };
                println!(
                    "{name}: {n} clients sending 1 MB requests without reading for {} s: resident size at most {:.1} MiB above idle, {} requests taken; another connection's p99 {:.1?} idle, {meanwhile}{}",
                    a.slow_seconds,
                    slow.peak_kib as f64 / 1024.0,
                    slow.requests,
                    slow.p99.0,
                    if slow.alive { "" } else { "; the server no longer answers" },
                );
            }
        }
        drop(floor);
    });
    drop(runtime);
    drop(servers);
}
