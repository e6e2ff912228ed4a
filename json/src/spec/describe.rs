//! The words of violations: what a spec node expects and how a value that
//! was found is shown, shared by `validate` and the validating parse and
//! decode so that they report the same text.
//!
//! Contract: descriptions are one line and shallow (a container is named,
//! its contents are not spelt out), and a found value is shown in at most
//! about [`SHOWN`] characters.

use std::fmt;
use std::fmt::Write as _;
use std::ops::Bound;

use super::model::{Node, Spec, SpecKind};
use crate::tree::JsValue;

/// How many characters of a string a found value shows.
const SHOWN: usize = 40;

/// How deep descriptions follow `one_of` alternatives and references.
const DEPTH: u8 = 2;

/// What `node` accepts, in words.
pub(crate) fn describe(node: &Node) -> String {
    let mut out = String::new();
    describe_into(node, &mut out, DEPTH);
    out
}

fn describe_into(node: &Node, out: &mut String, depth: u8) {
    if node.nullable {
        out.push_str("null or ");
    }
    if let Some(name) = &node.name {
        out.push_str(name);
        return;
    }
    kind_into(&node.kind, out, depth);
}

fn kind_into(kind: &SpecKind, out: &mut String, depth: u8) {
    match kind {
        SpecKind::Any => out.push_str("any value"),
        SpecKind::Null => out.push_str("null"),
        SpecKind::Bool => out.push_str("boolean"),
        SpecKind::Str(s) => {
            out.push_str("string");
            if s.min_len > 0 || s.max_len.is_some() {
                out.push_str(" of ");
                count_into(s.min_len, s.max_len, "character", out);
            }
            if let Some(re) = &s.pattern {
                let _ = write!(out, " matching /{}/", re.as_str());
            }
        }
        SpecKind::Int(i) => {
            out.push_str("integer");
            out.push_str(&int_range(i.min, i.max));
        }
        SpecKind::Float(f) => {
            out.push_str("float");
            out.push_str(&float_range(f.min, f.max));
        }
        SpecKind::Number(n) => {
            out.push_str("number");
            out.push_str(&float_range(n.min, n.max));
        }
        SpecKind::Values(values) => {
            out.push_str("one of ");
            values_into(values, out);
        }
        SpecKind::Array(a) => {
            out.push_str("array");
            if a.min_len > 0 || a.max_len.is_some() {
                out.push_str(" of ");
                count_into(a.min_len, a.max_len, "item", out);
            }
            if a.unique {
                out.push_str(", unique");
            }
        }
        SpecKind::Tuple(t) => {
            let _ = write!(out, "array of exactly {}", plural(t.items.len(), "item"));
        }
        SpecKind::Object(_) => out.push_str("object"),
        SpecKind::Map(m) => {
            out.push_str("object");
            if m.min_len > 0 || m.max_len.is_some() {
                out.push_str(" of ");
                count_into(m.min_len, m.max_len, "member", out);
            }
        }
        SpecKind::OneOf(alts) => {
            if depth == 0 || alts.is_empty() {
                out.push_str(if alts.is_empty() {
                    "one of no alternatives"
                } else {
                    "one of several alternatives"
                });
                return;
            }
            out.push_str("one of: ");
            for (i, alt) in alts.iter().enumerate() {
                if i > 0 {
                    out.push_str(" | ");
                }
                describe_into(alt.node(), out, depth - 1);
            }
        }
        SpecKind::Ref(target) => match target.upgrade() {
            Some(node) if depth > 0 => describe_into(&node, out, depth - 1),
            Some(_) => out.push_str("the recursive spec"),
            None => out.push_str(DANGLING),
        },
    }
}

/// What a reference whose recursive spec was dropped expects.
pub(crate) const DANGLING: &str = "a recursive spec that no longer exists";

/// What a reference reached again without entering a container expects.
pub(crate) const LEFT_RECURSIVE: &str = "a recursive spec that nests before it repeats";

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn count_into(min: usize, max: Option<usize>, what: &str, out: &mut String) {
    let _ = match max {
        Some(max) if max == min => write!(out, "{}", plural(min, what)),
        Some(max) if min == 0 => write!(out, "at most {}", plural(max, what)),
        Some(max) => write!(out, "{min}..={max} {what}s"),
        None => write!(out, "at least {}", plural(min, what)),
    };
}

/// `" in 1..=100"`, `" >= 0"`, `" <= 9"` or nothing.
pub(crate) fn int_range(min: Option<i128>, max: Option<i128>) -> String {
    match (min, max) {
        (Some(a), Some(b)) => format!(" in {a}..={b}"),
        (Some(a), None) => format!(" >= {a}"),
        (None, Some(b)) => format!(" <= {b}"),
        (None, None) => String::new(),
    }
}

/// Interval notation: `" in [0, 1)"`, `" >= 0"`, or nothing.
pub(crate) fn float_range(min: Bound<f64>, max: Bound<f64>) -> String {
    match (min, max) {
        (Bound::Unbounded, Bound::Unbounded) => String::new(),
        (Bound::Included(a), Bound::Unbounded) => format!(" >= {a:?}"),
        (Bound::Excluded(a), Bound::Unbounded) => format!(" > {a:?}"),
        (Bound::Unbounded, Bound::Included(b)) => format!(" <= {b:?}"),
        (Bound::Unbounded, Bound::Excluded(b)) => format!(" < {b:?}"),
        (lo, hi) => {
            let (open, a) = match lo {
                Bound::Included(a) => ('[', a),
                Bound::Excluded(a) => ('(', a),
                Bound::Unbounded => unreachable!("handled above"),
            };
            let (close, b) = match hi {
                Bound::Included(b) => (']', b),
                Bound::Excluded(b) => (')', b),
                Bound::Unbounded => unreachable!("handled above"),
            };
            format!(" in {open}{a:?}, {b:?}{close}")
        }
    }
}

fn values_into(values: &[JsValue], out: &mut String) {
    const MAX_LISTED: usize = 8;
    for (i, v) in values.iter().take(MAX_LISTED).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        match v {
            // An expected container is spelled out (cut like a long
            // string): its size alone would not say which one.
            JsValue::Array(_) | JsValue::Object(_) => {
                let text = v.to_string();
                match text.char_indices().nth(SHOWN) {
                    None => out.push_str(&text),
                    Some((cut, _)) => {
                        out.push_str(&text[..cut]);
                        out.push('…');
                    }
                }
            }
            _ => out.push_str(&show(v)),
        }
    }
    if values.len() > MAX_LISTED {
        let _ = write!(out, ", ... ({} values)", values.len());
    }
    if values.is_empty() {
        out.push_str("no values");
    }
}

/// A found value, shown briefly: scalars as JSON text (long strings cut),
/// containers by their size.
pub(crate) fn show(v: &JsValue) -> String {
    match v {
        JsValue::Str(s) => show_str(s),
        JsValue::Array(a) => format!("an array of {}", plural(a.len(), "item")),
        JsValue::Object(o) => format!("an object of {}", plural(o.len(), "member")),
        scalar => scalar.to_string(),
    }
}

/// A found string as JSON text, cut after [`SHOWN`] characters.
pub(crate) fn show_str(s: &str) -> String {
    match s.char_indices().nth(SHOWN) {
        None => JsValue::from(s).to_string(),
        Some((cut, _)) => {
            let mut t = JsValue::from(&s[..cut]).to_string();
            t.insert(t.len() - 1, '…');
            t
        }
    }
}

/// `"a string of 3 characters"`.
pub(crate) fn show_str_len(n: usize) -> String {
    format!("a string of {}", plural(n, "character"))
}

/// `"an array of 3 items"`.
pub(crate) fn show_array_len(n: usize) -> String {
    format!("an array of {}", plural(n, "item"))
}

/// `"an object of 3 members"`.
pub(crate) fn show_obj_len(n: usize) -> String {
    format!("an object of {}", plural(n, "member"))
}

impl fmt::Debug for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Spec({})", describe(self.node()))
    }
}

/// What the spec accepts, in words (`integer in 1..=100`).
impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&describe(self.node()))
    }
}
