//! The one line of a user's CI: the codecs a program registers, checked
//! against a committed snapshot.

use std::path::Path;

use super::ShapeSet;
use super::check::{Mode, Report, check};

/// The environment variable that blesses an intended change: with it set
/// (to anything but `0`), [`check_snapshot`] writes the program's current
/// shapes to the snapshot instead of failing.
pub const BLESS_VAR: &str = "CODECBUS_BLESS";

impl ShapeSet {
    /// The shapes of every codec registered in this program: each
    /// `#[derive(MessageCodec)]` type without `unregistered`, each
    /// `serde_codec!`, the library's own (see
    /// [`registrations`](crate::registrations)).
    pub fn registered() -> ShapeSet {
        crate::registry::registrations()
            .map(|r| r.shape())
            .collect()
    }
}

/// What [`compare_snapshot`] found.
#[derive(Debug)]
#[non_exhaustive]
pub enum SnapshotCheck {
    /// No snapshot was there: the current shapes were written to it.
    Written,
    /// The check's report: compatible or not, and blessed or not.
    Checked {
        /// The findings.
        report: Report,
        /// Whether the program's shapes differ from the snapshot's.
        changed: bool,
        /// Whether the snapshot was rewritten ([`BLESS_VAR`] was set).
        blessed: bool,
    },
}

/// Checks the codecs registered in this program against the snapshot at
/// `path` in `mode`, for a test: it panics with the findings when a
/// change breaks the snapshot.
///
/// * No file at `path`: the current shapes are written there (commit
///   them), unless the environment variable `CI` is set, where a missing
///   snapshot fails.
/// * With [`CODECBUS_BLESS`](BLESS_VAR) set, the snapshot is rewritten with
///   the current shapes and the check passes: an intended change, to
///   review in the diff and commit.
/// * A compatible change passes, and says on standard error that the
///   snapshot can be blessed to record it.
///
/// The codecs checked are those linked into the calling program: in an
/// integration test of a library, the library's types (refer to the
/// library from the test, `use my_crate as _;`, so that it is linked).
///
/// # Panics
///
/// On a breaking change (the report's table, and how to bless), an
/// unreadable or malformed snapshot (its file, line and column), or a
/// snapshot that cannot be written.
///
/// # Examples
///
/// ```no_run
/// // tests/contract.rs
/// #[test]
/// fn message_types_keep_their_contract() {
///     codecbus_core::shape::check_snapshot(
///         concat!(env!("CARGO_MANIFEST_DIR"), "/codecs.snapshot.json"),
///         codecbus_core::shape::check::Mode::Full,
///     );
/// }
/// ```
#[track_caller]
pub fn check_snapshot(path: impl AsRef<Path>, mode: Mode) {
    let path = path.as_ref();
    match compare_snapshot(path, mode) {
        Ok(SnapshotCheck::Written) => {
            eprintln!(
                "codecbus: wrote the snapshot {} (commit it)",
                path.display()
            );
        }
        Ok(SnapshotCheck::Checked {
            report,
            changed,
            blessed,
        }) => {
            if blessed {
                eprintln!(
                    "codecbus: blessed: {} now holds this program's shapes ({BLESS_VAR} is set)",
                    path.display()
                );
            } else if !report.is_compatible() {
                panic!(
                    "the codecs of this program break the snapshot {} in {} mode:\n\n{report}\n\
                     If the change is intended, run the test again with {BLESS_VAR}=1 and commit \
                     the new snapshot.",
                    path.display(),
                    report.mode
                );
            } else if changed {
                eprintln!(
                    "codecbus: the codecs changed compatibly since the snapshot {}; run with \
                     {BLESS_VAR}=1 to record the change",
                    path.display()
                );
            }
        }
        Err(why) => panic!("{why}"),
    }
}

/// [`check_snapshot`] without the panics: what it found, or why it could
/// not check.
///
/// # Errors
///
/// The snapshot's text when it cannot be read, parsed (file, line and
/// column) or written.
pub fn compare_snapshot(path: &Path, mode: Mode) -> Result<SnapshotCheck, String> {
    let current = ShapeSet::registered();
    let bless = std::env::var_os(BLESS_VAR).is_some_and(|v| !v.is_empty() && v != "0");
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::env::var_os("CI").is_some() && !bless {
                return Err(format!(
                    "{shown}: no snapshot, and CI is set: run the test where you work (it writes \
                     the file) and commit it, or run it with {BLESS_VAR}=1"
                ));
            }
            write(path, &current)?;
            return Ok(SnapshotCheck::Written);
        }
        Err(e) => return Err(format!("{shown}: cannot read the snapshot: {e}")),
    };
    let old = ShapeSet::from_snapshot(&text, &shown).map_err(|e| e.to_string())?;
    let report = check(&old, &current, mode);
    let changed = old != current;
    if bless && changed {
        write(path, &current)?;
    }
    Ok(SnapshotCheck::Checked {
        report,
        changed,
        blessed: bless && changed,
    })
}

fn write(path: &Path, shapes: &ShapeSet) -> Result<(), String> {
    std::fs::write(path, shapes.to_snapshot())
        .map_err(|e| format!("{}: cannot write the snapshot: {e}", path.display()))
}
