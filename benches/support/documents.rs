//! The JSON documents in `data/json/` (see its README), read whole.

use std::path::PathBuf;

/// The names of the documents, without `.json`.
pub(crate) const NAMES: [&str; 3] = ["twitter", "citm_catalog", "canada"];

/// Every document as `(name, text)`.
///
/// # Panics
///
/// When one cannot be read: a benchmark without its data is an error, not
/// a skipped case.
pub(crate) fn all() -> Vec<(&'static str, String)> {
    // This file is compiled into the benches of `codecbus-benches` (benches/).
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/json");
    NAMES
        .into_iter()
        .map(|name| {
            let path = dir.join(format!("{name}.json"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            (name, text)
        })
        .collect()
}
