//! The `MessageCodec`, `Encode` and `Decode` traits, the `Immutable`
//! marker and the entry points.

use std::mem::MaybeUninit;
use std::sync::Arc;

use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::msgpack::flat::Flat;
use crate::msgpack::limits::DecodeLimits;
use crate::msgpack::read::Reader;
use crate::msgpack::write::{PutInto, Run, Writer};
use crate::shape::{Definitions, Shape};

/// A type that travels on the bus: how it is written as MessagePack
/// ([`Encode`]), how it is read back from any input ([`Decode`] for every
/// lifetime: it owns its data), and how it is handed to a local consumer.
///
/// Derive it with `#[derive(MessageCodec)]`; implement it by hand only for
/// types the derive cannot describe (the three traits, as in the example
/// of [`Decode`]). A derived type with lifetimes is [`Encode`] and
/// [`Decode`] but not `MessageCodec`: it borrows from its input, and a
/// message outlives the buffer it arrived in.
///
/// # Examples
///
/// ```
/// use codecbus_core::{from_slice, to_vec, MessageCodec};
///
/// #[derive(MessageCodec, Clone, Debug, PartialEq)]
/// struct Order {
///     id: u64,
///     items: Vec<String>,
/// }
///
/// let order = Order { id: 7, items: vec!["tea".into()] };
/// let bytes = to_vec(&order).unwrap();
/// assert_eq!(from_slice::<Order>(&bytes).unwrap(), order);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `MessageCodec`",
    label = "not a message type",
    note = "derive it with `#[derive(MessageCodec)]`; a type that borrows from its input (one with lifetimes) decodes with `from_slice` but is no message of the bus: give it owned fields, or `SharedStr`/`bytes::Bytes` to share the received buffer"
)]
pub trait MessageCodec: Encode + for<'de> Decode<'de> {
    /// Whether [`transform`](Self::transform) shares the body instead of
    /// copying it. `true` exactly when the type is [`Immutable`].
    const IMMUTABLE: bool;

    /// The body handed to one local consumer: the same allocation for
    /// immutable types, a deep copy otherwise.
    fn transform(body: &Arc<Self>) -> Arc<Self>;

    /// A deep copy of `value`, for a container of this type (`Vec<T>`,
    /// `Option<T>`, a tuple, a map ...) that is copied on local delivery;
    /// the containers' own impls build their copies from it, so they need
    /// no `Clone` of their elements. That lets an immutable type that is not
    /// `Clone` sit in a `Vec` (shared, like its container).
    ///
    /// `None` when the type cannot copy itself. A container holding it is
    /// then handed to consumers shared instead of copied: they read it, and
    /// `body_mut`-style access finds it shared. Derived codecs and the
    /// library's impls implement this method (a `Clone` for deep-copied
    /// types; field by field for immutable ones); a hand-written codec of a
    /// `Clone` type should return `Some(value.clone())`.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_core::MessageCodec;
    ///
    /// #[derive(MessageCodec, Debug, PartialEq)]
    /// #[codec(immutable)]
    /// struct Price {
    ///     cents: u64,
    /// }
    ///
    /// // Not `Clone`, yet copied field by field when a container asks.
    /// let copy = MessageCodec::deep_copy(&vec![Price { cents: 5 }]);
    /// assert_eq!(copy, Some(vec![Price { cents: 5 }]));
    /// ```
    #[inline]
    fn deep_copy(value: &Self) -> Option<Self> {
        let _ = value;
        None
    }

    /// What this type's MessagePack looks like, for the checks of a
    /// codec's evolution ([`shape`](crate::shape)). A named codec (a
    /// derived type) records its definition in `defs` once and returns a
    /// [`Shape::Ref`] to it; a container returns its shape around its
    /// elements'.
    ///
    /// The default is [`Shape::Opaque`]: a codec written by hand that does
    /// not describe itself, whose changes no check can see. Describe one
    /// with the shape its `encode` writes.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_core::MessageCodec;
    /// use codecbus_core::shape::{Definitions, Shape};
    ///
    /// let shape = <Vec<Option<u16>> as MessageCodec>::shape(&mut Definitions::new());
    /// assert_eq!(shape.canonical_json(), r#"{"array":{"option":"u16"}}"#);
    /// ```
    fn shape(defs: &mut Definitions) -> Shape {
        let _ = defs;
        Shape::Opaque
    }
}

/// A type that may be a message's body on the bus: what is sent, what a
/// consumer takes and what a reply is.
///
/// Every [`MessageCodec`] is one except those that only point to another
/// codec's value, `Box<T>` and `Arc<T>`: they are written as their target,
/// so they are fine as fields, but a consumer of `T` would never take an
/// `Arc<T>` body. The bus asks for this trait wherever it takes a body or
/// names a consumer's or reply's type, so such a mistake is a compile error
/// on the caller's line, reported by `cargo check` too. To send a value you
/// keep behind an `Arc`, wrap it in `codecbus_bus::Shared`.
///
/// `#[derive(MessageCodec)]` implements it, and so does this crate for
/// each of its codecs but `Box<T>` and `Arc<T>`. A hand-written codec adds
/// the one line `impl MessageType for MyType {}`.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use codecbus_core::{MessageCodec, MessageType};
///
/// #[derive(MessageCodec, Clone)]
/// struct Order {
///     id: u64,
///     note: Arc<String>, // a pointer is a fine field
/// }
///
/// fn sendable<T: MessageType>() {}
/// sendable::<Order>();
/// sendable::<Vec<Arc<String>>>(); // a container of pointers is a message
/// ```
///
/// ```compile_fail
/// use std::sync::Arc;
/// fn sendable<T: codecbus_core::MessageType>() {}
/// sendable::<Arc<String>>(); // error: `Arc<String>` is not a message type
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a message type of the bus",
    label = "not a message type",
    note = "`Arc<T>` and `Box<T>` only point to a message: send the `T` itself, or an `Arc<T>` you keep as `Shared(arc)`; consumers and replies take `T`",
    note = "a message type derives `MessageCodec` or is one of codecbus's own codecs; a codec written by hand adds `impl MessageType for MyType {{}}`"
)]
pub trait MessageType: MessageCodec {}

/// How a value is written as MessagePack.
///
/// Every [`MessageCodec`] is `Encode`; so are the borrowed types a message
/// view is made of (`&str`, `&[u8]`, `Cow<str>`, a derived struct with
/// lifetimes), which decode through [`Decode`] without being messages of
/// their own. `#[derive(MessageCodec)]` implements it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be written: it is not `Encode`",
    label = "written through its codec",
    note = "derive `MessageCodec` on `{Self}`; for a field of a type you cannot change, use `#[codec(serde)]`, `#[codec(with = \"module\")]` or `#[codec(skip)]`"
)]
pub trait Encode {
    /// Appends `self` to `w` as MessagePack.
    ///
    /// # Errors
    ///
    /// [`EncodeError`] when a length exceeds MessagePack's limits or a value
    /// cannot be represented (an `i128` beyond 64 bits).
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError>;

    /// The room [`encode_bounded`](Self::encode_bounded) needs for any
    /// value of this type, when there is such a bound and the encoding
    /// cannot fail: at least the most bytes it writes (a scalar's largest
    /// form, or more where it writes a padded form and keeps a prefix), a
    /// derived struct's constant bytes plus its fields' rooms. `None` (the
    /// default) otherwise.
    ///
    /// A sequence of such values is written a run at a time through
    /// [`encode_bounded`](Self::encode_bounded), one capacity check per
    /// run instead of one per value. Not part of the API: set by the
    /// derive and this crate's impls.
    #[doc(hidden)]
    const MAX_LEN: Option<usize> = None;

    /// How this type's form is made from its bytes in memory, when every
    /// byte of it is a constant or one of the value's (`f32`, `f64`,
    /// `bool`, and tuples, arrays and derived structs made only of them).
    /// A sequence of such values is written with byte shuffles, several
    /// fields per store. `None` (the default) otherwise. Not part of the
    /// API: set by the derive and this crate's impls; a wrong value gives
    /// wrong bytes, never undefined behaviour.
    #[doc(hidden)]
    const FLAT: Option<Flat> = None;

    /// The most bytes [`encode_bounded`](Self::encode_bounded) writes for
    /// this value, when there is such a bound and the encoding cannot
    /// fail: [`MAX_LEN`](Self::MAX_LEN) for a type that has one; for a
    /// string, a `bin`, a sequence of bounded elements, or a derived type
    /// made of them, a bound computed from the lengths it holds. `None`
    /// (the default for a type without `MAX_LEN`) otherwise.
    ///
    /// A derived type with a bound short enough is written in one run:
    /// one capacity check for the whole value instead of one per field.
    /// Not part of the API.
    #[doc(hidden)]
    #[inline(always)]
    fn bound(&self) -> Option<usize> {
        Self::MAX_LEN
    }

    /// Writes the bytes [`encode`](Self::encode) writes into `out`, for a
    /// value with a [`bound`](Self::bound): never more than that. Not part
    /// of the API.
    ///
    /// The default goes through a [`Writer`] (an allocation): a type that
    /// sets `MAX_LEN` or overrides `bound` implements this too.
    #[doc(hidden)]
    fn encode_bounded(&self, out: &mut Run<'_>) {
        let mut w = Writer::new();
        if self.encode(&mut w).is_ok() {
            out.put_slice(w.as_slice());
        }
    }
}

impl<T: Encode + ?Sized> PutInto for T {
    #[inline(always)]
    fn put_into(&self, out: &mut Run<'_>) {
        self.encode_bounded(out);
    }
}

/// How a value is read back from MessagePack input that lives for `'de`.
///
/// A type that owns its data implements it for every `'de` (that is what
/// [`MessageCodec`] asks); a type that borrows from the input — `&'a str`,
/// `&'a [u8]`, `Cow<'a, str>`, `Vec<&'a str>`, a derived struct with
/// lifetimes — implements it for the inputs that outlive it (`'de: 'a`),
/// and decodes without copying its strings and bytes. Decoding such a type
/// from a buffer that does not live long enough is a compile error, and
/// so is sending it on the bus (a message owns its data: [`MessageCodec`]).
///
/// # Examples
///
/// ```
/// use std::borrow::Cow;
/// use codecbus_core::{from_slice, to_vec, MessageCodec};
///
/// #[derive(MessageCodec, Debug, PartialEq)]
/// struct Login<'a> {
///     user: &'a str,
///     groups: Vec<&'a str>,
///     note: Cow<'a, str>,
/// }
///
/// let bytes = to_vec(&Login { user: "ada", groups: vec!["ops"], note: "hi".into() }).unwrap();
/// let login: Login<'_> = from_slice(&bytes).unwrap();
/// assert_eq!(login.user, "ada");
/// // Borrowed from `bytes`, not copied:
/// assert!(bytes.as_ptr_range().contains(&login.user.as_ptr()));
/// assert!(matches!(login.note, Cow::Borrowed("hi")));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be read: it is not `Decode`",
    label = "read through its codec",
    note = "derive `MessageCodec` on `{Self}`; for a field of a type you cannot change, use `#[codec(serde)]`, `#[codec(with = \"module\")]` or `#[codec(skip)]`"
)]
pub trait Decode<'de>: Sized {
    /// Reads one value from `r`.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] for malformed input, a value of the wrong type, or
    /// input that exceeds the reader's [`DecodeLimits`].
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError>;

    /// How many levels of nesting (as [`DecodeLimits`] counts them) every
    /// value of this type takes, when that is the same for every value:
    /// `Some(0)` for a scalar or a string, one more than its deepest
    /// field's for a derived struct whose fields all have one. `None` (the
    /// default) when it varies or the type may hold itself.
    ///
    /// A derived decoder of a type with a fixed nesting compares the depth
    /// limit once, with the levels it will take, instead of counting each
    /// level in and out. Not part of the API: set by the derive and this
    /// crate's impls.
    #[doc(hidden)]
    const NESTING: Option<u32> = None;

    /// The length of this type's every value, when each is written in
    /// one form of one length with fixed markers (`f32`, `f64`, `bool`,
    /// and tuples, arrays and positional derived structs of them). Not
    /// part of the API.
    #[doc(hidden)]
    const FIXED_LEN: Option<usize> = None;

    /// The value whose form is `bytes` (exactly
    /// [`FIXED_LEN`](Self::FIXED_LEN) bytes), read with no bounds check
    /// past the one on the whole; `None` when they are not that form (a
    /// wider form, another type, a wrong marker), and the caller reads the
    /// value the usual way, which reports any error. Not part of the API.
    #[doc(hidden)]
    #[inline(always)]
    fn decode_fixed(bytes: &'de [u8]) -> Option<Self> {
        let _ = bytes;
        None
    }

    /// [`decode`](Self::decode) into `out`, which it leaves `Some` when it
    /// returns `Ok`. What the decoders of containers and derived structs
    /// call for their elements and fields: a `Result<Self, DecodeError>`
    /// puts the error's pointer over the value's fields (bytes 8 to 16), so
    /// the optimizer moved the fields of a small struct through memory in
    /// 8-byte words (a store-forwarding stall per pair of `f32`s); an
    /// `Option<Self>` has no pointer there. Not part of the API: derived
    /// structs with a fast path implement it, and `decode` through it.
    ///
    /// # Errors
    ///
    /// As [`decode`](Self::decode).
    #[doc(hidden)]
    #[inline(always)]
    fn decode_in_place(r: &mut Reader<'de>, out: &mut Option<Self>) -> Result<(), DecodeError> {
        *out = Some(Self::decode(r)?);
        Ok(())
    }

    /// [`decode`](Self::decode) into `slot`, which it returns initialized.
    /// What a `Vec` decodes its elements with, straight into its spare
    /// capacity: built anywhere else and moved in, a struct's fields are
    /// written a few bytes at a time and read back as 16-byte words, each
    /// read stalled until the writes land (a store-forwarding stall per
    /// element). Derived structs with a fast path write their fields
    /// into `slot` themselves.
    ///
    /// The `&mut Self` returned is `slot`, now initialized: the caller
    /// compares the two, so an implementation that returns another value
    /// is an error, never an uninitialized element. Not part of the API.
    ///
    /// # Errors
    ///
    /// As [`decode`](Self::decode).
    #[doc(hidden)]
    #[inline(always)]
    fn decode_to<'s>(
        r: &mut Reader<'de>,
        slot: &'s mut MaybeUninit<Self>,
    ) -> Result<&'s mut Self, DecodeError> {
        let mut out = None;
        Self::decode_in_place(r, &mut out)?;
        match out {
            Some(v) => Ok(slot.write(v)),
            None => Err(r.no_value()),
        }
    }

    /// The value a struct field of this type takes when its key is absent
    /// from a map. `None` (the field is required) except for `Option`,
    /// which becomes `None`.
    #[inline]
    fn value_when_missing() -> Option<Self> {
        None
    }
}

/// A type whose values cannot change once built, so a single allocation can
/// be handed to many consumers at once.
///
/// Implemented for primitives, strings, `Box`/`Arc`/`Vec`/`Option`/arrays/
/// tuples of immutable types, `imbl` collections and the extension types
/// (and, in codecbus-json, the JSON value); `#[derive(MessageCodec)]` implements it for types marked
/// `#[codec(immutable)]` after checking every field. Types with interior
/// mutability (`Cell`, `RefCell`, `Mutex`, atomics) must never implement it.
///
/// ```compile_fail
/// use codecbus_core::MessageCodec;
///
/// #[derive(MessageCodec)]
/// #[codec(immutable)]
/// struct Counter {
///     hits: std::cell::Cell<u64>, // error: `Cell<u64>` is not `Immutable`
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `Immutable`: its value could change while shared between consumers",
    label = "not `Immutable`",
    note = "remove `#[codec(immutable)]` to deliver deep copies, or use a type without interior mutability"
)]
pub trait Immutable: Sync {}

/// Encodes `value` into a new buffer.
///
/// # Errors
///
/// As [`Encode::encode`].
///
/// # Examples
///
/// ```
/// assert_eq!(codecbus_core::to_vec(&(1u8, 'a')).unwrap(), b"\x92\x01\xa1a");
/// ```
#[inline]
pub fn to_vec<T: Encode + ?Sized>(value: &T) -> Result<Vec<u8>, EncodeError> {
    let mut w = Writer::new();
    value.encode(&mut w)?;
    Ok(w.into_vec())
}

/// Appends the encoding of `value` to `buf`, reusing its capacity.
///
/// On error, `buf` keeps what it held before the call.
///
/// # Errors
///
/// As [`Encode::encode`].
///
/// # Examples
///
/// ```
/// let mut buf = Vec::with_capacity(64);
/// codecbus_core::encode_into(&true, &mut buf).unwrap();
/// codecbus_core::encode_into(&false, &mut buf).unwrap();
/// assert_eq!(buf, [0xc3, 0xc2]);
/// ```
#[inline]
pub fn encode_into<T: Encode + ?Sized>(value: &T, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
    let start = buf.len();
    let mut w = Writer::from_vec(std::mem::take(buf));
    let result = value.encode(&mut w);
    *buf = w.into_vec();
    if result.is_err() {
        buf.truncate(start);
    }
    result
}

/// Decodes one value that must span all of `bytes`, with default limits.
///
/// # Errors
///
/// As [`Decode::decode`]; [`DecodeErrorKind::TrailingBytes`] when
/// bytes are left after the value.
///
/// # Examples
///
/// ```
/// let v: Vec<u16> = codecbus_core::from_slice(&[0x92, 0x01, 0xcd, 0x07, 0xd5]).unwrap();
/// assert_eq!(v, [1, 2005]);
/// ```
#[inline]
pub fn from_slice<'de, T: Decode<'de>>(bytes: &'de [u8]) -> Result<T, DecodeError> {
    from_slice_with_limits(bytes, DecodeLimits::default())
}

/// [`from_slice`] with explicit [`DecodeLimits`].
///
/// # Errors
///
/// As [`from_slice`].
#[inline]
pub fn from_slice_with_limits<'de, T: Decode<'de>>(
    bytes: &'de [u8],
    limits: DecodeLimits,
) -> Result<T, DecodeError> {
    decode_whole(&mut Reader::with_limits(bytes, limits))
}

/// Decodes one value that must span all of `bytes`, with default limits,
/// sharing the buffer: [`SharedStr`](crate::ext::SharedStr) and
/// `bytes::Bytes` fields point into `bytes` instead of being copied (see
/// [`Reader::shared`]).
///
/// # Errors
///
/// As [`from_slice`].
#[inline]
pub fn from_bytes<T: MessageCodec>(bytes: &bytes::Bytes) -> Result<T, DecodeError> {
    decode_whole(&mut Reader::shared(bytes, DecodeLimits::default()))
}

/// One value that must take all of what `r` has left.
#[inline(always)]
fn decode_whole<'de, T: Decode<'de>>(r: &mut Reader<'de>) -> Result<T, DecodeError> {
    // Decoded straight into the return slot: rebuilding `Ok(value)` after
    // the check below made the optimizer copy the value through the stack,
    // each copy a store-forwarding stall.
    let result = T::decode(r);
    if result.is_ok() && !r.is_empty() {
        return Err(trailing_bytes(r));
    }
    result
}

#[cold]
#[inline(never)]
fn trailing_bytes(r: &Reader<'_>) -> DecodeError {
    r.error(DecodeErrorKind::TrailingBytes(r.remaining()))
}

/// Decodes one value from the front of `bytes` and returns it with the
/// number of bytes it took, for framing several values in one buffer.
///
/// # Errors
///
/// As [`Decode::decode`].
///
/// # Examples
///
/// ```
/// let (v, used) = codecbus_core::decode_prefix::<u8>(&[0x05, 0xc0]).unwrap();
/// assert_eq!((v, used), (5, 1));
/// ```
#[inline]
pub fn decode_prefix<'de, T: Decode<'de>>(bytes: &'de [u8]) -> Result<(T, usize), DecodeError> {
    let mut r = Reader::new(bytes);
    let value = T::decode(&mut r)?;
    Ok((value, r.position()))
}

/// The nesting of a struct whose fields have these: one more than the
/// deepest, `None` when any field's varies.
pub(crate) const fn nesting(fields: &[Option<u32>]) -> Option<u32> {
    let mut deepest = 0;
    let mut i = 0;
    while i < fields.len() {
        match fields[i] {
            Some(levels) if levels > deepest => deepest = levels,
            Some(_) => {}
            None => return None,
        }
        i += 1;
    }
    deepest.checked_add(1)
}

/// `Decode::FIXED_LEN` of a struct or tuple: its header plus its fields',
/// `None` when a field has none.
pub(crate) const fn fixed_len(header: usize, fields: &[Option<usize>]) -> Option<usize> {
    max_len(header, fields)
}

/// `Encode::MAX_LEN` of a struct: its constant bytes plus its fields'
/// bounds, `None` when a field has none.
pub(crate) const fn max_len(constant: usize, fields: &[Option<usize>]) -> Option<usize> {
    let mut total = constant;
    let mut i = 0;
    while i < fields.len() {
        match fields[i] {
            Some(len) => {
                total = match total.checked_add(len) {
                    Some(total) => total,
                    None => return None,
                }
            }
            None => return None,
        }
        i += 1;
    }
    Some(total)
}
