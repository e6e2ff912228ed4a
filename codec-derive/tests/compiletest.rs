//! Compile-fail tests: each file under `tests/ui/<category>/` holds one
//! mistake, and its `.stderr` the exact diagnostics. Regenerate with
//! `TRYBUILD=overwrite cargo test -p codecbus-derive --test compiletest` after
//! a toolchain update, then read the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/**/*.rs");
}
