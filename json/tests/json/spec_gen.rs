//! The generators of `spec::generators`: over many random specs, every
//! generated value conforms and every generated violation is exactly what
//! `validate` reports; each kind of constraint has its violations; the
//! plain generators keep to their sizes.

#![cfg(feature = "proptest")]

use crate::support;

use std::collections::BTreeSet;

use codecbus_json::spec::generators::{GenError, Sizes, any_array, any_object, any_value};
use codecbus_json::spec::{
    Spec, any as any_spec, array_of, boolean, float, integer, map_of, null, number, object, one_of,
    one_of_values, string, tuple,
};
use codecbus_json::{JsValue, jsobj, jsobj_spec};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};

use support::{arbitrary_spec, draw};

proptest! {
    #![proptest_config(Config { cases: 128, ..Config::default() })]

    /// Every value a random spec's generator gives conforms to it, and
    /// every violation it generates is the one `validate` reports.
    #[test]
    fn generated_values_conform_and_violations_are_exact(spec in arbitrary_spec(), seed in any::<u64>()) {
        let valid = spec.generator().map_err(|e| TestCaseError::fail(format!("{spec}: {e}")))?;
        for v in draw(&valid, seed, 16) {
            let found = spec.validate(&v);
            prop_assert!(found.is_empty(), "{spec}: {v} was generated but has {found:?}");
        }
        match spec.invalid_generator() {
            Ok(invalid) => {
                for bad in draw(&invalid, seed, 16) {
                    prop_assert_eq!(spec.validate(bad.value()), vec![bad.violation().clone()], "{} in {}", bad, spec);
                }
            }
            Err(GenError::NothingToViolate) => {
                // Only a spec that accepts anything at all has nothing to
                // break; a few values of every kind show it.
                for v in draw(&any_value(Sizes::new()), seed, 16) {
                    prop_assert!(spec.is_valid(&v), "{spec} has no violations but rejects {v}");
                }
            }
            Err(e) => prop_assert!(false, "{spec}: {e}"),
        }
    }

    /// The plain generators keep to their sizes.
    #[test]
    fn plain_generators_keep_to_their_sizes(depth in 0u32..4, len in 0usize..5, str_len in 0usize..6, seed in any::<u64>()) {
        let sizes = Sizes::new().max_depth(depth).max_len(len).max_str_len(str_len);
        for v in draw(&any_value(sizes), seed, 8) {
            prop_assert!(depth_of(&v) <= depth, "{v} deeper than {depth}");
            prop_assert!(widest(&v) <= len, "{v} wider than {len}");
            prop_assert!(longest(&v) <= str_len, "{v} has a string longer than {str_len}");
        }
        for a in draw(&any_array(sizes), seed, 8) {
            prop_assert!(a.len() <= len);
            prop_assert!(depth_of(&a.into()) <= depth.max(1));
        }
        for o in draw(&any_object(sizes), seed, 8) {
            prop_assert!(o.len() <= len);
            prop_assert!(depth_of(&o.into()) <= depth.max(1));
        }
    }
}

fn depth_of(v: &JsValue) -> u32 {
    match v {
        JsValue::Array(a) => 1 + a.iter().map(depth_of).max().unwrap_or(0),
        JsValue::Object(o) => 1 + o.values().map(depth_of).max().unwrap_or(0),
        _ => 0,
    }
}

fn widest(v: &JsValue) -> usize {
    match v {
        JsValue::Array(a) => a.iter().map(widest).max().unwrap_or(0).max(a.len()),
        JsValue::Object(o) => o.values().map(widest).max().unwrap_or(0).max(o.len()),
        _ => 0,
    }
}

fn longest(v: &JsValue) -> usize {
    match v {
        JsValue::Str(s) => s.chars().count(),
        JsValue::Array(a) => a.iter().map(longest).max().unwrap_or(0),
        JsValue::Object(o) => o
            .iter()
            .map(|(k, v)| longest(v).max(k.chars().count()))
            .max()
            .unwrap_or(0),
        _ => 0,
    }
}

/// The distinct `(pointer, expected)` pairs of many violations of `spec`,
/// each checked against `validate`.
fn violations(spec: &Spec, n: usize) -> BTreeSet<(String, String)> {
    let invalid = spec.invalid_generator().unwrap();
    let mut out = BTreeSet::new();
    for bad in draw(&invalid, 7, n) {
        assert_eq!(
            spec.validate(bad.value()),
            [bad.violation().clone()],
            "{bad}"
        );
        out.insert((
            bad.violation().pointer(),
            bad.violation().expected().to_owned(),
        ));
    }
    out
}

fn has(found: &BTreeSet<(String, String)>, pointer: &str, expected: &str) -> bool {
    found.contains(&(pointer.to_owned(), expected.to_owned()))
}

#[test]
fn every_kind_of_constraint_is_violated() {
    let spec = jsobj_spec! {
        "int": integer().range(1..=9),
        "float": float().range(0.0..1.0),
        "num": number().min(-5.0),
        "name": string().length(2..=4).pattern("^[a-z]+$"),
        "tier": one_of_values(["gold", "silver"]),
        "tags": array_of(string()).length(1..=3).unique(),
        "pair": tuple((boolean(), null())),
        "opt"?: integer().nullable(),
        "map": map_of(integer()).keys(string().pattern("^[a-z]+$")).length(..=3),
        "id": one_of((integer(), string())),
        "even": integer().check("an even number", |v| v.as_i64().is_some_and(|i| i % 2 == 0)),
    };
    let found = violations(&spec, 3000);
    let expected = [
        ("/int", "integer in 1..=9"),
        ("/float", "float in [0.0, 1.0)"),
        ("/num", "number >= -5.0"),
        ("/name", "string of 2..=4 characters"),
        ("/name", "string matching /^[a-z]+$/"),
        ("/tier", r#"one of "gold", "silver""#),
        ("/tags", "array of 1..=3 items, unique"),
        ("/pair", "array of exactly 2 items"),
        ("/pair/1", "null"),
        ("/opt", "null or integer"),
        ("/map", "object of at most 3 members"),
        ("/id", "one of: integer | string"),
        ("/even", "an even number"),
        ("", "object"),
    ];
    for (pointer, what) in expected {
        assert!(
            has(&found, pointer, what),
            "no {pointer}: {what} among {found:#?}"
        );
    }
    // A duplicate element, a missing member and a bad map key have
    // pointers that depend on the value.
    let prefixed = |p: &str, e: &str| found.iter().any(|(q, f)| q.starts_with(p) && f == e);
    assert!(prefixed("/tags/", "unique items"));
    assert!(prefixed("/", "no such member (the object is strict)"));
    assert!(prefixed("/map/", "string matching /^[a-z]+$/"));
    assert!(
        found
            .iter()
            .any(|(q, f)| q == "/int" && f == "integer in 1..=9")
    );
    for key in [
        "/int", "/name", "/pair", "/map", "/id", "/even", "/tier", "/tags",
    ] {
        assert!(
            found
                .iter()
                .any(|(q, f)| q == key && f != "no such member (the object is strict)"),
            "{key}"
        );
    }
}

#[test]
fn missing_members_and_recursion() {
    let tree = Spec::recursive(|tree| {
        jsobj_spec! {
            "value": integer(),
            "children"?: array_of(tree).length(..=2),
        }
    });
    let found = violations(&tree, 2000);
    assert!(has(&found, "/value", "integer"));
    assert!(
        found
            .iter()
            .any(|(p, e)| p.starts_with("/children/") && p.ends_with("/value") && e == "integer")
    );
    assert!(has(&found, "/children", "array of at most 2 items"));

    let valid = tree.generator().unwrap();
    let values = draw(&valid, 1, 200);
    assert!(values.iter().all(|v| tree.is_valid(v)));
    assert!(
        values
            .iter()
            .any(|v| v.pointer("/children/0/value").is_some())
    );
    assert!(values.iter().any(|v| v.pointer("/children").is_none()));
}

#[test]
fn optional_and_nullable_values_are_both_ways() {
    let spec = jsobj_spec! { "a"?: integer(), "b": string().nullable() };
    let values = draw(&spec.generator().unwrap(), 3, 200);
    assert!(values.iter().any(|v| v.pointer("/a").is_some()));
    assert!(values.iter().any(|v| v.pointer("/a").is_none()));
    assert!(
        values
            .iter()
            .any(|v| v.pointer("/b") == Some(&JsValue::Null))
    );
    assert!(
        values
            .iter()
            .any(|v| v.pointer("/b").is_some_and(|b| b.as_str().is_some()))
    );
}

#[test]
fn what_cannot_be_generated_is_an_error() {
    let never = string().length(3..=3).pattern("^[a-z]{5}$");
    assert!(matches!(
        Spec::from(never).generator(),
        Err(GenError::Pattern { .. })
    ));
    let odd = integer()
        .range(0..=0)
        .check("odd", |v| v.as_i64().is_some_and(|i| i % 2 == 1));
    assert!(matches!(odd.generator(), Err(GenError::Check { .. })));
    assert!(matches!(
        one_of_values(Vec::<JsValue>::new()).generator(),
        Err(GenError::Unsatisfiable { .. })
    ));
    let endless = Spec::recursive(|me| object().required("next", me));
    assert!(matches!(endless.generator(), Err(GenError::TooDeep { .. })));
    assert_eq!(
        any_spec().invalid_generator().err(),
        Some(GenError::NothingToViolate)
    );
    // Optional and nullable places fall back to absent and null.
    let fallback = jsobj_spec! { "x"?: one_of_values(Vec::<JsValue>::new()), "y": integer().min(5).max(1).nullable() };
    let values = draw(&fallback.generator().unwrap(), 0, 20);
    let only_null = JsValue::from(jsobj! { "y": null });
    assert!(values.iter().all(|v| *v == only_null));
}

#[test]
fn a_generator_is_deterministic_for_a_runner() {
    let spec = jsobj_spec! { "a": array_of(integer()), "b": string() };
    let s = spec.generator().unwrap();
    let mut r1 = TestRunner::deterministic();
    let mut r2 = TestRunner::deterministic();
    for _ in 0..10 {
        assert_eq!(
            s.new_tree(&mut r1).unwrap().current(),
            s.new_tree(&mut r2).unwrap().current()
        );
    }
}

use crate::specs as corpus;

/// The specs of the corpus documents, large and full of patterns, generate
/// conforming values and exact violations too.
#[test]
fn corpus_specs_generate() {
    for name in ["twitter", "citm_catalog", "canada"] {
        let spec = corpus::by_name(name).unwrap();
        let sizes = Sizes::new().max_len(2).max_depth(2);
        let valid = spec
            .generator_with(sizes)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for v in draw(&valid, 5, 2) {
            assert_eq!(spec.validate(&v), [], "{name}");
        }
        let invalid = spec.invalid_generator_with(sizes).unwrap();
        for bad in draw(&invalid, 5, 8) {
            assert_eq!(
                spec.validate(bad.value()),
                [bad.violation().clone()],
                "{name}: {bad}"
            );
        }
    }
}

/// Over many draws of the single-violation generator, every location of
/// the spec is broken about as often as any other: the whole value, a
/// member, a member three levels down.
#[test]
fn violations_are_spread_over_every_location() {
    let spec = jsobj_spec! {
        "a": integer().min(0),
        "b": {
            "c": string().length(..=4),
            "d": { "e": integer().range(0..=9) },
        },
    };
    let locations = ["", "/a", "/b", "/b/c", "/b/d", "/b/d/e"];
    let invalid = spec.invalid_generator().unwrap();
    let mut runner = TestRunner::deterministic();
    let draws = 3000;
    let mut counts = [0usize; 6];
    for _ in 0..draws {
        let bad = invalid.new_tree(&mut runner).unwrap().current();
        let mut at = bad.violation().pointer();
        // A member a strict object does not name belongs to the object.
        while !locations.contains(&at.as_str()) {
            at.truncate(at.rfind('/').unwrap_or(0));
        }
        let i = locations.iter().position(|l| *l == at).unwrap();
        counts[i] += 1;
    }
    let spread: Vec<String> = locations
        .iter()
        .zip(counts)
        .map(|(l, n)| {
            format!(
                "{:>7}: {:5.1} %",
                if l.is_empty() { "(root)" } else { l },
                n as f64 * 100.0 / draws as f64
            )
        })
        .collect();
    eprintln!(
        "violations by location over {draws} draws:\n{}",
        spread.join("\n")
    );
    let uniform = draws / locations.len();
    for (l, n) in locations.iter().zip(counts) {
        assert!(
            n * 3 >= uniform,
            "{l:?} broken {n} times of {draws}:\n{}",
            spread.join("\n")
        );
        assert!(
            n <= uniform * 3,
            "{l:?} broken {n} times of {draws}:\n{}",
            spread.join("\n")
        );
    }
}
