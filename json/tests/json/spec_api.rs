//! Specs: every constraint accepted and rejected with its pointer, expected
//! and found text, through `validate`, `parse` and `decode` alike.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use codecbus_core::to_vec;
use codecbus_json::spec::{
    Spec, SpecDecodeError, SpecParseError, Violation, any, array, array_of, boolean, float,
    integer, map_of, null, number, object, one_of, one_of_values, string, tuple,
};
use codecbus_json::{JsValue, jsarr, jsobj, jsobj_spec};

/// The violations of `value`, checked to be what `parse` and `decode`
/// report first (both stop at a violation `validate` reports too).
fn violations(spec: &(impl Into<Spec> + Clone), value: impl Into<JsValue>) -> Vec<Violation> {
    let spec: Spec = spec.clone().into();
    let value = value.into();
    let all = spec.validate(&value);
    assert_eq!(spec.is_valid(&value), all.is_empty(), "{value}: {all:?}");
    match spec.parse(&value.to_string()) {
        Ok(v) => {
            assert!(all.is_empty(), "parse accepted {value}: {all:?}");
            assert_eq!(v, value);
        }
        Err(SpecParseError::Invalid(first)) => {
            assert!(all.contains(&first), "parse: {first:?} not in {all:?}")
        }
        Err(e) => panic!("parse {value}: {e}"),
    }
    match spec.decode(&to_vec(&value).unwrap()) {
        Ok(v) => {
            assert!(all.is_empty(), "decode accepted {value}: {all:?}");
            assert_eq!(v, value);
        }
        Err(SpecDecodeError::Invalid(first)) => {
            assert!(all.contains(&first), "decode: {first:?} not in {all:?}")
        }
        Err(e) => panic!("decode {value}: {e}"),
    }
    all
}

/// The single violation of `value`: `(pointer, expected, found)`.
fn one(spec: &(impl Into<Spec> + Clone), value: impl Into<JsValue>) -> (String, String, String) {
    let all = violations(spec, value);
    assert_eq!(all.len(), 1, "{all:?}");
    let v = &all[0];
    (v.pointer(), v.expected().to_owned(), v.found().to_owned())
}

fn ok(spec: &(impl Into<Spec> + Clone), value: impl Into<JsValue>) {
    let all = violations(spec, value);
    assert!(all.is_empty(), "{all:?}");
}

fn t(p: &str, e: &str, f: &str) -> (String, String, String) {
    (p.to_owned(), e.to_owned(), f.to_owned())
}

#[test]
fn spec_is_send_sync_and_cheap_to_clone() {
    fn send_sync<T: Send + Sync + Clone + 'static>() {}
    send_sync::<Spec>();
    send_sync::<Violation>();
    fn error<T: std::error::Error + Send + Sync + 'static>() {}
    error::<Violation>();
    error::<SpecParseError>();
    error::<SpecDecodeError>();
}

#[test]
fn scalars() {
    ok(&any(), jsobj! { "x": [1] });
    ok(&null(), JsValue::Null);
    assert_eq!(one(&null(), 0), t("", "null", "0"));
    ok(&boolean(), true);
    assert_eq!(one(&boolean(), "true"), t("", "boolean", "\"true\""));
    let s: Spec = string().into();
    ok(&s, "");
    assert_eq!(one(&s, 1), t("", "string", "1"));
    assert_eq!(
        one(&s, jsarr![1, 2]),
        t("", "string", "an array of 2 items")
    );
    assert_eq!(
        one(&s, jsobj! {}),
        t("", "string", "an object of 0 members")
    );
}

#[test]
fn integers_over_the_whole_range() {
    let i: Spec = integer().into();
    ok(&i, i64::MIN);
    ok(&i, u64::MAX);
    assert_eq!(one(&i, 1.0), t("", "integer", "1.0"));
    let r: Spec = integer().range(1..=100).into();
    ok(&r, 1);
    ok(&r, 100);
    assert_eq!(one(&r, 0), t("", "integer in 1..=100", "0"));
    assert_eq!(one(&r, 101), t("", "integer in 1..=100", "101"));
    let top: Spec = integer().min(u64::MAX - 1).into();
    ok(&top, u64::MAX);
    let (_, e, f) = one(&top, i64::MAX);
    assert_eq!(
        (e.as_str(), f.as_str()),
        ("integer >= 18446744073709551614", "9223372036854775807")
    );
    let bottom: Spec = integer().max(i64::MIN).into();
    ok(&bottom, i64::MIN);
    assert_eq!(
        one(&bottom, i64::MIN + 1).1,
        "integer <= -9223372036854775808"
    );
    let exclusive: Spec = integer().range(0..u64::MAX).into();
    assert_eq!(
        one(&exclusive, u64::MAX).1,
        "integer in 0..=18446744073709551614"
    );
    assert_eq!(one(&integer().range(..0), 0).1, "integer <= -1");
}

#[test]
fn floats_and_numbers() {
    let f: Spec = float().range(0.0..1.0).into();
    ok(&f, 0.0);
    ok(&f, 0.5);
    assert_eq!(one(&f, 1.0), t("", "float in [0.0, 1.0)", "1.0"));
    assert_eq!(one(&f, 0), t("", "float in [0.0, 1.0)", "0"));
    let n: Spec = number().min(-1.5).max(2.0).into();
    ok(&n, -1.5);
    ok(&n, 2);
    assert_eq!(one(&n, 3), t("", "number in [-1.5, 2.0]", "3"));
    assert_eq!(one(&n, "1"), t("", "number in [-1.5, 2.0]", "\"1\""));
    // Integers compare with float bounds exactly: 2^53 + 1 > 2^53.
    let big: Spec = number().max(9_007_199_254_740_992.0).into();
    ok(&big, 9_007_199_254_740_992_u64);
    assert_eq!(one(&big, 9_007_199_254_740_993_u64).2, "9007199254740993");
    let nan: Spec = float().min(f64::NAN).into();
    assert!(!nan.is_valid(&JsValue::from(1.0)));
}

#[test]
fn strings() {
    let s: Spec = string().length(2..=3).into();
    ok(&s, "ab");
    ok(&s, "äöü"); // characters, not bytes
    assert_eq!(
        one(&s, "a"),
        t("", "string of 2..=3 characters", "a string of 1 character")
    );
    assert_eq!(one(&s, "abcd").2, "a string of 4 characters");
    let p: Spec = string().pattern("^[a-z]+$").into();
    ok(&p, "abc");
    assert_eq!(
        one(&p, "aBc"),
        t("", "string matching /^[a-z]+$/", "\"aBc\"")
    );
    assert!(string().try_pattern("(").is_err());
    let long = "x".repeat(100);
    let found = one(&p, format!("{long}!")).2;
    assert!(
        found.starts_with("\"xxxx") && found.ends_with("…\""),
        "{found}"
    );
    assert_eq!(
        one(&string().length(..0), "").1,
        "string of 1..=0 characters"
    );
}

#[test]
fn patterns_read_as_builders() {
    // A literal pattern is a builder like any other: no `Result` to unwrap.
    let code = string().length(3..=3).pattern("^[A-Z]+$");
    ok(&code, "EUR");
    assert_eq!(one(&code, "eur").1, "string matching /^[A-Z]+$/");
    // A pattern from data keeps its error.
    let from_data = ["^[0-9]+$", "("].map(|p| string().try_pattern(p).map(Spec::from));
    assert!(
        from_data[0]
            .as_ref()
            .is_ok_and(|s| s.is_valid(&"42".into()))
    );
    assert!(from_data[1].is_err());
    let re = regex::Regex::new("^a").unwrap();
    ok(&string().matching(re), "ab");
}

#[test]
#[should_panic(expected = "invalid string pattern /[a-/")]
fn an_invalid_literal_pattern_panics_naming_it() {
    let _ = string().pattern("[a-");
}

#[test]
fn recursive_takes_any_builder() {
    // The closure returns the builder itself, without `.into()`.
    let nested = Spec::recursive(|me| array_of(me).length(..=2));
    ok(&nested, jsarr![[], [[], []]]);
    assert_eq!(one(&nested, jsarr![[], [[], [], []]]).0, "/1");
    let list = Spec::recursive(|me| object().required("head", integer()).optional("tail", me));
    ok(&list, jsobj! { "head": 1, "tail": { "head": 2 } });
}

#[test]
fn fixed_values() {
    let v = one_of_values([JsValue::from("a"), 1.into(), JsValue::Null]);
    ok(&v, "a");
    ok(&v, 1.0); // JSON equality
    ok(&v, JsValue::Null);
    assert_eq!(one(&v, "b"), t("", "one of \"a\", 1, null", "\"b\""));
    assert_eq!(
        one(&v, jsarr![]),
        t("", "one of \"a\", 1, null", "an array of 0 items")
    );
}

#[test]
fn fixed_values_may_be_arrays_and_objects() {
    let v = one_of_values([
        JsValue::from(jsarr![1, 2]),
        jsobj! { "a": [true] }.into(),
        JsValue::from(3),
    ]);
    ok(&v, jsarr![1, 2]);
    ok(&v, jsobj! { "a": [true] });
    ok(&v, 3);
    assert_eq!(one(&v, jsarr![2, 1]).0, "");
    assert_eq!(one(&v, jsobj! { "a": [false] }).2, "an object of 1 member");
    assert_eq!(one(&v, 4).1, "one of [1,2], {\"a\":[true]}, 3");
    // In a container: the pointer is the member's
    let o = jsobj_spec! { "pair": v };
    assert_eq!(one(&o, jsobj! { "pair": [1] }).0, "/pair");
    ok(&o, jsobj! { "pair": [1, 2] });
}

#[test]
fn arrays() {
    let a: Spec = array_of(integer().min(0)).length(1..=3).unique().into();
    ok(&a, jsarr![0, 1, 2]);
    assert_eq!(
        one(&a, jsarr![]),
        t("", "array of 1..=3 items, unique", "an array of 0 items")
    );
    assert_eq!(one(&a, jsarr![1, 2, 3, 4]).2, "an array of 4 items");
    assert_eq!(one(&a, jsarr![1, -2]), t("/1", "integer >= 0", "-2"));
    assert_eq!(
        one(&a, jsarr![1, 2, 1]),
        t("/2", "unique items", "a duplicate of item 0")
    );
    assert_eq!(one(&a, 1), t("", "array of 1..=3 items, unique", "1"));
    ok(&array(), jsarr![1, "a", null]);
    let long: Spec = array_of(integer()).into();
    let many: Vec<JsValue> = (0..40).map(JsValue::from).chain(["x".into()]).collect();
    assert_eq!(one(&long, many).0, "/40");
}

#[test]
fn tuples() {
    let p: Spec = tuple((string(), integer(), boolean().nullable())).into();
    ok(&p, jsarr!["a", 1, null]);
    ok(&p, jsarr!["a", 1, false]);
    assert_eq!(
        one(&p, jsarr!["a", 1]),
        t("", "array of exactly 3 items", "an array of 2 items")
    );
    assert_eq!(one(&p, jsarr!["a", 1, true, 4]).2, "an array of 4 items");
    assert_eq!(one(&p, jsarr!["a", "b", true]), t("/1", "integer", "\"b\""));
    ok(&tuple(Vec::<Spec>::new()), jsarr![]);
}

#[test]
fn objects_strict_lenient_optional() {
    let strict = jsobj_spec! { "a": integer(), "b"?: string() };
    ok(&strict, jsobj! { "a": 1 });
    ok(&strict, jsobj! { "a": 1, "b": "x" });
    assert_eq!(
        one(&strict, jsobj! { "b": "x" }),
        t("/a", "integer", "nothing")
    );
    assert_eq!(
        one(&strict, jsobj! { "a": 1, "c~/": [1] }),
        t(
            "/c~0~1",
            "no such member (the object is strict)",
            "an array of 1 item"
        )
    );
    assert_eq!(
        one(&strict, jsobj! { "a": 1, "b": null }),
        t("/b", "string", "null")
    );
    let lenient = jsobj_spec! { "a": integer(), .. };
    ok(&lenient, jsobj! { "a": 1, "c": { "deep": [true] } });
    assert_eq!(one(&lenient, jsobj! { "c": 1 }).0, "/a");
    ok(&object().lenient(), jsobj! { "any": 1 });
    assert_eq!(one(&object(), jsobj! { "any": 1 }).0, "/any");
    // Redefining a key replaces it, required or not.
    let redefined: Spec = object()
        .required("a", integer())
        .optional("a", string())
        .into();
    ok(&redefined, jsobj! {});
    assert_eq!(one(&redefined, jsobj! { "a": 1 }).1, "string");
    let nested = jsobj_spec! { "outer": { "inner"?: { "x": boolean() } } };
    assert_eq!(
        one(&nested, jsobj! { "outer": { "inner": { "x": 1 } } }),
        t("/outer/inner/x", "boolean", "1")
    );
    let key = String::from("dynamic");
    let keyed = jsobj_spec! { (key.as_str()): integer() };
    ok(&keyed, jsobj! { "dynamic": 1 });
}

#[test]
fn maps() {
    let m: Spec = map_of(integer().min(0))
        .keys(string().pattern("^[a-z]+$"))
        .length(1..=2)
        .into();
    ok(&m, jsobj! { "a": 1, "b": 2 });
    assert_eq!(one(&m, jsobj! { "a": -1 }), t("/a", "integer >= 0", "-1"));
    assert_eq!(
        one(&m, jsobj! { "A": 1 }),
        t("/A", "string matching /^[a-z]+$/", "\"A\"")
    );
    assert_eq!(
        one(&m, jsobj! {}),
        t("", "object of 1..=2 members", "an object of 0 members")
    );
    assert_eq!(
        one(&m, jsobj! { "a": 1, "b": 2, "c": 3 }).2,
        "an object of 3 members"
    );
    assert_eq!(one(&m, jsarr![]).1, "object of 1..=2 members");
}

#[test]
fn nullable_and_one_of() {
    let n = integer().range(1..=2).nullable();
    ok(&n, JsValue::Null);
    assert_eq!(one(&n, 3), t("", "integer in 1..=2", "3"));
    assert_eq!(one(&n, "x"), t("", "null or integer in 1..=2", "\"x\""));
    let o = one_of((integer(), jsobj_spec! { "id": integer() }));
    ok(&o, 1);
    ok(&o, jsobj! { "id": 2 });
    assert_eq!(
        one(&o, jsobj! { "id": "2" }),
        t("", "one of: integer | object", "an object of 1 member")
    );
    let nested = jsobj_spec! { "v": one_of((boolean(), string())) };
    assert_eq!(
        one(&nested, jsobj! { "v": 1 }),
        t("/v", "one of: boolean | string", "1")
    );
    assert_eq!(
        one(&one_of(Vec::<Spec>::new()), 1).1,
        "one of no alternatives"
    );
}

#[test]
fn user_checks() {
    let even = integer().check("an even number", |v| v.as_i64().is_some_and(|i| i % 2 == 0));
    ok(&even, 2);
    assert_eq!(one(&even, 3), t("", "an even number", "3"));
    // Checks see only values that passed the rest of the spec.
    assert_eq!(one(&even, "x"), t("", "integer", "\"x\""));
    let sorted = array_of(integer()).check("sorted", |v| {
        let a = v.as_array().unwrap();
        a.iter()
            .zip(a.iter().skip(1))
            .all(|(x, y)| x.as_i64() <= y.as_i64())
    });
    ok(&sorted, jsarr![1, 2, 2]);
    assert_eq!(
        one(&sorted, jsarr![2, 1]),
        t("", "sorted", "an array of 2 items")
    );
    assert_eq!(one(&sorted, jsarr![2, "x"]).0, "/1");
    let null_ok = integer()
        .nullable()
        .check("positive", |v| v.as_i64().is_some_and(|i| i > 0));
    ok(&null_ok, JsValue::Null);
}

#[test]
fn validate_reports_every_violation_in_order() {
    let spec = jsobj_spec! {
        "a": integer(),
        "b": array_of(string()),
        "c": { "d": boolean(), "e": null() },
    };
    let v = jsobj! { "b": [1, "x", 2], "c": { "e": 0 }, "z": 1 };
    let all: Vec<String> = spec
        .validate(&v.into())
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        all,
        [
            "/a: expected integer, found nothing",
            "/b/0: expected string, found 1",
            "/b/2: expected string, found 2",
            "/c/d: expected boolean, found nothing",
            "/c/e: expected null, found 0",
            "/z: expected no such member (the object is strict), found 1",
        ]
    );
    assert_eq!(
        integer().validate(&"x".into())[0].to_string(),
        "(root): expected integer, found \"x\""
    );
}

#[test]
fn parse_and_decode_stop_at_the_first_violation() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    let item = integer().check("counted", move |_| {
        counter.fetch_add(1, Ordering::Relaxed);
        true
    });
    let root_checked = Arc::new(AtomicUsize::new(0));
    let root_counter = Arc::clone(&root_checked);
    let spec = array_of(item).check("the whole array", move |_| {
        root_counter.fetch_add(1, Ordering::Relaxed);
        true
    });

    let err = spec.parse("[1, 2, \"x\", 4, 5]").unwrap_err();
    assert_eq!(err.violation().unwrap().pointer(), "/2");
    assert_eq!(
        seen.load(Ordering::Relaxed),
        2,
        "elements after the violation were checked"
    );
    assert_eq!(
        root_checked.load(Ordering::Relaxed),
        0,
        "the array was built"
    );

    seen.store(0, Ordering::Relaxed);
    let bytes = to_vec(&JsValue::from(jsarr![1, "x", 3])).unwrap();
    let err = spec.decode(&bytes).unwrap_err();
    assert_eq!(err.violation().unwrap().pointer(), "/1");
    assert_eq!(seen.load(Ordering::Relaxed), 1);
    assert_eq!(root_checked.load(Ordering::Relaxed), 0);

    // validate sees every element and, with a violation inside, no root check.
    seen.store(0, Ordering::Relaxed);
    assert_eq!(spec.validate(&jsarr![1, "x", 3].into()).len(), 1);
    assert_eq!(seen.load(Ordering::Relaxed), 2);
    assert_eq!(root_checked.load(Ordering::Relaxed), 0);
    assert!(spec.is_valid(&jsarr![1].into()));
    assert_eq!(root_checked.load(Ordering::Relaxed), 1);
}

#[test]
fn parse_and_decode_errors_that_are_not_violations() {
    let spec: Spec = integer().into();
    assert!(matches!(spec.parse("1 2"), Err(SpecParseError::Json(_))));
    assert!(matches!(
        spec.parse_slice(b"\xff"),
        Err(SpecParseError::Json(_))
    ));
    let err = spec.decode(&[0x01, 0x02]).unwrap_err();
    assert!(
        matches!(&err, SpecDecodeError::Decode(e) if e.to_string().contains("trailing")),
        "{err}"
    );
    // Types outside JSON are decode errors, as in the plain decoder.
    assert!(matches!(
        any().decode(&[0xc4, 0x00]),
        Err(SpecDecodeError::Decode(_))
    ));
    assert!(matches!(
        spec.decode(&[0xc4, 0x00]),
        Err(SpecDecodeError::Decode(_))
    ));
    // A decode error inside a container carries its path.
    let err = jsobj_spec! { "a": array_of(integer()) }.decode(&[0x81, 0xa1, b'a', 0x91, 0xc1]);
    let Err(SpecDecodeError::Decode(e)) = err else {
        panic!("{err:?}")
    };
    assert_eq!(e.pointer(), "/a/0");
}

#[test]
fn recursive_tree() {
    let tree = Spec::recursive(|tree| {
        jsobj_spec! { "value": integer(), "children": array_of(tree) }
    });
    ok(&tree, jsobj! { "value": 1, "children": [] });
    let deep = jsobj! {
        "value": 1,
        "children": [
            { "value": 2, "children": [] },
            { "value": 3, "children": [{ "value": 4, "children": [] }] },
        ],
    };
    ok(&tree, deep.clone());
    let bad = JsValue::from(deep).set_in(&"/children/1/children/0/value".parse().unwrap(), "4");
    assert_eq!(
        one(&tree, bad),
        t("/children/1/children/0/value", "integer", "\"4\"")
    );
    let missing = jsobj! { "value": 1, "children": [{ "value": 2 }] };
    assert_eq!(one(&tree, missing).0, "/children/0/children");
    // Recursive specs compose and nest.
    let forest = array_of(tree.clone());
    ok(&forest, jsarr![{ "value": 1, "children": [] }]);
    let nullable_list =
        Spec::recursive(|list| jsobj_spec! { "head": integer(), "tail": list.nullable() });
    ok(
        &nullable_list,
        jsobj! { "head": 1, "tail": { "head": 2, "tail": null } },
    );
    assert_eq!(
        one(&nullable_list, jsobj! { "head": 1, "tail": 2 }).0,
        "/tail"
    );
}

#[test]
fn degenerate_recursion_is_rejected_not_followed() {
    let loop_spec = Spec::recursive(|me| me);
    let (p, e, _) = one(&loop_spec, 1);
    assert_eq!(
        (p.as_str(), e.as_str()),
        ("", "a recursive spec that nests before it repeats")
    );
    let either = Spec::recursive(|me| one_of((me.clone(), me, integer())));
    ok(&either, 1);
    assert_eq!(one(&either, "x").0, "");

    let mut kept = None;
    let tree = Spec::recursive(|me| {
        kept = Some(me.clone());
        array_of(me)
    });
    ok(&tree, jsarr![[], [[]]]);
    drop(tree);
    let dangling = kept.unwrap();
    assert_eq!(
        one(&dangling, jsarr![]).1,
        "a recursive spec that no longer exists"
    );
}

#[test]
fn hostile_input_is_an_error_not_a_panic() {
    let nested = Spec::recursive(array_of);
    let any: Spec = any();
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    for spec in [&nested, &any] {
        assert!(matches!(spec.parse(&deep), Err(SpecParseError::Json(_))));
        assert!(spec.decode(&vec![0x91; 100_000]).is_err());
        // Declared lengths far beyond the bytes.
        assert!(spec.decode(&[0xdd, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(spec.decode(&[0xdf, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(spec.decode(&[0xdb, 0xff, 0xff, 0xff, 0xff]).is_err());
    }
    // Just within the limits: as deep as the plain parser and decoder go.
    let ok_text = "[".repeat(127) + &"]".repeat(127);
    let value = nested.parse(&ok_text).unwrap();
    assert_eq!(value, JsValue::parse(&ok_text).unwrap());
    assert_eq!(nested.decode(&to_vec(&value).unwrap()).unwrap(), value);
    let mut bytes = vec![0x91; 127];
    bytes.push(0x90);
    assert!(nested.decode(&bytes).is_ok());

    let obj = jsobj_spec! { "a": string() };
    assert!(
        obj.decode(&[0x81, 0xa1, b'a', 0xdb, 0xff, 0xff, 0xff, 0xff])
            .is_err()
    );
    assert!(matches!(
        obj.parse("{\"a\": \"unterminated"),
        Err(SpecParseError::Json(_))
    ));
    // Truncations of a valid message.
    let bytes = to_vec(&jsobj! { "a": "text" }).unwrap();
    for cut in 0..bytes.len() {
        assert!(matches!(
            obj.decode(&bytes[..cut]),
            Err(SpecDecodeError::Decode(_))
        ));
    }
}
