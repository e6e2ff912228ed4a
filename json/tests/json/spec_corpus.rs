//! The corpus documents against their specs (`data/json/specs.rs`): each
//! conforms whether validated, parsed or decoded, and targeted mutations
//! are rejected at the right pointer by all three.

use codecbus_core::to_vec;
use codecbus_json as json;
use codecbus_json::{JsPath, JsValue};

use crate::specs;

fn document(name: &str) -> (String, JsValue, json::spec::Spec) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/json")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let value = JsValue::parse(&text).unwrap();
    let spec = specs::by_name(name).unwrap();
    (text, value, spec)
}

#[test]
fn every_document_conforms() {
    for name in ["twitter", "citm_catalog", "canada"] {
        let (text, value, spec) = document(name);
        assert_eq!(spec.validate(&value), [], "{name}");
        assert!(spec.is_valid(&value), "{name}");
        assert_eq!(spec.parse(&text).unwrap(), value, "{name}");
        assert_eq!(spec.parse_slice(text.as_bytes()).unwrap(), value, "{name}");
        assert_eq!(
            spec.decode(&to_vec(&value).unwrap()).unwrap(),
            value,
            "{name}"
        );
    }
    assert!(specs::by_name("other").is_none());
}

/// Applies `change` at `at` and checks that validate, parse and decode all
/// report a violation there, with the expected text.
fn rejected(name: &str, at: &str, change: impl FnOnce(&JsValue) -> JsValue, expected: &str) {
    let (_, value, spec) = document(name);
    let bad = change(&value);
    assert_ne!(bad, value, "{name} {at}: the change changed nothing");

    let all = spec.validate(&bad);
    assert_eq!(all.len(), 1, "{name} {at}: {all:?}");
    assert_eq!(all[0].pointer(), at, "{name}: {all:?}");
    assert_eq!(all[0].expected(), expected, "{name} {at}");

    let err = spec.parse(&bad.to_string()).unwrap_err();
    assert_eq!(err.violation(), Some(&all[0]), "{name} {at}: parse: {err}");
    let err = spec.decode(&to_vec(&bad).unwrap()).unwrap_err();
    assert_eq!(err.violation(), Some(&all[0]), "{name} {at}: decode: {err}");
}

#[test]
fn twitter_mutations() {
    let p = |s: &str| s.parse::<JsPath>().unwrap();
    rejected(
        "twitter",
        "/statuses/3/user/profile_link_color",
        |v| v.set_in(&p("/statuses/3/user/profile_link_color"), "red"),
        "string matching /^[0-9A-Fa-f]{6}$/",
    );
    rejected(
        "twitter",
        "/statuses/1/retweeted_status/user/followers_count",
        |v| v.set_in(&p("/statuses/1/retweeted_status/user/followers_count"), -1),
        "integer >= 0",
    );
    rejected(
        "twitter",
        "/statuses/0/id_str",
        |v| v.remove_in(&p("/statuses/0/id_str")),
        "string of 1..=20 characters matching /^[0-9]+$/",
    );
    rejected(
        "twitter",
        "/statuses/99/lang~1region",
        |v| v.set_in(&p("/statuses/99/lang~1region"), "ja/JP"),
        "no such member (the object is strict)",
    );
    rejected(
        "twitter",
        "/statuses/5/entities/hashtags",
        |v| v.set_in(&p("/statuses/5/entities/hashtags"), 1),
        "array",
    );
}

#[test]
fn citm_catalog_mutations() {
    let p = |s: &str| s.parse::<JsPath>().unwrap();
    rejected(
        "citm_catalog",
        "/events/138586341/topicIds/1",
        |v| {
            let first = v.pointer("/events/138586341/topicIds/0").unwrap().clone();
            v.set_in(&p("/events/138586341/topicIds/1"), first)
        },
        "unique items",
    );
    rejected(
        "citm_catalog",
        "/areaNames/A1",
        |v| v.set_in(&p("/areaNames/A1"), "Zone A1"),
        "string matching /^[0-9]+$/",
    );
    rejected(
        "citm_catalog",
        "/performances/10/prices",
        |v| v.set_in(&p("/performances/10/prices"), json::jsarr![]),
        "array of at least 1 item",
    );
    rejected(
        "citm_catalog",
        "/performances/0/start",
        |v| v.set_in(&p("/performances/0/start"), 1.5),
        "integer in 946684800000..=4102444799999",
    );
}

#[test]
fn canada_mutations() {
    let p = |s: &str| s.parse::<JsPath>().unwrap();
    rejected(
        "canada",
        "/features/0/geometry/coordinates/2/5/1",
        |v| v.set_in(&p("/features/0/geometry/coordinates/2/5/1"), 91.5),
        "number in [-90.0, 90.0]",
    );
    rejected(
        "canada",
        "/features/0/geometry/coordinates/0/7",
        |v| {
            v.set_in(
                &p("/features/0/geometry/coordinates/0/7"),
                json::jsarr![1.0, 2.0, 3.0],
            )
        },
        "array of exactly 2 items",
    );
    rejected(
        "canada",
        "/features/0/type",
        |v| v.set_in(&p("/features/0/type"), "Thing"),
        "one of \"Feature\"",
    );
}
