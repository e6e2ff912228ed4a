//! Bodies at the edge: MessagePack to JSON and back, without knowing the
//! type (the type's own codec reads or writes the MessagePack).
//!
//! | MessagePack | JSON |
//! |---|---|
//! | nil, bool, str | null, boolean, string |
//! | integer, float | number (a float that is not finite: null) |
//! | array | array |
//! | map | object; integer keys as their decimal text, other key types refused |
//! | bin | string, base64 (standard alphabet, padded) |
//! | ext | `{"$ext": type, "$data": "<base64>"}` |
//!
//! From JSON: null, booleans, strings, arrays and objects as themselves;
//! a number as an unsigned integer if it is one, else a signed one, else a
//! float 64; an object of exactly the two members `$ext` (an integer
//! -128..=127) and `$data` (base64) as an extension value. A JSON string
//! is always a MessagePack string: a byte-string field cannot be filled
//! from JSON.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::any::type_name;

use codecbus_core::{DecodeError, EncodeError, Int, MessageCodec, Reader, ValueKind, Writer};
use serde_json::{Map, Number, Value};

/// How deep a body may nest (arrays and maps) on its way through.
pub(crate) const MAX_DEPTH: usize = 128;

/// Why a body could not be carried between JSON and MessagePack.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TranscodeError {
    /// The MessagePack is malformed or ends early.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A value too large for MessagePack.
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// Something JSON cannot say.
    #[error("{0}")]
    Unsupported(String),
}

/// The JSON of one MessagePack value, the whole of `bytes`.
pub(crate) fn to_json(bytes: &[u8]) -> Result<Value, TranscodeError> {
    let mut r = Reader::new(bytes);
    let value = read_value(&mut r, 0)?;
    if !r.is_empty() {
        return Err(TranscodeError::Unsupported(format!(
            "{} bytes after the value",
            r.remaining()
        )));
    }
    Ok(value)
}

fn read_value(r: &mut Reader<'_>, depth: usize) -> Result<Value, TranscodeError> {
    if depth > MAX_DEPTH {
        return Err(TranscodeError::Unsupported(format!(
            "nested deeper than {MAX_DEPTH} levels"
        )));
    }
    Ok(match r.peek_kind()? {
        ValueKind::Nil => {
            r.read_nil()?;
            Value::Null
        }
        ValueKind::Bool => Value::Bool(r.read_bool()?),
        ValueKind::Int => match r.read_int()? {
            Int::Unsigned(u) => Value::Number(u.into()),
            Int::Negative(i) => Value::Number(i.into()),
        },
        ValueKind::Float => Number::from_f64(r.read_f64()?).map_or(Value::Null, Value::Number),
        ValueKind::Str => Value::String(r.read_str()?.to_owned()),
        ValueKind::Bin => Value::String(BASE64.encode(r.read_bin()?)),
        ValueKind::Array => {
            let len = r.read_array_len()?;
            let mut items = Vec::with_capacity(len.min(r.remaining()));
            for _ in 0..len {
                items.push(read_value(r, depth + 1)?);
            }
            Value::Array(items)
        }
        ValueKind::Map => {
            let len = r.read_map_len()?;
            let mut map = Map::new();
            for _ in 0..len {
                let key = read_key(r)?;
                let value = read_value(r, depth + 1)?;
                map.insert(key, value);
            }
            Value::Object(map)
        }
        ValueKind::Ext => {
            let (kind, data) = r.read_ext()?;
            let mut map = Map::new();
            map.insert("$ext".into(), Value::Number(i64::from(kind).into()));
            map.insert("$data".into(), Value::String(BASE64.encode(data)));
            Value::Object(map)
        }
        other => {
            return Err(TranscodeError::Unsupported(format!(
                "a value of kind {other:?} at offset {}",
                r.position()
            )));
        }
    })
}

fn read_key(r: &mut Reader<'_>) -> Result<String, TranscodeError> {
    match r.peek_kind()? {
        ValueKind::Str => Ok(r.read_str()?.to_owned()),
        ValueKind::Int => Ok(match r.read_int()? {
            Int::Unsigned(u) => u.to_string(),
            Int::Negative(i) => i.to_string(),
        }),
        other => Err(TranscodeError::Unsupported(format!(
            "a map key of kind {other:?} at offset {} (JSON keys are strings)",
            r.position()
        ))),
    }
}

/// The MessagePack of a JSON value.
pub(crate) fn to_msgpack(value: &Value) -> Result<Vec<u8>, TranscodeError> {
    let mut w = Writer::new();
    write_value(value, &mut w, 0)?;
    Ok(w.into_vec())
}

fn write_value(value: &Value, w: &mut Writer, depth: usize) -> Result<(), TranscodeError> {
    if depth > MAX_DEPTH {
        return Err(TranscodeError::Unsupported(format!(
            "nested deeper than {MAX_DEPTH} levels"
        )));
    }
    match value {
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
        Value::Array(items) => {
            w.write_array_len(items.len())?;
            for item in items {
                write_value(item, w, depth + 1)?;
            }
        }
        Value::Object(map) => {
            if let Some((kind, data)) = as_ext(map)? {
                w.write_ext(kind, &data)?;
                return Ok(());
            }
            w.write_map_len(map.len())?;
            for (key, item) in map {
                w.write_str(key)?;
                write_value(item, w, depth + 1)?;
            }
        }
    }
    Ok(())
}

/// An object `{"$ext": n, "$data": "<base64>"}`, as its type and bytes.
fn as_ext(map: &Map<String, Value>) -> Result<Option<(i8, Vec<u8>)>, TranscodeError> {
    if map.len() != 2 {
        return Ok(None);
    }
    let (Some(kind), Some(data)) = (map.get("$ext"), map.get("$data")) else {
        return Ok(None);
    };
    let kind = kind
        .as_i64()
        .and_then(|k| i8::try_from(k).ok())
        .ok_or_else(|| {
            TranscodeError::Unsupported(format!("`$ext` is {kind}, not an integer -128..=127"))
        })?;
    let data = data
        .as_str()
        .and_then(|d| BASE64.decode(d).ok())
        .ok_or_else(|| TranscodeError::Unsupported("`$data` is not base64 text".into()))?;
    Ok(Some((kind, data)))
}

/// A client's JSON body as a `T`: transcoded to MessagePack, read by `T`'s
/// codec.
pub(crate) fn decode_as<T: MessageCodec>(body: &Value) -> Result<T, String> {
    let bytes = to_msgpack(body).map_err(|e| e.to_string())?;
    codecbus_core::from_slice::<T>(&bytes).map_err(|e| format!("not a `{}`: {e}", type_name::<T>()))
}

/// The JSON of a `T`: written by its codec, transcoded from MessagePack.
pub(crate) fn encode_json<T: MessageCodec>(body: &T) -> Result<Value, String> {
    let bytes = codecbus_core::to_vec(body).map_err(|e| e.to_string())?;
    to_json(&bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_round_trips_through_msgpack() {
        let value = json!({
            "a": 1, "b": -2, "c": 2.5, "d": null, "e": true, "f": "text",
            "g": [1, [2, {"h": []}]], "i": {"$ext": 5, "$data": "AQID"},
            "big": u64::MAX, "small": i64::MIN,
        });
        let bytes = to_msgpack(&value).unwrap();
        assert_eq!(to_json(&bytes).unwrap(), value);
    }

    #[test]
    fn bin_is_base64_and_int_keys_are_text() {
        let mut w = Writer::new();
        w.write_map_len(2).unwrap();
        w.write_u64(7);
        w.write_bin(&[1, 2, 3]).unwrap();
        w.write_str("k").unwrap();
        w.write_f64(f64::NAN);
        assert_eq!(
            to_json(&w.into_vec()).unwrap(),
            json!({"7": "AQID", "k": null})
        );
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        for bytes in [&b""[..], b"\xc1", b"\x92\x01", b"\x81\x90\x01", b"\x01\x02"] {
            assert!(to_json(bytes).is_err(), "{bytes:?}");
        }
        let mut deep = vec![0x91u8; MAX_DEPTH + 2];
        deep.push(0xc0);
        assert!(to_json(&deep).is_err());
        assert!(to_msgpack(&json!({"$ext": 300, "$data": ""})).is_err());
        assert!(to_msgpack(&json!({"$ext": 1, "$data": "%%"})).is_err());
    }
}
