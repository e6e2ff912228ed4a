//! The immutable JSON value (in progress).
