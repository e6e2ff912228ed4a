//! The JSON Schema export, held to its spec by an independent validator
//! (the `jsonschema` crate): over random specs, every generated value
//! passes the exported schema and every single violation fails it; the
//! mapping of each kind; the corpus documents pass their specs' schemas.

#![cfg(feature = "schema")]

use codecbus_json::spec::schema::{DRAFT_2020_12, SchemaExport};
use codecbus_json::spec::{
    Spec, any, array_of, boolean, float, integer, map_of, null, number, object, one_of,
    one_of_values, string, tuple,
};
use codecbus_json::{JsObj, JsValue, jsobj, jsobj_spec};

fn validator(schema: &JsObj) -> jsonschema::Validator {
    let json: serde_json::Value = schema.clone().into();
    jsonschema::validator_for(&json).unwrap_or_else(|e| panic!("{schema:#}: {e}"))
}

fn passes(v: &jsonschema::Validator, value: &JsValue) -> bool {
    v.is_valid(&serde_json::Value::from(value))
}

fn exact(spec: &Spec) -> JsObj {
    spec.to_json_schema()
        .unwrap_or_else(|e| panic!("{spec}: {e}"))
}

#[test]
fn each_kind_maps_to_its_keywords() {
    let schema = |s: Spec| {
        let mut o = exact(&s);
        o.remove("$schema");
        o
    };
    assert_eq!(schema(any()), jsobj! {});
    assert_eq!(schema(null()), jsobj! { "type": "null" });
    assert_eq!(schema(boolean()), jsobj! { "type": "boolean" });
    assert_eq!(
        schema(string().length(2..=4).pattern("^[a-z]+$").into()),
        jsobj! { "type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$" }
    );
    assert_eq!(
        schema(integer().range(u64::MAX - 1..=u64::MAX).into()),
        jsobj! { "type": "integer", "minimum": u64::MAX - 1 }
    );
    assert_eq!(
        schema(integer().range(i64::MIN..0).into()),
        jsobj! { "type": "integer", "maximum": -1 }
    );
    assert_eq!(
        schema(float().range(0.0..1.0).into()),
        jsobj! { "type": "number", "minimum": 0.0, "exclusiveMaximum": 1.0 }
    );
    assert_eq!(
        schema(number().range(f64::NEG_INFINITY..=f64::INFINITY).into()),
        jsobj! { "type": "number" }
    );
    assert_eq!(schema(float().min(f64::NAN).into()), jsobj! { "not": {} });
    assert_eq!(
        schema(one_of_values([JsValue::from(1), "a".into(), JsValue::Null])),
        jsobj! { "enum": [1, "a", null] }
    );
    assert_eq!(
        schema(array_of(integer()).length(1..=3).unique().into()),
        jsobj! { "type": "array", "items": { "type": "integer" }, "minItems": 1, "maxItems": 3, "uniqueItems": true }
    );
    assert_eq!(
        schema(tuple((string(), boolean())).into()),
        jsobj! { "type": "array", "prefixItems": [{ "type": "string" }, { "type": "boolean" }], "minItems": 2, "maxItems": 2 }
    );
    assert_eq!(
        schema(
            object()
                .required("a", null())
                .optional("b", null())
                .lenient()
                .into()
        ),
        jsobj! { "type": "object", "properties": { "a": { "type": "null" }, "b": { "type": "null" } }, "required": ["a"] }
    );
    assert_eq!(
        schema(
            map_of(integer())
                .keys(string().length(1..))
                .length(..=9)
                .into()
        ),
        jsobj! {
            "type": "object",
            "propertyNames": { "type": "string", "minLength": 1 },
            "additionalProperties": { "type": "integer" },
            "maxProperties": 9,
        }
    );
    assert_eq!(
        schema(one_of((integer(), string()))),
        jsobj! { "anyOf": [{ "type": "integer" }, { "type": "string" }] }
    );
    assert_eq!(schema(one_of(Vec::<Spec>::new())), jsobj! { "not": {} });
}

#[test]
fn nullable_adds_null_to_the_type_or_an_alternative() {
    let schema = |s: Spec| {
        let mut o = exact(&s);
        o.remove("$schema");
        o
    };
    assert_eq!(
        schema(integer().min(0).nullable()),
        jsobj! { "type": ["integer", "null"], "minimum": 0 }
    );
    assert_eq!(
        schema(one_of_values(["a"]).nullable()),
        jsobj! { "anyOf": [{ "enum": ["a"] }, { "type": "null" }] }
    );
    assert_eq!(
        schema(one_of((integer(), string())).nullable()),
        jsobj! { "anyOf": [{ "type": "integer" }, { "type": "string" }, { "type": "null" }] }
    );
    assert_eq!(schema(any().nullable()), jsobj! {});
}

#[test]
fn names_and_recursion_go_to_defs() {
    let point = object()
        .required("x", integer())
        .required("y", integer())
        .named("point");
    let other = string().named("point"); // the same name, another spec
    let odd = boolean().named("a b/c");
    let spec = jsobj_spec! { "from": point.clone(), "to": point, "label": other, "flag": odd };
    let schema = exact(&spec);
    assert_eq!(
        schema.get_in(&"/properties/from".parse().unwrap()),
        Some(&jsobj! { "$ref": "#/$defs/point" }.into())
    );
    assert_eq!(
        schema.get_in(&"/properties/to".parse().unwrap()),
        Some(&jsobj! { "$ref": "#/$defs/point" }.into())
    );
    assert_eq!(
        schema.get_in(&"/properties/label".parse().unwrap()),
        Some(&jsobj! { "$ref": "#/$defs/point-2" }.into())
    );
    assert_eq!(
        schema.get_in(&"/properties/flag".parse().unwrap()),
        Some(&jsobj! { "$ref": "#/$defs/a_b_c" }.into())
    );
    let v = validator(&schema);
    let ok =
        jsobj! { "from": { "x": 1, "y": 2 }, "to": { "x": 3, "y": 4 }, "label": "l", "flag": true };
    assert!(passes(&v, &ok.clone().into()));
    assert!(!passes(&v, &ok.set("to", jsobj! { "x": 1 }).into()));

    let tree = Spec::recursive(|tree| {
        jsobj_spec! { "value": integer(), "children"?: array_of(tree).length(..=2) }
    });
    let schema = exact(&tree);
    assert_eq!(schema.get("$ref"), Some(&"#/$defs/recursive".into()));
    let v = validator(&schema);
    let deep = jsobj! { "value": 1, "children": [{ "value": 2, "children": [{ "value": 3 }] }] };
    assert!(passes(&v, &deep.clone().into()));
    let bad = deep.set_in(&"/children/0/children/0/value".parse().unwrap(), "3");
    assert!(!passes(&v, &bad.into()));

    // A definition that reaches itself before any container accepts
    // nothing, in the spec and in its schema.
    let knot = Spec::recursive(|me| one_of((me, integer())));
    let v = validator(&exact(&knot));
    assert_eq!(
        knot.is_valid(&JsValue::from(1)),
        passes(&v, &JsValue::from(1))
    );
}

#[test]
fn user_checks_are_reported_never_widened_silently() {
    let spec = jsobj_spec! {
        "n": integer().check("an even number", |v| v.as_i64().is_some_and(|i| i % 2 == 0)),
        "list": array_of(string().check("short", |v| v.as_str().is_some_and(|s| s.len() < 3))),
    };
    let err = spec.to_json_schema().unwrap_err();
    let found: Vec<(String, String)> = err
        .untranslated()
        .iter()
        .map(|u| (u.pointer().to_owned(), u.what().to_owned()))
        .collect();
    assert_eq!(
        found,
        [
            (
                "/properties/list/items".to_owned(),
                "user check: short".to_owned()
            ),
            (
                "/properties/n".to_owned(),
                "user check: an even number".to_owned()
            ),
        ]
    );
    assert_eq!(
        err.to_string(),
        "2 constraints without a JSON Schema counterpart, the first at /properties/list/items: user check: short"
    );
    let export: SchemaExport = spec.json_schema();
    assert!(!export.is_exact());
    assert_eq!(
        export
            .schema()
            .get_in(&"/properties/n/$comment".parse().unwrap()),
        Some(&r#"not expressed in JSON Schema: user check "an even number""#.into())
    );
    assert_eq!(export.schema().get("$schema"), Some(&DRAFT_2020_12.into()));
}

/// The specs of the corpus documents export exactly, and each document
/// passes its schema.
#[test]
fn corpus_documents_pass_their_schemas() {
    for name in ["twitter", "citm_catalog", "canada"] {
        let spec = corpus::by_name(name).unwrap();
        let schema = exact(&spec);
        let text = std::fs::read_to_string(format!(
            "{}/../data/json/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let value = JsValue::parse(&text).unwrap();
        assert!(spec.is_valid(&value), "{name}");
        assert!(passes(&validator(&schema), &value), "{name}");
    }
}

use crate::specs as corpus;

#[cfg(feature = "proptest")]
use crate::support;

#[cfg(feature = "proptest")]
mod agreement {
    use codecbus_json::JsValue;
    use codecbus_json::spec::Spec;
    use codecbus_json::spec::generators::GenError;
    use proptest::prelude::*;
    use proptest::test_runner::Config;

    use super::support::{arbitrary_spec, draw};
    use super::{passes, validator};

    /// Whether JSON Schema's data model, where `1` and `1.0` are one value,
    /// cannot see the violation: the same number as the other kind at the
    /// violation's place makes the value valid.
    fn twin_is_valid(spec: &Spec, value: &JsValue, at: &codecbus_json::JsPath) -> bool {
        let twin = match value.get_in(at) {
            Some(JsValue::Int(i)) => JsValue::Float(i.as_f64()),
            Some(JsValue::Float(f)) => match codecbus_json::JsInt::from_f64_exact(*f) {
                Some(i) => JsValue::Int(i),
                None => return false,
            },
            _ => return false,
        };
        let swapped = if at.is_root() {
            twin
        } else {
            value.set_in(at, twin)
        };
        spec.is_valid(&swapped)
    }

    proptest! {
        #![proptest_config(Config { cases: 96, ..Config::default() })]

        #[test]
        fn the_schema_accepts_what_the_spec_generates_and_rejects_single_violations(
            spec in arbitrary_spec(),
            seed in any::<u64>(),
        ) {
            let export = spec.json_schema();
            let v = validator(export.schema());
            let valid = spec.generator().map_err(|e| TestCaseError::fail(format!("{spec}: {e}")))?;
            for value in draw(&valid, seed, 16) {
                prop_assert!(passes(&v, &value), "{} rejects {} of {}", export.schema(), value, spec);
            }
            let invalid = match spec.invalid_generator() {
                Ok(s) => s,
                Err(GenError::NothingToViolate) => return Ok(()),
                Err(e) => return Err(TestCaseError::fail(format!("{spec}: {e}"))),
            };
            for bad in draw(&invalid, seed, 16) {
                let violation = bad.violation();
                let dropped = format!("user check: {}", violation.expected());
                if export.untranslated().iter().any(|u| u.what() == dropped) {
                    continue; // reported as left out
                }
                if twin_is_valid(&spec, bad.value(), violation.path()) {
                    continue; // 1 and 1.0 are one value in JSON Schema
                }
                prop_assert!(!passes(&v, bad.value()), "{} accepts {} ({}) of {}", export.schema(), bad.value(), violation, spec);
            }
        }
    }
}
