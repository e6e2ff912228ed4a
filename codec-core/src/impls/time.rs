//! `Duration` (as `[secs, nanos]`, the layout serde gives it) and
//! `SystemTime` (as the MessagePack timestamp extension, type -1).
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::codec::{Decode, Encode, Immutable, MessageCodec, MessageType};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use crate::ext::{TIMESTAMP, Timestamp};
use crate::msgpack::read::Reader;
use crate::msgpack::write::Writer;
use crate::shape::Shape;

impl Immutable for Duration {}
impl Immutable for SystemTime {}

impl Encode for Duration {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_raw(&[0x92]);
        w.write_u64(self.as_secs());
        w.write_u64(u64::from(self.subsec_nanos()));
        Ok(())
    }
}

impl<'de> Decode<'de> for Duration {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let at = r.position();
        let len = r.read_array_len()?;
        if len != 2 {
            return Err(DecodeError::new(
                DecodeErrorKind::WrongLength {
                    expected: 2,
                    found: len,
                },
                at,
            ));
        }
        let secs = r.read_u64().map_err(|e| e.in_field("secs"))?;
        let nanos_at = r.position();
        let nanos = r.read_u32().map_err(|e| e.in_field("nanos"))?;
        if nanos >= 1_000_000_000 {
            return Err(DecodeError::new(
                DecodeErrorKind::InvalidValue("nanoseconds must be below 1 000 000 000"),
                nanos_at,
            )
            .in_field("nanos"));
        }
        Ok(Duration::new(secs, nanos))
    }
}

impl MessageType for Duration {}
impl MessageCodec for Duration {
    const IMMUTABLE: bool = true;
    crate::impls::copy_by_clone!();
    // `[secs, nanos]`, the nanoseconds read as a `u32`.
    crate::impls::describe!(Shape::Tuple(vec![
        Shape::int(false, 64),
        Shape::int(false, 32)
    ]));
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        Arc::clone(body)
    }
}

impl Encode for SystemTime {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        let ts = match self.duration_since(UNIX_EPOCH) {
            Ok(d) => Timestamp::new(
                i64::try_from(d.as_secs())
                    .map_err(|_| EncodeError::new(EncodeErrorKind::InvalidValue))?,
                d.subsec_nanos(),
            ),
            Err(before) => {
                let d = before.duration();
                let secs = i64::try_from(d.as_secs())
                    .map_err(|_| EncodeError::new(EncodeErrorKind::InvalidValue))?;
                if d.subsec_nanos() == 0 {
                    Timestamp::new(-secs, 0)
                } else {
                    Timestamp::new(-secs - 1, 1_000_000_000 - d.subsec_nanos())
                }
            }
        };
        let ts = ts.ok_or_else(|| EncodeError::new(EncodeErrorKind::InvalidValue))?;
        ts.encode(w)
    }
}

impl<'de> Decode<'de> for SystemTime {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let at = r.position();
        let ts = Timestamp::decode(r)?;
        let out_of_range = || {
            DecodeError::new(
                DecodeErrorKind::InvalidValue("time out of range for SystemTime"),
                at,
            )
        };
        let nanos = Duration::from_nanos(u64::from(ts.nanos()));
        if ts.seconds() >= 0 {
            UNIX_EPOCH
                .checked_add(Duration::from_secs(ts.seconds() as u64) + nanos)
                .ok_or_else(out_of_range)
        } else {
            UNIX_EPOCH
                .checked_sub(Duration::from_secs(ts.seconds().unsigned_abs()))
                .and_then(|t| t.checked_add(nanos))
                .ok_or_else(out_of_range)
        }
    }
}

impl MessageType for SystemTime {}
impl MessageCodec for SystemTime {
    const IMMUTABLE: bool = true;
    crate::impls::copy_by_clone!();
    crate::impls::describe!(Shape::Ext(TIMESTAMP));
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        Arc::clone(body)
    }
}
