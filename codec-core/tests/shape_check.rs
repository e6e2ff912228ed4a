//! The check's witnesses against the real codecs: for pairs of derived
//! types, old and new, with their shapes written by hand, each finding's
//! witness is decoded by the reader's type, which refuses it or reads
//! something else than was written; a compatible verdict is held to the
//! samples decoding both ways.

use std::collections::BTreeMap;

use codecbus_core::ext::RawValue;
use codecbus_core::shape::check::{Direction, Finding, Mode, Report, Rule, check};
use codecbus_core::shape::sample::sample;
use codecbus_core::shape::{
    CodecShape, Enum, FieldShape, Layout, Payload, Record, Shape, ShapeSet, Union, VariantShape,
};
use codecbus_core::{Decode, MessageCodec, from_slice, to_vec};

fn u(bits: u8) -> Shape {
    Shape::int(false, bits)
}

fn f(name: &str, shape: Shape) -> FieldShape {
    let optional = matches!(shape, Shape::Option(_));
    FieldShape {
        name: name.into(),
        key: None,
        optional,
        shape,
    }
}

fn record(layout: Layout, fields: Vec<FieldShape>) -> Shape {
    let fields = fields
        .into_iter()
        .enumerate()
        .map(|(p, mut f)| {
            if layout == Layout::Array {
                f.key = Some(p as u32);
            }
            f
        })
        .collect();
    Shape::Record(Record::new(layout, fields, vec![]))
}

fn map(fields: Vec<FieldShape>) -> Shape {
    record(Layout::Map, fields)
}

fn arr(fields: Vec<FieldShape>) -> Shape {
    record(Layout::Array, fields)
}

fn keyed(fields: Vec<(u32, FieldShape)>) -> Shape {
    let fields = fields
        .into_iter()
        .map(|(k, mut f)| {
            f.key = Some(k);
            f
        })
        .collect();
    Shape::Record(Record::new(Layout::Keyed, fields, vec![]))
}

fn set(shape: Shape) -> ShapeSet {
    ShapeSet::from_codecs([CodecShape {
        name: "c".into(),
        aliases: vec![],
        shape,
        refs: BTreeMap::new(),
    }])
}

fn findings(old: Shape, new: Shape, mode: Mode) -> Report {
    check(&set(old), &set(new), mode)
}

/// The one finding of `rule` in `direction`.
fn the(report: &Report, rule: Rule, direction: Direction) -> Finding {
    report
        .findings
        .iter()
        .find(|f| f.rule == rule && f.direction == direction)
        .unwrap_or_else(|| panic!("no {rule} {direction} in\n{report}"))
        .clone()
}

/// The witness's bytes, decoded by the reader's type.
fn read<T: for<'de> Decode<'de>>(f: &Finding) -> Result<T, codecbus_core::DecodeError> {
    from_slice::<T>(&f.witness.as_ref().expect("a witness").msgpack)
}

fn refused<T: for<'de> Decode<'de> + std::fmt::Debug>(f: &Finding) {
    let json = &f.witness.as_ref().unwrap().json;
    match read::<T>(f) {
        Ok(v) => panic!("{} {}: {json} read as {v:?}", f.rule, f.direction),
        Err(e) => drop(e.to_string()),
    }
}

// ---- map layout ----

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(unregistered)]
struct IdU64 {
    id: u64,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(unregistered)]
struct IdU32 {
    id: u32,
}

#[test]
fn a_narrowed_integer_is_refused() {
    let r = findings(
        map(vec![f("id", u(64))]),
        map(vec![f("id", u(32))]),
        Mode::Full,
    );
    let finding = the(&r, Rule::IntegerNarrowed, Direction::Backward);
    assert_eq!(
        finding.witness.as_ref().unwrap().json,
        r#"{"id":4294967296}"#
    );
    refused::<IdU32>(&finding);
    assert_eq!(read::<IdU64>(&finding).unwrap(), IdU64 { id: 1 << 32 });
}

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered)]
struct WithNote {
    #[allow(dead_code)]
    id: u64,
    #[allow(dead_code)]
    note: String,
}

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered)]
struct WithOptionalNote {
    id: u64,
    note: Option<String>,
}

#[test]
fn required_fields_added_and_removed() {
    let old = map(vec![f("id", u(64))]);
    let new = map(vec![f("id", u(64)), f("note", Shape::Str)]);
    let r = findings(old.clone(), new.clone(), Mode::Full);
    refused::<WithNote>(&the(&r, Rule::FieldAddedRequired, Direction::Backward));
    let r = findings(new, old, Mode::Full);
    refused::<WithNote>(&the(&r, Rule::FieldRemovedRequired, Direction::Forward));
}

#[test]
fn a_new_optional_field_reads_both_ways() {
    let old = map(vec![f("id", u(64))]);
    let new = map(vec![
        f("id", u(64)),
        f("note", Shape::Option(Box::new(Shape::Str))),
    ]);
    let r = findings(old.clone(), new.clone(), Mode::Full);
    assert!(r.is_compatible(), "{r}");
    let old_bytes = to_vec(&sample(set(old).get("c").unwrap())).unwrap();
    let new_bytes = to_vec(&sample(set(new).get("c").unwrap())).unwrap();
    let read = from_slice::<WithOptionalNote>(&old_bytes).unwrap();
    assert_eq!((read.id, read.note), (0, None));
    assert_eq!(from_slice::<IdU64>(&new_bytes).unwrap(), IdU64 { id: 0 });
}

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered)]
struct Field<T> {
    x: T,
}

fn field(s: Shape) -> Shape {
    map(vec![f("x", s)])
}

#[test]
fn wire_types_that_do_not_read() {
    // an Option written, a T read
    let r = findings(
        field(u(32)),
        field(Shape::Option(Box::new(u(32)))),
        Mode::Forward,
    );
    refused::<Field<u32>>(&the(&r, Rule::NilRejected, Direction::Forward));
    // bin written, a string read
    let r = findings(field(Shape::Str), field(Shape::Bin), Mode::Forward);
    refused::<Field<String>>(&the(&r, Rule::StrBinChanged, Direction::Forward));
    // a sign changed
    let r = findings(field(Shape::int(true, 32)), field(u(32)), Mode::Full);
    refused::<Field<u32>>(&the(&r, Rule::IntegerSignChanged, Direction::Backward));
    refused::<Field<i32>>(&the(&r, Rule::IntegerSignChanged, Direction::Forward));
    // a float read as an integer
    let r = findings(field(u(64)), field(Shape::F64), Mode::Forward);
    refused::<Field<u64>>(&the(&r, Rule::IntegerFloatChanged, Direction::Forward));
    // a tuple grown
    let pair = Shape::Tuple(vec![u(8), u(8)]);
    let triple = Shape::Tuple(vec![u(8), u(8), u(8)]);
    let r = findings(field(pair), field(triple), Mode::Full);
    refused::<Field<(u8, u8, u8)>>(&the(&r, Rule::TupleLengthChanged, Direction::Backward));
    refused::<Field<(u8, u8)>>(&the(&r, Rule::TupleLengthChanged, Direction::Forward));
    // a scalar become an array
    let r = findings(
        field(u(32)),
        field(Shape::Array(Box::new(u(32)))),
        Mode::Full,
    );
    refused::<Field<Vec<u32>>>(&the(&r, Rule::TypeChanged, Direction::Backward));
    refused::<Field<u32>>(&the(&r, Rule::TypeChanged, Direction::Forward));
}

#[test]
fn wire_types_that_read_wrong() {
    // f64 read as f32: rounded
    let r = findings(field(Shape::F64), field(Shape::F32), Mode::Backward);
    let finding = the(&r, Rule::FloatNarrowed, Direction::Backward);
    assert_eq!(finding.witness.as_ref().unwrap().json, r#"{"x":0.1}"#);
    let x = read::<Field<f32>>(&finding).unwrap().x;
    assert_ne!(f64::from(x), 0.1);
    // a large u64 read as f64: rounded
    let r = findings(field(u(64)), field(Shape::F64), Mode::Backward);
    let finding = the(&r, Rule::IntegerFloatChanged, Direction::Backward);
    let x = read::<Field<f64>>(&finding).unwrap().x;
    assert_eq!(
        read::<Field<u64>>(&finding).unwrap().x,
        9_007_199_254_740_993
    );
    assert_ne!(x as u64, 9_007_199_254_740_993);
    // u32 widened: read by f64 exactly, so no backward finding
    assert!(findings(field(u(32)), field(Shape::F64), Mode::Backward).is_compatible());
}

// ---- array and keyed layouts ----

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered, as_array)]
struct Ab {
    a: u32,
    b: String,
}

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered, as_array)]
struct Axb {
    #[allow(dead_code)]
    a: u32,
    #[allow(dead_code)]
    x: u32,
    #[allow(dead_code)]
    b: String,
}

#[test]
fn a_field_inserted_in_an_array() {
    let old = arr(vec![f("a", u(32)), f("b", Shape::Str)]);
    let new = arr(vec![f("a", u(32)), f("x", u(32)), f("b", Shape::Str)]);
    let r = findings(old, new, Mode::Full);
    refused::<Axb>(&the(&r, Rule::FieldInserted, Direction::Backward));
    refused::<Ab>(&the(&r, Rule::FieldInserted, Direction::Forward));
    let _ = Ab {
        a: 0,
        b: String::new(),
    };
}

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered, as_array)]
struct A {
    #[allow(dead_code)]
    a: u32,
}

#[test]
fn a_field_appended_to_an_array_is_refused_by_older_readers() {
    let old = arr(vec![f("a", u(32))]);
    let new = arr(vec![f("a", u(32)), f("b", Shape::Option(Box::new(u(32))))]);
    let r = findings(old, new, Mode::Full);
    assert_eq!(r.findings.len(), 1, "{r}");
    refused::<A>(&the(&r, Rule::FieldAppended, Direction::Forward));
}

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered, as_array)]
struct AbU32 {
    a: u32,
    b: u32,
}

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered, as_array)]
struct BaU32 {
    b: u32,
    a: u32,
}

#[test]
fn fields_reordered_in_an_array_read_wrong() {
    let old = arr(vec![f("a", u(32)), f("b", u(32))]);
    let new = arr(vec![f("b", u(32)), f("a", u(32))]);
    let r = findings(old, new, Mode::Backward);
    let finding = the(&r, Rule::FieldReordered, Direction::Backward);
    let written = read::<AbU32>(&finding).unwrap();
    let read = read::<BaU32>(&finding).unwrap();
    assert_ne!((read.a, read.b), (written.a, written.b));
}

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered)]
struct KeyedAb {
    #[codec(key = 0)]
    a: u32,
    #[codec(key = 1)]
    b: u32,
}

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered)]
struct KeyedBa {
    #[codec(key = 0)]
    b: u32,
    #[codec(key = 1)]
    a: u32,
}

#[test]
fn a_field_moved_to_another_key_reads_wrong() {
    let old = keyed(vec![(0, f("a", u(32))), (1, f("b", u(32)))]);
    let new = keyed(vec![(0, f("b", u(32))), (1, f("a", u(32)))]);
    let r = findings(old, new, Mode::Backward);
    let finding = the(&r, Rule::FieldKeyChanged, Direction::Backward);
    let written = read::<KeyedAb>(&finding).unwrap();
    let read = read::<KeyedBa>(&finding).unwrap();
    assert_ne!((read.a, read.b), (written.a, written.b));
}

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered)]
struct Pair(u8, u8);

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered)]
struct NamedPair {
    #[allow(dead_code)]
    a: u8,
    #[allow(dead_code)]
    b: String,
}

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered, as_array)]
struct NamedPairArray {
    #[allow(dead_code)]
    b: String,
    #[allow(dead_code)]
    a: u8,
}

#[test]
fn layouts_that_do_not_follow() {
    // a map given to a tuple struct
    let old = map(vec![f("a", u(8)), f("b", u(8))]);
    let new = arr(vec![f("0", u(8)), f("1", u(8))]);
    let r = findings(old, new, Mode::Backward);
    refused::<Pair>(&the(&r, Rule::LayoutChanged, Direction::Backward));
    let _ = Pair(0, 0);
    // an array given to a map-layout reader, which reads it in its
    // declaration order: here not the writer's
    let old = map(vec![f("a", u(8)), f("b", Shape::Str)]);
    let new = arr(vec![f("b", Shape::Str), f("a", u(8))]);
    let r = findings(old, new, Mode::Full);
    // the new reader reads the old maps by name
    assert!(
        !r.findings
            .iter()
            .any(|f| f.direction == Direction::Backward),
        "{r}"
    );
    refused::<NamedPair>(&the(&r, Rule::LayoutChanged, Direction::Forward));
    let _ = NamedPairArray {
        b: String::new(),
        a: 0,
    };
}

// ---- unions and enums ----

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered, union)]
enum Closed {
    #[codec(tag = 0)]
    A,
}

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered, union)]
enum Open {
    #[codec(tag = 0)]
    A,
    #[codec(other)]
    Other(u32, RawValue),
}

fn union(variants: Vec<VariantShape>, catch_all: bool) -> Shape {
    let mut variants = variants;
    if catch_all {
        variants.push(VariantShape {
            name: "Other".into(),
            tag: None,
            payload: Payload::Tuple(vec![u(32), Shape::Opaque]),
        });
    }
    Shape::Union(Union::new(
        variants,
        catch_all.then(|| "Other".into()),
        vec![],
    ))
}

fn tagged(name: &str, tag: u32, payload: Payload) -> VariantShape {
    VariantShape {
        name: name.into(),
        tag: Some(tag),
        payload,
    }
}

#[test]
fn union_variants_added_and_removed() {
    let a = || tagged("A", 0, Payload::Unit);
    let b = || tagged("B", 1, Payload::Newtype(Shape::Str));
    let r = findings(
        union(vec![a()], false),
        union(vec![a(), b()], false),
        Mode::Forward,
    );
    refused::<Closed>(&the(&r, Rule::VariantAdded, Direction::Forward));
    let r = findings(
        union(vec![a(), b()], false),
        union(vec![a()], false),
        Mode::Backward,
    );
    refused::<Closed>(&the(&r, Rule::VariantRemoved, Direction::Backward));
    // a catch-all takes the new variant
    let r = findings(
        union(vec![a()], true),
        union(vec![a(), b()], true),
        Mode::Full,
    );
    assert!(r.is_compatible(), "{r}");
    let mut new = set(union(vec![a(), b()], true));
    let mut codec = new.get("c").unwrap().clone();
    if let Shape::Union(u) = &mut codec.shape {
        u.variants.retain(|v| v.name == "B");
    }
    new.insert(codec);
    let bytes = to_vec(&sample(new.get("c").unwrap())).unwrap();
    assert!(matches!(
        from_slice::<Open>(&bytes).unwrap(),
        Open::Other(1, _)
    ));
    let _ = (Closed::A, Open::A);
}

#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered)]
enum Named {
    A,
    #[allow(dead_code)]
    C(u32),
}

#[test]
fn a_named_enum_variant_renamed_is_refused() {
    let v = |name: &str, payload| VariantShape {
        name: name.into(),
        tag: None,
        payload,
    };
    let old = Shape::Enum(Enum::new(
        vec![v("A", Payload::Unit), v("B", Payload::Newtype(u(32)))],
        vec![],
    ));
    let new = Shape::Enum(Enum::new(
        vec![v("A", Payload::Unit), v("C", Payload::Newtype(u(32)))],
        vec![],
    ));
    let r = findings(old, new, Mode::Backward);
    refused::<Named>(&the(&r, Rule::VariantRenamed, Direction::Backward));
    let _ = Named::A;
}
