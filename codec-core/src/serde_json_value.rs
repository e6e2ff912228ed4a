//! The MessagePack codec for `serde_json::Value`: the mutable counterpart
//! of codecbus-json's `JsValue` (Vert.x `JsonObject` semantics),
//! deep-copied on every local delivery, with the same wire mapping. It lives
//! here because both the trait and `serde_json::Value` are foreign to
//! codecbus-json.
//!
//! Contract: bytes are those of `JsValue` for the same JSON (maps in the
//! `serde_json::Map`'s order, which is sorted unless serde_json's
//! `preserve_order` feature is on). Non-finite floats, which a
//! `serde_json::Number` cannot hold, decode as `null`.
#![forbid(unsafe_code)]

use std::sync::Arc;

use serde_json::{Map, Number, Value};

use crate::codec::{Decode, Encode, MessageCodec, MessageType};
use crate::error::{DecodeError, EncodeError};
use crate::msgpack::kind::{Int, ValueKind};
use crate::msgpack::read::Reader;
use crate::msgpack::write::Writer;
use crate::registry::CodecRegistration;
use crate::shape::Shape;

fn encode_value(v: &Value, w: &mut Writer) -> Result<(), EncodeError> {
    match v {
        Value::Null => w.write_nil(),
        Value::Bool(b) => w.write_bool(*b),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                w.write_u64(u);
            } else if let Some(i) = n.as_i64() {
                w.write_i64(i);
            } else {
                w.write_f64(n.as_f64().unwrap_or(f64::NAN));
            }
        }
        Value::String(s) => w.write_str(s)?,
        Value::Array(a) => {
            w.write_array_len(a.len())?;
            for v in a {
                encode_value(v, w)?;
            }
        }
        Value::Object(o) => {
            w.write_map_len(o.len())?;
            for (k, v) in o {
                w.write_str(k)?;
                encode_value(v, w)?;
            }
        }
    }
    Ok(())
}

const EXPECTED_VALUE: &str = "a JSON value (nil, boolean, number, string, array or map)";

fn decode_value(r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    let at = r.position();
    let marker = r.peek()?;
    Ok(match ValueKind::of(marker) {
        ValueKind::Nil => {
            r.read_nil()?;
            Value::Null
        }
        ValueKind::Bool => Value::Bool(r.read_bool()?),
        ValueKind::Int => Value::Number(match r.read_int()? {
            Int::Unsigned(u) => Number::from(u),
            Int::Negative(n) => Number::from(n),
        }),
        ValueKind::Float => Number::from_f64(r.read_f64()?).map_or(Value::Null, Value::Number),
        ValueKind::Str => {
            let s = r.read_str()?;
            r.charge_alloc(s.len())?;
            Value::String(s.to_owned())
        }
        ValueKind::Array => {
            r.enter()?;
            let len = r.read_array_len()?;
            r.charge_alloc(len.saturating_mul(size_of::<Value>()))?;
            let mut out = Vec::with_capacity(len);
            for i in 0..len {
                out.push(decode_value(r).map_err(|e| e.in_index(i))?);
            }
            r.leave();
            Value::Array(out)
        }
        ValueKind::Map => {
            r.enter()?;
            let len = r.read_map_len()?;
            r.charge_alloc(len.saturating_mul(size_of::<(String, Value)>()))?;
            let mut out = Map::new();
            for _ in 0..len {
                let key = decode_key(r)?;
                let v = decode_value(r).map_err(|e| e.in_key(key.as_str()))?;
                out.insert(key, v);
            }
            r.leave();
            Value::Object(out)
        }
        _ => return Err(r.mismatch(EXPECTED_VALUE, marker, at)),
    })
}

fn decode_key(r: &mut Reader<'_>) -> Result<String, DecodeError> {
    let at = r.position();
    let marker = r.peek()?;
    let key = match ValueKind::of(marker) {
        ValueKind::Str => r.read_str()?.to_owned(),
        ValueKind::Int => match r.read_int()? {
            Int::Unsigned(u) => u.to_string(),
            Int::Negative(n) => n.to_string(),
        },
        _ => return Err(r.mismatch("a string or integer map key", marker, at)),
    };
    r.charge_alloc(key.len())?;
    Ok(key)
}

/// The same MessagePack mapping as the codec of codecbus-json's `JsValue`;
/// local delivery hands every consumer its own deep copy
/// (`IMMUTABLE = false`). Non-finite floats decode as `null`.
///
/// # Examples
///
/// ```
/// use codecbus_core::{from_slice, to_vec, MessageCodec};
/// use serde_json::json;
/// use std::sync::Arc;
///
/// let v = json!({ "b": [1, -1, 1.5], "a": null });
/// let bytes = to_vec(&v).unwrap();
/// assert_eq!(from_slice::<serde_json::Value>(&bytes).unwrap(), v);
///
/// let body = Arc::new(v);
/// let copy = <serde_json::Value as MessageCodec>::transform(&body);
/// assert!(!Arc::ptr_eq(&body, &copy));
/// assert_eq!(copy, body);
/// ```
impl Encode for Value {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        encode_value(self, w)
    }
}

impl<'de> Decode<'de> for Value {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        decode_value(r)
    }
}

impl MessageType for Value {}
impl MessageCodec for Value {
    const IMMUTABLE: bool = false;
    crate::impls::describe!(Shape::Json);

    crate::impls::copy_by_clone!();
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        Arc::new(Value::clone(body))
    }
}

inventory::submit! { CodecRegistration::of::<Value>("serde-json-value") }
