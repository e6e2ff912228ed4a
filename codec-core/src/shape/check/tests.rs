use std::collections::BTreeMap;

use super::*;

// ---- building shapes by hand ----

fn u(bits: u8) -> Shape {
    Shape::int(false, bits)
}

fn i(bits: u8) -> Shape {
    Shape::int(true, bits)
}

fn opt(s: Shape) -> Shape {
    Shape::Option(Box::new(s))
}

fn req(name: &str, shape: Shape) -> FieldShape {
    FieldShape {
        name: name.into(),
        key: None,
        optional: false,
        shape,
    }
}

/// An optional field: an `Option`, or a field with a default.
fn optional(name: &str, shape: Shape) -> FieldShape {
    FieldShape {
        optional: true,
        ..req(name, shape)
    }
}

fn keyed(key: u32, mut f: FieldShape) -> FieldShape {
    f.key = Some(key);
    f
}

fn map(fields: Vec<FieldShape>) -> Shape {
    Shape::Record(Record::new(Layout::Map, fields, vec![]))
}

fn map_reserving(fields: Vec<FieldShape>, reserved: Vec<Reserved>) -> Shape {
    Shape::Record(Record::new(Layout::Map, fields, reserved))
}

/// An `as_array` record: positions in the order given.
fn arr(fields: Vec<FieldShape>) -> Shape {
    let fields = fields
        .into_iter()
        .enumerate()
        .map(|(p, f)| keyed(p as u32, f))
        .collect();
    Shape::Record(Record::new(Layout::Array, fields, vec![]))
}

fn keyed_record(fields: Vec<FieldShape>, reserved: Vec<Reserved>) -> Shape {
    Shape::Record(Record::new(Layout::Keyed, fields, reserved))
}

fn variant(name: &str, tag: Option<u32>, payload: Payload) -> VariantShape {
    VariantShape {
        name: name.into(),
        tag,
        payload,
    }
}

fn unit(name: &str, tag: u32) -> VariantShape {
    variant(name, Some(tag), Payload::Unit)
}

fn newtype(name: &str, tag: u32, s: Shape) -> VariantShape {
    variant(name, Some(tag), Payload::Newtype(s))
}

fn union(variants: Vec<VariantShape>, catch_all: bool, reserved: Vec<u32>) -> Shape {
    let mut variants = variants;
    if catch_all {
        variants.push(variant(
            "Other",
            None,
            Payload::Tuple(vec![u(32), Shape::Opaque]),
        ));
    }
    Shape::Union(Union::new(
        variants,
        catch_all.then(|| "Other".into()),
        reserved.into_iter().map(Reserved::Int).collect(),
    ))
}

fn enumeration(variants: Vec<VariantShape>) -> Shape {
    let variants = variants
        .into_iter()
        .map(|v| VariantShape { tag: None, ..v })
        .collect();
    Shape::Enum(Enum::new(variants, vec![]))
}

fn codec(name: &str, shape: Shape) -> CodecShape {
    CodecShape {
        name: name.into(),
        aliases: vec![],
        shape,
        refs: BTreeMap::new(),
    }
}

fn set(codecs: impl IntoIterator<Item = CodecShape>) -> ShapeSet {
    ShapeSet::from_codecs(codecs)
}

// ---- checking, with every witness held to the model of the readers ----

fn run_sets(old: &ShapeSet, new: &ShapeSet, mode: Mode) -> Report {
    let report = check(old, new, mode);
    if let Err(e) = verify(&report, std::slice::from_ref(old), new) {
        panic!("{e}\n{report}");
    }
    report
}

fn run(old: Shape, new: Shape, mode: Mode) -> Report {
    run_sets(&set([codec("c", old)]), &set([codec("c", new)]), mode)
}

/// The (rule, direction, path) of each finding.
fn found(report: &Report) -> Vec<(Rule, Direction, String)> {
    report
        .findings
        .iter()
        .map(|f| (f.rule, f.direction, f.path.clone()))
        .collect()
}

const B: Direction = Direction::Backward;
const F: Direction = Direction::Forward;

fn one(rule: Rule, dir: Direction, path: &str) -> Vec<(Rule, Direction, String)> {
    vec![(rule, dir, path.to_owned())]
}

/// Runs the pair in BACKWARD, FORWARD and FULL and compares with what
/// each should find.
fn expect(
    old: Shape,
    new: Shape,
    backward: Vec<(Rule, Direction, String)>,
    forward: Vec<(Rule, Direction, String)>,
) {
    let b = run(old.clone(), new.clone(), Mode::Backward);
    assert_eq!(found(&b), backward, "BACKWARD\n{b}");
    let f = run(old.clone(), new.clone(), Mode::Forward);
    assert_eq!(found(&f), forward, "FORWARD\n{f}");
    let full = run(old, new, Mode::Full);
    let mut both = backward;
    both.extend(forward);
    both.sort_by(|a, b| (a.1, &a.2, a.0).cmp(&(b.1, &b.2, b.0)));
    assert_eq!(found(&full), both, "FULL\n{full}");
}

fn witness(report: &Report, rule: Rule, dir: Direction) -> String {
    report
        .findings
        .iter()
        .find(|f| f.rule == rule && f.direction == dir)
        .and_then(|f| f.witness.as_ref())
        .map(|w| w.json.clone())
        .unwrap_or_else(|| panic!("no {rule} {dir} witness in\n{report}"))
}

// ---- array layout ----

#[test]
fn a_field_inserted_in_an_array_shifts_the_rest_both_ways() {
    let old = arr(vec![req("a", u(32)), req("b", Shape::Str)]);
    let new = arr(vec![req("a", u(32)), req("x", u(32)), req("b", Shape::Str)]);
    expect(
        old.clone(),
        new.clone(),
        one(Rule::FieldInserted, B, "x"),
        one(Rule::FieldInserted, F, "x"),
    );
    let r = run(old, new, Mode::Full);
    // old [a, b]: the new reader reads "2" as x; the new [a, x, b] is too
    // long for the old reader.
    assert_eq!(witness(&r, Rule::FieldInserted, B), r#"[1,"2"]"#);
    assert_eq!(witness(&r, Rule::FieldInserted, F), r#"[1,2,"3"]"#);
}

#[test]
fn fields_reordered_in_an_array() {
    let old = arr(vec![req("a", u(32)), req("b", u(32))]);
    let new = arr(vec![req("b", u(32)), req("a", u(32))]);
    expect(
        old,
        new,
        one(Rule::FieldReordered, B, "b"),
        one(Rule::FieldReordered, F, "b"),
    );
}

#[test]
fn a_field_deleted_from_an_array() {
    let old = arr(vec![req("a", u(32)), req("b", Shape::Str), req("c", u(32))]);
    let new = arr(vec![req("a", u(32)), req("c", u(32))]);
    expect(
        old,
        new,
        one(Rule::FieldDeleted, B, "b"),
        one(Rule::FieldDeleted, F, "b"),
    );
}

#[test]
fn the_last_field_deleted_from_an_array() {
    // The new reader refuses the old, longer arrays; the old reader
    // requires the field.
    let old = arr(vec![req("a", u(32)), req("b", u(32))]);
    let new = arr(vec![req("a", u(32))]);
    expect(
        old,
        new,
        one(Rule::FieldDeleted, B, "b"),
        one(Rule::FieldRemovedRequired, F, "b"),
    );
}

#[test]
fn a_field_appended_to_an_array_breaks_older_readers() {
    let old = arr(vec![req("a", u(32))]);
    let new = arr(vec![req("a", u(32)), optional("b", opt(u(32)))]);
    expect(old.clone(), new, vec![], one(Rule::FieldAppended, F, "b"));
    let required = arr(vec![req("a", u(32)), req("b", u(32))]);
    expect(
        old,
        required,
        one(Rule::FieldAddedRequired, B, "b"),
        one(Rule::FieldAppended, F, "b"),
    );
}

#[test]
fn a_field_renamed_in_place_in_an_array_is_no_change() {
    let old = arr(vec![req("a", u(32)), req("b", u(32))]);
    let new = arr(vec![req("a", u(32)), req("renamed", u(32))]);
    expect(old, new, vec![], vec![]);
}

// ---- keyed layout ----

#[test]
fn a_field_moved_to_another_key() {
    let old = keyed_record(
        vec![keyed(0, req("a", u(32))), keyed(1, req("b", u(32)))],
        vec![],
    );
    let new = keyed_record(
        vec![keyed(0, req("b", u(32))), keyed(1, req("a", u(32)))],
        vec![],
    );
    expect(
        old,
        new,
        vec![
            (Rule::FieldKeyChanged, B, "a".into()),
            (Rule::FieldKeyChanged, B, "b".into()),
        ],
        vec![
            (Rule::FieldKeyChanged, F, "a".into()),
            (Rule::FieldKeyChanged, F, "b".into()),
        ],
    );
}

#[test]
fn keyed_records_grow_both_ways_with_optional_fields() {
    let old = keyed_record(vec![keyed(0, req("id", u(64)))], vec![]);
    let new = keyed_record(
        vec![
            keyed(0, req("id", u(64))),
            keyed(3, optional("note", opt(Shape::Str))),
        ],
        vec![],
    );
    expect(old.clone(), new, vec![], vec![]);
    let required = keyed_record(
        vec![
            keyed(0, req("id", u(64))),
            keyed(3, req("note", Shape::Str)),
        ],
        vec![],
    );
    expect(
        old,
        required,
        one(Rule::FieldAddedRequired, B, "note"),
        vec![],
    );
}

#[test]
fn a_keyed_default_field_takes_nil() {
    // decode.rs seq_block: nil at a `default` field is its default.
    let old = keyed_record(vec![keyed(0, optional("n", opt(u(32))))], vec![]);
    let new = keyed_record(vec![keyed(0, optional("n", u(32)))], vec![]);
    let r = run(old, new, Mode::Backward);
    assert!(r.is_compatible(), "{r}");
}

#[test]
fn a_keyed_key_removed_must_be_reserved() {
    let old = keyed_record(
        vec![
            keyed(0, req("id", u(64))),
            keyed(1, optional("note", opt(Shape::Str))),
        ],
        vec![],
    );
    let new = keyed_record(vec![keyed(0, req("id", u(64)))], vec![]);
    expect(
        old.clone(),
        new,
        one(Rule::RemovedNotReserved, B, "note"),
        vec![],
    );
    let reserving = keyed_record(vec![keyed(0, req("id", u(64)))], vec![Reserved::Int(1)]);
    expect(old, reserving.clone(), vec![], vec![]);
    // and taken again
    let reused = keyed_record(
        vec![
            keyed(0, req("id", u(64))),
            keyed(1, optional("n", opt(u(8)))),
        ],
        vec![],
    );
    expect(reserving, reused, one(Rule::ReservedReused, B, "n"), vec![]);
}

// ---- map layout ----

#[test]
fn a_new_field_that_may_not_be_missing() {
    let old = map(vec![req("id", u(64))]);
    let new = map(vec![req("id", u(64)), req("note", Shape::Str)]);
    expect(
        old.clone(),
        new.clone(),
        one(Rule::FieldAddedRequired, B, "note"),
        vec![],
    );
    let r = run(old, new, Mode::Backward);
    assert_eq!(witness(&r, Rule::FieldAddedRequired, B), r#"{"id":0}"#);
    assert!(r.findings[0].fix.contains("#[codec(default)]"), "{r}");
}

#[test]
fn a_renamed_map_field_is_suggested_a_rename() {
    let old = map(vec![req("sku", Shape::Str)]);
    let new = map_reserving(
        vec![req("code", Shape::Str)],
        vec![Reserved::Name("sku".into())],
    );
    let r = run(old, new, Mode::Backward);
    assert_eq!(found(&r), one(Rule::FieldAddedRequired, B, "code"));
    assert!(
        r.findings[0].fix.contains(r#"#[codec(rename = "sku")]"#),
        "{}",
        r.findings[0].fix
    );
}

#[test]
fn a_field_the_old_reader_requires_removed() {
    let old = map(vec![req("id", u(64)), req("note", Shape::Str)]);
    let new = map_reserving(vec![req("id", u(64))], vec![Reserved::Name("note".into())]);
    expect(old, new, vec![], one(Rule::FieldRemovedRequired, F, "note"));
}

#[test]
fn a_field_removed_without_reserving_it() {
    let old = map(vec![req("id", u(64)), optional("note", opt(Shape::Str))]);
    let new = map(vec![req("id", u(64))]);
    expect(old, new, one(Rule::RemovedNotReserved, B, "note"), vec![]);
}

#[test]
fn a_reserved_name_reused_and_a_reservation_dropped() {
    let old = map_reserving(vec![req("id", u(64))], vec![Reserved::Name("note".into())]);
    let reused = map_reserving(
        vec![req("id", u(64)), optional("note", opt(u(8)))],
        vec![Reserved::Name("note".into())],
    );
    expect(
        old.clone(),
        reused,
        one(Rule::ReservedReused, B, "note"),
        vec![],
    );
    let dropped = map(vec![req("id", u(64))]);
    expect(
        old,
        dropped,
        one(Rule::RemovedNotReserved, B, "note"),
        vec![],
    );
}

#[test]
fn reservations_are_not_checked_forward() {
    let old = map(vec![req("id", u(64)), optional("note", opt(Shape::Str))]);
    let new = map(vec![req("id", u(64))]);
    assert!(run(old, new, Mode::Forward).is_compatible());
}

// ---- unions and enums ----

#[test]
fn a_union_variant_removed_where_the_reader_has_no_catch_all() {
    let old = union(vec![unit("A", 0), newtype("B", 1, u(32))], false, vec![]);
    let new = union(vec![unit("A", 0)], false, vec![1]);
    expect(old.clone(), new, one(Rule::VariantRemoved, B, "B"), vec![]);
    let r = run(
        old.clone(),
        union(vec![unit("A", 0)], false, vec![1]),
        Mode::Backward,
    );
    assert_eq!(witness(&r, Rule::VariantRemoved, B), "[1,0]");
    // a catch-all takes it
    let catching = union(vec![unit("A", 0)], true, vec![1]);
    expect(old.clone(), catching, vec![], vec![]);
    // not reserved
    let unreserved = union(vec![unit("A", 0)], true, vec![]);
    expect(
        old,
        unreserved,
        one(Rule::RemovedNotReserved, B, "B"),
        vec![],
    );
}

#[test]
fn a_union_variant_added_where_the_old_reader_has_no_catch_all() {
    let old = union(vec![unit("A", 0)], false, vec![]);
    let new = union(
        vec![unit("A", 0), newtype("B", 1, Shape::Str)],
        false,
        vec![],
    );
    expect(old, new, vec![], one(Rule::VariantAdded, F, "B"));
}

#[test]
fn a_union_tag_changed() {
    let old = union(vec![unit("A", 0), unit("B", 1)], false, vec![]);
    let new = union(vec![unit("A", 0), unit("B", 2)], false, vec![1]);
    expect(
        old,
        new,
        one(Rule::VariantTagChanged, B, "B"),
        one(Rule::VariantTagChanged, F, "B"),
    );
}

#[test]
fn a_union_tag_reused() {
    let old = union(vec![unit("A", 0)], true, vec![1]);
    let new = union(vec![unit("A", 0), unit("C", 1)], true, vec![]);
    expect(old, new, one(Rule::ReservedReused, B, "C"), vec![]);
}

#[test]
fn a_union_variant_payload_changed() {
    let old = union(vec![newtype("A", 0, u(64))], false, vec![]);
    let new = union(vec![newtype("A", 0, u(16))], false, vec![]);
    let r = run(old, new, Mode::Backward);
    assert_eq!(found(&r), one(Rule::IntegerNarrowed, B, "A"));
    assert_eq!(witness(&r, Rule::IntegerNarrowed, B), "[0,65536]");
    // unit to a payload: nil read as the payload
    let old = union(vec![unit("A", 0)], false, vec![]);
    let new = union(vec![newtype("A", 0, u(8))], false, vec![]);
    let r = run(old, new, Mode::Backward);
    assert_eq!(found(&r), one(Rule::TypeChanged, B, "A"));
}

#[test]
fn a_named_enum_variant_removed_added_and_renamed() {
    let a = || variant("A", None, Payload::Unit);
    let b = || variant("B", None, Payload::Newtype(u(32)));
    let old = enumeration(vec![a(), b()]);
    expect(
        old.clone(),
        enumeration(vec![a()]),
        vec![
            (Rule::RemovedNotReserved, B, "B".into()),
            (Rule::VariantRemoved, B, "B".into()),
        ],
        vec![],
    );
    expect(
        enumeration(vec![a()]),
        old.clone(),
        vec![],
        one(Rule::VariantAdded, F, "B"),
    );
    let renamed = enumeration(vec![a(), variant("C", None, Payload::Newtype(u(32)))]);
    expect(
        old.clone(),
        renamed.clone(),
        vec![
            (Rule::RemovedNotReserved, B, "B".into()),
            (Rule::VariantRenamed, B, "B".into()),
        ],
        one(Rule::VariantRenamed, F, "C"),
    );
    let r = run(old, renamed, Mode::Backward);
    assert_eq!(witness(&r, Rule::VariantRenamed, B), r#"{"B":0}"#);
    assert!(
        r.findings.iter().any(|f| f.fix.contains(r#"rename = "B""#)),
        "{r}"
    );
}

#[test]
fn a_named_enum_variant_given_data() {
    let old = enumeration(vec![variant("A", None, Payload::Unit)]);
    let new = enumeration(vec![variant("A", None, Payload::Newtype(u(8)))]);
    expect(
        old,
        new,
        one(Rule::TypeChanged, B, "A"),
        one(Rule::TypeChanged, F, "A"),
    );
}

#[test]
fn a_tuple_variant_grows() {
    let v = |items: Vec<Shape>| {
        union(
            vec![variant("T", Some(0), Payload::Tuple(items))],
            false,
            vec![],
        )
    };
    // a trailing Option: newer readers fill it in, older ones refuse the
    // longer array
    expect(
        v(vec![u(8)]),
        v(vec![u(8), opt(u(8))]),
        vec![],
        one(Rule::TupleLengthChanged, F, "T"),
    );
    expect(
        v(vec![u(8)]),
        v(vec![u(8), u(8)]),
        one(Rule::TupleLengthChanged, B, "T"),
        one(Rule::TupleLengthChanged, F, "T"),
    );
}

// ---- wire types ----

fn field(s: Shape) -> Shape {
    map(vec![req("x", s)])
}

#[test]
fn integers_narrowed_and_widened() {
    expect(
        field(u(64)),
        field(u(32)),
        one(Rule::IntegerNarrowed, B, "x"),
        vec![],
    );
    let r = run(field(u(64)), field(u(32)), Mode::Backward);
    assert_eq!(witness(&r, Rule::IntegerNarrowed, B), r#"{"x":4294967296}"#);
    // Widening: new readers read every old value; old readers refuse the
    // new writer's values above the old type's range.
    expect(
        field(u(32)),
        field(u(64)),
        vec![],
        one(Rule::IntegerNarrowed, F, "x"),
    );
    expect(
        field(i(8)),
        field(i(64)),
        vec![],
        one(Rule::IntegerNarrowed, F, "x"),
    );
}

#[test]
fn integers_change_sign() {
    expect(
        field(i(32)),
        field(u(32)),
        one(Rule::IntegerSignChanged, B, "x"),
        one(Rule::IntegerSignChanged, F, "x"),
    );
    let r = run(field(i(32)), field(u(32)), Mode::Full);
    assert_eq!(witness(&r, Rule::IntegerSignChanged, B), r#"{"x":-1}"#);
    assert_eq!(
        witness(&r, Rule::IntegerSignChanged, F),
        r#"{"x":2147483648}"#
    );
    // u8 fits i16
    expect(
        field(u(8)),
        field(i(16)),
        vec![],
        one(Rule::IntegerSignChanged, F, "x"),
    );
    // u128 reads what a u64 writes, i128 any integer
    expect(field(u(64)), field(u(128)), vec![], vec![]);
    expect(
        field(i(64)),
        field(i(128)),
        vec![],
        one(Rule::IntegerNarrowed, F, "x"),
    );
}

#[test]
fn integers_become_floats() {
    // a f64 reads every u32 exactly, not every u64
    expect(
        field(u(32)),
        field(Shape::F64),
        vec![],
        one(Rule::IntegerFloatChanged, F, "x"),
    );
    expect(
        field(u(64)),
        field(Shape::F64),
        one(Rule::IntegerFloatChanged, B, "x"),
        one(Rule::IntegerFloatChanged, F, "x"),
    );
    let r = run(field(u(64)), field(Shape::F64), Mode::Backward);
    assert_eq!(
        witness(&r, Rule::IntegerFloatChanged, B),
        r#"{"x":9007199254740993}"#
    );
    expect(
        field(i(32)),
        field(Shape::F32),
        one(Rule::IntegerFloatChanged, B, "x"),
        one(Rule::IntegerFloatChanged, F, "x"),
    );
}

#[test]
fn floats_narrowed_and_widened() {
    expect(
        field(Shape::F64),
        field(Shape::F32),
        one(Rule::FloatNarrowed, B, "x"),
        vec![],
    );
    expect(
        field(Shape::F32),
        field(Shape::F64),
        vec![],
        one(Rule::FloatNarrowed, F, "x"),
    );
}

#[test]
fn strings_become_bytes() {
    expect(
        field(Shape::Str),
        field(Shape::Bin),
        vec![],
        one(Rule::StrBinChanged, F, "x"),
    );
    expect(
        field(Shape::Bin),
        field(Shape::Str),
        one(Rule::StrBinChanged, B, "x"),
        vec![],
    );
}

#[test]
fn a_value_becomes_an_option() {
    expect(
        field(u(32)),
        field(opt(u(32))),
        vec![],
        one(Rule::NilRejected, F, "x"),
    );
    let r = run(field(u(32)), field(opt(u(32))), Mode::Forward);
    assert_eq!(witness(&r, Rule::NilRejected, F), r#"{"x":null}"#);
    // and back: a field with a default is still no `Option`
    let old = map(vec![optional("x", opt(u(32)))]);
    let new = map(vec![optional("x", u(32))]);
    expect(old, new, one(Rule::NilRejected, B, "x"), vec![]);
}

#[test]
fn tuples_change_length() {
    let pair = Shape::Tuple(vec![u(8), u(8)]);
    let triple = Shape::Tuple(vec![u(8), u(8), u(8)]);
    expect(
        field(pair.clone()),
        field(triple),
        one(Rule::TupleLengthChanged, B, "x"),
        one(Rule::TupleLengthChanged, F, "x"),
    );
    expect(
        field(pair.clone()),
        field(Shape::Array(Box::new(u(8)))),
        vec![],
        one(Rule::TupleLengthChanged, F, "x"),
    );
    expect(
        field(pair),
        field(Shape::Tuple(vec![u(8), u(16)])),
        vec![],
        one(Rule::IntegerNarrowed, F, "x[1]"),
    );
}

#[test]
fn extension_codes_change() {
    expect(
        field(Shape::Ext(crate::ext::UUID)),
        field(Shape::Ext(crate::ext::TIMESTAMP)),
        one(Rule::ExtCodeChanged, B, "x"),
        one(Rule::ExtCodeChanged, F, "x"),
    );
}

#[test]
fn kinds_change() {
    expect(
        field(u(32)),
        field(Shape::Array(Box::new(u(32)))),
        one(Rule::TypeChanged, B, "x"),
        one(Rule::TypeChanged, F, "x"),
    );
    expect(
        field(Shape::Str),
        field(Shape::Map(Box::new(Shape::Str), Box::new(Shape::Str))),
        one(Rule::TypeChanged, B, "x"),
        one(Rule::TypeChanged, F, "x"),
    );
    expect(
        field(Shape::Bool),
        field(u(8)),
        one(Rule::TypeChanged, B, "x"),
        one(Rule::TypeChanged, F, "x"),
    );
}

#[test]
fn json_readers_take_all_but_bytes_and_extensions() {
    let rich = map(vec![
        req("n", u(64)),
        req("s", Shape::Str),
        req("l", Shape::Array(Box::new(opt(Shape::F64)))),
    ]);
    expect(
        field(rich),
        field(Shape::Json),
        vec![],
        one(Rule::TypeChanged, F, "x"),
    );
    expect(
        field(Shape::Array(Box::new(Shape::Bin))),
        field(Shape::Json),
        one(Rule::TypeChanged, B, "x[]"),
        one(Rule::TypeChanged, F, "x"),
    );
}

// ---- layouts ----

#[test]
fn a_map_given_to_a_tuple_struct() {
    let old = map(vec![req("a", u(8)), req("b", u(8))]);
    let new = arr(vec![req("0", u(8)), req("1", u(8))]);
    expect(
        old,
        new,
        one(Rule::LayoutChanged, B, ""),
        one(Rule::LayoutChanged, F, ""),
    );
}

#[test]
fn as_array_added_to_a_named_struct() {
    // The new reader reads old maps by name; the old reader would read the
    // new arrays by its declaration order, which its shape does not keep.
    let old = map(vec![req("a", u(8)), req("b", u(8))]);
    let new = arr(vec![req("a", u(8)), req("b", u(8))]);
    expect(old, new, vec![], one(Rule::LayoutChanged, F, ""));
}

#[test]
fn keyed_to_array_is_read_by_position() {
    let old = keyed_record(
        vec![keyed(0, req("a", u(8))), keyed(2, req("b", u(8)))],
        vec![],
    );
    let new = arr(vec![req("a", u(8)), req("b", u(8))]);
    // the old writer writes [a, nil, b]: too long, and nil at `b`
    let r = run(old, new, Mode::Backward);
    assert_eq!(found(&r), one(Rule::LayoutChanged, B, "b"));
    assert_eq!(witness(&r, Rule::LayoutChanged, B), "[0,null,0]");
}

// ---- codecs ----

#[test]
fn codecs_removed_and_renamed() {
    let old = set([codec("a", field(u(8)))]);
    let r = run_sets(&old, &set([]), Mode::Full);
    assert_eq!(found(&r), one(Rule::CodecRemoved, B, ""));
    // renamed without an alias: the same shape under a new name
    let r = run_sets(&old, &set([codec("b", field(u(8)))]), Mode::Full);
    assert_eq!(
        found(&r),
        vec![
            (Rule::CodecRenamed, B, String::new()),
            (Rule::CodecRenamed, F, String::new())
        ]
    );
    assert_eq!(r.findings[0].codec, "b");
    assert!(r.findings[0].fix.contains(r#"#[codec(aliases("a"))]"#));
    // with the old name as an alias: new nodes read old messages, old ones
    // do not know the new name
    let mut renamed = codec("b", field(u(8)));
    renamed.aliases = vec!["a".into()];
    let r = run_sets(&old, &set([renamed.clone()]), Mode::Full);
    assert_eq!(found(&r), one(Rule::CodecRenamed, F, ""));
    // aliases first: the old build knew the new name
    let mut knowing = codec("a", field(u(8)));
    knowing.aliases = vec!["b".into()];
    let r = run_sets(&set([knowing]), &set([renamed]), Mode::Full);
    assert!(r.is_compatible(), "{r}");
}

#[test]
fn a_renamed_codec_is_compared_under_its_alias() {
    let old = set([codec("a", field(u(64)))]);
    let mut renamed = codec("b", field(u(32)));
    renamed.aliases = vec!["a".into()];
    let r = run_sets(&old, &set([renamed]), Mode::Backward);
    assert_eq!(found(&r), one(Rule::IntegerNarrowed, B, "x"));
    assert_eq!(r.findings[0].codec, "b");
}

// ---- what must pass ----

#[test]
fn compatible_changes_pass_full() {
    let full = |old: ShapeSet, new: ShapeSet| {
        let r = run_sets(&old, &new, Mode::Full);
        assert!(r.is_compatible(), "{r}");
    };
    let one_codec = |s: Shape| set([codec("c", s)]);
    // a new optional field, map and keyed
    full(
        one_codec(map(vec![req("id", u(64))])),
        one_codec(map(vec![
            req("id", u(64)),
            optional("note", opt(Shape::Str)),
        ])),
    );
    full(
        one_codec(keyed_record(vec![keyed(0, req("id", u(64)))], vec![])),
        one_codec(keyed_record(
            vec![keyed(0, req("id", u(64))), keyed(1, optional("n", u(8)))],
            vec![],
        )),
    );
    // a new union variant where the reader has a catch-all
    full(
        one_codec(union(vec![unit("A", 0)], true, vec![])),
        one_codec(union(
            vec![unit("A", 0), newtype("B", 1, Shape::Str)],
            true,
            vec![],
        )),
    );
    // a renamed Rust type under the same codec name: identical shapes
    let order = map(vec![
        req("id", u(64)),
        req("lines", Shape::Array(Box::new(Shape::Ref("line".into())))),
    ]);
    let mut with_refs = codec("shop.order", order);
    with_refs
        .refs
        .insert("line".into(), map(vec![req("sku", Shape::Str)]));
    full(set([with_refs.clone()]), set([with_refs.clone()]));
    // an added alias
    let mut aliased = with_refs.clone();
    aliased.aliases = vec!["shop::Order".into()];
    full(set([with_refs]), set([aliased]));
    // integer widening passes BACKWARD (FORWARD is `integers_narrowed_and_widened`)
    let r = run(field(u(32)), field(u(64)), Mode::Backward);
    assert!(r.is_compatible(), "{r}");
}

// ---- references, paths, recursion, opaque ----

fn order_codec(sku: Shape) -> CodecShape {
    let order = map(vec![
        req("id", u(64)),
        req(
            "lines",
            Shape::Array(Box::new(Shape::Ref("shop.line".into()))),
        ),
    ]);
    let mut c = codec("shop.order", order);
    c.refs.insert(
        "shop.line".into(),
        map(vec![req("qty", u(32)), req("sku", sku)]),
    );
    c
}

#[test]
fn paths_go_through_references_and_arrays() {
    let r = run_sets(
        &set([order_codec(Shape::Str)]),
        &set([order_codec(Shape::Bin)]),
        Mode::Full,
    );
    assert_eq!(found(&r), one(Rule::StrBinChanged, F, "lines[].sku"));
    assert_eq!(
        witness(&r, Rule::StrBinChanged, F),
        r#"{"id":0,"lines":[{"qty":0,"sku":"/w=="}]}"#
    );
    assert_eq!(r.codecs, 1);
}

#[test]
fn recursive_types_end() {
    let tree = |v: Shape| {
        // `kids` refers to the codec itself, `next` through another name
        let mut c = codec(
            "tree",
            map(vec![
                req("v", v),
                req("kids", Shape::Array(Box::new(Shape::Ref("tree".into())))),
                req("next", opt(Shape::Ref("link".into()))),
            ]),
        );
        c.refs.insert(
            "link".into(),
            map(vec![req("to", Shape::Ref("tree".into()))]),
        );
        c
    };
    let r = run_sets(&set([tree(u(64))]), &set([tree(u(32))]), Mode::Full);
    assert_eq!(found(&r), one(Rule::IntegerNarrowed, B, "v"));
    let r = run_sets(
        &set([tree(u(64))]),
        &set([tree(u(64))]),
        Mode::FullTransitive,
    );
    assert!(r.is_compatible());
}

#[test]
fn opaque_places_are_counted_not_compared() {
    let old = map(vec![req("a", Shape::Opaque), req("b", u(8))]);
    let new = map(vec![req("a", u(8)), req("b", u(8))]);
    let r = run(old, new, Mode::Full);
    assert!(r.is_compatible(), "{r}");
    assert_eq!(r.unchecked, 1);
    // a reference without a definition too
    let r = run(
        field(Shape::Ref("nowhere".into())),
        field(u(8)),
        Mode::Backward,
    );
    assert!(r.is_compatible());
    assert_eq!(r.unchecked, 1);
}

// ---- history ----

#[test]
fn transitive_modes_check_every_snapshot() {
    // v1 -> v2: `b` arrives with a default; v2 -> v3: the default goes, v2
    // writers write `b`. v1 writers never did.
    let v1 = set([codec("c", map(vec![req("a", u(8))]))]);
    let v2 = set([codec("c", map(vec![req("a", u(8)), optional("b", u(8))]))]);
    let v3 = set([codec("c", map(vec![req("a", u(8)), req("b", u(8))]))]);
    assert!(check(&v1, &v2, Mode::Backward).is_compatible());
    assert!(check(&v2, &v3, Mode::Backward).is_compatible());
    let history = [v1.clone(), v2.clone()];
    let plain = check_history(&history, &v3, Mode::Backward);
    assert!(plain.is_compatible(), "{plain}");
    assert_eq!(plain.snapshots, 1);
    let transitive = check_history(&history, &v3, Mode::BackwardTransitive);
    assert_eq!(found(&transitive), one(Rule::FieldAddedRequired, B, "b"));
    assert_eq!(transitive.findings[0].snapshot, 0);
    assert_eq!(transitive.snapshots, 2);
    verify(&transitive, &history, &v3).unwrap();
}

#[test]
fn a_finding_against_several_snapshots_is_reported_once() {
    let v1 = set([codec("c", field(u(64)))]);
    let v3 = set([codec("c", field(u(8)))]);
    let r = check_history(&[v1.clone(), v1], &v3, Mode::FullTransitive);
    assert_eq!(found(&r), one(Rule::IntegerNarrowed, B, "x"));
    assert_eq!(r.findings[0].snapshot, 1);
}

// ---- modes, rules, report ----

#[test]
fn modes_parse_as_the_cli_spells_them() {
    assert_eq!(
        Mode::parse("backward-transitive"),
        Some(Mode::BackwardTransitive)
    );
    assert_eq!(Mode::parse("FULL_TRANSITIVE"), Some(Mode::FullTransitive));
    assert_eq!("forward".parse::<Mode>(), Ok(Mode::Forward));
    assert!("sideways".parse::<Mode>().is_err());
    for m in Mode::ALL {
        assert_eq!(Mode::parse(m.as_str()), Some(m));
    }
}

#[test]
fn the_rules_table_lists_every_rule() {
    let source = include_str!("../check.rs");
    let rows: Vec<&str> = source
        .lines()
        .filter(|l| l.starts_with("//! | `"))
        .collect();
    assert_eq!(rows.len(), Rule::ALL.len());
    for (rule, row) in Rule::ALL.iter().zip(&rows) {
        assert!(
            row.starts_with(&format!("//! | `{}` |", rule.as_str())),
            "{row}"
        );
        assert!(!rule.description().is_empty());
        let name = rule.as_str();
        assert!(
            name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'),
            "{name}"
        );
    }
}

#[test]
fn the_report_is_a_table_for_people() {
    let r = run(field(u(64)), field(u(32)), Mode::Full);
    let text = r.to_string();
    assert!(
        text.starts_with("FULL: 1 incompatibility, 1 codec checked against 1 snapshot\n"),
        "{text}"
    );
    assert!(
        text.contains("c      x     INTEGER_NARROWED  backward"),
        "{text}"
    );
    assert!(text.contains("    witness  {\"x\":4294967296}"), "{text}");
    let ok = run(field(u(8)), field(u(8)), Mode::Full);
    assert_eq!(
        ok.to_string(),
        "FULL: compatible, 1 codec checked against 1 snapshot\n"
    );
}

#[cfg(feature = "schema")]
#[test]
fn the_report_is_json_for_machines() {
    let r = run(field(u(64)), field(opt(u(32))), Mode::Full);
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(json["mode"], "FULL");
    assert_eq!(json["compatible"], false);
    assert_eq!(json["codecs"], 1);
    let f = &json["findings"][0];
    assert_eq!(f["rule"], "INTEGER_NARROWED");
    assert_eq!(f["direction"], "backward");
    assert_eq!(f["path"], "x");
    assert_eq!(f["witness"]["json"]["x"], 4_294_967_296u64);
    assert_eq!(f["witness"]["msgpack"], "81a178cf0000000100000000");
}

// ---- a large set ----

/// 1 000 codecs of ten fields each (scalars, an option, an array of a
/// shared record, a union), checked against themselves and against a copy
/// with a change in every tenth codec. Run in release mode:
/// `cargo test --release -p codecbus-core --lib -- --ignored --nocapture thousand`.
#[test]
#[ignore = "a timing, run by hand in release mode"]
fn thousand_codecs() {
    let make = |changed: bool| {
        set((0..1000).map(|n| {
            let narrowed = changed && n % 10 == 0;
            let mut c = codec(
                &format!("app.codec{n:04}"),
                map(vec![
                    req("id", u(64)),
                    req("name", Shape::Str),
                    req("qty", if narrowed { u(16) } else { u(32) }),
                    req("price", Shape::F64),
                    optional("note", opt(Shape::Str)),
                    req("tags", Shape::Array(Box::new(Shape::Str))),
                    req("at", Shape::Ext(crate::ext::TIMESTAMP)),
                    req(
                        "lines",
                        Shape::Array(Box::new(Shape::Ref("app.line".into()))),
                    ),
                    req(
                        "kind",
                        union(
                            vec![unit("A", 0), newtype("B", 1, u(8))],
                            n % 2 == 0,
                            vec![],
                        ),
                    ),
                    req("flag", Shape::Bool),
                ]),
            );
            c.refs.insert(
                "app.line".into(),
                map(vec![req("sku", Shape::Str), req("n", u(32))]),
            );
            c
        }))
    };
    let (old, same, changed) = (make(false), make(false), make(true));
    for (what, new) in [("identical", &same), ("changed", &changed)] {
        check(&old, new, Mode::Full);
        let start = std::time::Instant::now();
        let runs = 20;
        let mut report = None;
        for _ in 0..runs {
            report = Some(check(&old, new, Mode::Full));
        }
        let each = start.elapsed() / runs;
        let report = report.unwrap();
        println!(
            "{what}: {} codecs, {} findings, {each:?} per FULL check",
            report.codecs,
            report.findings.len()
        );
    }
    #[cfg(feature = "schema")]
    {
        let start = std::time::Instant::now();
        let text = old.to_snapshot();
        let written = start.elapsed();
        let start = std::time::Instant::now();
        let back = ShapeSet::from_snapshot(&text, "old.json").unwrap();
        println!(
            "snapshot: {} bytes, written in {written:?}, read in {:?}",
            text.len(),
            start.elapsed()
        );
        assert_eq!(back, old);
    }
}

// ---- random pairs, held to the model of the readers ----

mod random {
    use proptest::prelude::*;

    use super::*;

    fn name() -> impl Strategy<Value = String> {
        prop_oneof![Just("a"), Just("b"), Just("c")].prop_map(String::from)
    }

    fn scalar() -> impl Strategy<Value = Shape> {
        prop_oneof![
            Just(Shape::Nil),
            Just(Shape::Bool),
            (
                any::<bool>(),
                prop_oneof![Just(8u8), Just(16), Just(32), Just(64), Just(128)]
            )
                .prop_map(|(signed, bits)| Shape::Int { signed, bits }),
            Just(Shape::F32),
            Just(Shape::F64),
            Just(Shape::Str),
            Just(Shape::Bin),
            prop_oneof![Just(-1i8), Just(3)].prop_map(Shape::Ext),
            Just(Shape::Json),
            Just(Shape::Opaque),
            Just(Shape::Ref("r".into())),
        ]
    }

    fn reserved() -> impl Strategy<Value = Vec<Reserved>> {
        prop::collection::vec(
            prop_oneof![
                (0u32..4).prop_map(Reserved::Int),
                name().prop_map(Reserved::Name)
            ],
            0..2,
        )
    }

    fn record(inner: BoxedStrategy<Shape>) -> impl Strategy<Value = Record> {
        (
            prop_oneof![Just(Layout::Map), Just(Layout::Array), Just(Layout::Keyed)],
            prop::collection::vec((name(), 0u32..4, any::<bool>(), inner), 0..4),
            reserved(),
        )
            .prop_map(|(layout, fields, reserved)| {
                let mut names = std::collections::HashSet::new();
                let mut keys = std::collections::HashSet::new();
                let fields: Vec<FieldShape> = fields
                    .into_iter()
                    .filter(|(n, k, ..)| names.insert(n.clone()) && keys.insert(*k))
                    .map(|(name, key, optional, shape)| FieldShape {
                        name,
                        key: Some(key),
                        optional,
                        shape,
                    })
                    .collect();
                Record::new(layout, fields, reserved)
            })
    }

    fn payload(inner: BoxedStrategy<Shape>) -> impl Strategy<Value = Payload> {
        prop_oneof![
            Just(Payload::Unit),
            inner.clone().prop_map(Payload::Newtype),
            prop::collection::vec(inner.clone(), 0..3).prop_map(Payload::Tuple),
            record(inner).prop_map(Payload::Record),
        ]
    }

    fn shape() -> impl Strategy<Value = Shape> {
        scalar().prop_recursive(3, 24, 4, |inner| {
            let inner = inner.boxed();
            prop_oneof![
                inner.clone().prop_map(|s| Shape::Array(Box::new(s))),
                prop::collection::vec(inner.clone(), 0..3).prop_map(Shape::Tuple),
                (inner.clone(), inner.clone())
                    .prop_map(|(k, v)| Shape::Map(Box::new(k), Box::new(v))),
                inner.clone().prop_map(|s| Shape::Option(Box::new(s))),
                record(inner.clone()).prop_map(Shape::Record),
                record(inner.clone()).prop_map(Shape::Record),
                prop::collection::vec((name(), payload(inner.clone())), 0..3).prop_map(|vs| {
                    let mut names = std::collections::HashSet::new();
                    let variants = vs
                        .into_iter()
                        .filter(|(n, _)| names.insert(n.clone()))
                        .map(|(name, payload)| VariantShape {
                            name,
                            tag: None,
                            payload,
                        })
                        .collect();
                    Shape::Enum(Enum::new(variants, vec![]))
                }),
                (
                    prop::collection::vec((name(), 0u32..4, payload(inner)), 0..3),
                    any::<bool>(),
                    reserved()
                )
                    .prop_map(|(vs, catch_all, reserved)| {
                        let mut tags = std::collections::HashSet::new();
                        let variants = vs
                            .into_iter()
                            .filter(|(_, t, _)| tags.insert(*t))
                            .map(|(name, tag, payload)| VariantShape {
                                name,
                                tag: Some(tag),
                                payload,
                            })
                            .collect();
                        Shape::Union(Union::new(
                            variants,
                            catch_all.then(|| "Other".into()),
                            reserved,
                        ))
                    }),
            ]
        })
    }

    /// A codec of this shape, whose `r` refers to a small record (no
    /// cycle: a type that requires itself has no value to sample).
    fn codec_of(shape: Shape, r: Shape) -> CodecShape {
        let mut c = codec("c", shape);
        c.refs.insert("r".into(), r);
        c
    }

    fn leaf_record() -> impl Strategy<Value = Shape> {
        record(scalar().boxed()).prop_map(Shape::Record)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn findings_hold_to_the_readers(
            old in shape(),
            new in shape(),
            old_r in leaf_record(),
            new_r in leaf_record(),
        ) {
            let old = set([codec_of(old, old_r)]);
            let new = set([codec_of(new, new_r)]);
            let report = check(&old, &new, Mode::Full);
            if let Err(e) = verify(&report, std::slice::from_ref(&old), &new) {
                prop_assert!(false, "{}\n{}\nold {:?}\nnew {:?}", e, report, old, new);
            }
        }
    }
}
