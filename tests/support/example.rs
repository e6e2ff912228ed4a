//! Finding an example's binary for the tests that run one as a process,
//! and running it so that it never outlives the test.
// Each test includes this file and uses part of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The example `name`, built by `cargo test` with the other examples, or
/// built here (with `features`) when only the calling test was selected.
pub(crate) fn example(name: &str, features: &[&str]) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps");
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !path.is_file() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "--example", name]);
        if !features.is_empty() {
            build.args(["--features", &features.join(",")]);
        }
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        let status = build
            .status()
            .unwrap_or_else(|e| panic!("run cargo build --example {name}: {e}"));
        assert!(status.success(), "cargo build --example {name} failed");
    }
    path
}

/// Runs `binary` under a small `sh` that kills it when this process's end
/// of its standard input closes: when the [`Supervised`] is dropped, and
/// also when the test process dies any other way (a panic that aborts, a
/// SIGKILL), so no example process outlives the test. The `sh` exits with
/// the example's status, and stops its watcher first (so the watcher never
/// kills a process id the system has given to another process since).
/// `sh` gives a background job `/dev/null` as its standard input, so the
/// pipe is kept as descriptor 3 for the watcher; the watcher writes nowhere,
/// so the example's output reaches end of file when the example exits.
const SUPERVISOR: &str = r#"trap '' INT TERM HUP
exec 3<&0
"$0" "$@" </dev/null 3<&- &
child=$!
(cat <&3; kill -9 "$child") >/dev/null 2>&1 &
watcher=$!
exec 3<&-
wait "$child"
status=$?
kill "$watcher" 2>/dev/null
exit "$status"
"#;

pub(crate) fn supervised(binary: &std::path::Path, args: &[&str]) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(SUPERVISOR)
        .arg(binary)
        .args(args)
        .stdin(Stdio::piped());
    command
}

/// A supervised example process, stopped on drop.
pub(crate) struct Supervised(pub(crate) Child);

impl Drop for Supervised {
    fn drop(&mut self) {
        // Closing its standard input makes the supervisor kill the example.
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}
