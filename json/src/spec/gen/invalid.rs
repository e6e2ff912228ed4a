//! Values that break a spec in exactly one place, by location.

use super::*;

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

fn first_failing(checks: &[Check], v: &JsValue) -> Option<Arc<str>> {
    checks
        .iter()
        .find(|c| !(c.test)(v))
        .map(|c| Arc::clone(&c.message))
}

impl Gen {
    /// Values that break `node` once, each with its violation, by
    /// location. `null_ok`: a `null` here is accepted by an enclosing
    /// reference.
    pub(super) fn invalid(&self, node: &Node, depth: u32, null_ok: bool) -> Breaks {
        let null_ok = null_ok || node.nullable;
        let mut out = match &node.kind {
            SpecKind::Ref(target) => match target.upgrade() {
                Some(def) if depth > 0 => self.invalid(&def, depth - 1, null_ok),
                _ => Breaks::default(),
            },
            _ => self.invalid_kind(node, depth, null_ok),
        };
        if !node.checks.is_empty() {
            // A violation further in leaves this value otherwise valid: it
            // must still pass this node's own checks, or it would break
            // the spec twice.
            // (Sampled first, as for valid values: a check few random
            // containers pass picks from the samples that did.)
            out.inner = std::mem::take(&mut out.inner)
                .into_iter()
                .filter_map(|(locations, s)| {
                    let checks = node.checks.clone();
                    let passes = move |bad: &Bad| checks.iter().all(|c| (c.test)(&bad.value));
                    filtered(s, "passes the enclosing user checks", passes).map(|s| (locations, s))
                })
                .collect();
        }
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
        a: &crate::spec::model::ArraySpec,
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
        t: &crate::spec::model::TupleSpec,
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

    fn bad_objects(&self, o: &crate::spec::model::ObjSpec, depth: u32, breaks: &mut Breaks) {
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

    fn bad_maps(
        &self,
        node: &Node,
        m: &crate::spec::model::MapSpec,
        depth: u32,
        breaks: &mut Breaks,
    ) {
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
