//! `Spec::parse`: JSON text checked against a spec in the pass that builds
//! the value.
//!
//! Contract: the spec node travels with serde's recursive descent as the
//! `DeserializeSeed`, beside the scratch stacks of the plain parser
//! (`text.rs`); each value is checked as soon as it is complete, before it
//! is stored in its parent. The first violation is parked in the context
//! and serde is made to stop with a marker error; while the error unwinds,
//! each container adds its key or index to the violation's path (innermost
//! first), so the happy path never tracks where it is. Values the spec does
//! not describe (under `any`, a lenient object's other members) are built
//! by the plain parser; so is a value a `one_of` must see whole, which is
//! then checked as `validate` would.

use std::fmt;
use std::sync::Arc;

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::Violation;
use super::check::{self, Miss, Scalar};
use super::describe::{show, show_array_len, show_obj_len};
use super::model::{MapSpec, Node, Spec, SpecKind};
use super::validate::{self, Hops};
use crate::number::JsInt;
use crate::path::JsPath;
use crate::path::Segment;
use crate::text::{KeySeed, Stacks, ValueSeed, ValueVisitor};
use crate::tree::{JsArray, JsObj, JsValue};

/// The text of the marker error that stops serde at a violation; never
/// shown, as the parked violation replaces it.
const MARK: &str = "spec violation";

/// A violation on its way out: the path grows as the error unwinds.
struct Pending {
    rev: Vec<Segment>,
    miss: Miss,
}

/// The state of one validating parse or decode.
#[derive(Default)]
pub(crate) struct Ctx {
    pub(crate) stacks: Stacks,
    pending: Option<Box<Pending>>,
}

impl Ctx {
    /// Parks `miss` (at the current value) and returns the marker error.
    #[cold]
    #[inline(never)]
    pub(crate) fn park(&mut self, miss: Miss) {
        self.pending = Some(Box::new(Pending {
            rev: Vec::new(),
            miss,
        }));
    }

    /// Parks a violation found by `validate` below the current value.
    #[cold]
    #[inline(never)]
    pub(crate) fn park_violation(&mut self, v: Violation) {
        let rev = v.path().segments().iter().rev().cloned().collect();
        self.pending = Some(Box::new(Pending {
            rev,
            miss: Miss::new(v.expected(), v.found()),
        }));
    }

    #[cold]
    fn fail<E: de::Error>(&mut self, miss: Miss) -> E {
        self.park(miss);
        E::custom(MARK)
    }

    #[cold]
    fn fail_violation<E: de::Error>(&mut self, v: Violation) -> E {
        self.park_violation(v);
        E::custom(MARK)
    }

    /// Adds the enclosing member to a pending violation's path.
    #[cold]
    #[inline(never)]
    pub(crate) fn in_key(&mut self, key: &Arc<str>) {
        if let Some(p) = &mut self.pending {
            p.rev.push(Segment::Key(Arc::clone(key)));
        }
    }

    /// Adds the enclosing position to a pending violation's path.
    #[cold]
    #[inline(never)]
    pub(crate) fn in_index(&mut self, index: usize) {
        if let Some(p) = &mut self.pending {
            p.rev.push(Segment::Index(index));
        }
    }

    /// The pending violation, with its path from the root.
    pub(crate) fn take(&mut self) -> Option<Violation> {
        self.pending.take().map(|p| {
            let Pending { rev, miss } = *p;
            let path: JsPath = rev.into_iter().rev().collect();
            Violation::new(path, miss)
        })
    }
}

/// Which named fields of an object have been seen.
pub(crate) enum Seen {
    Small(u64),
    Large(Vec<bool>),
}

impl Seen {
    pub(crate) fn new(n: usize) -> Seen {
        if n <= 64 {
            Seen::Small(0)
        } else {
            Seen::Large(vec![false; n])
        }
    }

    /// Marks field `i`; returns whether it is new.
    #[inline]
    pub(crate) fn mark(&mut self, i: usize) -> bool {
        match self {
            Seen::Small(bits) => {
                let new = *bits & (1 << i) == 0;
                *bits |= 1 << i;
                new
            }
            Seen::Large(v) => !std::mem::replace(&mut v[i], true),
        }
    }

    pub(crate) fn has(&self, i: usize) -> bool {
        match self {
            Seen::Small(bits) => bits & (1 << i) != 0,
            Seen::Large(v) => v[i],
        }
    }
}

pub(crate) struct SpecSeed<'a, 'h> {
    pub(crate) node: &'a Node,
    pub(crate) ctx: &'a mut Ctx,
    pub(crate) hops: Option<&'h Hops<'h>>,
}

impl<'de> DeserializeSeed<'de> for SpecSeed<'_, '_> {
    type Value = JsValue;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<JsValue, D::Error> {
        d.deserialize_any(self)
    }
}

/// Runs the node's user checks on a value that passed the rest.
#[inline(always)]
fn finish<E: de::Error>(node: &Node, ctx: &mut Ctx, v: JsValue) -> Result<JsValue, E> {
    if node.checks.is_empty() {
        return Ok(v);
    }
    run_checks(node, ctx, v)
}

#[inline(never)]
fn run_checks<E: de::Error>(node: &Node, ctx: &mut Ctx, v: JsValue) -> Result<JsValue, E> {
    if node.nullable && v.is_null() {
        return Ok(v);
    }
    match check::user_checks(&node.checks, &v) {
        Ok(()) => Ok(v),
        Err(miss) => Err(ctx.fail(miss)),
    }
}

/// The value, built plainly, checked whole against `node` (for `one_of`).
fn whole<E: de::Error>(
    node: &Node,
    ctx: &mut Ctx,
    hops: Option<&Hops<'_>>,
    v: JsValue,
) -> Result<JsValue, E> {
    match validate::first(node, &v, hops) {
        None => Ok(v),
        Some(violation) => Err(ctx.fail_violation(violation)),
    }
}

impl SpecSeed<'_, '_> {
    /// An integer: the common case first, without the general dispatch.
    #[inline(always)]
    fn int<E: de::Error>(self, n: JsInt) -> Result<JsValue, E> {
        if let SpecKind::Int(spec) = &self.node.kind
            && check::int_in(spec, n)
        {
            return finish(self.node, self.ctx, JsValue::Int(n));
        }
        self.scalar(Scalar::Int(n))
    }

    #[inline]
    fn scalar<E: de::Error>(self, x: Scalar<'_>) -> Result<JsValue, E> {
        let SpecSeed { node, ctx, hops } = self;
        match &node.kind {
            SpecKind::Ref(target) => {
                if node.nullable && matches!(x, Scalar::Null) {
                    return Ok(JsValue::Null);
                }
                match validate::resolve(target, hops) {
                    Ok(def) => {
                        let h = Hops::push(hops, target);
                        let v = SpecSeed {
                            node: &def,
                            ctx: &mut *ctx,
                            hops: Some(&h),
                        }
                        .scalar(x)?;
                        finish(node, ctx, v)
                    }
                    Err(miss) => Err(ctx.fail(Miss::new(miss.expected, x.show()))),
                }
            }
            SpecKind::OneOf(_) => whole(node, ctx, hops, x.to_value()),
            _ => match check::scalar(node, x) {
                Ok(()) => finish(node, ctx, x.to_value()),
                Err(miss) => Err(ctx.fail(miss)),
            },
        }
    }

    /// A container the node does not describe as such: built plainly,
    /// then accepted (`any`), checked whole (`one_of`) or rejected.
    fn plain<E: de::Error>(self, v: JsValue) -> Result<JsValue, E> {
        let SpecSeed { node, ctx, hops } = self;
        match &node.kind {
            SpecKind::Any => finish(node, ctx, v),
            // A fixed set may hold arrays and objects: compared whole.
            SpecKind::OneOf(_) | SpecKind::Values(_) => whole(node, ctx, hops, v),
            _ => Err(ctx.fail(Miss::kind(node, show(&v)))),
        }
    }

    fn array<'de, A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsValue, A::Error> {
        let SpecSeed { node, ctx, hops } = self;
        let (items, tuple, min, max, unique) = match &node.kind {
            SpecKind::Array(a) => (
                Some(a.items.node()),
                &[][..],
                a.min_len,
                a.max_len,
                a.unique,
            ),
            SpecKind::Tuple(t) => {
                let n = t.items.len();
                (None, &t.items[..], n, Some(n), false)
            }
            SpecKind::Ref(target) => {
                let def = match validate::resolve(target, hops) {
                    Ok(def) => def,
                    Err(miss) => {
                        let v = ValueVisitor(&mut ctx.stacks).visit_seq(seq)?;
                        return Err(ctx.fail(Miss::new(miss.expected, show(&v))));
                    }
                };
                let h = Hops::push(hops, target);
                let v = SpecSeed {
                    node: &def,
                    ctx: &mut *ctx,
                    hops: Some(&h),
                }
                .array(seq)?;
                return finish(node, ctx, v);
            }
            _ => {
                let v = ValueVisitor(&mut ctx.stacks).visit_seq(seq)?;
                return SpecSeed { node, ctx, hops }.plain(v);
            }
        };
        let shape = Items { items, tuple, max };
        // As in the plain parser: up to four elements go from locals
        // straight into their allocation; longer arrays use the shared stack.
        let Some(a) = shape.next(&mut seq, node, ctx, 0)? else {
            return done(node, ctx, JsArray::new(), 0, min, unique);
        };
        let Some(b) = shape.next(&mut seq, node, ctx, 1)? else {
            return done(node, ctx, JsArray::from_array([a]), 1, min, unique);
        };
        let Some(c) = shape.next(&mut seq, node, ctx, 2)? else {
            return done(node, ctx, JsArray::from_array([a, b]), 2, min, unique);
        };
        let Some(d) = shape.next(&mut seq, node, ctx, 3)? else {
            return done(node, ctx, JsArray::from_array([a, b, c]), 3, min, unique);
        };
        let Some(e) = shape.next(&mut seq, node, ctx, 4)? else {
            return done(node, ctx, JsArray::from_array([a, b, c, d]), 4, min, unique);
        };
        let start = ctx.stacks.values.len();
        ctx.stacks.values.extend([a, b, c, d, e]);
        let mut i = 5;
        loop {
            match shape.next(&mut seq, node, ctx, i) {
                Ok(Some(v)) => ctx.stacks.values.push(v),
                Ok(None) => break,
                Err(e) => {
                    ctx.stacks.values.truncate(start);
                    return Err(e);
                }
            }
            i += 1;
        }
        let array = JsArray::from_exact(ctx.stacks.values.drain(start..));
        done(node, ctx, array, i, min, unique)
    }
}

/// What the elements of an array spec are.
#[derive(Clone, Copy)]
struct Items<'a> {
    /// The spec of every element, for arrays.
    items: Option<&'a Node>,
    /// The spec of each position, for tuples.
    tuple: &'a [Spec],
    /// The most elements.
    max: Option<usize>,
}

impl Items<'_> {
    /// Element `i`, or `None` at the end of the array.
    #[inline(always)]
    fn next<'de, A: SeqAccess<'de>>(
        self,
        seq: &mut A,
        node: &Node,
        ctx: &mut Ctx,
        i: usize,
    ) -> Result<Option<JsValue>, A::Error> {
        if self.max == Some(i) {
            return too_long(seq, node, ctx, i);
        }
        let item = match self.items {
            Some(n) => n,
            None => match self.tuple.get(i) {
                Some(s) => s.node(),
                None => return too_long(seq, node, ctx, i),
            },
        };
        let next = seq.next_element_seed(SpecSeed {
            node: item,
            ctx: &mut *ctx,
            hops: None,
        });
        if next.is_err() {
            ctx.in_index(i);
        }
        next
    }
}

/// At the most elements an array may have: `None` if it ends here, else
/// the violation (after counting the rest, unbuilt, for the message).
#[inline(never)]
fn too_long<'de, A: SeqAccess<'de>>(
    seq: &mut A,
    node: &Node,
    ctx: &mut Ctx,
    i: usize,
) -> Result<Option<JsValue>, A::Error> {
    if seq.next_element::<IgnoredAny>()?.is_none() {
        return Ok(None);
    }
    let mut n = i + 1;
    while seq.next_element::<IgnoredAny>()?.is_some() {
        n += 1;
    }
    Err(ctx.fail(Miss::kind(node, show_array_len(n))))
}

/// The checks of a complete array: its least length, uniqueness, user
/// checks.
#[inline(always)]
fn done<E: de::Error>(
    node: &Node,
    ctx: &mut Ctx,
    array: JsArray,
    n: usize,
    min: usize,
    unique: bool,
) -> Result<JsValue, E> {
    if n < min {
        return Err(ctx.fail(Miss::kind(node, show_array_len(n))));
    }
    if unique && let Some((at, first)) = first_duplicate(&array) {
        ctx.park(check::duplicate(first));
        ctx.in_index(at);
        return Err(de::Error::custom(MARK));
    }
    finish(node, ctx, JsValue::Array(array))
}

impl SpecSeed<'_, '_> {
    fn object<'de, A: MapAccess<'de>>(self, mut map: A) -> Result<JsValue, A::Error> {
        let SpecSeed { node, ctx, hops } = self;
        let spec = match &node.kind {
            SpecKind::Object(o) => o,
            SpecKind::Map(m) => return map_members(node, m, ctx, map),
            SpecKind::Ref(target) => {
                let def = match validate::resolve(target, hops) {
                    Ok(def) => def,
                    Err(miss) => {
                        let v = ValueVisitor(&mut ctx.stacks).visit_map(map)?;
                        return Err(ctx.fail(Miss::new(miss.expected, show(&v))));
                    }
                };
                let h = Hops::push(hops, target);
                let v = SpecSeed {
                    node: &def,
                    ctx: &mut *ctx,
                    hops: Some(&h),
                }
                .object(map)?;
                return finish(node, ctx, v);
            }
            _ => {
                let v = ValueVisitor(&mut ctx.stacks).visit_map(map)?;
                return SpecSeed { node, ctx, hops }.plain(v);
            }
        };
        let start = ctx.stacks.members.len();
        let mut seen = Seen::new(spec.fields.len());
        let mut required = 0;
        let mut prev = spec.fields.len();
        let result = loop {
            let key = match map.next_key_seed(KeySeed(&mut ctx.stacks.keys)) {
                Ok(Some(k)) => k,
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            };
            let value = match spec.index.find(&spec.fields, prev, &key) {
                Some(i) => {
                    prev = i;
                    let f = &spec.fields[i];
                    let v = map.next_value_seed(SpecSeed {
                        node: f.spec.node(),
                        ctx: &mut *ctx,
                        hops: None,
                    });
                    if v.is_ok() && seen.mark(i) && f.required {
                        required += 1;
                    }
                    v
                }
                None => {
                    let v = map.next_value_seed(ValueSeed(&mut ctx.stacks));
                    match v {
                        Ok(v) if spec.strict => {
                            ctx.park(check::unexpected(&v));
                            Err(de::Error::custom(MARK))
                        }
                        v => v,
                    }
                }
            };
            match value {
                Ok(v) => ctx.stacks.members.push((key, v)),
                Err(e) => {
                    ctx.in_key(&key);
                    break Err(e);
                }
            }
        };
        if let Err(e) = result {
            ctx.stacks.members.truncate(start);
            return Err(e);
        }
        if required < spec.required {
            ctx.stacks.members.truncate(start);
            let absent = spec.fields.iter().enumerate();
            if let Some((_, f)) = absent
                .into_iter()
                .find(|(i, f)| f.required && !seen.has(*i))
            {
                ctx.park(check::missing(f.spec.node()));
                ctx.in_key(&f.key);
                return Err(de::Error::custom(MARK));
            }
        }
        let obj = JsObj::from_members(&mut ctx.stacks.members, start);
        finish(node, ctx, JsValue::Object(obj))
    }
}

/// The members of an object checked against a map spec.
fn map_members<'de, A: MapAccess<'de>>(
    node: &Node,
    spec: &MapSpec,
    ctx: &mut Ctx,
    mut map: A,
) -> Result<JsValue, A::Error> {
    {
        let (keys, values) = (spec.keys.node(), spec.values.node());
        let start = ctx.stacks.members.len();
        let mut n = 0;
        let result = loop {
            let key = match map.next_key_seed(KeySeed(&mut ctx.stacks.keys)) {
                Ok(Some(k)) => k,
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            };
            if spec.max_len == Some(n) {
                // Too many: count the rest, unbuilt, for the message.
                let mut total = n + 1;
                let counted = map.next_value::<IgnoredAny>().and_then(|_| {
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                        total += 1;
                    }
                    Ok(())
                });
                if let Err(e) = counted {
                    break Err(e);
                }
                ctx.park(Miss::kind(node, show_obj_len(total)));
                break Err(de::Error::custom(MARK));
            }
            if let Err(miss) = validate::key(keys, &key) {
                ctx.park(miss);
                ctx.in_key(&key);
                break Err(de::Error::custom(MARK));
            }
            let value = map.next_value_seed(SpecSeed {
                node: values,
                ctx: &mut *ctx,
                hops: None,
            });
            match value {
                Ok(v) => ctx.stacks.members.push((key, v)),
                Err(e) => {
                    ctx.in_key(&key);
                    break Err(e);
                }
            }
            n += 1;
        };
        if let Err(e) = result {
            ctx.stacks.members.truncate(start);
            return Err(e);
        }
        if n < spec.min_len {
            ctx.stacks.members.truncate(start);
            return Err(ctx.fail(Miss::kind(node, show_obj_len(n))));
        }
        let obj = JsObj::from_members(&mut ctx.stacks.members, start);
        finish(node, ctx, JsValue::Object(obj))
    }
}

/// The first element equal to an earlier one: its index and the earlier's.
pub(crate) fn first_duplicate(a: &JsArray) -> Option<(usize, usize)> {
    let mut seen = std::collections::HashMap::with_capacity(a.len());
    for (i, x) in a.iter().enumerate() {
        if let Some(&first) = seen.get(x) {
            return Some((i, first));
        }
        seen.insert(x, i);
    }
    None
}

impl<'de> Visitor<'de> for SpecSeed<'_, '_> {
    type Value = JsValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    #[inline]
    fn visit_unit<E: de::Error>(self) -> Result<JsValue, E> {
        self.scalar(Scalar::Null)
    }

    #[inline]
    fn visit_none<E: de::Error>(self) -> Result<JsValue, E> {
        self.scalar(Scalar::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<JsValue, D::Error> {
        self.deserialize(d)
    }

    #[inline]
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<JsValue, E> {
        self.scalar(Scalar::Bool(b))
    }

    #[inline]
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<JsValue, E> {
        self.int(v.into())
    }

    #[inline]
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<JsValue, E> {
        self.int(v.into())
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<JsValue, E> {
        match JsValue::try_from(v).map_err(E::custom)? {
            JsValue::Int(i) => self.scalar(Scalar::Int(i)),
            other => self.plain(other),
        }
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<JsValue, E> {
        match JsValue::try_from(v).map_err(E::custom)? {
            JsValue::Int(i) => self.scalar(Scalar::Int(i)),
            other => self.plain(other),
        }
    }

    #[inline]
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<JsValue, E> {
        // The common cases first, without the general dispatch.
        let fits = match &self.node.kind {
            SpecKind::Float(f) => check::float_in(f.min, f.max, v),
            SpecKind::Number(n) => check::float_in(n.min, n.max, v),
            _ => false,
        };
        if fits {
            return finish(self.node, self.ctx, JsValue::Float(v));
        }
        self.scalar(Scalar::Float(v))
    }

    #[inline]
    fn visit_str<E: de::Error>(self, v: &str) -> Result<JsValue, E> {
        self.scalar(Scalar::Str(v))
    }

    #[inline]
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<JsValue, A::Error> {
        self.array(seq)
    }

    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<JsValue, A::Error> {
        self.object(map)
    }
}

/// Parses `text` against the spec rooted at `node`.
pub(crate) fn parse_with<'de, R: serde_json::de::Read<'de>>(
    node: &Node,
    read: R,
) -> Result<JsValue, super::SpecParseError> {
    let mut ctx = Ctx::default();
    let mut de = serde_json::Deserializer::new(read);
    let result = SpecSeed {
        node,
        ctx: &mut ctx,
        hops: None,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    result.map_err(|e| match ctx.take() {
        Some(v) => super::SpecParseError::Invalid(v),
        None => super::SpecParseError::Json(e.into()),
    })
}
