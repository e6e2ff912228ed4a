//! Finding an example's binary for the tests that run one as a process.

use std::path::PathBuf;
use std::process::Command;

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
