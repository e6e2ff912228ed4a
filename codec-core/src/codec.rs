//! The `MessageCodec` trait, the `Immutable` marker and the entry points.

use std::sync::Arc;

use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::msgpack::limits::DecodeLimits;
use crate::msgpack::read::Reader;
use crate::msgpack::write::Writer;

/// A type that travels on the bus: how it is written as MessagePack, how it
/// is read back, and how it is handed to a local consumer.
///
/// Derive it with `#[derive(MessageCodec)]`; implement it by hand only for
/// types the derive cannot describe.
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
pub trait MessageCodec: Sized {
    /// Whether [`transform`](Self::transform) shares the body instead of
    /// copying it. `true` exactly when the type is [`Immutable`].
    const IMMUTABLE: bool;

    /// Appends `self` to `w` as MessagePack.
    ///
    /// # Errors
    ///
    /// [`EncodeError`] when a length exceeds MessagePack's limits or a value
    /// cannot be represented (an `i128` beyond 64 bits).
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError>;

    /// Reads one value from `r`.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] for malformed input, a value of the wrong type, or
    /// input that exceeds the reader's [`DecodeLimits`].
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError>;

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
/// As [`MessageCodec::encode`].
///
/// # Examples
///
/// ```
/// assert_eq!(codecbus_core::to_vec(&(1u8, 'a')).unwrap(), b"\x92\x01\xa1a");
/// ```
#[inline]
pub fn to_vec<T: MessageCodec>(value: &T) -> Result<Vec<u8>, EncodeError> {
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
/// As [`MessageCodec::encode`].
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
pub fn encode_into<T: MessageCodec>(value: &T, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
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
/// As [`MessageCodec::decode`]; [`DecodeErrorKind::TrailingBytes`] when
/// bytes are left after the value.
///
/// # Examples
///
/// ```
/// let v: Vec<u16> = codecbus_core::from_slice(&[0x92, 0x01, 0xcd, 0x07, 0xd5]).unwrap();
/// assert_eq!(v, [1, 2005]);
/// ```
#[inline]
pub fn from_slice<T: MessageCodec>(bytes: &[u8]) -> Result<T, DecodeError> {
    from_slice_with_limits(bytes, DecodeLimits::default())
}

/// [`from_slice`] with explicit [`DecodeLimits`].
///
/// # Errors
///
/// As [`from_slice`].
#[inline]
pub fn from_slice_with_limits<T: MessageCodec>(
    bytes: &[u8],
    limits: DecodeLimits,
) -> Result<T, DecodeError> {
    let mut r = Reader::with_limits(bytes, limits);
    // Decoded straight into the return slot: rebuilding `Ok(value)` after
    // the check below made the optimizer copy the value through the stack,
    // each copy a store-forwarding stall.
    let result = T::decode(&mut r);
    if result.is_ok() && !r.is_empty() {
        return Err(trailing_bytes(&r));
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
/// As [`MessageCodec::decode`].
///
/// # Examples
///
/// ```
/// let (v, used) = codecbus_core::decode_prefix::<u8>(&[0x05, 0xc0]).unwrap();
/// assert_eq!((v, used), (5, 1));
/// ```
#[inline]
pub fn decode_prefix<T: MessageCodec>(bytes: &[u8]) -> Result<(T, usize), DecodeError> {
    let mut r = Reader::new(bytes);
    let value = T::decode(&mut r)?;
    Ok((value, r.position()))
}
