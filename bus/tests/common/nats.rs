//! A real `nats-server` for the cluster tests: started on a free loopback
//! port with a config file in a temporary directory, awaited until it
//! accepts connections, killed (and its directory removed) on drop.
//! [`NatsCluster`] starts three (or more) of them joined by routes, with
//! JetStream clustered over their stores: each is a [`NatsServer`] like
//! the single one, and goes the same way.
//!
//! The server also dies with the process that started it, however that
//! process ends: a normal exit that never drops the server (one kept in a
//! `static`), a panic, or a kill (SIGKILL included). Each server has a
//! watchdog, a small `sh` whose standard input is a pipe from this
//! process; it learns the server's process id on every start and, when the
//! pipe closes (the kernel closes it when this process ends, whatever the
//! way), kills the server and removes its directory. Drop still stops the
//! server at once. (Linux's `PR_SET_PDEATHSIG` is no substitute: it fires
//! when the spawning *thread* exits, and every test runs on a thread of
//! its own.) The watchdog ignores SIGINT, SIGTERM and SIGHUP, so a Ctrl-C
//! to the whole process group still leaves it to clean up.
//!
//! Tests start their servers with [`NatsServer::for_test`] (and
//! `for_test_with`, [`NatsCluster::for_test`], [`jetstream_for_test`]): a
//! test that finds no `nats-server` on `PATH` (nor in `/usr/sbin`, where
//! the Debian package puts it) fails, saying how to install it, so no test
//! passes without having run. `bash scripts/test` and `.ci/run` install
//! the package when run as root. The programs that can do without a
//! server, the examples and benchmarks that start their own with this
//! file, use [`NatsServer::start`] (and `start_with`,
//! [`NatsCluster::start`], [`start_jetstream`]), which print the same
//! advice and return `None` instead.
//! `CODECBUS_NATS_SERVER=/path/to/nats-server` picks another binary; set
//! to an empty value it makes the server count as missing.
#![allow(dead_code, unreachable_pub)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The `nats-server` binary, if installed.
pub fn binary() -> Option<PathBuf> {
    if let Some(chosen) = std::env::var_os("CODECBUS_NATS_SERVER") {
        let chosen = PathBuf::from(chosen);
        return chosen.is_file().then_some(chosen);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/bin")])
        .map(|dir| dir.join("nats-server"))
        .find(|candidate| candidate.is_file())
}

/// How to get a `nats-server`, for the messages of a missing one.
pub const INSTALL: &str = "install the Debian package (`apt-get install nats-server`; \
    `bash scripts/test` and `.ci/run` do when run as root), or point \
    CODECBUS_NATS_SERVER at a nats-server binary";

/// The `nats-server` binary `test` needs.
///
/// # Panics
///
/// When it is not installed, with how to install it: a test that needs a
/// server never passes without one.
pub fn require(test: &str) -> PathBuf {
    binary()
        .unwrap_or_else(|| panic!("{test} needs nats-server, which is not installed: {INSTALL}"))
}

/// The `nats-server` binary for a program that can do without it (an
/// example, a benchmark): `None`, after printing how to install it, when
/// it is missing. Not for tests: a test that returns early on `None`
/// passes without having run ([`require`] fails it instead).
pub fn available(what: &str) -> Option<PathBuf> {
    let found = binary();
    if found.is_none() {
        // Straight to stderr, unbuffered.
        let _ = writeln!(
            std::io::stderr(),
            "{what} needs nats-server, which is not installed: {INSTALL}"
        );
    }
    found
}

/// Extra settings for the server's config file.
#[derive(Default, Clone)]
pub struct Config {
    /// `max_payload` in bytes.
    pub max_payload: Option<usize>,
    /// `authorization { token }`.
    pub token: Option<String>,
    /// `authorization { user, password }`.
    pub user_password: Option<(String, String)>,
    /// Further lines for the config file, verbatim.
    pub extra: Option<String>,
    /// `tls { ... }`: the server requires TLS.
    pub tls: Option<Tls>,
    /// JetStream on, its store in `{server dir}/js` (kept across
    /// [`NatsServer::restart`] and [`NatsServer::start_again`]).
    pub jetstream: bool,
    /// `jetstream { domain }`: the JetStream domain of the server.
    pub jetstream_domain: Option<String>,
    /// `server_name`: the name JetStream's cluster knows the server by.
    pub server_name: Option<String>,
    /// `cluster { ... }`: routes to the other servers of a cluster.
    pub routes: Option<Routes>,
    /// `http`: the monitoring endpoint on a free loopback port
    /// ([`NatsServer::connections`] reads it).
    pub monitor: bool,
}

/// A server's place in a cluster: the port other servers route to, and
/// theirs.
#[derive(Clone)]
pub struct Routes {
    /// The cluster's name (the same on every server).
    pub cluster: String,
    /// The port this server listens on for routes.
    pub port: u16,
    /// The route ports of every server of the cluster (its own may be
    /// among them: the server skips a route to itself).
    pub peers: Vec<u16>,
}

/// The server's TLS settings; the PEM texts are written into the server's
/// temporary directory and the config names those files.
#[derive(Clone)]
pub struct Tls {
    /// The server's certificate chain (`cert_file`).
    pub cert_pem: String,
    /// The server's private key (`key_file`).
    pub key_pem: String,
    /// CA certificates that sign client certificates (`ca_file`).
    pub ca_pem: Option<String>,
    /// `verify: true`: every client must present a certificate signed by
    /// `ca_pem`.
    pub verify: bool,
}

/// A server with JetStream, for `test` ([`require`]).
pub fn jetstream_for_test(test: &str) -> NatsServer {
    NatsServer::for_test_with(test, &jetstream())
}

/// A server with JetStream for a program that can do without one: `None`,
/// after printing how to install it, when `nats-server` is missing.
pub fn start_jetstream(what: &str) -> Option<NatsServer> {
    NatsServer::start_with(what, &jetstream())
}

fn jetstream() -> Config {
    Config {
        jetstream: true,
        ..Config::default()
    }
}

/// A running `nats-server`.
pub struct NatsServer {
    binary: PathBuf,
    dir: PathBuf,
    port: u16,
    monitor_port: Option<u16>,
    child: Option<Child>,
    watchdog: Option<Watchdog>,
}

/// Reads process ids, one a line (`0`: no server running), until its
/// standard input closes; then kills the last one and removes the
/// directory `$1`.
const WATCHDOG: &str = r#"trap '' INT TERM HUP
pid=0
while IFS= read -r line; do pid=$line; done
if [ "$pid" != 0 ]; then kill -9 "$pid" 2>/dev/null; fi
rm -rf "$1"
"#;

/// The `sh` that kills the server and removes its directory when this
/// process ends without dropping the [`NatsServer`].
struct Watchdog {
    child: Child,
    /// The write end of its standard input; only this process holds it
    /// (Rust opens pipes close-on-exec, so no other child inherits it).
    stdin: Option<ChildStdin>,
}

impl Watchdog {
    fn start(dir: &Path) -> Self {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(WATCHDOG)
            .arg("codecbus-nats-watchdog")
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the nats-server watchdog (sh)");
        let stdin = child.stdin.take();
        Self { child, stdin }
    }

    /// The server now running (`0`: none).
    fn watch(&mut self, pid: u32) {
        if let Some(stdin) = &mut self.stdin {
            // A watchdog that died can only leave the directory behind;
            // Drop removes it too.
            let _ = writeln!(stdin, "{pid}");
            let _ = stdin.flush();
        }
    }

    /// Closes the pipe and waits until the watchdog has removed the
    /// directory.
    fn finish(mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

/// A loopback port nothing listens on, for a server to bind.
///
/// Chosen below the kernel's ephemeral range: a port that `bind(0)`
/// hands out comes from that range, and so does the local port of every
/// outgoing connection, so such a port, released for the server to bind,
/// can be taken first (once by a route connection between the servers of
/// a cluster). Below the range only another listener can take it; the
/// ports are handed out in turn within the process, from an offset by
/// process id, so harnesses in other test processes start elsewhere.
fn free_port() -> u16 {
    const LOWEST: u32 = 10_000;
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u32>().ok())
        .unwrap_or(32_768);
    if ephemeral_low > LOWEST + 1_000 {
        let span = ephemeral_low - LOWEST;
        let offset = std::process::id().wrapping_mul(7_919) % span;
        for _ in 0..span {
            let turn =
                u32::try_from(NEXT.fetch_add(1, Ordering::Relaxed) % span as usize).unwrap_or(0);
            let candidate = LOWEST + (offset + turn) % span;
            let Ok(port) = u16::try_from(candidate) else {
                continue;
            };
            if TcpListener::bind(("127.0.0.1", port)).is_ok() {
                return port;
            }
        }
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local addr").port()
}

/// Writes the PEM files of `tls` into `dir`; the config block naming them.
fn tls_block(dir: &Path, tls: &Tls) -> String {
    let write = |name: &str, pem: &str| {
        let path = dir.join(name);
        std::fs::write(&path, pem).expect("write a TLS file for the server");
        path
    };
    let cert = write("server-cert.pem", &tls.cert_pem);
    let key = write("server-key.pem", &tls.key_pem);
    let mut block = format!(
        "tls {{\n  cert_file: \"{}\"\n  key_file: \"{}\"\n  timeout: 5\n",
        cert.display(),
        key.display()
    );
    if let Some(ca) = &tls.ca_pem {
        let ca = write("ca.pem", ca);
        block.push_str(&format!("  ca_file: \"{}\"\n", ca.display()));
    }
    if tls.verify {
        block.push_str("  verify: true\n");
    }
    block.push_str("}\n");
    block
}

impl NatsServer {
    /// A plain server, for `test`.
    ///
    /// # Panics
    ///
    /// When `nats-server` is not installed ([`require`]), or does not
    /// start.
    pub fn for_test(test: &str) -> Self {
        Self::for_test_with(test, &Config::default())
    }

    /// A server with `config`, for `test`.
    ///
    /// # Panics
    ///
    /// As [`for_test`](Self::for_test).
    pub fn for_test_with(test: &str, config: &Config) -> Self {
        Self::launch(require(test), config)
    }

    /// A plain server for a program that can do without one (not a test):
    /// `None`, after printing how to install it, when `nats-server` is
    /// not installed ([`available`]).
    pub fn start(what: &str) -> Option<Self> {
        Self::start_with(what, &Config::default())
    }

    /// A server with `config` for a program that can do without one, as
    /// [`start`](Self::start).
    pub fn start_with(what: &str, config: &Config) -> Option<Self> {
        available(what).map(|binary| Self::launch(binary, config))
    }

    /// Starts `binary` with `config` and waits until it accepts
    /// connections.
    fn launch(binary: PathBuf, config: &Config) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "codecbus-nats-{}-{}",
            std::process::id(),
            NEXT_DIR.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create the server's temp dir");
        let port = free_port();
        let mut text = format!("listen: 127.0.0.1:{port}\n");
        if let Some(max) = config.max_payload {
            text.push_str(&format!("max_payload: {max}\n"));
        }
        if let Some(token) = &config.token {
            text.push_str(&format!("authorization {{ token: \"{token}\" }}\n"));
        }
        if let Some((user, password)) = &config.user_password {
            text.push_str(&format!(
                "authorization {{ user: \"{user}\", password: \"{password}\" }}\n"
            ));
        }
        if let Some(tls) = &config.tls {
            text.push_str(&tls_block(&dir, tls));
        }
        if config.jetstream {
            let domain = config
                .jetstream_domain
                .as_ref()
                .map(|d| format!(", domain: \"{d}\""))
                .unwrap_or_default();
            text.push_str(&format!(
                "jetstream {{ store_dir: \"{}\"{domain} }}\n",
                dir.join("js").display()
            ));
        }
        if let Some(name) = &config.server_name {
            text.push_str(&format!("server_name: \"{name}\"\n"));
        }
        if let Some(routes) = &config.routes {
            let peers: Vec<String> = routes
                .peers
                .iter()
                .map(|p| format!("\"nats-route://127.0.0.1:{p}\""))
                .collect();
            text.push_str(&format!(
                "cluster {{\n  name: \"{}\"\n  listen: 127.0.0.1:{}\n  routes: [{}]\n}}\n",
                routes.cluster,
                routes.port,
                peers.join(", ")
            ));
        }
        let monitor_port = config.monitor.then(free_port);
        if let Some(http) = monitor_port {
            text.push_str(&format!("http: 127.0.0.1:{http}\n"));
        }
        if let Some(extra) = &config.extra {
            text.push_str(extra);
            text.push('\n');
        }
        std::fs::write(dir.join("server.conf"), text).expect("write the server config");
        let watchdog = Watchdog::start(&dir);
        let mut server = Self {
            binary,
            dir,
            port,
            monitor_port,
            child: None,
            watchdog: Some(watchdog),
        };
        server.spawn_on_free_ports();
        server
    }

    /// The first start: a port found free may be taken by another process
    /// before the server binds it; then the server starts again on other
    /// client and monitoring ports (the routes a cluster's peers name stay).
    fn spawn_on_free_ports(&mut self) {
        for _ in 0..4 {
            match self.try_spawn() {
                Ok(()) => return,
                Err(log) if log.contains("address already in use") => {
                    self.child = None;
                    self.move_ports();
                }
                Err(log) => panic!("{log}"),
            }
        }
        self.spawn();
    }

    /// New client and monitoring ports, written into the config.
    fn move_ports(&mut self) {
        let path = self.dir.join("server.conf");
        let mut text = std::fs::read_to_string(&path).expect("read the server config");
        let port = free_port();
        text = text.replace(
            &format!("listen: 127.0.0.1:{}\n", self.port),
            &format!("listen: 127.0.0.1:{port}\n"),
        );
        self.port = port;
        if let Some(old) = self.monitor_port {
            let http = free_port();
            text = text.replace(
                &format!("http: 127.0.0.1:{old}\n"),
                &format!("http: 127.0.0.1:{http}\n"),
            );
            self.monitor_port = Some(http);
        }
        std::fs::write(&path, text).expect("write the server config");
    }

    fn spawn(&mut self) {
        if let Err(log) = self.try_spawn() {
            panic!("{log}");
        }
    }

    /// Starts the server and waits until it accepts connections; what
    /// went wrong otherwise.
    fn try_spawn(&mut self) -> Result<(), String> {
        let log = std::fs::File::create(self.dir.join("server.log")).expect("server log");
        let child = Command::new(&self.binary)
            .arg("-c")
            .arg(self.dir.join("server.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start nats-server");
        if let Some(watchdog) = &mut self.watchdog {
            watchdog.watch(child.id());
        }
        self.child = Some(child);
        self.wait_ready()
    }

    /// Waits until the server greets a client with its `INFO` line.
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(child) = &mut self.child
                && let Ok(Some(status)) = child.try_wait()
            {
                return Err(format!(
                    "nats-server exited ({status}) before accepting connections:\n{}",
                    self.log()
                ));
            }
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
                let mut buf = [0u8; 4];
                if stream.read_exact(&mut buf).is_ok() && &buf == b"INFO" {
                    return Ok(());
                }
            }
            assert!(
                Instant::now() < deadline,
                "nats-server did not accept connections on port {} within 10 s:\n{}",
                self.port,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The temporary directory of this server.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the server (SIGKILL) and waits for it to exit.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            if let Some(watchdog) = &mut self.watchdog {
                watchdog.watch(0);
            }
        }
    }

    /// Starts the server again on the same port, with the same config.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Starts a killed server again (same port, same config) and waits
    /// until it accepts connections; does nothing while it runs.
    pub fn start_again(&mut self) {
        if self.child.is_none() {
            self.spawn();
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
        if let Some(watchdog) = self.watchdog.take() {
            watchdog.finish();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl NatsServer {
    /// The body of `GET path` on the monitoring endpoint, when the server
    /// has one ([`Config::monitor`]) and answers.
    pub fn monitor(&self, path: &str) -> Option<serde_json::Value> {
        let port = self.monitor_port?;
        self.child.as_ref()?;
        let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
        write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).ok()?;
        let (_, body) = response.split_once("\r\n\r\n")?;
        serde_json::from_str(body).ok()
    }

    /// The clients connected to this server (`/connz`): each one's
    /// connection name and the messages it published (`in_msgs`) and
    /// received (`out_msgs`). Empty when the server is down.
    pub fn connections(&self) -> Vec<ClientConnection> {
        let Some(connz) = self.monitor("/connz?limit=1024") else {
            return Vec::new();
        };
        let list = connz["connections"].as_array().cloned().unwrap_or_default();
        list.iter()
            .map(|c| ClientConnection {
                name: c["name"].as_str().unwrap_or_default().to_owned(),
                in_msgs: c["in_msgs"].as_u64().unwrap_or(0),
                out_msgs: c["out_msgs"].as_u64().unwrap_or(0),
            })
            .collect()
    }

    /// The name of the JetStream meta leader this server knows (`/jsz`),
    /// if it knows one.
    pub fn meta_leader(&self) -> Option<String> {
        let jsz = self.monitor("/jsz")?;
        let leader = jsz["meta_cluster"]["leader"].as_str()?;
        (!leader.is_empty()).then(|| leader.to_owned())
    }
}

/// One client connection of a server, as its monitoring endpoint shows it.
#[derive(Clone, Debug)]
pub struct ClientConnection {
    /// The connection name (`NatsOptions::connection_name`).
    pub name: String,
    /// Messages the client published through this server.
    pub in_msgs: u64,
    /// Messages this server delivered to the client.
    pub out_msgs: u64,
}

/// Three (or more) `nats-server`s on loopback ports joined by routes into
/// one cluster, JetStream clustered across them (each with its own store
/// in its own temporary directory), monitoring on. Each server is a
/// [`NatsServer`]: killed (and its directory removed) on drop, and with
/// the process that started it.
pub struct NatsCluster {
    servers: Vec<NatsServer>,
}

impl NatsCluster {
    /// `count` servers named `s1`, `s2`, ... joined into one cluster, once
    /// every one of them knows the JetStream meta leader.
    ///
    /// # Panics
    ///
    /// When `nats-server` is not installed ([`require`]), when a server
    /// does not start, or when no meta leader is known within 20 s.
    pub fn for_test(test: &str, count: usize) -> Self {
        Self::for_test_with(test, count, &Config::default())
    }

    /// [`for_test`](NatsCluster::for_test) with further settings for every
    /// server (its name, routes, JetStream and monitoring are the
    /// cluster's).
    pub fn for_test_with(test: &str, count: usize, config: &Config) -> Self {
        Self::launch(&require(test), count, config)
    }

    /// [`for_test`](NatsCluster::for_test) for a program that can do
    /// without a cluster (not a test): `None`, after printing how to
    /// install `nats-server`, when it is not installed ([`available`]).
    pub fn start(what: &str, count: usize) -> Option<Self> {
        Self::start_with(what, count, &Config::default())
    }

    /// [`start`](NatsCluster::start) with further settings for every
    /// server.
    pub fn start_with(what: &str, count: usize, config: &Config) -> Option<Self> {
        available(what).map(|binary| Self::launch(&binary, count, config))
    }

    fn launch(binary: &Path, count: usize, config: &Config) -> Self {
        let route_ports: Vec<u16> = (0..count).map(|_| free_port()).collect();
        let mut servers = Vec::with_capacity(count);
        for (i, port) in route_ports.iter().enumerate() {
            let config = Config {
                jetstream: true,
                monitor: true,
                server_name: Some(format!("s{}", i + 1)),
                routes: Some(Routes {
                    cluster: "codecbus-test".to_owned(),
                    port: *port,
                    peers: route_ports.clone(),
                }),
                ..config.clone()
            };
            servers.push(NatsServer::launch(binary.to_owned(), &config));
        }
        let cluster = Self { servers };
        cluster.wait_for_meta_leader();
        cluster
    }

    /// Waits until every running server knows the same JetStream meta
    /// leader.
    ///
    /// # Panics
    ///
    /// When they do not within 20 s.
    pub fn wait_for_meta_leader(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let leaders: Vec<Option<String>> = self
                .servers
                .iter()
                .filter(|s| s.pid().is_some())
                .map(NatsServer::meta_leader)
                .collect();
            if leaders.iter().all(Option::is_some) && leaders.windows(2).all(|w| w[0] == w[1]) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "no JetStream meta leader agreed on within 20 s: {leaders:?}\n{}",
                self.servers[0].log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The client URLs of every server, in order.
    pub fn urls(&self) -> Vec<String> {
        self.servers.iter().map(NatsServer::url).collect()
    }

    /// The client URLs starting with server `first`'s, then the others in
    /// order: a node given this list (keeping its order) connects to
    /// `first` and fails over to the next.
    pub fn urls_from(&self, first: usize) -> Vec<String> {
        let n = self.servers.len();
        (0..n)
            .map(|i| self.servers[(first + i) % n].url())
            .collect()
    }

    /// The servers.
    pub fn servers(&self) -> &[NatsServer] {
        &self.servers
    }

    /// Server `i` (from 0).
    pub fn server(&self, i: usize) -> &NatsServer {
        &self.servers[i]
    }

    /// Server `i` (from 0), to kill and start again.
    pub fn server_mut(&mut self, i: usize) -> &mut NatsServer {
        &mut self.servers[i]
    }

    /// The index of the server named `name` (`s1` is 0).
    pub fn index_of(&self, name: &str) -> Option<usize> {
        let n: usize = name.strip_prefix('s')?.parse().ok()?;
        (1..=self.servers.len()).contains(&n).then(|| n - 1)
    }

    /// The index of the server a client named `connection` is connected
    /// to, if any.
    pub fn server_of(&self, connection: &str) -> Option<usize> {
        self.servers
            .iter()
            .position(|s| s.connections().iter().any(|c| c.name == connection))
    }
}

/// A URL where nothing listens.
pub fn unreachable_url() -> String {
    format!("nats://127.0.0.1:{}", free_port())
}
