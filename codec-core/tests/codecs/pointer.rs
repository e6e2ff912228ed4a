//! Where a decode error is: the JSON Pointer (RFC 6901) of the value that
//! failed, escaped, with keys that are not strings as text, and the map's
//! pointer for a failure in a key.

use std::collections::{BTreeMap, HashMap};

use codecbus_core::{DecodeErrorKind, MessageCodec, PathSegment, from_slice, to_vec};

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Shipment {
    id: u32,
    parcels: Vec<Parcel>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Parcel {
    contents: Vec<u8>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Doc {
    meta: BTreeMap<String, String>,
    tags: HashMap<String, u8>,
    sorted: BTreeMap<String, u8>,
}

#[test]
fn a_bad_value_three_levels_down_has_its_pointer() {
    // {"id": 1, "parcels": [{"contents": [300]}]}
    let bytes = b"\x82\xa2id\x01\xa7parcels\x91\x81\xa8contents\x91\xcd\x01\x2c";
    let err = from_slice::<Shipment>(bytes).unwrap_err();
    assert_eq!(
        err.kind(),
        DecodeErrorKind::IntegerOutOfRange { target: "u8" }
    );
    assert_eq!(err.pointer(), "/parcels/0/contents/0");
    assert_eq!(
        err.path().cloned().collect::<Vec<_>>(),
        [
            PathSegment::Field("parcels"),
            PathSegment::Index(0),
            PathSegment::Field("contents"),
            PathSegment::Index(0),
        ]
    );
    assert_eq!(
        err.to_string(),
        "integer out of range for u8 at `/parcels/0/contents/0` (byte 25)"
    );
    assert_eq!(
        format!("{err:?}"),
        r#"DecodeError { kind: IntegerOutOfRange { target: "u8" }, offset: 25, pointer: "/parcels/0/contents/0", detail: None }"#
    );
}

#[test]
fn tilde_and_slash_in_keys_are_escaped() {
    // {"a/b": {"c~d": -1}} as maps of u8: -1 does not fit.
    let value: BTreeMap<String, BTreeMap<String, i8>> =
        [("a/b".into(), [("c~d".into(), -1)].into())].into();
    let bytes = to_vec(&value).unwrap();
    let err = from_slice::<BTreeMap<String, HashMap<String, u8>>>(&bytes).unwrap_err();
    assert_eq!(err.pointer(), "/a~1b/c~0d");
    assert!(err.to_string().contains(" at `/a~1b/c~0d` "), "{err}");
    // The segments themselves hold the keys as they are.
    assert_eq!(
        err.path().cloned().collect::<Vec<_>>(),
        [
            PathSegment::Key("a/b".into()),
            PathSegment::Key("c~d".into())
        ]
    );
    // `~1` is not decoded again into `/`: "~1" is written "~01".
    let value: BTreeMap<String, i8> = [("~1".into(), -1)].into();
    let err = from_slice::<BTreeMap<String, u8>>(&to_vec(&value).unwrap()).unwrap_err();
    assert_eq!(err.pointer(), "/~01");
    // An empty key is an empty token.
    let value: BTreeMap<String, i8> = [(String::new(), -1)].into();
    let err = from_slice::<BTreeMap<String, u8>>(&to_vec(&value).unwrap()).unwrap_err();
    assert_eq!(err.pointer(), "/");
}

#[test]
fn keys_that_are_not_strings_are_their_text() {
    // {7: {-1: "x"}}
    let err = from_slice::<HashMap<u16, BTreeMap<i8, u8>>>(b"\x81\x07\x81\xff\xa1x").unwrap_err();
    assert_eq!(
        err.kind(),
        DecodeErrorKind::TypeMismatch {
            expected: "integer",
            found: "string"
        }
    );
    assert_eq!(err.pointer(), "/7/-1");
    assert!(err.to_string().contains(" at `/7/-1` "), "{err}");
    // {true: 300}
    let err = from_slice::<BTreeMap<bool, u8>>(b"\x81\xc3\xcd\x01\x2c").unwrap_err();
    assert_eq!(err.pointer(), "/true");
    // {[1, "a/b"]: 300}: a compound key is written like JSON, then escaped.
    let err =
        from_slice::<BTreeMap<(u8, String), u8>>(b"\x81\x92\x01\xa3a/b\xcd\x01\x2c").unwrap_err();
    assert_eq!(err.pointer(), r#"/[1,"a~1b"]"#);
    assert_eq!(
        err.path().cloned().collect::<Vec<_>>(),
        [PathSegment::Key(r#"[1,"a/b"]"#.into())]
    );
}

#[test]
fn invalid_utf8_in_a_key_is_located_at_the_map() {
    // {"meta": {}, "tags": {"ok": 1, "\xff": 1}, "sorted": {}}
    let bytes = b"\x83\xa4meta\x80\xa4tags\x82\xa2ok\x01\xa1\xff\x01\xa6sorted\x80";
    let err = from_slice::<Doc>(bytes).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::InvalidUtf8);
    assert_eq!(err.pointer(), "/tags");
    assert_eq!(
        err.to_string(),
        "invalid UTF-8 in string at `/tags` (byte 18)"
    );

    // {"meta": {}, "tags": {}, "sorted": {"\xff": 1}}
    let bytes = b"\x83\xa4meta\x80\xa4tags\x80\xa6sorted\x81\xa1\xff\x01";
    let err = from_slice::<Doc>(bytes).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::InvalidUtf8);
    assert_eq!(err.pointer(), "/sorted");

    // Two levels of maps: {"a": {"\xff": 1}}
    let err = from_slice::<HashMap<String, BTreeMap<String, u8>>>(b"\x81\xa1a\x81\xa1\xff\x01")
        .unwrap_err();
    assert_eq!(err.pointer(), "/a");

    // The map at the top level: the empty pointer, and no location shown.
    let err = from_slice::<HashMap<String, u8>>(b"\x81\xa1\xff\x01").unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::InvalidUtf8);
    assert_eq!(err.pointer(), "");
    assert_eq!(err.to_string(), "invalid UTF-8 in string (byte 2)");

    // A key of the wrong type is located at the map too: [{"x": 1}] as a
    // list of maps with integer keys.
    let err = from_slice::<Vec<BTreeMap<u8, u8>>>(b"\x91\x81\xa1x\x01").unwrap_err();
    assert_eq!(err.pointer(), "/0");
}

#[test]
fn a_variant_payload_is_under_the_variant_name() {
    #[derive(MessageCodec, Clone, Debug, PartialEq)]
    enum Status {
        Pending,
        Shipped { at: u32, by: BTreeMap<String, u8> },
    }

    // {"Shipped": {"at": -1}}
    let err = from_slice::<Vec<Status>>(b"\x91\x81\xa7Shipped\x81\xa2at\xff").unwrap_err();
    assert_eq!(err.pointer(), "/0/Shipped/at");
    // {"Shipped": {"at": 1, "by": {"\xff": 1}}}: located at the map.
    let err =
        from_slice::<Status>(b"\x81\xa7Shipped\x82\xa2at\x01\xa2by\x81\xa1\xff\x01").unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::InvalidUtf8);
    assert_eq!(err.pointer(), "/Shipped/by");
}
