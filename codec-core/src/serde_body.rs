//! serde types on the bus: the `#[codec(serde)]` field attribute and the
//! [`Serde`] message body, both through `rmp-serde`'s named (map) mode.
//!
//! Contract: encoding writes exactly what `rmp_serde::to_vec_named` writes.
//! Decoding first walks the value with the reader's own limits (depth below
//! the current level, collection lengths, declared lengths against the
//! input), so `rmp-serde` only ever sees one complete, bounded value and
//! cannot allocate for lengths the input does not hold; its bytes are
//! charged to the allocation budget. `rmp-serde`'s errors become
//! `DecodeError`s at the byte where it stopped.
#![forbid(unsafe_code)]

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::codec::{Decode, Encode, MessageCodec, MessageType};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::msgpack::kind::ValueKind;
use crate::msgpack::read::Reader;
use crate::msgpack::write::Writer;
use crate::shape::Shape;

/// Writes `value` as `rmp_serde::to_vec_named` would.
pub(crate) fn encode<T: Serialize + ?Sized>(value: &T, w: &mut Writer) -> Result<(), EncodeError> {
    let buf = w.buf_mut();
    let start = buf.len();
    rmp_serde::encode::write_named(buf, value).map_err(|e| {
        buf.truncate(start);
        EncodeError::custom(format_args!("serde: {e}"))
    })
}

/// Reads one value with `rmp-serde`, within the reader's limits.
pub(crate) fn decode<T: DeserializeOwned>(r: &mut Reader<'_>) -> Result<T, DecodeError> {
    let start = r.position();
    let value = r.skip_value_limited()?;
    r.charge_alloc(value.len())?;
    // The walk above held the value to the reader's depth limit; serde's
    // own limit (1024 levels, counted its own way) stays as a backstop.
    let mut de = rmp_serde::Deserializer::new(value);
    T::deserialize(&mut de).map_err(|e| {
        let at = start + (value.len() - de.get_ref().len());
        serde_error(e, at)
    })
}

#[cold]
#[inline(never)]
fn serde_error(e: rmp_serde::decode::Error, at: usize) -> DecodeError {
    use rmp_serde::decode::Error;
    let kind = match &e {
        Error::InvalidMarkerRead(_) | Error::InvalidDataRead(_) => DecodeErrorKind::Truncated,
        Error::TypeMismatch(marker) => match ValueKind::of(marker.to_u8()) {
            ValueKind::Reserved => DecodeErrorKind::InvalidMarker(marker.to_u8()),
            found => DecodeErrorKind::TypeMismatch {
                expected: "a value of the serde type",
                found: found.name(),
            },
        },
        Error::OutOfRange => DecodeErrorKind::IntegerOutOfRange {
            target: "the serde type's integer",
        },
        Error::Utf8Error(_) => DecodeErrorKind::InvalidUtf8,
        Error::DepthLimitExceeded => DecodeErrorKind::DepthLimitExceeded,
        _ => DecodeErrorKind::Custom,
    };
    let detail = format!("serde: {e}");
    DecodeError::new(kind, at)
        .with_detail(detail)
        .with_source(e)
}

/// A serde type as a message body: any `T: Serialize + DeserializeOwned +
/// Clone` travels on the bus without a `MessageCodec` of its own.
///
/// The bytes are those of `rmp_serde::to_vec_named(&value)`, so a node that
/// decodes with `rmp-serde` reads them as they are; local delivery gives
/// each consumer its own deep copy (`Clone`). To cross processes the body
/// needs a codec name: declare it once with [`serde_codec!`](crate::serde_codec),
/// which registers `Serde<T>` under that name.
///
/// `Serde<T>` dereferences to `T`, and converts from it.
///
/// # Examples
///
/// ```
/// use codecbus_core::{Serde, from_slice, to_vec};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
/// struct LegacyOrder {
///     id: u64,
///     lines: Vec<(String, u32)>,
/// }
///
/// let order = Serde(LegacyOrder { id: 7, lines: vec![("tea".into(), 2)] });
/// let bytes = to_vec(&order)?;
/// assert_eq!(bytes, rmp_serde::to_vec_named(&*order)?);
/// assert_eq!(from_slice::<Serde<LegacyOrder>>(&bytes)?, order);
/// assert_eq!(order.id, 7); // through `Deref`
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Serde<T>(pub T);

impl<T> Serde<T> {
    /// The wrapped value.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> From<T> for Serde<T> {
    fn from(value: T) -> Self {
        Serde(value)
    }
}

impl<T> Deref for Serde<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Serde<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T: Serialize + DeserializeOwned + Clone> Encode for Serde<T> {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        encode(&self.0, w)
    }
}

impl<'de, T: Serialize + DeserializeOwned + Clone> Decode<'de> for Serde<T> {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        decode(r).map(Serde)
    }
}

impl<T: Serialize + DeserializeOwned + Clone> MessageType for Serde<T> {}
/// Of shape [`Shape::Opaque`]: a serde type does not describe itself.
impl<T: Serialize + DeserializeOwned + Clone> MessageCodec for Serde<T> {
    const IMMUTABLE: bool = false;
    crate::impls::describe!(Shape::Opaque);

    crate::impls::copy_by_clone!();
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        Arc::new(Serde(body.0.clone()))
    }
}
