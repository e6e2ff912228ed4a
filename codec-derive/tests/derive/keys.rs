//! Keyed structs (`#[codec(key = N)]`): an array indexed by key, gaps as
//! `nil`, and versions that add and remove keys reading each other; and
//! `as_array` structs with reserved positions, written the same way.

use codecbus_core::{
    DecodeErrorKind, DecodeLimits, Encode, MessageCodec, Writer, from_slice,
    from_slice_with_limits, to_vec,
};
use proptest::prelude::*;

/// Builds MessagePack by hand.
fn mp(build: impl FnOnce(&mut Writer)) -> Vec<u8> {
    let mut w = Writer::new();
    build(&mut w);
    w.into_vec()
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Gap {
    #[codec(key = 0)]
    a: u8,
    #[codec(key = 2)]
    c: String,
}

#[test]
fn a_gap_is_written_as_nil() {
    let v = Gap {
        a: 7,
        c: "hi".into(),
    };
    let bytes = to_vec(&v).unwrap();
    assert_eq!(bytes, b"\x93\x07\xc0\xa2hi");
    assert_eq!(from_slice::<Gap>(&bytes).unwrap(), v);
}

/// Declared out of key order, renamed, and with a skipped field: the bytes
/// follow the keys alone.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct GapReordered {
    #[codec(key = 2, rename = "text")]
    label: String,
    #[codec(skip)]
    cache: u32,
    #[codec(key = 0)]
    first: u8,
}

#[test]
fn reordered_and_renamed_fields_keep_their_bytes() {
    let old = Gap {
        a: 7,
        c: "hi".into(),
    };
    let new = GapReordered {
        label: "hi".into(),
        cache: 0,
        first: 7,
    };
    assert_eq!(to_vec(&new).unwrap(), to_vec(&old).unwrap());
    assert_eq!(
        from_slice::<GapReordered>(&to_vec(&old).unwrap()).unwrap(),
        new
    );
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Wide {
    #[codec(key = 1)]
    a: bool,
    #[codec(key = 40)]
    b: u8,
}

#[test]
fn a_long_gap_is_nils_too() {
    let bytes = to_vec(&Wide { a: true, b: 3 }).unwrap();
    let mut expected = vec![0xdc, 0, 41, 0xc0, 0xc3];
    expected.extend([0xc0; 38]);
    expected.push(3);
    assert_eq!(bytes, expected);
    assert_eq!(from_slice::<Wide>(&bytes).unwrap(), Wide { a: true, b: 3 });
}

/// Version 1: keys 0, 1, 2.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct UserV1 {
    #[codec(key = 0)]
    id: u64,
    #[codec(key = 1)]
    name: String,
    #[codec(key = 2)]
    nickname: Option<String>,
}

/// Version 2: key 2 removed, key 3 added (with a default).
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct UserV2 {
    #[codec(key = 0)]
    id: u64,
    #[codec(key = 1)]
    name: String,
    #[codec(key = 3, default)]
    score: u32,
}

#[test]
fn new_reads_old() {
    let v1 = UserV1 {
        id: 1,
        name: "ada".into(),
        nickname: Some("a".into()),
    };
    let bytes = to_vec(&v1).unwrap();
    assert_eq!(bytes, b"\x93\x01\xa3ada\xa1a");
    assert_eq!(
        from_slice::<UserV2>(&bytes).unwrap(),
        UserV2 {
            id: 1,
            name: "ada".into(),
            score: 0,
        }
    );
}

#[test]
fn old_reads_new() {
    let v2 = UserV2 {
        id: 2,
        name: "bo".into(),
        score: 9,
    };
    let bytes = to_vec(&v2).unwrap();
    assert_eq!(bytes, b"\x94\x02\xa2bo\xc0\x09");
    assert_eq!(
        from_slice::<UserV1>(&bytes).unwrap(),
        UserV1 {
            id: 2,
            name: "bo".into(),
            nickname: None,
        }
    );
    assert_eq!(from_slice::<UserV2>(&bytes).unwrap(), v2);
}

#[test]
fn unknown_trailing_elements_are_skipped_whatever_they_hold() {
    let bytes = mp(|w| {
        w.write_array_len(5).unwrap();
        w.write_u64(3);
        w.write_str("cy").unwrap();
        w.write_nil();
        w.write_map_len(1).unwrap();
        w.write_str("deep").unwrap();
        w.write_array_len(2).unwrap();
        w.write_u64(1);
        w.write_u64(2);
        w.write_str("tail").unwrap();
    });
    assert_eq!(
        from_slice::<UserV1>(&bytes).unwrap(),
        UserV1 {
            id: 3,
            name: "cy".into(),
            nickname: None,
        }
    );
}

#[test]
fn a_nil_at_a_default_key_is_the_default() {
    let bytes = b"\x94\x02\xa2bo\xc0\xc0";
    assert_eq!(
        from_slice::<UserV2>(bytes).unwrap(),
        UserV2 {
            id: 2,
            name: "bo".into(),
            score: 0,
        }
    );
}

#[test]
fn a_nil_at_a_required_key_is_a_type_error_at_its_pointer() {
    let err = from_slice::<UserV2>(b"\x92\x02\xc0").unwrap_err();
    assert!(
        matches!(err.kind(), DecodeErrorKind::TypeMismatch { .. }),
        "{err}"
    );
    assert_eq!(err.pointer(), "/name");
}

#[test]
fn a_short_array_missing_a_required_key_names_the_field() {
    let err = from_slice::<UserV2>(b"\x91\x02").unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::MissingField("name"));
    assert!(err.to_string().contains("missing field `name`"), "{err}");
    // Missing trailing optional and default fields are filled in.
    assert_eq!(
        from_slice::<UserV1>(b"\x92\x05\xa1e").unwrap(),
        UserV1 {
            id: 5,
            name: "e".into(),
            nickname: None,
        }
    );
}

/// Version 1 of an account: `email` (key 1) and `plan` (key 3) are
/// required, neither `Option` nor `default`.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct AccountV1 {
    #[codec(key = 0)]
    id: u8,
    #[codec(key = 1)]
    email: String,
    #[codec(key = 2)]
    name: String,
    #[codec(key = 3)]
    plan: u8,
}

/// Version 2 retired keys 1 and 3.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct AccountV2 {
    #[codec(key = 0)]
    id: u8,
    #[codec(key = 2)]
    name: String,
}

/// Retiring a key is safe only where it held an `Option` or a `default`
/// field: a version that still has a required field there cannot read the
/// bytes of one that retired it. The retired key in the middle is written
/// as `nil`, a type error at the field; one at the end is left out, a
/// missing field.
#[test]
fn a_retired_required_key_is_an_error_for_the_versions_that_still_have_it() {
    let v2 = AccountV2 {
        id: 7,
        name: "ada".into(),
    };
    let bytes = to_vec(&v2).unwrap();
    assert_eq!(bytes, b"\x93\x07\xc0\xa3ada");
    let err = from_slice::<AccountV1>(&bytes).unwrap_err();
    assert_eq!(
        err.kind(),
        DecodeErrorKind::TypeMismatch {
            expected: "string",
            found: "nil"
        }
    );
    assert_eq!(
        err.to_string(),
        "expected string, found nil at `/email` (byte 2)"
    );
    // With `email` given, the missing `plan` (key 3, past the end).
    let bytes = b"\x93\x07\xa1e\xa3ada";
    let err = from_slice::<AccountV1>(bytes).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::MissingField("plan"));
    assert_eq!(err.to_string(), "missing field `plan` (byte 8)");
    // The other way round works: the newer version skips what it retired.
    let v1 = AccountV1 {
        id: 7,
        email: "e".into(),
        name: "ada".into(),
        plan: 2,
    };
    assert_eq!(from_slice::<AccountV2>(&to_vec(&v1).unwrap()).unwrap(), v2);
}

#[test]
fn bad_input_is_an_error_with_its_pointer() {
    // A string where `id` is.
    let err = from_slice::<UserV1>(b"\x92\xa1x\xa1y").unwrap_err();
    assert_eq!(err.pointer(), "/id");
    // Truncated inside a skipped element.
    let err = from_slice::<UserV1>(b"\x94\x01\xa1a\xc0\xa5ab").unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::Truncated, "{err}");
    // An array that declares more elements than there are.
    assert!(from_slice::<UserV1>(b"\x9f\x01").is_err());
    // Not an array or a map.
    assert!(from_slice::<UserV1>(b"\x01").is_err());
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Outer {
    #[codec(key = 1)]
    inner: Vec<Gap>,
}

#[test]
fn errors_inside_nested_keyed_structs_carry_the_whole_pointer() {
    // `[nil, [[1, nil, 2]]]`: `c` of the first element is an integer.
    let err = from_slice::<Outer>(b"\x92\xc0\x91\x93\x01\xc0\x02").unwrap_err();
    assert_eq!(err.pointer(), "/inner/0/c");
}

#[test]
fn skipping_respects_the_depth_limit() {
    // `[1, "a", nil, [[[...nil]]]]`: the unknown element at index 3 nests
    // deeper than the limit.
    let mut bytes = vec![0x94, 0x01, 0xa1, b'a', 0xc0];
    bytes.extend([0x91; 10]);
    bytes.push(0xc0);
    let limits = DecodeLimits::default().max_depth(4);
    match from_slice_with_limits::<UserV1>(&bytes, limits) {
        Ok(v) => assert_eq!(v.id, 1),
        Err(err) => assert_eq!(err.kind(), DecodeErrorKind::DepthLimitExceeded),
    }
}

#[test]
fn a_map_by_name_is_read_too() {
    let bytes = mp(|w| {
        w.write_map_len(2).unwrap();
        w.write_str("name").unwrap();
        w.write_str("ada").unwrap();
        w.write_str("id").unwrap();
        w.write_u64(1);
    });
    assert_eq!(
        from_slice::<UserV1>(&bytes).unwrap(),
        UserV1 {
            id: 1,
            name: "ada".into(),
            nickname: None,
        }
    );
}

#[test]
fn through_the_writer_and_reader_directly() {
    let v = Gap {
        a: 1,
        c: String::new(),
    };
    let mut w = Writer::new();
    v.encode(&mut w).unwrap();
    assert_eq!(w.into_vec(), b"\x93\x01\xc0\xa0");
}

proptest! {
    #[test]
    fn keyed_structs_round_trip(
        id in any::<u64>(),
        name in ".{0,12}",
        nickname in proptest::option::of(".{0,8}"),
        score in any::<u32>(),
    ) {
        let v1 = UserV1 { id, name: name.clone(), nickname };
        prop_assert_eq!(from_slice::<UserV1>(&to_vec(&v1).unwrap()).unwrap(), v1.clone());
        let v2 = UserV2 { id, name, score };
        prop_assert_eq!(from_slice::<UserV2>(&to_vec(&v2).unwrap()).unwrap(), v2.clone());
        // Each reads the other's bytes.
        let back = from_slice::<UserV2>(&to_vec(&v1).unwrap()).unwrap();
        prop_assert_eq!((back.id, &back.name, back.score), (v1.id, &v1.name, 0));
        let back = from_slice::<UserV1>(&to_vec(&v2).unwrap()).unwrap();
        prop_assert_eq!((back.id, &back.name, back.nickname), (v2.id, &v2.name, None));
    }
}

/// Version 1 of a positional point: `[x, label, y]`.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct PointV1 {
    x: i32,
    label: Option<String>,
    y: i32,
}

/// Version 2: `label` removed, its position reserved.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(as_array, reserved(1))]
struct PointV2 {
    x: i32,
    #[codec(skip)]
    cached: u8,
    y: i32,
}

/// Positions 0 and 3 reserved: the fields take 1, 2 and 4.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(as_array, reserved(3, 0))]
struct Spread {
    a: u8,
    b: u8,
    c: Option<u8>,
}

/// The last position reserved: not written, skipped when read.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(as_array, reserved(2))]
struct Trimmed {
    x: i32,
    label: Option<String>,
}

#[test]
fn a_reserved_position_is_nil_and_the_others_step_over_it() {
    let v2 = PointV2 {
        x: 1,
        cached: 0,
        y: -1,
    };
    let bytes = to_vec(&v2).unwrap();
    assert_eq!(bytes, b"\x93\x01\xc0\xff");
    assert_eq!(from_slice::<PointV2>(&bytes).unwrap(), v2);
    // Version 1 reads version 2 (its `label` is nil) and the other way
    // round (the label is skipped).
    assert_eq!(
        from_slice::<PointV1>(&bytes).unwrap(),
        PointV1 {
            x: 1,
            label: None,
            y: -1
        }
    );
    let v1 = to_vec(&PointV1 {
        x: 1,
        label: Some("a".into()),
        y: -1,
    })
    .unwrap();
    assert_eq!(v1, b"\x93\x01\xa1a\xff");
    assert_eq!(from_slice::<PointV2>(&v1).unwrap(), v2);
    // A map by name is read too.
    assert_eq!(
        from_slice::<PointV2>(b"\x82\xa1y\xff\xa1x\x01").unwrap(),
        v2
    );

    let spread = Spread {
        a: 1,
        b: 2,
        c: Some(4),
    };
    let bytes = to_vec(&spread).unwrap();
    assert_eq!(bytes, b"\x95\xc0\x01\x02\xc0\x04");
    assert_eq!(from_slice::<Spread>(&bytes).unwrap(), spread);
    // Whatever a reserved position holds is skipped; a short array leaves
    // the `Option` out.
    assert_eq!(
        from_slice::<Spread>(b"\x94\x92\x01\x02\x01\x02\xa1z").unwrap(),
        Spread {
            a: 1,
            b: 2,
            c: None
        }
    );

    let trimmed = Trimmed { x: 7, label: None };
    let bytes = to_vec(&trimmed).unwrap();
    assert_eq!(bytes, b"\x92\x07\xc0");
    // An older writer's third element is skipped, where a plain `as_array`
    // type refuses a longer array.
    assert_eq!(
        from_slice::<Trimmed>(b"\x93\x07\xc0\xa3old").unwrap(),
        trimmed
    );
    let err = from_slice::<PointV1>(b"\x94\x01\xc0\xff\x00").unwrap_err();
    assert!(
        matches!(err.kind(), DecodeErrorKind::WrongLength { .. }),
        "{err}"
    );
}
