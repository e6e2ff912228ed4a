//! Unions with stable integer tags (`#[codec(union)]`, `#[codec(tag = N)]`):
//! `[tag, payload]`, rename- and reorder-safe; an unknown tag is an error or
//! lands in the catch-all (`#[codec(other)]`) with its payload kept raw, so
//! an older version passes a newer one's values on unchanged.

use codecbus_core::ext::RawValue;
use codecbus_core::{DecodeErrorKind, MessageCodec, from_slice, to_vec};
use proptest::prelude::*;

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Point {
    x: i32,
    y: i32,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(union)]
enum Shape {
    #[codec(tag = 0)]
    Empty,
    #[codec(tag = 1)]
    Circle(u32),
    #[codec(tag = 2)]
    Segment(Point, Point),
    #[codec(tag = 300)]
    Labelled { label: String, at: Point },
}

#[test]
fn each_variant_is_its_tag_then_its_payload() {
    let cases: [(Shape, &[u8]); 4] = [
        (Shape::Empty, b"\x92\x00\xc0"),
        (Shape::Circle(5), b"\x92\x01\x05"),
        (
            Shape::Segment(Point { x: 1, y: 2 }, Point { x: -1, y: 0 }),
            b"\x92\x02\x92\x82\xa1x\x01\xa1y\x02\x82\xa1x\xff\xa1y\x00",
        ),
        (
            Shape::Labelled {
                label: "a".into(),
                at: Point { x: 0, y: 0 },
            },
            b"\x92\xcd\x01\x2c\x82\xa5label\xa1a\xa2at\x82\xa1x\x00\xa1y\x00",
        ),
    ];
    for (value, bytes) in cases {
        assert_eq!(to_vec(&value).unwrap(), bytes, "{value:?}");
        assert_eq!(from_slice::<Shape>(bytes).unwrap(), value);
    }
}

/// The same union declared in another order and with other variant names:
/// the tags alone decide.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(union)]
enum ShapeRenamed {
    #[codec(tag = 300)]
    Tagged { label: String, at: Point },
    #[codec(tag = 1)]
    Round(u32),
    #[codec(tag = 0)]
    Nothing,
    #[codec(tag = 2)]
    Line(Point, Point),
}

#[test]
fn tags_survive_renames_and_reordering() {
    let bytes = to_vec(&Shape::Circle(9)).unwrap();
    assert_eq!(
        from_slice::<ShapeRenamed>(&bytes).unwrap(),
        ShapeRenamed::Round(9)
    );
    let bytes = to_vec(&ShapeRenamed::Nothing).unwrap();
    assert_eq!(from_slice::<Shape>(&bytes).unwrap(), Shape::Empty);
}

#[test]
fn an_unknown_tag_is_an_error_naming_it() {
    let err = from_slice::<Shape>(b"\x92\x07\xc0").unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::UnknownVariant);
    assert_eq!(err.offset(), 1);
    assert!(err.to_string().contains("tag 7"), "{err}");
}

#[test]
fn malformed_unions_are_errors_not_panics() {
    for bytes in [
        b"\x91\x01".as_slice(),                          // no payload
        b"\x93\x01\x05\x05",                             // three elements
        b"\xa6Circle",                                   // the externally tagged form
        b"\x92\xa1x\x05",                                // a tag that is not an integer
        b"\x92\xcf\x00\x00\x00\x01\x00\x00\x00\x00\x05", // over u32
        b"\x92\x01\xa1x",                                // a payload of another type
        b"\x92\x01",                                     // cut short
    ] {
        assert!(from_slice::<Shape>(bytes).is_err(), "{bytes:?}");
    }
    let err = from_slice::<Shape>(b"\x92\x01\xa1x").unwrap_err();
    assert_eq!(err.pointer(), "/Circle");
}

/// Version 1 of a union, with a catch-all; version 2 adds a variant.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(union)]
enum EventV1 {
    #[codec(tag = 0)]
    Created { id: u64 },
    #[codec(tag = 1)]
    Deleted { id: u64 },
    #[codec(other)]
    Unknown(u32, RawValue),
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(union)]
enum EventV2 {
    #[codec(tag = 0)]
    Created { id: u64 },
    #[codec(tag = 1)]
    Deleted { id: u64 },
    #[codec(tag = 2)]
    Renamed { id: u64, name: String },
}

#[test]
fn an_older_version_keeps_a_newer_variant_and_passes_it_on() {
    let newer = EventV2::Renamed {
        id: 4,
        name: "report".into(),
    };
    let bytes = to_vec(&newer).unwrap();
    let older = from_slice::<EventV1>(&bytes).unwrap();
    let EventV1::Unknown(tag, raw) = &older else {
        panic!("{older:?}");
    };
    assert_eq!(*tag, 2);
    assert_eq!(raw.as_bytes(), &bytes[2..]);
    // Written back unchanged: the newer version reads it again.
    let again = to_vec(&older).unwrap();
    assert_eq!(again, bytes);
    assert_eq!(from_slice::<EventV2>(&again).unwrap(), newer);
    // Known tags still decode as themselves.
    let bytes = to_vec(&EventV2::Deleted { id: 1 }).unwrap();
    assert_eq!(
        from_slice::<EventV1>(&bytes).unwrap(),
        EventV1::Deleted { id: 1 }
    );
    // A catch-all payload that is not one value is an error.
    assert!(from_slice::<EventV1>(b"\x92\x09\x92\x01").is_err());
}

fn shapes() -> impl Strategy<Value = Shape> {
    let point = (any::<i32>(), any::<i32>()).prop_map(|(x, y)| Point { x, y });
    prop_oneof![
        Just(Shape::Empty),
        any::<u32>().prop_map(Shape::Circle),
        (point.clone(), point.clone()).prop_map(|(a, b)| Shape::Segment(a, b)),
        (".{0,20}", point).prop_map(|(label, at)| Shape::Labelled { label, at }),
    ]
}

proptest! {
    #[test]
    fn unions_round_trip(shape in shapes()) {
        let bytes = to_vec(&shape).unwrap();
        prop_assert_eq!(from_slice::<Shape>(&bytes).unwrap(), shape);
    }

    #[test]
    fn any_bytes_decode_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..48)) {
        let _ = from_slice::<Shape>(&bytes);
        let _ = from_slice::<EventV1>(&bytes);
    }

    #[test]
    fn unknown_tags_pass_through_the_catch_all(tag in 2u32.., payload in shapes()) {
        let mut bytes = vec![0x92];
        let mut w = codecbus_core::Writer::from_vec(Vec::new());
        w.write_u64(u64::from(tag));
        bytes.extend(w.into_vec());
        bytes.extend(to_vec(&payload).unwrap());
        let v1 = from_slice::<EventV1>(&bytes).unwrap();
        prop_assert_eq!(to_vec(&v1).unwrap(), bytes);
    }
}

/// Transform (local delivery) copies a union like any enum.
#[test]
fn a_union_is_copied_on_local_delivery() {
    let shape = std::sync::Arc::new(Shape::Circle(3));
    let copy = Shape::transform(&shape);
    assert_eq!(*copy, Shape::Circle(3));
    assert!(!std::sync::Arc::ptr_eq(&copy, &shape));
}
