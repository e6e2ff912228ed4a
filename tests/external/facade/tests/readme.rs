//! Every in-process Rust code block of the README and of the guide
//! (`book/src/*.md`), compiled and run, one test per block.

include!(concat!(env!("OUT_DIR"), "/readme_blocks.rs"));
