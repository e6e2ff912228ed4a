//! Property: for any value, the validating parse and decode agree with
//! `JsValue::parse` / the plain decoder followed by `validate`: they succeed
//! exactly when `validate` finds nothing, return the same value, and the
//! violation they stop at is one `validate` reports.

use codecbus_core::{from_slice, to_vec};
use codecbus_json::spec::{
    Spec, SpecDecodeError, SpecParseError, any, array_of, boolean, integer, map_of, null, number,
    one_of, one_of_values, string, tuple,
};
use codecbus_json::{JsObj, JsValue, jsobj_spec};
use proptest::prelude::*;

/// Values shaped like the specs below, so that both outcomes are common:
/// few keys, small numbers, short strings.
fn arb_value() -> impl Strategy<Value = JsValue> {
    let leaf = prop_oneof![
        Just(JsValue::Null),
        prop::bool::ANY.prop_map(JsValue::from),
        (-3i64..=7).prop_map(JsValue::from),
        prop_oneof![
            Just(-1.5),
            Just(-1.0),
            Just(0.0),
            Just(0.5),
            Just(1.0),
            Just(2.5)
        ]
        .prop_map(JsValue::from),
        "[a-d]{0,3}".prop_map(JsValue::from),
        Just(JsValue::from(u64::MAX)),
        Just(JsValue::from(i64::MIN)),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(JsValue::from),
            prop::collection::vec(("[a-h]", inner), 0..6)
                .prop_map(|m| JsValue::Object(m.into_iter().collect::<JsObj>())),
        ]
    })
}

fn specs() -> Vec<Spec> {
    let flat = jsobj_spec! {
        "a": integer().range(-2..=5),
        "b"?: string().length(..=2),
        "c"?: array_of(number().range(-1.0..=1.0)).length(..=3).unique(),
        "d"?: one_of((boolean(), null())),
        "e"?: map_of(integer().nullable()).keys(string().pattern("^[a-c]$")).length(..=2),
        "f"?: tuple((any(), boolean())),
        "g"?: one_of_values(["a", "b"]),
    };
    let lenient = jsobj_spec! {
        "a"?: { "b": integer(), .. },
        "c"?: array_of(jsobj_spec! { "a"?: boolean(), "b"?: flat.clone() }),
        "d"?: integer().check("odd", |v| v.as_i64().is_some_and(|i| i % 2 != 0)),
        ..
    };
    let tree = Spec::recursive(|t| jsobj_spec! { "a"?: integer(), "b"?: array_of(t), "c"?: t2() });
    let either = Spec::recursive(|t| one_of((integer().min(0), array_of(t).length(..=3))));
    vec![flat, lenient, tree, either, array_of(string()).into()]
}

fn t2() -> Spec {
    string().nullable()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn parse_and_decode_agree_with_validate(value in arb_value()) {
        let text = value.to_string();
        let bytes = to_vec(&value).unwrap();
        let plain = JsValue::parse(&text).unwrap();
        prop_assert_eq!(&from_slice::<JsValue>(&bytes).unwrap(), &plain);
        for spec in specs() {
            let all = spec.validate(&plain);
            prop_assert_eq!(spec.is_valid(&plain), all.is_empty());
            match spec.parse(&text) {
                Ok(v) => {
                    prop_assert!(all.is_empty(), "parse accepted {}: {:?}", text, all);
                    prop_assert_eq!(&v, &plain);
                }
                Err(SpecParseError::Invalid(first)) => {
                    prop_assert!(all.contains(&first), "{}: {:?} not in {:?}", text, first, all);
                }
                Err(SpecParseError::Json(e)) => prop_assert!(false, "{}: {}", text, e),
            }
            match spec.decode(&bytes) {
                Ok(v) => {
                    prop_assert!(all.is_empty(), "decode accepted {}: {:?}", text, all);
                    prop_assert_eq!(&v, &plain);
                }
                Err(SpecDecodeError::Invalid(first)) => {
                    prop_assert!(all.contains(&first), "{}: {:?} not in {:?}", text, first, all);
                }
                Err(SpecDecodeError::Decode(e)) => prop_assert!(false, "{}: {}", text, e),
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in "[\\[\\]{}\",:0-9a-z \\-.]{0,40}") {
        for spec in specs() {
            let _ = spec.parse(&text);
            let _ = spec.decode(text.as_bytes());
        }
    }
}
