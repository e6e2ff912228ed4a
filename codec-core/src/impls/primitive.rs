//! Booleans, integers, floats, `char`, `()`, strings, and the borrowed
//! `&str`, `&[u8]` and `Cow`.
#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::sync::Arc;

use crate::codec::{Decode, Encode, Immutable, MessageCodec, MessageType};
use crate::error::DecodeError;
use crate::error::{DecodeErrorKind, EncodeError, EncodeErrorKind};
use crate::impls::{describe, share};
use crate::msgpack::flat::Flat;
use crate::msgpack::kind::Int;
use crate::msgpack::read::Reader;
use crate::msgpack::write::{Run, Writer, bounded};
use crate::shape::Shape;

macro_rules! immutable_scalar {
    ($($ty:ty),*) => {$(
        impl Immutable for $ty {}
    )*};
}
immutable_scalar!(
    bool,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    char,
    (),
    String,
    str
);

/// `Encode`, `Decode` and a shared `MessageCodec` for a leaf type, from
/// its shape, the bodies of its encode (`self` as `$v`, the writer as
/// `$w`) and its decode (the reader as `$r`).
macro_rules! leaf {
    ($ty:ty, $shape:expr, |$v:ident, $w:ident| $encode:block, |$r:ident| $decode:block) => {
        leaf!($ty, $shape, |$v, $w| $encode, |$r| $decode, {});
    };
    // `bounded: MAX, |value, out| put(out, ..)`: the scalar's bounded
    // writer (`Encode::MAX_LEN`, `Encode::encode_bounded`).
    ($ty:ty, $shape:expr, |$v:ident, $w:ident| $encode:block, |$r:ident| $decode:block,
     bounded: $max:expr, |$bv:ident, $out:ident| $put:expr $(, flat: $flat:expr)? $(, fixed: $($fixed:tt)*)?) => {
        leaf!($ty, $shape, |$v, $w| $encode, |$r| $decode, {
            const MAX_LEN: Option<usize> = Some($max);
            $(const FLAT: Option<Flat> = Some($flat);)?

            #[inline(always)]
            fn encode_bounded(&self, $out: &mut Run<'_>) {
                let $bv = *self;
                $put
            }
        } { $(leaf!(@fixed $($fixed)*);)? });
    };
    // `fixed: LEN, |bytes| value`: every value's form has LEN bytes
    // (`Decode::FIXED_LEN`, `Decode::decode_fixed`).
    (@fixed $len:expr, |$b:ident| $fixed:expr) => {
        const FIXED_LEN: Option<usize> = Some($len);

        #[inline(always)]
        fn decode_fixed($b: &'de [u8]) -> Option<Self> {
            $fixed
        }
    };
    ($ty:ty, $shape:expr, |$v:ident, $w:ident| $encode:block, |$r:ident| $decode:block, { $($bounded:tt)* }) => {
        leaf!($ty, $shape, |$v, $w| $encode, |$r| $decode, { $($bounded)* } {});
    };
    ($ty:ty, $shape:expr, |$v:ident, $w:ident| $encode:block, |$r:ident| $decode:block, { $($bounded:tt)* } { $($fixed:tt)* }) => {
        impl Encode for $ty {
            $($bounded)*

            // Always, as the decoder.
            #[inline(always)]
            fn encode(&self, $w: &mut Writer) -> Result<(), EncodeError> {
                let $v = self;
                $encode
            }
        }
        impl<'de> Decode<'de> for $ty {
            const NESTING: Option<u32> = Some(0);

            $($fixed)*

            // Always: a scalar's decoder is a few instructions with its
            // uncommon forms out of line, and is left out of line by the
            // optimizer inside a large inlined struct decoder.
            #[inline(always)]
            fn decode($r: &mut Reader<'de>) -> Result<Self, DecodeError> {
                $decode
            }
        }
        impl MessageType for $ty {}
        impl MessageCodec for $ty {
            share!();
            describe!($shape);
        }
    };
}

leaf!(
    bool,
    Shape::Bool,
    |v, w| {
        w.write_bool(*v);
        Ok(())
    },
    |r| { r.read_bool() },
    bounded: 1, |v, out| bounded::put_bool(out, v),
    flat: Flat::BOOL,
    fixed: 1, |b| match b {
        [0xc3] => Some(true),
        [0xc2] => Some(false),
        _ => None,
    }
);

/// The room an integer of `bits` bits needs in a run: its largest form, or
/// four bytes for the small forms written without a branch (a `u8` writes
/// at most two, but puts four).
const fn int_room(bits: usize) -> usize {
    let largest = 1 + bits / 8;
    if largest < 4 { 4 } else { largest }
}

macro_rules! unsigned {
    ($($ty:ty, $bits:literal => $read:ident),*) => {$(
        leaf!($ty, Shape::int(false, $bits), |v, w| {
            w.write_u64(*v as u64);
            Ok(())
        }, |r| { r.$read() }, bounded: int_room($bits), |v, out| {
            bounded::put_u64(out, v as u64)
        });
    )*};
}
// `usize` and `isize` are 64 bits wide whatever the platform: what one
// node writes, another may read.
unsigned!(u8, 8 => read_u8, u16, 16 => read_u16, u32, 32 => read_u32, u64, 64 => read_u64, usize, 64 => read_usize);

macro_rules! signed {
    ($($ty:ty, $bits:literal => $read:ident),*) => {$(
        leaf!($ty, Shape::int(true, $bits), |v, w| {
            w.write_i64(*v as i64);
            Ok(())
        }, |r| { r.$read() }, bounded: int_room($bits), |v, out| {
            bounded::put_i64(out, v as i64)
        });
    )*};
}
signed!(i8, 8 => read_i8, i16, 16 => read_i16, i32, 32 => read_i32, i64, 64 => read_i64, isize, 64 => read_isize);

leaf!(
    u128,
    Shape::int(false, 128),
    |v, w| {
        let n = u64::try_from(*v).map_err(|_| {
            EncodeError::new(EncodeErrorKind::IntegerOutOfRange).with_detail(format!("u128 {v}"))
        })?;
        w.write_u64(n);
        Ok(())
    },
    |r| { r.read_u64().map(u128::from) }
);

leaf!(
    i128,
    Shape::int(true, 128),
    |v, w| {
        if let Ok(n) = i64::try_from(*v) {
            w.write_i64(n);
        } else if let Ok(n) = u64::try_from(*v) {
            w.write_u64(n);
        } else {
            return Err(EncodeError::new(EncodeErrorKind::IntegerOutOfRange)
                .with_detail(format!("i128 {v}")));
        }
        Ok(())
    },
    |r| {
        Ok(match r.read_int()? {
            Int::Unsigned(v) => i128::from(v),
            Int::Negative(v) => i128::from(v),
        })
    }
);

leaf!(
    f32,
    Shape::F32,
    |v, w| {
        w.write_f32(*v);
        Ok(())
    },
    |r| { r.read_f32() },
    bounded: 5, |v, out| bounded::put_f32(out, v),
    flat: Flat::F32,
    fixed: 5, |b| match *b {
        [0xca, a, b, c, d] => Some(f32::from_bits(u32::from_be_bytes([a, b, c, d]))),
        _ => None,
    }
);

leaf!(
    f64,
    Shape::F64,
    |v, w| {
        w.write_f64(*v);
        Ok(())
    },
    |r| { r.read_f64() },
    bounded: 9, |v, out| bounded::put_f64(out, v),
    flat: Flat::F64,
    fixed: 9, |b| match *b {
        [0xcb, a, b, c, d, e, f, g, h] => {
            Some(f64::from_bits(u64::from_be_bytes([a, b, c, d, e, f, g, h])))
        }
        _ => None,
    }
);

// A string of one character: the vocabulary has nothing narrower.
leaf!(
    char,
    Shape::Str,
    |v, w| {
        let mut buf = [0u8; 4];
        w.write_str(v.encode_utf8(&mut buf))
    },
    |r| {
        let at = r.position();
        let s = r.read_str()?;
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(DecodeError::new(
                DecodeErrorKind::InvalidValue("expected a string of exactly one character"),
                at,
            )),
        }
    }
);

leaf!(
    (),
    Shape::Nil,
    |v, w| {
        let () = *v;
        w.write_nil();
        Ok(())
    },
    |r| { r.read_nil() }
);

// Strings: `str` is written by every string type (`String`, `Box<str>`,
// `Arc<str>`, `&str`, `Cow<str>` through the containers' `Encode`).
macro_rules! text {
    ($($ty:ty),*) => {$(
        impl Encode for $ty {
            #[inline(always)]
            fn bound(&self) -> Option<usize> {
                bounded::len_bound(self.len(), 1)
            }

            #[inline(always)]
            fn encode_bounded(&self, out: &mut Run<'_>) {
                bounded::put_str(out, self);
            }

            #[inline]
            fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
                w.write_str(self)
            }
        }
    )*};
}
text!(str, String);

impl<'de> Decode<'de> for String {
    const NESTING: Option<u32> = Some(0);

    #[inline(always)]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        r.read_string()
    }
}
impl MessageType for String {}
impl MessageCodec for String {
    share!();
    describe!(Shape::Str);
}

impl<'de> Decode<'de> for Box<str> {
    const NESTING: Option<u32> = Some(0);

    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        String::decode(r).map(String::into_boxed_str)
    }
}
impl MessageType for Box<str> {}
impl MessageCodec for Box<str> {
    share!();
    describe!(Shape::Str);
}

impl<'de> Decode<'de> for Arc<str> {
    const NESTING: Option<u32> = Some(0);

    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let s = r.read_str()?;
        r.charge_alloc(s.len())?;
        Ok(Arc::from(s))
    }
}
impl MessageType for Arc<str> {}
impl MessageCodec for Arc<str> {
    share!();
    describe!(Shape::Str);
}

// Borrowed from the input: no allocation, nothing charged to the budget.
impl<'de: 'a, 'a> Decode<'de> for &'a str {
    const NESTING: Option<u32> = Some(0);

    #[inline(always)]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        r.read_str()
    }
}

/// A byte slice is a `bin` (as `#[codec(bytes)]` writes a `Vec<u8>`).
impl Encode for [u8] {
    #[inline(always)]
    fn bound(&self) -> Option<usize> {
        bounded::len_bound(self.len(), 1)
    }

    #[inline(always)]
    fn encode_bounded(&self, out: &mut Run<'_>) {
        bounded::put_bin(out, self);
    }

    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_bin(self)
    }
}

impl<'de: 'a, 'a> Decode<'de> for &'a [u8] {
    const NESTING: Option<u32> = Some(0);

    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        r.read_bin()
    }
}

/// A `Cow` is written as what it holds, and decoded borrowed.
impl<B: Encode + ToOwned + ?Sized> Encode for Cow<'_, B> {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        (**self).encode(w)
    }
}

impl<'de: 'a, 'a> Decode<'de> for Cow<'a, str> {
    const NESTING: Option<u32> = Some(0);

    #[inline(always)]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        r.read_str().map(Cow::Borrowed)
    }
}

impl<'de: 'a, 'a> Decode<'de> for Cow<'a, [u8]> {
    const NESTING: Option<u32> = Some(0);

    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        r.read_bin().map(Cow::Borrowed)
    }
}
