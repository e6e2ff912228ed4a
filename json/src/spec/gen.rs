//! Property-test generators (feature `proptest`): values that conform to a
//! spec, values that break it in exactly one place, and arbitrary values.
//!
//! [`Spec::generator`] gives a [`proptest`](mod@proptest) strategy of values the spec
//! accepts: optional members present and absent, nullable values `null`
//! and not, lengths and ranges up to their bounds.
//! [`Spec::invalid_generator`] gives values that break exactly one
//! constraint, each with the [`Violation`] that [`Spec::validate`] reports
//! for it, for negative tests of code that consumes the spec's values.
//! [`any_value`], [`any_object`] and [`any_array`] generate arbitrary JSON.
//! [`Sizes`] bounds all of them: nesting depth, collection lengths, string
//! lengths.
//!
//! ```
//! use codecbus_json::jsobj_spec;
//! use codecbus_json::spec::{array_of, integer, string};
//! use proptest::strategy::{Strategy, ValueTree};
//! use proptest::test_runner::TestRunner;
//!
//! let spec = jsobj_spec! {
//!     "sku": string().length(1..=8),
//!     "qty": integer().range(1..=100),
//!     "tags"?: array_of(string()).unique(),
//! };
//! let mut runner = TestRunner::deterministic();
//!
//! let valid = spec.generator().unwrap();
//! for _ in 0..32 {
//!     let v = valid.new_tree(&mut runner).unwrap().current();
//!     assert!(spec.is_valid(&v));
//! }
//!
//! let invalid = spec.invalid_generator().unwrap();
//! for _ in 0..32 {
//!     let bad = invalid.new_tree(&mut runner).unwrap().current();
//!     assert_eq!(spec.validate(bad.value()), [bad.violation().clone()]);
//! }
//! ```
//!
//! In a test, use the strategies with `proptest!` as any other.
//!
//! # What is generated
//!
//! Every kind of constraint has its violations:
//!
//! | constraint | violating value | reported at |
//! |---|---|---|
//! | the kind of value | a value of a kind the spec does not accept (`null` where it is not nullable) | the value |
//! | integer, float, number range | a number just past a bound, or far past it | the value |
//! | string length, pattern | a string too short or too long (matching the pattern, if any); a string of the right length that does not match | the value |
//! | one of values | a value not in the set | the value |
//! | array length, uniqueness | too few or too many valid elements; one element equal to an earlier one | the array; the later element |
//! | tuple length | one element fewer or one more | the array |
//! | required member, strict object | the member removed; a member the spec does not name | the member |
//! | map length, key spec | too few or too many members; a key that breaks the key spec | the object; the member |
//! | one of specs | a value of a kind no alternative accepts | the value |
//! | user check | a value that satisfies the rest but fails the check | the value |
//!
//! and every violation of a member or an element is also generated inside
//! a valid container, at its pointer.
//!
//! Each draw first picks the location to break, uniformly among the
//! locations of the spec (the value itself, each member, the elements of
//! an array or a tuple position, the keys and the values of a map, down to
//! the depth values are generated), then one of the violations at that
//! location, every other place of the value being valid: a member three
//! levels down is broken as often as the whole value.
//!
//! # Limits
//!
//! * **Patterns.** Strings for a pattern are generated from the pattern
//!   itself (with `regex-syntax`; anchors and word boundaries are dropped
//!   for generation, samples are also padded before and after, since an
//!   unanchored pattern matches inside longer strings, and every string is
//!   checked against the real expression). The generator samples a pool of
//!   candidates when it is built: a pattern for which no sample of the required length matches is
//!   a [`GenError::Pattern`]. Non-matching strings are derived from the
//!   matching ones and from a fixed set of strings; a pattern that matches
//!   all of them (`.*`, or a pattern almost everything contains) has no
//!   pattern violations, and one whose matching strings all have a valid
//!   length has no length violations that match it.
//! * **User checks and uniqueness** are met by generating and then
//!   filtering. When the generator is built it samples the unfiltered
//!   strategy: if at least a quarter of the samples pass, values are
//!   filtered (proptest's local rejection limit bounds the retries); if
//!   fewer do, the values are drawn from the samples that passed; if none
//!   does, a valid value is a [`GenError::Check`] (or a
//!   [`GenError::Unsatisfiable`] for a unique array), and a violation of
//!   that kind is not generated.
//! * **One of specs**: the violation generated is a value of a kind that no
//!   alternative accepts; values of an accepted kind that fail every
//!   alternative are not generated.
//! * **Recursion**: a recursive spec is expanded at most
//!   [`max_depth`](Sizes::max_depth) times along one path; optional members,
//!   empty arrays and maps and `null` end the recursion. A spec whose every
//!   value nests deeper is a [`GenError::TooDeep`].
//! * Numbers are finite; floats that must differ from every integer in
//!   value (a float where an integer is expected) are not integral.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::ops::Bound;
use std::sync::Arc;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::strategy::{BoxedStrategy, Just, Strategy, Union, ValueTree};
use proptest::test_runner::TestRunner;
use regex::Regex;

use super::Violation;
use super::check::Miss;
use super::describe::{
    describe, float_range, int_range, show, show_array_len, show_obj_len, show_str, show_str_len,
};
use super::model::{Check, Node, Spec, SpecKind, StrSpec};
use crate::{JsArray, JsInt, JsObj, JsPath, JsValue, Segment};

/// Size limits of generated values.
///
/// The defaults (`Sizes::new()`): depth 3, at most 4 elements or members
/// beyond a container's minimum, at most 8 characters beyond a string's
/// minimum.
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::generators::{any_value, Sizes};
///
/// let small = any_value(Sizes::new().max_depth(1).max_len(2).max_str_len(4));
/// # let _ = small;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    depth: u32,
    len: usize,
    str_len: usize,
}

impl Default for Sizes {
    fn default() -> Self {
        Sizes::new()
    }
}

impl Sizes {
    /// The default limits.
    pub const fn new() -> Sizes {
        Sizes {
            depth: 3,
            len: 4,
            str_len: 8,
        }
    }

    /// How deep arbitrary values nest (0: scalars only), and how many times
    /// a recursive spec is expanded along one path.
    #[must_use]
    pub const fn max_depth(mut self, depth: u32) -> Sizes {
        self.depth = depth;
        self
    }

    /// How many elements or members a container has beyond its spec's
    /// minimum (and at most, for arbitrary values).
    #[must_use]
    pub const fn max_len(mut self, len: usize) -> Sizes {
        self.len = len;
        self
    }

    /// How many characters a string has beyond its spec's minimum (and at
    /// most, for arbitrary strings and keys).
    #[must_use]
    pub const fn max_str_len(mut self, len: usize) -> Sizes {
        self.str_len = len;
        self
    }
}

/// Why a spec's generator could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GenError {
    /// Nothing of this spec could be generated: an empty range or set, a
    /// unique array longer than its elements allow, a one of no
    /// alternatives, a recursive spec that no longer exists.
    #[error("no value of `{spec}` could be generated")]
    Unsatisfiable {
        /// What the spec accepts, in words.
        spec: String,
    },
    /// No string matching a pattern, with the required length, could be
    /// generated.
    #[error("no string matching /{pattern}/ could be generated: {reason}")]
    Pattern {
        /// The pattern.
        pattern: String,
        /// Why not.
        reason: String,
    },
    /// No sampled value passed a user check.
    #[error("no generated value passed the check `{message}`")]
    Check {
        /// The check's message.
        message: String,
    },
    /// Every value of a recursive spec nests deeper than
    /// [`Sizes::max_depth`] allows.
    #[error("every value of `{spec}` nests deeper than the depth limit")]
    TooDeep {
        /// What the spec accepts, in words.
        spec: String,
    },
    /// The spec accepts every value, so no value violates it.
    #[error("the spec accepts every value: nothing violates it")]
    NothingToViolate,
}

/// A value that breaks its spec in exactly one place, with the violation
/// [`Spec::validate`] reports for it.
#[derive(Clone, Debug, PartialEq)]
pub struct InvalidValue {
    value: JsValue,
    violation: Violation,
}

impl InvalidValue {
    /// The value.
    pub fn value(&self) -> &JsValue {
        &self.value
    }

    /// The one violation it has.
    pub fn violation(&self) -> &Violation {
        &self.violation
    }

    /// The value and its violation.
    pub fn into_parts(self) -> (JsValue, Violation) {
        (self.value, self.violation)
    }
}

impl fmt::Display for InvalidValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.value, self.violation)
    }
}

impl Spec {
    /// A strategy of values that conform to this spec, with the default
    /// [`Sizes`]; see the [module documentation](crate::spec::generators)
    /// for what is generated and its limits.
    ///
    /// # Errors
    ///
    /// A [`GenError`] when no value of the spec could be generated.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::integer;
    /// use proptest::strategy::{Strategy, ValueTree};
    /// use proptest::test_runner::TestRunner;
    ///
    /// let spec = integer().range(1..=6).nullable();
    /// let dice = spec.generator().unwrap();
    /// let v = dice.new_tree(&mut TestRunner::deterministic()).unwrap().current();
    /// assert!(spec.is_valid(&v));
    /// ```
    pub fn generator(&self) -> Result<BoxedStrategy<JsValue>, GenError> {
        self.generator_with(Sizes::new())
    }

    /// As [`generator`](Spec::generator), within `sizes`.
    ///
    /// # Errors
    ///
    /// As [`generator`](Spec::generator).
    pub fn generator_with(&self, sizes: Sizes) -> Result<BoxedStrategy<JsValue>, GenError> {
        Gen::new(sizes).valid(self.node(), sizes.depth)
    }

    /// A strategy of values that break this spec in exactly one place, each
    /// with its violation, with the default [`Sizes`].
    ///
    /// # Errors
    ///
    /// [`GenError::NothingToViolate`] when no violation can be generated
    /// (the spec accepts every value, or every way to break it needs a
    /// value the generator cannot build).
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::{integer, object, Spec};
    /// use proptest::strategy::{Strategy, ValueTree};
    /// use proptest::test_runner::TestRunner;
    ///
    /// let spec: Spec = object().required("qty", integer().min(1)).into();
    /// let bad = spec.invalid_generator().unwrap();
    /// let mut runner = TestRunner::deterministic();
    /// for _ in 0..16 {
    ///     let (value, violation) = bad.new_tree(&mut runner).unwrap().current().into_parts();
    ///     assert_eq!(spec.validate(&value), [violation]);
    /// }
    /// ```
    pub fn invalid_generator(&self) -> Result<BoxedStrategy<InvalidValue>, GenError> {
        self.invalid_generator_with(Sizes::new())
    }

    /// As [`invalid_generator`](Spec::invalid_generator), within `sizes`.
    ///
    /// # Errors
    ///
    /// As [`invalid_generator`](Spec::invalid_generator).
    pub fn invalid_generator_with(
        &self,
        sizes: Sizes,
    ) -> Result<BoxedStrategy<InvalidValue>, GenError> {
        let all = Gen::new(sizes).invalid(self.node(), sizes.depth, false);
        let Some(all) = all.into_strategy() else {
            return Err(GenError::NothingToViolate);
        };
        Ok(all.prop_map(Bad::finish).boxed())
    }
}

// ---- arbitrary values ---------------------------------------------------------

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

fn scalar(str_len: usize) -> BoxedStrategy<JsValue> {
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
fn finite() -> BoxedStrategy<f64> {
    use proptest::num::f64 as f;
    prop_oneof![
        -1000.0..1000.0f64,
        (-1000i32..1000).prop_map(f64::from),
        f::POSITIVE | f::NEGATIVE | f::NORMAL | f::SUBNORMAL | f::ZERO,
    ]
    .boxed()
}

/// Floats that are not integral, so equal to no integer.
fn fractional() -> BoxedStrategy<f64> {
    (-1000i32..1000, 1u8..=9)
        .prop_map(|(i, d)| f64::from(i) + f64::from(d) / 10.0)
        .boxed()
}

/// Strings of `lo..=hi` characters, mostly ASCII letters.
fn text(lo: usize, hi: usize) -> BoxedStrategy<String> {
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
const INT_MIN: i128 = i64::MIN as i128;
const INT_MAX: i128 = u64::MAX as i128;

/// Integers in `lo..=hi` (within the `JsInt` range), often at the bounds.
fn ints(lo: i128, hi: i128) -> BoxedStrategy<JsInt> {
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
fn lowest(b: Bound<f64>) -> Option<f64> {
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
fn highest(b: Bound<f64>) -> Option<f64> {
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
fn floats_in(lo: f64, hi: f64) -> BoxedStrategy<f64> {
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

// ---- building -----------------------------------------------------------------

type Values = BoxedStrategy<JsValue>;
type Bads = BoxedStrategy<Bad>;

/// A value that breaks its spec once, while it is being built: the path is
/// kept innermost segment first, so a container prepends its own in O(1).
#[derive(Clone, Debug)]
struct Bad {
    value: JsValue,
    at: Vec<Segment>,
    expected: String,
    found: String,
}

impl Bad {
    fn here(value: JsValue, expected: impl Into<String>, found: impl Into<String>) -> Bad {
        Bad {
            value,
            at: Vec::new(),
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// The same violation, moved into `container` at `segment`.
    fn within(mut self, segment: Segment, container: JsValue) -> Bad {
        self.at.push(segment);
        self.value = container;
        self
    }

    fn finish(self) -> InvalidValue {
        let path: JsPath = self.at.into_iter().rev().collect();
        InvalidValue {
            value: self.value,
            violation: Violation::new(
                path,
                Miss {
                    expected: self.expected,
                    found: self.found,
                },
            ),
        }
    }
}

/// The violations of a spec, by location: the places of the spec where a
/// value can break it (the value itself, each member, the elements of an
/// array, the keys and the values of a map; recursively, a recursive spec
/// expanded as deep as values are generated).
///
/// A value breaks its spec in one location, drawn uniformly among all the
/// spec's locations: each group of violations weighs the number of
/// locations it holds, and within a location every kind of violation is as
/// likely. A member three levels down is thus broken as often as the whole
/// value, however many kinds of value the whole value rejects.
#[derive(Default)]
struct Breaks {
    /// The violations at the spec's own place: one location.
    here: Vec<Bads>,
    /// The violations further in, each strategy with the number of
    /// locations it draws from.
    inner: Vec<(u64, Bads)>,
}

impl Breaks {
    /// How many locations have violations.
    fn locations(&self) -> u64 {
        let here = u64::from(!self.here.is_empty());
        self.inner
            .iter()
            .fold(here, |n, (w, _)| n.saturating_add(*w))
    }

    fn is_empty(&self) -> bool {
        self.here.is_empty() && self.inner.is_empty()
    }

    /// The same violations, each strategy passed through `f` (to move them
    /// into a container), locations unchanged.
    fn map(self, mut f: impl FnMut(Bads) -> Bads) -> Breaks {
        Breaks {
            here: self.here.into_iter().map(&mut f).collect(),
            inner: self.inner.into_iter().map(|(w, s)| (w, f(s))).collect(),
        }
    }

    /// A violation at a location drawn uniformly; `None` when there is
    /// none.
    fn into_strategy(self) -> Option<Bads> {
        let mut parts = self.inner;
        if !self.here.is_empty() {
            parts.push((1, Union::new(self.here).boxed()));
        }
        match parts.len() {
            0 => None,
            1 => parts.pop().map(|(_, s)| s),
            _ => {
                // Union weights are `u32` and their sum must be one too:
                // very large counts are scaled down together, into half
                // the range (each weight at least 1).
                let total = parts.iter().fold(0u64, |n, (w, _)| n.saturating_add(*w));
                let scale = total / u64::from(u32::MAX / 2) + 1;
                let weighted = parts
                    .into_iter()
                    .map(|(w, s)| (u32::try_from((w / scale).max(1)).unwrap_or(u32::MAX), s))
                    .collect();
                Some(Union::new_weighted(weighted).boxed())
            }
        }
    }

    /// Adds the violations of a part (a member, an element) as one group
    /// of its locations.
    fn nest(&mut self, part: Breaks) {
        let n = part.locations();
        if let Some(s) = part.into_strategy() {
            self.inner.push((n, s));
        }
    }
}

/// How many samples decide whether a filter is kept or replaced by a pool.
const PROBE: usize = 64;

/// `s` restricted to values that `keep` accepts: a filter when at least a
/// quarter of `PROBE` samples pass, a pool of the samples that passed when
/// fewer do, `None` when none does.
fn filtered<T, F>(s: BoxedStrategy<T>, why: &str, keep: F) -> Option<BoxedStrategy<T>>
where
    T: Clone + fmt::Debug + PartialEq + 'static,
    F: Fn(&T) -> bool + 'static,
{
    let (passed, kept) = sample(&s, PROBE, PROBE, &keep);
    if passed * 4 >= PROBE {
        Some(s.prop_filter(why.to_owned(), keep).boxed())
    } else if kept.is_empty() {
        None
    } else {
        Some(select(kept).boxed())
    }
}

/// Draws `n` samples of `s` with a deterministic runner; returns how many
/// passed `keep` and the distinct ones that did.
fn sample<T: Clone + fmt::Debug + PartialEq>(
    s: &BoxedStrategy<T>,
    n: usize,
    cap: usize,
    keep: impl Fn(&T) -> bool,
) -> (usize, Vec<T>) {
    let mut runner = TestRunner::deterministic();
    let mut passed = 0;
    let mut kept: Vec<T> = Vec::new();
    for _ in 0..n {
        let Ok(tree) = s.new_tree(&mut runner) else {
            continue;
        };
        let v = tree.current();
        if keep(&v) {
            passed += 1;
            if kept.len() < cap && !kept.contains(&v) {
                kept.push(v);
            }
        }
    }
    (passed, kept)
}

/// The kinds of JSON value, as bits.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Kinds(u8);

impl Kinds {
    const NULL: Kinds = Kinds(1);
    const BOOL: Kinds = Kinds(2);
    const INT: Kinds = Kinds(4);
    const FLOAT: Kinds = Kinds(8);
    const STR: Kinds = Kinds(16);
    const ARRAY: Kinds = Kinds(32);
    const OBJECT: Kinds = Kinds(64);
    const NONE: Kinds = Kinds(0);
    const ALL: Kinds = Kinds(127);

    fn of(v: &JsValue) -> Kinds {
        match v {
            JsValue::Null => Kinds::NULL,
            JsValue::Bool(_) => Kinds::BOOL,
            JsValue::Int(_) => Kinds::INT,
            JsValue::Float(_) => Kinds::FLOAT,
            JsValue::Str(_) => Kinds::STR,
            JsValue::Array(_) => Kinds::ARRAY,
            JsValue::Object(_) => Kinds::OBJECT,
        }
    }

    fn or(self, other: Kinds) -> Kinds {
        Kinds(self.0 | other.0)
    }

    fn has(self, other: Kinds) -> bool {
        self.0 & other.0 != 0
    }
}

/// Small values of one kind, for values of a kind a spec rejects; floats
/// are never integral, so no float equals an integer.
fn of_kind(kind: Kinds, sizes: Sizes) -> Values {
    let small = sizes.max_depth(1).max_len(sizes.len.min(2));
    match kind {
        Kinds::NULL => Just(JsValue::Null).boxed(),
        Kinds::BOOL => any::<bool>().prop_map(JsValue::Bool).boxed(),
        Kinds::INT => prop_oneof![ints(-1000, 1000), ints(INT_MIN, INT_MAX)]
            .prop_map(JsValue::Int)
            .boxed(),
        Kinds::FLOAT => fractional().prop_map(JsValue::Float).boxed(),
        Kinds::STR => text(0, sizes.str_len).prop_map(JsValue::from).boxed(),
        Kinds::ARRAY => any_array(small).prop_map(JsValue::Array).boxed(),
        _ => any_object(small).prop_map(JsValue::Object).boxed(),
    }
}

const EACH_KIND: [Kinds; 7] = [
    Kinds::NULL,
    Kinds::BOOL,
    Kinds::INT,
    Kinds::FLOAT,
    Kinds::STR,
    Kinds::ARRAY,
    Kinds::OBJECT,
];

/// How deep the kind analysis follows references and alternatives.
const KIND_DEPTH: u8 = 8;

/// The kinds of value `node` may accept (more, never fewer).
fn kinds(node: &Node, depth: u8) -> Kinds {
    let base = if node.nullable {
        Kinds::NULL
    } else {
        Kinds::NONE
    };
    let kind = match &node.kind {
        SpecKind::Any => Kinds::ALL,
        SpecKind::Null => Kinds::NULL,
        SpecKind::Bool => Kinds::BOOL,
        SpecKind::Str(_) => Kinds::STR,
        SpecKind::Int(_) => Kinds::INT,
        SpecKind::Float(_) => Kinds::FLOAT,
        SpecKind::Number(_) => Kinds::INT.or(Kinds::FLOAT),
        SpecKind::Values(values) => values.iter().fold(Kinds::NONE, |k, v| {
            // JSON equality: an integer equals a float of the same value.
            let kv = Kinds::of(v);
            let kv = if kv.has(Kinds::INT.or(Kinds::FLOAT)) {
                Kinds::INT.or(Kinds::FLOAT)
            } else {
                kv
            };
            k.or(kv)
        }),
        SpecKind::Array(_) | SpecKind::Tuple(_) => Kinds::ARRAY,
        SpecKind::Object(_) | SpecKind::Map(_) => Kinds::OBJECT,
        SpecKind::OneOf(alts) if depth > 0 => alts
            .iter()
            .fold(Kinds::NONE, |k, a| k.or(kinds(a.node(), depth - 1))),
        SpecKind::Ref(target) if depth > 0 => match target.upgrade() {
            Some(def) => kinds(&def, depth - 1),
            None => Kinds::NONE,
        },
        SpecKind::OneOf(_) | SpecKind::Ref(_) => Kinds::ALL,
    };
    base.or(kind)
}

/// Strings for a string spec: valid ones, and each kind of violation.
struct Strings {
    valid: Result<BoxedStrategy<String>, GenError>,
    /// Too short or too long (and matching the pattern, if any).
    short: Option<BoxedStrategy<String>>,
    long: Option<BoxedStrategy<String>>,
    /// Of a valid length, not matching the pattern.
    unmatched: Option<BoxedStrategy<String>>,
}

fn pool(mut v: Vec<String>) -> Option<BoxedStrategy<String>> {
    v.sort();
    v.dedup();
    v.truncate(PROBE);
    if v.is_empty() {
        None
    } else {
        Some(select(v).boxed())
    }
}

/// A strategy of strings built from `pattern`, with anchors and word
/// boundaries dropped.
fn from_pattern(pattern: &str) -> Result<BoxedStrategy<String>, String> {
    use regex_syntax::hir::{Capture, Hir, HirKind, Repetition};

    fn strip(h: Hir) -> Hir {
        match h.into_kind() {
            HirKind::Look(_) | HirKind::Empty => Hir::empty(),
            HirKind::Literal(l) => Hir::literal(l.0),
            HirKind::Class(c) => Hir::class(c),
            HirKind::Repetition(r) => Hir::repetition(Repetition {
                sub: Box::new(strip(*r.sub)),
                ..r
            }),
            HirKind::Capture(c) => Hir::capture(Capture {
                sub: Box::new(strip(*c.sub)),
                ..c
            }),
            HirKind::Concat(v) => Hir::concat(v.into_iter().map(strip).collect()),
            HirKind::Alternation(v) => Hir::alternation(v.into_iter().map(strip).collect()),
        }
    }

    let hir = regex_syntax::Parser::new()
        .parse(pattern)
        .map_err(|e| e.to_string())?;
    proptest::string::string_regex_parsed(&strip(hir))
        .map(Strategy::boxed)
        .map_err(|e| e.to_string())
}

/// Strings derived from `s` that may no longer match a pattern.
fn mutations(s: &str, out: &mut Vec<String>) {
    let n = s.chars().count();
    let fillers = ['a', 'Z', '0', ' ', '!', '-', 'é', '_'];
    out.push(s.chars().skip(1).collect());
    out.push(s.chars().take(n.saturating_sub(1)).collect());
    out.push(s.chars().rev().collect());
    for f in fillers {
        out.push(std::iter::repeat_n(f, n).collect());
        out.push(format!("{f}{s}"));
        out.push(format!("{s}{f}"));
        let mut first = String::from(f);
        first.extend(s.chars().skip(1));
        out.push(first);
        let mut last: String = s.chars().take(n.saturating_sub(1)).collect();
        last.push(f);
        out.push(last);
    }
}

impl Strings {
    fn of(s: &StrSpec, sizes: Sizes) -> Strings {
        let (min, max) = (s.min_len, s.max_len);
        let hi = max.map_or(min.saturating_add(sizes.str_len), |m| {
            m.min(min.saturating_add(sizes.str_len))
        });
        let len_ok = move |t: &str| {
            let n = t.chars().count();
            n >= min && max.is_none_or(|m| n <= m)
        };
        let Some(re) = &s.pattern else {
            return Strings {
                valid: if min <= hi {
                    Ok(text(min, hi))
                } else {
                    Err(GenError::Unsatisfiable {
                        spec: describe(&str_node(s.clone())),
                    })
                },
                short: (min > 0).then(|| text(min.saturating_sub(1 + sizes.str_len), min - 1)),
                long: max
                    .and_then(|m| m.checked_add(1))
                    .map(|m| text(m, m.saturating_add(2))),
                unmatched: None,
            };
        };
        Strings::patterned(re, len_ok, min, max)
    }

    fn patterned(
        re: &Regex,
        len_ok: impl Fn(&str) -> bool,
        min: usize,
        max: Option<usize>,
    ) -> Strings {
        let pattern = re.as_str();
        let mut matched: Vec<String> = Vec::new();
        let mut reason = String::from("none of the sampled strings matched with a valid length");
        match from_pattern(pattern) {
            Ok(s) => {
                // An unanchored pattern matches inside longer strings too:
                // padding the samples reaches lengths the pattern alone
                // does not (every candidate is checked below).
                let pad = text(0, min.clamp(4, 64));
                let padded = prop_oneof![
                    s.clone(),
                    (pad.clone(), s.clone()).prop_map(|(a, b)| a + &b),
                    (s.clone(), pad.clone()).prop_map(|(a, b)| a + &b),
                    (pad.clone(), s, pad).prop_map(|(a, b, c)| a + &b + &c),
                ]
                .boxed();
                let (_, m) = sample(&padded, PROBE * 4, PROBE * 4, |t: &String| re.is_match(t));
                matched = m;
            }
            Err(e) => reason = e,
        }
        let valid: Vec<String> = matched.iter().filter(|t| len_ok(t)).cloned().collect();
        let n = |t: &String| t.chars().count();
        let short: Vec<String> = matched.iter().filter(|t| n(t) < min).cloned().collect();
        let long: Vec<String> = matched
            .iter()
            .filter(|t| max.is_some_and(|m| n(t) > m))
            .cloned()
            .collect();
        let mut candidates = Vec::new();
        for t in matched.iter().take(PROBE / 2) {
            mutations(t, &mut candidates);
        }
        for len in [min, min.saturating_add(1), max.unwrap_or(min)] {
            if len <= 64 {
                mutations(&"a".repeat(len), &mut candidates);
                mutations(&"0".repeat(len), &mut candidates);
            }
        }
        candidates.retain(|t| len_ok(t) && !re.is_match(t));
        Strings {
            valid: pool(valid).ok_or_else(|| GenError::Pattern {
                pattern: pattern.to_owned(),
                reason,
            }),
            short: pool(short),
            long: pool(long),
            unmatched: pool(candidates),
        }
    }
}

fn str_node(s: StrSpec) -> Node {
    Node {
        kind: SpecKind::Str(s),
        nullable: false,
        checks: Vec::new(),
        name: None,
    }
}

/// What a string of the wrong length was expected to be: the spec's length
/// without its pattern.
fn length_expected(s: &StrSpec) -> String {
    describe(&str_node(StrSpec {
        pattern: None,
        ..s.clone()
    }))
}

fn first_failing(checks: &[Check], v: &JsValue) -> Option<Arc<str>> {
    checks
        .iter()
        .find(|c| !(c.test)(v))
        .map(|c| Arc::clone(&c.message))
}

/// The builder of strategies for one spec, with the valid strategies of
/// the nodes it met (by node and remaining depth).
struct Gen {
    sizes: Sizes,
    memo: RefCell<HashMap<(usize, u32), Result<Values, GenError>>>,
}

impl Gen {
    fn new(sizes: Sizes) -> Gen {
        Gen {
            sizes,
            memo: RefCell::new(HashMap::new()),
        }
    }

    /// `lo..=hi` extended to the size limit.
    fn upper(&self, lo: usize, max: Option<usize>) -> usize {
        let soft = lo.saturating_add(self.sizes.len);
        max.map_or(soft, |m| m.min(soft))
    }

    // ---- valid values ---------------------------------------------------------

    /// Values that `node` accepts.
    fn valid(&self, node: &Node, depth: u32) -> Result<Values, GenError> {
        let key = (std::ptr::from_ref(node) as usize, depth);
        if let Some(hit) = self.memo.borrow().get(&key) {
            return hit.clone();
        }
        let kind = self.valid_kind(node, depth).and_then(|s| {
            if node.checks.is_empty() {
                return Ok(s);
            }
            let checks = node.checks.clone();
            filtered(s, "user checks", move |v| {
                checks.iter().all(|c| (c.test)(v))
            })
            .ok_or_else(|| GenError::Check {
                message: node
                    .checks
                    .first()
                    .map_or_else(String::new, |c| c.message.to_string()),
            })
        });
        let out = match (node.nullable, kind) {
            (true, Ok(s)) => Ok(prop_oneof![1 => Just(JsValue::Null), 3 => s].boxed()),
            (true, Err(_)) => Ok(Just(JsValue::Null).boxed()),
            (false, r) => r,
        };
        self.memo.borrow_mut().insert(key, out.clone());
        out
    }

    fn unsatisfiable(node: &Node) -> GenError {
        GenError::Unsatisfiable {
            spec: describe(node),
        }
    }

    /// Values of the node's kind and constraints, before its user checks
    /// and without `null` for a nullable node.
    fn valid_kind(&self, node: &Node, depth: u32) -> Result<Values, GenError> {
        let sizes = self.sizes;
        Ok(match &node.kind {
            SpecKind::Any => any_value(sizes.max_depth(sizes.depth.min(depth))),
            SpecKind::Null => Just(JsValue::Null).boxed(),
            SpecKind::Bool => any::<bool>().prop_map(JsValue::Bool).boxed(),
            SpecKind::Str(s) => Strings::of(s, sizes).valid?.prop_map(JsValue::from).boxed(),
            SpecKind::Int(i) => {
                let (lo, hi) = (i.min.unwrap_or(INT_MIN), i.max.unwrap_or(INT_MAX));
                if lo.max(INT_MIN) > hi.min(INT_MAX) {
                    return Err(Self::unsatisfiable(node));
                }
                ints(lo, hi).prop_map(JsValue::Int).boxed()
            }
            SpecKind::Float(f) => match (lowest(f.min), highest(f.max)) {
                (Some(lo), Some(hi)) if lo <= hi => {
                    floats_in(lo, hi).prop_map(JsValue::Float).boxed()
                }
                _ => return Err(Self::unsatisfiable(node)),
            },
            SpecKind::Number(n) => {
                let (Some(lo), Some(hi)) = (lowest(n.min), highest(n.max)) else {
                    return Err(Self::unsatisfiable(node));
                };
                if lo > hi {
                    return Err(Self::unsatisfiable(node));
                }
                let floats = floats_in(lo, hi).prop_map(JsValue::Float).boxed();
                // Integers within the bounds (casts saturate; the range
                // is clamped to what a JsInt holds).
                #[allow(clippy::cast_possible_truncation)]
                let (ilo, ihi) = (lo.ceil() as i128, hi.floor() as i128);
                if ilo.max(INT_MIN) <= ihi.min(INT_MAX) {
                    prop_oneof![floats, ints(ilo, ihi).prop_map(JsValue::Int)].boxed()
                } else {
                    floats
                }
            }
            SpecKind::Values(values) => {
                if values.is_empty() {
                    return Err(Self::unsatisfiable(node));
                }
                select(values.to_vec()).boxed()
            }
            SpecKind::Array(a) => {
                let hi = self.upper(a.min_len, a.max_len);
                match self.valid(a.items.node(), depth) {
                    Ok(items) => self
                        .arrays(items, a.min_len, hi, a.unique)
                        .ok_or_else(|| Self::unsatisfiable(node))?
                        .prop_map(JsValue::Array)
                        .boxed(),
                    Err(_) if a.min_len == 0 => Just(JsValue::Array(JsArray::new())).boxed(),
                    Err(e) => return Err(e),
                }
            }
            SpecKind::Tuple(t) => {
                let items = t
                    .items
                    .iter()
                    .map(|s| self.valid(s.node(), depth))
                    .collect::<Result<Vec<_>, _>>()?;
                items
                    .prop_map(|v| JsValue::Array(v.into_iter().collect()))
                    .boxed()
            }
            SpecKind::Object(o) => self.objects(o, depth)?.prop_map(JsValue::Object).boxed(),
            SpecKind::Map(m) => {
                let hi = self.upper(m.min_len, m.max_len);
                let parts = self
                    .keys(m.keys.node(), depth)
                    .zip(self.valid(m.values.node(), depth).ok());
                match parts.and_then(|(k, v)| self.maps(k, v, m.min_len, hi)) {
                    Some(s) => s.prop_map(JsValue::Object).boxed(),
                    None if m.min_len == 0 => Just(JsValue::Object(JsObj::new())).boxed(),
                    None => return Err(Self::unsatisfiable(node)),
                }
            }
            SpecKind::OneOf(alts) => {
                let mut ok = Vec::new();
                let mut first_err = None;
                for alt in alts.iter() {
                    match self.valid(alt.node(), depth) {
                        Ok(s) => ok.push(s),
                        Err(e) => {
                            first_err.get_or_insert(e);
                        }
                    }
                }
                if ok.is_empty() {
                    return Err(first_err.unwrap_or_else(|| Self::unsatisfiable(node)));
                }
                Union::new(ok).boxed()
            }
            SpecKind::Ref(target) => match target.upgrade() {
                Some(def) if depth > 0 => self.valid(&def, depth - 1)?,
                Some(def) => {
                    return Err(GenError::TooDeep {
                        spec: describe(&def),
                    });
                }
                None => return Err(Self::unsatisfiable(node)),
            },
        })
    }

    /// Arrays of `lo..=hi` elements of `items`, distinct when `unique`.
    fn arrays(
        &self,
        items: Values,
        lo: usize,
        hi: usize,
        unique: bool,
    ) -> Option<BoxedStrategy<JsArray>> {
        if lo > hi {
            return None;
        }
        let s = vec(items, lo..=hi);
        if !unique {
            return Some(s.prop_map(|v| v.into_iter().collect()).boxed());
        }
        let distinct = s
            .prop_map(|v| {
                let mut seen = HashSet::new();
                v.into_iter()
                    .filter(|x| seen.insert(x.clone()))
                    .collect::<JsArray>()
            })
            .boxed();
        filtered(distinct, "distinct elements", move |a: &JsArray| {
            a.len() >= lo
        })
    }

    /// Objects of `lo..=hi` members with keys from `keys` and values from
    /// `values`.
    fn maps(
        &self,
        keys: BoxedStrategy<String>,
        values: Values,
        lo: usize,
        hi: usize,
    ) -> Option<BoxedStrategy<JsObj>> {
        if lo > hi {
            return None;
        }
        let s = vec((keys, values), lo..=hi)
            .prop_map(|kv| kv.into_iter().collect::<JsObj>())
            .boxed();
        if lo <= 1 {
            return Some(s);
        }
        filtered(s, "distinct keys", move |o: &JsObj| o.len() >= lo)
    }

    /// Strings that a map's key spec accepts.
    fn keys(&self, node: &Node, depth: u32) -> Option<BoxedStrategy<String>> {
        let s = match &node.kind {
            SpecKind::Str(s) => Strings::of(s, self.sizes).valid.ok()?,
            SpecKind::Any => text(0, self.sizes.str_len),
            SpecKind::Values(values) => pool(
                values
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
            )?,
            SpecKind::OneOf(alts) => {
                let ok: Vec<_> = alts
                    .iter()
                    .filter_map(|a| self.keys(a.node(), depth))
                    .collect();
                if ok.is_empty() {
                    return None;
                }
                Union::new(ok).boxed()
            }
            SpecKind::Ref(target) if depth > 0 => {
                let def = target.upgrade()?;
                self.keys(&def, depth - 1)?
            }
            _ => return None,
        };
        if node.checks.is_empty() {
            return Some(s);
        }
        let checks = node.checks.clone();
        filtered(s, "user checks", move |k: &String| {
            let v = JsValue::from(k.as_str());
            checks.iter().all(|c| (c.test)(&v))
        })
    }

    /// Objects that an object spec accepts.
    fn objects(
        &self,
        o: &super::model::ObjSpec,
        depth: u32,
    ) -> Result<BoxedStrategy<JsObj>, GenError> {
        type Member = Option<(Arc<str>, JsValue)>;
        let mut parts: Vec<BoxedStrategy<Member>> = Vec::new();
        for f in &o.fields {
            let key = Arc::clone(&f.key);
            match (self.valid(f.spec.node(), depth), f.required) {
                (Ok(s), true) => {
                    parts.push(s.prop_map(move |v| Some((Arc::clone(&key), v))).boxed())
                }
                (Ok(s), false) => parts.push(
                    proptest::option::of(s)
                        .prop_map(move |v| v.map(|v| (Arc::clone(&key), v)))
                        .boxed(),
                ),
                (Err(e), true) => return Err(e),
                (Err(_), false) => {}
            }
        }
        let extra = if o.strict || self.sizes.len == 0 {
            Just(Vec::new()).boxed()
        } else {
            let small = self.sizes.max_depth(self.sizes.depth.min(depth).min(1));
            vec((text(0, self.sizes.str_len), any_value(small)), 0..=2).boxed()
        };
        let named: Arc<[Arc<str>]> = o.fields.iter().map(|f| Arc::clone(&f.key)).collect();
        Ok((parts, extra)
            .prop_map(move |(parts, extra)| {
                let mut obj: JsObj = parts.into_iter().flatten().collect();
                for (k, v) in extra {
                    if named.binary_search_by(|n| (**n).cmp(k.as_str())).is_err() {
                        obj.insert(k, v);
                    }
                }
                obj
            })
            .boxed())
    }

    // ---- violations -----------------------------------------------------------

    /// Values that break `node` once, each with its violation, by
    /// location. `null_ok`: a `null` here is accepted by an enclosing
    /// reference.
    fn invalid(&self, node: &Node, depth: u32, null_ok: bool) -> Breaks {
        let null_ok = null_ok || node.nullable;
        let mut out = match &node.kind {
            SpecKind::Ref(target) => match target.upgrade() {
                Some(def) if depth > 0 => self.invalid(&def, depth - 1, null_ok),
                _ => Breaks::default(),
            },
            _ => self.invalid_kind(node, depth, null_ok),
        };
        if !node.checks.is_empty()
            && let Ok(base) = self.valid_kind(node, depth)
        {
            let checks = node.checks.clone();
            let fails =
                move |v: &JsValue| !(null_ok && v.is_null()) && checks.iter().any(|c| !(c.test)(v));
            if let Some(s) = filtered(base, "fails a user check", fails) {
                let checks = node.checks.clone();
                out.here.push(
                    s.prop_filter_map("fails a user check", move |v| {
                        let message = first_failing(&checks, &v)?;
                        let found = show(&v);
                        Some(Bad::here(v, &*message, found))
                    })
                    .boxed(),
                );
            }
        }
        out
    }

    fn mismatch(&self, node: &Node, null_ok: bool, out: &mut Vec<Bads>) {
        let accepted = kinds(node, KIND_DEPTH);
        let expected: Arc<str> = describe(node).into();
        for k in EACH_KIND {
            if accepted.has(k) || (k == Kinds::NULL && null_ok) {
                continue;
            }
            let expected = Arc::clone(&expected);
            out.push(
                of_kind(k, self.sizes)
                    .prop_map(move |v| {
                        let found = show(&v);
                        Bad::here(v, &*expected, found)
                    })
                    .boxed(),
            );
        }
    }

    fn invalid_kind(&self, node: &Node, depth: u32, null_ok: bool) -> Breaks {
        let mut breaks = Breaks::default();
        let out = &mut breaks.here;
        self.mismatch(node, null_ok, out);
        match &node.kind {
            SpecKind::Int(i) => {
                let expected: Arc<str> = format!("integer{}", int_range(i.min, i.max)).into();
                let mut below = |lo: i128, hi: i128| {
                    if lo.max(INT_MIN) <= hi.min(INT_MAX) {
                        let expected = Arc::clone(&expected);
                        out.push(
                            ints(lo, hi)
                                .prop_map(move |n| {
                                    Bad::here(JsValue::Int(n), &*expected, n.to_string())
                                })
                                .boxed(),
                        );
                    }
                };
                if let Some(min) = i.min {
                    below(INT_MIN, min - 1);
                }
                if let Some(max) = i.max {
                    below(max + 1, INT_MAX);
                }
            }
            SpecKind::Float(f) => {
                let expected: Arc<str> = format!("float{}", float_range(f.min, f.max)).into();
                self.out_of_range(f.min, f.max, &expected, out);
            }
            SpecKind::Number(n) => {
                let expected: Arc<str> = format!("number{}", float_range(n.min, n.max)).into();
                self.out_of_range(n.min, n.max, &expected, out);
            }
            SpecKind::Str(s) => {
                for (bad, expected) in self.bad_strings(s) {
                    out.push(
                        bad.prop_map(move |t| {
                            let found = found_string(&expected, &t);
                            Bad::here(JsValue::from(t), &*expected, found)
                        })
                        .boxed(),
                    );
                }
            }
            SpecKind::Values(values) => {
                // Same-kind values not in the set (other kinds are covered
                // by `mismatch`).
                let values = Arc::clone(values);
                let expected: Arc<str> = describe(node).into();
                let kinds = kinds(node, 0);
                let candidates: Vec<Values> = EACH_KIND
                    .iter()
                    .filter(|k| kinds.has(**k) && !(**k == Kinds::NULL && null_ok))
                    .map(|k| match *k {
                        Kinds::INT => ints(-1000, 1000).prop_map(JsValue::Int).boxed(),
                        Kinds::FLOAT => finite().prop_map(JsValue::Float).boxed(),
                        k => of_kind(k, self.sizes),
                    })
                    .collect();
                if !candidates.is_empty() {
                    let outside = Union::new(candidates).boxed();
                    let vs = Arc::clone(&values);
                    if let Some(s) = filtered(outside, "not in the set", move |v| !vs.contains(v)) {
                        out.push(
                            s.prop_map(move |v| {
                                let found = show(&v);
                                Bad::here(v, &*expected, found)
                            })
                            .boxed(),
                        );
                    }
                }
            }
            SpecKind::Array(a) => self.bad_arrays(node, a, depth, &mut breaks),
            SpecKind::Tuple(t) => self.bad_tuples(node, t, depth, &mut breaks),
            SpecKind::Object(o) => self.bad_objects(o, depth, &mut breaks),
            SpecKind::Map(m) => self.bad_maps(node, m, depth, &mut breaks),
            SpecKind::Any
            | SpecKind::Null
            | SpecKind::Bool
            | SpecKind::OneOf(_)
            | SpecKind::Ref(_) => {}
        }
        breaks
    }

    /// Floats past either bound.
    fn out_of_range(
        &self,
        min: Bound<f64>,
        max: Bound<f64>,
        expected: &Arc<str>,
        out: &mut Vec<Bads>,
    ) {
        let mut push = |s: BoxedStrategy<f64>| {
            let expected = Arc::clone(expected);
            out.push(
                s.prop_map(move |x| {
                    let v = JsValue::Float(x);
                    let found = show(&v);
                    Bad::here(v, &*expected, found)
                })
                .boxed(),
            );
        };
        // The largest float below the lower bound, and the smallest above
        // the upper one, when they are finite.
        let below = match min {
            Bound::Included(x) => Some(x.next_down()),
            Bound::Excluded(x) => Some(x),
            Bound::Unbounded => None,
        };
        if let Some(b) = below.filter(|b| b.is_finite()) {
            push(floats_in(f64::MIN, b));
        }
        let above = match max {
            Bound::Included(x) => Some(x.next_up()),
            Bound::Excluded(x) => Some(x),
            Bound::Unbounded => None,
        };
        if let Some(a) = above.filter(|a| a.is_finite()) {
            push(floats_in(a, f64::MAX));
        }
    }

    /// Strings that break a string spec once, with what was expected.
    fn bad_strings(&self, s: &StrSpec) -> Vec<(BoxedStrategy<String>, Arc<str>)> {
        let strings = Strings::of(s, self.sizes);
        let length: Arc<str> = length_expected(s).into();
        let mut out = Vec::new();
        for bad in [strings.short, strings.long].into_iter().flatten() {
            out.push((bad, Arc::clone(&length)));
        }
        if let (Some(bad), Some(re)) = (strings.unmatched, &s.pattern) {
            out.push((bad, format!("string matching /{}/", re.as_str()).into()));
        }
        out
    }

    fn bad_arrays(
        &self,
        node: &Node,
        a: &super::model::ArraySpec,
        depth: u32,
        breaks: &mut Breaks,
    ) {
        let Ok(items) = self.valid(a.items.node(), depth) else {
            return;
        };
        let out = &mut breaks.here;
        let expected: Arc<str> = describe(node).into();
        let hi = self.upper(a.min_len, a.max_len);
        let mut lengths = Vec::new();
        if a.min_len > 0 {
            lengths.push((a.min_len.saturating_sub(1 + self.sizes.len), a.min_len - 1));
        }
        if let Some(m) = a.max_len.and_then(|m| m.checked_add(1)) {
            lengths.push((m, m.saturating_add(2)));
        }
        for (lo, hi) in lengths {
            if let Some(s) = self.arrays(items.clone(), lo, hi, a.unique) {
                let expected = Arc::clone(&expected);
                out.push(
                    s.prop_map(move |arr| {
                        let found = show_array_len(arr.len());
                        Bad::here(JsValue::Array(arr), &*expected, found)
                    })
                    .boxed(),
                );
            }
        }
        if a.unique
            && let Some(s) = self.arrays(items.clone(), a.min_len.max(2), hi, true)
        {
            out.push(
                (s, any::<Index>(), any::<Index>())
                    .prop_map(|(arr, j, i)| {
                        let j = 1 + j.index(arr.len() - 1);
                        let i = i.index(j);
                        let copy = arr.get(i).cloned().unwrap_or_default();
                        let bad = arr.set(j, copy);
                        let dup = Bad::here(
                            JsValue::Null,
                            "unique items",
                            format!("a duplicate of item {i}"),
                        );
                        dup.within(Segment::Index(j), JsValue::Array(bad))
                    })
                    .boxed(),
            );
        }
        // An element that breaks the item spec.
        let children = self.invalid(a.items.node(), depth, false);
        if children.is_empty() {
            return;
        }
        if a.max_len == Some(0) {
            return;
        }
        if let Some(s) = self.arrays(items, a.min_len.max(1), hi.max(1), a.unique) {
            let unique = a.unique;
            breaks.nest(children.map(|child| {
                (s.clone(), child, any::<Index>())
                    .prop_filter_map("the element equals no other", move |(arr, bad, i)| {
                        let i = i.index(arr.len());
                        if unique
                            && arr
                                .iter()
                                .enumerate()
                                .any(|(k, x)| k != i && *x == bad.value)
                        {
                            return None;
                        }
                        let container = JsValue::Array(arr.set(i, bad.value.clone()));
                        Some(bad.within(Segment::Index(i), container))
                    })
                    .boxed()
            }));
        }
    }

    fn bad_tuples(
        &self,
        node: &Node,
        t: &super::model::TupleSpec,
        depth: u32,
        breaks: &mut Breaks,
    ) {
        let Ok(items) = t
            .items
            .iter()
            .map(|s| self.valid(s.node(), depth))
            .collect::<Result<Vec<_>, _>>()
        else {
            return;
        };
        let tuples = items
            .prop_map(|v| v.into_iter().collect::<JsArray>())
            .boxed();
        let expected: Arc<str> = describe(node).into();
        if !t.items.is_empty() {
            let expected = Arc::clone(&expected);
            breaks.here.push(
                tuples
                    .clone()
                    .prop_map(move |mut arr| {
                        arr.pop();
                        let found = show_array_len(arr.len());
                        Bad::here(JsValue::Array(arr), &*expected, found)
                    })
                    .boxed(),
            );
        }
        let small = self.sizes.max_depth(1).max_len(2);
        breaks.here.push(
            (tuples.clone(), any_value(small))
                .prop_map(move |(arr, extra)| {
                    let arr = arr.appended(extra);
                    let found = show_array_len(arr.len());
                    Bad::here(JsValue::Array(arr), &*expected, found)
                })
                .boxed(),
        );
        for (i, s) in t.items.iter().enumerate() {
            let children = self.invalid(s.node(), depth, false);
            breaks.nest(children.map(|child| {
                (tuples.clone(), child)
                    .prop_map(move |(arr, bad)| {
                        let container = JsValue::Array(arr.set(i, bad.value.clone()));
                        bad.within(Segment::Index(i), container)
                    })
                    .boxed()
            }));
        }
    }

    fn bad_objects(&self, o: &super::model::ObjSpec, depth: u32, breaks: &mut Breaks) {
        let Ok(objects) = self.objects(o, depth) else {
            return;
        };
        for f in &o.fields {
            let key = Arc::clone(&f.key);
            // The member's location: its value's violations, and its
            // absence when it is required.
            let mut member = self.invalid(f.spec.node(), depth, false).map(|child| {
                let key = Arc::clone(&key);
                (objects.clone(), child)
                    .prop_map(move |(obj, bad)| {
                        let container =
                            JsValue::Object(obj.set(Arc::clone(&key), bad.value.clone()));
                        bad.within(Segment::Key(Arc::clone(&key)), container)
                    })
                    .boxed()
            });
            if f.required {
                let expected: Arc<str> = describe(f.spec.node()).into();
                let key = Arc::clone(&key);
                member.here.push(
                    objects
                        .clone()
                        .prop_map(move |obj| {
                            let bad = Bad::here(JsValue::Null, &*expected, "nothing");
                            bad.within(
                                Segment::Key(Arc::clone(&key)),
                                JsValue::Object(obj.without(&key)),
                            )
                        })
                        .boxed(),
                );
            }
            breaks.nest(member);
        }
        if o.strict {
            let named: Arc<[Arc<str>]> = o.fields.iter().map(|f| Arc::clone(&f.key)).collect();
            let small = self.sizes.max_depth(1).max_len(2);
            breaks.here.push(
                (objects, text(0, self.sizes.str_len), any_value(small))
                    .prop_map(move |(obj, mut key, v)| {
                        while named.binary_search_by(|n| (**n).cmp(key.as_str())).is_ok() {
                            key.push('_');
                        }
                        let key: Arc<str> = key.into();
                        let found = show(&v);
                        let bad =
                            Bad::here(v.clone(), "no such member (the object is strict)", found);
                        bad.within(
                            Segment::Key(Arc::clone(&key)),
                            JsValue::Object(obj.set(key, v)),
                        )
                    })
                    .boxed(),
            );
        }
    }

    fn bad_maps(&self, node: &Node, m: &super::model::MapSpec, depth: u32, breaks: &mut Breaks) {
        let (Some(keys), Ok(values)) = (
            self.keys(m.keys.node(), depth),
            self.valid(m.values.node(), depth),
        ) else {
            return;
        };
        let expected: Arc<str> = describe(node).into();
        let hi = self.upper(m.min_len, m.max_len);
        let mut lengths = Vec::new();
        if m.min_len > 0 {
            lengths.push((m.min_len.saturating_sub(1 + self.sizes.len), m.min_len - 1));
        }
        if let Some(max) = m.max_len.and_then(|x| x.checked_add(1)) {
            lengths.push((max, max.saturating_add(2)));
        }
        for (lo, hi) in lengths {
            if let Some(s) = self.maps(keys.clone(), values.clone(), lo, hi) {
                let expected = Arc::clone(&expected);
                breaks.here.push(
                    s.prop_map(move |obj| {
                        let found = show_obj_len(obj.len());
                        Bad::here(JsValue::Object(obj), &*expected, found)
                    })
                    .boxed(),
                );
            }
        }
        // Non-empty maps, to replace one member of.
        if m.max_len == Some(0) {
            return;
        }
        let Some(maps) = self.maps(keys, values, m.min_len.max(1), hi.max(1)) else {
            return;
        };
        {
            // The keys are a location of their own.
            let mut keys = Breaks::default();
            for bad in self.bad_keys(m.keys.node(), depth) {
                keys.here.push(
                    (maps.clone(), bad, any::<Index>())
                        .prop_filter_map(
                            "a map member to replace",
                            |(obj, (key, expected, found), i)| {
                                let (old, v) = obj.iter().nth(i.index(obj.len()))?;
                                let rest = obj.without(old);
                                let key: Arc<str> = key.into();
                                let container =
                                    JsValue::Object(rest.set(Arc::clone(&key), v.clone()));
                                let bad = Bad::here(JsValue::Null, expected, found);
                                Some(bad.within(Segment::Key(key), container))
                            },
                        )
                        .boxed(),
                );
            }
            breaks.nest(keys);
        }
        let children = self.invalid(m.values.node(), depth, false);
        breaks.nest(children.map(|child| {
            (maps.clone(), child, any::<Index>())
                .prop_filter_map("a map member to replace", |(obj, bad, i)| {
                    let key = obj.keys().nth(i.index(obj.len()))?.to_owned();
                    let key: Arc<str> = key.into();
                    let container = JsValue::Object(obj.set(Arc::clone(&key), bad.value.clone()));
                    Some(bad.within(Segment::Key(key), container))
                })
                .boxed()
        }));
    }

    /// Keys that break a map's key spec, each with what was expected and
    /// what was found.
    fn bad_keys(&self, node: &Node, depth: u32) -> Vec<BoxedStrategy<(String, String, String)>> {
        let mut out = Vec::new();
        let resolved;
        let node = match &node.kind {
            SpecKind::Ref(target) => match target.upgrade() {
                Some(def) if depth > 0 => {
                    resolved = def;
                    &*resolved
                }
                _ => return out,
            },
            _ => node,
        };
        let any_text = text(0, self.sizes.str_len);
        let expected = describe(node);
        if !kinds(node, KIND_DEPTH).has(Kinds::STR) {
            out.push(
                any_text
                    .prop_map(move |k| {
                        let found = show_str(&k);
                        (k, expected.clone(), found)
                    })
                    .boxed(),
            );
        } else {
            match &node.kind {
                SpecKind::Str(s) => {
                    for (bad, expected) in self.bad_strings(s) {
                        out.push(
                            bad.prop_map(move |k| {
                                let found = found_string(&expected, &k);
                                (k, expected.to_string(), found)
                            })
                            .boxed(),
                        );
                    }
                }
                SpecKind::Values(values) => {
                    let values = Arc::clone(values);
                    let not_in = move |t: &String| !values.contains(&JsValue::from(t.as_str()));
                    if let Some(s) = filtered(any_text, "not in the set", not_in) {
                        out.push(
                            s.prop_map(move |k| {
                                let found = show_str(&k);
                                (k, expected.clone(), found)
                            })
                            .boxed(),
                        );
                    }
                }
                _ => {}
            }
        }
        let unchecked = Node {
            checks: Vec::new(),
            ..node.clone()
        };
        if !node.checks.is_empty()
            && let Some(valid) = self.keys(&unchecked, depth)
        {
            let checks = node.checks.clone();
            let fails = move |k: &String| {
                let v = JsValue::from(k.as_str());
                checks.iter().any(|c| !(c.test)(&v))
            };
            if let Some(s) = filtered(valid, "fails a user check", fails) {
                let checks = node.checks.clone();
                out.push(
                    s.prop_filter_map("fails a user check", move |k| {
                        let message = first_failing(&checks, &JsValue::from(k.as_str()))?;
                        let found = show_str(&k);
                        Some((k, message.to_string(), found))
                    })
                    .boxed(),
                );
            }
        }
        out
    }
}

/// What a string that breaks a string spec is shown as: its length when
/// the length was expected, else the string.
fn found_string(expected: &str, s: &str) -> String {
    if expected.starts_with("string matching") {
        show_str(s)
    } else {
        show_str_len(s.chars().count())
    }
}
