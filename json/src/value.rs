//! `JsValue`, its conversions, and JSON equality and hashing.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::number::{self, JsInt};
use crate::tree::{JsArray, JsObj, JsValue};

impl JsValue {
    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, JsValue::Null)
    }

    /// Whether this is an integer or a float.
    pub fn is_number(&self) -> bool {
        matches!(self, JsValue::Int(_) | JsValue::Float(_))
    }

    /// Whether this is an array or an object.
    pub fn is_container(&self) -> bool {
        matches!(self, JsValue::Array(_) | JsValue::Object(_))
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            JsValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The integer, if this is an integer or a float holding one exactly.
    ///
    /// ```
    /// use codecbus_json::{JsInt, JsValue};
    ///
    /// assert_eq!(JsValue::from(2.0).as_int(), Some(JsInt::from(2)));
    /// assert_eq!(JsValue::from(2.5).as_int(), None);
    /// ```
    pub fn as_int(&self) -> Option<JsInt> {
        match self {
            JsValue::Int(i) => Some(*i),
            JsValue::Float(f) => JsInt::from_f64_exact(*f),
            _ => None,
        }
    }

    /// The number as an `i64`, if it is an integer (or integral float) that
    /// fits.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_int().and_then(JsInt::as_i64)
    }

    /// The number as a `u64`, if it is a non-negative integer (or integral
    /// float) that fits.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_int().and_then(JsInt::as_u64)
    }

    /// The number as an `f64` (integers beyond 2^53 may round).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            JsValue::Int(i) => Some(i.as_f64()),
            JsValue::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            JsValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&JsArray> {
        match self {
            JsValue::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&JsObj> {
        match self {
            JsValue::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The array, if this is one; otherwise the value back.
    ///
    /// # Errors
    ///
    /// `Err(self)` when this is not an array.
    pub fn into_array(self) -> Result<JsArray, JsValue> {
        match self {
            JsValue::Array(a) => Ok(a),
            other => Err(other),
        }
    }

    /// The object, if this is one; otherwise the value back.
    ///
    /// # Errors
    ///
    /// `Err(self)` when this is not an object.
    pub fn into_object(self) -> Result<JsObj, JsValue> {
        match self {
            JsValue::Object(o) => Ok(o),
            other => Err(other),
        }
    }

    /// A lowercase name of the value's type, for messages: `"null"`,
    /// `"boolean"`, `"integer"`, `"float"`, `"string"`, `"array"`, `"object"`.
    pub fn type_name(&self) -> &'static str {
        match self {
            JsValue::Null => "null",
            JsValue::Bool(_) => "boolean",
            JsValue::Int(_) => "integer",
            JsValue::Float(_) => "float",
            JsValue::Str(_) => "string",
            JsValue::Array(_) => "array",
            JsValue::Object(_) => "object",
        }
    }

    /// Whether both values share storage (then they are equal without
    /// comparing contents). Always `false` for scalars other than strings.
    pub fn ptr_eq(&self, other: &Self) -> bool {
        match (self, other) {
            (JsValue::Str(a), JsValue::Str(b)) => Arc::ptr_eq(a, b),
            (JsValue::Array(a), JsValue::Array(b)) => a.ptr_eq(b),
            (JsValue::Object(a), JsValue::Object(b)) => a.ptr_eq(b),
            _ => false,
        }
    }
}

// ---- equality and hashing ------------------------------------------------

impl PartialEq for JsValue {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (JsValue::Null, JsValue::Null) => true,
            (JsValue::Bool(a), JsValue::Bool(b)) => a == b,
            (JsValue::Int(a), JsValue::Int(b)) => a == b,
            (JsValue::Float(a), JsValue::Float(b)) => number::float_eq(*a, *b),
            (JsValue::Int(i), JsValue::Float(f)) | (JsValue::Float(f), JsValue::Int(i)) => {
                number::int_eq_float(*i, *f)
            }
            (JsValue::Str(a), JsValue::Str(b)) => a == b,
            (JsValue::Array(a), JsValue::Array(b)) => a == b,
            (JsValue::Object(a), JsValue::Object(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for JsValue {}

impl Hash for JsValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // One tag per JSON type; both number variants share one.
        match self {
            JsValue::Null => state.write_u8(0),
            JsValue::Bool(b) => {
                state.write_u8(1);
                b.hash(state);
            }
            JsValue::Int(i) => {
                state.write_u8(2);
                i.hash_as_number(state);
            }
            JsValue::Float(f) => {
                state.write_u8(2);
                number::hash_float(*f, state);
            }
            JsValue::Str(s) => {
                state.write_u8(3);
                s.hash(state);
            }
            JsValue::Array(a) => {
                state.write_u8(4);
                a.hash(state);
            }
            JsValue::Object(o) => {
                state.write_u8(5);
                o.hash(state);
            }
        }
    }
}

impl PartialEq for JsArray {
    fn eq(&self, other: &Self) -> bool {
        self.ptr_eq(other) || (self.len() == other.len() && self.iter().eq(other.iter()))
    }
}

impl Eq for JsArray {}

impl Hash for JsArray {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for v in self {
            v.hash(state);
        }
    }
}

impl PartialEq for JsObj {
    fn eq(&self, other: &Self) -> bool {
        // Both sides iterate in key order, so member order never matters.
        self.ptr_eq(other) || (self.len() == other.len() && self.iter().eq(other.iter()))
    }
}

impl Eq for JsObj {}

impl Hash for JsObj {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for (k, v) in self {
            k.hash(state);
            v.hash(state);
        }
    }
}

// ---- conversions into JsValue ---------------------------------------------

impl From<bool> for JsValue {
    fn from(b: bool) -> Self {
        JsValue::Bool(b)
    }
}

macro_rules! from_int {
    ($($ty:ty),*) => {$(
        impl From<$ty> for JsValue {
            #[inline]
            fn from(v: $ty) -> Self {
                JsValue::Int(JsInt::from(v))
            }
        }
    )*};
}
from_int!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl From<JsInt> for JsValue {
    fn from(i: JsInt) -> Self {
        JsValue::Int(i)
    }
}

impl From<f64> for JsValue {
    fn from(f: f64) -> Self {
        JsValue::Float(f)
    }
}

impl From<f32> for JsValue {
    fn from(f: f32) -> Self {
        JsValue::Float(f as f64)
    }
}

impl From<&str> for JsValue {
    fn from(s: &str) -> Self {
        JsValue::Str(Arc::from(s))
    }
}

impl From<&String> for JsValue {
    fn from(s: &String) -> Self {
        JsValue::Str(Arc::from(s.as_str()))
    }
}

impl From<String> for JsValue {
    fn from(s: String) -> Self {
        JsValue::Str(Arc::from(s))
    }
}

impl From<Box<str>> for JsValue {
    fn from(s: Box<str>) -> Self {
        JsValue::Str(Arc::from(s))
    }
}

impl From<Arc<str>> for JsValue {
    fn from(s: Arc<str>) -> Self {
        JsValue::Str(s)
    }
}

impl From<char> for JsValue {
    fn from(c: char) -> Self {
        JsValue::Str(Arc::from(c.encode_utf8(&mut [0; 4]) as &str))
    }
}

impl From<()> for JsValue {
    fn from((): ()) -> Self {
        JsValue::Null
    }
}

impl From<JsArray> for JsValue {
    fn from(a: JsArray) -> Self {
        JsValue::Array(a)
    }
}

impl From<JsObj> for JsValue {
    fn from(o: JsObj) -> Self {
        JsValue::Object(o)
    }
}

impl From<&JsValue> for JsValue {
    fn from(v: &JsValue) -> Self {
        v.clone()
    }
}

/// `None` becomes `null`.
impl<T: Into<JsValue>> From<Option<T>> for JsValue {
    fn from(v: Option<T>) -> Self {
        v.map_or(JsValue::Null, Into::into)
    }
}

impl<T: Into<JsValue>> From<Vec<T>> for JsValue {
    fn from(v: Vec<T>) -> Self {
        JsValue::Array(JsArray::from(v))
    }
}

impl<T: Into<JsValue> + Clone> From<&[T]> for JsValue {
    fn from(v: &[T]) -> Self {
        JsValue::Array(JsArray::from(v))
    }
}

impl<T: Into<JsValue>, const N: usize> From<[T; N]> for JsValue {
    fn from(v: [T; N]) -> Self {
        JsValue::Array(JsArray::from(v))
    }
}

/// Collects into an array.
impl<T: Into<JsValue>> FromIterator<T> for JsValue {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        JsValue::Array(iter.into_iter().collect())
    }
}

/// Fails for integers outside `i64::MIN ..= u64::MAX`.
impl TryFrom<i128> for JsValue {
    type Error = number::JsIntRangeError;
    fn try_from(v: i128) -> Result<Self, Self::Error> {
        JsInt::try_from(v).map(JsValue::Int)
    }
}

/// Fails for integers above `u64::MAX`.
impl TryFrom<u128> for JsValue {
    type Error = number::JsIntRangeError;
    fn try_from(v: u128) -> Result<Self, Self::Error> {
        JsInt::try_from(v).map(JsValue::Int)
    }
}

// ---- comparisons with Rust scalars ----------------------------------------

impl PartialEq<str> for JsValue {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for JsValue {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<bool> for JsValue {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

impl PartialEq<i64> for JsValue {
    fn eq(&self, other: &i64) -> bool {
        number_eq(self, JsInt::from(*other))
    }
}

impl PartialEq<u64> for JsValue {
    fn eq(&self, other: &u64) -> bool {
        number_eq(self, JsInt::from(*other))
    }
}

fn number_eq(v: &JsValue, i: JsInt) -> bool {
    match v {
        JsValue::Int(n) => *n == i,
        JsValue::Float(f) => number::int_eq_float(i, *f),
        _ => false,
    }
}

impl PartialEq<f64> for JsValue {
    fn eq(&self, other: &f64) -> bool {
        match self {
            JsValue::Int(i) => number::int_eq_float(*i, *other),
            JsValue::Float(f) => number::float_eq(*f, *other),
            _ => false,
        }
    }
}

impl PartialEq<JsObj> for JsValue {
    fn eq(&self, other: &JsObj) -> bool {
        self.as_object() == Some(other)
    }
}

impl PartialEq<JsArray> for JsValue {
    fn eq(&self, other: &JsArray) -> bool {
        self.as_array() == Some(other)
    }
}
