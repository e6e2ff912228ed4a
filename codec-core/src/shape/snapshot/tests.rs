use std::collections::BTreeMap;
use std::collections::HashSet;

use proptest::prelude::*;

use super::*;
use crate::shape::check::{Mode, check};

fn field(name: &str, key: Option<u32>, shape: Shape) -> FieldShape {
    FieldShape {
        name: name.into(),
        key,
        optional: false,
        shape,
    }
}

/// A set with one of everything: every scalar, containers, references,
/// records of each layout with reservations, an enum and a union.
fn everything() -> ShapeSet {
    let line = Shape::Record(Record::new(
        Layout::Keyed,
        vec![
            field("sku", Some(0), Shape::Str),
            FieldShape {
                optional: true,
                ..field(
                    "qty",
                    Some(2),
                    Shape::Option(Box::new(Shape::int(false, 32))),
                )
            },
        ],
        vec![Reserved::Int(1)],
    ));
    let kind = Shape::Union(Union::new(
        vec![
            VariantShape {
                name: "A".into(),
                tag: Some(0),
                payload: Payload::Unit,
            },
            VariantShape {
                name: "B".into(),
                tag: Some(7),
                payload: Payload::Tuple(vec![Shape::F32, Shape::Bin]),
            },
            VariantShape {
                name: "Other".into(),
                tag: None,
                payload: Payload::Tuple(vec![Shape::int(false, 32), Shape::Opaque]),
            },
        ],
        Some("Other".into()),
        vec![Reserved::Int(3)],
    ));
    let state = Shape::Enum(Enum::new(
        vec![
            VariantShape {
                name: "Open".into(),
                tag: None,
                payload: Payload::Unit,
            },
            VariantShape {
                name: "Held".into(),
                tag: None,
                payload: Payload::Record(Record::new(
                    Layout::Array,
                    vec![field("by", Some(0), Shape::Str)],
                    vec![],
                )),
            },
            VariantShape {
                name: "Note".into(),
                tag: None,
                payload: Payload::Newtype(Shape::Json),
            },
        ],
        vec![Reserved::Name("Closed".into())],
    ));
    let order = Shape::Record(Record::new(
        Layout::Map,
        vec![
            field("id", None, Shape::int(false, 64)),
            field("at", None, Shape::Ext(-1)),
            field(
                "lines",
                None,
                Shape::Array(Box::new(Shape::Ref("shop.line".into()))),
            ),
            field(
                "totals",
                None,
                Shape::Map(Box::new(Shape::Str), Box::new(Shape::F64)),
            ),
            field(
                "pair",
                None,
                Shape::Tuple(vec![Shape::int(true, 8), Shape::Bool, Shape::Nil]),
            ),
            field("kind", None, kind),
            field("state", None, state),
            field("n128", None, Shape::int(true, 128)),
        ],
        vec![Reserved::Name("old \"name\"".into())],
    ));
    let mut codec = CodecShape {
        name: "shop.order".into(),
        aliases: vec!["shop::Order".into()],
        shape: order,
        refs: BTreeMap::new(),
    };
    codec.refs.insert("shop.line".into(), line);
    let note = CodecShape {
        name: "a\tnote é \u{1}".into(),
        aliases: vec![],
        shape: Shape::Str,
        refs: BTreeMap::new(),
    };
    ShapeSet::from_codecs([codec, note])
}

#[test]
fn a_snapshot_reads_back_as_written() {
    let set = everything();
    let text = set.to_snapshot();
    assert_eq!(ShapeSet::from_snapshot(&text, "s.json").unwrap(), set);
    assert!(
        text.starts_with("{\n  \"format\": 1,\n  \"codecs\": [\n    {\n      \"name\": \"a\\tnote")
    );
    // every line fits, or holds one member that cannot be split
    for line in text.lines() {
        assert!(
            line.len() <= WIDTH || !line.trim_end().ends_with(['{', '[']),
            "{line}"
        );
    }
    // The empty set too.
    let empty = ShapeSet::new().to_snapshot();
    assert_eq!(empty, "{\n  \"format\": 1,\n  \"codecs\": []\n}\n");
    assert_eq!(
        ShapeSet::from_snapshot(&empty, "e.json").unwrap(),
        ShapeSet::new()
    );
}

#[test]
fn a_snapshot_diff_shows_the_change() {
    let set = everything();
    let mut changed = set.clone();
    let mut order = changed.get("shop.order").unwrap().clone();
    if let Shape::Record(r) = &mut order.shape {
        r.fields[0].shape = Shape::int(false, 32);
    }
    changed.insert(order);
    let (a, b) = (set.to_snapshot(), changed.to_snapshot());
    let differ: Vec<(&str, &str)> = a.lines().zip(b.lines()).filter(|(x, y)| x != y).collect();
    assert_eq!(a.lines().count(), b.lines().count());
    // the fingerprint and the field's line
    assert_eq!(differ.len(), 2, "{differ:#?}");
    assert!(differ[1].1.contains("\"u32\""), "{differ:#?}");
}

fn error(text: &str) -> SnapshotError {
    ShapeSet::from_snapshot(text, "shapes/v2.json").unwrap_err()
}

#[test]
fn bad_snapshots_are_errors_with_a_place() {
    let text = everything().to_snapshot();
    // cut short
    let e = error(&text[..text.len() / 2]);
    assert!(matches!(e.kind(), SnapshotErrorKind::Invalid(_)));
    assert!(e.line() > 1);
    assert!(e.to_string().starts_with("shapes/v2.json:"), "{e}");
    assert!(e.to_string().contains("EOF while parsing"), "{e}");
    // not JSON at all
    let e = error("# shapes");
    assert_eq!(
        e.to_string(),
        "shapes/v2.json:1:1: expected a snapshot: an object `{\"format\": 1, \"codecs\": [...]}`"
    );
    let e = error("{\"format\": 1, \"codecs\": [}");
    assert_eq!(e.to_string(), "shapes/v2.json:1:26: expected value");
    // a newer format
    let e = error(r#"{"format": 2, "codecs": [{"whatever": true}]}"#);
    assert_eq!(
        e.to_string(),
        "shapes/v2.json: written by a newer codecbus (format 2, this one reads 1)"
    );
    assert_eq!(e.kind(), &SnapshotErrorKind::NewerFormat(2));
    let e = error(r#"{"codecs": []}"#);
    assert_eq!(
        e.to_string(),
        "shapes/v2.json: not a codecbus snapshot: no \"format\" member"
    );
    let e = error("\n  [1, 2]");
    assert_eq!(
        e.to_string(),
        "shapes/v2.json:2:3: expected a snapshot: an object `{\"format\": 1, \"codecs\": [...]}`"
    );
    // an unknown shape, named where it is
    let bad = text.replacen("\"u64\"", "\"u63\"", 1);
    let e = error(&bad);
    assert!(
        e.to_string()
            .contains("invalid value: string \"u63\", expected a shape"),
        "{e}"
    );
    let line = bad.lines().position(|l| l.contains("u63")).unwrap() + 1;
    assert_eq!(e.line(), line);
    let e = error(&text.replacen("{\"option\": ", "{\"optional\": ", 1));
    assert!(e.to_string().contains("unknown variant `optional`"), "{e}");
    let e = error(&text.replacen("\"layout\": \"map\"", "\"layout\": \"tree\"", 1));
    assert!(
        e.to_string()
            .contains("unknown variant `tree`, expected one of `map`, `array`, `keyed`"),
        "{e}"
    );
    let e = error(&text.replacen(
        "\"optional\": false",
        "\"optional\": false, \"extra\": 1",
        1,
    ));
    assert!(e.to_string().contains("unknown field `extra`"), "{e}");
}

#[test]
fn an_edited_snapshot_fails_its_fingerprint() {
    let text = everything().to_snapshot();
    let edited = text.replacen("\"u64\"", "\"u32\"", 1);
    let e = error(&edited);
    assert!(
        matches!(e.kind(), SnapshotErrorKind::Fingerprint { codec, .. } if codec == "shop.order")
    );
    assert!(e.to_string().contains("edited by hand?"), "{e}");
    let line = edited
        .lines()
        .position(|l| l.contains("\"name\": \"shop.order\""))
        .unwrap()
        + 1;
    assert_eq!((e.line(), e.column()), (line, 7));
}

#[test]
fn a_snapshot_of_an_impossible_shape_is_refused() {
    let twice = |codec: CodecShape| {
        // written with a right fingerprint, as a tool might
        let text = ShapeSet::from_codecs([codec]).to_snapshot();
        error(&text)
    };
    let record = Shape::Record(Record {
        layout: Layout::Map,
        fields: vec![field("a", None, Shape::Str), field("a", None, Shape::Bool)],
        reserved: vec![],
    });
    let c = |shape| CodecShape {
        name: "c".into(),
        aliases: vec![],
        shape,
        refs: BTreeMap::new(),
    };
    let e = twice(c(record));
    assert_eq!(
        e.to_string(),
        "shapes/v2.json:5:7: codec `c`: two fields named `a`"
    );
    let taking = Shape::Record(Record {
        layout: Layout::Map,
        fields: vec![field("a", None, Shape::Str)],
        reserved: vec![Reserved::Name("a".into())],
    });
    assert!(
        twice(c(taking))
            .to_string()
            .contains("takes a reserved name")
    );
    let keyless = Shape::Record(Record {
        layout: Layout::Keyed,
        fields: vec![field("a", None, Shape::Str)],
        reserved: vec![],
    });
    assert!(twice(c(keyless)).to_string().contains("has no key"));
    let doubled = format!("{{\"format\": 1, \"codecs\": [{0}, {0}]}}", {
        let one = c(Shape::Str);
        let text = ShapeSet::from_codecs([one]).to_snapshot();
        let start = text.find("    {").unwrap();
        let end = text.rfind("    }").unwrap() + 5;
        text[start..end].to_owned()
    });
    assert_eq!(
        error(&doubled).kind(),
        &SnapshotErrorKind::DuplicateCodec("c".into())
    );
}

// ---- random shapes ----

fn name() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z]{1,6}", "[a-zA-Z0-9 \"\\\\\t\n\u{1}é.:_-]{0,8}",]
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
        any::<i8>().prop_map(Shape::Ext),
        Just(Shape::Json),
        Just(Shape::Opaque),
        name().prop_map(Shape::Ref),
    ]
}

fn reserved() -> impl Strategy<Value = Vec<Reserved>> {
    prop::collection::vec(
        prop_oneof![
            any::<u32>().prop_map(Reserved::Int),
            name().prop_map(Reserved::Name)
        ],
        0..3,
    )
}

fn record(inner: impl Strategy<Value = Shape> + Clone) -> impl Strategy<Value = Record> {
    (
        prop_oneof![Just(Layout::Map), Just(Layout::Array), Just(Layout::Keyed)],
        prop::collection::vec((name(), any::<Option<u32>>(), any::<bool>(), inner), 0..4),
        reserved(),
    )
        .prop_map(|(layout, fields, reserved)| {
            let mut names = HashSet::new();
            let fields = fields
                .into_iter()
                .filter(|(n, ..)| names.insert(n.clone()))
                .enumerate()
                .map(|(i, (name, key, optional, shape))| FieldShape {
                    name,
                    // keyed: unique keys; the others any, or none
                    key: if layout == Layout::Keyed {
                        Some(i as u32 * 3)
                    } else {
                        key
                    },
                    optional,
                    shape,
                })
                .collect();
            // What a field takes is not reserved.
            let fields: Vec<FieldShape> = fields;
            let taken: Vec<Reserved> = fields
                .iter()
                .enumerate()
                .map(|(p, f)| match layout {
                    Layout::Map => Reserved::Name(f.name.clone()),
                    Layout::Array => Reserved::Int(p as u32),
                    Layout::Keyed => Reserved::Int(f.key.unwrap_or(0)),
                })
                .collect();
            let reserved = reserved
                .into_iter()
                .filter(|r| !taken.contains(r))
                .collect();
            Record {
                layout,
                fields,
                reserved,
            }
        })
}

fn payload(inner: impl Strategy<Value = Shape> + Clone) -> impl Strategy<Value = Payload> {
    prop_oneof![
        Just(Payload::Unit),
        inner.clone().prop_map(Payload::Newtype),
        prop::collection::vec(inner.clone(), 0..3).prop_map(Payload::Tuple),
        record(inner).prop_map(Payload::Record),
    ]
}

fn shape() -> impl Strategy<Value = Shape> {
    scalar().prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|s| Shape::Array(Box::new(s))),
            prop::collection::vec(inner.clone(), 0..4).prop_map(Shape::Tuple),
            (inner.clone(), inner.clone()).prop_map(|(k, v)| Shape::Map(Box::new(k), Box::new(v))),
            inner.clone().prop_map(|s| Shape::Option(Box::new(s))),
            record(inner.clone()).prop_map(Shape::Record),
            (
                prop::collection::vec((name(), payload(inner.clone())), 0..4),
                reserved()
            )
                .prop_map(|(vs, reserved)| {
                    let mut names = HashSet::new();
                    let variants = vs
                        .into_iter()
                        .filter(|(n, _)| names.insert(n.clone()))
                        .map(|(name, payload)| VariantShape {
                            name,
                            tag: None,
                            payload,
                        })
                        .collect();
                    let variants: Vec<VariantShape> = variants;
                    let reserved = reserved
                        .into_iter()
                        .filter(|r| {
                            !variants
                                .iter()
                                .any(|v| *r == Reserved::Name(v.name.clone()))
                        })
                        .collect();
                    Shape::Enum(Enum { variants, reserved })
                }),
            (
                prop::collection::vec((name(), any::<Option<u32>>(), payload(inner)), 0..4),
                prop::option::of(name()),
                reserved()
            )
                .prop_map(|(vs, catch_all, reserved)| {
                    let mut tags = HashSet::new();
                    let variants = vs
                        .into_iter()
                        .filter(|(_, tag, _)| tag.is_none_or(|t| tags.insert(t)))
                        .map(|(name, tag, payload)| VariantShape { name, tag, payload })
                        .collect();
                    let variants: Vec<VariantShape> = variants;
                    let reserved = reserved
                        .into_iter()
                        .filter(|r| {
                            !variants
                                .iter()
                                .any(|v| v.tag.map(Reserved::Int).as_ref() == Some(r))
                        })
                        .collect();
                    Shape::Union(Union {
                        variants,
                        catch_all,
                        reserved,
                    })
                }),
        ]
    })
}

fn codec() -> impl Strategy<Value = CodecShape> {
    (
        name(),
        prop::collection::vec(name(), 0..3),
        shape(),
        prop::collection::btree_map(name(), shape(), 0..3),
    )
        .prop_map(|(name, aliases, shape, refs)| CodecShape {
            name,
            aliases,
            shape,
            refs,
        })
}

proptest! {
    #[test]
    fn random_sets_round_trip(codecs in prop::collection::vec(codec(), 0..4)) {
        let set = ShapeSet::from_codecs(codecs);
        let text = set.to_snapshot();
        let back = ShapeSet::from_snapshot(&text, "random.json");
        prop_assert_eq!(back.as_ref(), Ok(&set), "{}", text);
        // and a set is compatible with itself
        let report = check(&set, &set, Mode::FullTransitive);
        prop_assert!(report.is_compatible(), "{}", report);
    }

    #[test]
    fn random_text_is_an_error_not_a_panic(text in "\\PC{0,64}") {
        let _ = ShapeSet::from_snapshot(&text, "random.json");
    }
}

#[test]
#[ignore = "prints a snapshot"]
fn print_a_snapshot() {
    println!("{}", everything().to_snapshot());
}
