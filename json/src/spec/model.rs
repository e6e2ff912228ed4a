//! The data model of a spec (its builder API is in `construct.rs` and
//! `builders.rs`).
//!
//! Contract: a [`Spec`] is an `Arc` around one immutable [`Node`]; a node
//! is a [`SpecKind`] (what kind of value, with that kind's constraints)
//! plus the modifiers every kind has (nullable, user checks, a name).
//! Composite kinds hold their children as `Spec`s, so sharing a sub-spec
//! between several parents costs one reference count.
//!
//! Recursion: [`Spec::recursive`] builds its root with `Arc::new_cyclic`
//! and hands the closure a [`SpecKind::Ref`] holding a `Weak` to that root.
//! The only strong edges go from parents to children, so a recursive spec
//! is freed like any other when its last handle goes. A reference that has
//! lost its root (a handle smuggled out of the closure and kept past the
//! root) is reported as a violation, never followed. A modifier applied
//! to the root of a recursive spec makes a new root whose references point
//! at it (`rebind.rs`): the spec being defined includes its modifiers.
//!
//! The builder types ([`StrSpec`], [`IntSpec`], ...) are the constraint
//! records stored in [`SpecKind`] themselves: the builder fills them in and
//! `Into<Spec>` wraps them. Sibling modules match on `SpecKind` and read the
//! `pub(crate)` fields; every field's meaning is documented on it.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Bound;
use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};
use std::sync::{Arc, Weak};

use regex::Regex;

use crate::tree::JsValue;

/// A description of JSON values: their type, constraints, and the shape of
/// their members and elements. Cheap to clone (one `Arc`), `Send` and
/// `Sync`.
///
/// Build one with the [`jsobj_spec!`](crate::jsobj_spec) macro or the
/// functions of [`spec`](crate::spec); see the [module
/// documentation](crate::spec).
#[derive(Clone)]
pub struct Spec(pub(crate) Arc<Node>);

/// One spec node: a kind with its constraints, and the modifiers every kind
/// shares.
#[derive(Clone)]
pub(crate) struct Node {
    /// What kind of value, with that kind's constraints.
    pub(crate) kind: SpecKind,
    /// `null` is accepted too (without running `checks`).
    pub(crate) nullable: bool,
    /// User predicates, run in order on a value that satisfied `kind`.
    pub(crate) checks: Vec<Check>,
    /// A name given with [`Spec::named`], shown in descriptions.
    pub(crate) name: Option<Arc<str>>,
}

/// The kinds of value a spec accepts, each with its constraints.
#[derive(Clone)]
pub(crate) enum SpecKind {
    /// Any JSON value.
    Any,
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A string.
    Str(StrSpec),
    /// An integer (never a float, even an integral one).
    Int(IntSpec),
    /// A float (never an integer).
    Float(FloatSpec),
    /// An integer or a float.
    Number(NumberSpec),
    /// One of a fixed set of values (JSON equality: `1` matches `1.0`).
    Values(Arc<[JsValue]>),
    /// An array whose elements all follow one spec.
    Array(ArraySpec),
    /// An array of fixed length whose positions follow their own specs.
    Tuple(TupleSpec),
    /// An object with named members.
    Object(ObjSpec),
    /// An object used as a map: any keys following one spec, values
    /// following another.
    Map(MapSpec),
    /// A value that follows at least one of these specs (tried in order).
    OneOf(Arc<[Spec]>),
    /// The root of the enclosing [`Spec::recursive`].
    Ref(Weak<Node>),
}

impl SpecKind {
    /// The specs this kind holds (a reference's target is not one of them:
    /// it is followed, not held).
    pub(crate) fn children(&self) -> Vec<&Spec> {
        match self {
            Self::Array(a) => vec![&a.items],
            Self::Tuple(t) => t.items.iter().collect(),
            Self::Object(o) => o.fields.iter().map(|f| &f.spec).collect(),
            Self::Map(m) => vec![&m.keys, &m.values],
            Self::OneOf(alts) => alts.iter().collect(),
            Self::Any
            | Self::Null
            | Self::Bool
            | Self::Str(_)
            | Self::Int(_)
            | Self::Float(_)
            | Self::Number(_)
            | Self::Values(_)
            | Self::Ref(_) => Vec::new(),
        }
    }
}

/// A user predicate with the message reported when it returns `false`.
#[derive(Clone)]
pub(crate) struct Check {
    /// What the value should be, reported as the violation's `expected`.
    pub(crate) message: Arc<str>,
    /// Returns whether the value passes.
    pub(crate) test: Arc<dyn Fn(&JsValue) -> bool + Send + Sync>,
}

/// Constraints of a string spec, built by [`string`](super::string).
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::string;
/// use codecbus_json::JsValue;
///
/// let code = string().length(3..=3).pattern("^[A-Z]+$");
/// assert!(code.is_valid(&JsValue::from("EUR")));
/// assert!(!code.is_valid(&JsValue::from("eur")));
/// ```
#[derive(Clone, Default)]
pub struct StrSpec {
    /// Fewest characters (Unicode scalar values).
    pub(crate) min_len: usize,
    /// Most characters, if bounded.
    pub(crate) max_len: Option<usize>,
    /// A regular expression the string must match (anywhere, unless
    /// anchored).
    pub(crate) pattern: Option<Regex>,
}

/// Constraints of an integer spec, built by [`integer`](super::integer). Bounds are
/// inclusive and cover the whole `i64` and `u64` range.
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::integer;
/// use codecbus_json::JsValue;
///
/// let qty = integer().range(1..=100);
/// assert!(qty.is_valid(&JsValue::from(100)));
/// assert!(!qty.is_valid(&JsValue::from(0)));
/// assert!(integer().min(u64::MAX).is_valid(&JsValue::from(u64::MAX)));
/// ```
#[derive(Clone, Default)]
pub struct IntSpec {
    /// Smallest accepted value, inclusive.
    pub(crate) min: Option<i128>,
    /// Largest accepted value, inclusive.
    pub(crate) max: Option<i128>,
}

/// Constraints of a float spec, built by [`float`](super::float).
///
/// A bound that is NaN accepts nothing.
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::float;
/// use codecbus_json::JsValue;
///
/// let ratio = float().range(0.0..1.0);
/// assert!(ratio.is_valid(&JsValue::from(0.5)));
/// assert!(!ratio.is_valid(&JsValue::from(1.0)));
/// assert!(!ratio.is_valid(&JsValue::from(0))); // an integer, not a float
/// ```
#[derive(Clone)]
pub struct FloatSpec {
    /// Lower bound.
    pub(crate) min: Bound<f64>,
    /// Upper bound.
    pub(crate) max: Bound<f64>,
}

/// Constraints of a number spec (integer or float), built by [`number`](super::number).
/// Integers are compared with the bounds exactly, not through `f64`.
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::number;
/// use codecbus_json::JsValue;
///
/// let lat = number().range(-90.0..=90.0);
/// assert!(lat.is_valid(&JsValue::from(45)));
/// assert!(lat.is_valid(&JsValue::from(-89.5)));
/// assert!(!lat.is_valid(&JsValue::from(91)));
/// ```
#[derive(Clone)]
pub struct NumberSpec {
    /// Lower bound.
    pub(crate) min: Bound<f64>,
    /// Upper bound.
    pub(crate) max: Bound<f64>,
}

/// Constraints of an array whose elements all follow one spec, built by
/// [`array_of`](super::array_of) or [`array()`](super::array()).
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::{array_of, string};
/// use codecbus_json::jsarr;
///
/// let tags = array_of(string()).length(1..=3).unique();
/// assert!(tags.is_valid(&jsarr!["a", "b"].into()));
/// assert!(!tags.is_valid(&jsarr!["a", "a"].into()));
/// assert!(!tags.is_valid(&jsarr![].into()));
/// ```
#[derive(Clone)]
pub struct ArraySpec {
    /// The spec of every element.
    pub(crate) items: Spec,
    /// Fewest elements.
    pub(crate) min_len: usize,
    /// Most elements, if bounded.
    pub(crate) max_len: Option<usize>,
    /// No two elements may be equal (JSON equality).
    pub(crate) unique: bool,
}

/// An array of fixed length whose positions follow their own specs, built
/// by [`tuple()`](super::tuple()).
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::{float, string, tuple};
/// use codecbus_json::jsarr;
///
/// let point = tuple((string(), float(), float()));
/// assert!(point.is_valid(&jsarr!["a", 1.5, 2.5].into()));
/// assert!(!point.is_valid(&jsarr!["a", 1.5].into()));
/// ```
#[derive(Clone)]
pub struct TupleSpec {
    /// The spec of each position; the array has exactly this many elements.
    pub(crate) items: Arc<[Spec]>,
}

/// An object used as a map: every key follows one spec and every value
/// another, built by [`map_of`](super::map_of).
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::{integer, map_of, string};
/// use codecbus_json::jsobj;
///
/// let stock = map_of(integer().min(0)).keys(string().pattern("^[a-z]+$"));
/// assert!(stock.is_valid(&jsobj! { "tea": 3, "milk": 0 }.into()));
/// assert!(!stock.is_valid(&jsobj! { "Tea": 3 }.into()));
/// ```
#[derive(Clone)]
pub struct MapSpec {
    /// The spec every key follows, applied to the key as a JSON string.
    pub(crate) keys: Spec,
    /// The spec every value follows.
    pub(crate) values: Spec,
    /// Fewest members.
    pub(crate) min_len: usize,
    /// Most members, if bounded.
    pub(crate) max_len: Option<usize>,
}

/// An object with named members, each required or optional, built by
/// [`object`](super::object) or [`jsobj_spec!`](crate::jsobj_spec). Strict objects (the
/// default) accept no other members; lenient ones accept any other member
/// with any value.
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::{integer, object, string};
/// use codecbus_json::jsobj;
///
/// let item = object().required("sku", string()).optional("qty", integer().min(1));
/// assert!(item.is_valid(&jsobj! { "sku": "tea" }.into()));
/// assert!(!item.is_valid(&jsobj! { "sku": "tea", "note": "x" }.into()));
/// assert!(item.lenient().is_valid(&jsobj! { "sku": "tea", "note": "x" }.into()));
/// ```
#[derive(Clone, Default)]
pub struct ObjSpec {
    /// The named members, sorted by key, each key once.
    pub(crate) fields: Vec<Field>,
    /// Members other than `fields` are rejected.
    pub(crate) strict: bool,
    /// How many of `fields` are required.
    pub(crate) required: usize,
    /// The position in `fields` of each key, for the parsers' lookups.
    pub(crate) index: FieldIndex,
}

/// Key to position in [`ObjSpec::fields`], for the parsers' lookups.
///
/// Documents tend to repeat one order of members in every object of a
/// kind, so each field remembers which field followed it the last time (a
/// hint, shared by every parse of the spec; relaxed atomics, written only
/// when wrong): a lookup is usually one comparison with the predicted key.
/// Otherwise the key is hashed with FNV-1a, which beats SipHash and a
/// binary search on short keys.
#[derive(Clone, Default)]
pub(crate) struct FieldIndex {
    map: HashMap<Arc<str>, usize, BuildHasherDefault<Fnv>>,
    /// For each field, and last for the start of an object: the position
    /// of the field that came next last time.
    next: Arc<[AtomicU32]>,
}

impl FieldIndex {
    /// The position of `key` among `fields`, the field before it being at
    /// `prev` (`fields.len()` at the start of an object).
    #[inline]
    pub(crate) fn find(&self, fields: &[Field], prev: usize, key: &str) -> Option<usize> {
        let Some(hint) = self.next.get(prev) else {
            return self.map.get(key).copied();
        };
        let guess = hint.load(AtomicOrdering::Relaxed) as usize;
        if let Some(f) = fields.get(guess)
            && *f.key == *key
        {
            return Some(guess);
        }
        let found = self.map.get(key).copied();
        if let Some(i) = found {
            // Fields are far fewer than `u32::MAX`.
            hint.store(
                u32::try_from(i).unwrap_or(u32::MAX),
                AtomicOrdering::Relaxed,
            );
        }
        found
    }

    pub(super) fn rebuild(fields: &[Field]) -> FieldIndex {
        FieldIndex {
            map: fields
                .iter()
                .enumerate()
                .map(|(i, f)| (Arc::clone(&f.key), i))
                .collect(),
            next: (0..=fields.len()).map(|_| AtomicU32::new(0)).collect(),
        }
    }
}

/// The FNV-1a hash (64 bits).
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A named member of an [`ObjSpec`].
#[derive(Clone)]
pub(crate) struct Field {
    /// The member name.
    pub(crate) key: Arc<str>,
    /// The spec of its value.
    pub(crate) spec: Spec,
    /// Whether the member must be present.
    pub(crate) required: bool,
}
