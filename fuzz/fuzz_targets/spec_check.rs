//! Arbitrary bytes through a spec's validating decode and parse, held to
//! the plain decoders followed by `validate`: both accept exactly what
//! conforms, return the value the plain decoder builds, and a violation
//! they stop at is one `validate` reports.
#![no_main]

use codecbus_core::from_slice;
use codecbus_json::JsValue;
use codecbus_json::jsobj_spec;
use codecbus_json::spec::{
    Spec, SpecDecodeError, SpecParseError, array_of, boolean, integer, map_of, null, number,
    one_of, one_of_values, string, tuple,
};
use libfuzzer_sys::fuzz_target;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;
use std::sync::LazyLock;

/// A recursive spec touching every kind: objects strict and lenient,
/// optional and nullable members, arrays with lengths and uniqueness,
/// tuples, maps with a key spec, fixed values (a container among them),
/// alternatives, patterns, ranges and a user check.
static SPEC: LazyLock<Spec> = LazyLock::new(|| {
    Spec::recursive(|me| {
        jsobj_spec! {
            "id"?: integer().min(-5).max(u64::MAX),
            "name"?: string().length(..6).pattern("^[a-z]*$").nullable(),
            "kids"?: array_of(me.clone()).length(..5),
            "tags"?: array_of(string()).unique(),
            "at"?: tuple((number().range(-180.0..=180.0), number().range(-90.0..=90.0))),
            "by"?: map_of(me.clone()).keys(string().length(1..=2)),
            "kind"?: one_of_values([JsValue::from("a"), JsValue::from(vec![1, 2]), JsValue::Null]),
            "even"?: integer().check("an even integer", |v| v.as_i64().is_some_and(|n| n % 2 == 0)),
            "mixed"?: array_of(one_of((boolean(), null(), me.clone()))).length(1..),
            "strict"?: jsobj_spec! { "x": number(), "y"?: boolean() },
            ..
        }
    })
});

fuzz_target!(|data: &[u8]| {
    let spec = &*SPEC;
    match (from_slice::<JsValue>(data), spec.decode(data)) {
        (Ok(v), Ok(checked)) => {
            assert!(spec.validate(&v).is_empty(), "decode accepted a violation");
            assert_eq!(checked, v);
        }
        (Ok(v), Err(SpecDecodeError::Invalid(first))) => {
            // As for the parse below: every copy of a repeated key is checked.
            assert!(
                spec.validate(&v).contains(&first)
                    || rmp_serde::from_slice::<Repeats>(data).map_or(true, |r| r.0),
                "{first} not from validate"
            );
        }
        (Ok(v), Err(e)) => panic!("decode refused what the plain decoder read: {e}: {v}"),
        (Err(_), Ok(v)) => panic!("decode accepted what the plain decoder refused: {v}"),
        (Err(_), Err(e)) => drop(e.to_string()),
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match (JsValue::parse(text), spec.parse(text)) {
        (Ok(v), Ok(checked)) => {
            assert!(spec.validate(&v).is_empty(), "parse accepted a violation");
            assert_eq!(checked, v);
        }
        (Ok(v), Err(SpecParseError::Invalid(first))) => {
            // The validating parse checks every copy of a repeated key;
            // the value keeps the last (documented on `Spec::parse`).
            assert!(
                spec.validate(&v).contains(&first) || repeats_a_key(text),
                "{first} not from validate"
            );
        }
        (Ok(v), Err(e)) => panic!("parse refused what the plain parser read: {e}: {v}"),
        (Err(_), Ok(v)) => panic!("parse accepted what the plain parser refused: {v}"),
        (Err(_), Err(e)) => drop(e.to_string()),
    }
});

/// Whether some object of the JSON text has a key twice (or serde_json
/// cannot tell, the text being too deep).
fn repeats_a_key(text: &str) -> bool {
    serde_json::from_str::<Repeats>(text).map_or(true, |r| r.0)
}

/// Whether some map of the input repeats a key, read by serde (JSON text or,
/// through rmp-serde, MessagePack).
struct Repeats(bool);

impl<'de> Deserialize<'de> for Repeats {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RepeatsVisitor)
    }
}

struct RepeatsVisitor;

impl<'de> Visitor<'de> for RepeatsVisitor {
    type Value = Repeats;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Repeats, E> {
        Ok(Repeats(false))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Repeats, E> {
        Ok(Repeats(false))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Repeats, E> {
        Ok(Repeats(false))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Repeats, E> {
        Ok(Repeats(false))
    }
    fn visit_str<E>(self, _: &str) -> Result<Repeats, E> {
        Ok(Repeats(false))
    }
    fn visit_unit<E>(self) -> Result<Repeats, E> {
        Ok(Repeats(false))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Repeats, A::Error> {
        let mut any = false;
        while let Some(Repeats(r)) = seq.next_element()? {
            any |= r;
        }
        Ok(Repeats(any))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Repeats, A::Error> {
        let mut keys = HashSet::new();
        let mut any = false;
        while let Some(k) = map.next_key::<String>()? {
            any |= !keys.insert(k);
            let Repeats(r) = map.next_value()?;
            any |= r;
        }
        Ok(Repeats(any))
    }
}
