//! MessagePack shown as JSON, with the field and variant names of its
//! codec's shape: what `codecbus tap` prints for each message.
//!
//! A value is read front to back once. Its shape says what the bytes
//! mean: a record in the array layout becomes an object of its fields'
//! names by position, one in the keyed layout an object of its fields'
//! names by key, a union's `[tag, payload]` an object of the variant's
//! name. Where the bytes are not what the shape says (a peer's other
//! version of the type, say), or there is no shape, the value is shown as
//! it is:
//!
//! | MessagePack | JSON |
//! |---|---|
//! | nil, bool, str | null, boolean, string |
//! | integer, float | number (a float that is not finite: null) |
//! | array | array |
//! | map | object, members sorted by name (a `serde_json` map); a key that is not a string as its JSON text |
//! | bin | string, base64 (standard alphabet, padded) |
//! | timestamp (-1) | string, RFC 3339 in UTC |
//! | UUID (3) | string, hyphenated |
//! | DECIMAL (2) | string, its decimal digits |
//! | DATE, TIME, DATETIME (4, 5, 6) | string, ISO 8601 |
//! | other ext | `{"$ext": type, "$data": "<base64>"}` |
//!
//! A field of an array or keyed layout the shape does not name (a newer
//! writer's) is shown under `#` and its position or key, an unknown union
//! tag as `{"#7": payload}`.
//!
//! # Examples
//!
//! ```
//! use codecbus_core::shape::CodecShape;
//! use codecbus_core::shape::render::to_json;
//! use codecbus_core::{MessageCodec, to_vec};
//!
//! #[derive(MessageCodec, Clone)]
//! #[codec(name = "doc.render.point", as_array)]
//! struct Point {
//!     x: i32,
//!     label: String,
//! }
//!
//! let bytes = to_vec(&Point { x: 3, label: "a".into() }).unwrap();
//! let shape = CodecShape::of::<Point>("doc.render.point");
//! // Members by name (a `serde_json` map's order).
//! assert_eq!(to_json(&bytes, Some(&shape)).unwrap().to_string(), r#"{"label":"a","x":3}"#);
//! // Without the shape, the array as it is.
//! assert_eq!(to_json(&bytes, None).unwrap().to_string(), r#"[3,"a"]"#);
//! ```

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value};

use crate::error::{DecodeError, DecodeErrorKind};
use crate::ext;
use crate::msgpack::kind::{Int, ValueKind};
use crate::msgpack::read::Reader;
use crate::shape::{CodecShape, Layout, Payload, Record, Shape, Union};

/// `bytes`, one MessagePack value, as JSON: with the names of `shape`
/// where the bytes have its form, as they are elsewhere.
///
/// # Errors
///
/// [`DecodeError`] when `bytes` is not one whole MessagePack value
/// (malformed, truncated, followed by more bytes) or nests deeper than
/// the default [`DecodeLimits`](crate::DecodeLimits) allow.
pub fn to_json(bytes: &[u8], shape: Option<&CodecShape>) -> Result<Value, DecodeError> {
    let mut r = Reader::new(bytes);
    let value = match shape {
        Some(codec) => Render { codec: Some(codec) }.shaped(&mut r, &codec.shape)?,
        None => Render { codec: None }.plain(&mut r)?,
    };
    if !r.is_empty() {
        return Err(r.error(DecodeErrorKind::TrailingBytes(r.remaining())));
    }
    Ok(value)
}

struct Render<'s> {
    /// Where the shape's references are defined.
    codec: Option<&'s CodecShape>,
}

impl<'s> Render<'s> {
    /// The value at `r` as `shape` says, or as it is where the bytes have
    /// another form.
    fn shaped(&self, r: &mut Reader<'_>, shape: &'s Shape) -> Result<Value, DecodeError> {
        let kind = r.peek_kind()?;
        match shape {
            Shape::Option(inner) if kind != ValueKind::Nil => self.shaped(r, inner),
            Shape::Ref(name) => match self.codec.and_then(|c| c.resolve(name)) {
                Some(defined) => self.shaped(r, defined),
                None => self.plain(r),
            },
            Shape::Array(element) if kind == ValueKind::Array => {
                let len = r.read_array_len()?;
                self.nested(r, |r| {
                    (0..len)
                        .map(|_| self.shaped(r, element))
                        .collect::<Result<Vec<_>, _>>()
                        .map(Value::Array)
                })
            }
            Shape::Tuple(elements) => self.shaped_tuple(r, elements),
            Shape::Map(_, value) if kind == ValueKind::Map => {
                let len = r.read_map_len()?;
                self.nested(r, |r| {
                    let mut out = Map::new();
                    for _ in 0..len {
                        let key = self.key(r)?;
                        out.insert(key, self.shaped(r, value)?);
                    }
                    Ok(Value::Object(out))
                })
            }
            Shape::Record(record) => self.record(r, record, kind),
            Shape::Enum(e) if kind == ValueKind::Map => {
                // `{"Variant": payload}`: the payload by the variant's shape.
                if r.read_map_len()? != 1 {
                    return Err(r.error(DecodeErrorKind::InvalidValue(
                        "an enum's variant with a payload is a map of one entry",
                    )));
                }
                let name = self.key(r)?;
                let payload = e.variants.iter().find(|v| v.name == name);
                let value = self.nested(r, |r| match payload {
                    Some(v) => self.payload(r, &v.payload),
                    None => self.plain(r),
                })?;
                Ok(Value::Object(Map::from_iter([(name, value)])))
            }
            Shape::Union(union) if kind == ValueKind::Array => self.union(r, union),
            _ => self.plain(r),
        }
    }

    /// A record in its layout, or as it is when the bytes have another
    /// form.
    fn record(
        &self,
        r: &mut Reader<'_>,
        record: &'s Record,
        kind: ValueKind,
    ) -> Result<Value, DecodeError> {
        match (record.layout, kind) {
            // Every layout reads a map by name.
            (_, ValueKind::Map) => {
                let len = r.read_map_len()?;
                self.nested(r, |r| {
                    let mut out = Map::new();
                    for _ in 0..len {
                        let name = self.key(r)?;
                        let field = record.fields.iter().find(|f| f.name == name);
                        let value = match field {
                            Some(f) => self.shaped(r, &f.shape)?,
                            None => self.plain(r)?,
                        };
                        out.insert(name, value);
                    }
                    Ok(Value::Object(out))
                })
            }
            (Layout::Array | Layout::Keyed, ValueKind::Array) => {
                let len = r.read_array_len()?;
                self.nested(r, |r| {
                    let mut out = Map::new();
                    for i in 0..len {
                        let key = u32::try_from(i).ok();
                        match record.fields.iter().find(|f| f.key == key) {
                            Some(f) => {
                                let value = self.shaped(r, &f.shape)?;
                                out.insert(f.name.clone(), value);
                            }
                            // A key no field has: nil in the keyed layout.
                            None if record.layout == Layout::Keyed && r.try_read_nil() => {}
                            None => {
                                let value = self.plain(r)?;
                                out.insert(format!("#{i}"), value);
                            }
                        }
                    }
                    Ok(Value::Object(out))
                })
            }
            (Layout::Map, ValueKind::Array) => {
                // A named struct by position (what `as_array` writers and
                // rmp-serde's `to_vec` send): in the order of declaration,
                // which the shape does not keep.
                self.plain(r)
            }
            _ => self.plain(r),
        }
    }

    /// `[tag, payload]`: `{"Variant": payload}`.
    fn union(&self, r: &mut Reader<'_>, union: &'s Union) -> Result<Value, DecodeError> {
        let start = r.position();
        let len = r.read_array_len()?;
        let tag = match (len, r.peek_kind()?) {
            (2, ValueKind::Int) => match r.read_int()? {
                Int::Unsigned(tag) => u32::try_from(tag).ok(),
                Int::Negative(_) => None,
            },
            _ => None,
        };
        let Some(tag) = tag else {
            return Err(DecodeError::new(
                DecodeErrorKind::InvalidValue("a union is written as [tag, payload]"),
                start,
            ));
        };
        let variant = union.variants.iter().find(|v| v.tag == Some(tag));
        let (name, value) = self.nested(r, |r| match variant {
            Some(v) => Ok((v.name.clone(), self.payload(r, &v.payload)?)),
            None => Ok((format!("#{tag}"), self.plain(r)?)),
        })?;
        Ok(Value::Object(Map::from_iter([(name, value)])))
    }

    /// A variant's payload.
    fn payload(&self, r: &mut Reader<'_>, payload: &'s Payload) -> Result<Value, DecodeError> {
        match payload {
            Payload::Unit => self.plain(r),
            Payload::Newtype(shape) => self.shaped(r, shape),
            Payload::Tuple(elements) => self.shaped_tuple(r, elements),
            Payload::Record(record) => {
                let kind = r.peek_kind()?;
                self.record(r, record, kind)
            }
        }
    }

    /// An array of these elements (a tuple, a tuple variant's payload),
    /// or as it is when the bytes are not an array.
    fn shaped_tuple(
        &self,
        r: &mut Reader<'_>,
        elements: &'s [Shape],
    ) -> Result<Value, DecodeError> {
        if r.peek_kind()? != ValueKind::Array {
            return self.plain(r);
        }
        let len = r.read_array_len()?;
        self.nested(r, |r| {
            let mut out = Vec::with_capacity(len.min(elements.len()));
            for i in 0..len {
                out.push(match elements.get(i) {
                    Some(shape) => self.shaped(r, shape)?,
                    None => self.plain(r)?,
                });
            }
            Ok(Value::Array(out))
        })
    }

    /// The value at `r` as it is.
    fn plain(&self, r: &mut Reader<'_>) -> Result<Value, DecodeError> {
        Ok(match r.peek_kind()? {
            ValueKind::Nil => {
                r.read_nil()?;
                Value::Null
            }
            ValueKind::Bool => Value::Bool(r.read_bool()?),
            ValueKind::Int => match r.read_int()? {
                Int::Unsigned(v) => Value::from(v),
                Int::Negative(v) => Value::from(v),
            },
            ValueKind::Float => Value::from(r.read_f64()?),
            ValueKind::Str => Value::String(r.read_str()?.to_owned()),
            ValueKind::Bin => Value::String(BASE64.encode(r.read_bin()?)),
            ValueKind::Array => {
                let len = r.read_array_len()?;
                self.nested(r, |r| {
                    (0..len)
                        .map(|_| self.plain(r))
                        .collect::<Result<Vec<_>, _>>()
                        .map(Value::Array)
                })?
            }
            ValueKind::Map => {
                let len = r.read_map_len()?;
                self.nested(r, |r| {
                    let mut out = Map::new();
                    for _ in 0..len {
                        let key = self.key(r)?;
                        out.insert(key, self.plain(r)?);
                    }
                    Ok(Value::Object(out))
                })?
            }
            ValueKind::Ext => {
                let start = r.position();
                let (type_id, data) = r.read_ext()?;
                extension(type_id, data)
                    .map_err(|why| DecodeError::new(DecodeErrorKind::InvalidExtData(why), start))?
            }
            ValueKind::Reserved => {
                let marker = r.peek()?;
                return Err(r.error(DecodeErrorKind::InvalidMarker(marker)));
            }
        })
    }

    /// A map key: a string as it is, anything else as its JSON text.
    fn key(&self, r: &mut Reader<'_>) -> Result<String, DecodeError> {
        if r.peek_kind()? == ValueKind::Str {
            return Ok(r.read_str()?.to_owned());
        }
        Ok(self.plain(r)?.to_string())
    }

    /// `read` one level deeper, within the depth limit.
    fn nested<T>(
        &self,
        r: &mut Reader<'_>,
        read: impl FnOnce(&mut Reader<'_>) -> Result<T, DecodeError>,
    ) -> Result<T, DecodeError> {
        r.enter()?;
        let value = read(r)?;
        r.leave();
        Ok(value)
    }
}

/// An extension value in its JSON form (the module's table).
fn extension(type_id: i8, data: &[u8]) -> Result<Value, &'static str> {
    let text = match type_id {
        ext::TIMESTAMP => timestamp(data)?,
        ext::UUID => {
            let bytes: [u8; 16] = data.try_into().map_err(|_| "a UUID takes 16 bytes")?;
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            format!(
                "{}-{}-{}-{}-{}",
                &hex[..8],
                &hex[8..12],
                &hex[12..16],
                &hex[16..20],
                &hex[20..]
            )
        }
        ext::DECIMAL => decimal(data)?,
        ext::DATE => date(data)?.0,
        ext::TIME => time(data)?,
        ext::DATETIME => {
            let (date, rest) = date(data)?;
            format!("{date}T{}", time(rest)?)
        }
        _ => {
            let mut object = Map::new();
            object.insert("$ext".to_owned(), Value::from(type_id));
            object.insert("$data".to_owned(), Value::String(BASE64.encode(data)));
            return Ok(Value::Object(object));
        }
    };
    Ok(Value::String(text))
}

/// The MessagePack timestamp (4, 8 or 12 bytes) in RFC 3339, UTC.
fn timestamp(data: &[u8]) -> Result<String, &'static str> {
    let (seconds, nanos) = match *data {
        [a, b, c, d] => (i64::from(u32::from_be_bytes([a, b, c, d])), 0),
        [a, b, c, d, e, f, g, h] => {
            let word = u64::from_be_bytes([a, b, c, d, e, f, g, h]);
            ((word & 0x3_ffff_ffff) as i64, (word >> 34) as u32)
        }
        [a, b, c, d, ref rest @ ..] if rest.len() == 8 => {
            let nanos = u32::from_be_bytes([a, b, c, d]);
            let mut s = [0; 8];
            s.copy_from_slice(rest);
            (i64::from_be_bytes(s), nanos)
        }
        _ => return Err("a timestamp takes 4, 8 or 12 bytes"),
    };
    if nanos >= 1_000_000_000 {
        return Err("a timestamp's nanoseconds are below one second");
    }
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil(days);
    let mut text = format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    );
    if nanos != 0 {
        text.push_str(&format!(".{nanos:09}"));
    }
    text.push('Z');
    Ok(text)
}

/// The proleptic Gregorian date `days` after 1970-01-01 (the civil-date
/// algorithm over 400-year eras of 146 097 days).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// DECIMAL: the scale as a MessagePack unsigned integer, then the unscaled
/// value as minimal two's complement.
fn decimal(data: &[u8]) -> Result<String, &'static str> {
    let mut r = Reader::new(data);
    let scale = r
        .read_u32()
        .map_err(|_| "a decimal begins with its scale")?;
    let digits = &data[r.position()..];
    if digits.is_empty() || digits.len() > 16 {
        return Err("a decimal's unscaled value takes 1 to 16 bytes");
    }
    let mut word = [if digits[0] & 0x80 != 0 { 0xff } else { 0 }; 16];
    word[16 - digits.len()..].copy_from_slice(digits);
    let unscaled = i128::from_be_bytes(word);
    let magnitude = unscaled.unsigned_abs().to_string();
    let scale = usize::try_from(scale).map_err(|_| "a decimal's scale is too large")?;
    if scale > 38 {
        return Err("a decimal's scale is at most 38");
    }
    let padded = format!("{magnitude:0>width$}", width = scale + 1);
    let (whole, fraction) = padded.split_at(padded.len() - scale);
    let sign = if unscaled < 0 { "-" } else { "" };
    Ok(if fraction.is_empty() {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{fraction}")
    })
}

/// DATE: i32 year, u8 month, u8 day; and what follows.
fn date(data: &[u8]) -> Result<(String, &[u8]), &'static str> {
    let Some((&[a, b, c, d, month, day], rest)) = data.split_first_chunk::<6>() else {
        return Err("a date takes 6 bytes");
    };
    let year = i32::from_be_bytes([a, b, c, d]);
    Ok((format!("{year:04}-{month:02}-{day:02}"), rest))
}

/// TIME: u8 hour, u8 minute, u8 second, i32 nanoseconds.
fn time(data: &[u8]) -> Result<String, &'static str> {
    let &[hour, minute, second, a, b, c, d] = data else {
        return Err("a time takes 7 bytes");
    };
    let nanos = i32::from_be_bytes([a, b, c, d]);
    if !(0..1_000_000_000).contains(&nanos) {
        return Err("a time's nanoseconds are below one second");
    }
    let mut text = format!("{hour:02}:{minute:02}:{second:02}");
    if nanos != 0 {
        text.push_str(&format!(".{nanos:09}"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc_3339() {
        assert_eq!(
            timestamp(&0u32.to_be_bytes()).unwrap(),
            "1970-01-01T00:00:00Z"
        );
        // 2024-02-29T12:34:56.5Z
        let seconds: u64 = 1_709_210_096;
        let word = (500_000_000u64 << 34) | seconds;
        assert_eq!(
            timestamp(&word.to_be_bytes()).unwrap(),
            "2024-02-29T12:34:56.500000000Z"
        );
        let mut twelve = 1u32.to_be_bytes().to_vec();
        twelve.extend_from_slice(&(-1i64).to_be_bytes());
        assert_eq!(
            timestamp(&twelve).unwrap(),
            "1969-12-31T23:59:59.000000001Z"
        );
        assert!(timestamp(&[1, 2, 3]).is_err());
    }

    #[test]
    fn decimals_keep_their_scale() {
        // scale 2, unscaled -12345 (0xcfc7)
        assert_eq!(decimal(&[2, 0xcf, 0xc7]).unwrap(), "-123.45");
        assert_eq!(decimal(&[3, 0x05]).unwrap(), "0.005");
        assert_eq!(decimal(&[0, 0x7f]).unwrap(), "127");
        assert!(decimal(&[2]).is_err());
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert!(to_json(&[0x92, 0x01], None).is_err());
        assert!(to_json(&[0x01, 0x02], None).is_err());
        assert!(to_json(&[0xc1], None).is_err());
        // As deep as the default limit allows, and no deeper.
        let deep = vec![0x91; 10_000];
        assert!(to_json(&deep, None).is_err());
    }
}
