//! Recursive specs with modifiers: a recursive spec that is named, made
//! nullable or checked is the spec its nested levels refer to, in
//! `validate`, the validating parse and decode, the generators and the
//! JSON Schema export; and it is freed with its last handle.

#![cfg(all(feature = "proptest", feature = "schema"))]

use std::sync::Arc;

use codecbus_core::to_vec;
use codecbus_json::spec::{Spec, SpecDecodeError, SpecParseError, array_of, integer, string};
use codecbus_json::{JsObj, JsValue, jsobj, jsobj_spec};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

/// The spec of a category and its sub-categories, unmodified.
fn category() -> Spec {
    Spec::recursive(|t| jsobj_spec! { "code": string(), "sub"?: array_of(t) })
}

/// Whether a value has a code of two characters, at its own level.
fn short_code(v: &JsValue) -> bool {
    v.pointer("/code")
        .and_then(JsValue::as_str)
        .is_some_and(|c| c.chars().count() == 2)
}

/// The modified specs, each with its name in the tests' messages.
fn modified() -> Vec<(&'static str, Spec)> {
    vec![
        ("named", category().named("category")),
        ("nullable", category().nullable()),
        (
            "check",
            category().check("a code of 2 characters", short_code),
        ),
        ("named+nullable", category().named("category").nullable()),
        ("nullable+named", category().nullable().named("category")),
        (
            "named+check",
            category()
                .named("category")
                .check("a code of 2 characters", short_code),
        ),
        (
            "named+nullable+check",
            category()
                .named("category")
                .nullable()
                .check("a code of 2 characters", short_code),
        ),
    ]
}

/// Three levels of categories: `/sub/0/sub/0` is at depth 2.
fn three_levels() -> JsValue {
    jsobj! {
        "code": "ab",
        "sub": [{ "code": "cd", "sub": [{ "code": "ef" }, { "code": "gh", "sub": [] }] }],
    }
    .into()
}

/// The first violation `validate`, `parse` and `decode` report, checked
/// to agree (`None` when the value conforms).
fn first_violation(spec: &Spec, value: &JsValue) -> Option<String> {
    let all = spec.validate(value);
    assert_eq!(spec.is_valid(value), all.is_empty(), "{value}: {all:?}");
    let parsed = match spec.parse(&value.to_string()) {
        Ok(v) => {
            assert_eq!(&v, value);
            None
        }
        Err(SpecParseError::Invalid(v)) => Some(v),
        Err(e) => panic!("parse {value}: {e}"),
    };
    let decoded = match spec.decode(&to_vec(value).unwrap()) {
        Ok(v) => {
            assert_eq!(&v, value);
            None
        }
        Err(SpecDecodeError::Invalid(v)) => Some(v),
        Err(e) => panic!("decode {value}: {e}"),
    };
    assert_eq!(parsed, decoded, "{value}");
    if let Some(first) = &parsed {
        assert!(all.contains(first), "{first:?} not in {all:?}");
    } else {
        assert!(all.is_empty(), "{value}: {all:?}");
    }
    parsed.map(|v| v.to_string())
}

#[test]
fn modified_recursive_specs_accept_nested_levels() {
    for (what, spec) in modified() {
        assert_eq!(first_violation(&spec, &three_levels()), None, "{what}");
        let bad = three_levels().set_in(&"/sub/0/sub/1/code".parse().unwrap(), 7);
        assert_eq!(
            first_violation(&spec, &bad),
            Some("/sub/0/sub/1/code: expected string, found 7".to_owned()),
            "{what}"
        );
    }
}

#[test]
fn nested_levels_follow_the_modifiers() {
    // Nested levels are named.
    let named = category().named("category");
    let bad = three_levels().set_in(&"/sub/0".parse().unwrap(), 1);
    assert_eq!(
        first_violation(&named, &bad),
        Some("/sub/0: expected category, found 1".to_owned())
    );
    // Nested levels are nullable, the unmodified spec's are not.
    let null_inside = three_levels().set_in(&"/sub/0/sub/0".parse().unwrap(), JsValue::Null);
    for (what, spec) in modified() {
        let nullable = what.contains("nullable");
        assert_eq!(
            first_violation(&spec, &null_inside).is_none(),
            nullable,
            "{what}"
        );
    }
    assert!(!category().is_valid(&null_inside));
    // Nested levels are checked, the unmodified spec's are not.
    let long_inside = three_levels().set_in(&"/sub/0/sub/0/code".parse().unwrap(), "efg");
    assert!(category().is_valid(&long_inside));
    for (what, spec) in modified() {
        let expected = what.contains("check").then_some(
            "/sub/0/sub/0: expected a code of 2 characters, found an object of 1 member",
        );
        assert_eq!(
            first_violation(&spec, &long_inside).as_deref(),
            expected,
            "{what}"
        );
    }
    // The original spec is left as it was.
    let original = category();
    let named = original.clone().named("category");
    assert_eq!(
        first_violation(&original, &bad),
        Some("/sub/0: expected object, found 1".to_owned())
    );
    assert!(first_violation(&named, &bad).is_some());
}

/// The depth of the deepest `sub` array nesting in a category.
fn depth(v: &JsValue) -> usize {
    v.pointer("/sub")
        .and_then(JsValue::as_array)
        .map_or(0, |a| 1 + a.iter().map(depth).max().unwrap_or(0))
}

#[test]
fn generated_values_conform_at_every_level() {
    let mut runner = TestRunner::deterministic();
    for (what, spec) in modified() {
        let valid = spec.generator().unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut deepest = 0;
        for _ in 0..300 {
            let v = valid.new_tree(&mut runner).unwrap().current();
            assert!(spec.is_valid(&v), "{what}: {v}: {:?}", spec.validate(&v));
            deepest = deepest.max(depth(&v));
        }
        assert!(deepest >= 2, "{what}: values nest {deepest} deep at most");

        let invalid = spec
            .invalid_generator()
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut nested = 0;
        for _ in 0..300 {
            let bad = invalid.new_tree(&mut runner).unwrap().current();
            assert_eq!(
                spec.validate(bad.value()),
                [bad.violation().clone()],
                "{what}: {}",
                bad.value()
            );
            if bad.violation().pointer().starts_with("/sub/") {
                nested += 1;
            }
        }
        assert!(nested > 0, "{what}: no violation inside a nested level");
    }
}

#[test]
fn nested_levels_fail_the_root_check_in_generated_violations() {
    // A nested level that fails the check added to the root. The check is
    // one most codes pass: a single violation deep down needs every level
    // above it to pass the check, and a generator can only find those
    // among the values it draws (the check is opaque to it).
    let spec = category().check("a code of at most 6 characters", |v: &JsValue| {
        v.pointer("/code")
            .and_then(JsValue::as_str)
            .is_some_and(|c| c.chars().count() <= 6)
    });
    let invalid = spec.invalid_generator().unwrap();
    let mut runner = TestRunner::deterministic();
    let mut nested_checks = 0;
    for _ in 0..500 {
        let bad = invalid.new_tree(&mut runner).unwrap().current();
        let v = bad.violation();
        assert_eq!(
            spec.validate(bad.value()),
            std::slice::from_ref(v),
            "{}",
            bad.value()
        );
        if v.pointer().starts_with("/sub/") && v.expected() == "a code of at most 6 characters" {
            nested_checks += 1;
        }
    }
    assert!(nested_checks > 0);
}

fn def_items(schema: &JsObj, name: &str) -> Option<JsValue> {
    schema
        .get_in(
            &format!("/$defs/{name}/properties/sub/items")
                .parse()
                .unwrap(),
        )
        .cloned()
}

#[test]
fn the_schema_refers_to_the_modified_spec() {
    let named = category().named("category");
    let schema = named.to_json_schema().unwrap();
    assert_eq!(schema.get("$ref"), Some(&"#/$defs/category".into()));
    assert_eq!(
        def_items(&schema, "category"),
        Some(jsobj! { "$ref": "#/$defs/category" }.into()),
        "{schema:#}"
    );

    // Nullable: the definition accepts null, at every level.
    for spec in [
        category().nullable(),
        category().named("category").nullable(),
    ] {
        let schema = spec.to_json_schema().unwrap();
        let text = schema.to_string();
        assert!(!text.contains(r#"{"not":{}}"#), "{schema:#}");
        let name = if text.contains("$defs/category") {
            "category"
        } else {
            "recursive"
        };
        let def = schema
            .get_in(&format!("/$defs/{name}").parse().unwrap())
            .unwrap_or_else(|| panic!("{schema:#}"));
        assert!(def.to_string().contains("null"), "{schema:#}");
        assert_eq!(
            def_items(&schema, name),
            Some(jsobj! { "$ref": format!("#/$defs/{name}") }.into()),
            "{schema:#}"
        );
        let v =
            jsonschema::validator_for(&serde_json::Value::from(&JsValue::from(schema))).unwrap();
        let null_inside = three_levels().set_in(&"/sub/0/sub/0".parse().unwrap(), JsValue::Null);
        assert!(v.is_valid(&serde_json::Value::from(&null_inside)));
        assert!(v.is_valid(&serde_json::Value::from(&three_levels())));
    }

    // Checked: the check is reported, the recursion is kept.
    let checked = category()
        .named("category")
        .check("a code of 2 characters", short_code);
    let export = checked.json_schema();
    assert!(!export.is_exact());
    assert_eq!(
        def_items(export.schema(), "category"),
        Some(jsobj! { "$ref": "#/$defs/category" }.into()),
        "{:#}",
        export.schema()
    );
}

#[test]
fn a_modified_recursive_spec_is_freed_with_its_last_handle() {
    // A token held by the spec's check tells whether the spec was freed.
    let token = Arc::new(());
    let weak = Arc::downgrade(&token);
    let spec = {
        let token = Arc::clone(&token);
        category()
            .named("category")
            .check("kept", move |_| Arc::strong_count(&token) > 0)
            .nullable()
    };
    drop(token);
    assert!(weak.upgrade().is_some(), "the spec holds its check");
    assert!(spec.is_valid(&three_levels()));
    let clone = spec.clone();
    drop(spec);
    assert!(weak.upgrade().is_some(), "a clone holds it still");
    drop(clone);
    assert!(
        weak.upgrade().is_none(),
        "a reference cycle keeps the spec alive"
    );
}

#[test]
fn nested_recursive_specs_keep_their_own_recursion() {
    // An independent recursive spec inside: left as it is.
    let list = Spec::recursive(|l| jsobj_spec! { "n": integer(), "next"?: l });
    let outer = Spec::recursive(|o| jsobj_spec! { "list": list.clone(), "sub"?: array_of(o) })
        .named("outer")
        .nullable();
    let value: JsValue = jsobj! {
        "list": { "n": 1, "next": { "n": 2 } },
        "sub": [null, { "list": { "n": 3, "next": { "n": 4, "next": { "n": 5 } } } }],
    }
    .into();
    assert_eq!(first_violation(&outer, &value), None);
    let bad = value.set_in(&"/sub/1/list/next/next".parse().unwrap(), JsValue::Null);
    assert_eq!(
        first_violation(&outer, &bad),
        Some("/sub/1/list/next/next: expected object, found null".to_owned())
    );

    // A recursive spec inside that refers to the outer one: its own
    // handle refers to it, the outer handle to the modified outer spec.
    let mixed = Spec::recursive(|o| {
        jsobj_spec! {
            "x": Spec::recursive(|i| jsobj_spec! { "in"?: array_of(i), "out"?: array_of(o.clone()) })
                .named("inner"),
        }
    })
    .nullable();
    let value: JsValue = jsobj! {
        "x": { "in": [{ "out": [null, { "x": { "in": [{ "out": [null] }] } }] }], "out": [null] },
    }
    .into();
    assert_eq!(first_violation(&mixed, &value), None);
    let bad = value.set_in(&"/x/in/0/out/1/x/in/0".parse().unwrap(), JsValue::Null);
    assert_eq!(
        first_violation(&mixed, &bad),
        Some("/x/in/0/out/1/x/in/0: expected inner, found null".to_owned())
    );
    let schema = mixed.to_json_schema().unwrap();
    assert!(!schema.to_string().contains(r#"{"not":{}}"#), "{schema:#}");

    // A definition that is itself a recursive spec is one spec with it:
    // both handles refer to the result, modifiers included.
    let same = Spec::recursive(|o| {
        Spec::recursive(|i| jsobj_spec! { "in"?: array_of(i), "out"?: array_of(o.clone()) })
    })
    .named("same")
    .nullable();
    let value: JsValue = jsobj! { "in": [null, { "out": [null, { "in": [] }] }] }.into();
    assert_eq!(first_violation(&same, &value), None);
    let bad = value.set_in(&"/in/1/out/1/in".parse().unwrap(), 1);
    assert_eq!(
        first_violation(&same, &bad),
        Some("/in/1/out/1/in: expected array, found 1".to_owned())
    );
}
