//! Making specs: [`Spec`]'s constructors and modifiers (including
//! [`Spec::recursive`]) and the functions that start each kind of spec.

use std::ops::Bound;
use std::sync::{Arc, Weak};

use super::model::{
    ArraySpec, Check, FieldIndex, FloatSpec, IntSpec, MapSpec, Node, NumberSpec, ObjSpec, Spec,
    SpecKind, StrSpec, TupleSpec,
};
use super::rebind::rebind;
use crate::tree::JsValue;

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
