//! The MessagePack writer: bytes pushed straight into a `Vec<u8>`.
//!
//! Every integer takes its smallest form, with the same choices as
//! `rmp::encode::write_uint` / `write_sint` (non-negative signed values use
//! the unsigned markers), so output is byte-identical to `rmp` and
//! `rmp-serde`. Marker constants come from `rmp::Marker`.

use std::hint::select_unpredictable;
use std::mem::MaybeUninit;

use crate::error::{EncodeError, EncodeErrorKind};

/// The markers as bytes, evaluated at compile time: `Marker::to_u8`
/// called at run time was a call (5% of a write of small integers).
mod m {
    use rmp::Marker;

    pub(super) const ARRAY16: u8 = Marker::Array16.to_u8();
    pub(super) const ARRAY32: u8 = Marker::Array32.to_u8();
    pub(super) const BIN16: u8 = Marker::Bin16.to_u8();
    pub(super) const BIN32: u8 = Marker::Bin32.to_u8();
    pub(super) const BIN8: u8 = Marker::Bin8.to_u8();
    pub(super) const EXT16: u8 = Marker::Ext16.to_u8();
    pub(super) const EXT32: u8 = Marker::Ext32.to_u8();
    pub(super) const EXT8: u8 = Marker::Ext8.to_u8();
    pub(super) const F32: u8 = Marker::F32.to_u8();
    pub(super) const F64: u8 = Marker::F64.to_u8();
    pub(super) const FALSE: u8 = Marker::False.to_u8();
    pub(super) const FIXEXT1: u8 = Marker::FixExt1.to_u8();
    pub(super) const FIXEXT16: u8 = Marker::FixExt16.to_u8();
    pub(super) const FIXEXT2: u8 = Marker::FixExt2.to_u8();
    pub(super) const FIXEXT4: u8 = Marker::FixExt4.to_u8();
    pub(super) const FIXEXT8: u8 = Marker::FixExt8.to_u8();
    pub(super) const I16: u8 = Marker::I16.to_u8();
    pub(super) const I32: u8 = Marker::I32.to_u8();
    pub(super) const I64: u8 = Marker::I64.to_u8();
    pub(super) const I8: u8 = Marker::I8.to_u8();
    pub(super) const MAP16: u8 = Marker::Map16.to_u8();
    pub(super) const MAP32: u8 = Marker::Map32.to_u8();
    pub(super) const NULL: u8 = Marker::Null.to_u8();
    pub(super) const STR16: u8 = Marker::Str16.to_u8();
    pub(super) const STR32: u8 = Marker::Str32.to_u8();
    pub(super) const STR8: u8 = Marker::Str8.to_u8();
    pub(super) const TRUE: u8 = Marker::True.to_u8();
    pub(super) const U16: u8 = Marker::U16.to_u8();
    pub(super) const U32: u8 = Marker::U32.to_u8();
    pub(super) const U64: u8 = Marker::U64.to_u8();
    pub(super) const U8: u8 = Marker::U8.to_u8();
}

/// Writes MessagePack into an owned, growable buffer.
///
/// Derived codecs call these methods directly; hand-written codecs use them
/// too. Methods that take a length check it against MessagePack's 2^32 − 1
/// limit and fail instead of truncating.
///
/// # Examples
///
/// ```
/// use codecbus_core::Writer;
///
/// let mut w = Writer::new();
/// w.write_array_len(2).unwrap();
/// w.write_str("select").unwrap();
/// w.write_u64(2005);
/// assert_eq!(w.as_slice(), b"\x92\xa6select\xcd\x07\xd5");
/// ```
#[derive(Debug, Default, Clone)]
pub struct Writer {
    buf: Vec<u8>,
}

#[cold]
#[inline(never)]
fn run_overflow() -> EncodeError {
    EncodeError::new(EncodeErrorKind::Custom).with_detail(
        "a value wrote more than its codec's MAX_LEN said it would, which is a bug in that codec",
    )
}

#[inline]
fn len_u32(len: usize) -> Result<u32, EncodeError> {
    u32::try_from(len).map_err(|_| {
        EncodeError::new(EncodeErrorKind::LengthOverflow).with_detail(format!("length {len}"))
    })
}

impl Writer {
    /// An empty writer.
    pub fn new() -> Self {
        Self { buf: Vec::new() }
    }

    /// A writer that appends to `buf` (its contents are kept).
    pub fn from_vec(buf: Vec<u8>) -> Self {
        Self { buf }
    }

    /// The bytes written so far.
    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }

    /// Gives back the buffer.
    pub fn into_vec(self) -> Vec<u8> {
        self.buf
    }

    /// Number of bytes in the buffer.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Appends bytes that are already MessagePack (a pre-encoded key, a
    /// cached header). Not public: a wrong byte here corrupts everything
    /// after it; generated code reaches it through `__private::write_raw`.
    #[inline]
    pub(crate) fn write_raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Lets `fill` write up to `len` bytes straight into the buffer's
    /// spare capacity through a [`Run`], and keeps what it wrote. The
    /// bounded writes of a sequence go in this way, a run at a time,
    /// without a capacity check per value and without zeroing first.
    ///
    /// Returns whether every write fit.
    #[inline(always)]
    pub(crate) fn write_run(&mut self, len: usize, fill: impl FnOnce(&mut Run<'_>)) -> bool {
        self.buf.reserve(len);
        let start = self.buf.len();
        let spare = &mut self.buf.spare_capacity_mut()[..len];
        let mut run = Run {
            spare,
            written: 0,
            overflowed: false,
        };
        fill(&mut run);
        let Run {
            written,
            overflowed,
            ..
        } = run;
        // SAFETY: `Run`'s fields are private to this module. Each of its
        // methods that advances `written` (`put`, `put_prefix`,
        // `put_slice`, `value_of`) first takes the bytes at `written` through
        // `room_for`, which yields them only when they lie inside `spare`,
        // and advances `written` by no more than it initialized there
        // (`value_of`, by what its inner run over those bytes advanced by the
        // same rule). So the first
        // `written` bytes of `spare`, which begins at the buffer's length
        // and lies within its capacity, are initialized, and
        // `start + written <= capacity`.
        unsafe { self.buf.set_len(start + written) };
        !overflowed
    }

    /// [`write_run`](Self::write_run), failing when a write did not fit:
    /// what the runs of sequences and derived structs go through.
    #[inline(always)]
    pub(crate) fn write_bounded_run(
        &mut self,
        len: usize,
        fill: impl FnOnce(&mut Run<'_>),
    ) -> Result<(), EncodeError> {
        if self.write_run(len, fill) {
            Ok(())
        } else {
            Err(run_overflow())
        }
    }

    /// The buffer itself, for encoders that write into a `Vec<u8>`
    /// (serde's, the flat sequences').
    pub(crate) fn buf_mut(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Writes `nil`.
    #[inline(always)]
    pub fn write_nil(&mut self) {
        self.buf.push(m::NULL);
    }

    /// Writes `true` or `false`.
    #[inline(always)]
    pub fn write_bool(&mut self, v: bool) {
        self.buf.push(if v { m::TRUE } else { m::FALSE });
    }

    /// Writes an unsigned integer in its smallest form.
    // Always inlined: left to the optimizer, a loop writing integers
    // called it out of line, and the call took 58% of the large batch's
    // write.
    #[inline(always)]
    pub fn write_u64(&mut self, v: u64) {
        if v < 65_536 {
            let (word, len) = small_uint_form(v as u16);
            self.write_run(4, |out| out.put_prefix(word, len));
        } else if v < 4_294_967_296 {
            let b = (v as u32).to_be_bytes();
            self.buf
                .extend_from_slice(&[m::U32, b[0], b[1], b[2], b[3]]);
        } else {
            let b = v.to_be_bytes();
            self.buf
                .extend_from_slice(&[m::U64, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        }
    }

    /// Writes a signed integer in its smallest form (non-negative values use
    /// the unsigned markers, as `rmp` does).
    #[inline(always)]
    pub fn write_i64(&mut self, v: i64) {
        if v >= 0 {
            self.write_u64(v as u64);
        } else if v >= -32_768 {
            let (word, len) = small_negative_form(v as i16);
            self.write_run(4, |out| out.put_prefix(word, len));
        } else if v >= -2_147_483_648 {
            let b = (v as i32).to_be_bytes();
            self.buf
                .extend_from_slice(&[m::I32, b[0], b[1], b[2], b[3]]);
        } else {
            let b = v.to_be_bytes();
            self.buf
                .extend_from_slice(&[m::I64, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        }
    }

    /// Writes a 32-bit float (`0xca`).
    #[inline(always)]
    pub fn write_f32(&mut self, v: f32) {
        let b = v.to_bits().to_be_bytes();
        self.buf
            .extend_from_slice(&[m::F32, b[0], b[1], b[2], b[3]]);
    }

    /// Writes a 64-bit float (`0xcb`).
    #[inline(always)]
    pub fn write_f64(&mut self, v: f64) {
        let b = v.to_bits().to_be_bytes();
        self.buf
            .extend_from_slice(&[m::F64, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    }

    /// Writes a string header for `len` bytes.
    ///
    /// # Errors
    ///
    /// [`EncodeErrorKind::LengthOverflow`] when `len` exceeds 2^32 − 1.
    #[inline(always)]
    pub fn write_str_len(&mut self, len: usize) -> Result<(), EncodeError> {
        if len < 32 {
            self.buf.push(0xa0 | len as u8);
        } else if len < 256 {
            self.buf.extend_from_slice(&[m::STR8, len as u8]);
        } else if len < 65_536 {
            let b = (len as u16).to_be_bytes();
            self.buf.extend_from_slice(&[m::STR16, b[0], b[1]]);
        } else {
            let b = len_u32(len)?.to_be_bytes();
            self.buf
                .extend_from_slice(&[m::STR32, b[0], b[1], b[2], b[3]]);
        }
        Ok(())
    }

    /// Writes a string.
    ///
    /// # Errors
    ///
    /// [`EncodeErrorKind::LengthOverflow`] when it is 4 GiB or longer.
    #[inline(always)]
    pub fn write_str(&mut self, s: &str) -> Result<(), EncodeError> {
        self.write_str_len(s.len())?;
        self.buf.extend_from_slice(s.as_bytes());
        Ok(())
    }

    /// Writes a `bin` value.
    ///
    /// # Errors
    ///
    /// [`EncodeErrorKind::LengthOverflow`] when it is 4 GiB or longer.
    #[inline]
    pub fn write_bin(&mut self, data: &[u8]) -> Result<(), EncodeError> {
        let len = data.len();
        if len < 256 {
            self.buf.extend_from_slice(&[m::BIN8, len as u8]);
        } else if len < 65_536 {
            let b = (len as u16).to_be_bytes();
            self.buf.extend_from_slice(&[m::BIN16, b[0], b[1]]);
        } else {
            let b = len_u32(len)?.to_be_bytes();
            self.buf
                .extend_from_slice(&[m::BIN32, b[0], b[1], b[2], b[3]]);
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }

    /// Writes an array header for `len` elements.
    ///
    /// # Errors
    ///
    /// [`EncodeErrorKind::LengthOverflow`] when `len` exceeds 2^32 − 1.
    #[inline(always)]
    pub fn write_array_len(&mut self, len: usize) -> Result<(), EncodeError> {
        if len < 16 {
            self.buf.push(0x90 | len as u8);
        } else if len < 65_536 {
            let b = (len as u16).to_be_bytes();
            self.buf.extend_from_slice(&[m::ARRAY16, b[0], b[1]]);
        } else {
            let b = len_u32(len)?.to_be_bytes();
            self.buf
                .extend_from_slice(&[m::ARRAY32, b[0], b[1], b[2], b[3]]);
        }
        Ok(())
    }

    /// Writes a map header for `len` key/value pairs.
    ///
    /// # Errors
    ///
    /// [`EncodeErrorKind::LengthOverflow`] when `len` exceeds 2^32 − 1.
    #[inline(always)]
    pub fn write_map_len(&mut self, len: usize) -> Result<(), EncodeError> {
        if len < 16 {
            self.buf.push(0x80 | len as u8);
        } else if len < 65_536 {
            let b = (len as u16).to_be_bytes();
            self.buf.extend_from_slice(&[m::MAP16, b[0], b[1]]);
        } else {
            let b = len_u32(len)?.to_be_bytes();
            self.buf
                .extend_from_slice(&[m::MAP32, b[0], b[1], b[2], b[3]]);
        }
        Ok(())
    }

    /// Writes an extension value: fixext forms for 1, 2, 4, 8 and 16 bytes,
    /// ext 8/16/32 otherwise.
    ///
    /// # Errors
    ///
    /// [`EncodeErrorKind::LengthOverflow`] when `data` is 4 GiB or longer.
    pub fn write_ext(&mut self, type_id: i8, data: &[u8]) -> Result<(), EncodeError> {
        let ty = type_id as u8;
        match data.len() {
            1 => self.buf.extend_from_slice(&[m::FIXEXT1, ty]),
            2 => self.buf.extend_from_slice(&[m::FIXEXT2, ty]),
            4 => self.buf.extend_from_slice(&[m::FIXEXT4, ty]),
            8 => self.buf.extend_from_slice(&[m::FIXEXT8, ty]),
            16 => self.buf.extend_from_slice(&[m::FIXEXT16, ty]),
            len if len < 256 => self.buf.extend_from_slice(&[m::EXT8, len as u8, ty]),
            len if len < 65_536 => {
                let b = (len as u16).to_be_bytes();
                self.buf.extend_from_slice(&[m::EXT16, b[0], b[1], ty]);
            }
            len => {
                let b = len_u32(len)?.to_be_bytes();
                self.buf
                    .extend_from_slice(&[m::EXT32, b[0], b[1], b[2], b[3], ty]);
            }
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }
}

/// A value that writes itself into a run: every `Encode` type, through
/// its `encode_bounded` (the impl is beside the trait, which sits above
/// this module).
pub(crate) trait PutInto {
    /// Writes the value into `out`.
    fn put_into(&self, out: &mut Run<'_>);
}

/// Where a value with a bound on its size (`Encode::MAX_LEN`) writes
/// itself in `Encode::encode_bounded`: a stretch of a [`Writer`]'s spare
/// capacity that a sequence of such values is written into, a run at a
/// time. Not part of the API.
///
/// Every write is checked against the stretch; one that does not fit
/// (only a hand-written `encode_bounded` that writes more than its
/// `MAX_LEN` can) writes nothing and marks the run, and the sequence's
/// encode fails with an error.
#[derive(Debug)]
pub struct Run<'a> {
    spare: &'a mut [MaybeUninit<u8>],
    written: usize,
    overflowed: bool,
}

impl Run<'_> {
    /// Appends `bytes`.
    #[inline(always)]
    pub fn put<const N: usize>(&mut self, bytes: [u8; N]) {
        match self.room_for(N) {
            Some(dst) => {
                dst.write_copy_of_slice(&bytes);
                self.written += N;
            }
            None => self.overflowed = true,
        }
    }

    /// The next `len` bytes of the run, when they are in it: one
    /// comparison (`written` never passes the run's end).
    #[inline(always)]
    fn room_for(&mut self, len: usize) -> Option<&mut [MaybeUninit<u8>]> {
        let written = self.written;
        if len <= self.spare.len() - written {
            self.spare.get_mut(written..written + len)
        } else {
            None
        }
    }

    /// Writes all of `bytes` and keeps the first `keep` (at most `N`): a
    /// value whose form is chosen without a branch writes its longest form
    /// and keeps what it needs.
    #[inline(always)]
    pub(crate) fn put_prefix<const N: usize>(&mut self, bytes: [u8; N], keep: usize) {
        match self.room_for(N) {
            Some(dst) => {
                dst.write_copy_of_slice(&bytes);
                self.written += keep.min(N);
            }
            None => self.overflowed = true,
        }
    }

    /// Appends `bytes`, of any length.
    #[inline]
    pub fn put_slice(&mut self, bytes: &[u8]) {
        match self.room_for(bytes.len()) {
            Some(dst) => {
                dst.write_copy_of_slice(bytes);
                self.written += bytes.len();
            }
            None => self.overflowed = true,
        }
    }

    /// Writes `item`, of at most `max_len` bytes: the room is checked
    /// once, and the item gets a run of exactly `max_len` bytes, so the
    /// checks of its writes at constant offsets fold away. Through
    /// `PutInto`, not a closure: in a large encoder the optimizer left the
    /// closure of a sequence's element out of line, a call per element
    /// with its run in memory.
    #[inline(always)]
    pub(crate) fn value_of<T: PutInto + ?Sized>(&mut self, max_len: usize, item: &T) {
        match self.room_for(max_len) {
            Some(room) => {
                let mut inner = Run {
                    spare: room,
                    written: 0,
                    overflowed: false,
                };
                item.put_into(&mut inner);
                let (written, overflowed) = (inner.written, inner.overflowed);
                self.written += written;
                self.overflowed |= overflowed;
            }
            None => self.overflowed = true,
        }
    }

    /// Room left in the run.
    #[inline(always)]
    pub fn room(&self) -> usize {
        self.spare.len() - self.written
    }
}

/// The smallest form of an unsigned integer below 2^16, chosen without a
/// branch: its bytes (padded to four) and how many of them it takes. For a
/// field of random small values (a slot, an id, a count) the branches of
/// the form were mispredicted one time in two.
#[inline(always)]
fn small_uint_form(v: u16) -> ([u8; 4], usize) {
    let [hi, lo] = v.to_be_bytes();
    // `select_unpredictable`: left to itself, the optimizer turns these
    // selects back into branches inside a loop.
    let narrow = select_unpredictable(v < 0x80, [lo, 0, 0, 0], [m::U8, lo, 0, 0]);
    let word = select_unpredictable(v < 0x100, narrow, [m::U16, hi, lo, 0]);
    let len = 1 + usize::from(v >= 0x80) + usize::from(v >= 0x100);
    (word, len)
}

/// The same for a negative integer of at least -2^15.
#[inline(always)]
fn small_negative_form(v: i16) -> ([u8; 4], usize) {
    let [hi, lo] = v.to_be_bytes();
    let narrow = select_unpredictable(v >= -32, [lo, 0, 0, 0], [m::I8, lo, 0, 0]);
    let word = select_unpredictable(v >= -128, narrow, [m::I16, hi, lo, 0]);
    let len = 1 + usize::from(v < -32) + usize::from(v < -128);
    (word, len)
}

/// The bounded writes: the same bytes as [`Writer`]'s methods, into a
/// [`Run`] (`Encode::encode_bounded` of the scalars). A property test pins
/// each to its `Writer` counterpart.
pub(crate) mod bounded {
    use super::{Run, m};

    /// As [`Writer::write_u64`](super::Writer::write_u64).
    #[inline(always)]
    pub(crate) fn put_u64(out: &mut Run<'_>, v: u64) {
        if v < 65_536 {
            let (word, len) = super::small_uint_form(v as u16);
            out.put_prefix(word, len);
        } else if v < 4_294_967_296 {
            let [a, b, c, d] = (v as u32).to_be_bytes();
            out.put([m::U32, a, b, c, d]);
        } else {
            let [a, b, c, d, e, f, g, h] = v.to_be_bytes();
            out.put([m::U64, a, b, c, d, e, f, g, h]);
        }
    }

    /// As [`Writer::write_i64`](super::Writer::write_i64).
    #[inline(always)]
    pub(crate) fn put_i64(out: &mut Run<'_>, v: i64) {
        if v >= 0 {
            put_u64(out, v as u64);
        } else if v >= -32_768 {
            let (word, len) = super::small_negative_form(v as i16);
            out.put_prefix(word, len);
        } else if v >= -2_147_483_648 {
            let [a, b, c, d] = (v as i32).to_be_bytes();
            out.put([m::I32, a, b, c, d]);
        } else {
            let [a, b, c, d, e, f, g, h] = v.to_be_bytes();
            out.put([m::I64, a, b, c, d, e, f, g, h]);
        }
    }

    /// As [`Writer::write_f32`](super::Writer::write_f32).
    #[inline(always)]
    pub(crate) fn put_f32(out: &mut Run<'_>, v: f32) {
        let [a, b, c, d] = v.to_bits().to_be_bytes();
        out.put([m::F32, a, b, c, d]);
    }

    /// As [`Writer::write_f64`](super::Writer::write_f64).
    #[inline(always)]
    pub(crate) fn put_f64(out: &mut Run<'_>, v: f64) {
        let [a, b, c, d, e, f, g, h] = v.to_bits().to_be_bytes();
        out.put([m::F64, a, b, c, d, e, f, g, h]);
    }

    /// As [`Writer::write_bool`](super::Writer::write_bool).
    #[inline(always)]
    pub(crate) fn put_bool(out: &mut Run<'_>, v: bool) {
        out.put([if v { m::TRUE } else { m::FALSE }]);
    }

    /// The room a header of a length takes, plus `len` elements of at most
    /// `each` bytes; `None` beyond MessagePack's 2^32 − 1 elements (which
    /// [`Writer`](super::Writer) refuses). Saturating, without a branch:
    /// a bound is only used when it is short.
    #[inline(always)]
    pub(crate) fn len_bound(len: usize, each: usize) -> Option<usize> {
        let bound = len.saturating_mul(each).saturating_add(5);
        (len <= u32::MAX as usize).then_some(bound)
    }

    /// A length's 16- or 32-bit form, for one of at most 2^32 − 1 (see
    /// [`len_bound`]).
    #[inline(always)]
    fn put_wide_len(out: &mut Run<'_>, len: usize, m16: u8, m32: u8) {
        if len < 65_536 {
            let [a, b] = (len as u16).to_be_bytes();
            out.put([m16, a, b]);
        } else {
            let [a, b, c, d] = (len as u32).to_be_bytes();
            out.put([m32, a, b, c, d]);
        }
    }

    /// As [`Writer::write_array_len`](super::Writer::write_array_len),
    /// for a length of at most 2^32 − 1.
    #[inline(always)]
    pub(crate) fn put_array_len(out: &mut Run<'_>, len: usize) {
        if len < 16 {
            out.put([0x90 | len as u8]);
        } else {
            put_wide_len(out, len, m::ARRAY16, m::ARRAY32);
        }
    }

    /// As [`Writer::write_str`](super::Writer::write_str), for a string
    /// shorter than 4 GiB.
    #[inline(always)]
    pub(crate) fn put_str(out: &mut Run<'_>, s: &str) {
        let len = s.len();
        if len < 32 {
            out.put([0xa0 | len as u8]);
        } else if len < 256 {
            out.put([m::STR8, len as u8]);
        } else {
            put_wide_len(out, len, m::STR16, m::STR32);
        }
        out.put_slice(s.as_bytes());
    }

    /// As [`Writer::write_bin`](super::Writer::write_bin), for data
    /// shorter than 4 GiB.
    #[inline(always)]
    pub(crate) fn put_bin(out: &mut Run<'_>, data: &[u8]) {
        let len = data.len();
        if len < 256 {
            out.put([m::BIN8, len as u8]);
        } else {
            put_wide_len(out, len, m::BIN16, m::BIN32);
        }
        out.put_slice(data);
    }
}
