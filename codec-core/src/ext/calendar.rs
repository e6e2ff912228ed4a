//! Dates, times of day and date-times (extension types 4, 5, 6) and zoned
//! instants (the timestamp, type -1) for the `time` and `chrono` crates.

use std::sync::Arc;

use super::{DATE, DATETIME, TIME, TIMESTAMP, Timestamp, read_ext_of};
use crate::codec::{Decode, Encode, Immutable, MessageCodec, MessageType};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use crate::msgpack::read::Reader;
use crate::msgpack::write::Writer;
use crate::shape::Shape;

/// The fields of a DATE payload.
struct DateParts {
    year: i32,
    month: u8,
    day: u8,
}

/// The fields of a TIME payload.
struct TimeParts {
    hour: u8,
    minute: u8,
    second: u8,
    nanos: i32,
}

fn put_date(out: &mut Vec<u8>, d: &DateParts) {
    out.extend_from_slice(&d.year.to_be_bytes());
    out.push(d.month);
    out.push(d.day);
}

fn put_time(out: &mut Vec<u8>, t: &TimeParts) {
    out.extend_from_slice(&[t.hour, t.minute, t.second]);
    out.extend_from_slice(&t.nanos.to_be_bytes());
}

fn get_date(data: &[u8]) -> Option<DateParts> {
    match *data {
        [a, b, c, d, month, day] => Some(DateParts {
            year: i32::from_be_bytes([a, b, c, d]),
            month,
            day,
        }),
        _ => None,
    }
}

fn get_time(data: &[u8]) -> Option<TimeParts> {
    match *data {
        [hour, minute, second, a, b, c, d] => Some(TimeParts {
            hour,
            minute,
            second,
            nanos: i32::from_be_bytes([a, b, c, d]),
        }),
        _ => None,
    }
}

fn invalid(what: &'static str, at: usize) -> DecodeError {
    DecodeError::new(DecodeErrorKind::InvalidExtData(what), at)
}

fn read_date(r: &mut Reader<'_>) -> Result<(DateParts, usize), DecodeError> {
    let at = r.position();
    let data = read_ext_of(r, DATE)?;
    get_date(data)
        .map(|d| (d, at))
        .ok_or_else(|| invalid("a date is 6 bytes", at))
}

fn read_time(r: &mut Reader<'_>) -> Result<(TimeParts, usize), DecodeError> {
    let at = r.position();
    let data = read_ext_of(r, TIME)?;
    get_time(data)
        .map(|t| (t, at))
        .ok_or_else(|| invalid("a time is 7 bytes", at))
}

fn read_datetime(r: &mut Reader<'_>) -> Result<(DateParts, TimeParts, usize), DecodeError> {
    let at = r.position();
    let data = read_ext_of(r, DATETIME)?;
    match (
        data.get(..6).and_then(get_date),
        data.get(6..).and_then(get_time),
    ) {
        (Some(d), Some(t)) => Ok((d, t, at)),
        _ => Err(invalid("a date-time is 13 bytes", at)),
    }
}

fn write_date(w: &mut Writer, d: &DateParts) -> Result<(), EncodeError> {
    let mut out = Vec::with_capacity(6);
    put_date(&mut out, d);
    w.write_ext(DATE, &out)
}

fn write_time(w: &mut Writer, t: &TimeParts) -> Result<(), EncodeError> {
    let mut out = Vec::with_capacity(7);
    put_time(&mut out, t);
    w.write_ext(TIME, &out)
}

fn write_datetime(w: &mut Writer, d: &DateParts, t: &TimeParts) -> Result<(), EncodeError> {
    let mut out = Vec::with_capacity(13);
    put_date(&mut out, d);
    put_time(&mut out, t);
    w.write_ext(DATETIME, &out)
}

macro_rules! shared {
    ($code:expr) => {
        crate::impls::describe!(Shape::Ext($code));
        const IMMUTABLE: bool = true;
        crate::impls::copy_by_clone!();
        fn transform(body: &Arc<Self>) -> Arc<Self> {
            Arc::clone(body)
        }
    };
}

/// `Immutable` and `MessageCodec` for one crate's date, time and date-time
/// types, given `parts_of_date`, `parts_of_time`, `date_of` and `time_of` in
/// scope and how a date-time splits and joins.
macro_rules! calendar_codecs {
    ($date:ty, $time:ty, $datetime:ty, split: |$dt:ident| $split:expr, join: $join:expr) => {
        impl Immutable for $date {}
        impl Immutable for $time {}
        impl Immutable for $datetime {}

        impl Encode for $date {
            fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
                write_date(w, &parts_of_date(*self))
            }
        }

        impl<'de> Decode<'de> for $date {
            fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
                let (p, at) = read_date(r)?;
                date_of(&p, at)
            }
        }

        impl MessageType for $date {}
        impl MessageCodec for $date {
            shared!(DATE);
        }

        impl Encode for $time {
            fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
                write_time(w, &parts_of_time(*self))
            }
        }

        impl<'de> Decode<'de> for $time {
            fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
                let (p, at) = read_time(r)?;
                time_of(&p, at)
            }
        }

        impl MessageType for $time {}
        impl MessageCodec for $time {
            shared!(TIME);
        }

        impl Encode for $datetime {
            fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
                let $dt = self;
                let (d, t) = $split;
                write_datetime(w, &parts_of_date(d), &parts_of_time(t))
            }
        }

        impl<'de> Decode<'de> for $datetime {
            fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
                let (d, t, at) = read_datetime(r)?;
                Ok($join(date_of(&d, at)?, time_of(&t, at)?))
            }
        }

        impl MessageType for $datetime {}
        impl MessageCodec for $datetime {
            shared!(DATETIME);
        }
    };
}

#[cfg(feature = "time")]
mod with_time {
    use super::*;
    use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time};

    impl Immutable for OffsetDateTime {}

    calendar_codecs!(Date, Time, PrimitiveDateTime, split: |dt| (dt.date(), dt.time()), join: PrimitiveDateTime::new);

    fn parts_of_date(d: Date) -> DateParts {
        DateParts {
            year: d.year(),
            month: d.month() as u8,
            day: d.day(),
        }
    }

    fn parts_of_time(t: Time) -> TimeParts {
        TimeParts {
            hour: t.hour(),
            minute: t.minute(),
            second: t.second(),
            nanos: t.nanosecond() as i32,
        }
    }

    fn date_of(p: &DateParts, at: usize) -> Result<Date, DecodeError> {
        let month = Month::try_from(p.month).map_err(|_| invalid("month out of range", at))?;
        Date::from_calendar_date(p.year, month, p.day)
            .map_err(|_| invalid("not a valid calendar date", at))
    }

    fn time_of(p: &TimeParts, at: usize) -> Result<Time, DecodeError> {
        let nanos = u32::try_from(p.nanos).map_err(|_| invalid("negative nanoseconds", at))?;
        Time::from_hms_nano(p.hour, p.minute, p.second, nanos)
            .map_err(|_| invalid("not a valid time of day", at))
    }

    /// Encoded as the instant (timestamp, type -1); the offset is not kept
    /// and a decoded value is in UTC.
    impl Encode for OffsetDateTime {
        fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
            Timestamp::new(self.unix_timestamp(), self.nanosecond())
                .ok_or_else(|| EncodeError::new(EncodeErrorKind::InvalidValue))?
                .encode(w)
        }
    }

    impl<'de> Decode<'de> for OffsetDateTime {
        fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
            let at = r.position();
            let ts = Timestamp::decode(r)?;
            let nanos = i128::from(ts.seconds()) * 1_000_000_000 + i128::from(ts.nanos());
            OffsetDateTime::from_unix_timestamp_nanos(nanos).map_err(|_| {
                DecodeError::new(
                    DecodeErrorKind::InvalidValue("instant out of range for OffsetDateTime"),
                    at,
                )
            })
        }
    }

    impl MessageType for OffsetDateTime {}
    impl MessageCodec for OffsetDateTime {
        shared!(TIMESTAMP);
    }
}

#[cfg(feature = "chrono")]
mod with_chrono {
    use super::*;
    use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike, Utc};

    impl Immutable for DateTime<Utc> {}

    calendar_codecs!(NaiveDate, NaiveTime, NaiveDateTime, split: |dt| (dt.date(), dt.time()), join: NaiveDateTime::new);

    fn parts_of_date(d: NaiveDate) -> DateParts {
        DateParts {
            year: d.year(),
            month: d.month() as u8,
            day: d.day() as u8,
        }
    }

    fn parts_of_time(t: NaiveTime) -> TimeParts {
        TimeParts {
            hour: t.hour() as u8,
            minute: t.minute() as u8,
            second: t.second() as u8,
            nanos: t.nanosecond() as i32,
        }
    }

    fn date_of(p: &DateParts, at: usize) -> Result<NaiveDate, DecodeError> {
        NaiveDate::from_ymd_opt(p.year, u32::from(p.month), u32::from(p.day))
            .ok_or_else(|| invalid("not a valid calendar date", at))
    }

    fn time_of(p: &TimeParts, at: usize) -> Result<NaiveTime, DecodeError> {
        let nanos = u32::try_from(p.nanos).map_err(|_| invalid("negative nanoseconds", at))?;
        NaiveTime::from_hms_nano_opt(
            u32::from(p.hour),
            u32::from(p.minute),
            u32::from(p.second),
            nanos,
        )
        .ok_or_else(|| invalid("not a valid time of day", at))
    }

    impl Encode for DateTime<Utc> {
        fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
            // chrono represents a leap second as nanos >= 1e9; fold it into
            // the next second, which the timestamp can express.
            let (secs, nanos) = match self.timestamp_subsec_nanos() {
                n if n >= 1_000_000_000 => (self.timestamp() + 1, n - 1_000_000_000),
                n => (self.timestamp(), n),
            };
            Timestamp::new(secs, nanos)
                .ok_or_else(|| EncodeError::new(EncodeErrorKind::InvalidValue))?
                .encode(w)
        }
    }

    impl<'de> Decode<'de> for DateTime<Utc> {
        fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
            let at = r.position();
            let ts = Timestamp::decode(r)?;
            DateTime::from_timestamp(ts.seconds(), ts.nanos()).ok_or_else(|| {
                DecodeError::new(
                    DecodeErrorKind::InvalidValue("instant out of range for DateTime<Utc>"),
                    at,
                )
            })
        }
    }

    impl MessageType for DateTime<Utc> {}
    impl MessageCodec for DateTime<Utc> {
        shared!(TIMESTAMP);
    }
}
