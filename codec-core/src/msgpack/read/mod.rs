//! The MessagePack reader over a byte slice.
//!
//! Contract: no method panics or allocates on behalf of the input. Every
//! declared length is checked against the bytes left *before* anything is
//! reserved (an array of n values needs at least n bytes, a map 2n), and
//! callers that allocate charge the bytes to the reader's budget first
//! ([`Reader::charge_alloc`]). Nesting is counted by [`Reader::nested`] (and
//! the crate-internal `enter`/`leave` pair generated code uses), which every
//! recursive decoder goes through, so depth is bounded whatever the path
//! (`Option<Box<Self>>`, newtypes, enum payloads).
//!
//! Here: the reader's state, errors, nesting and raw bytes; `values.rs`
//! reads each MessagePack type; `skip.rs` skips values and renders map
//! keys for error paths.
#![forbid(unsafe_code)]

use bytes::Bytes;

use super::kind::ValueKind;
use super::limits::DecodeLimits;
use crate::error::{DecodeError, DecodeErrorKind};

/// Reads MessagePack from a byte slice, enforcing [`DecodeLimits`].
///
/// # Examples
///
/// ```
/// use codecbus_core::Reader;
///
/// let mut r = Reader::new(b"\x92\xa6select\xcd\x07\xd5");
/// assert_eq!(r.read_array_len().unwrap(), 2);
/// assert_eq!(r.read_str().unwrap(), "select");
/// assert_eq!(r.read_u16().unwrap(), 2005);
/// assert!(r.is_empty());
/// ```
#[derive(Debug, Clone)]
pub struct Reader<'de> {
    /// The bytes not yet consumed: always a suffix of `buf`, so a read of
    /// `n` bytes is one length comparison and the position is a subtraction.
    rest: &'de [u8],
    /// The whole input, for positions in errors and for `key_path`.
    buf: &'de [u8],
    depth: u32,
    alloc_left: usize,
    limits: DecodeLimits,
    /// The reference-counted buffer `buf` is the content of, when the
    /// reader was made over one: strings and bytes can then share it.
    shared: Option<&'de Bytes>,
}

macro_rules! narrow {
    ($($name:ident, $other:ident => $ty:ty),*) => {$(
        #[doc = concat!("Reads an integer that must fit in `", stringify!($ty), "`.")]
        ///
        /// # Errors
        ///
        /// A type mismatch for a non-integer, [`DecodeErrorKind::IntegerOutOfRange`]
        /// when the value does not fit.
        #[inline(always)]
        // `try_from` is infallible where the type is wide enough.
        #[allow(irrefutable_let_patterns)]
        pub fn $name(&mut self) -> Result<$ty, DecodeError> {
            // Every form of the type's width, inline: the fixints, `uint`
            // and, for signed types, `int` of 8 and 16 bits, of 32 bits for
            // types of 32 bits or more, of 64 for 64-bit types (the guards
            // fold away, and so do the range checks where the type is wide
            // enough); wider forms holding a small value, and
            // every error, out of line, so that a struct of integers
            // stays small enough to inline where it is read.
            match self.rest {
                &[m @ 0x00..=0x7f, ref tail @ ..] => {
                    self.rest = tail;
                    return Ok(m as $ty);
                }
                &[0xcc, b, ref tail @ ..] => {
                    if let Ok(v) = <$ty>::try_from(b) {
                        self.rest = tail;
                        return Ok(v);
                    }
                }
                &[0xcd, a, b, ref tail @ ..] => {
                    if let Ok(v) = <$ty>::try_from(u16::from_be_bytes([a, b])) {
                        self.rest = tail;
                        return Ok(v);
                    }
                }
                // Signed types only (the guard folds away): a negative
                // fixint, `int 8` and `int 16`.
                &[m @ 0xe0..=0xff, ref tail @ ..] if <$ty>::MIN != 0 => {
                    if let Ok(v) = <$ty>::try_from(m as i8) {
                        self.rest = tail;
                        return Ok(v);
                    }
                }
                &[0xd0, b, ref tail @ ..] if <$ty>::MIN != 0 => {
                    if let Ok(v) = <$ty>::try_from(b as i8) {
                        self.rest = tail;
                        return Ok(v);
                    }
                }
                &[0xd1, a, b, ref tail @ ..] if <$ty>::MIN != 0 && <$ty>::BITS >= 16 => {
                    if let Ok(v) = <$ty>::try_from(i16::from_be_bytes([a, b])) {
                        self.rest = tail;
                        return Ok(v);
                    }
                }
                &[0xce, a, b, c, d, ref tail @ ..] if <$ty>::BITS >= 32 => {
                    if let Ok(v) = <$ty>::try_from(u32::from_be_bytes([a, b, c, d])) {
                        self.rest = tail;
                        return Ok(v);
                    }
                }
                &[0xd2, a, b, c, d, ref tail @ ..] if <$ty>::MIN != 0 && <$ty>::BITS >= 32 => {
                    if let Ok(v) = <$ty>::try_from(i32::from_be_bytes([a, b, c, d])) {
                        self.rest = tail;
                        return Ok(v);
                    }
                }
                &[0xcf, a, b, c, d, e, f, g, h, ref tail @ ..] if <$ty>::BITS >= 64 => {
                    if let Ok(v) = <$ty>::try_from(u64::from_be_bytes([a, b, c, d, e, f, g, h])) {
                        self.rest = tail;
                        return Ok(v);
                    }
                }
                &[0xd3, a, b, c, d, e, f, g, h, ref tail @ ..] if <$ty>::MIN != 0 && <$ty>::BITS >= 64 => {
                    if let Ok(v) = <$ty>::try_from(i64::from_be_bytes([a, b, c, d, e, f, g, h])) {
                        self.rest = tail;
                        return Ok(v);
                    }
                }
                _ => {}
            }
            self.$other()
        }

        #[inline(never)]
        fn $other(&mut self) -> Result<$ty, DecodeError> {
            let at = self.position();
            match self.read_int()? {
                Int::Unsigned(v) => <$ty>::try_from(v).map_err(|_| self.out_of_range(stringify!($ty), at)),
                Int::Negative(v) => <$ty>::try_from(v).map_err(|_| self.out_of_range(stringify!($ty), at)),
            }
        }
    )*};
}

impl<'de> Reader<'de> {
    /// A reader over `buf` with the default limits.
    #[inline]
    pub fn new(buf: &'de [u8]) -> Self {
        Self::with_limits(buf, DecodeLimits::default())
    }

    /// A reader over `buf` with the given limits.
    #[inline]
    pub fn with_limits(buf: &'de [u8], limits: DecodeLimits) -> Self {
        Self {
            rest: buf,
            buf,
            depth: 0,
            alloc_left: limits.max_alloc_bytes,
            limits,
            shared: None,
        }
    }

    /// A reader over a reference-counted buffer (what a NATS message's
    /// payload is): [`SharedStr`](crate::ext::SharedStr) and `bytes::Bytes`
    /// values decoded from it share the buffer instead of copying out of
    /// it, so a message that crossed the wire is decoded without copying
    /// its strings and byte fields.
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::Bytes;
    /// use codecbus_core::{DecodeLimits, Decode, Reader};
    /// use codecbus_core::ext::SharedStr;
    ///
    /// let payload = Bytes::from_static(b"\xa5hello");
    /// let mut r = Reader::shared(&payload, DecodeLimits::default());
    /// let s = SharedStr::decode(&mut r).unwrap();
    /// assert_eq!(s, "hello");
    /// assert_eq!(s.as_ptr(), payload[1..].as_ptr()); // the same memory
    /// ```
    #[inline]
    pub fn shared(buf: &'de Bytes, limits: DecodeLimits) -> Self {
        Self {
            shared: Some(buf),
            ..Self::with_limits(buf, limits)
        }
    }

    /// `part`, a slice of this reader's input, as a `Bytes` that shares the
    /// input's buffer; `None` when the reader is not over a shared buffer
    /// (or `part` is not inside it).
    #[inline]
    pub fn share(&self, part: &[u8]) -> Option<Bytes> {
        let shared = self.shared?;
        let range = shared.as_ptr_range();
        let inside = range.start <= part.as_ptr() && part.as_ptr_range().end <= range.end;
        inside.then(|| shared.slice_ref(part))
    }

    /// The limits in force.
    pub fn limits(&self) -> &DecodeLimits {
        &self.limits
    }

    /// Bytes consumed so far.
    #[inline]
    pub fn position(&self) -> usize {
        self.buf.len() - self.rest.len()
    }

    /// Bytes not yet consumed.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// Whether every byte has been consumed.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// An error of `kind` at the current position.
    #[cold]
    pub fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(kind, self.position())
    }

    #[cold]
    #[inline(never)]
    fn out_of_range(&self, target: &'static str, at: usize) -> DecodeError {
        DecodeError::new(DecodeErrorKind::IntegerOutOfRange { target }, at)
    }

    /// The error for a `Decode::decode_in_place` that returned `Ok` and
    /// left no value, which none of codecbus's decoders does.
    #[cold]
    #[inline(never)]
    pub(crate) fn no_value(&self) -> DecodeError {
        self.error(DecodeErrorKind::Custom)
            .with_detail("the decoder returned no value")
    }

    /// `Truncated` at the current position.
    #[cold]
    #[inline(never)]
    fn eof(&self) -> DecodeError {
        DecodeError::new(DecodeErrorKind::Truncated, self.position())
    }

    /// `Truncated` just past the marker at the current position.
    #[cold]
    #[inline(never)]
    fn eof_after_marker(&self) -> DecodeError {
        DecodeError::new(DecodeErrorKind::Truncated, self.position() + 1)
    }

    /// A type-mismatch error for the value at `at` (whose marker is `marker`).
    #[cold]
    #[inline(never)]
    pub fn mismatch(&self, expected: &'static str, marker: u8, at: usize) -> DecodeError {
        let found = ValueKind::of(marker).name();
        if marker == 0xc1 {
            return DecodeError::new(DecodeErrorKind::InvalidMarker(marker), at);
        }
        DecodeError::new(DecodeErrorKind::TypeMismatch { expected, found }, at)
    }

    /// Runs `f` one level of nesting deeper, so that the depth limit holds
    /// through a hand-written decoder that recurses (a tree, a value that
    /// holds itself). The depth is restored when `f` returns, whatever it
    /// returns.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::DepthLimitExceeded`] when the reader is already at
    /// its depth limit (then `f` is not called); otherwise what `f` returns.
    ///
    /// # Examples
    ///
    /// A hand-written decoder for a nested list, bounded by the limit:
    ///
    /// ```
    /// use codecbus_core::{DecodeError, DecodeErrorKind, DecodeLimits, Reader};
    ///
    /// // Counts how deep `[[[...]]]` goes.
    /// fn depth(r: &mut Reader<'_>) -> Result<u32, DecodeError> {
    ///     let len = r.read_array_len()?;
    ///     let mut deepest = 0;
    ///     for _ in 0..len {
    ///         deepest = deepest.max(r.nested(depth)?);
    ///     }
    ///     Ok(deepest + 1)
    /// }
    ///
    /// assert_eq!(depth(&mut Reader::new(&[0x91, 0x91, 0x90])).unwrap(), 3);
    ///
    /// let limits = DecodeLimits::default().max_depth(2);
    /// let err = depth(&mut Reader::with_limits(&[0x91, 0x91, 0x91, 0x90], limits)).unwrap_err();
    /// assert_eq!(err.kind(), DecodeErrorKind::DepthLimitExceeded);
    /// ```
    #[inline(always)]
    pub fn nested<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<T, DecodeError> {
        self.enter()?;
        let result = f(self);
        self.leave();
        result
    }

    /// Enters one level of nesting; generated code pairs it with
    /// [`leave`](Self::leave) (see `__private::enter_as`). Users have
    /// [`nested`](Self::nested), which cannot be left unpaired.
    #[inline]
    pub(crate) fn enter(&mut self) -> Result<(), DecodeError> {
        self.depth += 1;
        if self.depth > self.limits.max_depth {
            self.depth -= 1;
            return Err(self.error(DecodeErrorKind::DepthLimitExceeded));
        }
        Ok(())
    }

    /// Whether `levels` more levels of nesting fit within the limit, for a
    /// value whose nesting is the same whatever its content (a struct of
    /// scalars): the one comparison [`enter`](Self::enter) would make at
    /// its deepest level, without counting each level in and out.
    #[inline]
    pub(crate) fn fits(&self, levels: u32) -> Result<(), DecodeError> {
        if levels > self.limits.max_depth.saturating_sub(self.depth) {
            return Err(self.error(DecodeErrorKind::DepthLimitExceeded));
        }
        Ok(())
    }

    /// The bytes not yet consumed.
    #[inline(always)]
    pub(crate) fn rest(&self) -> &'de [u8] {
        self.rest
    }

    /// Consumes the bytes before `rest`, a suffix of [`rest`](Self::rest).
    #[inline(always)]
    pub(crate) fn set_rest(&mut self, rest: &'de [u8]) {
        debug_assert!(self.rest.ends_with(rest) && rest.len() <= self.rest.len());
        self.rest = rest;
    }

    /// Leaves one level of nesting (pairs with [`enter`](Self::enter)).
    #[inline]
    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Charges `bytes` against the allocation budget before allocating them.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::AllocLimitExceeded`] when the budget is spent.
    #[inline]
    pub fn charge_alloc(&mut self, bytes: usize) -> Result<(), DecodeError> {
        match self.alloc_left.checked_sub(bytes) {
            Some(left) => {
                self.alloc_left = left;
                Ok(())
            }
            None => Err(self.error(DecodeErrorKind::AllocLimitExceeded)),
        }
    }

    /// The marker byte of the next value, without consuming it.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::Truncated`] at the end of input.
    #[inline]
    pub fn peek(&self) -> Result<u8, DecodeError> {
        match self.rest.first() {
            Some(&b) => Ok(b),
            None => Err(self.eof()),
        }
    }

    /// The kind of the next value, without consuming it.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::Truncated`] at the end of input.
    #[inline]
    pub fn peek_kind(&self) -> Result<ValueKind, DecodeError> {
        self.peek().map(ValueKind::of)
    }

    #[inline]
    fn byte(&mut self) -> Result<u8, DecodeError> {
        match self.rest.split_first() {
            Some((&b, tail)) => {
                self.rest = tail;
                Ok(b)
            }
            None => Err(self.eof()),
        }
    }

    /// Consumes the marker (known to be there) and the `N` bytes after it,
    /// with one length check.
    #[inline(always)]
    fn marked<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        if let Some((_, tail)) = self.rest.split_first()
            && let Some((payload, tail)) = tail.split_first_chunk::<N>()
        {
            self.rest = tail;
            return Ok(*payload);
        }
        Err(self.eof_after_marker())
    }

    /// Consumes exactly `n` bytes.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::Truncated`] when fewer are left.
    #[inline]
    pub fn read_raw(&mut self, n: usize) -> Result<&'de [u8], DecodeError> {
        match self.rest.split_at_checked(n) {
            Some((s, tail)) => {
                self.rest = tail;
                Ok(s)
            }
            None => Err(self.eof()),
        }
    }

    /// Consumes `pattern` if the input continues with exactly these bytes,
    /// and says whether it did. Derived decoders match a pre-encoded map key
    /// (string header and name) this way, without reading it as a string.
    #[inline(always)]
    pub(crate) fn eat_raw(&mut self, pattern: &[u8]) -> bool {
        match self.rest.split_at_checked(pattern.len()) {
            Some((head, tail)) if head == pattern => {
                self.rest = tail;
                true
            }
            _ => false,
        }
    }

    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        match self.rest.split_first_chunk::<N>() {
            Some((a, tail)) => {
                self.rest = tail;
                Ok(*a)
            }
            None => Err(self.eof()),
        }
    }

    #[inline]
    fn be_u8(&mut self) -> Result<usize, DecodeError> {
        Ok(self.byte()? as usize)
    }
    #[inline]
    fn be_u16(&mut self) -> Result<usize, DecodeError> {
        Ok(u16::from_be_bytes(self.array()?) as usize)
    }
    #[inline]
    fn be_u32(&mut self) -> Result<usize, DecodeError> {
        Ok(u32::from_be_bytes(self.array()?) as usize)
    }
}

mod skip;
mod values;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_string_checks_utf8_before_the_budget() {
        let bytes = b"\xa3a\xffb";
        let limits = DecodeLimits::default().max_alloc_bytes(1);
        let err = Reader::with_limits(bytes, limits)
            .read_string()
            .unwrap_err();
        assert_eq!(err.kind(), DecodeErrorKind::InvalidUtf8);
        let err = Reader::new(bytes).read_string().unwrap_err();
        assert_eq!(err.kind(), DecodeErrorKind::InvalidUtf8);
        assert_eq!(err.offset(), 2);

        let err = Reader::with_limits(b"\xa3abc", limits)
            .read_string()
            .unwrap_err();
        assert_eq!(err.kind(), DecodeErrorKind::AllocLimitExceeded);
        let mut r =
            Reader::with_limits(b"\xa3abc\xa1d", DecodeLimits::default().max_alloc_bytes(4));
        assert_eq!(r.read_string().unwrap(), "abc");
        assert_eq!(r.read_string().unwrap(), "d");
        assert_eq!(
            r.read_string().unwrap_err().kind(),
            DecodeErrorKind::Truncated
        );
    }

    #[test]
    fn invalid_utf8_is_located_at_its_byte_whatever_the_header() {
        // "a\xffb" after each string header: 1, 2, 3 and 5 bytes long.
        for (bytes, at) in [
            (&b"\xa3a\xffb"[..], 2),
            (b"\xd9\x03a\xffb", 3),
            (b"\xda\x00\x03a\xffb", 4),
            (b"\xdb\x00\x00\x00\x03a\xffb", 6),
        ] {
            for err in [
                Reader::new(bytes).read_str().map(drop).unwrap_err(),
                Reader::new(bytes).read_string().map(drop).unwrap_err(),
            ] {
                assert_eq!(err.kind(), DecodeErrorKind::InvalidUtf8, "{bytes:x?}");
                assert_eq!(err.offset(), at, "{bytes:x?}");
            }
        }
        // Behind other values, and with the bad byte first.
        let mut r = Reader::new(b"\x01\xd9\x02\xff\x00");
        r.read_u8().unwrap();
        let err = r.read_str().unwrap_err();
        assert_eq!(err.offset(), 3);
        assert_eq!(err.to_string(), "invalid UTF-8 in string (byte 3)");
    }

    #[test]
    fn truncated_payloads_point_past_the_marker() {
        for bytes in [&b"\xcd\x01"[..], b"\xcb\x00\x00", b"\xd9", b"\xdc\x00"] {
            let mut r = Reader::new(bytes);
            let err = match bytes[0] {
                0xcd => r.read_u16().map(drop),
                0xcb => r.read_f64().map(drop),
                0xd9 => r.read_str().map(drop),
                _ => r.read_array_len().map(drop),
            }
            .unwrap_err();
            assert_eq!(err.kind(), DecodeErrorKind::Truncated, "{bytes:x?}");
            assert_eq!(err.offset(), 1, "{bytes:x?}");
        }
    }

    #[test]
    fn nested_restores_the_depth_whatever_happens() {
        let limits = DecodeLimits::default().max_depth(1);
        let mut r = Reader::with_limits(b"\x01\x02", limits);
        assert_eq!(r.nested(|r| r.read_u8()).unwrap(), 1);
        assert_eq!(r.depth, 0);
        let err = r.nested(|r| r.read_str().map(drop)).unwrap_err();
        assert!(matches!(err.kind(), DecodeErrorKind::TypeMismatch { .. }));
        assert_eq!(r.depth, 0);
        let err = r.nested(|r| r.nested(|r| r.read_u8())).unwrap_err();
        assert_eq!(err.kind(), DecodeErrorKind::DepthLimitExceeded);
        assert_eq!(r.depth, 0);
        assert_eq!(r.nested(|r| r.read_u8()).unwrap(), 2);
    }

    #[test]
    fn eat_raw_consumes_only_a_full_match() {
        let mut r = Reader::new(b"\xa2id\x01");
        assert!(!r.eat_raw(b"\xa2ix"));
        assert!(!r.eat_raw(b"\xa2id\x01\x02"));
        assert_eq!(r.position(), 0);
        assert!(r.eat_raw(b"\xa2id"));
        assert_eq!(r.position(), 3);
        assert_eq!(r.read_u8().unwrap(), 1);
        assert!(r.is_empty());
    }
}
