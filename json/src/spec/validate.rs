//! `Spec::validate` and `Spec::is_valid`: a walk over a built value that
//! collects every violation, or stops at the first.
//!
//! Contract: a violation is reported at the deepest position it concerns (a
//! missing member at the member's pointer, a length at the container's);
//! nothing below a value of the wrong kind is examined; user checks run on
//! a value only when nothing else was reported inside it; a `one_of`
//! reports one violation at its own position. The validating parse and
//! decode use the same checks, so the first violation they stop at is one
//! of those reported here.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::{Arc, Weak};

use super::Violation;
use super::check::{self, Miss, Scalar};
use super::describe::{DANGLING, LEFT_RECURSIVE, show, show_array_len, show_obj_len};
use super::model::{Node, SpecKind};
use crate::path::JsPath;
use crate::tree::{JsArray, JsObj, JsValue};

/// The references followed since the walk last entered a container: a
/// reference met twice in this chain would loop without consuming input.
#[derive(Clone, Copy)]
pub(crate) struct Hops<'a> {
    target: usize,
    prev: Option<&'a Hops<'a>>,
}

impl<'a> Hops<'a> {
    /// Whether following `target` from here would loop.
    pub(crate) fn seen(hops: Option<&Hops<'_>>, target: &Weak<Node>) -> bool {
        let addr = Weak::as_ptr(target) as usize;
        let mut h = hops;
        while let Some(x) = h {
            if x.target == addr {
                return true;
            }
            h = x.prev;
        }
        false
    }

    pub(crate) fn push(prev: Option<&'a Hops<'a>>, target: &Weak<Node>) -> Hops<'a> {
        Hops {
            target: Weak::as_ptr(target) as usize,
            prev,
        }
    }
}

/// Resolves a reference, or says why it cannot be followed.
pub(crate) fn resolve(target: &Weak<Node>, hops: Option<&Hops<'_>>) -> Result<Arc<Node>, Miss> {
    if Hops::seen(hops, target) {
        return Err(Miss::new(LEFT_RECURSIVE, String::new()));
    }
    target
        .upgrade()
        .ok_or_else(|| Miss::new(DANGLING, String::new()))
}

#[derive(Clone, Copy)]
enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

pub(crate) struct Walker<'v> {
    all: bool,
    pub(crate) out: Vec<Violation>,
    path: Vec<Step<'v>>,
}

type Flow = ControlFlow<()>;

impl<'v> Walker<'v> {
    pub(crate) fn new(all: bool) -> Self {
        Walker {
            all,
            out: Vec::new(),
            path: Vec::new(),
        }
    }

    /// Where the walk is, as a path.
    fn here(&self) -> JsPath {
        self.path
            .iter()
            .map(|s| match *s {
                Step::Key(k) => crate::path::Segment::Key(Arc::from(k)),
                Step::Index(i) => crate::path::Segment::Index(i),
            })
            .collect()
    }

    #[cold]
    fn report(&mut self, miss: Miss) -> Flow {
        let path = self.here();
        self.out.push(Violation::new(path, miss));
        if self.all {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    }

    #[cold]
    fn report_at(&mut self, step: Step<'v>, miss: Miss) -> Flow {
        self.path.push(step);
        let flow = self.report(miss);
        self.path.pop();
        flow
    }

    #[inline]
    fn child(&mut self, step: Step<'v>, node: &Node, v: &'v JsValue) -> Flow {
        // A scalar that conforms to a plain leaf (no reference, no
        // alternatives, no user checks) needs no place on the path: most
        // members and elements of a document end here.
        if node.checks.is_empty()
            && !matches!(node.kind, SpecKind::Ref(_) | SpecKind::OneOf(_))
            && let Some(x) = scalar_of(v)
            && check::scalar(node, x).is_ok()
        {
            return ControlFlow::Continue(());
        }
        self.path.push(step);
        let flow = self.walk(node, v, None);
        self.path.pop();
        flow
    }

    /// Checks `v` against `node`, reporting what is wrong.
    pub(crate) fn walk(&mut self, node: &Node, v: &'v JsValue, hops: Option<&Hops<'_>>) -> Flow {
        if node.nullable && v.is_null() {
            return ControlFlow::Continue(());
        }
        let before = self.out.len();
        match (&node.kind, v) {
            (SpecKind::Ref(target), _) => match resolve(target, hops) {
                Ok(def) => {
                    let hops = Hops::push(hops, target);
                    self.walk(&def, v, Some(&hops))?;
                }
                Err(miss) => self.report(Miss::new(miss.expected, show(v)))?,
            },
            (SpecKind::OneOf(alts), _) => {
                if !alts.iter().any(|alt| conforms(alt.node(), v, hops)) {
                    self.report(Miss::kind(node, show(v)))?;
                }
            }
            (SpecKind::Any, _) => {}
            (SpecKind::Values(values), JsValue::Array(_) | JsValue::Object(_)) => {
                if !values.contains(v) {
                    self.report(Miss::kind(node, show(v)))?;
                }
            }
            (SpecKind::Array(spec), JsValue::Array(a)) => {
                if a.len() < spec.min_len || spec.max_len.is_some_and(|m| a.len() > m) {
                    self.report(Miss::kind(node, show_array_len(a.len())))?;
                }
                let items = spec.items.node();
                for (i, x) in a.iter().enumerate() {
                    self.child(Step::Index(i), items, x)?;
                }
                if spec.unique {
                    self.unique(a)?;
                }
            }
            (SpecKind::Tuple(spec), JsValue::Array(a)) => {
                if a.len() != spec.items.len() {
                    self.report(Miss::kind(node, show_array_len(a.len())))?;
                }
                for (i, (x, s)) in a.iter().zip(spec.items.iter()).enumerate() {
                    self.child(Step::Index(i), s.node(), x)?;
                }
            }
            (SpecKind::Object(spec), JsValue::Object(o)) => self.object(spec, o)?,
            (SpecKind::Map(spec), JsValue::Object(o)) => {
                if o.len() < spec.min_len || spec.max_len.is_some_and(|m| o.len() > m) {
                    self.report(Miss::kind(node, show_obj_len(o.len())))?;
                }
                let (keys, values) = (spec.keys.node(), spec.values.node());
                for (k, x) in o.iter() {
                    if let Err(miss) = key(keys, k) {
                        self.report_at(Step::Key(k), miss)?;
                    }
                    self.child(Step::Key(k), values, x)?;
                }
            }
            (
                SpecKind::Array(_) | SpecKind::Tuple(_) | SpecKind::Object(_) | SpecKind::Map(_),
                _,
            ) => self.report(Miss::kind(node, show(v)))?,
            (_, v) => match scalar_of(v) {
                Some(x) => {
                    if let Err(miss) = check::scalar(node, x) {
                        self.report(miss)?;
                    }
                }
                None => self.report(Miss::kind(node, show(v)))?,
            },
        }
        if self.out.len() == before
            && let Err(miss) = check::user_checks(&node.checks, v)
        {
            self.report(miss)?;
        }
        ControlFlow::Continue(())
    }

    /// Members of an object against its named fields: both are sorted by
    /// key, so one merge pass pairs them.
    fn object(&mut self, spec: &super::model::ObjSpec, o: &'v JsObj) -> Flow {
        let mut fields = spec.fields.iter().peekable();
        for (k, x) in o.iter() {
            // One comparison per step of the merge.
            let mut matched = None;
            while let Some(&f) = fields.peek() {
                match (*f.key).cmp(k) {
                    Ordering::Less => {
                        if f.required {
                            self.report_missing(&f.key, f.spec.node())?;
                        }
                        fields.next();
                    }
                    Ordering::Equal => {
                        fields.next();
                        matched = Some(f);
                        break;
                    }
                    Ordering::Greater => break,
                }
            }
            match matched {
                Some(f) => self.child(Step::Key(k), f.spec.node(), x)?,
                None if spec.strict => self.report_at(Step::Key(k), check::unexpected(x))?,
                None => {}
            }
        }
        for f in fields {
            if f.required {
                self.report_missing(&f.key, f.spec.node())?;
            }
        }
        ControlFlow::Continue(())
    }

    #[cold]
    fn report_missing(&mut self, key: &str, spec: &Node) -> Flow {
        let mut path = self.here();
        path.push(key);
        self.out.push(Violation::new(path, check::missing(spec)));
        if self.all {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    }

    /// Reports every element equal to an earlier one.
    fn unique(&mut self, a: &'v JsArray) -> Flow {
        let mut seen: HashMap<&JsValue, usize> = HashMap::with_capacity(a.len());
        for (i, x) in a.iter().enumerate() {
            if let Some(&first) = seen.get(x) {
                self.report_at(Step::Index(i), check::duplicate(first))?;
            } else {
                seen.insert(x, i);
            }
        }
        ControlFlow::Continue(())
    }
}

/// Whether `v` satisfies `node`, stopping at the first violation.
pub(crate) fn conforms(node: &Node, v: &JsValue, hops: Option<&Hops<'_>>) -> bool {
    let mut w = Walker::new(false);
    w.walk(node, v, hops).is_continue()
}

/// The first violation of `v` against `node`, if any.
pub(crate) fn first(node: &Node, v: &JsValue, hops: Option<&Hops<'_>>) -> Option<Violation> {
    let mut w = Walker::new(false);
    let _ = w.walk(node, v, hops);
    w.out.pop()
}

/// Checks a map key, as a JSON string, against the key spec.
pub(crate) fn key(keys: &Node, k: &str) -> Result<(), Miss> {
    match &keys.kind {
        // The common cases need no allocation.
        SpecKind::Str(_) | SpecKind::Any | SpecKind::Values(_) if keys.checks.is_empty() => {
            check::scalar(keys, Scalar::Str(k))
        }
        _ => match first(keys, &JsValue::from(k), None) {
            None => Ok(()),
            Some(v) => Err(Miss::new(v.expected, v.found)),
        },
    }
}

/// The scalar view of `v`, or `None` for a container.
pub(crate) fn scalar_of(v: &JsValue) -> Option<Scalar<'_>> {
    Some(match v {
        JsValue::Null => Scalar::Null,
        JsValue::Bool(b) => Scalar::Bool(*b),
        JsValue::Int(i) => Scalar::Int(*i),
        JsValue::Float(f) => Scalar::Float(*f),
        JsValue::Str(s) => Scalar::Str(s),
        JsValue::Array(_) | JsValue::Object(_) => return None,
    })
}
