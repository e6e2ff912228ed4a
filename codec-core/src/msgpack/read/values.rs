//! Reading each MessagePack type: nil, booleans, integers (narrowed to
//! the caller's type), floats, strings, binaries, array and map headers,
//! struct headers and extensions.

use super::Reader;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::msgpack::kind::{Int, StructHeader, ValueKind};

impl<'de> Reader<'de> {
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

    narrow!(
        read_u8, read_u8_other => u8,
        read_u16, read_u16_other => u16,
        read_u32, read_u32_other => u32,
        read_u64, read_u64_other => u64,
        read_usize, read_usize_other => usize
    );
    narrow!(
        read_i8, read_i8_other => i8,
        read_i16, read_i16_other => i16,
        read_i32, read_i32_other => i32,
        read_i64, read_i64_other => i64,
        read_isize, read_isize_other => isize
    );

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
    #[inline(always)]
    pub fn read_f32(&mut self) -> Result<f32, DecodeError> {
        // As `read_f64`: the marker and its four bytes with one length
        // check, anything else out of line.
        if let Some((&[0xca, a, b, c, d], tail)) = self.rest.split_first_chunk::<5>() {
            self.rest = tail;
            return Ok(f32::from_bits(u32::from_be_bytes([a, b, c, d])));
        }
        self.read_f32_other()
    }

    #[inline(never)]
    fn read_f32_other(&mut self) -> Result<f32, DecodeError> {
        self.read_f64_other().map(|v| v as f32)
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
    pub(super) fn check_bytes(&self, len: usize, at: usize) -> Result<usize, DecodeError> {
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
        crate::msgpack::text::utf8(bytes).map_err(|e| Self::utf8_error(data_at, e))
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
    pub(super) fn check_count(
        &self,
        count: usize,
        per_item: usize,
        at: usize,
    ) -> Result<usize, DecodeError> {
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
}

fn signed(v: i64) -> Int {
    if v >= 0 {
        Int::Unsigned(v as u64)
    } else {
        Int::Negative(v)
    }
}
