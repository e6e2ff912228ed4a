//! `codecbus`, the command line: `codecbus schema diff`, the compatibility
//! check of shape snapshots (`codecbus::shape::check`) for scripts and CI;
//! `codecbus tap` (feature `nats`), the traffic of bus addresses on NATS as
//! JSON, for people and scripts.
//!
//! ```text
//! codecbus schema diff OLD... NEW [--mode MODE] [--format table|json]
//! codecbus tap ADDRESS [--server URL]... [--shapes SNAPSHOT]... [--json] [--count N] [--for SECONDS]
//! ```
//!
//! Exit status of `schema diff`: 0 when NEW is compatible, 1 when
//! something breaks, 2 for bad input or usage. Of `tap`: 0 when it
//! stopped as asked (`--count`, `--for`, the connection closed), 2 for bad
//! input or usage or a failed connection.

#[cfg(feature = "nats")]
mod tap;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use codecbus::shape::ShapeSet;
use codecbus::shape::check::{Mode, check_history};

const USAGE: &str = "\
usage: codecbus schema diff OLD... NEW [--mode MODE] [--format table|json]
       codecbus tap ADDRESS [options]   (codecbus tap --help)

Checks the shape snapshot NEW against OLD: the snapshots of earlier builds,
oldest first (a folder stands for the .json files in it, sorted by name).

  --mode MODE      backward (the default): new readers read old data;
                   forward: old readers read new data; full: both;
                   backward-transitive, forward-transitive, full-transitive:
                   the same against every OLD, not only the last
  --format FORMAT  table (the default), or json

Exit status: 0 compatible, 1 incompatible, 2 bad input or usage.";

/// What went wrong before a check could run: exit status 2.
pub(crate) struct Usage(pub(crate) String);

/// The words of a command line after its command, read one at a time:
/// an option takes its value as `--name value` or `--name=value`.
pub(crate) struct Words {
    args: std::vec::IntoIter<OsString>,
    /// The command's usage, shown with a mistake.
    usage: &'static str,
}

/// One word of a command line.
pub(crate) struct Word {
    /// The word as given.
    pub(crate) text: String,
    /// The option it names (the text before `=` of `--name=value`), or
    /// the whole word.
    pub(crate) option: String,
    /// The value given after `=`.
    inline: Option<String>,
}

impl Words {
    pub(crate) fn new(args: Vec<OsString>, usage: &'static str) -> Self {
        Self {
            args: args.into_iter(),
            usage,
        }
    }

    /// The next word.
    pub(crate) fn next(&mut self) -> Option<Word> {
        let text = self.args.next()?.to_string_lossy().into_owned();
        let (option, inline) = match text.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o.to_owned(), Some(v.to_owned())),
            _ => (text.clone(), None),
        };
        Some(Word {
            text,
            option,
            inline,
        })
    }

    /// The value of `word`'s option: given after its `=`, or the next word.
    pub(crate) fn value(&mut self, word: &Word) -> Result<String, Usage> {
        match &word.inline {
            Some(v) => Ok(v.clone()),
            None => self
                .args
                .next()
                .map(|v| v.to_string_lossy().into_owned())
                .ok_or_else(|| Usage(format!("{} needs a value\n{}", word.option, self.usage))),
        }
    }
}

fn main() -> ExitCode {
    match run(std::env::args_os().skip(1).collect()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(Usage(message)) => {
            eprintln!("codecbus: {message}");
            ExitCode::from(2)
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Table,
    Json,
}

/// Runs the command; `Ok(compatible)`.
fn run(args: Vec<OsString>) -> Result<bool, Usage> {
    if args.first().is_some_and(|a| a == "tap") {
        #[cfg(feature = "nats")]
        return tap::run(args.into_iter().skip(1).collect()).map(|()| true);
        #[cfg(not(feature = "nats"))]
        return Err(Usage(
            "`codecbus tap` needs the feature `nats`: cargo install codecbus --features nats"
                .to_owned(),
        ));
    }
    let mut args = args.into_iter();
    let mut command = Vec::new();
    for _ in 0..2 {
        match args.next() {
            Some(a) if a == "-h" || a == "--help" => {
                println!("{USAGE}");
                return Ok(true);
            }
            Some(a) => command.push(a.to_string_lossy().into_owned()),
            None => break,
        }
    }
    if command != ["schema", "diff"] {
        return Err(Usage(format!(
            "unknown command `{}`\n{USAGE}",
            command.join(" ")
        )));
    }

    let mut mode = Mode::Backward;
    let mut format = Format::Table;
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut words = Words::new(args.collect(), USAGE);
    while let Some(word) = words.next() {
        match word.option.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(true);
            }
            "--mode" => {
                let v = words.value(&word)?;
                mode = Mode::parse(&v).ok_or_else(|| {
                    Usage(format!(
                        "unknown mode `{v}`: backward, forward, full, backward-transitive, \
                         forward-transitive or full-transitive"
                    ))
                })?;
            }
            "--format" => {
                format = match words.value(&word)?.as_str() {
                    "table" => Format::Table,
                    "json" => Format::Json,
                    other => {
                        return Err(Usage(format!("unknown format `{other}`: table or json")));
                    }
                }
            }
            o if o.starts_with('-') && o.len() > 1 => {
                return Err(Usage(format!("unknown option `{o}`\n{USAGE}")));
            }
            _ => paths.push(PathBuf::from(&word.text)),
        }
    }
    let Some(new_path) = paths.pop() else {
        return Err(Usage(format!("no snapshot given\n{USAGE}")));
    };
    if paths.is_empty() {
        return Err(Usage(format!(
            "no OLD snapshot given: NEW is checked against at least one\n{USAGE}"
        )));
    }
    if new_path.is_dir() {
        return Err(Usage(format!(
            "{}: NEW is one snapshot file, not a folder",
            new_path.display()
        )));
    }

    let mut old_files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let files = snapshots_in(&path)?;
            if files.is_empty() {
                return Err(Usage(format!(
                    "{}: no .json snapshot in this folder",
                    path.display()
                )));
            }
            old_files.extend(files);
        } else {
            old_files.push(path);
        }
    }
    let history = old_files
        .iter()
        .map(|p| read(p))
        .collect::<Result<Vec<_>, _>>()?;
    let new = read(&new_path)?;

    let report = check_history(&history, &new, mode);
    match format {
        Format::Json => println!("{}", report.to_json()),
        Format::Table => {
            print!("{report}");
            if report.snapshots > 1 && !report.is_compatible() {
                println!();
                for (i, file) in old_files.iter().enumerate() {
                    println!("snapshot {i}: {}", file.display());
                }
            }
        }
    }
    Ok(report.is_compatible())
}

/// The `.json` files of a folder, sorted by name.
pub(crate) fn snapshots_in(dir: &Path) -> Result<Vec<PathBuf>, Usage> {
    let entries = std::fs::read_dir(dir).map_err(|e| Usage(format!("{}: {e}", dir.display())))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| Usage(format!("{}: {e}", dir.display())))?
            .path();
        if path.is_file() && path.extension().is_some_and(|x| x == "json") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Reads the snapshot at `path`.
pub(crate) fn read(path: &Path) -> Result<ShapeSet, Usage> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| Usage(format!("{name}: {e}")))?;
    ShapeSet::from_snapshot(&text, &name).map_err(|e| Usage(e.to_string()))
}
