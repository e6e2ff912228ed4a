//! The TCP event bus bridge, pinned to Vert.x 3.9.4's frames case by case.
//!
//! `bridge/cases.rs` names the cases, `bridge/runner.rs` runs them as a
//! bridge client, and `bridge/frames/<case>.json` holds what the Vert.x
//! reference (`tests/vertx/ReferenceBridge.java`, started by
//! `scripts/vertx-reference`) answered. With `CODECBUS_BRIDGE_CAPTURE=1`
//! the live test writes those files instead of comparing with them.
#![cfg(feature = "bridge")]

#[path = "bridge/cases.rs"]
mod cases;
#[path = "bridge/runner.rs"]
mod runner;
#[path = "bridge/vertx.rs"]
mod vertx;

/// The Vert.x reference answers every case as its committed fixture says
/// (or, with `CODECBUS_BRIDGE_CAPTURE=1`, writes the fixtures). Needs
/// java, javac and npm, and fails saying how to install what is missing.
#[test]
fn vertx_reference_frames_match_the_fixtures() {
    let reference = vertx::start();
    let capture = std::env::var_os("CODECBUS_BRIDGE_CAPTURE").is_some_and(|v| v == "1");
    let mut differ = Vec::new();
    for case in cases::all() {
        let record = runner::run(&case, reference.tcp);
        if capture {
            runner::write_fixture(&case, &record);
            continue;
        }
        let fixture = runner::read_fixture(&case);
        if record != fixture {
            differ.push(format!(
                "{}: Vert.x answered\n{}\nthe fixture says\n{}",
                case.name,
                serde_json::to_string_pretty(&runner::to_fixture(&case, &record)).unwrap(),
                serde_json::to_string_pretty(&runner::to_fixture(&case, &fixture)).unwrap(),
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n\n"));
}
