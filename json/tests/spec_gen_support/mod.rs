//! Random specs for the property tests of the generators and the JSON
//! Schema export, and a way to draw values from a strategy.

#![allow(dead_code)] // each test uses its own part

use codecbus_json::JsValue;
use codecbus_json::spec::{
    Spec, any as any_spec, array_of, boolean, float, integer, map_of, null, number, object, one_of,
    one_of_values, string, tuple,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Patterns that mean the same in the `regex` crate and in ECMA-262 (no
/// `.`, which ECMA-262 keeps from matching `\r` too).
pub(crate) const PATTERNS: [&str; 8] = [
    "^[a-z]+$",
    "[0-9]",
    "^ab",
    "x$",
    "^[A-Z][a-z]{1,3}$",
    "^(red|green|blue)$",
    "a[bc]+d",
    "^[a-f0-9]{2,4}$",
];

/// `n` values of `s`, from a runner seeded with `seed`.
pub(crate) fn draw<T: std::fmt::Debug>(
    s: &impl Strategy<Value = T>,
    seed: u64,
    n: usize,
) -> Vec<T> {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    (0..n)
        .map(|_| s.new_tree(&mut runner).expect("a value").current())
        .collect()
}

fn bound(lo: i64, width: Option<u16>) -> (i64, Option<i64>) {
    (lo, width.map(|w| lo + i64::from(w)))
}

fn scalar_value() -> impl Strategy<Value = JsValue> {
    prop_oneof![
        Just(JsValue::Null),
        any::<bool>().prop_map(JsValue::Bool),
        (-5i64..5).prop_map(JsValue::from),
        (-5i32..5).prop_map(|i| JsValue::from(f64::from(i) + 0.5)),
        "[a-c]{0,2}".prop_map(JsValue::from),
    ]
}

fn leaf() -> BoxedStrategy<Spec> {
    prop_oneof![
        Just(any_spec()),
        Just(null()),
        Just(boolean()),
        (0usize..3, proptest::option::of(0usize..4)).prop_map(|(lo, w)| match w {
            Some(w) => string().length(lo..=lo + w).into(),
            None => string().length(lo..).into(),
        }),
        (
            proptest::sample::select(PATTERNS.to_vec()),
            proptest::option::of(1usize..3)
        )
            .prop_map(|(p, lo)| {
                let s = string().try_pattern(p).expect("a valid pattern");
                match lo {
                    Some(lo) => s.length(lo..=lo + 4).into(),
                    None => s.into(),
                }
            }),
        (
            proptest::option::of(-50i64..50),
            proptest::option::of(0u16..40)
        )
            .prop_map(|(lo, w)| match (lo, w) {
                (Some(lo), w) => {
                    let (lo, hi) = bound(lo, w);
                    match hi {
                        Some(hi) => integer().range(lo..=hi).into(),
                        None => integer().min(lo).into(),
                    }
                }
                (None, Some(w)) => integer().max(i64::from(w)).into(),
                (None, None) => integer().into(),
            }),
        Just(integer().min(u64::MAX - 3).into()),
        (-10i32..10, 0u8..10, any::<bool>()).prop_map(|(lo, w, open)| {
            let (lo, hi) = (f64::from(lo), f64::from(lo) + f64::from(w) + 0.5);
            if open {
                float().range(lo..hi).into()
            } else {
                float().range(lo..=hi).into()
            }
        }),
        Just(float().into()),
        (-10i32..10, 1u8..10).prop_map(|(lo, w)| number()
            .range(f64::from(lo)..=f64::from(lo) + f64::from(w))
            .into()),
        proptest::collection::vec(scalar_value(), 1..4).prop_map(one_of_values),
        Just(
            integer()
                .range(-100..=100)
                .check("an even number", |v| v.as_i64().is_some_and(|i| i % 2 == 0))
        ),
        Just(string().length(..=6).check("a string of even length", |v| {
            v.as_str().is_some_and(|s| s.chars().count() % 2 == 0)
        })),
    ]
    .boxed()
}

/// A random modifier: nullable or a name.
fn modified(s: Spec, m: u8) -> Spec {
    match m {
        0 => s.nullable(),
        1 => s.named("thing"),
        _ => s,
    }
}

fn key_spec() -> impl Strategy<Value = Spec> {
    prop_oneof![
        Just(string().into()),
        Just(string().length(1..=3).into()),
        Just(string().pattern("^[a-z]+$").into()),
        Just(one_of_values(["a", "b", "c"])),
    ]
}

/// Random specs: scalars with their constraints, containers of them,
/// `one_of`, recursive trees, with modifiers and user checks; at most
/// three levels deep. Every one has values that can be generated.
pub(crate) fn arbitrary_spec() -> BoxedStrategy<Spec> {
    let leaf = (leaf(), 0u8..8).prop_map(|(s, m)| modified(s, m));
    leaf.prop_recursive(3, 24, 4, |inner| {
        let spec = prop_oneof![
            (
                inner.clone(),
                0usize..2,
                proptest::option::of(0usize..4),
                any::<bool>()
            )
                .prop_map(|(items, lo, w, unique)| {
                    let a = array_of(items);
                    let a = match w {
                        Some(w) => a.length(lo..=lo + w),
                        None => a.length(lo..),
                    };
                    let a: Spec = if unique { a.unique().into() } else { a.into() };
                    if lo == 0 && w.is_none_or(|w| w > 1) {
                        a.check("at most 2 items", |v| {
                            v.as_array().is_some_and(|a| a.len() <= 2)
                        })
                    } else {
                        a
                    }
                }),
            proptest::collection::vec(inner.clone(), 0..3).prop_map(|items| tuple(items).into()),
            (
                proptest::collection::vec(("[a-d]{1,2}", inner.clone(), any::<bool>()), 0..4),
                any::<bool>()
            )
                .prop_map(|(fields, strict)| {
                    let mut o = object();
                    for (k, s, required) in fields {
                        o = if required {
                            o.required(k, s)
                        } else {
                            o.optional(k, s)
                        };
                    }
                    if strict { o.into() } else { o.lenient().into() }
                }),
            (
                inner.clone(),
                key_spec(),
                0usize..2,
                proptest::option::of(0usize..3)
            )
                .prop_map(|(values, keys, lo, w)| {
                    let m = map_of(values).keys(keys);
                    match w {
                        Some(w) => m.length(lo..=lo + w).into(),
                        None => m.length(lo..).into(),
                    }
                }),
            proptest::collection::vec(inner.clone(), 1..3).prop_map(one_of),
            inner.clone().prop_map(|leaf| Spec::recursive(|me| {
                object()
                    .required("v", leaf)
                    .optional("kids", array_of(me).length(..=2))
            })),
        ];
        (spec, 0u8..8).prop_map(|(s, m)| modified(s, m))
    })
    .boxed()
}
