//! `Option`, references, `Box`, `Arc`, tuples and arrays.
#![forbid(unsafe_code)]

use std::sync::Arc;

use super::collections::{encode_elements, put_seq, seq_bound};
use super::container_transform;
use crate::codec::{Decode, Encode, Immutable, MessageCodec, MessageType};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::msgpack::flat::{self, Flat, FlatPart};
use crate::msgpack::read::Reader;
use crate::msgpack::write::{Run, Writer};
use crate::shape::{Definitions, Shape};

impl<T: Immutable> Immutable for Option<T> {}
impl<T: Immutable + ?Sized> Immutable for Box<T> {}
impl<T: Immutable + Send + ?Sized> Immutable for Arc<T> {}
impl<T: Immutable, const N: usize> Immutable for [T; N] {}
impl<T: Immutable> Immutable for [T] {}

impl<T: Encode> Encode for Option<T> {
    // `nil` is one byte, and every value takes at least one.
    const MAX_LEN: Option<usize> = T::MAX_LEN;

    #[inline(always)]
    fn bound(&self) -> Option<usize> {
        match self {
            Some(v) => v.bound(),
            None => Some(1),
        }
    }

    #[inline(always)]
    fn encode_bounded(&self, out: &mut Run<'_>) {
        match self {
            Some(v) => v.encode_bounded(out),
            None => out.put([0xc0]),
        }
    }

    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        match self {
            Some(v) => v.encode(w),
            None => {
                w.write_nil();
                Ok(())
            }
        }
    }
}

impl<'de, T: Decode<'de>> Decode<'de> for Option<T> {
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        if r.try_read_nil() {
            return Ok(None);
        }
        r.enter()?;
        let v = T::decode(r)?;
        r.leave();
        Ok(Some(v))
    }
    #[inline]
    fn value_when_missing() -> Option<Self> {
        Some(None)
    }
}

impl<T: MessageCodec> MessageType for Option<T> {}
impl<T: MessageCodec> MessageCodec for Option<T> {
    container_transform!(T::IMMUTABLE);
    fn shape(defs: &mut Definitions) -> Shape {
        Shape::Option(Box::new(T::shape(defs)))
    }
    #[inline]
    fn deep_copy(value: &Self) -> Option<Self> {
        match value {
            Some(v) => T::deep_copy(v).map(Some),
            None => Some(None),
        }
    }
}

/// A reference is written as what it points to (`&str`, `&[u8]`, `&T`).
///
/// Pointers (`&T`, `Box`, `Arc`, `Cow`) have no bound (`Encode::MAX_LEN`,
/// `Encode::bound`): a type holds itself through one, and a bound through
/// it would be a cycle at compile time, or a walk of the rest of the value
/// at each level of its encoding.
impl<T: Encode + ?Sized> Encode for &T {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        (**self).encode(w)
    }
}

impl<T: Encode + ?Sized> Encode for Box<T> {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        (**self).encode(w)
    }
}

impl<'de, T: Decode<'de>> Decode<'de> for Box<T> {
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        r.enter()?;
        let v = T::decode(r)?;
        r.leave();
        Ok(Box::new(v))
    }
}

/// Written as its target, and of its target's shape.
impl<T: MessageCodec> MessageCodec for Box<T> {
    container_transform!(T::IMMUTABLE);
    fn shape(defs: &mut Definitions) -> Shape {
        T::shape(defs)
    }
    #[inline]
    fn deep_copy(value: &Self) -> Option<Self> {
        T::deep_copy(value).map(Box::new)
    }
}

impl<T: Encode + ?Sized> Encode for Arc<T> {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        (**self).encode(w)
    }
}

impl<'de, T: Decode<'de>> Decode<'de> for Arc<T> {
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        r.enter()?;
        let v = T::decode(r)?;
        r.leave();
        Ok(Arc::new(v))
    }
}

// `Arc<T>` is shared by clone: nothing behind it can be changed through the
// `Arc`, so a consumer that wants to mutate uses `Arc::make_mut`, which
// copies on write.
impl<T: MessageCodec + Send + Sync> MessageCodec for Arc<T> {
    const IMMUTABLE: bool = T::IMMUTABLE;
    #[inline]
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        if Self::IMMUTABLE {
            Arc::clone(body)
        } else {
            Arc::new(Arc::clone(body))
        }
    }
    #[inline]
    fn deep_copy(value: &Self) -> Option<Self> {
        Some(Arc::clone(value))
    }
    /// Written as its target, and of its target's shape.
    fn shape(defs: &mut Definitions) -> Shape {
        T::shape(defs)
    }
}

impl<T: Encode, const N: usize> Encode for [T; N] {
    const FLAT: Option<Flat> = flat::array(T::FLAT, N, std::mem::size_of::<T>());
    const MAX_LEN: Option<usize> = match T::MAX_LEN {
        Some(max_len) if N <= u32::MAX as usize => match max_len.checked_mul(N) {
            Some(elements) => elements.checked_add(5),
            None => None,
        },
        _ => None,
    };

    #[inline(always)]
    fn bound(&self) -> Option<usize> {
        seq_bound::<T>(N)
    }

    #[inline(always)]
    fn encode_bounded(&self, out: &mut Run<'_>) {
        put_seq(self.iter(), N, out);
    }

    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_array_len(N)?;
        encode_elements(self.iter(), N, Some(self), w)
    }
}

impl<'de, T: Decode<'de>, const N: usize> Decode<'de> for [T; N] {
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let at = r.position();
        let len = r.read_array_len()?;
        if len != N {
            return Err(DecodeError::new(
                DecodeErrorKind::WrongLength {
                    expected: N,
                    found: len,
                },
                at,
            ));
        }
        r.enter()?;
        r.charge_alloc(N.saturating_mul(std::mem::size_of::<T>()))?;
        let mut items = Vec::with_capacity(N);
        for i in 0..N {
            items.push(T::decode(r).map_err(|e| e.in_index(i))?);
        }
        r.leave();
        // the length was checked above, so the conversion cannot fail
        items.try_into().map_err(|_| {
            r.error(DecodeErrorKind::WrongLength {
                expected: N,
                found: len,
            })
        })
    }
}

impl<T: MessageCodec, const N: usize> MessageType for [T; N] {}
/// An array of exactly `N` elements: a [`Shape::Tuple`] of `N` times the
/// element's shape.
impl<T: MessageCodec, const N: usize> MessageCodec for [T; N] {
    container_transform!(T::IMMUTABLE);
    fn shape(defs: &mut Definitions) -> Shape {
        if N == 0 {
            return Shape::Tuple(Vec::new());
        }
        Shape::Tuple(vec![T::shape(defs); N])
    }
    fn deep_copy(value: &Self) -> Option<Self> {
        let items: Vec<T> = value.iter().map(T::deep_copy).collect::<Option<_>>()?;
        items.try_into().ok()
    }
}

/// A tuple's decoder of a header other than its own fixed array (a wider
/// length form, another length, another type), out of line.
trait TupleGeneral<'de>: Sized {
    fn decode_other_header(r: &mut Reader<'de>) -> Result<Self, DecodeError>;
}

macro_rules! tuple {
    ($len:expr => $($name:ident $idx:tt),+) => {
        impl<$($name: Immutable),+> Immutable for ($($name,)+) {}

        impl<$($name: MessageCodec),+> MessageType for ($($name,)+) {}
        impl<$($name: MessageCodec),+> MessageCodec for ($($name,)+) {
            container_transform!(true $(&& $name::IMMUTABLE)+);
            fn deep_copy(value: &Self) -> Option<Self> {
                Some(($($name::deep_copy(&value.$idx)?,)+))
            }
            fn shape(defs: &mut Definitions) -> Shape {
                Shape::Tuple(vec![$($name::shape(defs)),+])
            }
        }

        impl<$($name: Encode),+> Encode for ($($name,)+) {
            const MAX_LEN: Option<usize> = crate::codec::max_len(1, &[$($name::MAX_LEN),+]);
            const FLAT: Option<Flat> = flat::record(
                &[FlatPart::Bytes(&[0x90 | $len]), $(FlatPart::Field($name::FLAT, std::mem::offset_of!(Self, $idx))),+],
                std::mem::size_of::<Self>(),
            );

            #[inline(always)]
            fn bound(&self) -> Option<usize> {
                let mut total: usize = 1;
                $( total = total.saturating_add(self.$idx.bound()?); )+
                Some(total)
            }

            #[inline(always)]
            fn encode_bounded(&self, out: &mut Run<'_>) {
                out.put([0x90 | $len]);
                $( self.$idx.encode_bounded(out); )+
            }

            #[inline]
            fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
                w.write_raw(&[0x90 | $len]);
                $( self.$idx.encode(w)?; )+
                Ok(())
            }
        }

        impl<'de, $($name: Decode<'de>),+> Decode<'de> for ($($name,)+) {
            const NESTING: Option<u32> = crate::codec::nesting(&[$($name::NESTING),+]);
            const FIXED_LEN: Option<usize> = crate::codec::fixed_len(1, &[$($name::FIXED_LEN),+]);

            #[inline(always)]
            #[allow(non_snake_case)]
            fn decode_fixed(bytes: &'de [u8]) -> Option<Self> {
                let (&header, bytes) = bytes.split_first()?;
                if header != 0x90 | $len {
                    return None;
                }
                $( let ($name, bytes) = bytes.split_at_checked($name::FIXED_LEN?)?; )+
                let _ = bytes;
                Some(($($name::decode_fixed($name)?,)+))
            }

            #[inline]
            fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
                let mut out = None;
                Self::decode_in_place(r, &mut out)?;
                out.ok_or_else(|| r.no_value())
            }

            // As a derived positional struct's: the header as written, the
            // elements in a straight line into their places, small enough
            // to inline; any other header out of line.
            #[inline(always)]
            #[allow(non_snake_case)]
            fn decode_in_place(r: &mut Reader<'de>, out: &mut Option<Self>) -> Result<(), DecodeError> {
                if let Some(v) = crate::__private::decode_fixed_as::<Self>(r) {
                    *out = Some(v);
                    return Ok(());
                }
                crate::__private::enter_as::<Self>(r)?;
                if r.eat_raw(&[0x90 | $len]) {
                    let mut slots: ($(Option<$name>,)+) = ($(None::<$name>,)+);
                    $( $name::decode_in_place(r, &mut slots.$idx).map_err(|e| e.in_index($idx))?; )+
                    crate::__private::leave_as::<Self>(r);
                    if let ($(Some($name),)+) = slots {
                        *out = Some(($($name,)+));
                        return Ok(());
                    }
                    return Err(r.no_value());
                }
                crate::__private::leave_as::<Self>(r);
                *out = Some(Self::decode_other_header(r)?);
                Ok(())
            }
        }

        impl<'de, $($name: Decode<'de>),+> TupleGeneral<'de> for ($($name,)+) {
            #[inline(never)]
            fn decode_other_header(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
                let at = r.position();
                let len = r.read_array_len()?;
                if len != $len {
                    return Err(DecodeError::new(
                        DecodeErrorKind::WrongLength { expected: $len, found: len },
                        at,
                    ));
                }
                r.enter()?;
                let v = ($($name::decode(r).map_err(|e| e.in_index($idx))?,)+);
                r.leave();
                Ok(v)
            }
        }
    };
}
tuple!(1 => A 0);
tuple!(2 => A 0, B 1);
tuple!(3 => A 0, B 1, C 2);
tuple!(4 => A 0, B 1, C 2, D 3);
tuple!(5 => A 0, B 1, C 2, D 3, E 4);
tuple!(6 => A 0, B 1, C 2, D 3, E 4, F 5);
tuple!(7 => A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple!(8 => A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple!(9 => A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple!(10 => A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple!(11 => A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple!(12 => A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
