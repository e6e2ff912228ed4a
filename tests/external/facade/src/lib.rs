//! The code blocks of the README and of the guide (`book/src/`) run as this
//! crate's tests (`tests/`); this library only holds what they share.

/// What a block's program's `main` returns: nothing, or a `Result`.
pub trait Outcome {
    /// Panics, naming the block, when the program failed.
    fn check(self, block: &str);
}

impl Outcome for () {
    fn check(self, _block: &str) {}
}

impl<E: std::fmt::Debug> Outcome for Result<(), E> {
    fn check(self, block: &str) {
        if let Err(e) = self {
            panic!("{block} failed: {e:?}");
        }
    }
}

/// The `rust,compile_fail` blocks of the README and of the guide: mistakes
/// the compiler refuses, each checked as a `compile_fail` doctest.
#[cfg(doctest)]
pub mod compile_fail {
    include!(concat!(env!("OUT_DIR"), "/guide_compile_fail.rs"));
}
