//! The MessagePack layer: a writer into a `Vec<u8>` and a reader over a
//! slice, both byte-compatible with `rmp`.

pub(crate) mod flat;
pub(crate) mod kind;
pub(crate) mod limits;
pub(crate) mod read;
pub(crate) mod text;
pub(crate) mod write;
