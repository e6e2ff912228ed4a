//! The types of a JSON value: [`JsValue`] and its containers, [`JsArray`]
//! and [`JsObj`], defined together because each holds the others. Their
//! operations are in `value.rs`, `array.rs` and `object.rs`, which also
//! say how the containers' representations are chosen.

use std::sync::Arc;

use imbl::{OrdMap, Vector};

use crate::number::JsInt;

/// An immutable JSON value.
///
/// Cloning is O(1) whatever the size: strings, arrays and objects are
/// shared, never copied. Updates return new values that share everything
/// they did not change (see [`JsObj`], [`JsArray`] and the path methods
/// such as [`set_in`](Self::set_in)).
///
/// Equality is JSON equality: object member order never matters (members
/// are kept sorted) and numbers compare by value, exactly, so `1 == 1.0`
/// but `2^53 + 1 != 2^53 as f64`. [`Hash`] agrees with it.
///
/// # Examples
///
/// ```
/// use codecbus_json::JsValue;
/// use codecbus_json::{jsarr, jsobj};
///
/// let v = JsValue::from(jsobj! { "tags": ["a", "b"], "n": 1 });
/// assert_eq!(v, JsValue::from(jsobj! { "n": 1.0, "tags": jsarr!["a", "b"] }));
/// assert_eq!(v.to_string(), r#"{"n":1,"tags":["a","b"]}"#);
/// ```
#[derive(Clone, Default)]
pub enum JsValue {
    /// JSON `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer in `i64::MIN ..= u64::MAX`.
    Int(JsInt),
    /// A floating-point number. JSON text has no NaN or infinities: printing
    /// one writes `null` (as `serde_json` does); MessagePack carries them.
    Float(f64),
    /// A string, shared.
    Str(Arc<str>),
    /// An array.
    Array(JsArray),
    /// An object.
    Object(JsObj),
}

/// An immutable JSON array: O(1) clone, structural sharing on update.
///
/// `&self` methods such as [`set`](Self::set) and
/// [`appended`](Self::appended) return a new array and leave `self`
/// unchanged. `&mut self` methods such as [`push`](Self::push) change only
/// this handle: other clones of the array never see the change.
///
/// # Examples
///
/// ```
/// use codecbus_json::{JsArray, jsarr};
///
/// let a = jsarr![1, "two", null];
/// let b = a.set(5, true); // pads with nulls
/// assert_eq!(a.len(), 3);
/// assert_eq!(b.to_string(), r#"[1,"two",null,null,null,true]"#);
///
/// let mut c = a.clone();
/// c.push(4.5);
/// assert_eq!(a, jsarr![1, "two", null]); // the clone's push did not touch `a`
/// assert_eq!(c.len(), 4);
/// ```
#[derive(Clone)]
pub struct JsArray(pub(crate) ArrayRepr);

/// See `array.rs`.
#[derive(Clone)]
pub(crate) enum ArrayRepr {
    Small(Arc<[JsValue]>),
    Large(Arc<Vector<JsValue>>),
}

/// An object member: its key and value.
pub(crate) type Member = (Arc<str>, JsValue);

/// An immutable JSON object: O(1) clone, structural sharing on update,
/// members always in key order.
///
/// `&self` methods such as [`set`](Self::set) and
/// [`without`](Self::without) return a new object and leave `self`
/// unchanged. `&mut self` methods such as [`insert`](Self::insert) change
/// only this handle: other clones of the object never see the change.
///
/// # Examples
///
/// ```
/// use codecbus_json::jsobj;
///
/// let a = jsobj! { "name": "Ada", "born": 1815 };
/// let b = a.set("died", 1852).without("born");
/// assert_eq!(a.to_string(), r#"{"born":1815,"name":"Ada"}"#);
/// assert_eq!(b.to_string(), r#"{"died":1852,"name":"Ada"}"#);
/// ```
#[derive(Clone)]
pub struct JsObj(pub(crate) ObjRepr);

/// See `object.rs`.
#[derive(Clone)]
pub(crate) enum ObjRepr {
    Small(Arc<[Member]>),
    Large(Arc<OrdMap<Arc<str>, JsValue>>),
}
