//! The contract of this crate's message types: every codec linked into
//! this test (the library's, and codecbus's own) checked against the
//! committed snapshot in FULL mode. A breaking change fails here with the
//! findings; `CODECBUS_BLESS=1 cargo test` records an intended one.

use evolving_user as _;

#[test]
fn message_types_keep_their_contract() {
    codecbus::shape::check_snapshot(
        concat!(env!("CARGO_MANIFEST_DIR"), "/codecs.snapshot.json"),
        codecbus::shape::check::Mode::Full,
    );
}
