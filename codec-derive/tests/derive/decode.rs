//! Decoding rules of derived types: unknown keys, missing and duplicate
//! fields, array lengths, enum forms, error kinds and paths.

use codecbus_core::{
    Decode, DecodeError, DecodeErrorKind, MessageCodec, Reader, Writer, decode_prefix, from_slice,
    to_vec,
};

/// Builds MessagePack by hand for inputs no derived type would write.
fn mp(build: impl FnOnce(&mut Writer)) -> Vec<u8> {
    let mut w = Writer::new();
    build(&mut w);
    w.into_vec()
}

fn err<T: MessageCodec + std::fmt::Debug>(bytes: &[u8]) -> DecodeError {
    from_slice::<T>(bytes).expect_err("decoding should fail")
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Item {
    name: String,
    price: u32,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Order {
    id: u64,
    items: Vec<Item>,
    note: Option<String>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Envelope {
    order: Order,
}

fn item(w: &mut Writer, name: &str, price: u32) {
    w.write_map_len(2).unwrap();
    w.write_str("name").unwrap();
    w.write_str(name).unwrap();
    w.write_str("price").unwrap();
    w.write_u64(price.into());
}

#[test]
fn unknown_keys_are_skipped_whatever_their_value() {
    let bytes = mp(|w| {
        w.write_map_len(5).unwrap();
        w.write_str("extra").unwrap();
        w.write_map_len(1).unwrap();
        w.write_str("deep").unwrap();
        w.write_array_len(2).unwrap();
        w.write_nil();
        w.write_bin(b"\x00\x01").unwrap();
        w.write_str("name").unwrap();
        w.write_str("tea").unwrap();
        w.write_str("ext").unwrap();
        w.write_ext(5, b"abcd").unwrap();
        w.write_str("price").unwrap();
        w.write_u64(3);
        w.write_str("").unwrap();
        w.write_f64(1.0);
    });
    assert_eq!(
        from_slice::<Item>(&bytes).unwrap(),
        Item {
            name: "tea".into(),
            price: 3
        }
    );
}

#[test]
fn keys_in_any_order() {
    let bytes = mp(|w| {
        w.write_map_len(2).unwrap();
        w.write_str("price").unwrap();
        w.write_u64(9);
        w.write_str("name").unwrap();
        w.write_str("x").unwrap();
    });
    assert_eq!(from_slice::<Item>(&bytes).unwrap().price, 9);
}

#[test]
fn missing_option_is_none_and_missing_required_is_an_error() {
    let bytes = mp(|w| {
        w.write_map_len(2).unwrap();
        w.write_str("id").unwrap();
        w.write_u64(1);
        w.write_str("items").unwrap();
        w.write_array_len(0).unwrap();
    });
    assert_eq!(from_slice::<Order>(&bytes).unwrap().note, None);

    let bytes = mp(|w| {
        w.write_map_len(1).unwrap();
        w.write_str("name").unwrap();
        w.write_str("x").unwrap();
    });
    let e = err::<Item>(&bytes);
    assert_eq!(e.kind(), DecodeErrorKind::MissingField("price"));
    assert_eq!(e.to_string(), "missing field `price` (byte 8)");
}

#[test]
fn duplicate_key_is_an_error() {
    let bytes = mp(|w| {
        w.write_map_len(3).unwrap();
        w.write_str("price").unwrap();
        w.write_u64(1);
        w.write_str("name").unwrap();
        w.write_str("x").unwrap();
        w.write_str("price").unwrap();
        w.write_u64(2);
    });
    assert_eq!(
        err::<Item>(&bytes).kind(),
        DecodeErrorKind::DuplicateField("price")
    );
}

#[test]
fn keys_in_declared_order_then_anything_else() {
    // in order, then a duplicate of a key the in-order pass already took
    let bytes = mp(|w| {
        w.write_map_len(3).unwrap();
        w.write_str("name").unwrap();
        w.write_str("x").unwrap();
        w.write_str("price").unwrap();
        w.write_u64(1);
        w.write_str("name").unwrap();
        w.write_str("y").unwrap();
    });
    assert_eq!(
        err::<Item>(&bytes).kind(),
        DecodeErrorKind::DuplicateField("name")
    );

    // a key in a longer string form than the smallest, an unknown key in
    // the middle: both leave the in-order pass and are read as strings
    let mut bytes = mp(|w| w.write_map_len(3).unwrap());
    bytes.extend_from_slice(b"\xd9\x04name");
    bytes.extend(mp(|w| {
        w.write_str("x").unwrap();
        w.write_str("extra").unwrap();
        w.write_u64(9);
        w.write_str("price").unwrap();
        w.write_u64(2);
    }));
    assert_eq!(
        from_slice::<Item>(&bytes).unwrap(),
        Item {
            name: "x".into(),
            price: 2
        }
    );

    // fewer pairs than fields: the pass stops at the declared length
    let bytes = mp(|w| {
        w.write_map_len(1).unwrap();
        w.write_str("name").unwrap();
        w.write_str("x").unwrap();
        w.write_str("price").unwrap();
        w.write_u64(2);
    });
    let e = decode_prefix::<Item>(&bytes).unwrap_err();
    assert_eq!(e.kind(), DecodeErrorKind::MissingField("price"));

    // an error in a value read by the in-order pass carries its path
    let bytes = mp(|w| {
        w.write_map_len(2).unwrap();
        w.write_str("name").unwrap();
        w.write_str("x").unwrap();
        w.write_str("price").unwrap();
        w.write_i64(-1);
    });
    let e = err::<Item>(&bytes);
    assert_eq!(e.pointer(), "/price");
}

#[test]
fn error_path_names_the_failing_value() {
    let bytes = mp(|w| {
        w.write_map_len(1).unwrap();
        w.write_str("order").unwrap();
        w.write_map_len(2).unwrap();
        w.write_str("id").unwrap();
        w.write_u64(1);
        w.write_str("items").unwrap();
        w.write_array_len(4).unwrap();
        for i in 0..3 {
            item(w, "ok", i);
        }
        w.write_map_len(2).unwrap();
        w.write_str("name").unwrap();
        w.write_str("bad").unwrap();
        w.write_str("price").unwrap();
        w.write_str("12").unwrap();
    });
    let e = err::<Envelope>(&bytes);
    assert_eq!(
        e.kind(),
        DecodeErrorKind::TypeMismatch {
            expected: "integer",
            found: "string"
        }
    );
    assert_eq!(e.pointer(), "/order/items/3/price");
    assert!(e.to_string().contains("at `/order/items/3/price`"), "{e}");
}

#[test]
fn map_types_accept_arrays_and_check_their_length() {
    let positional = mp(|w| {
        w.write_array_len(2).unwrap();
        w.write_str("x").unwrap();
        w.write_u64(5);
    });
    assert_eq!(from_slice::<Item>(&positional).unwrap().price, 5);

    let long = mp(|w| {
        w.write_array_len(3).unwrap();
        w.write_str("x").unwrap();
        w.write_u64(5);
        w.write_u64(6);
    });
    assert_eq!(
        err::<Item>(&long).kind(),
        DecodeErrorKind::WrongLength {
            expected: 2,
            found: 3
        }
    );

    let short = mp(|w| {
        w.write_array_len(1).unwrap();
        w.write_str("x").unwrap();
    });
    assert_eq!(
        err::<Item>(&short).kind(),
        DecodeErrorKind::WrongLength {
            expected: 2,
            found: 1
        }
    );

    // A trailing `Option` may be left out, as it may be left out of a map.
    let no_note = mp(|w| {
        w.write_array_len(2).unwrap();
        w.write_u64(1);
        w.write_array_len(0).unwrap();
    });
    assert_eq!(from_slice::<Order>(&no_note).unwrap().note, None);
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct Row {
    id: u32,
    label: String,
    #[codec(default)]
    score: i64,
    extra: Option<u8>,
}

#[test]
fn as_array_rows() {
    let row = Row {
        id: 1,
        label: "a".into(),
        score: -5,
        extra: Some(2),
    };
    let bytes = to_vec(&row).unwrap();
    assert_eq!(bytes, b"\x94\x01\xa1a\xfb\x02");
    assert_eq!(from_slice::<Row>(&bytes).unwrap(), row);

    // Older writers that did not know the last fields.
    let old = mp(|w| {
        w.write_array_len(2).unwrap();
        w.write_u64(1);
        w.write_str("a").unwrap();
    });
    let decoded = from_slice::<Row>(&old).unwrap();
    assert_eq!((decoded.score, decoded.extra), (0, None));

    // A map by name is accepted too.
    let by_name = mp(|w| {
        w.write_map_len(2).unwrap();
        w.write_str("label").unwrap();
        w.write_str("b").unwrap();
        w.write_str("id").unwrap();
        w.write_u64(7);
    });
    assert_eq!(from_slice::<Row>(&by_name).unwrap().id, 7);

    let e = err::<Row>(&mp(|w| {
        w.write_array_len(2).unwrap();
        w.write_u64(1);
        w.write_u64(2);
    }));
    assert_eq!(e.pointer(), "/label");
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
enum Shape {
    Empty,
    Circle(f64),
    Rect(u32, u32),
    Poly { points: Vec<Item>, closed: bool },
}

#[test]
fn enum_forms_and_errors() {
    assert_eq!(from_slice::<Shape>(b"\xa5Empty").unwrap(), Shape::Empty);
    // `{name: nil}` is a unit variant too, as rmp-serde reads it.
    assert_eq!(
        from_slice::<Shape>(b"\x81\xa5Empty\xc0").unwrap(),
        Shape::Empty
    );

    let e = err::<Shape>(b"\xa7Hexagon");
    assert_eq!(e.kind(), DecodeErrorKind::UnknownVariant);
    assert_eq!(e.detail(), Some("Hexagon"));
    assert_eq!(e.offset(), 0);

    let e = err::<Shape>(b"\x81\xa7Hexagon\xc0");
    assert_eq!(e.kind(), DecodeErrorKind::UnknownVariant);
    assert_eq!(e.offset(), 1);

    let e = err::<Shape>(b"\xa6Circle");
    assert_eq!(
        e.kind(),
        DecodeErrorKind::TypeMismatch {
            expected: "map",
            found: "string"
        }
    );
    // The string is the enum's own value: there is no payload to point into.
    assert_eq!(e.pointer(), "");
    assert_eq!(e.detail(), Some("variant `Circle` has data"));

    let e = err::<Shape>(b"\x82\xa5Empty\xc0\xa5Empty\xc0");
    assert_eq!(
        e.kind(),
        DecodeErrorKind::WrongLength {
            expected: 1,
            found: 2
        }
    );

    let e = err::<Shape>(b"\x07");
    assert_eq!(
        e.kind(),
        DecodeErrorKind::TypeMismatch {
            expected: "string or map",
            found: "integer"
        }
    );

    let e = err::<Shape>(b"\x81\xa4Rect\x93\x01\x02\x03");
    assert_eq!(
        e.kind(),
        DecodeErrorKind::WrongLength {
            expected: 2,
            found: 3
        }
    );
    assert_eq!(e.pointer(), "/Rect");

    let e = err::<Shape>(b"\x81\xa4Rect\x92\x01\xa1x");
    assert_eq!(e.pointer(), "/Rect/1");

    let bytes = mp(|w| {
        w.write_map_len(1).unwrap();
        w.write_str("Poly").unwrap();
        w.write_map_len(2).unwrap();
        w.write_str("closed").unwrap();
        w.write_bool(true);
        w.write_str("points").unwrap();
        w.write_array_len(2).unwrap();
        item(w, "a", 1);
        w.write_map_len(1).unwrap();
        w.write_str("name").unwrap();
        w.write_str("b").unwrap();
    });
    let e = err::<Shape>(&bytes);
    assert_eq!(e.kind(), DecodeErrorKind::MissingField("price"));
    assert_eq!(e.pointer(), "/Poly/points/1");

    let e = err::<Shape>(b"\x81\xa6Circle\xa1x");
    assert_eq!(e.pointer(), "/Circle");
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct UserId(u64);

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct MaybeId(Option<u64>);

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Account {
    id: UserId,
    parent: MaybeId,
}

#[test]
fn newtypes_are_transparent_also_when_missing() {
    assert_eq!(to_vec(&UserId(300)).unwrap(), to_vec(&300u64).unwrap());
    let bytes = mp(|w| {
        w.write_map_len(1).unwrap();
        w.write_str("id").unwrap();
        w.write_u64(4);
    });
    assert_eq!(
        from_slice::<Account>(&bytes).unwrap(),
        Account {
            id: UserId(4),
            parent: MaybeId(None)
        }
    );
    let e = err::<Account>(b"\x80");
    assert_eq!(e.kind(), DecodeErrorKind::MissingField("id"));
}

#[test]
fn unit_struct_accepts_nil_and_empty_array_only() {
    #[derive(MessageCodec, Clone, Debug, PartialEq)]
    struct Tick;
    assert_eq!(from_slice::<Tick>(b"\x90").unwrap(), Tick);
    assert_eq!(from_slice::<Tick>(b"\xc0").unwrap(), Tick);
    assert_eq!(
        err::<Tick>(b"\x91\x01").kind(),
        DecodeErrorKind::WrongLength {
            expected: 0,
            found: 1
        }
    );
    assert!(matches!(
        err::<Tick>(b"\x01").kind(),
        DecodeErrorKind::TypeMismatch { .. }
    ));
}

#[test]
fn keys_are_matched_as_bytes_without_utf8_checks() {
    // An unknown key that is not UTF-8 is skipped, not an error.
    let bytes = b"\x83\xa2\xff\xfe\x01\xa4name\xa1n\xa5price\x02";
    assert_eq!(from_slice::<Item>(bytes).unwrap().price, 2);
    // Non-string keys are not struct keys.
    assert!(matches!(
        err::<Item>(b"\x81\x01\x02").kind(),
        DecodeErrorKind::TypeMismatch { .. }
    ));
}

#[test]
fn truncated_input_is_an_error_at_every_cut() {
    let order = Order {
        id: 77,
        items: vec![
            Item {
                name: "a".into(),
                price: 1,
            };
            3
        ],
        note: Some("n".into()),
    };
    let bytes = to_vec(&order).unwrap();
    for cut in 0..bytes.len() {
        assert!(from_slice::<Order>(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    assert_eq!(from_slice::<Order>(&bytes).unwrap(), order);
}

#[test]
fn decode_prefix_reports_bytes_used_and_trailing_bytes_fail() {
    let mut bytes = to_vec(&Shape::Rect(1, 2)).unwrap();
    let len = bytes.len();
    bytes.extend_from_slice(b"\xc0");
    let (shape, used) = decode_prefix::<Shape>(&bytes).unwrap();
    assert_eq!((shape, used), (Shape::Rect(1, 2), len));
    assert_eq!(
        err::<Shape>(&bytes).kind(),
        DecodeErrorKind::TrailingBytes(1)
    );
}

#[test]
fn reader_depth_is_balanced_after_a_derived_decode() {
    // Decoding many values from one reader must not accumulate depth.
    let one = to_vec(&Shape::Poly {
        points: vec![],
        closed: false,
    })
    .unwrap();
    let bytes: Vec<u8> = one.iter().copied().cycle().take(one.len() * 500).collect();
    let mut r = Reader::new(&bytes);
    for _ in 0..500 {
        Shape::decode(&mut r).unwrap();
    }
    assert!(r.is_empty());
}

#[derive(MessageCodec, Clone, Copy, Debug, PartialEq)]
#[codec(as_array)]
struct Point {
    x: f32,
    y: f32,
    z: f32,
}

#[derive(MessageCodec, Clone, Copy, Debug, PartialEq)]
struct Segment(Point, Point, #[codec(skip)] u8);

/// A positional struct read as it writes itself takes the straight-line
/// path; every other layout it accepts takes the general one. Both give
/// the same values, and the same errors at the same pointers.
#[test]
fn positional_structs_read_every_layout_and_locate_errors_on_both_paths() {
    let segments = vec![
        Segment(
            Point {
                x: 1.0,
                y: -2.5,
                z: f32::MAX,
            },
            Point {
                x: 0.0,
                y: f32::MIN_POSITIVE,
                z: -0.0,
            },
            0,
        );
        5
    ];
    let bytes = to_vec(&segments).unwrap();
    assert_eq!(&bytes[..3], b"\x95\x92\x93");
    assert_eq!(from_slice::<Vec<Segment>>(&bytes).unwrap(), segments);

    // By name, and with an f64 where an f32 goes.
    let point = mp(|w| {
        w.write_map_len(3).unwrap();
        for (key, v) in [("z", 3.0), ("x", 1.0), ("y", 2.0)] {
            w.write_str(key).unwrap();
            w.write_f64(v);
        }
    });
    let expected = Point {
        x: 1.0,
        y: 2.0,
        z: 3.0,
    };
    assert_eq!(from_slice::<Point>(&point).unwrap(), expected);
    let mut segment = b"\x92".to_vec();
    segment.extend_from_slice(&point);
    segment.extend_from_slice(&to_vec(&expected).unwrap());
    assert_eq!(
        from_slice::<Segment>(&segment).unwrap(),
        Segment(expected, expected, 0)
    );

    // A wrong value on the fast path: the element's field.
    let mut bad = bytes.clone();
    let third = 1 + 2 * (1 + 2 * 16);
    assert_eq!(&bad[third..third + 3], b"\x92\x93\xca");
    bad[third + 2] = 0xa0; // the first `x` of the third segment is ""
    let e = from_slice::<Vec<Segment>>(&bad).unwrap_err();
    assert_eq!(e.pointer(), "/2/0/x");
    assert!(matches!(e.kind(), DecodeErrorKind::TypeMismatch { .. }));

    // Too long, too short: the general path's length errors.
    let e = err::<Point>(b"\x94\x01\x02\x03\x04");
    assert_eq!(
        e.kind(),
        DecodeErrorKind::WrongLength {
            expected: 3,
            found: 4
        }
    );
    let e = err::<Point>(b"\x92\x01\x02");
    assert_eq!(
        e.kind(),
        DecodeErrorKind::WrongLength {
            expected: 3,
            found: 2
        }
    );
    // Truncated anywhere, on either path.
    for cut in 0..bytes.len() {
        assert!(
            from_slice::<Vec<Segment>>(&bytes[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    for cut in 0..point.len() {
        assert!(from_slice::<Point>(&point[..cut]).is_err(), "cut at {cut}");
    }
}
