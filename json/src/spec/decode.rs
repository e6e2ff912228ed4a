//! `Spec::decode`: MessagePack checked against a spec in the pass that
//! builds the value.
//!
//! Contract: the same recursive descent as the plain decoder (`msgpack.rs`)
//! with the spec node alongside: the same depth levels, length checks and
//! allocation charges, in the same order, so every limit applies as there.
//! Declared lengths are known up front, so a container of the wrong length
//! is rejected before its contents are read. A violation is parked in the
//! context and decoding stops with a marker error; containers add their key
//! or index to the violation's path (and to a decode error's, as the plain
//! decoder does) while it unwinds.

use std::sync::Arc;

use codecbus_core::__private::{enter, leave};
use codecbus_core::{DecodeError, Int, Reader, ValueKind};

use super::check::{self, Miss, Scalar};
use super::describe::{show, show_array_len, show_obj_len};
use super::model::{MapSpec, Node, ObjSpec, SpecKind};
use super::parse::{Ctx, Seen, first_duplicate};
use super::validate::{self, Hops};
use crate::msgpack::{EXPECTED_VALUE, Stacks, decode_key, decode_value};
use crate::number::JsInt;
use crate::tree::{JsArray, JsObj, JsValue};

/// The text of the marker error; never shown.
const MARK: &str = "spec violation";

pub(crate) struct DecodeCtx {
    pub(crate) ctx: Ctx,
    st: Stacks,
}

impl DecodeCtx {
    pub(crate) fn new() -> Self {
        DecodeCtx {
            ctx: Ctx::default(),
            st: Stacks::default(),
        }
    }

    #[cold]
    #[inline(never)]
    fn fail(&mut self, r: &Reader<'_>, miss: Miss) -> DecodeError {
        self.ctx.park(miss);
        DecodeError::custom(MARK, r.position())
    }
}

type Res<T> = Result<T, DecodeError>;

/// Runs the node's user checks on a value that passed the rest.
#[inline(always)]
fn finish(node: &Node, c: &mut DecodeCtx, r: &Reader<'_>, v: JsValue) -> Res<JsValue> {
    if node.checks.is_empty() {
        return Ok(v);
    }
    run_checks(node, c, r, v)
}

#[inline(never)]
fn run_checks(node: &Node, c: &mut DecodeCtx, r: &Reader<'_>, v: JsValue) -> Res<JsValue> {
    if node.nullable && v.is_null() {
        return Ok(v);
    }
    match check::user_checks(&node.checks, &v) {
        Ok(()) => Ok(v),
        Err(miss) => Err(c.fail(r, miss)),
    }
}

/// Decodes one value against `node`.
pub(crate) fn value(
    r: &mut Reader<'_>,
    node: &Node,
    c: &mut DecodeCtx,
    hops: Option<&Hops<'_>>,
) -> Res<JsValue> {
    match &node.kind {
        SpecKind::Ref(target) => {
            if node.nullable && r.peek_kind()? == ValueKind::Nil {
                r.read_nil()?;
                return Ok(JsValue::Null);
            }
            return match validate::resolve(target, hops) {
                Ok(def) => {
                    let h = Hops::push(hops, target);
                    let v = value(r, &def, c, Some(&h))?;
                    finish(node, c, r, v)
                }
                Err(miss) => {
                    let v = decode_value(r, &mut c.st)?;
                    Err(c.fail(r, Miss::new(miss.expected, show(&v))))
                }
            };
        }
        // Alternatives, and a container met by a fixed set of values (which
        // may hold arrays and objects), are decoded plainly and checked whole.
        SpecKind::OneOf(_) | SpecKind::Values(_)
            if matches!(node.kind, SpecKind::OneOf(_))
                || matches!(r.peek_kind()?, ValueKind::Array | ValueKind::Map) =>
        {
            let v = decode_value(r, &mut c.st)?;
            return match validate::first(node, &v, hops) {
                None => Ok(v),
                Some(violation) => {
                    c.ctx.park_violation(violation);
                    Err(DecodeError::custom(MARK, r.position()))
                }
            };
        }
        SpecKind::Any => {
            let v = decode_value(r, &mut c.st)?;
            return finish(node, c, r, v);
        }
        _ => {}
    }
    // Containers recurse; integers and floats take a short path; other
    // scalars are decoded out of line, so that the frames of the recursion
    // through containers stay small (the depth limit allows 128 levels).
    match r.peek_kind()? {
        ValueKind::Array => array(r, node, c),
        ValueKind::Map => object(r, node, c),
        ValueKind::Int => {
            let n = match r.read_int()? {
                Int::Unsigned(u) => JsInt::from(u),
                Int::Negative(n) => JsInt::from(n),
            };
            if let SpecKind::Int(spec) = &node.kind
                && check::int_in(spec, n)
            {
                return finish(node, c, r, JsValue::Int(n));
            }
            checked(r, node, c, Scalar::Int(n))
        }
        ValueKind::Float => {
            let x = r.read_f64()?;
            let fits = match &node.kind {
                SpecKind::Float(f) => check::float_in(f.min, f.max, x),
                SpecKind::Number(n) => check::float_in(n.min, n.max, x),
                _ => false,
            };
            if fits {
                return finish(node, c, r, JsValue::Float(x));
            }
            checked(r, node, c, Scalar::Float(x))
        }
        _ => scalar(r, node, c),
    }
}

/// A scalar after the short paths: all of its checks.
#[inline(never)]
fn checked(r: &mut Reader<'_>, node: &Node, c: &mut DecodeCtx, x: Scalar<'_>) -> Res<JsValue> {
    if let Err(miss) = check::scalar(node, x) {
        return Err(c.fail(r, miss));
    }
    finish(node, c, r, x.to_value())
}

/// Null, a boolean or a string against `node` (or a type outside JSON).
#[inline(never)]
fn scalar(r: &mut Reader<'_>, node: &Node, c: &mut DecodeCtx) -> Res<JsValue> {
    let at = r.position();
    let marker = r.peek()?;
    let x = match ValueKind::of(marker) {
        ValueKind::Nil => {
            r.read_nil()?;
            Scalar::Null
        }
        ValueKind::Bool => Scalar::Bool(r.read_bool()?),
        ValueKind::Str => {
            let s = r.read_str()?;
            r.charge_alloc(s.len())?;
            if let Err(miss) = check::scalar(node, Scalar::Str(s)) {
                return Err(c.fail(r, miss));
            }
            let v = JsValue::Str(Arc::from(s));
            return finish(node, c, r, v);
        }
        _ => return Err(r.mismatch(EXPECTED_VALUE, marker, at)),
    };
    checked(r, node, c, x)
}

fn array(r: &mut Reader<'_>, node: &Node, c: &mut DecodeCtx) -> Res<JsValue> {
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
        _ => {
            let v = decode_value(r, &mut c.st)?;
            return Err(c.fail(r, Miss::kind(node, show(&v))));
        }
    };
    enter(r)?;
    let len = r.read_array_len()?;
    r.charge_alloc(len.saturating_mul(size_of::<JsValue>()))?;
    if len < min || max.is_some_and(|m| len > m) {
        return Err(c.fail(r, Miss::kind(node, show_array_len(len))));
    }
    // As in the plain decoder: storage built straight from an exact-size
    // iterator; after an error the remaining slots are filled with null
    // without reading.
    let mut failed = None;
    let array = JsArray::from_exact((0..len).map(|i| {
        if failed.is_some() {
            return JsValue::Null;
        }
        let item = items.or_else(|| tuple.get(i).map(|s| s.node()));
        let Some(item) = item else {
            return JsValue::Null;
        };
        value(r, item, c, None).unwrap_or_else(|e| {
            c.ctx.in_index(i);
            failed = Some(e.in_index(i));
            JsValue::Null
        })
    }));
    if let Some(e) = failed {
        return Err(e);
    }
    leave(r);
    if unique && let Some((at, first)) = first_duplicate(&array) {
        c.ctx.park(check::duplicate(first));
        c.ctx.in_index(at);
        return Err(DecodeError::custom(MARK, r.position()));
    }
    finish(node, c, r, JsValue::Array(array))
}

fn object(r: &mut Reader<'_>, node: &Node, c: &mut DecodeCtx) -> Res<JsValue> {
    match &node.kind {
        SpecKind::Object(spec) => fields(r, node, spec, c),
        SpecKind::Map(spec) => map(r, node, spec, c),
        _ => {
            let v = decode_value(r, &mut c.st)?;
            Err(c.fail(r, Miss::kind(node, show(&v))))
        }
    }
}

fn fields(r: &mut Reader<'_>, node: &Node, spec: &ObjSpec, c: &mut DecodeCtx) -> Res<JsValue> {
    enter(r)?;
    let len = r.read_map_len()?;
    r.charge_alloc(len.saturating_mul(size_of::<(Arc<str>, JsValue)>()))?;
    let start = c.st.members.len();
    let mut seen = Seen::new(spec.fields.len());
    let mut required = 0;
    let mut prev = spec.fields.len();
    for _ in 0..len {
        let key = decode_key(r, &mut c.st)?;
        let v = match spec.index.find(&spec.fields, prev, &key) {
            Some(i) => {
                prev = i;
                let f = &spec.fields[i];
                let v = value(r, f.spec.node(), c, None);
                if v.is_ok() && seen.mark(i) && f.required {
                    required += 1;
                }
                v
            }
            None => match decode_value(r, &mut c.st) {
                Ok(v) if spec.strict => {
                    c.ctx.park(check::unexpected(&v));
                    Err(DecodeError::custom(MARK, r.position()))
                }
                v => v,
            },
        };
        match v {
            Ok(v) => c.st.members.push((key, v)),
            Err(e) => {
                c.ctx.in_key(&key);
                return Err(e.in_key(&*key));
            }
        }
    }
    leave(r);
    if required < spec.required
        && let Some((_, f)) = spec
            .fields
            .iter()
            .enumerate()
            .find(|(i, f)| f.required && !seen.has(*i))
    {
        c.ctx.park(check::missing(f.spec.node()));
        c.ctx.in_key(&f.key);
        return Err(DecodeError::custom(MARK, r.position()));
    }
    let obj = JsObj::from_members(&mut c.st.members, start);
    finish(node, c, r, JsValue::Object(obj))
}

fn map(r: &mut Reader<'_>, node: &Node, spec: &MapSpec, c: &mut DecodeCtx) -> Res<JsValue> {
    enter(r)?;
    let len = r.read_map_len()?;
    r.charge_alloc(len.saturating_mul(size_of::<(Arc<str>, JsValue)>()))?;
    if len < spec.min_len || spec.max_len.is_some_and(|m| len > m) {
        return Err(c.fail(r, Miss::kind(node, show_obj_len(len))));
    }
    let (keys, values) = (spec.keys.node(), spec.values.node());
    let start = c.st.members.len();
    for _ in 0..len {
        let key = decode_key(r, &mut c.st)?;
        if let Err(miss) = validate::key(keys, &key) {
            c.ctx.park(miss);
            c.ctx.in_key(&key);
            return Err(DecodeError::custom(MARK, r.position()));
        }
        match value(r, values, c, None) {
            Ok(v) => c.st.members.push((key, v)),
            Err(e) => {
                c.ctx.in_key(&key);
                return Err(e.in_key(&*key));
            }
        }
    }
    leave(r);
    let obj = JsObj::from_members(&mut c.st.members, start);
    finish(node, c, r, JsValue::Object(obj))
}
