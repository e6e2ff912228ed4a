//! The MessagePack timestamp (extension type -1) in its three forms.

use std::sync::Arc;

use super::{TIMESTAMP, read_ext_of};
use crate::codec::{Decode, Encode, Immutable, MessageCodec, MessageType};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::msgpack::read::Reader;
use crate::msgpack::write::Writer;
use crate::shape::Shape;

/// An instant as the MessagePack spec's timestamp: seconds since the Unix
/// epoch (may be negative) and nanoseconds `0..1_000_000_000`.
///
/// Encodes in the smallest of the spec's three forms: 32-bit when there are
/// no nanoseconds and the seconds fit `u32`, 64-bit when the seconds fit 34
/// bits, 96-bit otherwise.
///
/// # Examples
///
/// ```
/// use codecbus_core::ext::Timestamp;
///
/// let ts = Timestamp::new(-1, 500).unwrap();
/// let bytes = codecbus_core::to_vec(&ts).unwrap();
/// assert_eq!(bytes.len(), 15); // 96-bit form: ext 8 header + 12 bytes
/// assert_eq!(codecbus_core::from_slice::<Timestamp>(&bytes).unwrap(), ts);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp {
    seconds: i64,
    nanos: u32,
}

impl Immutable for Timestamp {}

impl Timestamp {
    /// A timestamp, or `None` when `nanos` is 1 000 000 000 or more.
    pub const fn new(seconds: i64, nanos: u32) -> Option<Self> {
        if nanos >= 1_000_000_000 {
            None
        } else {
            Some(Self { seconds, nanos })
        }
    }

    /// Seconds since 1970-01-01T00:00:00Z.
    pub const fn seconds(&self) -> i64 {
        self.seconds
    }

    /// Nanoseconds past the second.
    pub const fn nanos(&self) -> u32 {
        self.nanos
    }
}

impl Encode for Timestamp {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        if self.seconds >> 34 == 0 {
            let packed = (u64::from(self.nanos) << 34) | self.seconds as u64;
            if packed >> 32 == 0 {
                w.write_ext(TIMESTAMP, &(packed as u32).to_be_bytes())
            } else {
                w.write_ext(TIMESTAMP, &packed.to_be_bytes())
            }
        } else {
            let mut data = [0u8; 12];
            data[..4].copy_from_slice(&self.nanos.to_be_bytes());
            data[4..].copy_from_slice(&self.seconds.to_be_bytes());
            w.write_ext(TIMESTAMP, &data)
        }
    }
}

impl<'de> Decode<'de> for Timestamp {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let at = r.position();
        let data = read_ext_of(r, TIMESTAMP)?;
        let (seconds, nanos) = match *data {
            [a, b, c, d] => (i64::from(u32::from_be_bytes([a, b, c, d])), 0),
            [a, b, c, d, e, f, g, h] => {
                let v = u64::from_be_bytes([a, b, c, d, e, f, g, h]);
                ((v & 0x3_ffff_ffff) as i64, (v >> 34) as u32)
            }
            [a, b, c, d, e, f, g, h, i, j, k, l] => (
                i64::from_be_bytes([e, f, g, h, i, j, k, l]),
                u32::from_be_bytes([a, b, c, d]),
            ),
            _ => {
                return Err(DecodeError::new(
                    DecodeErrorKind::InvalidExtData("a timestamp is 4, 8 or 12 bytes"),
                    at,
                ));
            }
        };
        Self::new(seconds, nanos).ok_or_else(|| {
            DecodeError::new(
                DecodeErrorKind::InvalidExtData(
                    "timestamp nanoseconds must be below 1 000 000 000",
                ),
                at,
            )
        })
    }
}

impl MessageType for Timestamp {}
impl MessageCodec for Timestamp {
    const IMMUTABLE: bool = true;
    crate::impls::copy_by_clone!();
    crate::impls::describe!(Shape::Ext(TIMESTAMP));
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        Arc::clone(body)
    }
}
