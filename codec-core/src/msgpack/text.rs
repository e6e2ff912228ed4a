//! Strings' bytes checked as UTF-8, with ASCII, the common case of short
//! keys, names and codes, checked inline: `str::from_utf8` is a call with
//! a set-up that costs more than a short string's check (45% of the
//! decode of a dataset of short strings, borrowed).

use std::str::Utf8Error;

/// `bytes` as text, as `str::from_utf8` says.
#[inline(always)]
pub(crate) fn utf8(bytes: &[u8]) -> Result<&str, Utf8Error> {
    if bytes.is_ascii() {
        // SAFETY: every byte is below 0x80, and a sequence of such bytes
        // is valid UTF-8 (each is a character of its own).
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::utf8;

    proptest! {
        /// The same answer as `str::from_utf8`, on ASCII, on text, on
        /// anything.
        #[test]
        fn agrees_with_from_utf8(
            ascii in proptest::collection::vec(0u8..0x80, 0..100),
            text in ".{0,40}",
            any in proptest::collection::vec(any::<u8>(), 0..100),
        ) {
            for bytes in [&ascii[..], text.as_bytes(), &any[..]] {
                prop_assert_eq!(utf8(bytes), std::str::from_utf8(bytes));
            }
        }
    }
}
