//! Raw extension values, `bin` byte strings and raw MessagePack values.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use crate::codec::{Decode, Encode, Immutable, MessageCodec, MessageType};
use crate::error::{DecodeError, EncodeError};
use crate::impls::container_transform;
use crate::msgpack::read::Reader;
use crate::msgpack::write::Writer;
use crate::shape::Shape;

/// An extension value carried as raw bytes: what an unknown extension type
/// decodes into, so it can be passed on instead of failing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ext {
    /// The extension type id (`0..=127` for applications; negative ids are
    /// reserved by the MessagePack spec).
    pub type_id: i8,
    /// The payload.
    pub data: Vec<u8>,
}

impl Immutable for Ext {}

impl Encode for Ext {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_ext(self.type_id, &self.data)
    }
}

impl<'de> Decode<'de> for Ext {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let (type_id, data) = r.read_ext()?;
        r.charge_alloc(data.len())?;
        Ok(Self {
            type_id,
            data: data.to_vec(),
        })
    }
}

impl MessageType for Ext {}
/// Of shape [`Shape::Opaque`]: its type id is the value's, not the
/// type's, so no [`Shape::Ext`] describes it (it reads an extension of any
/// type id).
impl MessageCodec for Ext {
    container_transform!(true);
    crate::impls::copy_by_clone!();
    crate::impls::describe!(Shape::Opaque);
}

/// A byte string encoded as MessagePack `bin` (a `Vec<u8>` encodes as an
/// array of integers, as serde does; use this type or the field attribute
/// `#[codec(bytes)]` for `bin`).
///
/// # Examples
///
/// ```
/// use codecbus_core::ext::Bytes;
///
/// let b = Bytes::from(vec![1u8, 2]);
/// assert_eq!(codecbus_core::to_vec(&b).unwrap(), [0xc4, 2, 1, 2]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bytes(pub Vec<u8>);

impl Immutable for Bytes {}

impl From<Vec<u8>> for Bytes {
    fn from(v: Vec<u8>) -> Self {
        Self(v)
    }
}

impl From<Bytes> for Vec<u8> {
    fn from(b: Bytes) -> Self {
        b.0
    }
}

impl Deref for Bytes {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        &self.0
    }
}

impl DerefMut for Bytes {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.0
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Encode for Bytes {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_bin(&self.0)
    }
}

impl<'de> Decode<'de> for Bytes {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        crate::__private::decode_bytes(r)
    }
}

impl MessageType for Bytes {}
impl MessageCodec for Bytes {
    const IMMUTABLE: bool = true;
    crate::impls::copy_by_clone!();
    crate::impls::describe!(Shape::Bin);
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        Arc::clone(body)
    }
}

/// One MessagePack value kept as its encoded bytes: decoded without being
/// interpreted (checked to be one well-formed value, within the reader's
/// limits) and encoded back exactly as it was. What the catch-all variant
/// of a `#[codec(union)]` enum holds for a tag this version does not know,
/// so a value from a newer peer passes through unchanged.
///
/// # Examples
///
/// ```
/// use codecbus_core::ext::RawValue;
/// use codecbus_core::{from_slice, to_vec};
///
/// let raw: RawValue = from_slice(&[0x92, 0x01, 0xa1, b'x']).unwrap();
/// assert_eq!(raw.as_bytes(), [0x92, 0x01, 0xa1, b'x']);
/// assert_eq!(to_vec(&raw).unwrap(), raw.as_bytes());
/// assert!(RawValue::new(vec![0x92, 0x01]).is_err()); // an array cut short
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RawValue(Vec<u8>);

impl RawValue {
    /// `bytes` as a raw value, when they are exactly one MessagePack value.
    ///
    /// # Errors
    ///
    /// The decode error of `bytes` that are not one value (cut short,
    /// malformed, or followed by more bytes).
    pub fn new(bytes: Vec<u8>) -> Result<Self, DecodeError> {
        let mut r = Reader::new(&bytes);
        r.skip_value_limited()?;
        if !r.is_empty() {
            return Err(r.error(crate::error::DecodeErrorKind::TrailingBytes(r.remaining())));
        }
        Ok(Self(bytes))
    }

    /// The encoded value.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The encoded value, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

impl Default for RawValue {
    /// `nil`.
    fn default() -> Self {
        Self(vec![0xc0])
    }
}

impl Immutable for RawValue {}

impl Encode for RawValue {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_raw(&self.0);
        Ok(())
    }
}

impl<'de> Decode<'de> for RawValue {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let bytes = r.skip_value_limited()?;
        r.charge_alloc(bytes.len())?;
        Ok(Self(bytes.to_vec()))
    }
}

impl MessageType for RawValue {}
/// Of shape [`Shape::Opaque`]: any one MessagePack value, read without
/// being interpreted and written back as it came.
impl MessageCodec for RawValue {
    container_transform!(true);
    crate::impls::copy_by_clone!();
    crate::impls::describe!(Shape::Opaque);
}
