//! Byte-exact vectors: integer and length boundaries, and the golden layout
//! of every extension type. Each case checks the bytes written, the value
//! read back, and that decoding consumed exactly those bytes.

use codecbus_core::ext::{self, Bytes, Ext, Timestamp};
use codecbus_core::{MessageCodec, Reader, Writer, decode_prefix, from_slice, to_vec};
use std::fmt::Debug;

#[track_caller]
fn check<T: MessageCodec + PartialEq + Debug>(value: T, bytes: &[u8]) {
    assert_eq!(to_vec(&value).unwrap(), bytes, "encoding {value:?}");
    let (back, used) = decode_prefix::<T>(bytes).unwrap();
    assert_eq!(back, value);
    assert_eq!(used, bytes.len(), "bytes consumed for {value:?}");
}

#[test]
fn unsigned_boundaries() {
    check(0u64, &[0x00]);
    check(127u64, &[0x7f]);
    check(128u64, &[0xcc, 0x80]);
    check(255u64, &[0xcc, 0xff]);
    check(256u64, &[0xcd, 0x01, 0x00]);
    check(65_535u64, &[0xcd, 0xff, 0xff]);
    check(65_536u64, &[0xce, 0x00, 0x01, 0x00, 0x00]);
    check(4_294_967_295u64, &[0xce, 0xff, 0xff, 0xff, 0xff]);
    check(4_294_967_296u64, &[0xcf, 0, 0, 0, 1, 0, 0, 0, 0]);
    check(
        u64::MAX,
        &[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
    );
    check(u8::MAX, &[0xcc, 0xff]);
    check(u16::MAX, &[0xcd, 0xff, 0xff]);
    check(u32::MAX, &[0xce, 0xff, 0xff, 0xff, 0xff]);
}

#[test]
fn signed_boundaries() {
    check(-1i64, &[0xff]);
    check(-32i64, &[0xe0]);
    check(-33i64, &[0xd0, 0xdf]);
    check(-128i64, &[0xd0, 0x80]);
    check(-129i64, &[0xd1, 0xff, 0x7f]);
    check(-32_768i64, &[0xd1, 0x80, 0x00]);
    check(-32_769i64, &[0xd2, 0xff, 0xff, 0x7f, 0xff]);
    check(i32::MIN as i64, &[0xd2, 0x80, 0, 0, 0]);
    check(
        i32::MIN as i64 - 1,
        &[0xd3, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff],
    );
    check(i64::MIN, &[0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0]);
    // non-negative signed values take the unsigned forms, as rmp does
    check(127i64, &[0x7f]);
    check(200i32, &[0xcc, 200]);
    check(
        i64::MAX,
        &[0xcf, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
    );
    check(i8::MIN, &[0xd0, 0x80]);
    check(i16::MIN, &[0xd1, 0x80, 0x00]);
}

#[test]
fn wide_integers_fit_or_fail() {
    check(
        u128::from(u64::MAX),
        &[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
    );
    check(i128::from(i64::MIN), &[0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0]);
    check(
        i128::from(u64::MAX),
        &[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
    );
    assert!(to_vec(&(u128::from(u64::MAX) + 1)).is_err());
    assert!(to_vec(&(i128::from(i64::MIN) - 1)).is_err());
}

#[test]
fn floats_and_scalars() {
    check(1.5f32, &[0xca, 0x3f, 0xc0, 0, 0]);
    check(1.5f64, &[0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0]);
    check(true, &[0xc3]);
    check(false, &[0xc2]);
    check((), &[0xc0]);
    check('é', &[0xa2, 0xc3, 0xa9]);
    check(None::<u8>, &[0xc0]);
    check(Some(5u8), &[0x05]);
}

#[test]
fn string_length_boundaries() {
    for (len, header) in [
        (0usize, vec![0xa0]),
        (31, vec![0xbf]),
        (32, vec![0xd9, 32]),
        (255, vec![0xd9, 255]),
        (256, vec![0xda, 0x01, 0x00]),
        (65_535, vec![0xda, 0xff, 0xff]),
        (65_536, vec![0xdb, 0x00, 0x01, 0x00, 0x00]),
    ] {
        let s = "x".repeat(len);
        let mut expected = header;
        expected.extend_from_slice(s.as_bytes());
        check(s, &expected);
    }
}

#[test]
fn collection_length_boundaries() {
    for (len, header) in [
        (0usize, vec![0x90]),
        (15, vec![0x9f]),
        (16, vec![0xdc, 0x00, 0x10]),
        (65_535, vec![0xdc, 0xff, 0xff]),
        (65_536, vec![0xdd, 0x00, 0x01, 0x00, 0x00]),
    ] {
        let v = vec![true; len];
        let mut expected = header;
        expected.extend(std::iter::repeat_n(0xc3, len));
        check(v, &expected);
    }
    for (len, header) in [(15usize, vec![0x8f]), (16, vec![0xde, 0x00, 0x10])] {
        let m: std::collections::BTreeMap<u8, bool> = (0..len as u8).map(|k| (k, true)).collect();
        let mut expected = header;
        for k in 0..len as u8 {
            expected.extend([k, 0xc3]);
        }
        check(m, &expected);
    }
}

#[test]
fn bin_boundaries() {
    check(Bytes(vec![]), &[0xc4, 0x00]);
    check(
        Bytes(vec![7; 255]),
        &[[0xc4, 255].as_slice(), &[7; 255]].concat(),
    );
    check(
        Bytes(vec![7; 256]),
        &[[0xc5, 0x01, 0x00].as_slice(), &[7; 256]].concat(),
    );
    check(
        Bytes(vec![7; 65_536]),
        &[[0xc6, 0x00, 0x01, 0x00, 0x00].as_slice(), &[7; 65_536]].concat(),
    );
}

#[test]
fn sql_request_is_54_bytes() {
    // Apache Ignite 3's example: the query, then its arguments.
    let mut w = Writer::new();
    w.write_str("select * from cars where year > ? and seats = ?")
        .unwrap();
    w.write_array_len(2).unwrap();
    w.write_i64(2005);
    w.write_i64(2);
    assert_eq!(w.len(), 54);
    let bytes = w.into_vec();
    let mut r = Reader::new(&bytes);
    assert_eq!(
        r.read_str().unwrap(),
        "select * from cars where year > ? and seats = ?"
    );
    assert_eq!(r.read_array_len().unwrap(), 2);
    assert_eq!((r.read_i32().unwrap(), r.read_i32().unwrap()), (2005, 2));
    assert!(r.is_empty());
}

#[test]
fn timestamp_three_forms() {
    // 32-bit: seconds fit u32, no nanoseconds
    check(Timestamp::new(0, 0).unwrap(), &[0xd6, 0xff, 0, 0, 0, 0]);
    check(
        Timestamp::new(u32::MAX as i64, 0).unwrap(),
        &[0xd6, 0xff, 0xff, 0xff, 0xff, 0xff],
    );
    // 64-bit: nanoseconds, or seconds past u32 within 34 bits
    check(
        Timestamp::new(1, 1).unwrap(),
        &[0xd7, 0xff, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x01],
    );
    check(
        Timestamp::new(u32::MAX as i64 + 1, 0).unwrap(),
        &[0xd7, 0xff, 0, 0, 0, 0x01, 0, 0, 0, 0],
    );
    check(
        Timestamp::new((1 << 34) - 1, 999_999_999).unwrap(),
        &[0xd7, 0xff, 0xee, 0x6b, 0x27, 0xff, 0xff, 0xff, 0xff, 0xff],
    );
    // 96-bit: negative seconds or beyond 34 bits
    check(
        Timestamp::new(-1, 0).unwrap(),
        &[
            0xc7, 12, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        ],
    );
    check(
        Timestamp::new(1 << 34, 5).unwrap(),
        &[0xc7, 12, 0xff, 0, 0, 0, 5, 0, 0, 0, 0x04, 0, 0, 0, 0],
    );
    assert!(Timestamp::new(0, 1_000_000_000).is_none());
}

#[test]
fn timestamp_rejects_bad_nanos_and_lengths() {
    // 96-bit form with nanoseconds = 1e9
    let mut bad = vec![0xc7, 12, 0xff];
    bad.extend(1_000_000_000u32.to_be_bytes());
    bad.extend(0i64.to_be_bytes());
    assert!(from_slice::<Timestamp>(&bad).is_err());
    // 64-bit form with nanoseconds field = 2^30 - 1
    let packed: u64 = ((1u64 << 30) - 1) << 34;
    let mut bad64 = vec![0xd7, 0xff];
    bad64.extend(packed.to_be_bytes());
    assert!(from_slice::<Timestamp>(&bad64).is_err());
    // a 2-byte timestamp does not exist
    assert!(from_slice::<Timestamp>(&[0xd5, 0xff, 0, 0]).is_err());
}

#[test]
fn system_time_is_a_timestamp() {
    use std::time::{Duration, UNIX_EPOCH};
    check(
        UNIX_EPOCH + Duration::from_secs(1),
        &[0xd6, 0xff, 0, 0, 0, 1],
    );
    check(
        UNIX_EPOCH - Duration::from_nanos(1),
        &[
            0xc7, 12, 0xff, 0x3b, 0x9a, 0xc9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        ],
    );
    check(Duration::new(3, 7), &[0x92, 3, 7]);
}

#[test]
fn raw_ext_round_trips_unknown_types() {
    check(
        Ext {
            type_id: 42,
            data: vec![1],
        },
        &[0xd4, 42, 1],
    );
    check(
        Ext {
            type_id: 42,
            data: vec![1, 2, 3],
        },
        &[0xc7, 3, 42, 1, 2, 3],
    );
    check(
        Ext {
            type_id: -5,
            data: vec![0; 16],
        },
        &[[0xd8, 0xfb].as_slice(), &[0; 16]].concat(),
    );
}

#[cfg(feature = "uuid")]
#[test]
fn uuid_is_fixext16_type_3() {
    let id = uuid::Uuid::from_u128(0x0011_2233_4455_6677_8899_aabb_ccdd_eeff);
    let mut expected = vec![0xd8, ext::UUID as u8];
    expected.extend(id.as_bytes());
    check(id, &expected);
    assert_eq!(expected[2], 0x00);
    assert_eq!(expected[17], 0xff);
    assert!(from_slice::<uuid::Uuid>(&[0xd7, 3, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
}

#[cfg(feature = "decimal")]
#[test]
fn decimal_is_scale_then_twos_complement() {
    use rust_decimal::Decimal;
    // 12.34 = 1234 * 10^-2: scale 2, unscaled 0x04d2
    check(
        Decimal::new(1234, 2),
        &[0xc7, 3, ext::DECIMAL as u8, 0x02, 0x04, 0xd2],
    );
    // -1.5 = -15 * 10^-1: scale 1, unscaled 0xf1
    check(
        Decimal::new(-15, 1),
        &[0xd5, ext::DECIMAL as u8, 0x01, 0xf1],
    );
    // 0
    check(Decimal::ZERO, &[0xd5, ext::DECIMAL as u8, 0x00, 0x00]);
    // 128 needs a sign byte
    check(
        Decimal::new(128, 0),
        &[0xc7, 3, ext::DECIMAL as u8, 0x00, 0x00, 0x80],
    );
    check(Decimal::MAX, &{
        let mut v = vec![0xc7, 14, ext::DECIMAL as u8, 0x00, 0x00];
        v.extend([0xff; 12]);
        v
    });
    // scale 29 is out of range
    assert!(from_slice::<Decimal>(&[0xd5, ext::DECIMAL as u8, 29, 0x01]).is_err());
    // 2^96 does not fit
    let mut big = vec![0xc7, 14, ext::DECIMAL as u8, 0x00, 0x01];
    big.extend([0x00; 12]);
    assert!(from_slice::<Decimal>(&big).is_err());
}

#[cfg(feature = "time")]
#[test]
fn time_crate_layouts() {
    use time::{Date, Month, PrimitiveDateTime, Time};
    let date = Date::from_calendar_date(2026, Month::November, 30).unwrap();
    check(
        date,
        &[0xc7, 6, ext::DATE as u8, 0x00, 0x00, 0x07, 0xea, 11, 30],
    );
    let t = Time::from_hms_nano(23, 59, 58, 123_456_789).unwrap();
    check(
        t,
        &[0xc7, 7, ext::TIME as u8, 23, 59, 58, 0x07, 0x5b, 0xcd, 0x15],
    );
    check(
        PrimitiveDateTime::new(date, t),
        &[
            0xc7,
            13,
            ext::DATETIME as u8,
            0x00,
            0x00,
            0x07,
            0xea,
            11,
            30,
            23,
            59,
            58,
            0x07,
            0x5b,
            0xcd,
            0x15,
        ],
    );
    check(time::OffsetDateTime::UNIX_EPOCH, &[0xd6, 0xff, 0, 0, 0, 0]);
    // February 30th does not exist
    assert!(from_slice::<Date>(&[0xc7, 6, ext::DATE as u8, 0, 0, 0x07, 0xea, 2, 30]).is_err());
    assert!(from_slice::<Time>(&[0xc7, 7, ext::TIME as u8, 24, 0, 0, 0, 0, 0, 0]).is_err());
}

#[cfg(feature = "chrono")]
#[test]
fn chrono_layouts_match_time_layouts() {
    use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
    let date = NaiveDate::from_ymd_opt(2026, 11, 30).unwrap();
    check(
        date,
        &[0xc7, 6, ext::DATE as u8, 0x00, 0x00, 0x07, 0xea, 11, 30],
    );
    let t = NaiveTime::from_hms_nano_opt(23, 59, 58, 123_456_789).unwrap();
    check(
        t,
        &[0xc7, 7, ext::TIME as u8, 23, 59, 58, 0x07, 0x5b, 0xcd, 0x15],
    );
    check(
        date.and_time(t),
        &[
            0xc7,
            13,
            ext::DATETIME as u8,
            0x00,
            0x00,
            0x07,
            0xea,
            11,
            30,
            23,
            59,
            58,
            0x07,
            0x5b,
            0xcd,
            0x15,
        ],
    );
    check(
        DateTime::<Utc>::from_timestamp(1, 0).unwrap(),
        &[0xd6, 0xff, 0, 0, 0, 1],
    );
}

#[test]
fn ext_type_mismatch_is_reported() {
    let err = from_slice::<Timestamp>(&[0xd4, 42, 1]).unwrap_err();
    assert_eq!(
        err.kind(),
        codecbus_core::DecodeErrorKind::UnexpectedExtType {
            expected: -1,
            found: 42
        }
    );
}
