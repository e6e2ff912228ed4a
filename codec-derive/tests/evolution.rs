//! The compatibility check, proven by the codecs: for every rule a pair of
//! real derived types (v1, v2), checked in FULL mode, and then
//!
//! * every finding's witness, encoded by the writer's codec, is refused by
//!   the reader's codec or read wrong (a field that reads back other than
//!   it was written);
//! * in each direction without a finding, generated values of the writer's
//!   shape (each first decoded by the writer's codec: the shape describes
//!   the codec, or the test fails), encoded by the writer's codec, decode
//!   with the reader's codec to what they should (every field both sides
//!   know reads back as written).
//!
//! So a verdict of the checker cannot drift from what the codecs do. A test
//! binary of its own: pairs share a codec name, which the registry tests
//! of `tests/derive` would refuse.

#![allow(unreachable_pub)] // the pairs' versions are modules of this test

use std::collections::BTreeMap;

use codecbus_core::Int;
use codecbus_core::shape::check::{Direction, Mode, Report, check};
use codecbus_core::shape::sample::Value;
use codecbus_core::shape::{CodecShape, Layout, Payload, Record, Shape, ShapeSet};
use codecbus_core::{DecodeError, MessageCodec, from_slice, to_vec};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// One version of a codec: its shape, and its codec reading bytes and
/// writing them again (`None`: refused).
struct Side {
    shape: CodecShape,
    reencode: fn(&[u8]) -> Result<Vec<u8>, DecodeError>,
}

fn reencode<T: MessageCodec>(bytes: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let value: T = from_slice(bytes)?;
    Ok(to_vec(&value).expect("a decoded value encodes"))
}

fn side<T: MessageCodec>(name: &str) -> Side {
    Side {
        shape: CodecShape::of::<T>(name),
        reencode: reencode::<T>,
    }
}

/// Checks `old` against `new` in `mode`, and proves each verdict with the
/// codecs; returns the report.
fn proven(old: Side, new: Side, mode: Mode) -> Report {
    let old_set = ShapeSet::from_codecs([old.shape.clone()]);
    let new_set = ShapeSet::from_codecs([new.shape.clone()]);
    let report = check(&old_set, &new_set, mode);
    let mut broken = Vec::new();
    for finding in &report.findings {
        let (writer, reader) = match finding.direction {
            Direction::Backward => (&old, &new),
            Direction::Forward => (&new, &old),
        };
        broken.push(finding.direction);
        let Some(witness) = &finding.witness else {
            // Codec names break without a value to show it, and the
            // reservation rules are discipline (as buf's): they find what
            // a later reuse would break, not a value of these two shapes.
            assert!(
                matches!(
                    finding.rule.as_str(),
                    "CODEC_REMOVED" | "CODEC_RENAMED" | "REMOVED_NOT_RESERVED" | "RESERVED_REUSED"
                ),
                "{finding:?} has no witness"
            );
            continue;
        };
        let written = (writer.reencode)(&witness.msgpack).unwrap_or_else(|e| {
            panic!(
                "the witness {} of {} is no value of the writer's codec: {e}",
                witness.json, finding.rule
            )
        });
        match (reader.reencode)(&written) {
            Err(_) => {}
            Ok(read) => assert!(
                !agrees(
                    &named(&written, &writer.shape),
                    &named(&read, &reader.shape)
                ),
                "{} {}: the reader reads the witness {} as written",
                finding.rule,
                finding.direction,
                witness.json
            ),
        }
    }
    let directions = [
        (mode.backward(), Direction::Backward, &old, &new),
        (mode.forward(), Direction::Forward, &new, &old),
    ];
    for (asked, direction, writer, reader) in directions {
        if asked && !broken.contains(&direction) {
            compatible(direction, writer, reader);
        }
    }
    report
}

/// Generated values of the writer's shape read right with the reader's
/// codec.
fn compatible(direction: Direction, writer: &Side, reader: &Side) {
    let mut runner = TestRunner::new(Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = arb(&writer.shape.shape, &writer.shape, 0);
    runner
        .run(&strategy, |value| {
            let bytes = to_vec(&value).unwrap();
            let written = (writer.reencode)(&bytes).map_err(|e| {
                TestCaseError::fail(format!(
                    "the writer's codec refuses a value of its own shape, {}: {e}",
                    value.to_json()
                ))
            })?;
            let read = (reader.reencode)(&written).map_err(|e| {
                TestCaseError::fail(format!(
                    "{direction} compatible, yet the reader refuses {}: {e}",
                    value.to_json()
                ))
            })?;
            let (w, r) = (named(&written, &writer.shape), named(&read, &reader.shape));
            prop_assert!(
                agrees(&w, &r),
                "{direction} compatible, yet {} reads back as {}",
                w.to_json(),
                r.to_json()
            );
            Ok(())
        })
        .unwrap();
}

/// `bytes` of `codec`, its records as maps by field name and its union
/// values as `{tag: payload}`, so that two versions compare by name.
fn named(bytes: &[u8], codec: &CodecShape) -> Value {
    let value: Value = from_slice(bytes).expect("any MessagePack reads as a Value");
    name_value(&value, &codec.shape, codec, 0)
}

fn name_value(value: &Value, shape: &Shape, codec: &CodecShape, depth: u32) -> Value {
    if depth > 64 {
        return value.clone();
    }
    let d = depth + 1;
    match (shape, value) {
        (Shape::Ref(name), _) => match codec.resolve(name) {
            Some(shape) => name_value(value, shape, codec, d),
            None => value.clone(),
        },
        (Shape::Option(inner), v) if *v != Value::Nil => name_value(v, inner, codec, d),
        (Shape::Array(elem), Value::Array(items)) => Value::Array(
            items
                .iter()
                .map(|v| name_value(v, elem, codec, d))
                .collect(),
        ),
        (Shape::Tuple(elems), Value::Array(items)) => Value::Array(
            items
                .iter()
                .zip(elems)
                .map(|(v, s)| name_value(v, s, codec, d))
                .collect(),
        ),
        (Shape::Map(k, v), Value::Map(entries)) => Value::Map(
            entries
                .iter()
                .map(|(ek, ev)| (name_value(ek, k, codec, d), name_value(ev, v, codec, d)))
                .collect(),
        ),
        (Shape::Record(record), v) => name_record(v, record, codec, d),
        (Shape::Enum(e), Value::Map(entries)) if entries.len() == 1 => {
            let (tag, payload) = &entries[0];
            let variant = e
                .variants
                .iter()
                .find(|variant| Value::Str(variant.name.clone()) == *tag);
            match variant {
                Some(variant) => Value::Map(vec![(
                    tag.clone(),
                    name_payload(payload, &variant.payload, codec, d),
                )]),
                None => value.clone(),
            }
        }
        (Shape::Union(u), Value::Array(pair)) if pair.len() == 2 => {
            let tag = pair[0].as_i128();
            match u.variants.iter().find(|v| v.tag.map(i128::from) == tag) {
                // By tag: a reader's catch-all keeps the payload as it
                // came, under the same tag.
                Some(variant) => Value::Map(vec![(
                    pair[0].clone(),
                    name_payload(&pair[1], &variant.payload, codec, d),
                )]),
                None => Value::Map(vec![(pair[0].clone(), pair[1].clone())]),
            }
        }
        _ => value.clone(),
    }
}

fn name_payload(value: &Value, payload: &Payload, codec: &CodecShape, d: u32) -> Value {
    match payload {
        Payload::Unit => Value::Nil,
        Payload::Newtype(shape) => name_value(value, shape, codec, d),
        Payload::Tuple(shapes) => name_value(value, &Shape::Tuple(shapes.clone()), codec, d),
        Payload::Record(record) => name_record(value, record, codec, d),
    }
}

fn name_record(value: &Value, record: &Record, codec: &CodecShape, d: u32) -> Value {
    let mut fields = BTreeMap::new();
    match value {
        Value::Map(entries) => {
            for (key, v) in entries {
                let Value::Str(name) = key else { continue };
                if let Some(field) = record.fields.iter().find(|f| &f.name == name) {
                    fields.insert(name.clone(), name_value(v, &field.shape, codec, d));
                }
            }
        }
        Value::Array(items) => {
            for (i, field) in record.fields.iter().enumerate() {
                let at = match record.layout {
                    Layout::Map => Some(i as u32),
                    Layout::Array | Layout::Keyed => field.key,
                };
                if let Some(v) = at.and_then(|at| items.get(at as usize)) {
                    fields.insert(field.name.clone(), name_value(v, &field.shape, codec, d));
                }
            }
        }
        other => return other.clone(),
    }
    Value::Map(
        fields
            .into_iter()
            .map(|(name, v)| (Value::Str(name), v))
            .collect(),
    )
}

/// Whether what was written (`w`) and what was read (`r`) agree on every
/// field both know: numbers by value (an `f32` read as an `f64` agrees,
/// `0.1f64` read as `f32` does not), a string and the same bytes as `bin`.
fn agrees(w: &Value, r: &Value) -> bool {
    match (w, r) {
        (Value::Map(a), Value::Map(b)) => {
            let named = |entries: &[(Value, Value)]| {
                entries.iter().all(|(k, _)| matches!(k, Value::Str(_)))
            };
            if named(a) && named(b) {
                a.iter().all(|(k, v)| {
                    b.iter()
                        .find(|(k2, _)| k2 == k)
                        .is_none_or(|(_, v2)| agrees(v, v2))
                })
            } else {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((ka, va), (kb, vb))| agrees(ka, kb) && agrees(va, vb))
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| agrees(x, y))
        }
        (Value::Str(s), Value::Bin(b)) | (Value::Bin(b), Value::Str(s)) => s.as_bytes() == b,
        _ => match (number(w), number(r)) {
            (Some(x), Some(y)) => x == y,
            _ => w == r,
        },
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Int(Int::Unsigned(u)) => Some(*u as f64),
        Value::Int(Int::Negative(n)) => Some(*n as f64),
        Value::F32(f) => Some(f64::from(*f)),
        Value::F64(f) => Some(*f),
        _ => None,
    }
}

/// Values of `shape` as its codec writes them.
fn arb(shape: &Shape, codec: &CodecShape, depth: u32) -> BoxedStrategy<Value> {
    let shallow = depth > 3;
    match shape {
        Shape::Nil => Just(Value::Nil).boxed(),
        Shape::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Shape::Int { signed, bits } => {
            let (lo, hi): (i128, i128) = match (signed, bits) {
                (false, 8) => (0, u8::MAX.into()),
                (false, 16) => (0, u16::MAX.into()),
                (false, 32) => (0, u32::MAX.into()),
                (false, _) => (0, u64::MAX.into()),
                (true, 8) => (i8::MIN.into(), i8::MAX.into()),
                (true, 16) => (i16::MIN.into(), i16::MAX.into()),
                (true, 32) => (i32::MIN.into(), i32::MAX.into()),
                (true, _) => (i64::MIN.into(), i64::MAX.into()),
            };
            prop_oneof![Just(lo), Just(hi), lo..=hi, Just(0)]
                .prop_map(Value::int)
                .boxed()
        }
        Shape::F32 => (-1.0e6f32..1.0e6).prop_map(Value::F32).boxed(),
        Shape::F64 => prop_oneof![Just(0.1f64), -1.0e12f64..1.0e12]
            .prop_map(Value::F64)
            .boxed(),
        Shape::Str => "[a-z]{0,4}".prop_map(Value::Str).boxed(),
        Shape::Bin => proptest::collection::vec(any::<u8>(), 0..4)
            .prop_map(Value::Bin)
            .boxed(),
        Shape::Array(elem) if shallow => {
            let _ = elem;
            Just(Value::Array(vec![])).boxed()
        }
        Shape::Array(elem) => proptest::collection::vec(arb(elem, codec, depth + 1), 0..3)
            .prop_map(Value::Array)
            .boxed(),
        Shape::Tuple(elems) => elems
            .iter()
            .map(|e| arb(e, codec, depth + 1))
            .collect::<Vec<_>>()
            .prop_map(Value::Array)
            .boxed(),
        Shape::Map(k, v) => {
            proptest::collection::vec((arb(k, codec, depth + 1), arb(v, codec, depth + 1)), 0..3)
                .prop_map(|mut entries| {
                    let mut seen = Vec::new();
                    entries.retain(|(k, _)| {
                        let fresh = !seen.contains(k);
                        seen.push(k.clone());
                        fresh
                    });
                    Value::Map(entries)
                })
                .boxed()
        }
        Shape::Option(inner) if shallow => {
            let _ = inner;
            Just(Value::Nil).boxed()
        }
        Shape::Option(inner) => prop_oneof![Just(Value::Nil), arb(inner, codec, depth + 1)].boxed(),
        Shape::Ref(name) => match codec.resolve(name) {
            Some(shape) => arb(shape, codec, depth + 1),
            None => Just(Value::Nil).boxed(),
        },
        Shape::Record(record) => arb_record(record, codec, depth),
        Shape::Enum(e) => {
            let variants: Vec<BoxedStrategy<Value>> = e
                .variants
                .iter()
                .map(|v| {
                    let name = Value::Str(v.name.clone());
                    match &v.payload {
                        Payload::Unit => Just(name).boxed(),
                        payload => arb_payload(payload, codec, depth)
                            .prop_map(move |p| Value::Map(vec![(name.clone(), p)]))
                            .boxed(),
                    }
                })
                .collect();
            proptest::strategy::Union::new(variants).boxed()
        }
        Shape::Union(u) => {
            let variants: Vec<BoxedStrategy<Value>> = u
                .variants
                .iter()
                .filter_map(|v| {
                    let tag = Value::int(i128::from(v.tag?));
                    Some(
                        arb_payload(&v.payload, codec, depth)
                            .prop_map(move |p| Value::Array(vec![tag.clone(), p]))
                            .boxed(),
                    )
                })
                .collect();
            proptest::strategy::Union::new(variants).boxed()
        }
        Shape::Json => prop_oneof![
            Just(Value::Nil),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(|n| Value::int(n.into())),
            "[a-z]{0,3}".prop_map(Value::Str),
        ]
        .boxed(),
        other => panic!("no values generated for {other:?}"),
    }
}

fn arb_payload(payload: &Payload, codec: &CodecShape, depth: u32) -> BoxedStrategy<Value> {
    match payload {
        Payload::Unit => Just(Value::Nil).boxed(),
        Payload::Newtype(shape) => arb(shape, codec, depth + 1),
        Payload::Tuple(shapes) => arb(&Shape::Tuple(shapes.clone()), codec, depth + 1),
        Payload::Record(record) => arb_record(record, codec, depth + 1),
    }
}

fn arb_record(record: &Record, codec: &CodecShape, depth: u32) -> BoxedStrategy<Value> {
    let fields: Vec<BoxedStrategy<Value>> = record
        .fields
        .iter()
        .map(|f| arb(&f.shape, codec, depth + 1))
        .collect();
    let names: Vec<String> = record.fields.iter().map(|f| f.name.clone()).collect();
    let keys: Vec<Option<u32>> = record.fields.iter().map(|f| f.key).collect();
    let layout = record.layout;
    let width = keys.iter().flatten().max().map_or(0, |k| k + 1) as usize;
    fields
        .prop_map(move |values| match layout {
            Layout::Map => Value::Map(names.iter().cloned().map(Value::Str).zip(values).collect()),
            Layout::Array | Layout::Keyed => {
                let mut items = vec![Value::Nil; width.max(values.len())];
                for (key, value) in keys.iter().zip(values) {
                    items[key.unwrap_or(0) as usize] = value;
                }
                items.truncate(width);
                Value::Array(items)
            }
        })
        .boxed()
}

/// The findings of `report` as `(rule, direction)`, sorted.
fn found(report: &Report) -> Vec<(&'static str, Direction)> {
    let mut found: Vec<_> = report
        .findings
        .iter()
        .map(|f| (f.rule.as_str(), f.direction))
        .collect();
    found.sort();
    found.dedup();
    found
}

use Direction::{Backward, Forward};

macro_rules! pair {
    ($name:ident, $codec:literal, { $($v1:tt)* }, { $($v2:tt)* }) => {
        mod $name {
            #![allow(dead_code)]
            pub mod v1 {
                use codecbus_core::MessageCodec;
                $($v1)*
            }
            pub mod v2 {
                use codecbus_core::MessageCodec;
                $($v2)*
            }
        }
    };
}

// ----- array layout -----

pair!(
    inserted,
    "evo.inserted",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.inserted", as_array)]
        pub struct T {
            pub a: u32,
            pub b: u32,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.inserted", as_array)]
        pub struct T {
            pub a: u32,
            pub x: u32,
            pub b: u32,
        }
    }
);

#[test]
fn a_field_inserted_in_the_array_layout_breaks_both_ways() {
    let report = proven(
        side::<inserted::v1::T>("evo.inserted"),
        side::<inserted::v2::T>("evo.inserted"),
        Mode::Full,
    );
    let found = found(&report);
    assert!(found.contains(&("FIELD_INSERTED", Backward)), "{report}");
    assert!(!report.is_compatible());
}

pair!(
    reordered,
    "evo.reordered",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.reordered", as_array)]
        pub struct T {
            pub a: u32,
            pub b: u64,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.reordered", as_array)]
        pub struct T {
            pub b: u64,
            pub a: u32,
        }
    }
);

#[test]
fn fields_reordered_in_the_array_layout_break_both_ways() {
    let report = proven(
        side::<reordered::v1::T>("evo.reordered"),
        side::<reordered::v2::T>("evo.reordered"),
        Mode::Full,
    );
    let found = found(&report);
    assert!(found.contains(&("FIELD_REORDERED", Backward)), "{report}");
    assert!(found.contains(&("FIELD_REORDERED", Forward)), "{report}");
}

pair!(
    deleted,
    "evo.deleted",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.deleted", as_array)]
        pub struct T {
            pub a: u32,
            pub b: String,
            pub c: u32,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.deleted", as_array)]
        pub struct T {
            pub a: u32,
            pub c: u32,
        }
    }
);

#[test]
fn a_field_deleted_from_the_array_layout_breaks() {
    let report = proven(
        side::<deleted::v1::T>("evo.deleted"),
        side::<deleted::v2::T>("evo.deleted"),
        Mode::Full,
    );
    assert!(
        found(&report).iter().any(|(r, _)| *r == "FIELD_DELETED"),
        "{report}"
    );
}

// ----- fields that may or may not be missing -----

pair!(
    required_added,
    "evo.required",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.required")]
        pub struct T {
            pub a: u32,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.required")]
        pub struct T {
            pub a: u32,
            pub b: u32,
        }
    }
);

#[test]
fn a_new_required_field_breaks_backward_and_its_removal_forward() {
    let report = proven(
        side::<required_added::v1::T>("evo.required"),
        side::<required_added::v2::T>("evo.required"),
        Mode::Full,
    );
    assert_eq!(
        found(&report),
        [("FIELD_ADDED_REQUIRED", Backward)],
        "{report}"
    );
    // The same change read the other way round: a required field removed.
    let report = proven(
        side::<required_added::v2::T>("evo.required"),
        side::<required_added::v1::T>("evo.required"),
        Mode::Full,
    );
    assert!(
        found(&report).contains(&("FIELD_REMOVED_REQUIRED", Forward)),
        "{report}"
    );
}

pair!(
    optional_added,
    "evo.optional",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.optional")]
        pub struct T {
            pub a: u32,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.optional")]
        pub struct T {
            pub a: u32,
            pub note: Option<String>,
            #[codec(default)]
            pub count: u32,
        }
    }
);

#[test]
fn new_optional_and_defaulted_fields_are_compatible_both_ways() {
    let report = proven(
        side::<optional_added::v1::T>("evo.optional"),
        side::<optional_added::v2::T>("evo.optional"),
        Mode::Full,
    );
    assert!(report.is_compatible(), "{report}");
}

// ----- keys and tags -----

pair!(
    key_removed,
    "evo.keyed",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.keyed")]
        pub struct T {
            #[codec(key = 0)]
            pub a: u32,
            #[codec(key = 1)]
            pub b: Option<String>,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.keyed")]
        pub struct T {
            #[codec(key = 0)]
            pub a: u32,
            #[codec(key = 1)]
            pub b: Option<u64>,
        }
    }
);

#[test]
fn a_key_given_to_another_field_type_breaks() {
    let report = proven(
        side::<key_removed::v1::T>("evo.keyed"),
        side::<key_removed::v2::T>("evo.keyed"),
        Mode::Full,
    );
    assert!(!report.is_compatible(), "{report}");
}

pair!(
    reserved_reused,
    "evo.reserved",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.reserved", reserved(1))]
        pub struct T {
            #[codec(key = 0)]
            pub a: u32,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.reserved")]
        pub struct T {
            #[codec(key = 0)]
            pub a: u32,
            #[codec(key = 1)]
            pub b: Option<u32>,
        }
    }
);

#[test]
fn a_reserved_key_reused_is_found() {
    let report = proven(
        side::<reserved_reused::v1::T>("evo.reserved"),
        side::<reserved_reused::v2::T>("evo.reserved"),
        Mode::Full,
    );
    assert!(
        found(&report).iter().any(|(r, _)| *r == "RESERVED_REUSED"),
        "{report}"
    );
}

pair!(
    key_dropped,
    "evo.dropped",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.dropped")]
        pub struct T {
            #[codec(key = 0)]
            pub a: u32,
            #[codec(key = 1)]
            pub b: Option<u32>,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.dropped")]
        pub struct T {
            #[codec(key = 0)]
            pub a: u32,
        }
    }
);

#[test]
fn a_key_removed_without_reserving_it_is_found() {
    let report = check(
        &ShapeSet::from_codecs([CodecShape::of::<key_dropped::v1::T>("evo.dropped")]),
        &ShapeSet::from_codecs([CodecShape::of::<key_dropped::v2::T>("evo.dropped")]),
        Mode::Full,
    );
    assert!(
        found(&report)
            .iter()
            .any(|(r, _)| *r == "REMOVED_NOT_RESERVED"),
        "{report}"
    );
}

pair!(
    union_removed,
    "evo.union",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.union", union)]
        pub enum T {
            #[codec(tag = 0)]
            A(u32),
            #[codec(tag = 1)]
            B { text: String },
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.union", union)]
        pub enum T {
            #[codec(tag = 0)]
            A(u32),
        }
    }
);

#[test]
fn a_union_variant_removed_breaks_a_reader_without_catch_all() {
    let report = proven(
        side::<union_removed::v1::T>("evo.union"),
        side::<union_removed::v2::T>("evo.union"),
        Mode::Full,
    );
    assert!(
        found(&report).contains(&("VARIANT_REMOVED", Backward)),
        "{report}"
    );
}

pair!(
    union_added,
    "evo.catch",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.catch", union)]
        pub enum T {
            #[codec(tag = 0)]
            A(u32),
            #[codec(other)]
            Unknown(u32, codecbus_core::ext::RawValue),
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.catch", union)]
        pub enum T {
            #[codec(tag = 0)]
            A(u32),
            #[codec(tag = 1)]
            B(String),
            #[codec(other)]
            Unknown(u32, codecbus_core::ext::RawValue),
        }
    }
);

#[test]
fn a_new_union_variant_is_compatible_where_the_reader_has_a_catch_all() {
    let report = proven(
        side::<union_added::v1::T>("evo.catch"),
        side::<union_added::v2::T>("evo.catch"),
        Mode::Full,
    );
    assert!(report.is_compatible(), "{report}");
}

// ----- values -----

pair!(
    widened,
    "evo.int",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.int")]
        pub struct T {
            pub n: u32,
            pub m: i16,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.int")]
        pub struct T {
            pub n: u64,
            pub m: i64,
        }
    }
);

#[test]
fn an_integer_widened_is_backward_compatible_and_narrowed_is_not() {
    let report = proven(
        side::<widened::v1::T>("evo.int"),
        side::<widened::v2::T>("evo.int"),
        Mode::Backward,
    );
    assert!(report.is_compatible(), "{report}");
    let report = proven(
        side::<widened::v1::T>("evo.int"),
        side::<widened::v2::T>("evo.int"),
        Mode::Full,
    );
    assert!(
        found(&report).contains(&("INTEGER_NARROWED", Forward)),
        "{report}"
    );
}

pair!(
    signed,
    "evo.sign",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.sign")]
        pub struct T {
            pub n: i32,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.sign")]
        pub struct T {
            pub n: u32,
        }
    }
);

#[test]
fn an_integer_whose_sign_changed_breaks() {
    let report = proven(
        side::<signed::v1::T>("evo.sign"),
        side::<signed::v2::T>("evo.sign"),
        Mode::Full,
    );
    assert!(
        found(&report)
            .iter()
            .any(|(r, _)| *r == "INTEGER_SIGN_CHANGED"),
        "{report}"
    );
}

pair!(
    floated,
    "evo.float",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.float")]
        pub struct T {
            pub n: u32,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.float")]
        pub struct T {
            pub n: f64,
        }
    }
);

#[test]
fn an_integer_turned_float_breaks_the_integer_reader() {
    let report = proven(
        side::<floated::v1::T>("evo.float"),
        side::<floated::v2::T>("evo.float"),
        Mode::Full,
    );
    assert!(
        found(&report).contains(&("INTEGER_FLOAT_CHANGED", Forward)),
        "{report}"
    );
}

pair!(
    doubled,
    "evo.f64",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.f64")]
        pub struct T {
            pub x: f32,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.f64")]
        pub struct T {
            pub x: f64,
        }
    }
);

#[test]
fn f32_to_f64_is_read_and_back_is_rounded() {
    let report = proven(
        side::<doubled::v1::T>("evo.f64"),
        side::<doubled::v2::T>("evo.f64"),
        Mode::Full,
    );
    assert_eq!(found(&report), [("FLOAT_NARROWED", Forward)], "{report}");
}

pair!(
    bytes,
    "evo.bin",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.bin")]
        pub struct T {
            pub data: String,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.bin")]
        pub struct T {
            #[codec(bytes)]
            pub data: Vec<u8>,
        }
    }
);

#[test]
fn a_string_turned_bytes_breaks_the_string_reader() {
    let report = proven(
        side::<bytes::v1::T>("evo.bin"),
        side::<bytes::v2::T>("evo.bin"),
        Mode::Full,
    );
    assert_eq!(found(&report), [("STR_BIN_CHANGED", Forward)], "{report}");
}

pair!(
    listed,
    "evo.list",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.list")]
        pub struct T {
            pub n: u32,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.list")]
        pub struct T {
            pub n: Vec<u32>,
        }
    }
);

#[test]
fn a_scalar_turned_array_breaks_both_ways() {
    let report = proven(
        side::<listed::v1::T>("evo.list"),
        side::<listed::v2::T>("evo.list"),
        Mode::Full,
    );
    let found = found(&report);
    assert!(found.contains(&("TYPE_CHANGED", Backward)), "{report}");
    assert!(found.contains(&("TYPE_CHANGED", Forward)), "{report}");
}

pair!(
    optioned,
    "evo.nil",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.nil")]
        pub struct T {
            pub n: u32,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.nil")]
        pub struct T {
            pub n: Option<u32>,
        }
    }
);

#[test]
fn a_value_made_optional_breaks_the_reader_that_cannot_take_nil() {
    let report = proven(
        side::<optioned::v1::T>("evo.nil"),
        side::<optioned::v2::T>("evo.nil"),
        Mode::Full,
    );
    assert_eq!(found(&report), [("NIL_REJECTED", Forward)], "{report}");
}

pair!(
    ext_code,
    "evo.ext",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.ext")]
        pub struct T {
            pub at: codecbus_core::ext::Timestamp,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.ext")]
        pub struct T {
            pub at: uuid::Uuid,
        }
    }
);

#[test]
fn a_changed_extension_code_breaks() {
    let report = proven(
        side::<ext_code::v1::T>("evo.ext"),
        side::<ext_code::v2::T>("evo.ext"),
        Mode::Full,
    );
    assert!(
        found(&report).iter().any(|(r, _)| *r == "EXT_CODE_CHANGED"),
        "{report}"
    );
}

// ----- layouts and names -----

pair!(
    relaid,
    "evo.layout",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.layout")]
        pub struct T {
            pub a: u32,
            pub b: String,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.layout")]
        pub struct T {
            #[codec(key = 3)]
            pub a: u32,
            #[codec(key = 0)]
            pub b: String,
        }
    }
);

#[test]
fn a_layout_change_is_judged_by_what_the_readers_take() {
    let report = proven(
        side::<relaid::v1::T>("evo.layout"),
        side::<relaid::v2::T>("evo.layout"),
        Mode::Full,
    );
    assert!(!report.is_compatible(), "{report}");
}

pair!(
    renamed,
    "evo.renamed",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.renamed.v1")]
        pub struct T {
            pub a: u32,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.renamed.v2", aliases("evo.renamed.v1"))]
        pub struct T {
            pub a: u32,
        }

        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.renamed.v3")]
        pub struct Plain {
            pub a: u32,
        }
    }
);

#[test]
fn a_codec_renamed_needs_an_alias() {
    let v1 = || ShapeSet::from_codecs([CodecShape::of::<renamed::v1::T>("evo.renamed.v1")]);
    let aliased = ShapeSet::from_codecs([codecbus_core::registrations()
        .find(|r| r.name() == "evo.renamed.v2")
        .unwrap()
        .shape()]);
    assert!(check(&v1(), &aliased, Mode::Backward).is_compatible());
    let plain = ShapeSet::from_codecs([CodecShape::of::<renamed::v2::Plain>("evo.renamed.v3")]);
    let report = check(&v1(), &plain, Mode::Backward);
    assert!(!report.is_compatible(), "{report}");
}

mod moved {
    pub mod here {
        use codecbus_core::MessageCodec;
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.same", immutable)]
        pub struct Order {
            pub id: u64,
        }
    }
    pub mod there {
        use codecbus_core::MessageCodec;
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.same")]
        pub struct Renamed {
            pub id: u64,
        }
    }
}

#[test]
fn a_renamed_rust_type_with_the_same_codec_name_and_the_immutable_flag_are_compatible() {
    let report = proven(
        side::<moved::here::Order>("evo.same"),
        side::<moved::there::Renamed>("evo.same"),
        Mode::Full,
    );
    assert!(report.is_compatible(), "{report}");
    assert_eq!(
        CodecShape::of::<moved::here::Order>("evo.same").fingerprint(),
        CodecShape::of::<moved::there::Renamed>("evo.same").fingerprint()
    );
}

// ----- the rest of the rules -----

pair!(
    appended,
    "evo.appended",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.appended", as_array)]
        pub struct T {
            pub a: u32,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.appended", as_array)]
        pub struct T {
            pub a: u32,
            pub b: Option<u32>,
        }
    }
);

#[test]
fn a_field_appended_to_the_array_layout_breaks_older_readers() {
    let report = proven(
        side::<appended::v1::T>("evo.appended"),
        side::<appended::v2::T>("evo.appended"),
        Mode::Full,
    );
    assert_eq!(found(&report), [("FIELD_APPENDED", Forward)], "{report}");
}

pair!(
    rekeyed,
    "evo.rekeyed",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.rekeyed")]
        pub struct T {
            #[codec(key = 0)]
            pub a: u32,
            #[codec(key = 1)]
            pub b: Option<u32>,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.rekeyed")]
        pub struct T {
            #[codec(key = 0)]
            pub a: u32,
            #[codec(key = 2)]
            pub b: Option<u32>,
        }
    }
);

#[test]
fn a_field_moved_to_another_key_breaks() {
    let report = proven(
        side::<rekeyed::v1::T>("evo.rekeyed"),
        side::<rekeyed::v2::T>("evo.rekeyed"),
        Mode::Full,
    );
    assert!(
        found(&report)
            .iter()
            .any(|(r, _)| *r == "FIELD_KEY_CHANGED"),
        "{report}"
    );
}

pair!(
    variant_added,
    "evo.enum",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.enum")]
        pub enum T {
            A,
            B(u32),
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.enum")]
        pub enum T {
            A,
            B(u32),
            C { text: String },
        }
    }
);

#[test]
fn a_variant_added_to_a_named_enum_breaks_older_readers() {
    let report = proven(
        side::<variant_added::v1::T>("evo.enum"),
        side::<variant_added::v2::T>("evo.enum"),
        Mode::Full,
    );
    assert_eq!(found(&report), [("VARIANT_ADDED", Forward)], "{report}");
}

pair!(
    variant_renamed,
    "evo.renamed-variant",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.renamed-variant")]
        pub enum T {
            Open,
            Closed(u32),
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.renamed-variant")]
        pub enum T {
            Open,
            Shut(u32),
        }
    }
);

#[test]
fn a_named_enum_variant_renamed_breaks() {
    let report = proven(
        side::<variant_renamed::v1::T>("evo.renamed-variant"),
        side::<variant_renamed::v2::T>("evo.renamed-variant"),
        Mode::Full,
    );
    assert!(!report.is_compatible(), "{report}");
    assert!(
        found(&report)
            .iter()
            .any(|(r, _)| matches!(*r, "VARIANT_RENAMED" | "VARIANT_REMOVED" | "VARIANT_ADDED")),
        "{report}"
    );
}

pair!(
    retagged,
    "evo.retagged",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.retagged", union)]
        pub enum T {
            #[codec(tag = 0)]
            A(u32),
            #[codec(tag = 1)]
            B(String),
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.retagged", union)]
        pub enum T {
            #[codec(tag = 0)]
            A(u32),
            #[codec(tag = 2)]
            B(String),
        }
    }
);

#[test]
fn a_union_variant_given_another_tag_breaks() {
    let report = proven(
        side::<retagged::v1::T>("evo.retagged"),
        side::<retagged::v2::T>("evo.retagged"),
        Mode::Full,
    );
    assert!(
        found(&report)
            .iter()
            .any(|(r, _)| *r == "VARIANT_TAG_CHANGED"),
        "{report}"
    );
}

pair!(
    tupled,
    "evo.tuple",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.tuple")]
        pub struct T {
            pub at: (u32, u32),
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.tuple")]
        pub struct T {
            pub at: (u32, u32, u32),
        }
    }
);

#[test]
fn a_tuple_that_changed_length_breaks_both_ways() {
    let report = proven(
        side::<tupled::v1::T>("evo.tuple"),
        side::<tupled::v2::T>("evo.tuple"),
        Mode::Full,
    );
    let found = found(&report);
    assert!(
        found.contains(&("TUPLE_LENGTH_CHANGED", Backward)),
        "{report}"
    );
    assert!(
        found.contains(&("TUPLE_LENGTH_CHANGED", Forward)),
        "{report}"
    );
}

#[test]
fn a_codec_removed_is_found() {
    let old = ShapeSet::from_codecs([
        CodecShape::of::<tupled::v1::T>("evo.tuple"),
        CodecShape::of::<appended::v1::T>("evo.appended"),
    ]);
    let new = ShapeSet::from_codecs([CodecShape::of::<tupled::v1::T>("evo.tuple")]);
    let report = check(&old, &new, Mode::Backward);
    assert_eq!(found(&report), [("CODEC_REMOVED", Backward)], "{report}");
}

// A map-layout reader reads an array by its fields' declaration order,
// which the shape does not record (a map's fields are in the canonical
// order, by name): the check reports LAYOUT_CHANGED whenever an array
// writer meets a map reader, and it breaks where the orders differ, as
// here. Where they agree the finding is a false alarm, which this proof
// would refuse: the shape would need the declaration order to tell.
pair!(
    tuple_struct,
    "evo.tuple-struct",
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.tuple-struct")]
        pub struct T {
            pub b: String,
            pub a: u32,
        }
    },
    {
        #[derive(MessageCodec, Clone, Debug)]
        #[codec(name = "evo.tuple-struct")]
        pub struct T(pub u32, pub String);
    }
);

#[test]
fn a_struct_turned_tuple_struct_changes_its_layout() {
    let report = proven(
        side::<tuple_struct::v1::T>("evo.tuple-struct"),
        side::<tuple_struct::v2::T>("evo.tuple-struct"),
        Mode::Full,
    );
    assert!(
        found(&report).iter().any(|(r, _)| *r == "LAYOUT_CHANGED"),
        "{report}"
    );
}

/// Every rule of the check has a pair above (or, for the reservation
/// and name rules, a check of its own): a new rule comes with its proof.
#[test]
fn every_rule_is_proven_here() {
    let source = include_str!("evolution.rs");
    for rule in codecbus_core::shape::check::Rule::ALL {
        let name = format!("\"{}\"", rule.as_str());
        assert!(
            source.matches(name.as_str()).count() >= 1,
            "{} has no pair in tests/evolution.rs",
            rule.as_str()
        );
    }
}
