//! Giving a recursive spec a new root.
//!
//! Contract: the references of a recursive spec ([`SpecKind::Ref`]) point
//! weakly at its root node. A modifier ([`Spec::named`],
//! [`Spec::nullable`], [`Spec::check`]) applied to that root makes a new
//! node, and the spec being defined is the modified one: its nested levels
//! are named, nullable and checked too. [`rebind`] builds the new root's
//! contents so that its references point at it: it copies exactly the
//! nodes on the paths from the root down to a reference to the old root,
//! and shares every other node. A nested recursive spec whose definition
//! refers to the old root is given a new root the same way (its own
//! references then point at its copy); one that does not refer to it is
//! shared as it is.
//!
//! Why copies and not an indirection the modifier would update: specs are
//! immutable values, and the original stays a spec of its own
//! (`tree.clone().named("a")` beside `tree`), each following its own
//! modifiers at every level. The copies cost once, when the spec is
//! built, and nothing when it is used; the only strong edges still go from
//! parents to children, so the result is freed with its last handle.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, Weak};

use super::model::{Node, Spec, SpecKind};

/// The contents of a new root replacing `old` (the address of the old
/// root): `node`, with its references to `old` (itself, or down its
/// children) made to point at `me`.
pub(crate) fn rebind(old: *const Node, node: &Node, me: &Weak<Node>) -> Node {
    let mut r = Rebinder {
        refs: HashMap::new(),
        roots: vec![(old, me.clone())],
        copies: HashMap::new(),
    };
    r.copy_children(node)
}

/// One rebinding, over the subtree of the root being replaced.
struct Rebinder {
    /// The roots outside each node visited that references in its subtree
    /// point at (sorted addresses).
    refs: HashMap<*const Node, Rc<[*const Node]>>,
    /// The roots being replaced, innermost last, with their new roots.
    roots: Vec<(*const Node, Weak<Node>)>,
    /// The copies made, by the address of their original.
    copies: HashMap<*const Node, Spec>,
}

impl Rebinder {
    /// The roots outside `node` that references in its subtree point at
    /// (references are not followed, so this ends).
    fn refs(&mut self, node: &Node) -> Rc<[*const Node]> {
        let at = std::ptr::from_ref(node);
        if let Some(hit) = self.refs.get(&at) {
            return Rc::clone(hit);
        }
        let mut out: Vec<*const Node> = match &node.kind {
            SpecKind::Ref(target) => vec![target.as_ptr()],
            kind => kind
                .children()
                .into_iter()
                .flat_map(|c| self.refs(c.node()).to_vec())
                .collect(),
        };
        out.sort_unstable();
        out.dedup();
        // A reference to this node from inside it stays inside.
        out.retain(|&t| t != at);
        let out: Rc<[*const Node]> = out.into();
        self.refs.insert(at, Rc::clone(&out));
        out
    }

    /// The new root replacing `old`, if `old` is being replaced.
    fn new_root(&self, old: *const Node) -> Option<&Weak<Node>> {
        self.roots
            .iter()
            .rev()
            .find(|(o, _)| *o == old)
            .map(|(_, new)| new)
    }

    /// The copy of `spec` whose references to the roots being replaced
    /// point at their new roots; `None` when it has no such reference.
    fn copy(&mut self, spec: &Spec) -> Option<Spec> {
        let at = Arc::as_ptr(&spec.0);
        if let Some(hit) = self.copies.get(&at) {
            return Some(hit.clone());
        }
        let node = spec.node();
        let refs = self.refs(node);
        if !refs.iter().any(|&r| self.new_root(r).is_some()) {
            return None;
        }
        let copy = if Arc::weak_count(&spec.0) > 0 {
            // The root of a nested recursive spec whose definition refers
            // to a root being replaced: it gets a new root too.
            Spec(Arc::new_cyclic(|me| {
                self.roots.push((at, me.clone()));
                let copied = self.copy_children(node);
                self.roots.pop();
                copied
            }))
        } else {
            Spec(Arc::new(self.copy_children(node)))
        };
        self.copies.insert(at, copy.clone());
        Some(copy)
    }

    /// `node` with each child replaced by its copy, where it has one, and
    /// pointing at the new root if it is a reference to a replaced one.
    fn copy_children(&mut self, node: &Node) -> Node {
        let mut out = node.clone();
        let mut each = |specs: &mut dyn Iterator<Item = &mut Spec>| {
            for s in specs {
                if let Some(c) = self.copy(s) {
                    *s = c;
                }
            }
        };
        match &mut out.kind {
            SpecKind::Array(a) => each(&mut std::iter::once(&mut a.items)),
            SpecKind::Tuple(t) => {
                let mut items = t.items.to_vec();
                each(&mut items.iter_mut());
                t.items = items.into();
            }
            SpecKind::Object(o) => each(&mut o.fields.iter_mut().map(|f| &mut f.spec)),
            SpecKind::Map(m) => each(&mut [&mut m.keys, &mut m.values].into_iter()),
            SpecKind::OneOf(alts) => {
                let mut items = alts.to_vec();
                each(&mut items.iter_mut());
                *alts = items.into();
            }
            SpecKind::Ref(target) => {
                if let Some(new) = self.new_root(target.as_ptr()) {
                    *target = new.clone();
                }
            }
            SpecKind::Any
            | SpecKind::Null
            | SpecKind::Bool
            | SpecKind::Str(_)
            | SpecKind::Int(_)
            | SpecKind::Float(_)
            | SpecKind::Number(_)
            | SpecKind::Values(_) => {}
        }
        out
    }
}
