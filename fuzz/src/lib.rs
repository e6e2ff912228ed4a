//! Types and checks shared by the cargo-fuzz targets of codecbus.
//!
//! The decode targets feed arbitrary bytes to [`check_decode`], which
//! asserts that a successful decode re-encodes, decodes back to an equal
//! value and re-encodes to the same bytes (the encoding of a decoded value
//! is canonical), and that errors format without panicking. The round-trip
//! target builds values with `arbitrary` and checks encode → decode → equal.
//!
//! Floats are wrapped in [`F32`] and [`F64`], whose equality is bitwise
//! (NaN equals NaN with the same payload, `-0.0 != 0.0`): the encoding
//! keeps the bits, so that is the equality a round trip must preserve.
#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Debug;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arbitrary::{Arbitrary, Result as ArbResult, Unstructured};
use codecbus_core::ext::{Bytes, Ext, Timestamp};
use codecbus_core::{
    DecodeErrorKind, DecodeLimits, MessageCodec, from_slice, from_slice_with_limits,
};
use codecbus_json::JsValue;

// ---- floats with bitwise equality ------------------------------------------

/// An `f64` compared by its bits.
#[derive(MessageCodec, Clone, Copy, Debug, Arbitrary)]
pub struct F64(pub f64);

impl PartialEq for F64 {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

/// An `f32` compared by its bits.
#[derive(MessageCodec, Clone, Copy, Debug, Arbitrary)]
pub struct F32(pub f32);

impl PartialEq for F32 {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

// ---- recursive types -------------------------------------------------------

/// The self-recursive newtype: `0x01` must be an error, not a stack overflow.
///
/// Every finite `N` encodes as `nil` (a newtype is its inner value, and
/// `Some(x)` is `x`), which decodes as `N(None)`: the encoding cannot tell
/// the depths apart, as with `Option<Option<T>>` in `rmp-serde`. So the
/// round trip only generates `N(None)`, the one value it can preserve.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
pub struct N(pub Option<Box<N>>);

impl<'a> Arbitrary<'a> for N {
    fn arbitrary(_: &mut Unstructured<'a>) -> ArbResult<Self> {
        Ok(N(None))
    }
    fn size_hint(_: usize) -> (usize, Option<usize>) {
        (0, Some(0))
    }
}

/// A recursive enum.
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
pub enum Tree {
    /// Unit.
    Leaf,
    /// Newtype.
    Value(i32),
    /// Boxed recursion.
    Boxed(Box<Tree>),
    /// Recursion through a collection.
    Node(Vec<Tree>),
    /// Recursion through a struct variant.
    Pair {
        left: Box<Tree>,
        right: Option<Box<Tree>>,
    },
}

// ---- the nested structs ----------------------------------------------------

fn default_port() -> u16 {
    8080
}

/// Leaf struct used inside the nested ones (map mode).
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
pub struct Item {
    pub sku: String,
    pub qty: u32,
    pub price: F64,
    pub note: Option<String>,
}

/// Leaf struct used inside the nested ones (array mode).
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
#[codec(as_array)]
pub struct Point {
    pub x: i16,
    pub y: F32,
}

/// A nested struct in map mode with every field attribute that changes
/// decoding.
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
#[codec(rename_all = "camelCase")]
pub struct Order {
    pub order_id: u64,
    #[codec(rename = "who")]
    pub customer: String,
    pub items: Vec<Item>,
    pub points: VecDeque<Point>,
    pub tags: BTreeSet<String>,
    pub attrs: BTreeMap<String, i64>,
    #[codec(default = "default_port")]
    pub port: u16,
    #[codec(skip_if = "Vec::is_empty", default)]
    pub extra: Vec<u8>,
    #[codec(bytes)]
    pub blob: Vec<u8>,
    #[codec(skip)]
    #[arbitrary(default)]
    pub cache: u32,
    pub small: (i8, u8, bool),
    pub fixed: [u16; 3],
    #[arbitrary(with = arb_wide)]
    pub wide: (u128, i128),
    pub letter: char,
    pub unit: (),
    pub boxed: Box<str>,
    pub shared: Arc<str>,
    pub status: Status,
    pub tree: Tree,
    pub n: N,
    pub parent: Option<Box<Order>>,
    #[arbitrary(with = arb_vector)]
    pub list: imbl::Vector<i32>,
    pub note: Option<String>,
}

/// The same shape in array mode.
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
#[codec(as_array)]
pub struct OrderArr {
    pub order_id: u64,
    pub customer: String,
    pub items: Vec<Item>,
    pub points: Vec<Point>,
    pub attrs: BTreeMap<u32, Vec<u8>>,
    #[codec(bytes)]
    pub blob: Vec<u8>,
    #[codec(skip)]
    #[arbitrary(default)]
    pub cache: u32,
    pub small: (i8, u8, bool),
    pub fixed: [u16; 3],
    #[arbitrary(with = arb_wide)]
    pub wide: (u128, i128),
    pub letter: char,
    pub status: StatusArr,
    pub tree: Tree,
    pub n: N,
    pub parent: Option<Box<OrderArr>>,
    pub f: F64,
    // optional and defaulted fields at the end: an array may stop early
    #[codec(default = "default_port")]
    pub port: u16,
    pub note: Option<String>,
}

/// A nested keyed struct: a gap at key 1, a `default` and an `Option`
/// field.
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
pub struct KeyedItem {
    #[codec(key = 0)]
    pub sku: String,
    #[codec(key = 2, default)]
    pub qty: u32,
    #[codec(key = 3)]
    pub note: Option<String>,
}

/// A keyed struct (`#[codec(key = N)]`): declared out of key order, gaps
/// at keys 1, 4 to 6 and 11, `Option`, `default` and `default = "path"`
/// fields, a renamed one, a skipped one, `bytes`, nested keyed structs and
/// itself boxed.
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
pub struct Keyed {
    #[codec(key = 3)]
    pub name: String,
    #[codec(key = 0)]
    pub id: u64,
    #[codec(key = 2)]
    pub email: Option<String>,
    #[codec(skip)]
    #[arbitrary(default)]
    pub cache: u32,
    #[codec(key = 7, default = "default_port")]
    pub port: u16,
    #[codec(key = 8, default)]
    pub tags: Vec<String>,
    #[codec(key = 9)]
    pub items: Vec<KeyedItem>,
    #[codec(key = 10)]
    pub parent: Option<Box<Keyed>>,
    #[codec(key = 12, rename = "ratio")]
    pub f: F64,
    #[codec(key = 13, bytes, default)]
    pub blob: Vec<u8>,
}

/// [`Keyed`] as an older version knew it: keys 0, 2, 3 and 9 only. It
/// must read whatever [`Keyed`] reads, with the same values at its keys.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
pub struct KeyedOld {
    #[codec(key = 0)]
    pub id: u64,
    #[codec(key = 2)]
    pub email: Option<String>,
    #[codec(key = 3)]
    pub name: String,
    #[codec(key = 9)]
    pub items: Vec<KeyedItem>,
}

/// A union (`[tag, payload]`) with every variant kind and no catch-all:
/// an unknown tag is an error.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(union)]
pub enum Shape {
    /// Unit (payload nil).
    #[codec(tag = 0)]
    Empty,
    /// Newtype.
    #[codec(tag = 1)]
    Circle(u32),
    /// Tuple.
    #[codec(tag = 2)]
    Segment(i64, i64, Option<String>),
    /// Struct variant, a large tag.
    #[codec(tag = 70000)]
    Labelled {
        /// A label.
        label: String,
        /// A nested union.
        inner: Option<Box<Shape>>,
    },
}

/// A union with a catch-all, which keeps any other tag and its payload
/// raw and writes them back unchanged.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(union)]
pub enum Event {
    /// Struct variant.
    #[codec(tag = 0)]
    Created {
        /// An id.
        id: u64,
    },
    /// Newtype of a union.
    #[codec(tag = 1)]
    Drawn(Shape),
    /// Every other tag.
    #[codec(other)]
    Unknown(u32, codecbus_core::ext::RawValue),
}

/// An enum with every variant kind (map-mode struct variants).
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
pub enum Status {
    /// Unit.
    Open,
    /// Renamed unit.
    #[codec(rename = "done")]
    Closed,
    /// Newtype.
    Held(String),
    /// Newtype of a struct.
    Item(Item),
    /// Tuple.
    Moved(u32, i64, Option<String>),
    /// Empty tuple.
    Nothing(),
    /// Struct.
    Failed {
        code: u16,
        reason: Option<String>,
        retry: bool,
    },
    /// Empty struct.
    Blank {},
    /// Recursive.
    Nested(Box<Status>),
    /// Recursive through a collection.
    Many(Vec<Status>),
}

/// An enum with every variant kind, `as_array` struct variants.
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
#[codec(as_array, rename_all = "snake_case")]
pub enum StatusArr {
    Open,
    Held(String),
    Moved(u32, i64),
    Failed {
        code: u16,
        #[codec(default)]
        reason: Option<String>,
    },
    Nested(Box<StatusArr>),
}

/// Unit, tuple and empty structs.
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
pub struct UnitS;

/// A tuple struct.
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
pub struct TupleS(pub u8, pub String, pub Option<F64>);

/// An empty struct with braces.
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
pub struct EmptyS {}

// ---- extension types --------------------------------------------------------

/// Every extension type and the std time types in one struct.
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
#[codec(as_array)]
pub struct AllExt {
    #[arbitrary(with = arb_timestamp)]
    pub ts: Timestamp,
    pub ext: ExtA,
    #[arbitrary(with = arb_bytes)]
    pub bytes: Bytes,
    #[arbitrary(with = arb_uuid)]
    pub uuid: uuid::Uuid,
    #[arbitrary(with = arb_decimal)]
    pub decimal: rust_decimal::Decimal,
    #[arbitrary(with = arb_time_date)]
    pub t_date: time::Date,
    #[arbitrary(with = arb_time_time)]
    pub t_time: time::Time,
    #[arbitrary(with = arb_time_pdt)]
    pub t_pdt: time::PrimitiveDateTime,
    #[arbitrary(with = arb_time_odt)]
    pub t_odt: time::OffsetDateTime,
    #[arbitrary(with = arb_chrono_date)]
    pub c_date: chrono::NaiveDate,
    #[arbitrary(with = arb_chrono_time)]
    pub c_time: chrono::NaiveTime,
    #[arbitrary(with = arb_chrono_ndt)]
    pub c_ndt: chrono::NaiveDateTime,
    #[arbitrary(with = arb_chrono_utc)]
    pub c_utc: chrono::DateTime<chrono::Utc>,
    #[arbitrary(with = arb_system_time)]
    pub system: SystemTime,
    pub duration: Duration,
}

/// A raw extension value (newtype so it can derive `Arbitrary`).
#[derive(MessageCodec, Clone, Debug, PartialEq)]
pub struct ExtA(pub Ext);

impl<'a> Arbitrary<'a> for ExtA {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        // ids 2..=6 and -1 are known types: an `Ext` of those ids decodes as
        // raw bytes too, since `Ext` accepts every id.
        Ok(ExtA(Ext {
            type_id: u.arbitrary()?,
            data: u.arbitrary()?,
        }))
    }
}

/// Builds a valid timestamp.
pub fn arb_timestamp(u: &mut Unstructured<'_>) -> ArbResult<Timestamp> {
    let secs: i64 = u.arbitrary()?;
    let nanos = u.int_in_range(0..=999_999_999u32)?;
    Ok(Timestamp::new(secs, nanos).unwrap_or_else(|| unreachable!()))
}

fn arb_wide(u: &mut Unstructured<'_>) -> ArbResult<(u128, i128)> {
    // MessagePack integers stop at 64 bits; wider values fail to encode.
    Ok((
        u128::from(u.arbitrary::<u64>()?),
        i128::from(u.arbitrary::<i64>()?),
    ))
}

fn arb_vector(u: &mut Unstructured<'_>) -> ArbResult<imbl::Vector<i32>> {
    Ok(u.arbitrary::<Vec<i32>>()?.into_iter().collect())
}

fn arb_bytes(u: &mut Unstructured<'_>) -> ArbResult<Bytes> {
    Ok(Bytes(u.arbitrary()?))
}

fn arb_uuid(u: &mut Unstructured<'_>) -> ArbResult<uuid::Uuid> {
    Ok(uuid::Uuid::from_u128(u.arbitrary()?))
}

fn arb_decimal(u: &mut Unstructured<'_>) -> ArbResult<rust_decimal::Decimal> {
    Ok(rust_decimal::Decimal::from_parts(
        u.arbitrary()?,
        u.arbitrary()?,
        u.arbitrary()?,
        u.arbitrary()?,
        u.int_in_range(0..=28)?,
    ))
}

fn arb_time_date(u: &mut Unstructured<'_>) -> ArbResult<time::Date> {
    let lo = time::Date::MIN.to_julian_day();
    let hi = time::Date::MAX.to_julian_day();
    let day = u.int_in_range(lo..=hi)?;
    Ok(time::Date::from_julian_day(day).unwrap_or(time::Date::MIN))
}

fn arb_time_time(u: &mut Unstructured<'_>) -> ArbResult<time::Time> {
    Ok(time::Time::from_hms_nano(
        u.int_in_range(0..=23)?,
        u.int_in_range(0..=59)?,
        u.int_in_range(0..=59)?,
        u.int_in_range(0..=999_999_999)?,
    )
    .unwrap_or(time::Time::MIDNIGHT))
}

fn arb_time_pdt(u: &mut Unstructured<'_>) -> ArbResult<time::PrimitiveDateTime> {
    Ok(time::PrimitiveDateTime::new(
        arb_time_date(u)?,
        arb_time_time(u)?,
    ))
}

fn arb_time_odt(u: &mut Unstructured<'_>) -> ArbResult<time::OffsetDateTime> {
    // The instant, in UTC: an offset is not part of the timestamp.
    Ok(arb_time_pdt(u)?.assume_utc())
}

fn arb_chrono_date(u: &mut Unstructured<'_>) -> ArbResult<chrono::NaiveDate> {
    let lo = chrono::NaiveDate::MIN.num_days_from_ce_();
    let hi = chrono::NaiveDate::MAX.num_days_from_ce_();
    let day = u.int_in_range(lo..=hi)?;
    Ok(chrono::NaiveDate::from_num_days_from_ce_opt(day).unwrap_or(chrono::NaiveDate::MIN))
}

/// `num_days_from_ce` without importing the `Datelike` trait at every call.
trait DaysFromCe {
    fn num_days_from_ce_(&self) -> i32;
}

impl DaysFromCe for chrono::NaiveDate {
    fn num_days_from_ce_(&self) -> i32 {
        chrono::Datelike::num_days_from_ce(self)
    }
}

fn arb_chrono_time(u: &mut Unstructured<'_>) -> ArbResult<chrono::NaiveTime> {
    // nanoseconds up to 2e9 - 1: chrono's leap second (valid when sec = 59)
    let h = u.int_in_range(0..=23)?;
    let m = u.int_in_range(0..=59)?;
    let s = u.int_in_range(0..=59)?;
    let n = u.int_in_range(0..=1_999_999_999)?;
    Ok(chrono::NaiveTime::from_hms_nano_opt(h, m, s, n)
        .or_else(|| chrono::NaiveTime::from_hms_nano_opt(h, m, s, n % 1_000_000_000))
        .unwrap_or(chrono::NaiveTime::MIN))
}

fn arb_chrono_ndt(u: &mut Unstructured<'_>) -> ArbResult<chrono::NaiveDateTime> {
    Ok(chrono::NaiveDateTime::new(
        arb_chrono_date(u)?,
        arb_chrono_time(u)?,
    ))
}

fn arb_chrono_utc(u: &mut Unstructured<'_>) -> ArbResult<chrono::DateTime<chrono::Utc>> {
    // No leap seconds: the timestamp folds them into the next second.
    let secs = u.int_in_range(
        chrono::DateTime::<chrono::Utc>::MIN_UTC.timestamp()
            ..=chrono::DateTime::<chrono::Utc>::MAX_UTC.timestamp(),
    )?;
    let nanos = u.int_in_range(0..=999_999_999)?;
    Ok(chrono::DateTime::from_timestamp(secs, nanos).unwrap_or_default())
}

fn arb_system_time(u: &mut Unstructured<'_>) -> ArbResult<SystemTime> {
    let secs: u64 = u.int_in_range(0..=i64::MAX as u64)?;
    let nanos = u.int_in_range(0..=999_999_999)?;
    let d = Duration::new(secs, nanos);
    Ok(if u.arbitrary()? {
        UNIX_EPOCH.checked_add(d)
    } else {
        UNIX_EPOCH.checked_sub(d)
    }
    .unwrap_or(UNIX_EPOCH))
}

// ---- bounded values -----------------------------------------------------------

/// Scalars of every width, an option of a tuple and nested structs: a type
/// with a bound on its size, so a `Vec` of it is written a run at a time
/// into the buffer's spare capacity (the writer's `Run`, the one `unsafe`
/// of the codecs).
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
#[codec(as_array)]
pub struct Scalars {
    pub a: u8,
    pub b: i8,
    pub c: u16,
    pub d: i16,
    pub e: u32,
    pub f: i32,
    pub g: u64,
    pub h: i64,
    pub i: bool,
    pub j: Option<(u16, i8)>,
    pub k: F32,
    pub l: F64,
    pub p: Point,
}

/// Floats and booleans only, with no padding: a flat type
/// (`Encode::FLAT`), so a `Vec` of it is written with byte shuffles (the
/// `unsafe` of `msgpack/flat.rs`), the last elements from a copy.
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
#[codec(as_array)]
pub struct Flats {
    pub l: F64,
    pub k: F32,
    pub d: [F32; 2],
    pub i: bool,
    pub e: (bool, bool),
    pub m: bool,
}

/// The same fields in the map layout: its keys are constant bytes of the
/// form.
#[derive(MessageCodec, Clone, Debug, PartialEq, Arbitrary)]
pub struct FlatsNamed {
    pub l: F64,
    pub k: F32,
    pub d: [F32; 2],
    pub i: bool,
    pub e: (bool, bool),
    pub m: bool,
}

// ---- the round-trip value ---------------------------------------------------

/// What the round-trip target generates: one of every fuzz type.
#[derive(Clone, Debug, Arbitrary)]
pub enum AnyValue {
    Order(Box<Order>),
    OrderArr(Box<OrderArr>),
    Status(Status),
    StatusArr(StatusArr),
    Tree(Tree),
    N(N),
    Ext(Box<AllExt>),
    Json(#[arbitrary(with = arb_json)] JsValue),
    Tuple(TupleS),
    Unit(UnitS),
    Empty(EmptyS),
    Keyed(Box<Keyed>),
    Scalars(Vec<Scalars>),
    Flats(Vec<Flats>),
    FlatsNamed(Vec<FlatsNamed>),
}

/// A JSON value of bounded depth.
pub fn arb_json(u: &mut Unstructured<'_>) -> ArbResult<JsValue> {
    arb_json_depth(u, 0)
}

fn arb_json_depth(u: &mut Unstructured<'_>, depth: u32) -> ArbResult<JsValue> {
    let max = if depth >= 16 { 4 } else { 6 };
    Ok(match u.int_in_range(0..=max)? {
        0 => JsValue::Null,
        1 => JsValue::Bool(u.arbitrary()?),
        2 => {
            if u.arbitrary()? {
                JsValue::from(u.arbitrary::<i64>()?)
            } else {
                JsValue::from(u.arbitrary::<u64>()?)
            }
        }
        3 => JsValue::Float(u.arbitrary()?),
        4 => JsValue::from(u.arbitrary::<String>()?),
        5 => {
            let mut items = Vec::new();
            u.arbitrary_loop(None, Some(8), |u| {
                items.push(arb_json_depth(u, depth + 1)?);
                Ok(std::ops::ControlFlow::Continue(()))
            })?;
            JsValue::Array(items.into_iter().collect())
        }
        _ => {
            let mut members = Vec::new();
            u.arbitrary_loop(None, Some(8), |u| {
                members.push((u.arbitrary::<String>()?, arb_json_depth(u, depth + 1)?));
                Ok(std::ops::ControlFlow::Continue(()))
            })?;
            JsValue::Object(members.into_iter().collect())
        }
    })
}

// ---- checks -----------------------------------------------------------------

/// Small limits, to drive the budget and depth checks as well.
pub fn tight_limits() -> DecodeLimits {
    DecodeLimits::default()
        .max_depth(8)
        .max_collection_len(64)
        .max_alloc_bytes(4096)
}

/// Decodes `data` as `T`; when that succeeds, the value must re-encode,
/// decode back equal and re-encode to the same bytes. Errors must format.
/// Decoding with tight limits must agree or fail.
pub fn check_decode<T>(data: &[u8]) -> Option<T>
where
    T: MessageCodec + PartialEq + Debug,
{
    let value = match from_slice::<T>(data) {
        Ok(v) => v,
        Err(e) => {
            let _ = e.to_string();
            let _ = e.pointer();
            if let Ok(v) = from_slice_with_limits::<T>(data, tight_limits()) {
                panic!("tight limits accept what default limits refuse ({e}): {v:?}");
            }
            return None;
        }
    };
    if let Ok(v) = from_slice_with_limits::<T>(data, tight_limits()) {
        assert_eq!(v, value, "tight limits decode another value");
    }
    let (prefix, used) = codecbus_core::decode_prefix::<T>(data).expect("decode_prefix refused");
    assert_eq!(prefix, value, "decode_prefix decodes another value");
    assert_eq!(used, data.len(), "decode_prefix stopped early");
    check_reencode(&value);
    Some(value)
}

/// `value` encodes, decodes back equal, and re-encodes to the same bytes.
pub fn check_reencode<T>(value: &T)
where
    T: MessageCodec + PartialEq + Debug,
{
    let bytes = codecbus_core::to_vec(value).expect("a decoded value must encode");
    let back = match from_slice::<T>(&bytes) {
        Ok(v) => v,
        Err(e) => panic!("re-encoded bytes {bytes:02x?} do not decode: {e} ({value:?})"),
    };
    assert_eq!(&back, value, "decode(encode(v)) != v; bytes {bytes:02x?}");
    let again = codecbus_core::to_vec(&back).expect("re-encode");
    assert_eq!(again, bytes, "encoding is not stable for {value:?}");
}

/// Round trip for generated values: encode → decode → equal, except that
/// a value nested deeper than the default limit must fail with exactly the
/// depth error.
pub fn check_roundtrip<T>(value: &T)
where
    T: MessageCodec + PartialEq + Debug,
{
    let bytes = codecbus_core::to_vec(value).expect("an arbitrary value must encode");
    match from_slice::<T>(&bytes) {
        Ok(back) => {
            assert_eq!(&back, value, "decode(encode(v)) != v; bytes {bytes:02x?}");
            let again = codecbus_core::to_vec(&back).expect("re-encode");
            assert_eq!(again, bytes, "encoding is not stable");
        }
        Err(e) if e.kind() == DecodeErrorKind::DepthLimitExceeded => {}
        Err(e) => panic!("round trip failed: {e}; bytes {bytes:02x?}"),
    }
}

/// Every extension type decoded from the same bytes.
pub fn check_all_ext(data: &[u8]) {
    check_decode::<Timestamp>(data);
    check_decode::<Ext>(data);
    check_decode::<Bytes>(data);
    check_decode::<uuid::Uuid>(data);
    check_decode::<rust_decimal::Decimal>(data);
    check_decode::<time::Date>(data);
    check_decode::<time::Time>(data);
    check_decode::<time::PrimitiveDateTime>(data);
    check_decode::<time::OffsetDateTime>(data);
    check_decode::<chrono::NaiveDate>(data);
    check_decode::<chrono::NaiveTime>(data);
    check_decode::<chrono::NaiveDateTime>(data);
    check_decode::<chrono::DateTime<chrono::Utc>>(data);
    check_decode::<SystemTime>(data);
    check_decode::<Duration>(data);
    check_decode::<AllExt>(data);
    check_decode::<Vec<Timestamp>>(data);
}

/// A borrowed view (`decode_borrowed`): strings and bytes point into the
/// input.
#[derive(MessageCodec, Debug, PartialEq)]
pub struct View<'a> {
    pub name: &'a str,
    pub raw: &'a [u8],
    pub note: Option<Cow<'a, str>>,
    pub tags: Vec<&'a str>,
    pub index: BTreeMap<&'a str, u32>,
    pub inner: Vec<InnerView<'a>>,
}

/// A positional part of [`View`].
#[derive(MessageCodec, Debug, PartialEq)]
#[codec(as_array)]
pub struct InnerView<'a> {
    pub sku: Cow<'a, str>,
    pub blob: Cow<'a, [u8]>,
}

/// The owned twin of [`View`]: the same bytes, owned fields.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
pub struct Owned {
    pub name: String,
    #[codec(bytes)]
    pub raw: Vec<u8>,
    pub note: Option<String>,
    pub tags: Vec<String>,
    pub index: BTreeMap<String, u32>,
    pub inner: Vec<InnerOwned>,
}

/// The owned twin of [`InnerView`].
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(as_array)]
pub struct InnerOwned {
    pub sku: String,
    #[codec(bytes)]
    pub blob: Vec<u8>,
}
