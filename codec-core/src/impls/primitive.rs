//! Booleans, integers, floats, `char`, `()` and strings.
#![forbid(unsafe_code)]

use std::sync::Arc;

use crate::codec::{Immutable, MessageCodec};
use crate::error::DecodeError;
use crate::error::{DecodeErrorKind, EncodeError, EncodeErrorKind};
use crate::msgpack::kind::Int;
use crate::msgpack::read::Reader;
use crate::msgpack::write::Writer;

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

/// The body behind an `Arc` is shared: these types cannot change.
macro_rules! share {
    () => {
        const IMMUTABLE: bool = true;
        crate::impls::copy_by_clone!();
        #[inline]
        fn transform(body: &Arc<Self>) -> Arc<Self> {
            Arc::clone(body)
        }
    };
}

impl MessageCodec for bool {
    share!();
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_bool(*self);
        Ok(())
    }
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        r.read_bool()
    }
}

macro_rules! unsigned {
    ($($ty:ty => $read:ident),*) => {$(
        impl MessageCodec for $ty {
            share!();
            #[inline]
            fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
                w.write_u64(*self as u64);
                Ok(())
            }
            #[inline]
            fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                r.$read()
            }
        }
    )*};
}
unsigned!(u8 => read_u8, u16 => read_u16, u32 => read_u32, u64 => read_u64, usize => read_usize);

macro_rules! signed {
    ($($ty:ty => $read:ident),*) => {$(
        impl MessageCodec for $ty {
            share!();
            #[inline]
            fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
                w.write_i64(*self as i64);
                Ok(())
            }
            #[inline]
            fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                r.$read()
            }
        }
    )*};
}
signed!(i8 => read_i8, i16 => read_i16, i32 => read_i32, i64 => read_i64, isize => read_isize);

impl MessageCodec for u128 {
    share!();
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        let v = u64::try_from(*self).map_err(|_| {
            EncodeError::new(EncodeErrorKind::IntegerOutOfRange).with_detail(format!("u128 {self}"))
        })?;
        w.write_u64(v);
        Ok(())
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        r.read_u64().map(u128::from)
    }
}

impl MessageCodec for i128 {
    share!();
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        if let Ok(v) = i64::try_from(*self) {
            w.write_i64(v);
        } else if let Ok(v) = u64::try_from(*self) {
            w.write_u64(v);
        } else {
            return Err(EncodeError::new(EncodeErrorKind::IntegerOutOfRange)
                .with_detail(format!("i128 {self}")));
        }
        Ok(())
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(match r.read_int()? {
            Int::Unsigned(v) => i128::from(v),
            Int::Negative(v) => i128::from(v),
        })
    }
}

impl MessageCodec for f32 {
    share!();
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_f32(*self);
        Ok(())
    }
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        r.read_f32()
    }
}

impl MessageCodec for f64 {
    share!();
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_f64(*self);
        Ok(())
    }
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        r.read_f64()
    }
}

impl MessageCodec for char {
    share!();
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        let mut buf = [0u8; 4];
        w.write_str(self.encode_utf8(&mut buf))
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
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
}

impl MessageCodec for () {
    share!();
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_nil();
        Ok(())
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        r.read_nil()
    }
}

impl MessageCodec for String {
    share!();
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_str(self)
    }
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        r.read_string()
    }
}

impl MessageCodec for Box<str> {
    share!();
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_str(self)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        String::decode(r).map(String::into_boxed_str)
    }
}

impl MessageCodec for Arc<str> {
    share!();
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_str(self)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let s = r.read_str()?;
        r.charge_alloc(s.len())?;
        Ok(Arc::from(s))
    }
}
