//! Values written as a template: every byte of their MessagePack form is a
//! constant, or a constant combined with one byte of the value as it lies
//! in memory ([`Flat`]). Floats, booleans, and tuples, arrays and derived
//! structs made only of them (a point of three `f32`, a triangle of four
//! points) are such values.
//!
//! A sequence of them is written by [`write`] with byte shuffles (SSSE3
//! `pshufb`, detected at run time on x86-64): each element is loaded in
//! 16-byte windows, and each 16 bytes of its form are the shuffled windows
//! over its constant bytes, one store. Written one field at a time, a
//! point of three `f32` costs seven stores and three byte swaps; here it
//! is one load, one shuffle and one store. Elsewhere (another
//! architecture, a processor without SSSE3) [`write`] declines and the
//! sequence is written as any other.

use super::write::Writer;

/// The most bytes a [`Flat`] value's form may have.
const MAX_FORM: usize = 96;
/// The most bytes of memory a [`Flat`] value may occupy.
const MAX_SIZE: usize = 64;
/// In [`Flat::from`]: no byte of the value, the constant alone.
const NONE: u8 = u8::MAX;

/// How a value's MessagePack form is made from its bytes in memory: byte
/// `i` of the form is `bytes[i]`, ORed with byte `from[i]` of the value
/// unless there is none. Not part of the API: made by this crate's
/// impls and by the derive (through [`record`]), which checks what it
/// combines; the sequence writer reads nothing outside the value
/// whatever it says.
#[derive(Clone, Copy, Debug)]
pub struct Flat {
    /// The form's length.
    len: u8,
    /// The value's size in memory.
    size: u8,
    bytes: [u8; MAX_FORM],
    from: [u8; MAX_FORM],
}

/// A part of a record's form, in order: constant bytes (a header, a
/// key), or a field (its type's [`Flat`], when it has one, and its offset
/// in the record). Not part of the API.
#[derive(Clone, Copy, Debug)]
pub enum FlatPart {
    /// Bytes written as they are.
    Bytes(&'static [u8]),
    /// A field: its type's form (`None`: the record is not flat), at this
    /// offset in the record.
    Field(Option<Flat>, usize),
}

impl Flat {
    /// A float of `N` bytes (4 or 8): its marker, then its bytes
    /// big-endian.
    const fn float<const N: usize>(marker: u8) -> Flat {
        let mut flat = Flat {
            len: (1 + N) as u8,
            size: N as u8,
            bytes: [0; MAX_FORM],
            from: [NONE; MAX_FORM],
        };
        flat.bytes[0] = marker;
        let mut i = 0;
        while i < N {
            // Byte `i` of the big-endian form is the value's byte `i` on a
            // big-endian target, `N - 1 - i` on a little-endian one.
            flat.from[1 + i] = if cfg!(target_endian = "big") {
                i
            } else {
                N - 1 - i
            } as u8;
            i += 1;
        }
        flat
    }

    /// `f32`: `0xca` and its four bytes.
    pub(crate) const F32: Flat = Flat::float::<4>(0xca);
    /// `f64`: `0xcb` and its eight bytes.
    pub(crate) const F64: Flat = Flat::float::<8>(0xcb);
    /// `bool`: `0xc2` ORed with its byte (0 or 1), `0xc3` for `true`.
    pub(crate) const BOOL: Flat = {
        let mut flat = Flat {
            len: 1,
            size: 1,
            bytes: [0; MAX_FORM],
            from: [NONE; MAX_FORM],
        };
        flat.bytes[0] = 0xc2;
        flat.from[0] = 0;
        flat
    };
}

/// The form of a record of `size` bytes made of `parts`, in order: `None`
/// when a field has none, when the form would be longer than 96 bytes or
/// the record larger than 64, or when the fields do not cover every byte
/// of the record exactly once (padding, a skipped field, a wrong offset).
/// Every byte then belongs to a field that is itself flat, so there is no
/// byte of the value the form does not say how to write.
pub const fn record(parts: &[FlatPart], size: usize) -> Option<Flat> {
    if size == 0 || size > MAX_SIZE {
        return None;
    }
    let mut flat = Flat {
        len: 0,
        size: size as u8,
        bytes: [0; MAX_FORM],
        from: [NONE; MAX_FORM],
    };
    let mut len = 0;
    let mut covered: u64 = 0;
    let mut p = 0;
    while p < parts.len() {
        match parts[p] {
            FlatPart::Bytes(bytes) => {
                if bytes.len() > MAX_FORM - len {
                    return None;
                }
                let mut i = 0;
                while i < bytes.len() {
                    flat.bytes[len + i] = bytes[i];
                    i += 1;
                }
                len += bytes.len();
            }
            FlatPart::Field(None, _) => return None,
            FlatPart::Field(Some(field), offset) => {
                let (field_len, field_size) = (field.len as usize, field.size as usize);
                if field_len > MAX_FORM - len || offset > size || field_size > size - offset {
                    return None;
                }
                let bits = bit_span(offset, field_size);
                if covered & bits != 0 {
                    return None;
                }
                covered |= bits;
                let mut i = 0;
                while i < field_len {
                    flat.bytes[len + i] = field.bytes[i];
                    flat.from[len + i] = if field.from[i] == NONE {
                        NONE
                    } else {
                        (offset + field.from[i] as usize) as u8
                    };
                    i += 1;
                }
                len += field_len;
            }
        }
        p += 1;
    }
    if covered != bit_span(0, size) {
        return None;
    }
    flat.len = len as u8;
    Some(flat)
}

/// `n` bits from bit `at` (`at + n <= 64`).
const fn bit_span(at: usize, n: usize) -> u64 {
    if n == 0 {
        0
    } else if n == 64 {
        u64::MAX
    } else {
        ((1u64 << n) - 1) << at
    }
}

/// The fixarray headers, for arrays of 0 to 15 elements.
const FIXARRAYS: &[u8] = &[
    0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f,
];

/// The form of `[T; n]` where `T`'s is `element` and its size `size`: the
/// array's header, then the elements in order, as a record of them.
pub(crate) const fn array(element: Option<Flat>, n: usize, size: usize) -> Option<Flat> {
    // Longer arrays are larger than a flat value can be.
    if n >= FIXARRAYS.len() {
        return None;
    }
    let mut parts = [FlatPart::Field(None, 0); 16];
    parts[0] = FlatPart::Bytes(FIXARRAYS.split_at(n).1.split_at(1).0);
    let mut i = 0;
    while i < n {
        parts[1 + i] = FlatPart::Field(element, i.saturating_mul(size));
        i += 1;
    }
    record(parts.split_at(n + 1).0, n.saturating_mul(size))
}

/// A sequence element type whose form is flat, with what [`write`] needs
/// for it, computed once at compile time. Implemented beside the codec
/// traits, which sit above this module.
pub(crate) trait Planned {
    /// The element type.
    type Item;
    /// Its plan, when its form is flat and fits.
    const PLAN: Option<Plan>;
}

/// How [`write`] makes one element's form: the element in `windows`
/// 16-byte windows, its form in `chunks` 16-byte chunks, each chunk its
/// constant bytes ORed with the windows it takes bytes from, shuffled by
/// their masks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    len: usize,
    size: usize,
    windows: usize,
    chunks: usize,
    constants: [[u8; 16]; MAX_FORM / 16],
    masks: [[[u8; 16]; MAX_SIZE / 16]; MAX_FORM / 16],
    uses: [[bool; MAX_SIZE / 16]; MAX_FORM / 16],
}

impl Plan {
    /// The plan for a type of `size` bytes whose form is `flat`: `None`
    /// when `flat` is not the form of a value of that size.
    pub(crate) const fn new(flat: Option<Flat>, size: usize) -> Option<Plan> {
        let Some(flat) = flat else {
            return None;
        };
        let len = flat.len as usize;
        if flat.size as usize != size || size == 0 || size > MAX_SIZE || len == 0 {
            return None;
        }
        let mut plan = Plan {
            len,
            size,
            windows: size.div_ceil(16),
            chunks: len.div_ceil(16),
            constants: [[0; 16]; MAX_FORM / 16],
            // A mask byte with its high bit set gives a zero.
            masks: [[[0x80; 16]; MAX_SIZE / 16]; MAX_FORM / 16],
            uses: [[false; MAX_SIZE / 16]; MAX_FORM / 16],
        };
        let mut i = 0;
        while i < len {
            let (chunk, at) = (i / 16, i % 16);
            plan.constants[chunk][at] = flat.bytes[i];
            let from = flat.from[i];
            if from != NONE {
                if from as usize >= size {
                    return None;
                }
                let window = from as usize / 16;
                plan.masks[chunk][window][at] = from % 16;
                plan.uses[chunk][window] = true;
            }
            i += 1;
        }
        Some(plan)
    }
}

/// Writes the forms of `items` to `w` when their type has a [`Plan`],
/// their forms come to at least 64 bytes (shorter sequences are written
/// sooner one by one: checking the processor and the set-up cost more
/// than they save; measured) and the processor can shuffle bytes (SSSE3);
/// returns whether it did. The caller writes them the usual way when it
/// did not.
#[inline]
pub(crate) fn write<P: Planned>(items: &[P::Item], w: &mut Writer) -> bool {
    match P::PLAN {
        Some(plan) if items.len().saturating_mul(plan.len) >= 64 => {}
        _ => return false,
    }
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("ssse3") {
            // SAFETY: the processor has SSSE3, checked just above.
            return unsafe { shuffle::write::<P>(items, w.buf_mut()) };
        }
    }
    false
}

#[cfg(target_arch = "x86_64")]
mod shuffle {
    use std::arch::asm;
    use std::arch::x86_64::{
        __m128i, _mm_loadu_si128, _mm_or_si128, _mm_setzero_si128, _mm_shuffle_epi8,
        _mm_storeu_si128,
    };
    use std::mem::MaybeUninit;

    use super::{MAX_SIZE, Planned};

    /// 16 bytes from `at`, as the processor reads them. Through `asm!`:
    /// the bytes are read whatever they hold, so a [`Plan`] that named a
    /// byte of padding would give a wrong form, never undefined behaviour.
    ///
    /// # Safety
    ///
    /// `at..at + 16` lies in one allocation.
    #[inline(always)]
    unsafe fn load(at: *const u8) -> __m128i {
        let v: __m128i;
        // SAFETY: the caller's contract: the 16 bytes are readable.
        unsafe {
            asm!(
                "movdqu {v}, xmmword ptr [{at}]",
                at = in(reg) at,
                v = out(xmm_reg) v,
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        v
    }

    /// One element's form, from `src` to `dst`. The plan is a constant
    /// here, so the loops unroll and the unused windows fold away.
    ///
    /// # Safety
    ///
    /// SSSE3 is available; `src..src + 16 * plan.windows` is readable and
    /// `dst..dst + 16 * plan.chunks` writable.
    #[target_feature(enable = "ssse3")]
    #[inline]
    unsafe fn element<P: Planned>(src: *const u8, dst: *mut u8) {
        let Some(plan) = P::PLAN else {
            return;
        };
        let mut windows = [_mm_setzero_si128(); MAX_SIZE / 16];
        let mut w = 0;
        while w < plan.windows {
            // SAFETY: window `w` is within the readable span.
            windows[w] = unsafe { load(src.add(16 * w)) };
            w += 1;
        }
        let mut chunk = 0;
        while chunk < plan.chunks {
            // SAFETY: reading 16 bytes of the plan's own arrays.
            let mut form = unsafe { _mm_loadu_si128(plan.constants[chunk].as_ptr().cast()) };
            let mut w = 0;
            while w < plan.windows {
                if plan.uses[chunk][w] {
                    // SAFETY: as above.
                    let mask = unsafe { _mm_loadu_si128(plan.masks[chunk][w].as_ptr().cast()) };
                    form = _mm_or_si128(form, _mm_shuffle_epi8(windows[w], mask));
                }
                w += 1;
            }
            // SAFETY: chunk `chunk` is within the writable span.
            unsafe { _mm_storeu_si128(dst.add(16 * chunk).cast(), form) };
            chunk += 1;
        }
    }

    /// [`super::write`] on a processor with SSSE3.
    ///
    /// # Safety
    ///
    /// SSSE3 is available.
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn write<P: Planned>(items: &[P::Item], buf: &mut Vec<u8>) -> bool {
        let Some(plan) = P::PLAN else {
            return false;
        };
        let n = items.len();
        // `size_of_val`, not the plan's size, bounds what is read: a plan
        // made for another type reads nothing outside `items`.
        let total = size_of_val(items);
        if plan.size != size_of::<P::Item>() {
            return false;
        }
        let Some(form_len) = n.checked_mul(plan.len) else {
            return false;
        };
        let Some(room) = form_len.checked_add(16) else {
            return false;
        };
        buf.reserve(room);
        let start = buf.len();
        let src = items.as_ptr().cast::<u8>();
        // SAFETY: `start` is the buffer's length, within its allocation.
        let dst = unsafe { buf.as_mut_ptr().add(start) };
        let span = 16 * plan.windows;
        // Elements whose windows lie within `items` are read in place;
        // the last few, whose windows reach past the end, from a copy.
        let in_place = if total >= span {
            (total - span) / plan.size + 1
        } else {
            0
        }
        .min(n);
        let mut j = 0;
        while j < in_place {
            // SAFETY: SSSE3 is available (this function's contract).
            // Element `j`'s windows are `j * size .. j * size + span`,
            // within `total` for `j < in_place`. Its form is written at
            // `j * len .. j * len + 16 * chunks`, which is below
            // `n * len + 16` (`16 * chunks < len + 16`), within the room
            // reserved.
            unsafe { element::<P>(src.add(j * plan.size), dst.add(j * plan.len)) };
            j += 1;
        }
        if j < n {
            // The last elements, copied once: fewer than `span + size`
            // bytes (an element further back would have its windows
            // within `items`), and their windows reach at most `span`
            // past the last one's start. What lies past the copy is read
            // uninitialized (through `load`) and never used.
            let mut tail = [MaybeUninit::<u8>::uninit(); 3 * MAX_SIZE];
            let rest = total - j * plan.size;
            // SAFETY: the `rest` bytes from element `j` on are the end of
            // `items`; `rest < span + size <= 2 * MAX_SIZE` fits in the
            // copy.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    src.add(j * plan.size),
                    tail.as_mut_ptr().cast::<u8>(),
                    rest,
                );
            }
            let tail = tail.as_ptr().cast::<u8>();
            let mut at = 0;
            while j < n {
                // SAFETY: SSSE3 is available; the element's windows are
                // `at .. at + span`, with `at < rest < 2 * MAX_SIZE` and
                // `span <= MAX_SIZE`, within the copy; its form is written
                // within the room reserved, as above.
                unsafe { element::<P>(tail.add(at), dst.add(j * plan.len)) };
                at += plan.size;
                j += 1;
            }
        }
        // SAFETY: every element `j` wrote all of `j * len .. (j + 1) *
        // len` (its chunks cover its form), and a later element writes
        // only from its own start on, so the `n * len` bytes after
        // `start` are initialized, within the room reserved.
        unsafe { buf.set_len(start + form_len) };
        true
    }
}
