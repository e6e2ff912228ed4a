//! The limits a [`Reader`](super::read::Reader) applies to untrusted input.

/// Limits applied while decoding untrusted input.
///
/// The defaults suit messages from other processes on a bus; tighten them
/// for input from outside your system, loosen them for bulk data.
///
/// | limit | default | what it bounds |
/// |---|---|---|
/// | [`max_depth`](Self::max_depth) | 128 | nested arrays, maps, structs, enum payloads, options |
/// | [`max_collection_len`](Self::max_collection_len) | 16 777 216 | elements of one array or pairs of one map |
/// | [`max_alloc_bytes`](Self::max_alloc_bytes) | 1 GiB | bytes reserved for strings and collections in one decode call |
///
/// # Examples
///
/// ```
/// use codecbus_core::{from_slice_with_limits, DecodeErrorKind, DecodeLimits};
///
/// let limits = DecodeLimits::default().max_depth(2);
/// // [[[1]]] is three arrays deep
/// let err = from_slice_with_limits::<Vec<Vec<Vec<u8>>>>(&[0x91, 0x91, 0x91, 0x01], limits)
///     .unwrap_err();
/// assert_eq!(err.kind(), DecodeErrorKind::DepthLimitExceeded);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeLimits {
    pub(super) max_depth: u32,
    pub(super) max_collection_len: usize,
    pub(super) max_alloc_bytes: usize,
}

impl DecodeLimits {
    /// The default nesting limit.
    pub const DEFAULT_MAX_DEPTH: u32 = 128;
    /// The default limit on elements of one collection.
    pub const DEFAULT_MAX_COLLECTION_LEN: usize = 1 << 24;
    /// The default allocation budget of one decode call.
    pub const DEFAULT_MAX_ALLOC_BYTES: usize = 1 << 30;

    /// Sets the nesting limit.
    #[must_use]
    pub fn max_depth(mut self, depth: u32) -> Self {
        self.max_depth = depth;
        self
    }

    /// Sets the limit on elements of one array (pairs of one map).
    #[must_use]
    pub fn max_collection_len(mut self, len: usize) -> Self {
        self.max_collection_len = len;
        self
    }

    /// Sets the allocation budget of one decode call.
    #[must_use]
    pub fn max_alloc_bytes(mut self, bytes: usize) -> Self {
        self.max_alloc_bytes = bytes;
        self
    }

    /// The nesting limit.
    pub fn depth_limit(&self) -> u32 {
        self.max_depth
    }

    /// The limit on elements of one collection.
    pub fn collection_len_limit(&self) -> usize {
        self.max_collection_len
    }

    /// The allocation budget of one decode call.
    pub fn alloc_bytes_limit(&self) -> usize {
        self.max_alloc_bytes
    }
}

impl Default for DecodeLimits {
    fn default() -> Self {
        Self {
            max_depth: Self::DEFAULT_MAX_DEPTH,
            max_collection_len: Self::DEFAULT_MAX_COLLECTION_LEN,
            max_alloc_bytes: Self::DEFAULT_MAX_ALLOC_BYTES,
        }
    }
}
