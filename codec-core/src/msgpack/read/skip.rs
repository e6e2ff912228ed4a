//! Skipping values (bounded by the reader's limits) and the textual form
//! of a map key for an error's path.

use super::Reader;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::msgpack::kind::{Int, ValueKind};

impl<'de> Reader<'de> {
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

/// Appends `bytes` as lowercase hex.
fn hex(out: &mut String, bytes: &[u8]) {
    use std::fmt::Write as _;
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
}
