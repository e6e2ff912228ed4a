//! The hasher of address-keyed maps.

use std::hash::Hasher;

/// FxHash (rustc's hasher) for address lookups on the hot path: a few
/// nanoseconds for a short address where SipHash takes tens. Keys are
/// only inserted by consumer registration in this process, so hash
/// flooding is not a concern.
#[derive(Default, Clone, Copy)]
pub(crate) struct AddressHasher(u64);

impl Hasher for AddressHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0xf135_7aea_2e62_a9c5;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
        }
        for &byte in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(byte)).wrapping_mul(K);
        }
    }

    #[inline]
    fn write_u8(&mut self, byte: u8) {
        self.write(&[byte]);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}
