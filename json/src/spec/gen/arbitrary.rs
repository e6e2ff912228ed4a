//! Arbitrary values, and the strategies of numbers and strings the
//! generators of specs build on.

use super::*;

/// Arbitrary JSON values within `sizes`: every kind, integers over the
/// whole `i64` and `u64` range, finite floats, strings of any characters
/// (mostly ASCII letters).
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::generators::{any_value, Sizes};
/// use codecbus_json::JsValue;
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
///
/// let scalars = any_value(Sizes::new().max_depth(0));
/// let v = scalars.new_tree(&mut TestRunner::deterministic()).unwrap().current();
/// assert!(!matches!(v, JsValue::Array(_) | JsValue::Object(_)));
/// ```
pub fn any_value(sizes: Sizes) -> BoxedStrategy<JsValue> {
    let leaf = scalar(sizes.str_len);
    if sizes.depth == 0 {
        return leaf;
    }
    let len = sizes.len;
    let str_len = sizes.str_len;
    let desired = u32::try_from(len.saturating_mul(8).max(8)).unwrap_or(u32::MAX);
    let branch = u32::try_from(len.max(1)).unwrap_or(u32::MAX);
    leaf.prop_recursive(sizes.depth, desired, branch, move |inner| {
        prop_oneof![
            vec(inner.clone(), 0..=len).prop_map(|v| JsValue::Array(v.into_iter().collect())),
            vec((text(0, str_len), inner), 0..=len)
                .prop_map(|kv| JsValue::Object(kv.into_iter().collect())),
        ]
    })
    .boxed()
}

/// Arbitrary arrays of at most [`max_len`](Sizes::max_len) elements, each
/// an [`any_value`] one level less deep.
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::generators::{any_array, Sizes};
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
///
/// let arrays = any_array(Sizes::new().max_len(3));
/// let a = arrays.new_tree(&mut TestRunner::deterministic()).unwrap().current();
/// assert!(a.len() <= 3);
/// ```
pub fn any_array(sizes: Sizes) -> BoxedStrategy<JsArray> {
    let inner = any_value(sizes.max_depth(sizes.depth.saturating_sub(1)));
    vec(inner, 0..=sizes.len)
        .prop_map(|v| v.into_iter().collect())
        .boxed()
}

/// Arbitrary objects of at most [`max_len`](Sizes::max_len) members, each
/// an [`any_value`] one level less deep.
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::generators::{any_object, Sizes};
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
///
/// let objects = any_object(Sizes::new().max_len(3));
/// let o = objects.new_tree(&mut TestRunner::deterministic()).unwrap().current();
/// assert!(o.len() <= 3);
/// ```
pub fn any_object(sizes: Sizes) -> BoxedStrategy<JsObj> {
    let inner = any_value(sizes.max_depth(sizes.depth.saturating_sub(1)));
    vec((text(0, sizes.str_len), inner), 0..=sizes.len)
        .prop_map(|kv| kv.into_iter().collect())
        .boxed()
}

pub(super) fn scalar(str_len: usize) -> BoxedStrategy<JsValue> {
    prop_oneof![
        Just(JsValue::Null),
        any::<bool>().prop_map(JsValue::Bool),
        ints(-1000, 1000).prop_map(JsValue::Int),
        any::<i64>().prop_map(JsValue::from),
        any::<u64>().prop_map(JsValue::from),
        finite().prop_map(JsValue::Float),
        text(0, str_len).prop_map(JsValue::from),
    ]
    .boxed()
}

/// Finite floats: small ones, whole ones and any magnitude.
pub(super) fn finite() -> BoxedStrategy<f64> {
    use proptest::num::f64 as f;
    prop_oneof![
        -1000.0..1000.0f64,
        (-1000i32..1000).prop_map(f64::from),
        f::POSITIVE | f::NEGATIVE | f::NORMAL | f::SUBNORMAL | f::ZERO,
    ]
    .boxed()
}

/// Floats that are not integral, so equal to no integer.
pub(super) fn fractional() -> BoxedStrategy<f64> {
    (-1000i32..1000, 1u8..=9)
        .prop_map(|(i, d)| f64::from(i) + f64::from(d) / 10.0)
        .boxed()
}

/// Strings of `lo..=hi` characters, mostly ASCII letters.
pub(super) fn text(lo: usize, hi: usize) -> BoxedStrategy<String> {
    let ch = prop_oneof![
        4 => proptest::char::range('a', 'z'),
        1 => proptest::char::range('A', 'Z'),
        1 => any::<char>(),
    ];
    vec(ch, lo..=hi.max(lo))
        .prop_map(|c| c.into_iter().collect())
        .boxed()
}

/// The smallest and largest integer a `JsInt` holds.
pub(super) const INT_MIN: i128 = i64::MIN as i128;
pub(super) const INT_MAX: i128 = u64::MAX as i128;

/// Integers in `lo..=hi` (within the `JsInt` range), often at the bounds.
pub(super) fn ints(lo: i128, hi: i128) -> BoxedStrategy<JsInt> {
    let (lo, hi) = (lo.max(INT_MIN), hi.min(INT_MAX));
    let near = (lo.max(-100), hi.min(100));
    let mut parts: Vec<BoxedStrategy<i128>> = vec![Just(lo).boxed(), Just(hi).boxed()];
    if lo < hi {
        parts.push((lo..=hi).boxed());
    }
    if near.0 < near.1 {
        parts.push((near.0..=near.1).boxed());
    }
    Union::new(parts)
        .prop_filter_map("integers are clamped to the JsInt range", |i| {
            JsInt::try_from(i).ok()
        })
        .boxed()
}

/// The smallest finite float a lower bound admits.
pub(super) fn lowest(b: Bound<f64>) -> Option<f64> {
    let x = match b {
        Bound::Unbounded => return Some(f64::MIN),
        Bound::Included(x) => x,
        Bound::Excluded(x) => x.next_up(),
    };
    match x {
        x if x.is_nan() || x == f64::INFINITY => None,
        f64::NEG_INFINITY => Some(f64::MIN),
        x => Some(x),
    }
}

/// The largest finite float an upper bound admits.
pub(super) fn highest(b: Bound<f64>) -> Option<f64> {
    let x = match b {
        Bound::Unbounded => return Some(f64::MAX),
        Bound::Included(x) => x,
        Bound::Excluded(x) => x.next_down(),
    };
    match x {
        x if x.is_nan() || x == f64::NEG_INFINITY => None,
        f64::INFINITY => Some(f64::MAX),
        x => Some(x),
    }
}

/// Finite floats in `lo..=hi`: the bounds, and values near zero or near a
/// bound (a span that `f64` arithmetic cannot overflow).
pub(super) fn floats_in(lo: f64, hi: f64) -> BoxedStrategy<f64> {
    if lo >= hi {
        return Just(lo).boxed();
    }
    const SPAN: f64 = 1e6;
    let (a, b) = if lo <= 0.0 && hi >= 0.0 {
        (lo.max(-SPAN), hi.min(SPAN))
    } else if lo > 0.0 {
        (lo, hi.min(lo + SPAN.max(lo)))
    } else {
        (lo.max(hi - SPAN.max(-hi)), hi)
    };
    let mut parts = vec![Just(lo).boxed(), Just(hi).boxed()];
    if a < b && (b - a).is_finite() {
        parts.push((a..=b).boxed());
    }
    Union::new(parts).boxed()
}
