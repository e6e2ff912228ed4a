//! Strings for a string spec: generated from its pattern, and the ones
//! that break its length or its pattern.

use super::*;

/// Strings for a string spec: valid ones, and each kind of violation.
pub(super) struct Strings {
    pub(super) valid: Result<BoxedStrategy<String>, GenError>,
    /// Too short or too long (and matching the pattern, if any).
    pub(super) short: Option<BoxedStrategy<String>>,
    pub(super) long: Option<BoxedStrategy<String>>,
    /// Of a valid length, not matching the pattern.
    pub(super) unmatched: Option<BoxedStrategy<String>>,
}

pub(super) fn pool(mut v: Vec<String>) -> Option<BoxedStrategy<String>> {
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
    pub(super) fn of(s: &StrSpec, sizes: Sizes) -> Strings {
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

pub(super) fn str_node(s: StrSpec) -> Node {
    Node {
        kind: SpecKind::Str(s),
        nullable: false,
        checks: Vec::new(),
        name: None,
    }
}

/// What a string of the wrong length was expected to be: the spec's length
/// without its pattern.
pub(super) fn length_expected(s: &StrSpec) -> String {
    describe(&str_node(StrSpec {
        pattern: None,
        ..s.clone()
    }))
}

/// What a string that breaks a string spec is shown as: its length when
/// the length was expected, else the string.
pub(super) fn found_string(expected: &str, s: &str) -> String {
    if expected.starts_with("string matching") {
        show_str(s)
    } else {
        show_str_len(s.chars().count())
    }
}
