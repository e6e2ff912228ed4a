//! Object keys shared within one parse or decode: the objects of an
//! array, whose keys repeat, share one allocation of each key instead of
//! one per member. Used by the MessagePack decoder (one cache per decode)
//! and the JSON text parser (one per thread, kept from parse to parse).

use std::sync::Arc;

/// The keys met last, by a hash of their length and ends: a key is looked
/// for in one slot (one comparison), and a new one takes that slot.
pub(crate) struct KeyCache([Option<Arc<str>>; KEY_SLOTS]);

impl Default for KeyCache {
    fn default() -> Self {
        Self([const { None }; KEY_SLOTS])
    }
}

const KEY_SLOTS: usize = 32;

/// Keys longer than this are not cached (rarely repeated, slower to compare).
const KEY_CACHED_LEN: usize = 32;

impl KeyCache {
    /// `key`, shared with its earlier occurrences in this parse when it
    /// is still in its slot.
    pub(crate) fn get(&mut self, key: &str) -> Arc<str> {
        let bytes = key.as_bytes();
        let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
            return Arc::from(key);
        };
        if bytes.len() > KEY_CACHED_LEN {
            return Arc::from(key);
        }
        let hash =
            bytes.len().wrapping_mul(31) ^ usize::from(first).wrapping_mul(7) ^ usize::from(last);
        let slot = &mut self.0[hash % KEY_SLOTS];
        match slot {
            Some(cached) if **cached == *key => Arc::clone(cached),
            _ => Arc::clone(slot.insert(Arc::from(key))),
        }
    }
}
