//! Bodies at the edge: JSON text to MessagePack and back, without knowing
//! the type (the type's own codec reads or writes the MessagePack) and
//! without a tree in between: each side is read once, front to back, and
//! written as it is read.
//!
//! | MessagePack | JSON |
//! |---|---|
//! | nil, bool, str | null, boolean, string |
//! | integer, float | number (a float that is not finite: null) |
//! | array | array |
//! | map | object, members in the map's order; integer keys as their decimal text, other key types refused |
//! | bin | string, base64 (standard alphabet, padded) |
//! | ext | `{"$ext": type, "$data": "<base64>"}` |
//!
//! From JSON: null, booleans, strings, arrays and objects as themselves;
//! a number as an unsigned integer if it is one, else a signed one, else a
//! float 64; an object of exactly the two members `$ext` (an integer
//! -128..=127) and `$data` (base64) as an extension value. A JSON string
//! is always a MessagePack string: a byte-string field cannot be filled
//! from JSON.
//!
//! A [`JsValue`] body skips MessagePack both ways: it is parsed from the
//! text and printed as text, and `{"$ext": .., "$data": ..}` is then an
//! object like any other (a `JsValue` holds no extension values).

use std::any::{Any, type_name};
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use codecbus_core::{DecodeError, EncodeError, Int, MessageCodec, Reader, ValueKind, Writer};
use codecbus_json::JsValue;
use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};

/// How deep a body may nest (arrays and objects) on its way through: the
/// depth serde_json allows when it reads JSON text (its recursion limit
/// of 128 refuses the 128th level).
pub(crate) const MAX_DEPTH: usize = 127;

/// Why a body could not be carried between JSON and MessagePack.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TranscodeError {
    /// The MessagePack is malformed or ends early.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A value too large for MessagePack.
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// The JSON text is malformed, or says what MessagePack cannot.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// Something JSON cannot say.
    #[error("{0}")]
    Unsupported(String),
}

// ---------------------------------------------------------------------
// MessagePack to JSON text

/// Appends the JSON text of one MessagePack value, the whole of `bytes`,
/// to `out`. On an error `out` holds part of it.
pub(crate) fn to_json(bytes: &[u8], out: &mut Vec<u8>) -> Result<(), TranscodeError> {
    let mut r = Reader::new(bytes);
    write_json(&mut r, out, 0)?;
    if !r.is_empty() {
        return Err(TranscodeError::Unsupported(format!(
            "{} bytes after the value",
            r.remaining()
        )));
    }
    Ok(())
}

/// The JSON text of one MessagePack value, the whole of `bytes`.
pub(crate) fn to_json_string(bytes: &[u8]) -> Result<String, TranscodeError> {
    // JSON is seldom more than half as long again as MessagePack.
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 2 + 8);
    to_json(bytes, &mut out)?;
    // Every piece written is UTF-8: serde_json's text, ASCII, base64.
    String::from_utf8(out).map_err(|e| TranscodeError::Unsupported(e.to_string()))
}

/// Refuses a container (an array, a map, an extension's object) that
/// would open at `depth`: the JSON written nests at most [`MAX_DEPTH`]
/// levels, as much as the JSON read back.
fn nest(depth: usize) -> Result<(), TranscodeError> {
    if depth >= MAX_DEPTH {
        return Err(TranscodeError::Unsupported(format!(
            "nested deeper than {MAX_DEPTH} levels"
        )));
    }
    Ok(())
}

fn write_json(r: &mut Reader<'_>, out: &mut Vec<u8>, depth: usize) -> Result<(), TranscodeError> {
    match r.peek_kind()? {
        ValueKind::Nil => {
            r.read_nil()?;
            out.extend_from_slice(b"null");
        }
        ValueKind::Bool => {
            let b = r.read_bool()?;
            out.extend_from_slice(if b { b"true" } else { b"false" });
        }
        ValueKind::Int => write_int(r.read_int()?, out),
        ValueKind::Float => {
            let f = r.read_f64()?;
            if f.is_finite() {
                write_scalar(out, &f);
            } else {
                out.extend_from_slice(b"null");
            }
        }
        ValueKind::Str => write_scalar(out, r.read_str()?),
        ValueKind::Bin => write_base64(r.read_bin()?, out),
        ValueKind::Array => {
            nest(depth)?;
            let len = r.read_array_len()?;
            out.push(b'[');
            for i in 0..len {
                if i > 0 {
                    out.push(b',');
                }
                write_json(r, out, depth + 1)?;
            }
            out.push(b']');
        }
        ValueKind::Map => {
            nest(depth)?;
            let len = r.read_map_len()?;
            out.push(b'{');
            for i in 0..len {
                if i > 0 {
                    out.push(b',');
                }
                write_key(r, out)?;
                out.push(b':');
                write_json(r, out, depth + 1)?;
            }
            out.push(b'}');
        }
        ValueKind::Ext => {
            nest(depth)?;
            let (kind, data) = r.read_ext()?;
            out.extend_from_slice(b"{\"$ext\":");
            write_scalar(out, &kind);
            out.extend_from_slice(b",\"$data\":");
            write_base64(data, out);
            out.push(b'}');
        }
        other => {
            return Err(TranscodeError::Unsupported(format!(
                "a value of kind {other:?} at offset {}",
                r.position()
            )));
        }
    }
    Ok(())
}

fn write_key(r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<(), TranscodeError> {
    match r.peek_kind()? {
        ValueKind::Str => write_scalar(out, r.read_str()?),
        ValueKind::Int => {
            out.push(b'"');
            write_int(r.read_int()?, out);
            out.push(b'"');
        }
        other => {
            return Err(TranscodeError::Unsupported(format!(
                "a map key of kind {other:?} at offset {} (JSON keys are strings)",
                r.position()
            )));
        }
    }
    Ok(())
}

fn write_int(i: Int, out: &mut Vec<u8>) {
    match i {
        Int::Unsigned(u) => write_scalar(out, &u),
        Int::Negative(n) => write_scalar(out, &n),
    }
}

/// A string, number or boolean as serde_json writes it (its escapes, its
/// shortest float text).
pub(crate) fn write_scalar<S: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &S) {
    // Writing a scalar into a `Vec` cannot fail: the error is not there.
    let _ = serde_json::to_writer(&mut *out, value);
}

fn write_base64(data: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    let start = out.len();
    out.resize(
        start + base64::encoded_len(data.len(), true).unwrap_or(0),
        0,
    );
    let written = BASE64
        .encode_slice(data, &mut out[start..])
        .unwrap_or_default();
    out.truncate(start + written);
    out.push(b'"');
}

// ---------------------------------------------------------------------
// JSON text to MessagePack

/// The MessagePack of one JSON value, the whole of `text`.
pub(crate) fn to_msgpack(text: &str) -> Result<Vec<u8>, TranscodeError> {
    // MessagePack is seldom longer than the JSON it says.
    let mut tape = Tape {
        buf: Vec::with_capacity(text.len() + 8),
        wide: Vec::new(),
    };
    let mut de = serde_json::Deserializer::from_str(text);
    Value(&mut tape).deserialize(&mut de)?;
    de.end()?;
    Ok(tape.finish())
}

/// The MessagePack being written. A container's header is one byte,
/// written when it opens and filled in when it closes; a container of
/// more than 15 items needs a longer header, and those are put in at the
/// end, in one pass.
struct Tape {
    buf: Vec<u8>,
    /// The containers of more than 15 items: where their byte is, whether
    /// a map, how many items.
    wide: Vec<(usize, bool, usize)>,
}

impl Tape {
    fn write<R>(&mut self, f: impl FnOnce(&mut Writer) -> R) -> R {
        let mut w = Writer::from_vec(std::mem::take(&mut self.buf));
        let result = f(&mut w);
        self.buf = w.into_vec();
        result
    }

    fn open(&mut self, map: bool) -> usize {
        self.buf.push(if map { 0x80 } else { 0x90 });
        self.buf.len() - 1
    }

    fn close(&mut self, at: usize, map: bool, len: usize) {
        if len < 16 {
            self.buf[at] |= len as u8;
        } else {
            // A byte that still reads as the container's kind.
            self.buf[at] = if map { 0xde } else { 0xdc };
            self.wide.push((at, map, len));
        }
    }

    fn finish(self) -> Vec<u8> {
        if self.wide.is_empty() {
            return self.buf;
        }
        let mut wide = self.wide;
        wide.sort_unstable_by_key(|&(at, ..)| at);
        let mut out = Vec::with_capacity(self.buf.len() + 4 * wide.len());
        let mut from = 0;
        for (at, map, len) in wide {
            out.extend_from_slice(&self.buf[from..at]);
            let mut w = Writer::from_vec(out);
            // The length came from a text within the frame limit.
            let _ = if map {
                w.write_map_len(len)
            } else {
                w.write_array_len(len)
            };
            out = w.into_vec();
            from = at + 1;
        }
        out.extend_from_slice(&self.buf[from..]);
        out
    }
}

/// Reads one JSON value and writes it to the tape.
struct Value<'t>(&'t mut Tape);

impl<'de> DeserializeSeed<'de> for Value<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Value<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.buf.push(0xc0);
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        self.0.buf.push(0xc0);
        Ok(())
    }

    fn visit_bool<E>(self, b: bool) -> Result<(), E> {
        self.0.buf.push(if b { 0xc3 } else { 0xc2 });
        Ok(())
    }

    fn visit_u64<E>(self, u: u64) -> Result<(), E> {
        self.0.write(|w| w.write_u64(u));
        Ok(())
    }

    fn visit_i64<E>(self, i: i64) -> Result<(), E> {
        self.0.write(|w| w.write_i64(i));
        Ok(())
    }

    fn visit_f64<E>(self, f: f64) -> Result<(), E> {
        self.0.write(|w| w.write_f64(f));
        Ok(())
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<(), E> {
        self.0.write(|w| w.write_str(s)).map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let at = self.0.open(false);
        let mut len = 0;
        while seq.next_element_seed(Value(&mut *self.0))?.is_some() {
            len += 1;
        }
        self.0.close(at, false, len);
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let tape = self.0;
        let at = tape.open(true);
        let mut len = 0;
        // Where the values of `$ext` and `$data` start, when the object
        // has those members.
        let (mut ext, mut data) = (None, None);
        while let Some(key) = map.next_key_seed(Key(&mut *tape))? {
            let start = tape.buf.len();
            match key {
                Key::EXT => ext = Some(start),
                Key::DATA => data = Some(start),
                _ => {}
            }
            map.next_value_seed(Value(&mut *tape))?;
            len += 1;
        }
        if let (2, Some(ext), Some(data)) = (len, ext, data) {
            let (kind, bytes) = extension(&tape.buf, ext, data).map_err(A::Error::custom)?;
            tape.buf.truncate(at);
            tape.wide.retain(|&(pos, ..)| pos < at);
            return tape
                .write(|w| w.write_ext(kind, &bytes))
                .map_err(A::Error::custom);
        }
        tape.close(at, true, len);
        Ok(())
    }
}

/// Reads a member's name, writes it to the tape, and says whether it is
/// `$ext` or `$data`.
struct Key<'t>(&'t mut Tape);

impl Key<'_> {
    const OTHER: u8 = 0;
    const EXT: u8 = 1;
    const DATA: u8 = 2;
}

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = u8;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<u8, D::Error> {
        de.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = u8;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<u8, E> {
        self.0.write(|w| w.write_str(s)).map_err(E::custom)?;
        Ok(match s {
            "$ext" => Key::EXT,
            "$data" => Key::DATA,
            _ => Key::OTHER,
        })
    }
}

/// The type and bytes of an object `{"$ext": n, "$data": "<base64>"}`
/// already on the tape, its values at `ext` and `data`.
fn extension(buf: &[u8], ext: usize, data: usize) -> Result<(i8, Vec<u8>), String> {
    let not_a_type = || "`$ext` is not an integer -128..=127".to_string();
    let mut r = Reader::new(&buf[ext..]);
    let kind = match r.peek_kind() {
        Ok(ValueKind::Int) => match r.read_int() {
            Ok(Int::Unsigned(u)) => i8::try_from(u).map_err(|_| not_a_type())?,
            Ok(Int::Negative(n)) => i8::try_from(n).map_err(|_| not_a_type())?,
            Err(_) => return Err(not_a_type()),
        },
        _ => return Err(not_a_type()),
    };
    let mut r = Reader::new(&buf[data..]);
    let bytes = match r.peek_kind() {
        Ok(ValueKind::Str) => r.read_str().ok().and_then(|s| BASE64.decode(s).ok()),
        _ => None,
    };
    let bytes = bytes.ok_or_else(|| "`$data` is not base64 text".to_string())?;
    Ok((kind, bytes))
}

// ---------------------------------------------------------------------
// Typed bodies

/// A client's JSON body (its text) as a `T`: transcoded to MessagePack,
/// read by `T`'s codec; a [`JsValue`] parsed straight from the text (each
/// key's allocation shared among the objects of the body, as its
/// MessagePack decoder does), 15 to 20 % faster than through MessagePack.
pub(crate) fn decode_as<T: MessageCodec + 'static>(body: &str) -> Result<T, String> {
    // A `JsValue` is parsed straight from the text: it never becomes
    // MessagePack.
    let mut parsed: Option<T> = None;
    if let Some(slot) = (&mut parsed as &mut dyn Any).downcast_mut::<Option<JsValue>>() {
        *slot = Some(JsValue::parse(body).map_err(|e| e.to_string())?);
    }
    if let Some(value) = parsed {
        return Ok(value);
    }
    let bytes = to_msgpack(body).map_err(|e| e.to_string())?;
    codecbus_core::from_slice::<T>(&bytes).map_err(|e| format!("not a `{}`: {e}", type_name::<T>()))
}

/// The JSON text of a `T`: written by its codec, transcoded from
/// MessagePack; a [`JsValue`]'s written straight.
pub(crate) fn encode_json<T: MessageCodec + 'static>(body: &T) -> Result<String, String> {
    if let Some(text) = js_text(body) {
        return Ok(text);
    }
    let bytes = codecbus_core::to_vec(body).map_err(|e| e.to_string())?;
    to_json_string(&bytes).map_err(|e| e.to_string())
}

/// The JSON text of `body` when it is a [`JsValue`].
pub(crate) fn js_text(body: &dyn Any) -> Option<String> {
    let value = body.downcast_ref::<JsValue>()?;
    // A JsValue's JSON is UTF-8 (serde_json writes it).
    String::from_utf8(value.to_json_vec()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn json_of(bytes: &[u8]) -> Result<serde_json::Value, TranscodeError> {
        let mut out = Vec::new();
        to_json(bytes, &mut out)?;
        Ok(serde_json::from_slice(&out).expect("the transcoder writes JSON"))
    }

    #[test]
    fn json_round_trips_through_msgpack() {
        let value = json!({
            "a": 1, "b": -2, "c": 2.5, "d": null, "e": true, "f": "text \"quoted\" \u{e9}\n",
            "g": [1, [2, {"h": []}]], "i": {"$ext": 5, "$data": "AQID"},
            "big": u64::MAX, "small": i64::MIN,
            "wide": (0..40).collect::<Vec<_>>(),
            "wide_map": (0..20).map(|i| (format!("k{i}"), json!(vec![i; 17]))).collect::<serde_json::Map<_, _>>(),
            "not_ext": {"$ext": 5, "$data": "AQID", "x": 1},
        });
        let bytes = to_msgpack(&value.to_string()).unwrap();
        assert_eq!(json_of(&bytes).unwrap(), value);
    }

    #[test]
    fn containers_take_the_smallest_header() {
        let text = format!("[[],{{}},{}]", serde_json::to_string(&vec![0; 16]).unwrap());
        let bytes = to_msgpack(&text).unwrap();
        let mut w = Writer::new();
        w.write_array_len(3).unwrap();
        w.write_array_len(0).unwrap();
        w.write_map_len(0).unwrap();
        w.write_array_len(16).unwrap();
        for _ in 0..16 {
            w.write_u64(0);
        }
        assert_eq!(bytes, w.into_vec());
    }

    #[test]
    fn members_keep_their_order() {
        let text = r#"{"z":1,"a":{"y":2,"b":3}}"#;
        let mut out = Vec::new();
        to_json(&to_msgpack(text).unwrap(), &mut out).unwrap();
        assert_eq!(out, text.as_bytes());
    }

    #[test]
    fn json_written_nests_no_deeper_than_json_read() {
        // As deep as serde_json reads: written, and read back.
        let mut deep = vec![0x91u8; MAX_DEPTH - 1];
        deep.push(0xd4); // an extension: an object in JSON
        deep.extend_from_slice(&[1, 0]);
        let text = String::from_utf8(written(&deep).unwrap()).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap();
        assert!(to_msgpack(&text).is_ok());
        // One level more: refused, whether an array, a map or an extension.
        for last in [&[0x90u8][..], &[0x80], &[0xd4, 1, 0]] {
            let mut deeper = vec![0x91u8; MAX_DEPTH];
            deeper.extend_from_slice(last);
            assert!(written(&deeper).is_err());
        }
        // The fuzzer's find: arrays 129 deep among others.
        let found = b"\x91\x91\x91\x91\x91\x91\x91\x91";
        let mut input = found.repeat(17);
        input.push(0x00);
        assert!(written(&input).is_err());
    }

    fn written(bytes: &[u8]) -> Result<Vec<u8>, TranscodeError> {
        let mut out = Vec::new();
        to_json(bytes, &mut out)?;
        Ok(out)
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
            json_of(&w.into_vec()).unwrap(),
            json!({"7": "AQID", "k": null})
        );
    }

    /// A `JsValue` body is parsed from its text, and reads as it would
    /// through MessagePack; an object shaped as an extension value stays an
    /// object.
    #[test]
    fn a_js_value_is_parsed_from_the_text_as_through_msgpack() {
        for body in [
            r#"{"a":1,"b":-2,"c":2.5,"d":null,"e":[true,"x",{"f":[]}]}"#,
            r#"[18446744073709551615,-9223372036854775808,1e300,1.0,-0]"#,
            "1e400",
            r#""text \"quoted\" \u00e9""#,
            r#"{"k":1,"k":2}"#,
        ] {
            let through = to_msgpack(body)
                .ok()
                .and_then(|bytes| codecbus_core::from_slice::<JsValue>(&bytes).ok());
            assert_eq!(decode_as::<JsValue>(body).ok(), through, "{body}");
        }
        let ext = decode_as::<JsValue>(r#"{"$ext":1,"$data":"AQID"}"#).unwrap();
        assert_eq!(ext.to_string(), r#"{"$data":"AQID","$ext":1}"#);
        // A typed body still reads it as an extension value.
        assert!(
            decode_as::<codecbus_core::ext::Timestamp>(r#"{"$ext":-1,"$data":"AAAAAQ=="}"#).is_ok()
        );
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        for bytes in [&b""[..], b"\xc1", b"\x92\x01", b"\x81\x90\x01", b"\x01\x02"] {
            assert!(json_of(bytes).is_err(), "{bytes:?}");
        }
        let mut deep = vec![0x91u8; MAX_DEPTH + 2];
        deep.push(0xc0);
        assert!(json_of(&deep).is_err());
        for text in [
            r#"{"$ext": 300, "$data": ""}"#,
            r#"{"$ext": 1, "$data": "%%"}"#,
            r#"{"$ext": [1], "$data": ""}"#,
            r#"{"$ext": 1, "$data": ["AQID"]}"#,
            "[1,",
            "[1] 2",
            "",
        ] {
            assert!(to_msgpack(text).is_err(), "{text}");
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 2), "]".repeat(MAX_DEPTH + 2));
        assert!(to_msgpack(&deep).is_err());
    }
}
