//! `MessageCodec` for standard types.

mod primitive;
