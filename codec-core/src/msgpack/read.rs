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
#![forbid(unsafe_code)]

use super::kind::{Int, StructHeader, ValueKind};
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
}

macro_rules! narrow {
    ($($name:ident => $ty:ty),*) => {$(
        #[doc = concat!("Reads an integer that must fit in `", stringify!($ty), "`.")]
        ///
        /// # Errors
        ///
        /// A type mismatch for a non-integer, [`DecodeErrorKind::IntegerOutOfRange`]
        /// when the value does not fit.
        #[inline(always)]
        pub fn $name(&mut self) -> Result<$ty, DecodeError> {
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
        }
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
    /// [`leave`](Self::leave) (see `__private::enter`). Users have
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

    /// Consumes a `nil`.
    ///
    /// # Errors
    ///
    /// A type mismatch for anything else.
    #[inline]
    pub fn read_nil(&mut self) -> Result<(), DecodeError> {
        let at = self.position();
        match self.byte()? {
            0xc0 => Ok(()),
            m => Err(self.mismatch("nil", m, at)),
        }
    }

    /// Consumes a `nil` if one is next and says whether it did.
    #[inline]
    pub fn try_read_nil(&mut self) -> bool {
        match self.rest.split_first() {
            Some((0xc0, tail)) => {
                self.rest = tail;
                true
            }
            _ => false,
        }
    }

    /// Reads a boolean.
    ///
    /// # Errors
    ///
    /// A type mismatch for anything else.
    #[inline(always)]
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        match self.rest.split_first() {
            Some((0xc2, tail)) => {
                self.rest = tail;
                Ok(false)
            }
            Some((0xc3, tail)) => {
                self.rest = tail;
                Ok(true)
            }
            Some((&m, _)) => Err(self.mismatch("boolean", m, self.position())),
            None => Err(self.eof()),
        }
    }

    /// Reads any integer form.
    ///
    /// # Errors
    ///
    /// A type mismatch for a non-integer; truncation.
    #[inline(always)]
    pub fn read_int(&mut self) -> Result<Int, DecodeError> {
        let Some((&m, tail)) = self.rest.split_first() else {
            return Err(self.eof());
        };
        Ok(match m {
            0x00..=0x7f => {
                self.rest = tail;
                Int::Unsigned(m as u64)
            }
            0xe0..=0xff => {
                self.rest = tail;
                Int::Negative(m as i8 as i64)
            }
            0xcc => Int::Unsigned(u8::from_be_bytes(self.marked()?) as u64),
            0xcd => Int::Unsigned(u16::from_be_bytes(self.marked()?) as u64),
            0xce => Int::Unsigned(u32::from_be_bytes(self.marked()?) as u64),
            0xcf => Int::Unsigned(u64::from_be_bytes(self.marked()?)),
            0xd0 => signed(i8::from_be_bytes(self.marked()?) as i64),
            0xd1 => signed(i16::from_be_bytes(self.marked()?) as i64),
            0xd2 => signed(i32::from_be_bytes(self.marked()?) as i64),
            0xd3 => signed(i64::from_be_bytes(self.marked()?)),
            m => return Err(self.mismatch("integer", m, self.position())),
        })
    }

    narrow!(read_u8 => u8, read_u16 => u16, read_u32 => u32, read_u64 => u64, read_usize => usize);
    narrow!(read_i8 => i8, read_i16 => i16, read_i32 => i32, read_i64 => i64, read_isize => isize);

    /// Reads a float; integers are accepted and converted, as `rmp-serde`
    /// does.
    ///
    /// # Errors
    ///
    /// A type mismatch for anything but a number.
    #[inline(always)]
    pub fn read_f64(&mut self) -> Result<f64, DecodeError> {
        // `float 64`, what every encoder here writes for an `f64`: one
        // length check and no other branch, the rest out of line.
        if let Some((&0xcb, tail)) = self.rest.split_first()
            && let Some((bits, tail)) = tail.split_first_chunk::<8>()
        {
            self.rest = tail;
            return Ok(f64::from_bits(u64::from_be_bytes(*bits)));
        }
        self.read_f64_other()
    }

    #[inline(never)]
    fn read_f64_other(&mut self) -> Result<f64, DecodeError> {
        match self.peek()? {
            0xcb => Ok(f64::from_bits(u64::from_be_bytes(self.marked()?))),
            0xca => Ok(f32::from_bits(u32::from_be_bytes(self.marked()?)) as f64),
            m if ValueKind::of(m) == ValueKind::Int => Ok(match self.read_int()? {
                Int::Unsigned(v) => v as f64,
                Int::Negative(v) => v as f64,
            }),
            m => Err(self.mismatch("float", m, self.position())),
        }
    }

    /// Reads a float as `f32` (a `float 64` is narrowed, as `rmp-serde` does).
    ///
    /// # Errors
    ///
    /// A type mismatch for anything but a number.
    #[inline]
    pub fn read_f32(&mut self) -> Result<f32, DecodeError> {
        if self.peek()? == 0xca {
            return Ok(f32::from_bits(u32::from_be_bytes(self.marked()?)));
        }
        self.read_f64().map(|v| v as f32)
    }

    /// Reads a string header and returns its byte length (checked against
    /// the input).
    ///
    /// # Errors
    ///
    /// A type mismatch; [`DecodeErrorKind::LengthOverflow`] when the length
    /// exceeds the bytes left.
    #[inline(always)]
    pub fn read_str_len(&mut self) -> Result<usize, DecodeError> {
        let at = self.position();
        let Some((&m, tail)) = self.rest.split_first() else {
            return Err(self.eof());
        };
        let len = match m {
            0xa0..=0xbf => {
                self.rest = tail;
                (m & 0x1f) as usize
            }
            0xd9 => u8::from_be_bytes(self.marked()?) as usize,
            0xda => u16::from_be_bytes(self.marked()?) as usize,
            0xdb => u32::from_be_bytes(self.marked()?) as usize,
            m => return Err(self.mismatch("string", m, at)),
        };
        self.check_bytes(len, at)
    }

    #[inline]
    fn check_bytes(&self, len: usize, at: usize) -> Result<usize, DecodeError> {
        if len > self.rest.len() {
            return Err(Self::length_error(len, at));
        }
        Ok(len)
    }

    #[cold]
    #[inline(never)]
    fn length_error(len: usize, at: usize) -> DecodeError {
        DecodeError::new(
            if len > u32::MAX as usize / 2 {
                DecodeErrorKind::LengthOverflow
            } else {
                DecodeErrorKind::Truncated
            },
            at,
        )
    }

    /// Reads a string's bytes without checking UTF-8 (for matching keys).
    ///
    /// # Errors
    ///
    /// As [`read_str_len`](Self::read_str_len).
    #[inline(always)]
    pub fn read_str_bytes(&mut self) -> Result<&'de [u8], DecodeError> {
        let len = self.read_str_len()?;
        self.read_raw(len)
    }

    /// `data_at` is the offset of the string's first data byte (after its
    /// header, which is 1, 2, 3 or 5 bytes long): the error is at the first
    /// byte that is not valid UTF-8.
    #[cold]
    #[inline(never)]
    fn utf8_error(data_at: usize, e: std::str::Utf8Error) -> DecodeError {
        DecodeError::new(DecodeErrorKind::InvalidUtf8, data_at + e.valid_up_to()).with_source(e)
    }

    /// Reads a string, borrowed from the input.
    ///
    /// # Errors
    ///
    /// As [`read_str_len`](Self::read_str_len); [`DecodeErrorKind::InvalidUtf8`].
    #[inline(always)]
    pub fn read_str(&mut self) -> Result<&'de str, DecodeError> {
        let len = self.read_str_len()?;
        let data_at = self.position();
        let bytes = self.read_raw(len)?;
        std::str::from_utf8(bytes).map_err(|e| Self::utf8_error(data_at, e))
    }

    /// Reads a string into a new `String`, charging its length to the
    /// allocation budget.
    ///
    /// Errors are those of [`read_str`](Self::read_str) followed by
    /// [`charge_alloc`](Self::charge_alloc), in that order.
    ///
    /// # Errors
    ///
    /// As [`read_str`](Self::read_str); [`DecodeErrorKind::AllocLimitExceeded`].
    #[inline(always)]
    pub fn read_string(&mut self) -> Result<String, DecodeError> {
        // The input is checked, then copied. Checking a fresh copy instead
        // (aligned, so `from_utf8` starts word by word) made the check load
        // what the copy had just stored in other widths, a store-forwarding
        // stall each: `from_utf8` took 18% of the SQL request's decode
        // against 11% when it reads the input.
        let s = self.read_str()?;
        self.charge_alloc(s.len())?;
        Ok(s.to_owned())
    }

    /// Reads a `bin` value (a string is accepted too), borrowed.
    ///
    /// # Errors
    ///
    /// A type mismatch; truncation; [`DecodeErrorKind::LengthOverflow`].
    #[inline]
    pub fn read_bin(&mut self) -> Result<&'de [u8], DecodeError> {
        let at = self.position();
        let len = match self.peek()? {
            0xc4 => u8::from_be_bytes(self.marked()?) as usize,
            0xc5 => u16::from_be_bytes(self.marked()?) as usize,
            0xc6 => u32::from_be_bytes(self.marked()?) as usize,
            m if ValueKind::of(m) == ValueKind::Str => self.read_str_len()?,
            m => return Err(self.mismatch("binary", m, at)),
        };
        let len = self.check_bytes(len, at)?;
        self.read_raw(len)
    }

    #[inline(always)]
    fn check_count(&self, count: usize, per_item: usize, at: usize) -> Result<usize, DecodeError> {
        if count <= self.limits.max_collection_len
            && count
                .checked_mul(per_item)
                .is_some_and(|min| min <= self.rest.len())
        {
            return Ok(count);
        }
        Err(self.count_error(count, at))
    }

    #[cold]
    #[inline(never)]
    fn count_error(&self, count: usize, at: usize) -> DecodeError {
        if count > self.limits.max_collection_len {
            return DecodeError::new(DecodeErrorKind::LengthOverflow, at).with_detail(format!(
                "{count} elements, limit {}",
                self.limits.max_collection_len
            ));
        }
        DecodeError::new(DecodeErrorKind::LengthOverflow, at).with_detail(format!(
            "{count} elements declared, {} bytes left",
            self.remaining()
        ))
    }

    /// Reads an array header; the count is checked against the bytes left
    /// (each element needs at least one) and the collection limit.
    ///
    /// # Errors
    ///
    /// A type mismatch; [`DecodeErrorKind::LengthOverflow`].
    #[inline(always)]
    pub fn read_array_len(&mut self) -> Result<usize, DecodeError> {
        let at = self.position();
        let Some((&m, tail)) = self.rest.split_first() else {
            return Err(self.eof());
        };
        let len = match m {
            0x90..=0x9f => {
                self.rest = tail;
                (m & 0x0f) as usize
            }
            0xdc => u16::from_be_bytes(self.marked()?) as usize,
            0xdd => u32::from_be_bytes(self.marked()?) as usize,
            m => return Err(self.mismatch("array", m, at)),
        };
        self.check_count(len, 1, at)
    }

    /// Reads a map header; the pair count is checked against the bytes left
    /// (each pair needs at least two) and the collection limit.
    ///
    /// # Errors
    ///
    /// A type mismatch; [`DecodeErrorKind::LengthOverflow`].
    #[inline(always)]
    pub fn read_map_len(&mut self) -> Result<usize, DecodeError> {
        let at = self.position();
        let Some((&m, tail)) = self.rest.split_first() else {
            return Err(self.eof());
        };
        let len = match m {
            0x80..=0x8f => {
                self.rest = tail;
                (m & 0x0f) as usize
            }
            0xde => u16::from_be_bytes(self.marked()?) as usize,
            0xdf => u32::from_be_bytes(self.marked()?) as usize,
            m => return Err(self.mismatch("map", m, at)),
        };
        self.check_count(len, 2, at)
    }

    /// Reads the header of a struct: a map (by field name) or an array
    /// (positional).
    #[inline(always)]
    pub(crate) fn read_struct_header(&mut self) -> Result<StructHeader, DecodeError> {
        match self.peek()? {
            0x80..=0x8f | 0xde | 0xdf => Ok(StructHeader::Map(self.read_map_len()?)),
            0x90..=0x9f | 0xdc | 0xdd => Ok(StructHeader::Array(self.read_array_len()?)),
            m => Err(self.mismatch("map or array", m, self.position())),
        }
    }

    /// Reads an extension value: its type id and payload, borrowed.
    ///
    /// # Errors
    ///
    /// A type mismatch; truncation; [`DecodeErrorKind::LengthOverflow`].
    #[inline]
    pub fn read_ext(&mut self) -> Result<(i8, &'de [u8]), DecodeError> {
        let at = self.position();
        let len = match self.byte()? {
            0xd4 => 1,
            0xd5 => 2,
            0xd6 => 4,
            0xd7 => 8,
            0xd8 => 16,
            0xc7 => self.be_u8()?,
            0xc8 => self.be_u16()?,
            0xc9 => self.be_u32()?,
            m => return Err(self.mismatch("extension", m, at)),
        };
        let ty = self.byte()? as i8;
        let len = self.check_bytes(len, at)?;
        Ok((ty, self.read_raw(len)?))
    }

    /// Adds the map key that starts at byte `key_at` to `err`'s path, as
    /// text: a string as it is, any other key as its textual form (see
    /// [`write_key_text`](Self::write_key_text)). A key that cannot be read
    /// again adds nothing, leaving the map's own location.
    #[cold]
    pub(crate) fn key_path(&self, err: DecodeError, key_at: usize) -> DecodeError {
        let mut probe = self.clone();
        probe.rest = self.buf.get(key_at..).unwrap_or_default();
        let mut text = String::new();
        match probe.write_key_text(&mut text, true) {
            Ok(()) => err.in_key(text),
            Err(_) => err,
        }
    }

    /// Appends the text of the value at the reader's position, for a map
    /// key in a path: a string as it is (invalid UTF-8 replaced), an
    /// integer in decimal, a float as Rust prints it, `true`/`false`,
    /// `null`, `bin` as lowercase hex, an extension as `type:hex`. Arrays
    /// and maps are written like JSON (`[1,"a"]`, `{"k":2}`), their strings
    /// quoted; they count against the depth limit.
    #[cold]
    fn write_key_text(&mut self, out: &mut String, top: bool) -> Result<(), DecodeError> {
        use std::fmt::Write as _;
        let m = self.peek()?;
        match ValueKind::of(m) {
            ValueKind::Nil => {
                self.read_nil()?;
                out.push_str("null");
            }
            ValueKind::Bool => out.push_str(if self.read_bool()? { "true" } else { "false" }),
            ValueKind::Int => match self.read_int()? {
                Int::Unsigned(v) => {
                    let _ = write!(out, "{v}");
                }
                Int::Negative(v) => {
                    let _ = write!(out, "{v}");
                }
            },
            ValueKind::Float if m == 0xca => {
                let _ = write!(out, "{}", self.read_f32()?);
            }
            ValueKind::Float => {
                let _ = write!(out, "{}", self.read_f64()?);
            }
            ValueKind::Str => {
                let text = String::from_utf8_lossy(self.read_str_bytes()?);
                if top {
                    out.push_str(&text);
                } else {
                    let _ = write!(out, "{text:?}");
                }
            }
            ValueKind::Bin => hex(out, self.read_bin()?),
            ValueKind::Ext => {
                let (ty, data) = self.read_ext()?;
                let _ = write!(out, "{ty}:");
                hex(out, data);
            }
            ValueKind::Array => {
                self.enter()?;
                let len = self.read_array_len()?;
                out.push('[');
                for i in 0..len {
                    if i > 0 {
                        out.push(',');
                    }
                    self.write_key_text(out, false)?;
                }
                out.push(']');
                self.leave();
            }
            ValueKind::Map => {
                self.enter()?;
                let len = self.read_map_len()?;
                out.push('{');
                for i in 0..len {
                    if i > 0 {
                        out.push(',');
                    }
                    self.write_key_text(out, false)?;
                    out.push(':');
                    self.write_key_text(out, false)?;
                }
                out.push('}');
                self.leave();
            }
            ValueKind::Reserved => return Err(self.mismatch("map key", m, self.position())),
        }
        Ok(())
    }

    /// Skips one complete value like [`skip_value`](Self::skip_value), and
    /// also holds it to the reader's limits as a decoder of the same value
    /// would be held: every array or map counts one level of nesting below
    /// the current depth, and each declares at most
    /// [`DecodeLimits::max_collection_len`] entries. Returns the bytes the
    /// value spans. Used before handing a value to a decoder that does not
    /// know the limits (serde's).
    #[cfg(feature = "serde")]
    pub(crate) fn skip_value_limited(&mut self) -> Result<&'de [u8], DecodeError> {
        let start = self.rest;
        let start_at = self.position();
        // Entries still to skip in each open container; the bottom entry is
        // the value itself. Bounded by the depth limit.
        let mut open: Vec<u64> = vec![1];
        while let Some(left) = open.last_mut() {
            if *left == 0 {
                open.pop();
                continue;
            }
            *left -= 1;
            let at = self.position();
            let m = self.peek()?;
            let entries = match ValueKind::of(m) {
                ValueKind::Array => Some(self.read_array_len()? as u64),
                ValueKind::Map => Some(2 * self.read_map_len()? as u64),
                _ => None,
            };
            match entries {
                Some(entries) => {
                    // `open.len()` containers enclose this one, counting
                    // the bottom entry as the top level.
                    if u64::from(self.depth) + open.len() as u64 > u64::from(self.limits.max_depth)
                    {
                        return Err(DecodeError::new(DecodeErrorKind::DepthLimitExceeded, at));
                    }
                    if entries > 0 {
                        open.push(entries);
                    }
                }
                None => self.skip_value()?,
            }
        }
        let used = start.len() - self.rest.len();
        debug_assert_eq!(self.position(), start_at + used);
        Ok(&start[..used])
    }

    /// Skips one complete value of any type, without recursion.
    ///
    /// # Errors
    ///
    /// Truncation, an invalid marker, or a declared length beyond the input.
    pub fn skip_value(&mut self) -> Result<(), DecodeError> {
        let mut pending: u64 = 1;
        while pending > 0 {
            pending -= 1;
            let at = self.position();
            let m = self.byte()?;
            let skip = match m {
                0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => 0,
                0x80..=0x8f => {
                    pending += 2 * (m & 0x0f) as u64;
                    0
                }
                0x90..=0x9f => {
                    pending += (m & 0x0f) as u64;
                    0
                }
                0xa0..=0xbf => (m & 0x1f) as usize,
                0xc1 => return Err(DecodeError::new(DecodeErrorKind::InvalidMarker(m), at)),
                0xc4 | 0xd9 => self.be_u8()?,
                0xc5 | 0xda => self.be_u16()?,
                0xc6 | 0xdb => self.be_u32()?,
                0xc7 => self.be_u8()? + 1,
                0xc8 => self.be_u16()? + 1,
                0xc9 => self.be_u32()? + 1,
                0xca => 4,
                0xcb => 8,
                0xcc | 0xd0 => 1,
                0xcd | 0xd1 => 2,
                0xce | 0xd2 => 4,
                0xcf | 0xd3 => 8,
                0xd4 => 2,
                0xd5 => 3,
                0xd6 => 5,
                0xd7 => 9,
                0xd8 => 17,
                0xdc => {
                    pending += self.be_u16()? as u64;
                    0
                }
                0xdd => {
                    pending += self.be_u32()? as u64;
                    0
                }
                0xde => {
                    pending += 2 * self.be_u16()? as u64;
                    0
                }
                0xdf => {
                    pending += 2 * self.be_u32()? as u64;
                    0
                }
            };
            if pending > self.remaining() as u64 {
                return Err(DecodeError::new(DecodeErrorKind::LengthOverflow, at));
            }
            let len = self.check_bytes(skip, at)?;
            self.read_raw(len)?;
        }
        Ok(())
    }
}

#[inline]
/// Appends `bytes` as lowercase hex.
fn hex(out: &mut String, bytes: &[u8]) {
    use std::fmt::Write as _;
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
}

fn signed(v: i64) -> Int {
    if v >= 0 {
        Int::Unsigned(v as u64)
    } else {
        Int::Negative(v)
    }
}

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
