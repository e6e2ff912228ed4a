//! JSON text and serde: `Serialize`, `Deserialize` straight into
//! `JsValue`, parsing with line/column errors, printing, and conversions
//! from and to `serde_json::Value`.
//!
//! Contract: deserialization never goes through `serde_json::Value`. One
//! pair of scratch stacks is threaded through the whole parse as a
//! `DeserializeSeed`: each array or object pushes its elements on the
//! shared stack and, when it closes, drains them into one exactly-sized
//! allocation. Why: a per-container `Vec` would be allocated, grown and
//! then copied again into the `Arc`; with the shared stack the only
//! allocation per container is its final storage.

use std::cell::Cell;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::keys::KeyCache;
use crate::number::JsInt;
use crate::tree::{JsArray, JsObj, JsValue};

// ---- Serialize --------------------------------------------------------------

impl Serialize for JsValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            JsValue::Null => s.serialize_unit(),
            JsValue::Bool(b) => s.serialize_bool(*b),
            JsValue::Int(i) => i.serialize(s),
            JsValue::Float(f) => s.serialize_f64(*f),
            JsValue::Str(v) => s.serialize_str(v),
            JsValue::Array(a) => a.serialize(s),
            JsValue::Object(o) => o.serialize(s),
        }
    }
}

impl Serialize for JsArray {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for v in self {
            seq.serialize_element(v)?;
        }
        seq.end()
    }
}

impl Serialize for JsObj {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

// ---- Deserialize ------------------------------------------------------------

#[derive(Default)]
pub(crate) struct Stacks {
    pub(crate) values: Vec<JsValue>,
    pub(crate) members: Vec<(Arc<str>, JsValue)>,
    /// The keys met lately (in this parse, or an earlier one on this
    /// thread: see [`Stacks::with`]).
    pub(crate) keys: KeyCache,
}

/// The most elements the stacks kept between parses may hold room for:
/// a large document's room is let go when its parse ends.
const KEPT_ROOM: usize = 1024;

impl Stacks {
    /// Runs `parse` with this thread's stacks, kept from one parse to the
    /// next, or with new ones when they are taken (a parse within a parse,
    /// by a deserializer of the caller's; a parse that panicked) or gone
    /// (the thread ending). Why: a small document's parse spent much of
    /// its time growing its stacks and allocating its keys anew; kept, the
    /// stacks have their room and the keys seen lately are shared (they
    /// are immutable: sharing one between documents changes nothing).
    pub(crate) fn with<R>(parse: impl FnOnce(&mut Stacks) -> R) -> R {
        thread_local! {
            static KEPT: Cell<Option<Box<Stacks>>> = const { Cell::new(None) };
        }
        let mut stacks = KEPT.try_with(Cell::take).ok().flatten().unwrap_or_default();
        let parsed = parse(&mut stacks);
        stacks.tidy();
        let _ = KEPT.try_with(|kept| kept.set(Some(stacks)));
        parsed
    }

    /// Empty, and no larger than [`KEPT_ROOM`]: what a failed parse left
    /// is dropped, and a large parse's room let go.
    fn tidy(&mut self) {
        self.values.clear();
        self.members.clear();
        if self.values.capacity() > KEPT_ROOM {
            self.values = Vec::new();
        }
        if self.members.capacity() > KEPT_ROOM {
            self.members = Vec::new();
        }
    }
}

pub(crate) struct ValueSeed<'a>(pub(crate) &'a mut Stacks);

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = JsValue;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<JsValue, D::Error> {
        d.deserialize_any(ValueVisitor(self.0))
    }
}

pub(crate) struct ValueVisitor<'a>(pub(crate) &'a mut Stacks);

impl<'de> Visitor<'de> for ValueVisitor<'_> {
    type Value = JsValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    #[inline]
    fn visit_unit<E>(self) -> Result<JsValue, E> {
        Ok(JsValue::Null)
    }

    #[inline]
    fn visit_none<E>(self) -> Result<JsValue, E> {
        Ok(JsValue::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<JsValue, D::Error> {
        ValueSeed(self.0).deserialize(d)
    }

    #[inline]
    fn visit_bool<E>(self, b: bool) -> Result<JsValue, E> {
        Ok(JsValue::Bool(b))
    }

    #[inline]
    fn visit_i64<E>(self, v: i64) -> Result<JsValue, E> {
        Ok(JsValue::Int(JsInt::from(v)))
    }

    #[inline]
    fn visit_u64<E>(self, v: u64) -> Result<JsValue, E> {
        Ok(JsValue::Int(JsInt::from(v)))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<JsValue, E> {
        JsValue::try_from(v).map_err(E::custom)
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<JsValue, E> {
        JsValue::try_from(v).map_err(E::custom)
    }

    #[inline]
    fn visit_f64<E>(self, v: f64) -> Result<JsValue, E> {
        Ok(JsValue::Float(v))
    }

    #[inline]
    fn visit_str<E>(self, v: &str) -> Result<JsValue, E> {
        Ok(JsValue::Str(Arc::from(v)))
    }

    fn visit_string<E>(self, v: String) -> Result<JsValue, E> {
        Ok(JsValue::Str(Arc::from(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsValue, A::Error> {
        let stacks = self.0;
        // Most arrays in real documents are short (coordinates, pairs): up
        // to four elements go from locals straight into their allocation.
        let Some(a) = seq.next_element_seed(ValueSeed(stacks))? else {
            return Ok(JsValue::Array(JsArray::new()));
        };
        let Some(b) = seq.next_element_seed(ValueSeed(stacks))? else {
            return Ok(JsValue::Array(JsArray::from_array([a])));
        };
        let Some(c) = seq.next_element_seed(ValueSeed(stacks))? else {
            return Ok(JsValue::Array(JsArray::from_array([a, b])));
        };
        let Some(d) = seq.next_element_seed(ValueSeed(stacks))? else {
            return Ok(JsValue::Array(JsArray::from_array([a, b, c])));
        };
        let Some(e) = seq.next_element_seed(ValueSeed(stacks))? else {
            return Ok(JsValue::Array(JsArray::from_array([a, b, c, d])));
        };
        let start = stacks.values.len();
        stacks.values.extend([a, b, c, d, e]);
        while let Some(v) = seq.next_element_seed(ValueSeed(stacks))? {
            stacks.values.push(v);
        }
        Ok(JsValue::Array(JsArray::from_exact(
            stacks.values.drain(start..),
        )))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsValue, A::Error> {
        let stacks = self.0;
        let start = stacks.members.len();
        while let Some(k) = map.next_key_seed(KeySeed(&mut stacks.keys))? {
            let v = map.next_value_seed(ValueSeed(stacks))?;
            stacks.members.push((k, v));
        }
        Ok(JsValue::Object(JsObj::from_members(
            &mut stacks.members,
            start,
        )))
    }
}

/// A key, from the parse's [`KeyCache`] when it is text.
pub(crate) struct KeySeed<'a>(pub(crate) &'a mut KeyCache);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Arc<str>;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Arc<str>, D::Error> {
        d.deserialize_str(self)
    }
}

/// Object keys: strings; integers and booleans (from formats that allow
/// them as keys) are written in decimal / as `true`/`false`.
impl Visitor<'_> for KeySeed<'_> {
    type Value = Arc<str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    #[inline]
    fn visit_str<E>(self, v: &str) -> Result<Arc<str>, E> {
        Ok(self.0.get(v))
    }

    fn visit_string<E>(self, v: String) -> Result<Arc<str>, E> {
        Ok(self.0.get(&v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Arc<str>, E> {
        Ok(Arc::from(v.to_string()))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Arc<str>, E> {
        Ok(Arc::from(v.to_string()))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Arc<str>, E> {
        Ok(Arc::from(if v { "true" } else { "false" }))
    }
}

impl<'de> Deserialize<'de> for JsValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<JsValue, D::Error> {
        Stacks::with(|stacks| ValueSeed(stacks).deserialize(d))
    }
}

impl<'de> Deserialize<'de> for JsObj {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<JsObj, D::Error> {
        struct ObjVisitor;
        impl<'de> Visitor<'de> for ObjVisitor {
            type Value = JsObj;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<JsObj, A::Error> {
                match Stacks::with(|stacks| ValueVisitor(stacks).visit_map(map))? {
                    JsValue::Object(o) => Ok(o),
                    _ => unreachable!("visit_map builds an object"),
                }
            }
        }
        d.deserialize_map(ObjVisitor)
    }
}

impl<'de> Deserialize<'de> for JsArray {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<JsArray, D::Error> {
        struct ArrVisitor;
        impl<'de> Visitor<'de> for ArrVisitor {
            type Value = JsArray;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<JsArray, A::Error> {
                match Stacks::with(|stacks| ValueVisitor(stacks).visit_seq(seq))? {
                    JsValue::Array(a) => Ok(a),
                    _ => unreachable!("visit_seq builds an array"),
                }
            }
        }
        d.deserialize_seq(ArrVisitor)
    }
}

// ---- parsing ------------------------------------------------------------------

/// JSON text that could not be parsed, with where the problem is.
///
/// # Examples
///
/// ```
/// use codecbus_json::JsValue;
///
/// let err = JsValue::parse("{\n  \"a\": [1, 2,]\n}").unwrap_err();
/// assert_eq!((err.line(), err.column()), (2, 14));
/// assert!(err.to_string().contains("line 2 column 14"), "{err}");
/// ```
#[derive(Debug, thiserror::Error)]
#[error("invalid JSON: {source}")]
pub struct JsParseError {
    #[source]
    source: serde_json::Error,
}

impl JsParseError {
    /// The 1-based line of the problem.
    pub fn line(&self) -> usize {
        self.source.line()
    }

    /// The 1-based column (in bytes) of the problem.
    pub fn column(&self) -> usize {
        self.source.column()
    }

    /// Whether the text ended before the value was complete (more input
    /// could make it valid).
    pub fn is_eof(&self) -> bool {
        self.source.is_eof()
    }

    /// Whether the text is not JSON at all (as opposed to JSON of the wrong
    /// shape, e.g. an array where an object was asked for).
    pub fn is_syntax(&self) -> bool {
        self.source.is_syntax()
    }
}

impl From<serde_json::Error> for JsParseError {
    fn from(source: serde_json::Error) -> Self {
        JsParseError { source }
    }
}

macro_rules! parse_methods {
    ($ty:ident, $what:literal) => {
        impl $ty {
            #[doc = concat!("Parses JSON text that must hold ", $what, ".")]
            ///
            /// Duplicate keys in an object keep the last value, as
            /// `serde_json` does. Nesting is limited to 127 levels
            /// (serde_json's recursion limit; MessagePack decoding allows 128 by
            /// default, so the text of the deepest such value is refused).
            ///
            /// # Errors
            ///
            /// [`JsParseError`] with the line and column of the problem.
            pub fn parse(text: &str) -> Result<$ty, JsParseError> {
                Ok(serde_json::from_str(text)?)
            }

            #[doc = concat!("Parses UTF-8 JSON bytes that must hold ", $what, ".")]
            ///
            /// # Errors
            ///
            /// [`JsParseError`] with the line and column of the problem.
            pub fn parse_slice(bytes: &[u8]) -> Result<$ty, JsParseError> {
                Ok(serde_json::from_slice(bytes)?)
            }
        }

        impl FromStr for $ty {
            type Err = JsParseError;
            fn from_str(s: &str) -> Result<$ty, JsParseError> {
                $ty::parse(s)
            }
        }
    };
}

parse_methods!(JsValue, "any value");
parse_methods!(JsObj, "an object");
parse_methods!(JsArray, "an array");

// ---- printing -----------------------------------------------------------------

/// Prints into one buffer, then hands the formatter a single string. Why:
/// checking and forwarding each tiny token through a `fmt::Formatter` was
/// markedly slower than one UTF-8 check of the whole text.
fn print<T: Serialize + Compact>(value: &T, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let bytes = if f.alternate() {
        serde_json::to_vec_pretty(value).map_err(|_| fmt::Error)?
    } else {
        let mut out = Vec::with_capacity(128);
        value.write_compact(&mut out);
        out
    };
    f.write_str(std::str::from_utf8(&bytes).map_err(|_| fmt::Error)?)
}

/// Compact JSON text written straight into a buffer: the bytes
/// `serde_json` prints for the value (its escapes, its integers, its
/// floats, `null` for a float that is not finite), without a serializer
/// in between. Why: the serializer's layers (a map or a sequence, its
/// keys, a writer trait, a formatter) took about half the printing time
/// of small objects, and a string with nothing to escape, the usual one,
/// is checked eight bytes at a time and copied whole.
trait Compact {
    fn write_compact(&self, out: &mut Vec<u8>);
}

impl Compact for JsValue {
    fn write_compact(&self, out: &mut Vec<u8>) {
        match self {
            JsValue::Null => out.extend_from_slice(b"null"),
            JsValue::Bool(true) => out.extend_from_slice(b"true"),
            JsValue::Bool(false) => out.extend_from_slice(b"false"),
            JsValue::Int(i) => i.write_decimal(out),
            // Rare enough to go through `serde_json`, whose float printing
            // is the reference.
            JsValue::Float(f) => {
                let _ = serde_json::to_writer(&mut *out, f);
            }
            JsValue::Str(s) => write_str(s, out),
            JsValue::Array(a) => a.write_compact(out),
            JsValue::Object(o) => o.write_compact(out),
        }
    }
}

impl Compact for JsArray {
    fn write_compact(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        let mut first = true;
        for v in self {
            if !first {
                out.push(b',');
            }
            first = false;
            v.write_compact(out);
        }
        out.push(b']');
    }
}

impl Compact for JsObj {
    fn write_compact(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        let mut first = true;
        for (k, v) in self {
            if !first {
                out.push(b',');
            }
            first = false;
            write_str(k, out);
            out.push(b':');
            v.write_compact(out);
        }
        out.push(b'}');
    }
}

/// A string as JSON text: quoted, `"` and `\` escaped, control characters
/// as `\b`, `\t`, `\n`, `\f`, `\r` or `\u00xx` (lowercase), the rest as
/// it is, as `serde_json` writes it.
fn write_str(s: &str, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    if needs_no_escape(bytes) {
        out.extend_from_slice(bytes);
    } else {
        let mut run = 0;
        for (i, &byte) in bytes.iter().enumerate() {
            let escape = match byte {
                b'"' => b'"',
                b'\\' => b'\\',
                0x08 => b'b',
                0x09 => b't',
                0x0a => b'n',
                0x0c => b'f',
                0x0d => b'r',
                0..0x20 => b'u',
                _ => continue,
            };
            out.extend_from_slice(&bytes[run..i]);
            run = i + 1;
            if escape == b'u' {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(byte >> 4)],
                    HEX[usize::from(byte & 0xf)],
                ]);
            } else {
                out.extend_from_slice(&[b'\\', escape]);
            }
        }
        out.extend_from_slice(&bytes[run..]);
    }
    out.push(b'"');
}

/// Whether no byte of `bytes` is escaped in JSON text (below 0x20, `"` or
/// `\`): eight bytes at a time, each test exact for the word (bytes of
/// 0x80 and above, those of multi-byte characters, never match).
fn needs_no_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let clean = |word: u64| {
        // A byte below `n` (n <= 0x80), a zero byte after xor with `b`.
        let below = |n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS;
        let equal = |b: u8| {
            let x = word ^ (ONES * u64::from(b));
            x.wrapping_sub(ONES) & !x & HIGHS
        };
        below(0x20) | equal(b'"') | equal(b'\\') == 0
    };
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        if !clean(u64::from_ne_bytes(word)) {
            return false;
        }
    }
    chunks
        .remainder()
        .iter()
        .all(|&b| b >= 0x20 && b != b'"' && b != b'\\')
}

macro_rules! print_impls {
    ($($ty:ident),*) => {$(
        /// Compact JSON text; `{:#}` prints it indented.
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                print(self, f)
            }
        }

        /// The JSON text, as `Display` prints it (integers and floats stay
        /// distinct: `1` and `1.0`).
        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                print(self, f)
            }
        }

        impl $ty {
            /// The JSON text, indented by two spaces.
            pub fn to_pretty_string(&self) -> String {
                format!("{self:#}")
            }

            /// The compact JSON text as UTF-8 bytes.
            pub fn to_json_vec(&self) -> Vec<u8> {
                let mut out = Vec::with_capacity(128);
                self.write_compact(&mut out);
                out
            }
        }
    )*};
}

print_impls!(JsValue, JsObj, JsArray);

// ---- serde_json::Value ----------------------------------------------------------

impl From<&serde_json::Value> for JsValue {
    fn from(v: &serde_json::Value) -> Self {
        use serde_json::Value;
        match v {
            Value::Null => JsValue::Null,
            Value::Bool(b) => JsValue::Bool(*b),
            Value::Number(n) => number_from_serde(n),
            Value::String(s) => JsValue::Str(Arc::from(s.as_str())),
            Value::Array(a) => JsValue::Array(JsArray::from_exact(a.iter().map(JsValue::from))),
            Value::Object(o) => JsValue::Object(obj_from_serde(o)),
        }
    }
}

impl From<serde_json::Value> for JsValue {
    fn from(v: serde_json::Value) -> Self {
        use serde_json::Value;
        match v {
            Value::Null => JsValue::Null,
            Value::Bool(b) => JsValue::Bool(b),
            Value::Number(n) => number_from_serde(&n),
            Value::String(s) => JsValue::Str(Arc::from(s)),
            Value::Array(a) => {
                JsValue::Array(JsArray::from_exact(a.into_iter().map(JsValue::from)))
            }
            Value::Object(o) => {
                let mut members: Vec<_> = o
                    .into_iter()
                    .map(|(k, v)| (Arc::from(k), JsValue::from(v)))
                    .collect();
                JsValue::Object(JsObj::from_members(&mut members, 0))
            }
        }
    }
}

impl From<serde_json::Map<String, serde_json::Value>> for JsObj {
    fn from(o: serde_json::Map<String, serde_json::Value>) -> Self {
        let mut members: Vec<_> = o
            .into_iter()
            .map(|(k, v)| (Arc::from(k), JsValue::from(v)))
            .collect();
        JsObj::from_members(&mut members, 0)
    }
}

fn obj_from_serde(o: &serde_json::Map<String, serde_json::Value>) -> JsObj {
    let mut members: Vec<_> = o
        .iter()
        .map(|(k, v)| (Arc::from(k.as_str()), JsValue::from(v)))
        .collect();
    JsObj::from_members(&mut members, 0)
}

fn number_from_serde(n: &serde_json::Number) -> JsValue {
    if let Some(u) = n.as_u64() {
        JsValue::from(u)
    } else if let Some(i) = n.as_i64() {
        JsValue::from(i)
    } else {
        // Without serde_json's `arbitrary_precision` every other number is
        // an f64; with it, out-of-range integers round like JSON parsers do.
        JsValue::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// Non-finite floats become `null` (a `serde_json::Number` cannot hold them).
impl From<&JsValue> for serde_json::Value {
    fn from(v: &JsValue) -> Self {
        use serde_json::Value;
        match v {
            JsValue::Null => Value::Null,
            JsValue::Bool(b) => Value::Bool(*b),
            JsValue::Int(i) => Value::Number(match i.split() {
                Ok(u) => u.into(),
                Err(n) => n.into(),
            }),
            JsValue::Float(f) => {
                serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
            }
            JsValue::Str(s) => Value::String(s.to_string()),
            JsValue::Array(a) => Value::Array(a.iter().map(Value::from).collect()),
            JsValue::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, v)| (k.to_owned(), Value::from(v)))
                    .collect(),
            ),
        }
    }
}

/// Non-finite floats become `null` (a `serde_json::Number` cannot hold them).
impl From<JsValue> for serde_json::Value {
    fn from(v: JsValue) -> Self {
        serde_json::Value::from(&v)
    }
}

impl From<&JsObj> for serde_json::Value {
    fn from(o: &JsObj) -> Self {
        serde_json::Value::Object(
            o.iter()
                .map(|(k, v)| (k.to_owned(), serde_json::Value::from(v)))
                .collect(),
        )
    }
}

impl From<JsObj> for serde_json::Value {
    fn from(o: JsObj) -> Self {
        serde_json::Value::from(&o)
    }
}

impl From<&JsArray> for serde_json::Value {
    fn from(a: &JsArray) -> Self {
        serde_json::Value::Array(a.iter().map(serde_json::Value::from).collect())
    }
}

impl From<JsArray> for serde_json::Value {
    fn from(a: JsArray) -> Self {
        serde_json::Value::from(&a)
    }
}

impl PartialEq<serde_json::Value> for JsValue {
    /// JSON equality with a `serde_json::Value` (numbers by value).
    fn eq(&self, other: &serde_json::Value) -> bool {
        eq_serde(self, other)
    }
}

fn eq_serde(v: &JsValue, s: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (v, s) {
        (JsValue::Null, Value::Null) => true,
        (JsValue::Bool(a), Value::Bool(b)) => a == b,
        (JsValue::Int(_) | JsValue::Float(_), Value::Number(n)) => {
            if let Some(u) = n.as_u64() {
                *v == u
            } else if let Some(i) = n.as_i64() {
                *v == i
            } else {
                n.as_f64().is_some_and(|f| *v == f)
            }
        }
        (JsValue::Str(a), Value::String(b)) => **a == **b,
        (JsValue::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| eq_serde(x, y))
        }
        (JsValue::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && b.iter()
                    .all(|(k, y)| a.get(k).is_some_and(|x| eq_serde(x, y)))
        }
        _ => false,
    }
}
