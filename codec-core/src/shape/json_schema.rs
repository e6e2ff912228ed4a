//! A codec's shape as a JSON Schema (draft 2020-12) of its JSON form: what
//! a client of the bridge sends for a typed address (JSON read as
//! MessagePack value for value: an object is a map, an array an array), so
//! that a JavaScript or Python client knows what to send.
//!
//! | shape | schema |
//! |---|---|
//! | record, map layout | an object of its fields' names; those not optional `required`; others allowed |
//! | record, array layout | an array of its fields by position (`prefixItems`), at least its required ones |
//! | record, keyed layout | an array, each field at its key (`prefixItems`, `null` where no field has the key) |
//! | enum | a unit variant's name, or an object of one member, a variant's name and its payload |
//! | union | `[tag, payload]` |
//! | integer | `integer` within the type's range |
//! | float | `number` |
//! | string, byte string | `string` |
//! | extension value | `{"$ext": type, "$data": "<base64>"}` |
//! | `Option` | `null` or the value |
//! | array, tuple, map | `array`, `prefixItems`, an object |
//! | a named codec | `$ref` to its definition in `$defs` |
//! | JSON, a codec that does not describe itself | any value |
//!
//! # Examples
//!
//! ```
//! use codecbus_core::MessageCodec;
//! use codecbus_core::shape::CodecShape;
//! use codecbus_core::shape::json_schema::json_schema;
//!
//! #[derive(MessageCodec, Clone)]
//! #[codec(name = "doc.schema.order")]
//! struct Order {
//!     id: u32,
//!     note: Option<String>,
//! }
//!
//! let schema = json_schema(&CodecShape::of::<Order>("doc.schema.order"));
//! assert_eq!(schema["type"], "object");
//! assert_eq!(schema["required"], serde_json::json!(["id"]));
//! assert_eq!(schema["properties"]["id"]["maximum"], 4294967295u64);
//! ```

use serde_json::{Map, Value, json};

use crate::shape::{CodecShape, Layout, Payload, Record, Shape, Union};

/// The JSON Schema of the JSON form of `codec`'s values.
pub fn json_schema(codec: &CodecShape) -> Value {
    let mut schema = match of(&codec.shape) {
        Value::Object(map) => map,
        other => Map::from_iter([("allOf".to_owned(), json!([other]))]),
    };
    let mut root = Map::new();
    root.insert(
        "$schema".to_owned(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    root.insert("title".to_owned(), json!(codec.name));
    root.append(&mut schema);
    if !codec.refs.is_empty() {
        let defs: Map<String, Value> = codec
            .refs
            .iter()
            .map(|(name, shape)| (name.clone(), of(shape)))
            .collect();
        root.insert("$defs".to_owned(), Value::Object(defs));
    }
    Value::Object(root)
}

/// The schema of one shape.
fn of(shape: &Shape) -> Value {
    match shape {
        Shape::Nil => json!({"type": "null"}),
        Shape::Bool => json!({"type": "boolean"}),
        Shape::Int { signed, bits } => integer(*signed, *bits),
        Shape::F32 | Shape::F64 => json!({"type": "number"}),
        Shape::Str => json!({"type": "string"}),
        // A JSON string is a MessagePack string, which a byte-string
        // reader takes (the bridge writes bytes out in base64).
        Shape::Bin => json!({"type": "string"}),
        Shape::Ext(type_id) => json!({
            "type": "object",
            "properties": {
                "$ext": {"const": type_id},
                "$data": {"type": "string", "contentEncoding": "base64"},
            },
            "required": ["$ext", "$data"],
            "additionalProperties": false,
        }),
        Shape::Array(element) => json!({"type": "array", "items": of(element)}),
        Shape::Tuple(elements) => tuple(elements, elements.len()),
        Shape::Map(_, value) => json!({"type": "object", "additionalProperties": of(value)}),
        Shape::Option(inner) => json!({"anyOf": [{"type": "null"}, of(inner)]}),
        Shape::Ref(name) => json!({"$ref": format!("#/$defs/{}", pointer_token(name))}),
        Shape::Record(record) => self::record(record),
        Shape::Enum(e) => {
            let variants: Vec<Value> = e
                .variants
                .iter()
                .map(|v| match &v.payload {
                    Payload::Unit => json!({"const": v.name}),
                    payload => json!({
                        "type": "object",
                        "properties": {v.name.clone(): self::payload(payload)},
                        "required": [v.name],
                        "additionalProperties": false,
                    }),
                })
                .collect();
            json!({"anyOf": variants})
        }
        Shape::Union(union) => self::union(union),
        // Any JSON value.
        Shape::Json | Shape::Opaque => json!({}),
    }
}

/// An integer of the type's range (as far as MessagePack goes: 64 bits).
fn integer(signed: bool, bits: u8) -> Value {
    let (min, max): (i128, i128) = match (signed, bits) {
        (false, b) if b < 64 => (0, (1i128 << b) - 1),
        (false, _) => (0, i128::from(u64::MAX)),
        (true, b) if b < 64 => (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1),
        (true, 64) => (i128::from(i64::MIN), i128::from(i64::MAX)),
        // i128: what MessagePack holds, either way.
        (true, _) => (i128::from(i64::MIN), i128::from(u64::MAX)),
    };
    let bound = |v: i128| match (i64::try_from(v), u64::try_from(v)) {
        (Ok(v), _) => json!(v),
        (_, Ok(v)) => json!(v),
        _ => Value::Null,
    };
    json!({"type": "integer", "minimum": bound(min), "maximum": bound(max)})
}

/// An array of exactly these elements, the last `elements.len() - required`
/// of them optional.
fn tuple(elements: &[Shape], required: usize) -> Value {
    let items: Vec<Value> = elements.iter().map(of).collect();
    json!({
        "type": "array",
        "prefixItems": items,
        "items": false,
        "minItems": required,
    })
}

fn record(record: &Record) -> Value {
    match record.layout {
        Layout::Map => {
            let properties: Map<String, Value> = record
                .fields
                .iter()
                .map(|f| (f.name.clone(), of(&f.shape)))
                .collect();
            let required: Vec<&str> = record
                .fields
                .iter()
                .filter(|f| !f.optional)
                .map(|f| f.name.as_str())
                .collect();
            json!({"type": "object", "properties": properties, "required": required})
        }
        Layout::Array | Layout::Keyed => {
            // Each position or key in order, `null` where no field has it
            // (a reserved position, a key no field takes).
            let len = record
                .fields
                .iter()
                .filter_map(|f| f.key)
                .max()
                .map_or(0, |k| k as usize + 1);
            let mut items = vec![json!({"type": "null"}); len];
            let mut required = 0;
            for f in &record.fields {
                if let Some(key) = f.key {
                    let mut schema = of(&f.shape);
                    if let Value::Object(map) = &mut schema {
                        map.insert("title".to_owned(), json!(f.name));
                    }
                    items[key as usize] = schema;
                    if !f.optional {
                        required = required.max(key as usize + 1);
                    }
                }
            }
            json!({
                "type": "array",
                "prefixItems": items,
                "items": false,
                "minItems": required,
            })
        }
    }
}

fn payload(payload: &Payload) -> Value {
    match payload {
        Payload::Unit => json!({"type": "null"}),
        Payload::Newtype(shape) => of(shape),
        Payload::Tuple(elements) => tuple(elements, elements.len()),
        Payload::Record(record) => self::record(record),
    }
}

/// `[tag, payload]`, a branch per variant, and any tag with any payload
/// where a catch-all variant takes the others.
fn union(union: &Union) -> Value {
    let mut variants: Vec<Value> = union
        .variants
        .iter()
        .filter_map(|v| {
            let tag = v.tag?;
            Some(json!({
                "title": v.name,
                "type": "array",
                "prefixItems": [{"const": tag}, payload(&v.payload)],
                "items": false,
                "minItems": 2,
            }))
        })
        .collect();
    if let Some(name) = &union.catch_all {
        let known: Vec<u32> = union.variants.iter().filter_map(|v| v.tag).collect();
        let other = json!({"type": "integer", "minimum": 0, "not": {"enum": known}});
        variants.push(json!({
            "title": name,
            "type": "array",
            "prefixItems": [other, {}],
            "items": false,
            "minItems": 2,
        }));
    }
    json!({"anyOf": variants})
}

/// `name` as one token of a JSON Pointer (`~` and `/` escaped).
fn pointer_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_have_their_types_range() {
        assert_eq!(
            integer(false, 8),
            json!({"type": "integer", "minimum": 0, "maximum": 255})
        );
        assert_eq!(
            integer(true, 16),
            json!({"type": "integer", "minimum": -32768, "maximum": 32767})
        );
        assert_eq!(integer(false, 64)["maximum"], json!(u64::MAX));
        assert_eq!(integer(true, 64)["minimum"], json!(i64::MIN));
    }

    #[test]
    fn a_ref_is_a_json_pointer_token() {
        assert_eq!(pointer_token("a/b~c"), "a~1b~0c");
    }
}
