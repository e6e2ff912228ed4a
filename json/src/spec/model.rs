//! The data model of a spec and its builder API.
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
use std::ops::{Bound, RangeBounds};
use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};
use std::sync::{Arc, Weak};

use regex::Regex;

use super::rebind::rebind;
use crate::number::JsInt;
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

/// A user predicate with the message reported when it returns `false`.
#[derive(Clone)]
pub(crate) struct Check {
    /// What the value should be, reported as the violation's `expected`.
    pub(crate) message: Arc<str>,
    /// Returns whether the value passes.
    pub(crate) test: Arc<dyn Fn(&JsValue) -> bool + Send + Sync>,
}

/// Constraints of a string spec, built by [`string`].
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

/// Constraints of an integer spec, built by [`integer`]. Bounds are
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

/// Constraints of a float spec, built by [`float`].
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

/// Constraints of a number spec (integer or float), built by [`number`].
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
/// [`array_of`] or [`array()`].
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
/// by [`tuple()`].
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
/// another, built by [`map_of`].
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
/// [`object`] or [`jsobj_spec!`](crate::jsobj_spec). Strict objects (the
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

    fn rebuild(fields: &[Field]) -> FieldIndex {
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

// ---- constructors -------------------------------------------------------------

impl Spec {
    pub(crate) fn from_kind(kind: SpecKind) -> Spec {
        Spec(Arc::new(Node {
            kind,
            nullable: false,
            checks: Vec::new(),
            name: None,
        }))
    }

    /// The root node.
    pub(crate) fn node(&self) -> &Node {
        &self.0
    }

    /// A copy of the node to modify (shared children stay shared).
    ///
    /// A node that references point at is the root of a recursive spec:
    /// the modified root is the spec being defined, so the references in
    /// its copy are made to point at the copy (see `rebind`), and nested
    /// levels follow the modifiers too.
    fn modified(self, f: impl FnOnce(&mut Node)) -> Spec {
        if Arc::weak_count(&self.0) > 0 {
            let mut node = (*self.0).clone();
            f(&mut node);
            let old = Arc::as_ptr(&self.0);
            // `self` stays alive until the copy is made: addresses are
            // compared, and none may be reused meanwhile.
            let new = Spec(Arc::new_cyclic(|me| rebind(old, &node, me)));
            drop(self);
            return new;
        }
        let mut node = Arc::try_unwrap(self.0).unwrap_or_else(|shared| (*shared).clone());
        f(&mut node);
        Spec(Arc::new(node))
    }

    /// This spec, also accepting `null`.
    ///
    /// A `null` is accepted outright: checks added with
    /// [`check`](Spec::check) do not see it.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::integer;
    /// use codecbus_json::JsValue;
    ///
    /// let n = integer().nullable();
    /// assert!(n.is_valid(&JsValue::Null));
    /// assert!(n.is_valid(&JsValue::from(1)));
    /// ```
    #[must_use]
    pub fn nullable(self) -> Spec {
        self.modified(|n| n.nullable = true)
    }

    /// This spec with a user predicate: a value that satisfies everything
    /// else must also make `test` return `true`, or it is reported with
    /// `message` as what was expected. Predicates run in the order they
    /// were added, after the value (and everything in it) passed the rest
    /// of the spec.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::integer;
    /// use codecbus_json::JsValue;
    ///
    /// let even = integer().check("an even number", |v| v.as_i64().is_some_and(|i| i % 2 == 0));
    /// assert!(even.is_valid(&JsValue::from(4)));
    /// let v = even.validate(&JsValue::from(3));
    /// assert_eq!(v[0].expected(), "an even number");
    /// ```
    #[must_use]
    pub fn check<F>(self, message: impl Into<Arc<str>>, test: F) -> Spec
    where
        F: Fn(&JsValue) -> bool + Send + Sync + 'static,
    {
        let check = Check {
            message: message.into(),
            test: Arc::new(test),
        };
        self.modified(|n| n.checks.push(check))
    }

    /// This spec with a name, used in descriptions of what was expected.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::{integer, object};
    /// use codecbus_json::JsValue;
    ///
    /// let point = object().required("x", integer()).named("point");
    /// assert_eq!(point.validate(&JsValue::from(1))[0].expected(), "point");
    /// ```
    #[must_use]
    pub fn named(self, name: impl Into<Arc<str>>) -> Spec {
        let name = name.into();
        self.modified(|n| n.name = Some(name))
    }

    /// A spec that refers to itself: `f` receives a handle standing for the
    /// spec being defined and returns its definition. Use the handle inside
    /// containers (as the spec of an element, a member or a map value); it
    /// is followed lazily, so the definition is finite.
    ///
    /// The result can be [named](Spec::named), made
    /// [nullable](Spec::nullable) and [checked](Spec::check) like any spec,
    /// and the spec being defined is the modified one: the handle refers to
    /// it, so nested levels are named, nullable and checked too (the
    /// unmodified result stays a spec of its own). A definition that is
    /// itself a recursive spec is one spec with the result: both handles
    /// refer to the result.
    ///
    /// The handle refers to the result weakly: the result owns its
    /// definition, and no reference cycle keeps it alive. A handle kept
    /// past the result's last clone refers to nothing and rejects every
    /// value. A definition that reaches itself without entering a container
    /// (`Spec::recursive(|me| me)`) rejects every value too, instead of
    /// looping.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::{array_of, integer, string, Spec};
    /// use codecbus_json::{jsobj, jsobj_spec};
    ///
    /// let tree = Spec::recursive(|tree| jsobj_spec! {
    ///     "value": integer(),
    ///     "children"?: array_of(tree),
    /// });
    /// let t = jsobj! { "value": 1, "children": [{ "value": 2 }, { "value": 3, "children": [] }] };
    /// assert!(tree.is_valid(&t.into()));
    /// let bad = jsobj! { "value": 1, "children": [{ "value": "2" }] };
    /// assert_eq!(tree.validate(&bad.into())[0].pointer(), "/children/0/value");
    ///
    /// // Modifiers apply at every level: nested categories may be null too.
    /// let category = Spec::recursive(|t| jsobj_spec! { "code": string(), "sub"?: array_of(t) })
    ///     .named("category")
    ///     .nullable();
    /// let nested = jsobj! { "code": "a", "sub": [null, { "code": "b", "sub": [null] }] };
    /// assert!(category.is_valid(&nested.into()));
    /// let bad = jsobj! { "code": "a", "sub": [{ "code": "b", "sub": [1] }] };
    /// assert_eq!(category.validate(&bad.into())[0].to_string(), "/sub/0/sub/0: expected null or category, found 1");
    ///
    /// // The closure may return any builder, as `array_of` does.
    /// let nested = Spec::recursive(|me| array_of(me).length(..=2));
    /// assert!(nested.is_valid(&codecbus_json::jsarr![[], [[]]].into()));
    /// ```
    pub fn recursive<S: Into<Spec>>(f: impl FnOnce(Spec) -> S) -> Spec {
        Spec(Arc::new_cyclic(|me: &Weak<Node>| {
            let handle = Spec::from_kind(SpecKind::Ref(me.clone()));
            let def: Spec = f(handle).into();
            if Arc::weak_count(&def.0) > 0 {
                // The definition is itself the root of a recursive spec
                // (`recursive(|a| recursive(|b| ..))`): its references
                // now stand for this root.
                return rebind(Arc::as_ptr(&def.0), &def.0, me);
            }
            Arc::try_unwrap(def.0).unwrap_or_else(|shared| (*shared).clone())
        }))
    }
}

/// Any JSON value.
pub fn any() -> Spec {
    Spec::from_kind(SpecKind::Any)
}

/// `null` only.
pub fn null() -> Spec {
    Spec::from_kind(SpecKind::Null)
}

/// `true` or `false`.
pub fn boolean() -> Spec {
    Spec::from_kind(SpecKind::Bool)
}

/// A string; see [`StrSpec`] for its constraints.
pub fn string() -> StrSpec {
    StrSpec::default()
}

/// An integer (not a float); see [`IntSpec`] for its constraints.
pub fn integer() -> IntSpec {
    IntSpec::default()
}

/// A float (not an integer); see [`FloatSpec`] for its constraints.
pub fn float() -> FloatSpec {
    FloatSpec {
        min: Bound::Unbounded,
        max: Bound::Unbounded,
    }
}

/// An integer or a float; see [`NumberSpec`] for its constraints.
pub fn number() -> NumberSpec {
    NumberSpec {
        min: Bound::Unbounded,
        max: Bound::Unbounded,
    }
}

/// Any array.
pub fn array() -> ArraySpec {
    array_of(any())
}

/// An array whose elements all follow `items`; see [`ArraySpec`].
pub fn array_of(items: impl Into<Spec>) -> ArraySpec {
    ArraySpec {
        items: items.into(),
        min_len: 0,
        max_len: None,
        unique: false,
    }
}

/// An array of exactly as many elements as `items`, each following the
/// spec at its position; see [`TupleSpec`].
pub fn tuple(items: impl IntoSpecs) -> TupleSpec {
    TupleSpec {
        items: items.into_specs().into(),
    }
}

/// A strict object with no members yet; add them with
/// [`required`](ObjSpec::required) and [`optional`](ObjSpec::optional).
/// `object().lenient()` accepts any object.
pub fn object() -> ObjSpec {
    ObjSpec {
        fields: Vec::new(),
        strict: true,
        required: 0,
        index: FieldIndex::default(),
    }
}

/// An object used as a map whose values follow `values` (keys: any
/// string until [`keys`](MapSpec::keys) says otherwise); see [`MapSpec`].
pub fn map_of(values: impl Into<Spec>) -> MapSpec {
    MapSpec {
        keys: string().into(),
        values: values.into(),
        min_len: 0,
        max_len: None,
    }
}

/// One of a fixed set of values (JSON equality).
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::one_of_values;
/// use codecbus_json::JsValue;
///
/// let tier = one_of_values(["gold", "silver"]);
/// assert!(tier.is_valid(&JsValue::from("gold")));
/// assert_eq!(tier.validate(&JsValue::from("tin"))[0].expected(), r#"one of "gold", "silver""#);
/// ```
pub fn one_of_values<V: Into<JsValue>>(values: impl IntoIterator<Item = V>) -> Spec {
    Spec::from_kind(SpecKind::Values(
        values.into_iter().map(Into::into).collect(),
    ))
}

/// A value that follows at least one of `alternatives`, tried in order.
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::{integer, one_of, string};
/// use codecbus_json::JsValue;
///
/// let id = one_of((integer().min(1), string().length(1..)));
/// assert!(id.is_valid(&JsValue::from(7)));
/// assert!(id.is_valid(&JsValue::from("a7")));
/// assert!(!id.is_valid(&JsValue::from(0)));
/// ```
pub fn one_of(alternatives: impl IntoSpecs) -> Spec {
    Spec::from_kind(SpecKind::OneOf(alternatives.into_specs().into()))
}

/// A list of specs, for [`tuple()`] and [`one_of`]: an array or `Vec` of one
/// builder type, or a tuple (up to 12) of any builder types.
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::{boolean, integer, one_of, string, tuple};
///
/// let pair = tuple((string(), integer()));   // a tuple of different builders
/// let flags = tuple([boolean(), boolean()]); // an array of one kind
/// let either = one_of(vec![pair, flags]);    // a Vec of specs
/// # let _ = either;
/// ```
pub trait IntoSpecs {
    /// The specs, in order.
    fn into_specs(self) -> Vec<Spec>;
}

impl<S: Into<Spec>, const N: usize> IntoSpecs for [S; N] {
    fn into_specs(self) -> Vec<Spec> {
        self.into_iter().map(Into::into).collect()
    }
}

impl<S: Into<Spec>> IntoSpecs for Vec<S> {
    fn into_specs(self) -> Vec<Spec> {
        self.into_iter().map(Into::into).collect()
    }
}

macro_rules! tuple_specs {
    ($(($($t:ident),+))*) => {$(
        impl<$($t: Into<Spec>),+> IntoSpecs for ($($t,)+) {
            #[allow(non_snake_case)]
            fn into_specs(self) -> Vec<Spec> {
                let ($($t,)+) = self;
                vec![$($t.into()),+]
            }
        }
    )*};
}

tuple_specs! {
    (A)
    (A, B)
    (A, B, C)
    (A, B, C, D)
    (A, B, C, D, E)
    (A, B, C, D, E, F)
    (A, B, C, D, E, F, G)
    (A, B, C, D, E, F, G, H)
    (A, B, C, D, E, F, G, H, I)
    (A, B, C, D, E, F, G, H, I, J)
    (A, B, C, D, E, F, G, H, I, J, K)
    (A, B, C, D, E, F, G, H, I, J, K, L)
}

// ---- builders -----------------------------------------------------------------

/// Converts a range of `usize` into inclusive `(min, max)`; an empty range
/// gives `min > max`, which nothing satisfies.
fn len_bounds(range: impl RangeBounds<usize>) -> (usize, Option<usize>) {
    let min = match range.start_bound() {
        Bound::Included(&n) => n,
        Bound::Excluded(&n) => n.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let max = match range.end_bound() {
        Bound::Included(&n) => Some(n),
        Bound::Excluded(&0) => {
            // `..0`: nothing; `min = 1, max = 0` says so.
            return (min.max(1), Some(0));
        }
        Bound::Excluded(&n) => Some(n - 1),
        Bound::Unbounded => None,
    };
    (min, max)
}

fn copied(b: Bound<&f64>) -> Bound<f64> {
    match b {
        Bound::Included(&x) => Bound::Included(x),
        Bound::Excluded(&x) => Bound::Excluded(x),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl StrSpec {
    /// The number of characters (Unicode scalar values, not bytes) must be
    /// in `range`.
    #[must_use]
    pub fn length(mut self, range: impl RangeBounds<usize>) -> Self {
        (self.min_len, self.max_len) = len_bounds(range);
        self
    }

    /// The string must match the regular expression `pattern` (`regex`
    /// crate syntax; it matches anywhere unless anchored with `^...$`).
    ///
    /// For a pattern written in the code, as `Regex::new(..).unwrap()` is
    /// used for one: a pattern that comes from data goes through
    /// [`try_pattern`](StrSpec::try_pattern) instead.
    ///
    /// # Panics
    ///
    /// When `pattern` is not a valid expression or compiles to more than
    /// the `regex` crate's size limit, with a message naming the pattern
    /// and the `regex` crate's error.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::string;
    /// use codecbus_json::JsValue;
    ///
    /// let sku = string().pattern("^[a-z]{3}$");
    /// assert!(sku.is_valid(&JsValue::from("tea")));
    /// assert!(!sku.is_valid(&JsValue::from("TEA")));
    /// ```
    #[must_use]
    #[track_caller]
    pub fn pattern(self, pattern: &str) -> Self {
        match Regex::new(pattern) {
            Ok(re) => self.matching(re),
            Err(e) => panic!("invalid string pattern /{pattern}/: {e}"),
        }
    }

    /// The string must match the regular expression `pattern`, as
    /// [`pattern`](StrSpec::pattern), for a pattern that may be invalid
    /// (read from a file, given by a user).
    ///
    /// # Errors
    ///
    /// The `regex` crate's error when `pattern` is not a valid expression
    /// or compiles to more than its size limit.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::string;
    ///
    /// let from_config = "^[a-z]+$";
    /// let spec = string().try_pattern(from_config).expect("a valid pattern");
    /// # let _ = spec;
    /// assert!(string().try_pattern("(").is_err());
    /// ```
    pub fn try_pattern(self, pattern: &str) -> Result<Self, regex::Error> {
        Ok(self.matching(Regex::new(pattern)?))
    }

    /// The string must match `regex`, already compiled.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::string;
    /// use codecbus_json::JsValue;
    /// use regex::Regex;
    ///
    /// let digits = Regex::new("^[0-9]+$").unwrap();
    /// assert!(string().matching(digits).is_valid(&JsValue::from("42")));
    /// ```
    #[must_use]
    pub fn matching(mut self, regex: Regex) -> Self {
        self.pattern = Some(regex);
        self
    }
}

impl IntSpec {
    /// The value must be at least `min`.
    #[must_use]
    pub fn min(mut self, min: impl Into<JsInt>) -> Self {
        self.min = Some(min.into().as_i128());
        self
    }

    /// The value must be at most `max`.
    #[must_use]
    pub fn max(mut self, max: impl Into<JsInt>) -> Self {
        self.max = Some(max.into().as_i128());
        self
    }

    /// The value must be in `range` (`1..=100`, `0..`, `..10`); the bounds
    /// may be any integer type up to `i64` and `u64`.
    #[must_use]
    pub fn range<N: Into<JsInt> + Copy>(mut self, range: impl RangeBounds<N>) -> Self {
        let v = |n: &N| (*n).into().as_i128();
        self.min = match range.start_bound() {
            Bound::Included(n) => Some(v(n)),
            Bound::Excluded(n) => Some(v(n) + 1),
            Bound::Unbounded => None,
        };
        self.max = match range.end_bound() {
            Bound::Included(n) => Some(v(n)),
            Bound::Excluded(n) => Some(v(n) - 1),
            Bound::Unbounded => None,
        };
        self
    }
}

macro_rules! float_bounds {
    ($ty:ident) => {
        impl $ty {
            /// The value must be at least `min`.
            #[must_use]
            pub fn min(mut self, min: f64) -> Self {
                self.min = Bound::Included(min);
                self
            }

            /// The value must be at most `max`.
            #[must_use]
            pub fn max(mut self, max: f64) -> Self {
                self.max = Bound::Included(max);
                self
            }

            /// The value must be in `range` (`0.0..1.0` excludes `1.0`,
            /// `0.0..=1.0` includes it).
            #[must_use]
            pub fn range(mut self, range: impl RangeBounds<f64>) -> Self {
                self.min = copied(range.start_bound());
                self.max = copied(range.end_bound());
                self
            }
        }
    };
}

float_bounds!(FloatSpec);
float_bounds!(NumberSpec);

impl ArraySpec {
    /// The number of elements must be in `range`.
    #[must_use]
    pub fn length(mut self, range: impl RangeBounds<usize>) -> Self {
        (self.min_len, self.max_len) = len_bounds(range);
        self
    }

    /// No two elements may be equal (JSON equality: `1` and `1.0` are).
    #[must_use]
    pub fn unique(mut self) -> Self {
        self.unique = true;
        self
    }
}

impl MapSpec {
    /// Every key, as a JSON string, must follow `keys` (typically a
    /// [`string`] with a pattern or a length).
    #[must_use]
    pub fn keys(mut self, keys: impl Into<Spec>) -> Self {
        self.keys = keys.into();
        self
    }

    /// The number of members must be in `range`.
    #[must_use]
    pub fn length(mut self, range: impl RangeBounds<usize>) -> Self {
        (self.min_len, self.max_len) = len_bounds(range);
        self
    }
}

impl ObjSpec {
    fn field(mut self, key: impl Into<Arc<str>>, spec: impl Into<Spec>, required: bool) -> Self {
        let field = Field {
            key: key.into(),
            spec: spec.into(),
            required,
        };
        match self.fields.binary_search_by(|f| f.key.cmp(&field.key)) {
            Ok(i) => {
                if self.fields[i].required {
                    self.required -= 1;
                }
                self.fields[i] = field;
            }
            Err(i) => self.fields.insert(i, field),
        }
        if required {
            self.required += 1;
        }
        self.index = FieldIndex::rebuild(&self.fields);
        self
    }

    /// A member that must be present and follow `spec`. Naming a key again
    /// replaces its earlier definition.
    #[must_use]
    pub fn required(self, key: impl Into<Arc<str>>, spec: impl Into<Spec>) -> Self {
        self.field(key, spec, true)
    }

    /// A member that may be absent, and follows `spec` when present.
    /// Naming a key again replaces its earlier definition.
    #[must_use]
    pub fn optional(self, key: impl Into<Arc<str>>, spec: impl Into<Spec>) -> Self {
        self.field(key, spec, false)
    }

    /// Members other than the named ones are accepted, with any value.
    #[must_use]
    pub fn lenient(mut self) -> Self {
        self.strict = false;
        self
    }

    /// Members other than the named ones are rejected (the default).
    #[must_use]
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }
}

macro_rules! into_spec {
    ($($ty:ident => $kind:ident),*) => {$(
        impl From<$ty> for Spec {
            fn from(s: $ty) -> Spec {
                Spec::from_kind(SpecKind::$kind(s))
            }
        }

        impl $ty {
            /// As [`Spec::nullable`].
            #[must_use]
            pub fn nullable(self) -> Spec {
                Spec::from(self).nullable()
            }

            /// As [`Spec::check`].
            #[must_use]
            pub fn check<F>(self, message: impl Into<Arc<str>>, test: F) -> Spec
            where
                F: Fn(&JsValue) -> bool + Send + Sync + 'static,
            {
                Spec::from(self).check(message, test)
            }

            /// As [`Spec::named`].
            #[must_use]
            pub fn named(self, name: impl Into<Arc<str>>) -> Spec {
                Spec::from(self).named(name)
            }
        }
    )*};
}

into_spec!(
    StrSpec => Str,
    IntSpec => Int,
    FloatSpec => Float,
    NumberSpec => Number,
    ArraySpec => Array,
    TupleSpec => Tuple,
    ObjSpec => Object,
    MapSpec => Map
);
