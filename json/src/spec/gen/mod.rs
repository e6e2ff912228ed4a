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
use crate::number::JsInt;
use crate::path::{JsPath, Segment};
use crate::tree::{JsArray, JsObj, JsValue};

mod arbitrary;
mod invalid;
mod strings;
mod valid;

use self::arbitrary::*;
pub use self::arbitrary::{any_array, any_object, any_value};
use self::strings::*;

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

// ---- building -----------------------------------------------------------------

type Values = BoxedStrategy<JsValue>;
type Bads = BoxedStrategy<Bad>;

/// A value that breaks its spec once, while it is being built: the path is
/// kept innermost segment first, so a container prepends its own in O(1).
#[derive(Clone, Debug, PartialEq)]
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
}
