//! Writes the seed corpora of the fuzz targets under `fuzz/corpus/<target>/`.
//!
//! ```text
//! cd fuzz && cargo run --example seeds            # into fuzz/corpus/<target>/
//! cd fuzz && cargo run --example seeds -- DIR     # into DIR/<target>/
//! ```
//!
//! Seeds are the byte vectors of `codec-core/tests/codecs/vectors.rs` (integer,
//! length and extension-type layouts), sample values of the fuzz types,
//! small sub-documents of the JSON documents (`data/json/` in the
//! repository, as for the benchmarks, or the folder in
//! `CODECBUS_JSON_CORPUS`; a missing document is an error) and a few hostile
//! inputs.
//! The round-trip target takes raw bytes for `arbitrary`, so it gets every
//! seed as well. The corpora are not committed (`/fuzz/corpus` is ignored):
//! run this before the first `cargo fuzz run`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use codecbus_core::MessageCodec;
use codecbus_core::ext::{self, Bytes, Ext, Timestamp};
use codecbus_fuzz::{
    AllExt, Event, ExtA, F32, F64, Item, Keyed, KeyedItem, N, Order, OrderArr, Point, Shape,
    Status, StatusArr, Tree, TupleS,
};
use codecbus_json::JsValue;

const TARGETS: [&str; 13] = [
    "decode_struct_map",
    "decode_struct_array",
    "decode_enum",
    "decode_json",
    "decode_ext",
    "roundtrip",
    "spec_check",
    "decode_union",
    "decode_keyed",
    "decode_lz4_frame",
    "decode_borrowed",
    "bridge_frame",
    "snapshot",
];

/// Largest seed taken from the JSON documents.
const MAX_SEED: usize = 4096;

fn enc<T: MessageCodec>(v: &T) -> Vec<u8> {
    codecbus_core::to_vec(v).expect("seed encodes")
}

fn item(i: u32) -> Item {
    Item {
        sku: format!("sku-{i}"),
        qty: i,
        price: F64(f64::from(i) * 1.25),
        note: i.is_multiple_of(2).then(|| "fragile".into()),
    }
}

fn order(depth: u32) -> Order {
    Order {
        order_id: 1 << 40,
        customer: "Ada".into(),
        items: (0..3).map(item).collect(),
        points: VecDeque::from([Point { x: -3, y: F32(0.5) }]),
        tags: BTreeSet::from(["a".to_string(), "b".to_string()]),
        attrs: BTreeMap::from([("k".to_string(), -1), ("n".to_string(), i64::MIN)]),
        port: 443,
        extra: if depth == 0 { vec![] } else { vec![1, 2] },
        blob: vec![0, 255, 7],
        cache: 0,
        small: (-128, 255, true),
        fixed: [1, 65535, 256],
        wide: (u128::from(u64::MAX), i128::from(i64::MIN)),
        letter: 'é',
        unit: (),
        boxed: "boxed".into(),
        shared: "shared".into(),
        status: Status::Failed {
            code: 500,
            reason: Some("x".into()),
            retry: false,
        },
        tree: Tree::Node(vec![Tree::Leaf, Tree::Value(-7)]),
        n: N(Some(Box::new(N(None)))),
        parent: (depth > 0).then(|| Box::new(order(depth - 1))),
        list: (0..4).collect(),
        note: None,
    }
}

fn order_arr(depth: u32) -> OrderArr {
    OrderArr {
        order_id: 7,
        customer: "Bob".into(),
        items: vec![item(1)],
        points: vec![
            Point {
                x: 1,
                y: F32(f32::NAN),
            },
            Point {
                x: i16::MIN,
                y: F32(-0.0),
            },
        ],
        attrs: BTreeMap::from([(1, vec![1, 2, 3])]),
        blob: b"bin".to_vec(),
        cache: 0,
        small: (1, 2, false),
        fixed: [0, 1, 2],
        wide: (5, -5),
        letter: 'z',
        status: StatusArr::Failed {
            code: 1,
            reason: None,
        },
        tree: Tree::Pair {
            left: Box::new(Tree::Leaf),
            right: Some(Box::new(Tree::Boxed(Box::new(Tree::Value(1))))),
        },
        n: N(None),
        parent: (depth > 0).then(|| Box::new(order_arr(depth - 1))),
        f: F64(f64::INFINITY),
        port: 80,
        note: Some("n".into()),
    }
}

fn keyed_item(i: u32) -> KeyedItem {
    KeyedItem {
        sku: format!("k-{i}"),
        qty: i * 3,
        note: i.is_multiple_of(2).then(|| "n".into()),
    }
}

fn keyed(depth: u32) -> Keyed {
    Keyed {
        name: "Ada".into(),
        id: 1 << 33,
        email: depth.is_multiple_of(2).then(|| "ada@example.org".into()),
        cache: 0,
        port: 8443,
        tags: vec!["a".into(), String::new()],
        items: (0..2).map(keyed_item).collect(),
        parent: (depth > 0).then(|| Box::new(keyed(depth - 1))),
        f: F64(-1.5),
        blob: vec![0, 1, 255],
    }
}

/// Payloads as a node writes them (codec prefix, then the body plain or
/// compressed) and as peers may send them, each after the four bytes
/// that choose the limit (here 1 MiB) and the compression threshold.
/// Shape snapshots: one of every shape, an empty one, and broken ones (cut
/// short, a newer format, a fingerprint that does not match).
fn snapshots() -> Vec<Vec<u8>> {
    use codecbus_core::shape::{
        CodecShape, Enum, FieldShape, Layout, Payload, Record, Reserved, Shape as S, ShapeSet,
        Union, VariantShape,
    };
    let field = |name: &str, key: Option<u32>, optional: bool, shape: S| FieldShape {
        name: name.into(),
        key,
        optional,
        shape,
    };
    let variant = |name: &str, tag: Option<u32>, payload: Payload| VariantShape {
        name: name.into(),
        tag,
        payload,
    };
    let line = S::Record(Record::new(
        Layout::Keyed,
        vec![
            field("sku", Some(0), false, S::Str),
            field("qty", Some(2), true, S::Option(Box::new(S::int(false, 32)))),
        ],
        vec![Reserved::Int(1)],
    ));
    let order = S::Record(Record::new(
        Layout::Map,
        vec![
            field("id", None, false, S::int(false, 64)),
            field(
                "lines",
                None,
                false,
                S::Array(Box::new(S::Ref("shop.line".into()))),
            ),
            field("at", None, false, S::Ext(-1)),
            field("m", None, false, S::Map(Box::new(S::Str), Box::new(S::F64))),
            field(
                "t",
                None,
                false,
                S::Tuple(vec![S::int(true, 8), S::Bool, S::Nil, S::Bin]),
            ),
            field(
                "kind",
                None,
                false,
                S::Union(Union::new(
                    vec![
                        variant("A", Some(0), Payload::Unit),
                        variant("B", Some(7), Payload::Tuple(vec![S::F32, S::Json])),
                        variant(
                            "Other",
                            None,
                            Payload::Tuple(vec![S::int(false, 32), S::Opaque]),
                        ),
                    ],
                    Some("Other".into()),
                    vec![Reserved::Int(3)],
                )),
            ),
            field(
                "state",
                None,
                false,
                S::Enum(Enum::new(
                    vec![
                        variant("Open", None, Payload::Unit),
                        variant(
                            "Held",
                            None,
                            Payload::Record(Record::new(
                                Layout::Array,
                                vec![field("by", Some(0), false, S::Str)],
                                vec![],
                            )),
                        ),
                        variant("Note", None, Payload::Newtype(S::int(true, 128))),
                    ],
                    vec![Reserved::Name("Closed".into())],
                )),
            ),
        ],
        vec![Reserved::Name("old".into())],
    ));
    let mut codec = CodecShape {
        name: "shop.order".into(),
        aliases: vec!["shop::Order".into()],
        shape: order,
        refs: BTreeMap::new(),
    };
    codec.refs.insert("shop.line".into(), line);
    let full = ShapeSet::from_codecs([codec]).to_snapshot();
    let empty = ShapeSet::new().to_snapshot();
    let mut seeds = vec![
        full.clone().into_bytes(),
        empty.into_bytes(),
        full.as_bytes()[..full.len() / 2].to_vec(),
        full.replacen("\"format\": 1", "\"format\": 2", 1)
            .into_bytes(),
    ];
    // Pairs, old and new separated by a NUL (fingerprints not held): the
    // same, and edits of each kind.
    for (from, to) in [
        ("\"u64\"", "\"u64\""),
        ("\"u64\"", "\"u32\""),
        ("\"u64\"", "{\"option\": \"u64\"}"),
        ("\"layout\": \"map\"", "\"layout\": \"array\""),
        ("\"layout\": \"keyed\"", "\"layout\": \"array\""),
        ("\"tag\": 7", "\"tag\": 8"),
        ("\"catch_all\": \"Other\"", "\"catch_all\": null"),
        ("\"name\": \"Open\"", "\"name\": \"Opened\""),
        ("\"optional\": true", "\"optional\": false"),
        ("\"f64\"", "\"f32\""),
        ("\"str\"", "\"bin\""),
        ("{\"ext\": -1}", "{\"ext\": 3}"),
        ("\"reserved\": [1]", "\"reserved\": []"),
    ] {
        seeds.push(format!("{full}\0{}", full.replacen(from, to, 1)).into_bytes());
    }
    seeds
}

fn lz4_payloads() -> Vec<Vec<u8>> {
    use codecbus_bus::__fuzz::write_payload;
    use codecbus_core::{AnyBody, CodecRegistration};
    let codec = CodecRegistration::of::<Bytes>("bytes");
    let write = |bytes: Vec<u8>, above: usize| {
        write_payload(
            &codec,
            &(std::sync::Arc::new(Bytes(bytes)) as AnyBody),
            Some(above),
        )
        .expect("seed payload")
    };
    let mut payloads = vec![
        write(b"plain".to_vec(), 64),
        write(b"abcd".repeat(100), 16),
        write((0..=255).cycle().take(2000).collect(), 0),
        write(vec![0; 5000], 0),
        // a compressed body declaring 1 GiB, and one whose block is cut
        b"\xc1\x01\xa6string\xc1\xce\x40\x00\x00\x00\x1f\x00\x01\x00".to_vec(),
        b"\xc1\x01\xa5bytes\xc1\xcd\x01\x93\x1f".to_vec(),
        // another version, no name, no prefix
        b"\xc1\x02\xa1x\xc0".to_vec(),
        b"\xc1\x01\xc0".to_vec(),
        b"\xa2hi".to_vec(),
    ];
    payloads.extend(vectors());
    let limit = [0x00, 0x00, 0x10, 0x00];
    payloads
        .into_iter()
        .map(|p| [limit.as_slice(), &p].concat())
        .collect()
}

fn statuses() -> Vec<Status> {
    vec![
        Status::Open,
        Status::Closed,
        Status::Held("h".into()),
        Status::Item(item(9)),
        Status::Moved(1, -2, Some("to".into())),
        Status::Nothing(),
        Status::Failed {
            code: 404,
            reason: None,
            retry: true,
        },
        Status::Blank {},
        Status::Nested(Box::new(Status::Nested(Box::new(Status::Open)))),
        Status::Many(vec![Status::Open, Status::Held(String::new())]),
    ]
}

fn statuses_arr() -> Vec<StatusArr> {
    vec![
        StatusArr::Open,
        StatusArr::Held("x".into()),
        StatusArr::Moved(3, -3),
        StatusArr::Failed {
            code: 2,
            reason: Some("r".into()),
        },
        StatusArr::Nested(Box::new(StatusArr::Open)),
    ]
}

fn all_ext() -> AllExt {
    let date = time::Date::from_calendar_date(2026, time::Month::November, 30).expect("date");
    let t = time::Time::from_hms_nano(23, 59, 58, 123_456_789).expect("time");
    let c_date = chrono::NaiveDate::from_ymd_opt(2026, 11, 30).expect("date");
    let c_time = chrono::NaiveTime::from_hms_nano_opt(23, 59, 58, 123_456_789).expect("time");
    AllExt {
        ts: Timestamp::new(1, 1).expect("ts"),
        ext: ExtA(Ext {
            type_id: 42,
            data: vec![1, 2, 3],
        }),
        bytes: Bytes(vec![7; 3]),
        uuid: uuid::Uuid::from_u128(0x0011_2233_4455_6677_8899_aabb_ccdd_eeff),
        decimal: rust_decimal::Decimal::new(1234, 2),
        t_date: date,
        t_time: t,
        t_pdt: time::PrimitiveDateTime::new(date, t),
        t_odt: time::OffsetDateTime::UNIX_EPOCH,
        c_date,
        c_time,
        c_ndt: c_date.and_time(c_time),
        c_utc: chrono::DateTime::from_timestamp(1, 0).expect("utc"),
        system: UNIX_EPOCH - Duration::from_nanos(1),
        duration: Duration::new(3, 7),
    }
}

fn date() -> time::Date {
    time::Date::from_calendar_date(2026, time::Month::November, 30).expect("a valid date")
}

fn time_of_day() -> time::Time {
    time::Time::from_hms_nano(23, 59, 58, 123_456_789).expect("a valid time")
}

/// The golden layouts of `codec-core/tests/codecs/vectors.rs`.
fn vectors() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = vec![
        // integers and scalars
        vec![0x00],
        vec![0x7f],
        vec![0xcc, 0x80],
        vec![0xcd, 0x01, 0x00],
        vec![0xce, 0xff, 0xff, 0xff, 0xff],
        vec![0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        vec![0xff],
        vec![0xe0],
        vec![0xd0, 0x80],
        vec![0xd1, 0xff, 0x7f],
        vec![0xd2, 0x80, 0, 0, 0],
        vec![0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0],
        vec![0xca, 0x3f, 0xc0, 0, 0],
        vec![0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0],
        vec![0xc3],
        vec![0xc2],
        vec![0xc0],
        vec![0xa2, 0xc3, 0xa9],
        // lengths
        vec![0xa0],
        vec![0xd9, 3, b'a', b'b', b'c'],
        vec![0xda, 0, 1, b'x'],
        vec![0x90],
        vec![0xdc, 0x00, 0x01, 0xc3],
        vec![0xdd, 0, 0, 0, 1, 0xc2],
        vec![0x80],
        vec![0xde, 0x00, 0x01, 0x01, 0xc3],
        vec![0xc4, 0x00],
        vec![0xc5, 0x00, 0x01, 0x07],
        // timestamps, three forms
        vec![0xd6, 0xff, 0, 0, 0, 0],
        vec![0xd6, 0xff, 0xff, 0xff, 0xff, 0xff],
        vec![0xd7, 0xff, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x01],
        vec![0xd7, 0xff, 0xee, 0x6b, 0x27, 0xff, 0xff, 0xff, 0xff, 0xff],
        vec![
            0xc7, 12, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        ],
        vec![0xc7, 12, 0xff, 0, 0, 0, 5, 0, 0, 0, 0x04, 0, 0, 0, 0],
        vec![
            0xc7, 12, 0xff, 0x3b, 0x9a, 0xc9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        ],
        vec![0x92, 3, 7],
        // raw extensions
        vec![0xd4, 42, 1],
        vec![0xc7, 3, 42, 1, 2, 3],
        [[0xd8, 0xfb].as_slice(), &[0; 16]].concat(),
        // decimals
        vec![0xc7, 3, ext::DECIMAL as u8, 0x02, 0x04, 0xd2],
        vec![0xd5, ext::DECIMAL as u8, 0x01, 0xf1],
        vec![0xd5, ext::DECIMAL as u8, 0x00, 0x00],
        vec![0xc7, 3, ext::DECIMAL as u8, 0x00, 0x00, 0x80],
        {
            let mut d = vec![0xc7, 14, ext::DECIMAL as u8, 0x00, 0x00];
            d.extend([0xff; 12]);
            d
        },
        vec![0xd5, ext::DECIMAL as u8, 29, 0x01],
        // dates and times: valid ones as the codecs write them, then a
        // February 30th and a 24:00
        enc(&date()),
        enc(&time_of_day()),
        enc(&time::PrimitiveDateTime::new(date(), time_of_day())),
        vec![0xc7, 6, ext::DATE as u8, 0, 0, 0x07, 0xea, 2, 30],
        vec![0xc7, 7, ext::TIME as u8, 24, 0, 0, 0, 0, 0, 0],
        // hostile: the rmp-serde crash, a reserved marker, huge lengths
        vec![0x01],
        vec![0xc1],
        vec![0xdb, 0xff, 0xff, 0xff, 0xff, b'a'],
        vec![0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0],
        vec![0xdf, 0xff, 0xff, 0xff, 0xff, 0xc0],
        vec![0xc6, 0xff, 0xff, 0xff, 0xff, 0x00],
        vec![0xc9, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00],
        vec![0x91; 200],
        vec![0x81, 0xa1, b'a', 0xa2, 0xff, 0xfe],
    ];
    let mut uuid = vec![0xd8, ext::UUID as u8];
    uuid.extend(0x0011_2233_4455_6677_8899_aabb_ccdd_eeffu128.to_be_bytes());
    v.push(uuid);
    v
}

/// Sub-values of the JSON documents that encode to at most `MAX_SEED` bytes.
fn json_docs() -> Vec<Vec<u8>> {
    let dir = std::env::var_os("CODECBUS_JSON_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/json"));
    let mut out = Vec::new();
    for name in ["twitter.json", "citm_catalog.json", "canada.json"] {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("seeds: cannot read {}: {e}", path.display()));
        let Ok(doc) = JsValue::parse(&text) else {
            continue;
        };
        let mut taken = 0;
        collect_small(&doc, &mut out, &mut taken);
    }
    out
}

fn collect_small(v: &JsValue, out: &mut Vec<Vec<u8>>, taken: &mut usize) {
    if *taken >= 24 {
        return;
    }
    let bytes = enc(v);
    if bytes.len() <= MAX_SEED {
        if bytes.len() > 16 {
            out.push(bytes);
            *taken += 1;
        }
        return;
    }
    match v {
        JsValue::Array(a) => a.iter().take(8).for_each(|c| collect_small(c, out, taken)),
        JsValue::Object(o) => o.iter().for_each(|(_, c)| collect_small(c, out, taken)),
        _ => {}
    }
}

fn write_all(dir: &Path, seeds: &[Vec<u8>]) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    for (i, s) in seeds.iter().enumerate() {
        std::fs::write(dir.join(format!("seed-{i:04}")), s)?;
    }
    Ok(seeds.len())
}

fn main() -> std::io::Result<()> {
    let root = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus"));
    let common = vectors();

    let mut map = common.clone();
    map.extend([enc(&order(0)), enc(&order(2)), enc(&vec![item(1), item(2)])]);
    map.push(enc(&N(Some(Box::new(N(Some(Box::new(N(None)))))))));
    // the map struct read positionally, as rmp_serde::to_vec writes it
    map.push(enc(&order_arr(0)));

    let mut array = common.clone();
    array.extend([enc(&order_arr(0)), enc(&order_arr(2))]);
    array.push(enc(&vec![Point { x: 1, y: F32(2.0) }]));
    array.push(enc(&(
        TupleS(1, "t".into(), Some(F64(0.1))),
        codecbus_fuzz::UnitS,
        codecbus_fuzz::EmptyS {},
    )));

    let mut enums = common.clone();
    enums.extend(statuses().iter().map(enc));
    enums.extend(statuses_arr().iter().map(enc));
    enums.push(enc(&order(0).tree));
    enums.push(enc(&order_arr(0).tree));

    let mut json = common.clone();
    json.extend(json_docs());
    json.push(enc(&JsValue::parse(
        r#"{"a":[1,-1,1.5,null,true,"s"],"b":{"c":{}}}"#,
    )
    .expect("json")));

    let mut exts = common.clone();
    exts.push(enc(&all_ext()));

    let mut round = Vec::new();
    for set in [&map, &array, &enums, &exts] {
        round.extend(set.iter().cloned());
    }

    // The spec target reads the same bytes as MessagePack and as JSON text:
    // the JSON seeds in both forms, and values near its spec.
    let mut spec = json.clone();
    spec.extend(json.iter().filter_map(|bytes| {
        codecbus_core::from_slice::<JsValue>(bytes)
            .ok()
            .map(|v| v.to_string().into_bytes())
    }));
    for text in [
        r#"{"id":3,"name":"ab","kids":[{"tags":["x","y"]}],"mixed":[true,null,{}],"at":[1.5,-2],"by":{"k":{}},"kind":[1,2],"even":4,"strict":{"x":1}}"#,
        r#"{"mixed":[true,{"id":-7}],"strict":{"x":1,"z":0}}"#,
        r#"{"id":-10,"id":1}"#,
    ] {
        let v = JsValue::parse(text).expect("json");
        spec.push(text.as_bytes().to_vec());
        spec.push(enc(&v));
    }

    let mut unions = common.clone();
    let shapes = [
        Shape::Empty,
        Shape::Circle(7),
        Shape::Segment(-1, 1 << 40, Some("s".into())),
        Shape::Labelled {
            label: "l".into(),
            inner: Some(Box::new(Shape::Circle(1))),
        },
    ];
    unions.extend(shapes.iter().map(enc));
    unions.push(enc(&Event::Created { id: 3 }));
    unions.push(enc(&Event::Drawn(Shape::Empty)));
    // a tag the catch-all keeps, with a payload of several values
    unions.push(b"\x92\x09\x93\x01\xa1x\xc0".to_vec());

    let mut keyed_seeds = common.clone();
    keyed_seeds.extend([enc(&keyed(0)), enc(&keyed(2))]);
    keyed_seeds.push(enc(&vec![keyed_item(1), keyed_item(2)]));
    // a short array (defaults and options left out), a map by name, and
    // elements past the last key
    keyed_seeds.push(b"\x94\x07\xc0\xc0\xa1a".to_vec());
    keyed_seeds.push(b"\x82\xa2id\x01\xa4name\xa1b".to_vec());
    keyed_seeds.push(
        b"\x9f\x01\xc0\xc0\xa1c\xc0\xc0\xc0\xc0\xc0\x90\xc0\xc0\xcb\x3f\xf8\0\0\0\0\0\0\xc0\x93\x01\x02\x03"
            .to_vec(),
    );
    round.extend(keyed_seeds.iter().cloned());

    // The borrowed view's owned twin, with empty, non-ASCII and repeated
    // strings, a `str` where bytes are due, and the positional form.
    let mut borrowed = common.clone();
    for n in 0..3u32 {
        borrowed.push(enc(&codecbus_fuzz::Owned {
            name: "grüße".repeat(n as usize),
            raw: (0..n as u8).collect(),
            note: (n != 1).then(|| "n".into()),
            tags: (0..n).map(|i| format!("t{i}")).collect(),
            index: (0..n).map(|i| (format!("k{i}"), i)).collect(),
            inner: (0..n)
                .map(|i| codecbus_fuzz::InnerOwned {
                    sku: format!("s{i}"),
                    blob: vec![0xff; i as usize],
                })
                .collect(),
        }));
    }
    borrowed.push(b"\x96\xa1a\xa1b\xc0\x90\x80\x91\x92\xa0\xc4\x00".to_vec());

    // Bridge frames (JSON text): each kind, bodies of every JSON type and
    // an extension value, headers of each kind, escapes; and the JSON
    // seeds' MessagePack, read as MessagePack written as JSON.
    let mut frames: Vec<Vec<u8>> = [
        r#"{"type":"ping"}"#,
        r#"{"type":"send","address":"echo","replyAddress":"r","headers":{"k":"v","n":1,"b":true,"z":null},"body":{"id":7,"lines":[{"sku":"a\u00e9\n","q":2.5e3}],"big":18446744073709551615,"neg":-9223372036854775808}}"#,
        r#"{"type":"publish","address":"news","body":[1,-1,1.5,null,true,"s",{},[]]}"#,
        r#"{"type":"send","address":"a","body":{"$ext":1,"$data":"AQID"}}"#,
        r#"{"type":"send","address":"a","body":{"$ext":300,"$data":"AQID"}}"#,
        r#"{"type":"register","address":"client.1"}"#,
        r#"{"type":"send","address":"__cb.0123456789ab.1","failureCode":42,"message":"no"}"#,
        r#"{"type":"send","address":"a","body":"text","type":"publish"}"#,
        r#"[1,2]"#,
    ]
    .iter()
    .map(|t| t.as_bytes().to_vec())
    .collect();
    frames.extend(json.iter().take(8).cloned());

    let sets = [
        map,
        array,
        enums,
        json,
        exts,
        round,
        spec,
        unions,
        keyed_seeds,
        lz4_payloads(),
        borrowed,
        frames,
        snapshots(),
    ];
    for (target, seeds) in TARGETS.iter().zip(sets.iter()) {
        let n = write_all(&root.join(target), seeds)?;
        println!("{target}: {n} seeds");
    }
    Ok(())
}
