//! The Python bridge client from PyPI (`vertx-eventbus-client` 1.0.0), in
//! a virtual environment of its own under the target folder (made once),
//! run against a bridge for one test and ended with it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The client's package and version.
const PACKAGE: &str = "vertx-eventbus-client==1.0.0";

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

/// The virtual environment's python, with the client installed.
///
/// # Panics
///
/// When python3 (with its venv module) is missing, saying how to install
/// it, or pip cannot install the client.
fn python() -> PathBuf {
    let venv = target_dir().join("python-bridge");
    let python = venv.join("bin/python");
    let marker = venv.join(".installed");
    if marker.is_file() {
        return python;
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status();
    assert!(
        made.is_ok_and(|s| s.success()),
        "the Python bridge client needs python3 with venv: apt-get install python3 python3-venv"
    );
    let installed = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            PACKAGE,
        ])
        .status();
    assert!(
        installed.is_ok_and(|s| s.success()),
        "pip could not install {PACKAGE} from PyPI into {}",
        venv.display()
    );
    std::fs::write(&marker, PACKAGE).expect("mark the virtual environment ready");
    python
}

/// Runs `script` (beside this file) with the bridge's `port`; returns what
/// it printed, parsed.
///
/// # Panics
///
/// When the script fails or takes over 60 s (it is killed then).
pub(crate) fn run(script: &str, port: u16) -> serde_json::Value {
    run_with(script, port, &[])
}

/// [`run`] with more arguments after the port.
pub(crate) fn run_with(script: &str, port: u16, args: &[&Path]) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/bridge")
        .join(script);
    let mut child = Command::new(python())
        .arg(&path)
        .arg(port.to_string())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the Python client");
    // Read beside the wait, so that a full pipe never stalls the client.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let until = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("the Python client's status") {
            break Some(status);
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    let status = status.unwrap_or_else(|| panic!("the Python client ran over 60 s: {err}"));
    assert!(
        status.success(),
        "the Python client failed ({status}): {err}"
    );
    serde_json::from_str(out.trim())
        .unwrap_or_else(|e| panic!("the Python client printed {out:?} ({e}); stderr: {err}"))
}
