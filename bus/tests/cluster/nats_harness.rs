//! The test harness's `nats-server` dies with the process that started it,
//! and its directory goes with it, however that process ends: killed with
//! SIGKILL, or exiting without ever dropping the server (as a server kept
//! in a `static` is never dropped).
//!
//! Each case runs this test binary again as a child that starts a server
//! (the ignored test `child_starts_a_server`), reads the server's process
//! id and directory from the child's output, ends the child, and waits for
//! both to be gone.
#![cfg(all(feature = "nats", target_os = "linux"))]

use crate::harness;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How the child ends; the name of the value of `CHILD_ENV`.
const CHILD_ENV: &str = "CODECBUS_HARNESS_CHILD";

/// Run as a child by the tests below (ignored otherwise): starts a server,
/// or a cluster of three, prints `SERVER <pid> <dir>` for each and then
/// `READY`, then ends as `CODECBUS_HARNESS_CHILD` says: `wait` (until
/// killed), `exit` (at once, without dropping the server) or
/// `cluster-wait` (a cluster, until killed).
#[test]
#[ignore = "run as a child process by the other tests of this file"]
fn child_starts_a_server() {
    let how = std::env::var(CHILD_ENV).expect("run by the other tests of this file");
    if how == "cluster-wait" {
        let cluster = harness::NatsCluster::for_test("child_starts_a_server", 3);
        for server in cluster.servers() {
            println!(
                "SERVER {} {}",
                server.pid().expect("running"),
                server.dir().display()
            );
        }
        println!("READY");
        loop {
            std::thread::sleep(Duration::from_secs(60));
        }
    }
    let server = harness::NatsServer::for_test("child_starts_a_server");
    println!(
        "SERVER {} {}",
        server.pid().expect("running"),
        server.dir().display()
    );
    println!("READY");
    match how.as_str() {
        "wait" => loop {
            std::thread::sleep(Duration::from_secs(60));
        },
        "exit" => {
            // What happens to a server in a `static`: never dropped.
            std::mem::forget(server);
            std::process::exit(0);
        }
        other => panic!("unknown {CHILD_ENV} value `{other}`"),
    }
}

/// Ends the child (SIGKILL) when the test fails before it ended.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the child; returns it with its server's process id and
/// directory, once the server accepts connections.
fn child(how: &str) -> (Reaped, u32, PathBuf) {
    let (child, mut servers) = children(how);
    let (pid, dir) = servers.pop().expect("one server");
    (child, pid, dir)
}

/// Starts the child; returns it with the process id and directory of
/// each of its servers, once they accept connections.
fn children(how: &str) -> (Reaped, Vec<(u32, PathBuf)>) {
    let exe = std::env::current_exe().expect("the test binary");
    let mut child = Reaped(
        Command::new(exe)
            .args([
                "--exact",
                // The test's path in the `cluster` binary.
                "nats_harness::child_starts_a_server",
                "--ignored",
                "--nocapture",
            ])
            .env(CHILD_ENV, how)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("run this test binary as a child"),
    );
    let stdout = child.0.stdout.take().expect("piped");
    let mut servers = Vec::new();
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        if line == "READY" {
            break;
        }
        if let Some(rest) = line.strip_prefix("SERVER ") {
            let mut words = rest.split(' ');
            let pid = words.next().and_then(|p| p.parse().ok()).expect("a pid");
            let dir = PathBuf::from(words.next().expect("a directory"));
            servers.push((pid, dir));
        }
    }
    assert!(!servers.is_empty(), "the child printed no server");
    (child, servers)
}

/// Whether process `pid` runs `nats-server` (and has not exited: a zombie
/// waiting for its parent to reap it counts as gone).
fn nats_server_runs(pid: u32) -> bool {
    let proc = PathBuf::from(format!("/proc/{pid}"));
    let Ok(stat) = std::fs::read_to_string(proc.join("stat")) else {
        return false;
    };
    // `pid (comm) state ...`; comm may hold spaces and parentheses.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    let comm = std::fs::read_to_string(proc.join("comm")).unwrap_or_default();
    comm.trim() == "nats-server" && state != Some('Z')
}

/// Waits (at most 10 s) until the server process and its directory are
/// gone; panics naming what is left.
fn assert_gone(pid: u32, dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let runs = nats_server_runs(pid);
        let exists = dir.exists();
        if !runs && !exists {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "left behind: server process {pid} running: {runs}, directory {} exists: {exists}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn server_dies_with_a_killed_process() {
    harness::require("server_dies_with_a_killed_process");
    let (mut child, pid, dir) = child("wait");
    assert!(nats_server_runs(pid), "the child's server {pid} runs");
    assert!(dir.is_dir(), "{} exists", dir.display());
    child.0.kill().expect("SIGKILL the child");
    child.0.wait().expect("reap the child");
    assert_gone(pid, &dir);
}

#[test]
fn server_dies_with_a_process_that_exits_without_dropping_it() {
    harness::require("server_dies_with_a_process_that_exits_without_dropping_it");
    let (mut child, pid, dir) = child("exit");
    let status = child.0.wait().expect("the child exits");
    assert!(status.success(), "the child exited with {status}");
    assert_gone(pid, &dir);
}

#[test]
fn drop_stops_the_server_and_removes_its_directory() {
    let server = harness::NatsServer::for_test("drop_stops_the_server_and_removes_its_directory");
    let pid = server.pid().expect("running");
    let dir = server.dir().to_owned();
    assert!(nats_server_runs(pid) && dir.is_dir());
    drop(server);
    // Drop waits for both: nothing left to poll for.
    assert!(!nats_server_runs(pid), "server {pid} still runs");
    assert!(!dir.exists(), "{} still exists", dir.display());
}

#[test]
fn every_server_of_a_cluster_dies_with_a_killed_process() {
    harness::require("every_server_of_a_cluster_dies_with_a_killed_process");
    let (mut child, servers) = children("cluster-wait");
    assert_eq!(servers.len(), 3, "three servers");
    for (pid, dir) in &servers {
        assert!(nats_server_runs(*pid), "the child's server {pid} runs");
        assert!(dir.is_dir(), "{} exists", dir.display());
    }
    child.0.kill().expect("SIGKILL the child");
    child.0.wait().expect("reap the child");
    for (pid, dir) in &servers {
        assert_gone(*pid, dir);
    }
}

#[test]
fn drop_stops_every_server_of_a_cluster() {
    let cluster = harness::NatsCluster::for_test("drop_stops_every_server_of_a_cluster", 3);
    let servers: Vec<(u32, PathBuf)> = cluster
        .servers()
        .iter()
        .map(|s| (s.pid().expect("running"), s.dir().to_owned()))
        .collect();
    drop(cluster);
    for (pid, dir) in servers {
        assert!(!nats_server_runs(pid), "server {pid} still runs");
        assert!(!dir.exists(), "{} still exists", dir.display());
    }
}
