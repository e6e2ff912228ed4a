//! Arbitrary text read as a shape snapshot: an error or a set, never a
//! panic; a set writes back to a snapshot that reads as the same set and
//! is compatible with itself. Two snapshots separated by a NUL are read
//! without their fingerprints and the second is checked against the
//! first: every finding's witness is refused or misread by its reader,
//! and where nothing was found the readers take the writers' samples
//! (`codecbus_core::__fuzz::snapshot`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    codecbus_core::__fuzz::snapshot(data);
});
