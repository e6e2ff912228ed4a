//! MessagePack codecs for `JsValue`, `JsObj` and `JsArray`, and their
//! registrations.
//!
//! Contract: the mapping is nil, bool, integers in their smallest form,
//! float 64, str, array, map (keys in sorted order, so equal structures
//! encode to equal bytes). Decoding accepts any integer or float form and
//! reads map keys that are integers as their decimal text; any other key
//! type, and `bin` or extension values, are type errors. Every container
//! enters one depth level, its declared length is checked against the bytes
//! left before anything is reserved, and its storage is charged to the
//! allocation budget.
#![forbid(unsafe_code)]

use std::sync::Arc;

use codecbus_core::__private::{enter, inventory, leave};
use codecbus_core::shape::{Definitions, Shape};
use codecbus_core::{
    CodecRegistration, Decode, DecodeError, Encode, EncodeError, Immutable, Int, MessageCodec,
    MessageType, Reader, ValueKind, Writer,
};

use crate::keys::KeyCache;
use crate::number::JsInt;
use crate::tree::{JsArray, JsObj, JsValue};

/// `deep_copy` as `Clone`: the values are immutable, a clone is a copy.
macro_rules! copy_by_clone {
    () => {
        #[inline]
        fn deep_copy(value: &Self) -> ::core::option::Option<Self> {
            ::core::option::Option::Some(::core::clone::Clone::clone(value))
        }
    };
}

pub(crate) fn encode_value(v: &JsValue, w: &mut Writer) -> Result<(), EncodeError> {
    match v {
        JsValue::Null => w.write_nil(),
        JsValue::Bool(b) => w.write_bool(*b),
        JsValue::Int(i) => match i.split() {
            Ok(u) => w.write_u64(u),
            Err(n) => w.write_i64(n),
        },
        JsValue::Float(f) => w.write_f64(*f),
        JsValue::Str(s) => w.write_str(s)?,
        JsValue::Array(a) => encode_array(a, w)?,
        JsValue::Object(o) => encode_object(o, w)?,
    }
    Ok(())
}

fn encode_array(a: &JsArray, w: &mut Writer) -> Result<(), EncodeError> {
    w.write_array_len(a.len())?;
    a.iter().try_for_each(|v| encode_value(v, w))
}

fn encode_object(o: &JsObj, w: &mut Writer) -> Result<(), EncodeError> {
    w.write_map_len(o.len())?;
    for (k, v) in o {
        w.write_str(k)?;
        encode_value(v, w)?;
    }
    Ok(())
}

/// Scratch stack shared by all objects of one decode (see `text.rs` for
/// why); arrays know their length and need none. And the keys met in this
/// decode, so that the objects of an array, whose keys repeat, share one
/// allocation of each.
#[derive(Default)]
pub(crate) struct Stacks {
    pub(crate) members: Vec<(Arc<str>, JsValue)>,
    keys: KeyCache,
}

/// What a value of the wire type `kind` is called in our errors.
pub(crate) const EXPECTED_VALUE: &str = "a JSON value (nil, boolean, number, string, array or map)";

pub(crate) fn decode_value(r: &mut Reader<'_>, st: &mut Stacks) -> Result<JsValue, DecodeError> {
    let at = r.position();
    let marker = r.peek()?;
    Ok(match ValueKind::of(marker) {
        ValueKind::Nil => {
            r.read_nil()?;
            JsValue::Null
        }
        ValueKind::Bool => JsValue::Bool(r.read_bool()?),
        ValueKind::Int => JsValue::Int(match r.read_int()? {
            Int::Unsigned(u) => JsInt::from(u),
            Int::Negative(n) => JsInt::from(n),
        }),
        ValueKind::Float => JsValue::Float(r.read_f64()?),
        ValueKind::Str => {
            let s = r.read_str()?;
            r.charge_alloc(s.len())?;
            JsValue::Str(Arc::from(s))
        }
        ValueKind::Array => JsValue::Array(decode_array(r, st)?),
        ValueKind::Map => JsValue::Object(decode_object(r, st)?),
        _ => return Err(r.mismatch(EXPECTED_VALUE, marker, at)),
    })
}

fn decode_array(r: &mut Reader<'_>, st: &mut Stacks) -> Result<JsArray, DecodeError> {
    enter(r)?;
    let len = r.read_array_len()?;
    r.charge_alloc(len.saturating_mul(size_of::<JsValue>()))?;
    // The length is known: build the storage straight from an exact-size
    // iterator (one allocation, elements moved once). After an error the
    // remaining slots are filled with null without reading, and the error
    // is returned.
    let mut failed = None;
    let array = JsArray::from_exact((0..len).map(|i| {
        if failed.is_some() {
            return JsValue::Null;
        }
        decode_value(r, st).unwrap_or_else(|e| {
            failed = Some(e.in_index(i));
            JsValue::Null
        })
    }));
    match failed {
        Some(e) => Err(e),
        None => {
            leave(r);
            Ok(array)
        }
    }
}

fn decode_object(r: &mut Reader<'_>, st: &mut Stacks) -> Result<JsObj, DecodeError> {
    enter(r)?;
    let len = r.read_map_len()?;
    r.charge_alloc(len.saturating_mul(size_of::<(Arc<str>, JsValue)>()))?;
    let start = st.members.len();
    for _ in 0..len {
        let key = decode_key(r, st)?;
        let v = decode_value(r, st).map_err(|e| e.in_key(&*key))?;
        st.members.push((key, v));
    }
    leave(r);
    Ok(JsObj::from_members(&mut st.members, start))
}

pub(crate) fn decode_key(r: &mut Reader<'_>, st: &mut Stacks) -> Result<Arc<str>, DecodeError> {
    let at = r.position();
    let marker = r.peek()?;
    match ValueKind::of(marker) {
        ValueKind::Str => {
            let s = r.read_str()?;
            r.charge_alloc(s.len())?;
            Ok(st.keys.get(s))
        }
        ValueKind::Int => {
            let text = match r.read_int()? {
                Int::Unsigned(u) => u.to_string(),
                Int::Negative(n) => n.to_string(),
            };
            r.charge_alloc(text.len())?;
            Ok(Arc::from(text))
        }
        _ => Err(r.mismatch("a string or integer map key", marker, at)),
    }
}

/// `null`, booleans, integers (smallest form), floats (`float 64`),
/// strings, arrays and maps. Integer map keys decode as their decimal text;
/// other non-string keys, `bin` and extension values are errors.
///
/// # Examples
///
/// ```
/// use codecbus_json::JsValue;
/// use codecbus_core::{from_slice, to_vec};
/// use codecbus_json::jsobj;
///
/// let v = JsValue::from(jsobj! { "b": [1, -1, 1.5], "a": null });
/// let bytes = to_vec(&v).unwrap();
/// assert_eq!(bytes, b"\x82\xa1a\xc0\xa1b\x93\x01\xff\xcb\x3f\xf8\0\0\0\0\0\0");
/// assert_eq!(from_slice::<JsValue>(&bytes).unwrap(), v);
/// ```
impl Encode for JsValue {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        encode_value(self, w)
    }
}

impl<'de> Decode<'de> for JsValue {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        decode_value(r, &mut Stacks::default())
    }
}

impl MessageType for JsValue {}
/// Of shape [`Shape::Json`].
impl MessageCodec for JsValue {
    const IMMUTABLE: bool = true;

    copy_by_clone!();
    fn shape(_: &mut Definitions) -> Shape {
        Shape::Json
    }
    #[inline]
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        Arc::clone(body)
    }
}

/// A MessagePack map; see [`JsValue`'s codec](JsValue#impl-MessageCodec-for-JsValue).
impl Encode for JsObj {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        encode_object(self, w)
    }
}

impl<'de> Decode<'de> for JsObj {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let at = r.position();
        match r.peek()? {
            m if ValueKind::of(m) == ValueKind::Map => decode_object(r, &mut Stacks::default()),
            m => Err(r.mismatch("map", m, at)),
        }
    }
}

impl MessageType for JsObj {}
/// Of shape [`Shape::Map`] from strings to [`Shape::Json`] (integer keys
/// are read too, as their decimal text).
impl MessageCodec for JsObj {
    const IMMUTABLE: bool = true;

    copy_by_clone!();
    fn shape(_: &mut Definitions) -> Shape {
        Shape::Map(Box::new(Shape::Str), Box::new(Shape::Json))
    }
    #[inline]
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        Arc::clone(body)
    }
}

/// A MessagePack array; see [`JsValue`'s codec](JsValue#impl-MessageCodec-for-JsValue).
impl Encode for JsArray {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        encode_array(self, w)
    }
}

impl<'de> Decode<'de> for JsArray {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let at = r.position();
        match r.peek()? {
            m if ValueKind::of(m) == ValueKind::Array => decode_array(r, &mut Stacks::default()),
            m => Err(r.mismatch("array", m, at)),
        }
    }
}

impl MessageType for JsArray {}
/// Of shape [`Shape::Array`] of [`Shape::Json`].
impl MessageCodec for JsArray {
    const IMMUTABLE: bool = true;

    copy_by_clone!();
    fn shape(_: &mut Definitions) -> Shape {
        Shape::Array(Box::new(Shape::Json))
    }
    #[inline]
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        Arc::clone(body)
    }
}

impl Immutable for JsValue {}
impl Immutable for JsObj {}
impl Immutable for JsArray {}
impl Immutable for JsInt {}

inventory::submit! { CodecRegistration::of::<JsObj>("json-obj-value") }
inventory::submit! { CodecRegistration::of::<JsArray>("json-array-value") }
inventory::submit! { CodecRegistration::of::<JsValue>("json-value") }
