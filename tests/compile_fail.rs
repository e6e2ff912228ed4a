//! Mistakes in using the bus that the compiler reports on the user's own
//! line: each file under `tests/ui/` holds one, and its `.stderr` the exact
//! diagnostics. trybuild checks compile-fail cases with `cargo check`, so
//! these are errors an editor and `cargo check` show, not only `cargo
//! build`. Regenerate with `TRYBUILD=overwrite cargo test --test
//! compile_fail` after a toolchain update, then read the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
