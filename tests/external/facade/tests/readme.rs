//! Every in-process Rust code block of the README, compiled and run.

include!(concat!(env!("OUT_DIR"), "/readme_blocks.rs"));
