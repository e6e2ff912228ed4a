//! JSON text, MessagePack and `serde_json::Value` round trips, malformed
//! input, decode limits, and the real-world documents in
//! `data/json/` (a missing document fails the test).

use std::path::PathBuf;
use std::sync::Arc;

use codecbus_core::{
    CodecRegistration, DecodeErrorKind, DecodeLimits, MessageCodec, from_slice,
    from_slice_with_limits, to_vec,
};
use codecbus_json::{JsArray, JsObj, JsValue};
use codecbus_json::{jsarr, jsobj};
use proptest::prelude::*;

// ---- strategies -------------------------------------------------------------

fn arb_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,8}",
        any::<String>(),
        Just("quote\" backslash\\ slash/ tab\t nl\n nul\u{0} ü 😀".to_string()),
    ]
}

fn arb_scalar(finite: bool) -> BoxedStrategy<JsValue> {
    let floats = if finite {
        prop_oneof![
            any::<f64>().prop_filter("finite", |f| f.is_finite()),
            Just(0.0),
            Just(-0.0),
            Just(1.0),
            Just(f64::MAX),
            Just(f64::MIN_POSITIVE),
            Just(5e-324),
        ]
        .boxed()
    } else {
        any::<f64>().boxed()
    };
    prop_oneof![
        Just(JsValue::Null),
        any::<bool>().prop_map(JsValue::from),
        any::<i64>().prop_map(JsValue::from),
        any::<u64>().prop_map(JsValue::from),
        prop_oneof![Just(i64::MIN), Just(-1), Just(0), Just(i64::MAX)].prop_map(JsValue::from),
        prop_oneof![Just(u64::MAX), Just(1u64 << 53), Just((1u64 << 53) + 1)]
            .prop_map(JsValue::from),
        floats.prop_map(JsValue::from),
        arb_string().prop_map(JsValue::from),
    ]
    .boxed()
}

/// Values whose containers sometimes cross the small/large threshold (32).
fn arb_json(finite: bool) -> impl Strategy<Value = JsValue> {
    arb_scalar(finite).prop_recursive(4, 160, 40, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..40).prop_map(JsValue::from),
            prop::collection::vec((prop_oneof!["[a-z]{0,3}", arb_string()], inner), 0..40)
                .prop_map(|m| JsValue::Object(m.into_iter().collect())),
        ]
    })
}

fn same_bits_or_equal(a: &JsValue, b: &JsValue) -> bool {
    // `==` treats 0.0 and -0.0 (and 1 and 1.0) as equal; round trips must
    // keep the exact representation, which the text shows.
    a == b && a.to_string() == b.to_string()
}

// ---- round trips --------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn text_value_text(v in arb_json(true)) {
        let text = v.to_string();
        let parsed = JsValue::parse(&text).unwrap();
        prop_assert!(same_bits_or_equal(&parsed, &v), "{} vs {}", parsed, v);
        prop_assert_eq!(parsed.to_string(), text.clone());
        let pretty = format!("{v:#}");
        prop_assert_eq!(JsValue::parse(&pretty).unwrap().to_string(), text.clone());
        // serde_json agrees on the text.
        let sv: serde_json::Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(serde_json::to_string(&sv).unwrap(), text);
    }

    #[test]
    fn printed_as_serde_json_prints(v in arb_json(false), s in any::<String>()) {
        // Written straight, not through the serializer: the same bytes.
        let by_serde = serde_json::to_vec(&v).unwrap();
        prop_assert_eq!(v.to_json_vec(), by_serde.clone());
        prop_assert_eq!(v.to_string().into_bytes(), by_serde);
        let s = JsValue::from(s.as_str());
        prop_assert_eq!(s.to_json_vec(), serde_json::to_vec(&s).unwrap());
    }

    #[test]
    fn value_msgpack_value(v in arb_json(false)) {
        let bytes = to_vec(&v).unwrap();
        let back: JsValue = from_slice(&bytes).unwrap();
        prop_assert_eq!(&back, &v);
        prop_assert_eq!(to_vec(&back).unwrap(), bytes.clone());
        // The same bytes as rmp-serde writes for the equivalent serde_json::Value.
        if !has_non_finite(&v) {
            let sv = serde_json::Value::from(&v);
            prop_assert_eq!(&rmp_serde::to_vec(&sv).unwrap(), &bytes);
            prop_assert_eq!(&to_vec(&sv).unwrap(), &bytes);
        }
    }

    #[test]
    fn serde_json_value_both_ways(v in arb_json(true)) {
        let sv = serde_json::Value::from(&v);
        let back = JsValue::from(&sv);
        prop_assert!(same_bits_or_equal(&back, &v));
        prop_assert!(v == sv);
        prop_assert_eq!(serde_json::Value::from(back.clone()), sv.clone());
        prop_assert_eq!(JsValue::from(sv.clone()), back);
        // And the serde_json::Value codec round-trips on its own.
        let bytes = to_vec(&sv).unwrap();
        prop_assert_eq!(from_slice::<serde_json::Value>(&bytes).unwrap(), sv);
    }

    #[test]
    fn serde_formats_other_than_json(v in arb_json(true)) {
        // Through serde into rmp-serde and back: Serialize/Deserialize are
        // format-independent.
        let bytes = rmp_serde::to_vec(&v).unwrap();
        let back: JsValue = rmp_serde::from_slice(&bytes).unwrap();
        prop_assert!(same_bits_or_equal(&back, &v));
    }
}

fn has_non_finite(v: &JsValue) -> bool {
    let mut found = false;
    let _ = v.map_values(|_, x| {
        if matches!(x, JsValue::Float(f) if !f.is_finite()) {
            found = true;
        }
        x.clone()
    });
    found
}

#[test]
fn numbers_keep_their_kind_and_range() {
    let text = r#"[0,-0,1,-1,1.0,-0.0,18446744073709551615,-9223372036854775808,9007199254740993,1e300,0.1,1e-7,123456789012345678901234567890]"#;
    let v = JsValue::parse(text).unwrap();
    let a = v.as_array().unwrap();
    assert_eq!(a.get(0), Some(&JsValue::from(0)));
    // serde_json reads `-0` as the float -0.0 (equal to 0).
    assert!(matches!(a.get(1), Some(JsValue::Float(f)) if f.is_sign_negative()));
    assert_eq!(a.get(1), Some(&JsValue::from(0)));
    assert!(matches!(a.get(4), Some(JsValue::Float(_))));
    assert_eq!(a.get(6).and_then(JsValue::as_u64), Some(u64::MAX));
    assert_eq!(a.get(7).and_then(JsValue::as_i64), Some(i64::MIN));
    assert_eq!(
        a.get(8).and_then(JsValue::as_u64),
        Some(9_007_199_254_740_993)
    );
    assert_eq!(a.get(9), Some(&JsValue::Float(1e300)));
    assert!(matches!(a.get(12), Some(JsValue::Float(_))));
    assert_eq!(
        v.to_string(),
        "[0,-0.0,1,-1,1.0,-0.0,18446744073709551615,-9223372036854775808,9007199254740993,1e+300,0.1,1e-7,1.2345678901234568e+29]"
    );
    // MessagePack: smallest integer forms, float 64 for floats.
    let bytes = to_vec(&jsarr![1, -1, 200, -200, 70000, u64::MAX, 1.0]).unwrap();
    assert_eq!(
        bytes,
        [
            &[
                0x97, 0x01, 0xff, 0xcc, 200, 0xd1, 0xff, 0x38, 0xce, 0, 1, 0x11, 0x70
            ][..],
            &[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            &[0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0],
        ]
        .concat()
    );
}

#[test]
fn duplicate_keys_keep_the_last_value() {
    let v = JsValue::parse(r#"{"a":1,"b":2,"a":3}"#).unwrap();
    assert_eq!(v.to_string(), r#"{"a":3,"b":2}"#);
    // The same in MessagePack: {"a":1,"a":2}
    let v: JsValue = from_slice(b"\x82\xa1a\x01\xa1a\x02").unwrap();
    assert_eq!(v.to_string(), r#"{"a":2}"#);
}

#[test]
fn typed_parsing_and_errors() {
    assert_eq!(JsObj::parse(r#"{"a":[]}"#).unwrap(), jsobj! { "a": [] });
    assert_eq!(JsArray::parse("[1]").unwrap(), jsarr![1]);
    let err = JsObj::parse("[1]").unwrap_err();
    assert!(!err.is_syntax(), "{err}");
    assert!(err.to_string().contains("expected a JSON object"), "{err}");
    let err = JsValue::parse("{\"a\": tru}").unwrap_err();
    assert!(err.is_syntax());
    assert_eq!((err.line(), err.column()), (1, 10));
    let err = JsValue::parse("[1,\n2").unwrap_err();
    assert!(err.is_eof());
    assert_eq!(err.line(), 2);
    assert!(std::error::Error::source(&err).is_some());
    assert!(JsValue::parse(&"[".repeat(1000)).is_err()); // nesting limit, no overflow
    assert!(JsValue::parse_slice(b"\"\xff\"").is_err()); // invalid UTF-8
    assert!("{} x".parse::<JsValue>().is_err()); // trailing characters
}

// ---- malformed input -----------------------------------------------------------

/// Every byte the escaping treats apart, at every place in an eight-byte
/// word, and strings of every length around one.
#[test]
fn escapes_at_every_place_print_as_serde_json_prints() {
    let specials = [
        0u8, 0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x1f, 0x20, b'"', b'\\', b'/', 0x7f,
    ];
    for len in 0..20 {
        for at in 0..len {
            for &special in &specials {
                let mut bytes = vec![b'a'; len];
                bytes[at] = special;
                let text = String::from_utf8(bytes).unwrap();
                let v = JsValue::from(text.as_str());
                assert_eq!(
                    v.to_json_vec(),
                    serde_json::to_vec(&text).unwrap(),
                    "{text:?}"
                );
            }
        }
        let text = "é".repeat(len) + &"😀".repeat(len % 3);
        let v = JsValue::from(text.as_str());
        assert_eq!(v.to_json_vec(), serde_json::to_vec(&text).unwrap());
    }
    for n in [i64::MIN, -1, 0, 1, i64::MAX] {
        assert_eq!(JsValue::from(n).to_string(), n.to_string());
    }
    assert_eq!(JsValue::from(u64::MAX).to_string(), u64::MAX.to_string());
    for f in [f64::NAN, f64::INFINITY, -0.0, 1.0, 1e300, 5e-324] {
        assert_eq!(
            JsValue::from(f).to_json_vec(),
            serde_json::to_vec(&JsValue::from(f)).unwrap()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = JsValue::parse_slice(&bytes);
        let _ = from_slice::<JsValue>(&bytes);
        let _ = from_slice::<JsObj>(&bytes);
        let _ = from_slice::<JsArray>(&bytes);
        let _ = from_slice::<serde_json::Value>(&bytes);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "[\\[\\]{}:,\"0-9a-z\\\\. -]{0,64}") {
        let _ = JsValue::parse(&text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn corrupted_encodings_never_panic(
        v in arb_json(false),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = to_vec(&v).unwrap();
        let truncated = &bytes[..cut.index(bytes.len())];
        prop_assert!(from_slice::<JsValue>(truncated).is_err());
        prop_assert!(from_slice::<serde_json::Value>(truncated).is_err());
        for (at, b) in edits {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        let _ = from_slice::<JsValue>(&bytes);
        let _ = from_slice::<serde_json::Value>(&bytes);
        let text = v.to_string().into_bytes();
        let _ = JsValue::parse_slice(&text[..cut.index(text.len())]);
    }
}

#[test]
fn decode_limits_are_honoured() {
    // Depth: 200 nested arrays.
    let mut deep = vec![0x91u8; 200];
    deep.push(0xc0);
    for r in [
        from_slice::<JsValue>(&deep).map(|_| ()),
        from_slice::<serde_json::Value>(&deep).map(|_| ()),
    ] {
        assert_eq!(r.unwrap_err().kind(), DecodeErrorKind::DepthLimitExceeded);
    }
    let ok = from_slice_with_limits::<JsValue>(&deep, DecodeLimits::default().max_depth(300));
    assert!(ok.is_ok());
    // A declared length of 4 billion with a few bytes of input.
    for bytes in [
        &b"\xdd\xff\xff\xff\xff\x01\x02"[..],
        b"\xdf\xff\xff\xff\xff\xa1a\x01",
    ] {
        let err = from_slice::<JsValue>(bytes).unwrap_err();
        assert_eq!(err.kind(), DecodeErrorKind::LengthOverflow, "{err}");
        let err = from_slice::<serde_json::Value>(bytes).unwrap_err();
        assert_eq!(err.kind(), DecodeErrorKind::LengthOverflow, "{err}");
    }
    // The allocation budget.
    let big = to_vec(&JsValue::from(vec!["x".repeat(1000); 10])).unwrap();
    let limits = DecodeLimits::default().max_alloc_bytes(5000);
    let err = from_slice_with_limits::<JsValue>(&big, limits).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::AllocLimitExceeded);
    let err = from_slice_with_limits::<serde_json::Value>(&big, limits).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::AllocLimitExceeded);
    // The collection length limit.
    let limits = DecodeLimits::default().max_collection_len(5);
    let err = from_slice_with_limits::<JsValue>(&big, limits).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::LengthOverflow);
}

#[test]
fn non_json_msgpack_is_a_clear_error() {
    // bin
    let err = from_slice::<JsValue>(b"\xc4\x01x").unwrap_err();
    assert!(
        matches!(
            err.kind(),
            DecodeErrorKind::TypeMismatch {
                found: "binary",
                ..
            }
        ),
        "{err}"
    );
    // ext, nested inside an object: the error says where
    let err = from_slice::<JsValue>(b"\x81\xa1a\x91\xd4\x01\x00").unwrap_err();
    assert!(matches!(
        err.kind(),
        DecodeErrorKind::TypeMismatch {
            found: "extension",
            ..
        }
    ));
    assert_eq!(err.pointer(), "/a/0");
    // Boolean map key
    let err = from_slice::<JsValue>(b"\x81\xc3\x01").unwrap_err();
    assert!(
        matches!(
            err.kind(),
            DecodeErrorKind::TypeMismatch {
                expected: "a string or integer map key",
                found: "boolean"
            }
        ),
        "{err}"
    );
    // Integer map keys are read as decimal text.
    let v: JsValue = from_slice(b"\x82\x01\xa1x\xff\xc0").unwrap();
    assert_eq!(v.to_string(), r#"{"-1":null,"1":"x"}"#);
    let sv: serde_json::Value = from_slice(b"\x81\x07\xc3").unwrap();
    assert_eq!(sv, serde_json::json!({ "7": true }));
    // Wrong container for the typed codecs
    assert!(matches!(
        from_slice::<JsObj>(b"\x90").unwrap_err().kind(),
        DecodeErrorKind::TypeMismatch {
            expected: "map",
            found: "array"
        }
    ));
    assert!(matches!(
        from_slice::<JsArray>(b"\x80").unwrap_err().kind(),
        DecodeErrorKind::TypeMismatch {
            expected: "array",
            found: "map"
        }
    ));
    // Reserved marker; trailing bytes
    assert_eq!(
        from_slice::<JsValue>(b"\xc1").unwrap_err().kind(),
        DecodeErrorKind::InvalidMarker(0xc1)
    );
    assert_eq!(
        from_slice::<JsValue>(b"\xc0\xc0").unwrap_err().kind(),
        DecodeErrorKind::TrailingBytes(1)
    );
    // Invalid UTF-8
    assert_eq!(
        from_slice::<JsValue>(b"\xa1\xff").unwrap_err().kind(),
        DecodeErrorKind::InvalidUtf8
    );
    // float 32 is accepted; non-finite floats become null in serde_json::Value
    let v: JsValue = from_slice(b"\xca\x3f\xc0\x00\x00").unwrap();
    assert_eq!(v, JsValue::from(1.5));
    let sv: serde_json::Value = from_slice(b"\xcb\x7f\xf8\0\0\0\0\0\0").unwrap();
    assert_eq!(sv, serde_json::Value::Null);
}

#[test]
fn decode_errors_are_located_by_json_pointer() {
    // {"a/b": {"c~d": [bin]}}: the pointer escapes `/` and `~`.
    let bytes = b"\x81\xa3a/b\x81\xa3c~d\x91\xc4\x00";
    for err in [
        from_slice::<JsValue>(bytes).unwrap_err(),
        from_slice::<serde_json::Value>(bytes).unwrap_err(),
    ] {
        assert_eq!(err.pointer(), "/a~1b/c~0d/0");
        assert!(err.to_string().contains(" at `/a~1b/c~0d/0` "), "{err}");
    }
    // An integer key is its decimal text: {7: [bin]}
    let err = from_slice::<JsValue>(b"\x81\x07\x91\xc4\x00").unwrap_err();
    assert_eq!(err.pointer(), "/7/0");
}

#[test]
fn invalid_utf8_in_a_key_is_located_at_the_map() {
    // {"a": [{"ok": 1, "\xff": 2}]}
    let bytes = b"\x81\xa1a\x91\x82\xa2ok\x01\xa1\xff\x02";
    let plain = from_slice::<JsValue>(bytes).unwrap_err();
    let obj = from_slice::<JsObj>(bytes).unwrap_err();
    let serde = from_slice::<serde_json::Value>(bytes).unwrap_err();
    for err in [plain, obj, serde] {
        assert_eq!(err.kind(), DecodeErrorKind::InvalidUtf8);
        assert_eq!(err.pointer(), "/a/0");
        assert_eq!(
            err.to_string(),
            "invalid UTF-8 in string at `/a/0` (byte 10)"
        );
    }
    // The validating decode reports it as the plain decoder does.
    let spec = codecbus_json::spec::any();
    match spec.decode(bytes) {
        Err(codecbus_json::spec::SpecDecodeError::Decode(e)) => {
            assert_eq!(e.kind(), DecodeErrorKind::InvalidUtf8);
            assert_eq!(e.pointer(), "/a/0");
        }
        other => panic!("{other:?}"),
    }
    let spec = codecbus_json::jsobj_spec! {
        "a": codecbus_json::spec::array_of(codecbus_json::spec::map_of(codecbus_json::spec::integer())),
    };
    match spec.decode(bytes) {
        Err(codecbus_json::spec::SpecDecodeError::Decode(e)) => {
            assert_eq!(e.kind(), DecodeErrorKind::InvalidUtf8);
            assert_eq!(e.pointer(), "/a/0");
        }
        other => panic!("{other:?}"),
    }
    // At the top level the pointer is empty and no location is shown.
    let err = from_slice::<JsValue>(b"\x81\xa1\xff\x01").unwrap_err();
    assert_eq!(err.pointer(), "");
    assert_eq!(err.to_string(), "invalid UTF-8 in string (byte 2)");
}

// ---- codecs, registration, transform ---------------------------------------------

#[test]
fn immutable_codecs_share_and_serde_json_copies() {
    let obj = jsobj! { "a": [1, 2, 3] };
    let body = Arc::new(obj.clone());
    assert!(Arc::ptr_eq(&JsObj::transform(&body), &body));
    let arr = Arc::new(jsarr![1]);
    assert!(Arc::ptr_eq(&JsArray::transform(&arr), &arr));
    let val = Arc::new(JsValue::from(obj));
    assert!(Arc::ptr_eq(&JsValue::transform(&val), &val));
    const _: () = assert!(JsObj::IMMUTABLE && JsArray::IMMUTABLE && JsValue::IMMUTABLE);
    const _: () = assert!(!<serde_json::Value as MessageCodec>::IMMUTABLE);
    fn immutable<T: codecbus_core::Immutable>() {}
    immutable::<JsObj>();
    immutable::<JsArray>();
    immutable::<JsValue>();

    let sv = Arc::new(serde_json::json!({ "a": [1, 2, 3] }));
    let copy = serde_json::Value::transform(&sv);
    assert!(!Arc::ptr_eq(&copy, &sv));
    assert_eq!(copy, sv);
}

#[test]
fn codecs_are_registered_by_name() {
    let find = |name: &str| -> CodecRegistration {
        *codecbus_core::registrations()
            .find(|r| r.name() == name)
            .unwrap_or_else(|| panic!("no codec registered as {name}"))
    };
    for (name, id, immutable, shape) in [
        (
            "json-obj-value",
            std::any::TypeId::of::<JsObj>(),
            true,
            r#"{"map":["str","json"]}"#,
        ),
        (
            "json-array-value",
            std::any::TypeId::of::<JsArray>(),
            true,
            r#"{"array":"json"}"#,
        ),
        (
            "json-value",
            std::any::TypeId::of::<JsValue>(),
            true,
            r#""json""#,
        ),
        (
            "serde-json-value",
            std::any::TypeId::of::<serde_json::Value>(),
            false,
            r#""json""#,
        ),
    ] {
        let reg = find(name);
        assert_eq!(reg.type_id(), id, "{name}");
        assert_eq!(reg.is_immutable(), immutable, "{name}");
        let described = reg.shape();
        assert_eq!(described.shape.canonical_json(), shape, "{name}");
        assert!(described.refs.is_empty(), "{name}");
    }
    // Through the type-erased registration.
    let reg = find("json-obj-value");
    let mut w = codecbus_core::Writer::new();
    let body: codecbus_core::AnyBody = Arc::new(jsobj! { "k": "v" });
    reg.encode(&*body, &mut w).unwrap();
    let back = reg
        .decode(&mut codecbus_core::Reader::new(w.as_slice()))
        .unwrap();
    assert_eq!(back.downcast_ref::<JsObj>(), Some(&jsobj! { "k": "v" }));
    assert!(Arc::ptr_eq(&reg.transform(&back), &back));
}

// ---- real-world documents ------------------------------------------------------

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/json")
}

#[test]
fn real_world_documents() {
    let dir = corpus_dir();
    for name in ["twitter.json", "citm_catalog.json", "canada.json"] {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let original: serde_json::Value = serde_json::from_str(&text).unwrap();
        let v = JsValue::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(v == original, "{name}: parsed value differs");

        // MessagePack both ways.
        let bytes = to_vec(&v).unwrap();
        let back: JsValue = from_slice(&bytes).unwrap();
        assert_eq!(back, v, "{name}: MessagePack round trip");
        assert_eq!(
            serde_json::Value::from(&back),
            original,
            "{name}: back to serde_json"
        );
        assert_eq!(
            to_vec(&original).unwrap(),
            bytes,
            "{name}: same bytes as serde_json::Value"
        );
        assert_eq!(from_slice::<serde_json::Value>(&bytes).unwrap(), original);

        // Printed back, compact and pretty: the same text serde_json prints.
        assert_eq!(v.to_string(), original.to_string(), "{name}: compact text");
        let reparsed: serde_json::Value = serde_json::from_str(&v.to_string()).unwrap();
        assert_eq!(reparsed, original, "{name}: printed text");
        let pretty: serde_json::Value = serde_json::from_str(&v.to_pretty_string()).unwrap();
        assert_eq!(pretty, original, "{name}: pretty text");
        assert_eq!(serde_json::Value::from(JsValue::from(&original)), original);
    }
}
