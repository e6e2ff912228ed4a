//! A crate that depends on `codecbus-json` alone, with its optional
//! features: the value, a spec checked three ways, generated values and
//! the JSON Schema export; MessagePack through `codecbus-core`, which the
//! value's codec is written for.

use codecbus_core::to_vec;
use codecbus_json::spec::{Spec, SpecParseError, array_of, integer, one_of_values, string};
use codecbus_json::{JsObj, JsValue, jsobj, jsobj_spec};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

fn order_spec() -> Spec {
    jsobj_spec! {
        "id": integer().min(1),
        "status": one_of_values(["open", "paid"]),
        "lines": array_of(jsobj_spec! {
            "sku": string().pattern("^[a-z]{3}$"),
            "qty": integer().range(1..=99),
        }).length(1..),
        "note"?: string().nullable(),
    }
}

fn main() {
    let spec = order_spec();

    // A value built, read, updated and checked
    let order: JsObj = jsobj! { "id": 7, "status": "open", "lines": [{ "sku": "tea", "qty": 2 }] };
    assert!(spec.is_valid(&order.clone().into()));
    let paid = order.set("status", "paid");
    assert!(spec.is_valid(&paid.into()));
    let bad: JsValue = order.set("status", "lost").into();
    let found: Vec<String> = spec.validate(&bad).iter().map(ToString::to_string).collect();
    assert_eq!(found, [r#"/status: expected one of "open", "paid", found "lost""#]);

    // Parsed and decoded with the spec in the same pass
    let text = r#"{"id": 7, "status": "open", "lines": [{"sku": "tea", "qty": 200}]}"#;
    match spec.parse(text) {
        Err(SpecParseError::Invalid(v)) => assert_eq!(v.pointer(), "/lines/0/qty"),
        other => panic!("expected a violation, got {other:?}"),
    }
    let bytes = to_vec(&order).expect("encodes");
    assert_eq!(spec.decode(&bytes).expect("conforms"), JsValue::from(order));

    // Generated values conform; generated violations are reported as built
    let mut runner = TestRunner::deterministic();
    let valid = spec.generator().expect("generator");
    let invalid = spec.invalid_generator().expect("invalid generator");
    for _ in 0..200 {
        let v = valid.new_tree(&mut runner).expect("value").current();
        assert!(spec.is_valid(&v), "{v}");
        let bad = invalid.new_tree(&mut runner).expect("value").current();
        assert_eq!(spec.validate(bad.value()), [bad.violation().clone()]);
    }

    // The JSON Schema export
    let schema = spec.to_json_schema().expect("no user checks");
    assert_eq!(
        schema.get("required").map(ToString::to_string).as_deref(),
        Some(r#"["id","lines","status"]"#)
    );

    // A recursive spec, named: its nested levels are the named spec
    let category = Spec::recursive(|t| jsobj_spec! { "code": string(), "sub"?: array_of(t) })
        .named("category");
    let tree: JsValue = jsobj! { "code": "a", "sub": [{ "code": "b", "sub": [{ "code": "c" }] }] }.into();
    assert!(category.is_valid(&tree), "{:?}", category.validate(&tree));
    assert_eq!(category.parse(&tree.to_string()).expect("conforms"), tree);
    let bytes = to_vec(&tree).expect("encodes");
    assert_eq!(category.decode(&bytes).expect("conforms"), tree);
    let bad = tree.set_in(&"/sub/0/sub/0".parse().expect("pointer"), 1);
    let found: Vec<String> = category.validate(&bad).iter().map(ToString::to_string).collect();
    assert_eq!(found, ["/sub/0/sub/0: expected category, found 1"]);
    let schema = category.to_json_schema().expect("no user checks");
    let items = schema.get_in(&"/$defs/category/properties/sub/items".parse().expect("pointer"));
    assert_eq!(items, Some(&jsobj! { "$ref": "#/$defs/category" }.into()));
    let nullable = Spec::recursive(|t| jsobj_spec! { "code": string(), "sub"?: array_of(t) })
        .nullable();
    assert!(nullable.is_valid(&tree.set_in(&"/sub/0/sub/0".parse().expect("pointer"), JsValue::Null)));
    println!("json-only: spec, generators and schema export work with codecbus-json alone");
}
