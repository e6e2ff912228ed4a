//! MessagePack extension types: the registry of type ids and their layouts.
//!
//! **Registry version 1.** Ids are fixed forever once published; a new type
//! gets a new id and the version goes up. Where the Apache Ignite 3 client
//! protocol has a type, its id and layout are reused. All multi-byte fields
//! are big-endian.
//!
//! | id | constant | Rust types | payload |
//! |---|---|---|---|
//! | -1 | [`TIMESTAMP`] | [`Timestamp`], `SystemTime`, `time::OffsetDateTime`, `chrono::DateTime<Utc>` | the spec's timestamp: 4 bytes (u32 seconds), 8 bytes (u30 nanoseconds << 34 \| u34 seconds) or 12 bytes (u32 nanoseconds, i64 seconds) |
//! | 2 | [`DECIMAL`] | `rust_decimal::Decimal` | the scale as a MessagePack unsigned integer, then the unscaled value as minimal big-endian two's complement |
//! | 3 | [`UUID`] | `uuid::Uuid` | 16 bytes, RFC 4122 order (fixext 16) |
//! | 4 | [`DATE`] | `time::Date`, `chrono::NaiveDate` | i32 year, u8 month (1–12), u8 day |
//! | 5 | [`TIME`] | `time::Time`, `chrono::NaiveTime` | u8 hour, u8 minute, u8 second, i32 nanoseconds |
//! | 6 | [`DATETIME`] | `time::PrimitiveDateTime`, `chrono::NaiveDateTime` | the DATE payload then the TIME payload |
//!
//! Any other id decodes into [`Ext`], which carries the raw bytes and writes
//! them back unchanged.
//!
//! # Examples
//!
//! ```
//! use codecbus_core::ext::{Ext, Timestamp};
//! use codecbus_core::{from_slice, to_vec};
//!
//! // one second after the epoch: the 32-bit form
//! let ts = Timestamp::new(1, 0).unwrap();
//! assert_eq!(to_vec(&ts).unwrap(), [0xd6, 0xff, 0, 0, 0, 1]);
//!
//! // an extension type this program does not know survives a round trip
//! let raw: Ext = from_slice(&[0xd4, 42, 7]).unwrap();
//! assert_eq!((raw.type_id, &raw.data[..]), (42, &[7u8][..]));
//! ```
#![forbid(unsafe_code)]

mod raw;
mod shared;
mod timestamp;

#[cfg(any(feature = "time", feature = "chrono"))]
mod calendar;
#[cfg(feature = "decimal")]
mod decimal;
#[cfg(feature = "uuid")]
mod uuid;

pub use raw::{Bytes, Ext, RawValue};
pub use shared::SharedStr;
pub use timestamp::Timestamp;

/// The version of this registry (ids and layouts).
pub const REGISTRY_VERSION: u32 = 1;

/// The MessagePack spec's timestamp.
pub const TIMESTAMP: i8 = -1;
/// An exact decimal (Apache Ignite 3 id).
pub const DECIMAL: i8 = 2;
/// A UUID (Apache Ignite 3 id).
pub const UUID: i8 = 3;
/// A calendar date (Apache Ignite 3 id).
pub const DATE: i8 = 4;
/// A time of day (Apache Ignite 3 id).
pub const TIME: i8 = 5;
/// A date and time of day without zone (Apache Ignite 3 id).
pub const DATETIME: i8 = 6;

use crate::error::{DecodeError, DecodeErrorKind};
use crate::msgpack::read::Reader;

/// Reads an extension of type `expected` and returns its payload.
pub(crate) fn read_ext_of<'de>(
    r: &mut Reader<'de>,
    expected: i8,
) -> Result<&'de [u8], DecodeError> {
    let at = r.position();
    let (found, data) = r.read_ext()?;
    if found != expected {
        return Err(DecodeError::new(
            DecodeErrorKind::UnexpectedExtType { expected, found },
            at,
        ));
    }
    Ok(data)
}
