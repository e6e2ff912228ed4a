//! The checks of one spec node against one value, without descending into
//! containers: shared by `validate` and by the validating parse and decode,
//! so that all three accept the same values and word their violations the
//! same way.
//!
//! Contract: a check returns `Err(Miss)` with the expected/found text of the
//! first constraint the value breaks; the caller adds where it happened.
//! Nothing here allocates unless a check fails.

use std::cmp::Ordering;
use std::ops::Bound;

use super::describe::{self, describe, show, show_str, show_str_len};
use super::model::{Check, IntSpec, Node, SpecKind, StrSpec};
use crate::number::JsInt;
use crate::tree::JsValue;

/// A broken constraint: what was expected and what was found.
#[derive(Debug)]
pub(crate) struct Miss {
    pub(crate) expected: String,
    pub(crate) found: String,
}

impl Miss {
    #[cold]
    pub(crate) fn new(expected: impl Into<String>, found: impl Into<String>) -> Miss {
        Miss {
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// The value is not of a kind `node` accepts.
    #[cold]
    pub(crate) fn kind(node: &Node, found: String) -> Miss {
        Miss::new(describe(node), found)
    }
}

/// A scalar as the checks see it; strings are borrowed so that the parser
/// can check one before allocating it.
#[derive(Clone, Copy)]
pub(crate) enum Scalar<'a> {
    Null,
    Bool(bool),
    Int(JsInt),
    Float(f64),
    Str(&'a str),
}

impl Scalar<'_> {
    #[cold]
    pub(crate) fn show(self) -> String {
        match self {
            Scalar::Null => "null".into(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => show(&JsValue::Float(f)),
            Scalar::Str(s) => show_str(s),
        }
    }

    pub(crate) fn to_value(self) -> JsValue {
        match self {
            Scalar::Null => JsValue::Null,
            Scalar::Bool(b) => JsValue::Bool(b),
            Scalar::Int(i) => JsValue::Int(i),
            Scalar::Float(f) => JsValue::Float(f),
            Scalar::Str(s) => JsValue::from(s),
        }
    }
}

/// Checks a scalar against a node whose kind is not a reference or
/// `one_of` (those need the caller's recursion). Container kinds reject
/// every scalar. The node's user checks are not run.
#[inline]
pub(crate) fn scalar(node: &Node, v: Scalar<'_>) -> Result<(), Miss> {
    match (&node.kind, v) {
        (_, Scalar::Null) if node.nullable => Ok(()),
        (SpecKind::Any, _) | (SpecKind::Null, Scalar::Null) | (SpecKind::Bool, Scalar::Bool(_)) => {
            Ok(())
        }
        (SpecKind::Str(s), Scalar::Str(text)) => string(s, text),
        (SpecKind::Int(i), Scalar::Int(n)) => int(i, n),
        (SpecKind::Float(f), Scalar::Float(x)) => in_bounds(f.min, f.max, |b| cmp_float(x, b))
            .map_err(|()| {
                Miss::new(
                    format!("float{}", describe::float_range(f.min, f.max)),
                    v.show(),
                )
            }),
        (SpecKind::Number(n), Scalar::Float(x)) => {
            number_miss(n.min, n.max, |b| cmp_float(x, b), v)
        }
        (SpecKind::Number(n), Scalar::Int(i)) => {
            number_miss(n.min, n.max, |b| cmp_int_float(i, b), v)
        }
        (SpecKind::Values(values), _) => {
            let found = match v {
                Scalar::Str(s) => values
                    .iter()
                    .any(|x| matches!(x, JsValue::Str(y) if **y == *s)),
                _ => {
                    let value = v.to_value();
                    values.contains(&value)
                }
            };
            if found {
                Ok(())
            } else {
                Err(Miss::kind(node, v.show()))
            }
        }
        _ => Err(Miss::kind(node, v.show())),
    }
}

/// Whether `x` lies within the bounds (NaN never does).
#[inline(always)]
pub(crate) fn float_in(min: Bound<f64>, max: Bound<f64>, x: f64) -> bool {
    let lo = match min {
        Bound::Unbounded => true,
        Bound::Included(b) => x >= b,
        Bound::Excluded(b) => x > b,
    };
    let hi = match max {
        Bound::Unbounded => true,
        Bound::Included(b) => x <= b,
        Bound::Excluded(b) => x < b,
    };
    lo && hi && !x.is_nan()
}

/// Whether `n` lies within the inclusive bounds.
#[inline(always)]
pub(crate) fn int_in(spec: &IntSpec, n: JsInt) -> bool {
    let v = n.as_i128();
    !(spec.min.is_some_and(|m| v < m) || spec.max.is_some_and(|m| v > m))
}

#[inline(always)]
fn number_miss(
    min: Bound<f64>,
    max: Bound<f64>,
    cmp: impl Fn(f64) -> Option<Ordering>,
    v: Scalar<'_>,
) -> Result<(), Miss> {
    in_bounds(min, max, cmp).map_err(|()| {
        Miss::new(
            format!("number{}", describe::float_range(min, max)),
            v.show(),
        )
    })
}

/// Length and pattern of a string.
#[inline]
pub(crate) fn string(s: &StrSpec, text: &str) -> Result<(), Miss> {
    // Characters are at most bytes: count them only when the byte length
    // does not already settle the question.
    let counted = s.min_len > 0 || s.max_len.is_some_and(|max| text.len() > max);
    if counted {
        let n = text.chars().count();
        if n < s.min_len || s.max_len.is_some_and(|max| n > max) {
            return Err(Miss::new(
                describe(
                    &StrSpec {
                        pattern: None,
                        ..s.clone()
                    }
                    .into_node(),
                ),
                show_str_len(n),
            ));
        }
    }
    match &s.pattern {
        Some(re) if !re.is_match(text) => Err(Miss::new(
            format!("string matching /{}/", re.as_str()),
            show_str(text),
        )),
        _ => Ok(()),
    }
}

impl StrSpec {
    fn into_node(self) -> Node {
        Node {
            kind: SpecKind::Str(self),
            nullable: false,
            checks: Vec::new(),
            name: None,
        }
    }
}

#[inline]
fn int(spec: &IntSpec, n: JsInt) -> Result<(), Miss> {
    let v = n.as_i128();
    if spec.min.is_some_and(|m| v < m) || spec.max.is_some_and(|m| v > m) {
        return Err(Miss::new(
            format!("integer{}", describe::int_range(spec.min, spec.max)),
            n.to_string(),
        ));
    }
    Ok(())
}

/// Whether the value lies within the bounds; `cmp(b)` compares the value
/// with bound `b` (`None` when either is NaN, which fails the bound).
#[inline(always)]
fn in_bounds(
    min: Bound<f64>,
    max: Bound<f64>,
    cmp: impl Fn(f64) -> Option<Ordering>,
) -> Result<(), ()> {
    let lo = match min {
        Bound::Unbounded => true,
        Bound::Included(b) => matches!(cmp(b), Some(Ordering::Greater | Ordering::Equal)),
        Bound::Excluded(b) => matches!(cmp(b), Some(Ordering::Greater)),
    };
    let hi = match max {
        Bound::Unbounded => true,
        Bound::Included(b) => matches!(cmp(b), Some(Ordering::Less | Ordering::Equal)),
        Bound::Excluded(b) => matches!(cmp(b), Some(Ordering::Less)),
    };
    if lo && hi { Ok(()) } else { Err(()) }
}

#[inline]
fn cmp_float(x: f64, b: f64) -> Option<Ordering> {
    x.partial_cmp(&b)
}

/// Compares an integer with a float exactly (no rounding through `f64`).
fn cmp_int_float(i: JsInt, b: f64) -> Option<Ordering> {
    if b.is_nan() {
        return None;
    }
    // Every `JsInt` lies strictly within ±2^127.
    const LIMIT: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if b >= LIMIT {
        return Some(Ordering::Less);
    }
    if b <= -LIMIT {
        return Some(Ordering::Greater);
    }
    let whole = b.trunc();
    // `whole` is integral and within ±2^127, so the cast is exact.
    #[allow(clippy::cast_possible_truncation)]
    let w = whole as i128;
    match i.as_i128().cmp(&w) {
        Ordering::Equal => 0.0f64.partial_cmp(&(b - whole)),
        other => Some(other),
    }
}

/// Runs the user checks of `node` on `v`; the first that fails is the miss.
#[inline]
pub(crate) fn user_checks(checks: &[Check], v: &JsValue) -> Result<(), Miss> {
    match checks.iter().find(|c| !(c.test)(v)) {
        None => Ok(()),
        Some(c) => Err(Miss::new(&*c.message, show(v))),
    }
}

/// A strict object's member that its spec does not name.
#[cold]
pub(crate) fn unexpected(v: &JsValue) -> Miss {
    Miss::new("no such member (the object is strict)", show(v))
}

/// A required member that is absent.
#[cold]
pub(crate) fn missing(spec: &Node) -> Miss {
    Miss::new(describe(spec), "nothing")
}

/// An element equal to an earlier one, in an array that must be unique.
#[cold]
pub(crate) fn duplicate(first: usize) -> Miss {
    Miss::new("unique items", format!("a duplicate of item {first}"))
}
