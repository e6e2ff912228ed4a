//! A child process the tests start and always stop: it runs in a process
//! group of its own, and dropping the [`Running`] (at the end of the test or
//! while a failing test unwinds) kills the whole group, so neither the
//! process nor anything it started outlives the test.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A started process, its standard output read line by line.
pub(crate) struct Running {
    name: String,
    child: Child,
    lines: mpsc::Receiver<String>,
    stdout: Vec<String>,
    stderr: Arc<Mutex<String>>,
}

impl Running {
    /// Starts `program` with `args` in a new process group.
    pub(crate) fn start(program: &Path, args: &[&str]) -> Running {
        let name = program.file_name().map_or_else(
            || program.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
        let stdout = child.stdout.take().expect("stdout");
        let (lines_tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = lines_tx.send(line);
            }
        });
        let mut stderr_pipe = child.stderr.take().expect("stderr");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .expect("stderr buffer")
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Running {
            name,
            child,
            lines,
            stdout: Vec::new(),
            stderr,
        }
    }

    /// What the process wrote so far, for a failure message.
    pub(crate) fn output(&mut self) -> String {
        self.stdout.extend(self.lines.try_iter());
        format!(
            "{} stdout:\n{}\n{} stderr:\n{}",
            self.name,
            self.stdout.join("\n"),
            self.name,
            self.stderr.lock().expect("stderr buffer")
        )
    }

    /// The first line of standard output that starts with `prefix`, waiting
    /// up to `timeout` for it.
    pub(crate) fn line_starting(&mut self, prefix: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.stdout.push(line.clone());
                    if line.starts_with(prefix) {
                        return line;
                    }
                }
                Err(_) => {
                    let status = self.child.try_wait().ok().flatten();
                    let output = self.output();
                    panic!(
                        "{} printed no line starting with {prefix:?} within {timeout:?} \
                         (exit status: {status:?})\n{output}",
                        self.name
                    );
                }
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // The group's id is the child's pid (process_group(0)); the whole
        // group goes, helpers the process started included.
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `program` with `args` to its end (a run expected to fail fast, on
/// bad flags or a taken port): its exit code and standard error.
pub(crate) fn run_to_end(program: &Path, args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", program.display()));
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A loopback port that was free a moment ago.
pub(crate) fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("local address").port()
}

/// The body of `url` (plain HTTP), which must answer 200.
pub(crate) fn http_get(url: &str) -> String {
    let mut response = ureq::get(url)
        .call()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    response
        .body_mut()
        .read_to_string()
        .unwrap_or_else(|e| panic!("read the body of {url}: {e}"))
}

/// The value of the sample `name` with exactly the labels `labels` in
/// Prometheus text, if there is one.
pub(crate) fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut wanted: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    wanted.sort();
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let rest = line.strip_prefix(name)?;
            let (found, value) = match rest.strip_prefix('{') {
                Some(rest) => {
                    let (inside, value) = rest.split_once('}')?;
                    let mut found: Vec<String> = inside
                        .split(',')
                        .filter(|l| !l.is_empty())
                        .map(str::to_owned)
                        .collect();
                    found.sort();
                    (found, value)
                }
                None if rest.starts_with(' ') => (Vec::new(), rest),
                None => return None,
            };
            if found != wanted {
                return None;
            }
            value.split_whitespace().next()?.parse().ok()
        })
}
