//! Sample values of a shape: MessagePack a writer of it can write.
//!
//! [`sample`] gives one deterministic value for any codec: `0`, `false`,
//! `""`, empty arrays and maps, `nil` for an `Option`, every field of a
//! record, the first variant of an enum (by name) or union (by tag). The
//! compatibility check ([`check`](super::check)) builds its witnesses on
//! it: the same value with the spot a rule is about set to what breaks the
//! reader, so that a witness is always a whole value of the writer's
//! codec.
//!
//! [`Value`] is any MessagePack value; it implements [`Encode`] and
//! [`Decode`], so `to_vec(&value)` writes it and `from_slice::<Value>`
//! reads any MessagePack back, and [`Value::to_json`] shows it to a person.
//!
//! ```
//! use codecbus_core::shape::sample::{Value, sample};
//! use codecbus_core::shape::{CodecShape, FieldShape, Layout, Record, Shape};
//! use std::collections::BTreeMap;
//!
//! let id = FieldShape { name: "id".into(), key: None, optional: false, shape: Shape::int(false, 64) };
//! let codec = CodecShape {
//!     name: "shop.order".into(),
//!     aliases: vec![],
//!     shape: Shape::Record(Record::new(Layout::Map, vec![id], vec![])),
//!     refs: BTreeMap::new(),
//! };
//! let value = sample(&codec);
//! assert_eq!(value.to_json(), r#"{"id":0}"#);
//! assert_eq!(codecbus_core::to_vec(&value).unwrap(), b"\x81\xa2id\x00");
//! ```

use std::fmt::Write as _;

use super::{CodecShape, Enum, Layout, Payload, Record, Shape, Union, VariantShape};
use crate::codec::{Decode, Encode};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::msgpack::kind::{Int, ValueKind};
use crate::msgpack::read::Reader;
use crate::msgpack::write::Writer;

/// Any MessagePack value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `nil`.
    Nil,
    /// A boolean.
    Bool(bool),
    /// An integer, in MessagePack's range.
    Int(Int),
    /// A `float 32`.
    F32(f32),
    /// A `float 64`.
    F64(f64),
    /// A string.
    Str(String),
    /// A byte string (`bin`).
    Bin(Vec<u8>),
    /// An extension value: its type code and payload.
    Ext(i8, Vec<u8>),
    /// An array.
    Array(Vec<Value>),
    /// A map, its entries in the order written.
    Map(Vec<(Value, Value)>),
}

impl Value {
    /// The integer `n`, clamped to MessagePack's range (`i64::MIN ..=
    /// u64::MAX`).
    pub fn int(n: i128) -> Self {
        Self::Int(match u64::try_from(n) {
            Ok(u) => Int::Unsigned(u),
            Err(_) if n < 0 => Int::Negative(i64::try_from(n).unwrap_or(i64::MIN)),
            Err(_) => Int::Unsigned(u64::MAX),
        })
    }

    /// The integer this value holds, if it is one.
    pub fn as_i128(&self) -> Option<i128> {
        match self {
            Self::Int(Int::Unsigned(u)) => Some(i128::from(*u)),
            Self::Int(Int::Negative(n)) => Some(i128::from(*n)),
            _ => None,
        }
    }

    /// The value as JSON text, for people: `bin` as a base64 string and an
    /// extension as `{"$ext": type, "$data": "<base64>"}` (as the bridge
    /// writes them), map keys that are not strings as their JSON text in a
    /// string, a non-finite float as `null`.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match self {
            Self::Nil => out.push_str("null"),
            Self::Bool(b) => {
                let _ = write!(out, "{b}");
            }
            Self::Int(Int::Unsigned(u)) => {
                let _ = write!(out, "{u}");
            }
            Self::Int(Int::Negative(n)) => {
                let _ = write!(out, "{n}");
            }
            // `Debug` is the shortest text that reads back as the same
            // float, in a form JSON takes (`0.1`, `1e300`, `2.0`).
            Self::F32(f) if f.is_finite() => {
                let _ = write!(out, "{f:?}");
            }
            Self::F64(f) if f.is_finite() => {
                let _ = write!(out, "{f:?}");
            }
            Self::F32(_) | Self::F64(_) => out.push_str("null"),
            Self::Str(s) => super::json_str(out, s),
            Self::Bin(b) => {
                out.push('"');
                base64(b, out);
                out.push('"');
            }
            Self::Ext(code, data) => {
                let _ = write!(out, "{{\"$ext\":{code},\"$data\":\"");
                base64(data, out);
                out.push_str("\"}");
            }
            Self::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_json(out);
                }
                out.push(']');
            }
            Self::Map(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    match k {
                        Self::Str(s) => super::json_str(out, s),
                        other => super::json_str(out, &other.to_json()),
                    }
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

/// Base64, standard alphabet, padded.
fn base64(data: &[u8], out: &mut String) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
}

impl Encode for Value {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        match self {
            Self::Nil => w.write_nil(),
            Self::Bool(b) => w.write_bool(*b),
            Self::Int(Int::Unsigned(u)) => w.write_u64(*u),
            Self::Int(Int::Negative(n)) => w.write_i64(*n),
            Self::F32(f) => w.write_f32(*f),
            Self::F64(f) => w.write_f64(*f),
            Self::Str(s) => w.write_str(s)?,
            Self::Bin(b) => w.write_bin(b)?,
            Self::Ext(code, data) => w.write_ext(*code, data)?,
            Self::Array(items) => {
                w.write_array_len(items.len())?;
                for v in items {
                    v.encode(w)?;
                }
            }
            Self::Map(entries) => {
                w.write_map_len(entries.len())?;
                for (k, v) in entries {
                    k.encode(w)?;
                    v.encode(w)?;
                }
            }
        }
        Ok(())
    }
}

impl<'de> Decode<'de> for Value {
    /// Reads any MessagePack value, within the reader's limits.
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let at = r.position();
        let marker = r.peek()?;
        Ok(match ValueKind::of(marker) {
            ValueKind::Nil => {
                r.read_nil()?;
                Self::Nil
            }
            ValueKind::Bool => Self::Bool(r.read_bool()?),
            ValueKind::Int => Self::Int(r.read_int()?),
            ValueKind::Float if marker == 0xca => Self::F32(r.read_f32()?),
            ValueKind::Float => Self::F64(r.read_f64()?),
            ValueKind::Str => {
                let s = r.read_str()?;
                r.charge_alloc(s.len())?;
                Self::Str(s.to_owned())
            }
            ValueKind::Bin => {
                let b = r.read_bin()?;
                r.charge_alloc(b.len())?;
                Self::Bin(b.to_vec())
            }
            ValueKind::Ext => {
                let (code, data) = r.read_ext()?;
                r.charge_alloc(data.len())?;
                Self::Ext(code, data.to_vec())
            }
            ValueKind::Array => r.nested(|r| {
                let len = r.read_array_len()?;
                r.charge_alloc(len.saturating_mul(size_of::<Value>()))?;
                let mut items = Vec::with_capacity(len);
                for i in 0..len {
                    items.push(Self::decode(r).map_err(|e| e.in_index(i))?);
                }
                Ok(Self::Array(items))
            })?,
            ValueKind::Map => r.nested(|r| {
                let len = r.read_map_len()?;
                r.charge_alloc(len.saturating_mul(2 * size_of::<Value>()))?;
                let mut entries = Vec::with_capacity(len);
                for _ in 0..len {
                    let k = Self::decode(r)?;
                    let v = Self::decode(r)?;
                    entries.push((k, v));
                }
                Ok(Self::Map(entries))
            })?,
            ValueKind::Reserved => {
                return Err(DecodeError::new(DecodeErrorKind::InvalidMarker(marker), at));
            }
        })
    }
}

/// The sample value of `codec`: what its writer writes for the value made
/// of zeros, empty strings and collections, `None`s and first variants.
pub fn sample(codec: &CodecShape) -> Value {
    Sampler::new(codec).value(&codec.shape)
}

/// The sample value of `shape`, a part of `codec` (whose `refs` resolve
/// the [`Shape::Ref`]s in it).
pub fn sample_shape(shape: &Shape, codec: &CodecShape) -> Value {
    Sampler::new(codec).value(shape)
}

/// How deep a sample goes through required values before it gives up with
/// `nil` (a type that requires itself has no finite value).
const MAX_DEPTH: u32 = 64;

/// The longest array a keyed record's sample is written as: a key beyond
/// it (a snapshot made by hand) is left out of the sample.
const MAX_KEYED_LEN: u64 = 1 << 16;

/// One step from a value into a part of it, along the writer's shape: how
/// a witness's trigger is put in place inside a whole value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// The record field at this index of `Record::fields`.
    Field(usize),
    /// The one element of an array.
    Elem,
    /// The key of a map's one entry.
    Key,
    /// The value of a map's one entry.
    Value,
    /// The value inside an `Option` (not `nil`).
    Some,
    /// The tuple item at this index.
    Item(usize),
    /// The variant at this index of the enum's or union's variants; the
    /// steps after it go into its payload.
    Variant(usize),
}

/// How many values one sampler makes at most: past it, `nil` (a snapshot
/// made by hand can describe a value of any size through shared
/// references).
const MAX_VALUES: u32 = 100_000;

/// Makes sample values of one codec's shapes.
pub(crate) struct Sampler<'a> {
    codec: &'a CodecShape,
    depth: u32,
    budget: u32,
}

impl<'a> Sampler<'a> {
    pub(crate) fn new(codec: &'a CodecShape) -> Self {
        Self {
            codec,
            depth: 0,
            budget: MAX_VALUES,
        }
    }

    /// `shape` with its `Ref`s followed (a bounded number of hops);
    /// `None` for a name with no definition.
    pub(crate) fn resolve<'s>(&self, mut shape: &'s Shape) -> Option<&'s Shape>
    where
        'a: 's,
    {
        for _ in 0..MAX_DEPTH {
            match shape {
                Shape::Ref(name) => shape = self.codec.resolve(name)?,
                other => return Some(other),
            }
        }
        None
    }

    /// The sample value of `shape`.
    pub(crate) fn value(&mut self, shape: &Shape) -> Value {
        self.seeded(shape, 0)
    }

    /// The sample value of `shape` with its scalars set from `seed` (0 for
    /// the plain sample), so that values at different positions differ.
    pub(crate) fn seeded(&mut self, shape: &Shape, seed: u32) -> Value {
        if self.depth >= MAX_DEPTH || self.budget == 0 {
            return Value::Nil;
        }
        self.budget -= 1;
        let Some(shape) = self.resolve(shape) else {
            return Value::Nil;
        };
        self.depth += 1;
        let v = match shape {
            Shape::Nil | Shape::Json | Shape::Opaque | Shape::Option(_) | Shape::Ref(_) => {
                Value::Nil
            }
            Shape::Bool => Value::Bool(seed % 2 == 1),
            Shape::Int { signed, bits } => {
                let (_, max) = write_range(*signed, *bits);
                Value::int(i128::from(seed).min(max))
            }
            Shape::F32 => Value::F32(seed as f32),
            Shape::F64 => Value::F64(f64::from(seed)),
            Shape::Str => Value::Str(if seed == 0 {
                String::new()
            } else {
                seed.to_string()
            }),
            Shape::Bin => Value::Bin(if seed == 0 {
                Vec::new()
            } else {
                vec![seed as u8]
            }),
            Shape::Ext(code) => Value::Ext(*code, ext_payload(*code)),
            Shape::Array(_) => Value::Array(Vec::new()),
            Shape::Tuple(items) => {
                Value::Array(items.iter().map(|s| self.seeded(s, seed)).collect())
            }
            Shape::Map(_, _) => Value::Map(Vec::new()),
            Shape::Record(r) => self.record(r, |_| None),
            Shape::Enum(e) => match e.variants.first() {
                Some(v) => {
                    let payload = self.payload(&v.payload);
                    enum_value(v, payload)
                }
                None => Value::Str(String::new()),
            },
            Shape::Union(u) => match first_tagged(u) {
                Some(i) => {
                    let v = &u.variants[i];
                    let payload = self.payload(&v.payload);
                    union_value(v, payload)
                }
                // No variant to write (the catch-all only keeps what
                // others wrote): no value, which its reader refuses too.
                None => Value::Nil,
            },
        };
        self.depth -= 1;
        v
    }

    /// The sample of a variant's payload (`nil` for a unit variant).
    pub(crate) fn payload(&mut self, payload: &Payload) -> Value {
        match payload {
            Payload::Unit => Value::Nil,
            Payload::Newtype(s) => self.value(s),
            Payload::Tuple(items) => Value::Array(items.iter().map(|s| self.value(s)).collect()),
            Payload::Record(r) => self.record(r, |_| None),
        }
    }

    /// The record `r` as its writer writes it, the field at index `i`
    /// given by `set(i)` where it returns one (`Some(None)` leaves the key
    /// out of a map), the others their sample.
    pub(crate) fn record(
        &mut self,
        r: &Record,
        mut set: impl FnMut(usize) -> Option<Option<Value>>,
    ) -> Value {
        let mut values: Vec<Option<Value>> = Vec::with_capacity(r.fields.len());
        for (i, f) in r.fields.iter().enumerate() {
            let v = match set(i) {
                Some(v) => v,
                None => Some(self.value(&f.shape)),
            };
            values.push(v);
        }
        self.record_of(r, values)
    }

    /// The record `r` with these field values (`None`: left out of a map;
    /// in an array, `nil`).
    pub(crate) fn record_of(&self, r: &Record, values: Vec<Option<Value>>) -> Value {
        match r.layout {
            Layout::Map => Value::Map(
                r.fields
                    .iter()
                    .zip(values)
                    .filter_map(|(f, v)| Some((Value::Str(f.name.clone()), v?)))
                    .collect(),
            ),
            Layout::Array => Value::Array(
                values
                    .into_iter()
                    .map(|v| v.unwrap_or(Value::Nil))
                    .collect(),
            ),
            Layout::Keyed => {
                let len = keyed_len(r).min(MAX_KEYED_LEN) as usize;
                let mut items = vec![Value::Nil; len];
                for (f, v) in r.fields.iter().zip(values) {
                    if let Some(k) = f.key.map(|k| k as usize)
                        && k < len
                    {
                        items[k] = v.unwrap_or(Value::Nil);
                    }
                }
                Value::Array(items)
            }
        }
    }

    /// The whole value of `shape` whose part reached by `steps` is `leaf`,
    /// everything else its sample.
    pub(crate) fn build(&mut self, shape: &Shape, steps: &[Step], leaf: &Value) -> Value {
        let Some((&step, rest)) = steps.split_first() else {
            return leaf.clone();
        };
        let Some(shape) = self.resolve(shape) else {
            return Value::Nil;
        };
        match (shape, step) {
            (Shape::Record(r), Step::Field(i)) if i < r.fields.len() => {
                let inner = self.build(&r.fields[i].shape, rest, leaf);
                let mut inner = Some(inner);
                self.record(r, |j| (j == i).then(|| inner.take()))
            }
            (Shape::Array(e), Step::Elem) => Value::Array(vec![self.build(e, rest, leaf)]),
            (Shape::Map(k, v), Step::Key) => {
                let key = self.build(k, rest, leaf);
                Value::Map(vec![(key, self.value(v))])
            }
            (Shape::Map(k, v), Step::Value) => {
                let key = self.value(k);
                Value::Map(vec![(key, self.build(v, rest, leaf))])
            }
            (Shape::Option(inner), Step::Some) => self.build(inner, rest, leaf),
            (Shape::Tuple(items), Step::Item(i)) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(j, s)| {
                        if j == i {
                            self.build(s, rest, leaf)
                        } else {
                            self.value(s)
                        }
                    })
                    .collect(),
            ),
            (Shape::Enum(Enum { variants, .. }), Step::Variant(i)) if i < variants.len() => {
                let v = &variants[i];
                let payload = self.build_payload(&v.payload, rest, leaf);
                enum_value(v, payload)
            }
            (Shape::Union(Union { variants, .. }), Step::Variant(i)) if i < variants.len() => {
                let v = &variants[i];
                let payload = self.build_payload(&v.payload, rest, leaf);
                union_value(v, payload)
            }
            (shape, _) => self.value(shape),
        }
    }

    /// A variant's payload whose part reached by `steps` is `leaf` (the
    /// payload itself when `steps` is empty).
    fn build_payload(&mut self, payload: &Payload, steps: &[Step], leaf: &Value) -> Value {
        if steps.is_empty() {
            return leaf.clone();
        }
        match (payload, steps[0]) {
            (Payload::Newtype(s), _) => self.build(s, steps, leaf),
            (Payload::Tuple(items), Step::Item(i)) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(j, s)| {
                        if j == i {
                            self.build(s, &steps[1..], leaf)
                        } else {
                            self.value(s)
                        }
                    })
                    .collect(),
            ),
            (Payload::Record(r), Step::Field(_)) => {
                // A record payload is reached as a record shape would be.
                let shape = Shape::Record(r.clone());
                self.build(&shape, steps, leaf)
            }
            (payload, _) => self.payload(payload),
        }
    }
}

/// The value of variant `v` of a named enum with this payload: the bare
/// name for a unit variant, else `{name: payload}`.
pub(crate) fn enum_value(v: &VariantShape, payload: Value) -> Value {
    match v.payload {
        Payload::Unit => Value::Str(v.name.clone()),
        _ => Value::Map(vec![(Value::Str(v.name.clone()), payload)]),
    }
}

/// The value of variant `v` of a union with this payload: `[tag,
/// payload]`.
pub(crate) fn union_value(v: &VariantShape, payload: Value) -> Value {
    Value::Array(vec![Value::int(i128::from(v.tag.unwrap_or(0))), payload])
}

/// The index of the first variant with a tag (the catch-all has none).
pub(crate) fn first_tagged(u: &Union) -> Option<usize> {
    u.variants.iter().position(|v| v.tag.is_some())
}

/// The length of the array a keyed record is written as: its largest key
/// plus one.
pub(crate) fn keyed_len(r: &Record) -> u64 {
    r.fields
        .iter()
        .filter_map(|f| f.key)
        .max()
        .map_or(0, |k| u64::from(k) + 1)
}

/// The values a writer of this integer shape writes: its Rust type's
/// range, within MessagePack's (`u128` and `i128` values beyond 64 bits
/// fail to encode).
pub(crate) fn write_range(signed: bool, bits: u8) -> (i128, i128) {
    let bits = u32::from(bits.clamp(1, 128));
    match (signed, bits) {
        (false, b) if b >= 64 => (0, i128::from(u64::MAX)),
        (false, b) => (0, (1i128 << b) - 1),
        (true, b) if b >= 128 => (i128::from(i64::MIN), i128::from(u64::MAX)),
        (true, b) if b >= 64 => (i128::from(i64::MIN), i128::from(i64::MAX)),
        (true, b) => (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1),
    }
}

/// The values a reader of this integer shape takes (`Reader::read_u32`
/// and the like take any integer form whose value fits, msgpack/read/
/// values.rs `narrow!`; `u128` reads a `u64`, `i128` any integer:
/// impls/primitive.rs).
pub(crate) fn read_range(signed: bool, bits: u8) -> (i128, i128) {
    let bits = u32::from(bits.clamp(1, 128));
    match (signed, bits) {
        (false, b) if b >= 64 => (0, i128::from(u64::MAX)),
        (false, b) => (0, (1i128 << b) - 1),
        (true, b) if b >= 128 => (i128::from(i64::MIN), i128::from(u64::MAX)),
        (true, b) if b >= 64 => (i128::from(i64::MIN), i128::from(i64::MAX)),
        (true, b) => (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1),
    }
}

/// A payload the reader of a known extension type takes (ext/mod.rs's
/// table): the epoch, scale 0 and unscaled 0, the nil UUID, 2000-01-01,
/// midnight; one zero byte for any other code.
fn ext_payload(code: i8) -> Vec<u8> {
    const DATE: [u8; 6] = [0, 0, 0x07, 0xd0, 1, 1];
    match code {
        crate::ext::TIMESTAMP => vec![0; 4],
        crate::ext::DECIMAL => vec![0, 0],
        crate::ext::UUID => vec![0; 16],
        crate::ext::DATE => DATE.to_vec(),
        crate::ext::TIME => vec![0; 7],
        crate::ext::DATETIME => [&DATE[..], &[0; 7]].concat(),
        _ => vec![0],
    }
}

/// What a reader makes of a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Read as written.
    Ok,
    /// Refused, for this reason.
    Rejected(String),
    /// Read, but not as written.
    Misread(String),
    /// Depends on what the shape does not say (an opaque codec, a
    /// declaration order).
    Unknown,
}

impl Outcome {
    /// Refused or misread.
    pub(crate) fn is_bad(&self) -> bool {
        matches!(self, Outcome::Rejected(_) | Outcome::Misread(_))
    }

    /// Two outcomes as one: the first refusal or misreading, else unknown
    /// if either is, else ok.
    fn join(self, next: Outcome) -> Outcome {
        if self.is_bad() || (self == Outcome::Unknown && !next.is_bad()) {
            self
        } else {
            next
        }
    }
}

/// A model of the derived readers (codec-derive/src/decode.rs) and the
/// built-in ones (msgpack/read/values.rs, impls/): what a reader of a
/// shape does with a value. The check's witnesses are held to it in tests,
/// and it decides the witness of a change between kinds that no rule
/// names.
pub(crate) struct Simulator<'a> {
    codec: &'a CodecShape,
    depth: u32,
}

impl<'a> Simulator<'a> {
    pub(crate) fn new(codec: &'a CodecShape) -> Self {
        Self { codec, depth: 0 }
    }

    pub(crate) fn read(&mut self, shape: &Shape, v: &Value) -> Outcome {
        if self.depth > 256 {
            return Outcome::Unknown;
        }
        self.depth += 1;
        let out = self.read_inner(shape, v);
        self.depth -= 1;
        out
    }

    fn read_inner(&mut self, shape: &Shape, v: &Value) -> Outcome {
        let rejected =
            |what: &str| Outcome::Rejected(format!("a {what} reader refuses {}", kind(v)));
        match shape {
            Shape::Opaque => Outcome::Unknown,
            Shape::Ref(name) => match self.codec.resolve(name) {
                Some(s) => self.read(s, v),
                None => Outcome::Unknown,
            },
            Shape::Nil => match v {
                Value::Nil => Outcome::Ok,
                _ => rejected("nil"),
            },
            Shape::Bool => match v {
                Value::Bool(_) => Outcome::Ok,
                _ => rejected("boolean"),
            },
            Shape::Int { signed, bits } => match v.as_i128() {
                Some(n) => {
                    let (min, max) = read_range(*signed, *bits);
                    if (min..=max).contains(&n) {
                        Outcome::Ok
                    } else {
                        Outcome::Rejected(format!(
                            "{n} is out of range for {}{bits}",
                            if *signed { 'i' } else { 'u' }
                        ))
                    }
                }
                None => rejected("integer"),
            },
            Shape::F32 => match v {
                Value::F32(_) => Outcome::Ok,
                Value::F64(f) if f64::from(*f as f32) == *f || f.is_nan() => Outcome::Ok,
                Value::F64(f) => Outcome::Misread(format!("{f:?} is read as {:?}", *f as f32)),
                Value::Int(_) => exact_float(v.as_i128().unwrap_or(0), 24),
                _ => rejected("float"),
            },
            Shape::F64 => match v {
                Value::F32(_) | Value::F64(_) => Outcome::Ok,
                Value::Int(_) => exact_float(v.as_i128().unwrap_or(0), 53),
                _ => rejected("float"),
            },
            Shape::Str => match v {
                Value::Str(_) => Outcome::Ok,
                _ => rejected("string"),
            },
            Shape::Bin => match v {
                Value::Bin(_) | Value::Str(_) => Outcome::Ok,
                _ => rejected("binary"),
            },
            Shape::Ext(code) => match v {
                Value::Ext(c, _) if c == code => Outcome::Ok,
                Value::Ext(c, _) => {
                    Outcome::Rejected(format!("an extension {code} reader refuses extension {c}"))
                }
                _ => rejected("extension"),
            },
            Shape::Array(e) => match v {
                Value::Array(items) => self.all(items.iter().map(|i| (&**e, i))),
                _ => rejected("array"),
            },
            Shape::Tuple(shapes) => match v {
                Value::Array(items) if items.len() == shapes.len() => {
                    self.all(shapes.iter().zip(items))
                }
                Value::Array(items) => Outcome::Rejected(format!(
                    "a tuple of {} refuses an array of {}",
                    shapes.len(),
                    items.len()
                )),
                _ => rejected("tuple"),
            },
            Shape::Map(k, val) => match v {
                Value::Map(entries) => {
                    let mut acc = Outcome::Ok;
                    for (key, value) in entries {
                        acc = acc.join(self.read(k, key));
                        acc = acc.join(self.read(val, value));
                        if acc.is_bad() {
                            return acc;
                        }
                    }
                    acc
                }
                _ => rejected("map"),
            },
            Shape::Option(inner) => match v {
                Value::Nil => Outcome::Ok,
                _ => self.read(inner, v),
            },
            Shape::Json => self.json(v),
            Shape::Record(r) => self.record(r, v),
            Shape::Enum(e) => self.enumeration(e, v),
            Shape::Union(u) => self.union(u, v),
        }
    }

    fn all<'s>(&mut self, pairs: impl Iterator<Item = (&'s Shape, &'s Value)>) -> Outcome {
        let mut acc = Outcome::Ok;
        for (s, v) in pairs {
            acc = acc.join(self.read(s, v));
            if acc.is_bad() {
                return acc;
            }
        }
        acc
    }

    /// codecbus-json's and serde_json's readers: any value but `bin` and
    /// extensions, map keys strings or integers
    /// (serde_json_value.rs `decode_value`).
    fn json(&mut self, v: &Value) -> Outcome {
        match v {
            Value::Bin(_) | Value::Ext(..) => {
                Outcome::Rejected(format!("a JSON reader refuses {}", kind(v)))
            }
            Value::F32(f) if !f.is_finite() => {
                Outcome::Misread("a non-finite float is read as null".into())
            }
            Value::F64(f) if !f.is_finite() => {
                Outcome::Misread("a non-finite float is read as null".into())
            }
            Value::Array(items) => {
                let mut acc = Outcome::Ok;
                for i in items {
                    acc = acc.join(self.json(i));
                    if acc.is_bad() {
                        return acc;
                    }
                }
                acc
            }
            Value::Map(entries) => {
                let mut acc = Outcome::Ok;
                for (k, val) in entries {
                    if !matches!(k, Value::Str(_) | Value::Int(_)) {
                        return Outcome::Rejected(format!(
                            "a JSON reader refuses {} as a key",
                            kind(k)
                        ));
                    }
                    acc = acc.join(self.json(val));
                    if acc.is_bad() {
                        return acc;
                    }
                }
                acc
            }
            _ => Outcome::Ok,
        }
    }

    /// decode.rs `named_body`: a map by name or an array by position (by
    /// key for a keyed record); a tuple struct reads arrays only.
    fn record(&mut self, r: &Record, v: &Value) -> Outcome {
        match v {
            Value::Map(entries) => {
                if is_tuple_like(r) {
                    return Outcome::Rejected("a tuple struct refuses a map".into());
                }
                // map_block: keys are strings, unknown ones skipped, a known
                // one twice refused, missing ones `None` or their default.
                let mut seen = vec![false; r.fields.len()];
                let mut acc = Outcome::Ok;
                for (k, val) in entries {
                    let Value::Str(name) = k else {
                        return Outcome::Rejected(format!("a struct refuses {} as a key", kind(k)));
                    };
                    if let Some(i) = r.fields.iter().position(|f| &f.name == name) {
                        if seen[i] {
                            return Outcome::Rejected(format!("field `{name}` twice"));
                        }
                        seen[i] = true;
                        acc = acc.join(self.read(&r.fields[i].shape, val));
                        if acc.is_bad() {
                            return acc;
                        }
                    }
                }
                for (f, seen) in r.fields.iter().zip(seen) {
                    if !seen && !f.optional {
                        return Outcome::Rejected(format!("missing field `{}`", f.name));
                    }
                }
                acc
            }
            Value::Array(items) => match r.layout {
                // By declaration order, which a map layout's shape does
                // not keep.
                Layout::Map => Outcome::Unknown,
                Layout::Array => {
                    // seq_block: more elements than fields is an error,
                    // fewer leaves the rest missing.
                    if items.len() > r.fields.len() {
                        return Outcome::Rejected(format!(
                            "an array of {} for {} fields",
                            items.len(),
                            r.fields.len()
                        ));
                    }
                    let mut acc = Outcome::Ok;
                    for (i, f) in r.fields.iter().enumerate() {
                        acc = acc.join(match items.get(i) {
                            Some(item) => self.read(&f.shape, item),
                            None if f.optional => Outcome::Ok,
                            None => Outcome::Rejected(format!("missing field `{}`", f.name)),
                        });
                        if acc.is_bad() {
                            return acc;
                        }
                    }
                    acc
                }
                Layout::Keyed => {
                    // seq_block, keyed: element N is the field of key N,
                    // others skipped; `nil` at a default field is its
                    // default.
                    let mut acc = Outcome::Ok;
                    for f in &r.fields {
                        let item = f.key.and_then(|k| items.get(k as usize));
                        acc = acc.join(match item {
                            Some(Value::Nil) if f.optional => Outcome::Ok,
                            Some(item) => self.read(&f.shape, item),
                            None if f.optional => Outcome::Ok,
                            None => Outcome::Rejected(format!("missing field `{}`", f.name)),
                        });
                        if acc.is_bad() {
                            return acc;
                        }
                    }
                    acc
                }
            },
            _ => Outcome::Rejected(format!("a struct refuses {}", kind(v))),
        }
    }

    /// decode.rs `enum_body`: a unit variant's bare name, or `{name:
    /// payload}`; an unknown name is refused.
    fn enumeration(&mut self, e: &Enum, v: &Value) -> Outcome {
        match v {
            Value::Str(name) => match e.variants.iter().find(|x| &x.name == name) {
                Some(x) if x.payload == Payload::Unit => Outcome::Ok,
                Some(_) => Outcome::Rejected(format!("variant `{name}` has data")),
                None => Outcome::Rejected(format!("unknown variant `{name}`")),
            },
            Value::Map(entries) if entries.len() == 1 => {
                let (Value::Str(name), payload) = &entries[0] else {
                    return Outcome::Rejected("a variant name is a string".into());
                };
                match e.variants.iter().find(|x| &x.name == name) {
                    Some(x) => self.payload(&x.payload, payload),
                    None => Outcome::Rejected(format!("unknown variant `{name}`")),
                }
            }
            _ => Outcome::Rejected(format!("an enum refuses {}", kind(v))),
        }
    }

    /// decode.rs `union_body`: `[tag, payload]`, an unknown tag to the
    /// catch-all or refused.
    fn union(&mut self, u: &Union, v: &Value) -> Outcome {
        let Value::Array(items) = v else {
            return Outcome::Rejected(format!("a union refuses {}", kind(v)));
        };
        let [tag, payload] = &items[..] else {
            return Outcome::Rejected("a union's value is `[tag, payload]`".into());
        };
        let Some(tag) = tag.as_i128().and_then(|t| u32::try_from(t).ok()) else {
            return Outcome::Rejected("a union's tag is a u32".into());
        };
        match u.variants.iter().find(|x| x.tag == Some(tag)) {
            Some(x) => self.payload(&x.payload, payload),
            None if u.catch_all.is_some() => Outcome::Ok,
            None => Outcome::Rejected(format!("unknown tag {tag}")),
        }
    }

    /// decode.rs `variant_value`: `nil` for a unit variant, the value for
    /// a newtype, an array by position for a tuple (missing trailing
    /// `Option`s are `None`), a record.
    fn payload(&mut self, p: &Payload, v: &Value) -> Outcome {
        match p {
            Payload::Unit => match v {
                Value::Nil => Outcome::Ok,
                _ => Outcome::Rejected(format!("a unit variant refuses {}", kind(v))),
            },
            Payload::Newtype(s) => self.read(s, v),
            Payload::Tuple(shapes) => match v {
                Value::Array(items) if items.len() <= shapes.len() => {
                    let mut acc = Outcome::Ok;
                    for (i, s) in shapes.iter().enumerate() {
                        acc = acc.join(match items.get(i) {
                            Some(item) => self.read(s, item),
                            None if accepts_missing(s) => Outcome::Ok,
                            None => Outcome::Rejected(format!("missing item {i}")),
                        });
                        if acc.is_bad() {
                            return acc;
                        }
                    }
                    acc
                }
                Value::Array(items) => Outcome::Rejected(format!(
                    "an array of {} for {} items",
                    items.len(),
                    shapes.len()
                )),
                _ => Outcome::Rejected(format!("a tuple variant refuses {}", kind(v))),
            },
            Payload::Record(r) => self.record(r, v),
        }
    }
}

/// An integer read by a float reader: exact up to 2^mantissa
/// (values.rs `read_f64_other` converts with `as`).
fn exact_float(n: i128, mantissa: u32) -> Outcome {
    if n.unsigned_abs() <= 1u128 << mantissa {
        Outcome::Ok
    } else if mantissa == 24 {
        Outcome::Misread(format!("{n} is read as {:?}", n as f32))
    } else {
        Outcome::Misread(format!("{n} is read as {:?}", n as f64))
    }
}

/// Whether a missing tuple item of this shape is filled in (`Option`'s
/// `value_when_missing`, codec.rs).
pub(crate) fn accepts_missing(s: &Shape) -> bool {
    matches!(s, Shape::Option(_))
}

/// Whether an array-layout record is a tuple struct, which reads arrays
/// only: its fields are named by their positions (`0`, `1`, ...), as the
/// derive names tuple fields (codec-derive/src/ast.rs).
pub(crate) fn is_tuple_like(r: &Record) -> bool {
    r.layout == Layout::Array
        && !r.fields.is_empty()
        && r.fields
            .iter()
            .enumerate()
            .all(|(i, f)| f.name == i.to_string())
}

/// A value's kind, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Nil => "nil",
        Value::Bool(_) => "a boolean",
        Value::Int(_) => "an integer",
        Value::F32(_) | Value::F64(_) => "a float",
        Value::Str(_) => "a string",
        Value::Bin(_) => "a binary",
        Value::Ext(..) => "an extension",
        Value::Array(_) => "an array",
        Value::Map(_) => "a map",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{from_slice, to_vec};

    #[test]
    fn base64_pads() {
        for (data, text) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
        ] {
            let mut out = String::new();
            base64(data, &mut out);
            assert_eq!(out, text);
        }
    }

    #[test]
    fn values_round_trip_through_messagepack() {
        let v = Value::Map(vec![
            (
                Value::Str("a".into()),
                Value::Array(vec![Value::int(-1), Value::int(1 << 40)]),
            ),
            (Value::int(7), Value::F32(0.5)),
            (Value::Nil, Value::Ext(-1, vec![0; 4])),
            (Value::Bool(true), Value::Bin(vec![1, 2])),
            (Value::Str("f".into()), Value::F64(0.1)),
        ]);
        let bytes = to_vec(&v).unwrap();
        assert_eq!(from_slice::<Value>(&bytes).unwrap(), v);
        assert_eq!(
            v.to_json(),
            r#"{"a":[-1,1099511627776],"7":0.5,"null":{"$ext":-1,"$data":"AAAAAA=="},"true":"AQI=","f":0.1}"#
        );
    }

    #[test]
    fn integer_ranges_are_the_readers() {
        assert_eq!(read_range(false, 32), (0, 4_294_967_295));
        assert_eq!(read_range(true, 8), (-128, 127));
        assert_eq!(read_range(false, 128), (0, i128::from(u64::MAX)));
        assert_eq!(
            read_range(true, 128),
            (i128::from(i64::MIN), i128::from(u64::MAX))
        );
        assert_eq!(
            write_range(true, 64),
            (i128::from(i64::MIN), i128::from(i64::MAX))
        );
    }
}
