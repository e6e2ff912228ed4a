//! Specs: descriptions of JSON values, checked against built values or
//! while parsing and decoding.
//!
//! A [`Spec`] says what a value must be: its type, its constraints, and
//! the specs of its members and elements, nested to any depth.
//!
//! | builder | accepts |
//! |---|---|
//! | [`any`], [`null`], [`boolean`] | any value; `null`; `true` or `false` |
//! | [`string`] | a string; [length](StrSpec::length) in characters, [pattern](StrSpec::pattern) (`regex` crate) |
//! | [`integer`] | an integer in the whole `i64` and `u64` range; [range](IntSpec::range) |
//! | [`float`], [`number`] | a float; an integer or a float; [range](NumberSpec::range) |
//! | [`one_of_values`] | one of a fixed set of values |
//! | [`array()`], [`array_of`] | an array; of elements following a spec; [length](ArraySpec::length), [unique](ArraySpec::unique) |
//! | [`tuple()`] | an array of fixed length, each position with its spec |
//! | [`object`], [`jsobj_spec!`](crate::jsobj_spec) | an object with required and optional members, [strict](ObjSpec::strict) or [lenient](ObjSpec::lenient) |
//! | [`map_of`] | an object whose keys follow one spec and values another |
//! | [`one_of`] | a value following at least one of several specs |
//! | [`Spec::recursive`] | a spec that contains itself (a tree whose children are trees) |
//!
//! Every spec can be made [`nullable`](Spec::nullable), given a user
//! predicate with its own message ([`check`](Spec::check)) and a
//! [name](Spec::named).
//!
//! # Writing a spec
//!
//! [`jsobj_spec!`](crate::jsobj_spec) reads like the object it describes
//! (`"key"?:` marks an optional member, a final `..` allows other
//! members); the builder functions compose the same specs in code.
//!
//! ```
//! use codecbus_json::spec::{array_of, integer, object, string, Spec};
//! use codecbus_json::{jsobj, jsobj_spec};
//!
//! let with_macro = jsobj_spec! {
//!     "sku": string().length(1..=16),
//!     "qty": integer().range(1..=100),
//!     "tags"?: array_of(string()).unique(),
//! };
//! let with_builder: Spec = object()
//!     .required("sku", string().length(1..=16))
//!     .required("qty", integer().range(1..=100))
//!     .optional("tags", array_of(string()).unique())
//!     .into();
//!
//! let item = jsobj! { "sku": "tea", "qty": 2 }.into();
//! assert!(with_macro.is_valid(&item));
//! assert!(with_builder.is_valid(&item));
//! ```
//!
//! # Validating a value
//!
//! [`Spec::validate`] returns every [`Violation`], each with the JSON
//! Pointer (RFC 6901) of where it is, what was expected and what was
//! found; [`Spec::is_valid`] stops at the first.
//!
//! ```
//! use codecbus_json::spec::{integer, string};
//! use codecbus_json::{jsobj, jsobj_spec};
//!
//! let spec = jsobj_spec! { "a/b": integer().max(9), "name": string() };
//! let value = jsobj! { "a/b": 10, "extra": true }.into();
//! let found: Vec<String> = spec.validate(&value).iter().map(|v| v.to_string()).collect();
//! assert_eq!(found, [
//!     "/a~1b: expected integer <= 9, found 10",
//!     "/extra: expected no such member (the object is strict), found true",
//!     "/name: expected string, found nothing",
//! ]);
//! assert!(!spec.is_valid(&value));
//! ```
//!
//! Where violations are reported: a missing member at the member's
//! pointer (found: `nothing`), a member a strict object does not name at
//! that member, a length at the container, a duplicate at the later
//! element. Nothing below a value of the wrong type is examined; a
//! [`one_of`] that no alternative accepts is one violation at its own
//! place; user checks run only on values that passed the rest of their
//! spec, and a `null` accepted by [`nullable`](Spec::nullable) is not
//! checked further.
//!
//! # Checking while parsing and decoding
//!
//! [`Spec::parse`] (JSON text) and [`Spec::decode`] (MessagePack) check the
//! spec in the same pass that builds the value, each value as soon as it is
//! complete: the first violation stops the work and is returned with its
//! pointer, and a value that does not conform is never built. It is one of
//! the violations `validate` would report on the same value. The plain
//! parser's and decoder's rules and limits (nesting depth, declared
//! lengths, allocation budget) apply unchanged, and their errors are
//! reported as they are by [`JsValue::parse`] and the [`JsValue`] codec.
//!
//! ```
//! use codecbus_json::spec::{float, tuple, SpecParseError};
//! use codecbus_json::jsobj_spec;
//!
//! let spec = jsobj_spec! { "name": codecbus_json::spec::string(), "at": tuple((float(), float())) };
//! assert!(spec.parse(r#"{"name": "x", "at": [1.5, 2.5]}"#).is_ok());
//! match spec.parse(r#"{"name": "x", "at": [1.5, 2.5, 3.5]}"#) {
//!     Err(SpecParseError::Invalid(v)) => {
//!         assert_eq!(v.to_string(), "/at: expected array of exactly 2 items, found an array of 3 items");
//!     }
//!     other => panic!("{other:?}"),
//! }
//! ```
//!
//! A value a `one_of` must see whole is built plainly and then checked as
//! `validate` checks it; so are values a spec does not describe (under
//! [`any`], the other members of a lenient object).
//!
//! # Recursive specs
//!
//! [`Spec::recursive`] hands its closure a handle standing for the spec
//! being defined; the handle is followed lazily when a value nests. A
//! recursive spec named, made nullable or checked is the spec its handle
//! stands for: nested levels follow the modifiers too.
//!
//! ```
//! use codecbus_json::spec::{array_of, integer, Spec};
//! use codecbus_json::jsobj_spec;
//!
//! let tree = Spec::recursive(|tree| jsobj_spec! { "value": integer(), "children": array_of(tree) });
//! let text = r#"{"value": 1, "children": [{"value": 2, "children": []}, {"value": "3", "children": []}]}"#;
//! let err = tree.parse(text).unwrap_err();
//! assert_eq!(err.violation().unwrap().pointer(), "/children/1/value");
//! ```

mod builders;
mod check;
mod construct;
mod decode;
pub(crate) mod describe;
mod error;
#[cfg(feature = "proptest")]
#[cfg_attr(docsrs, doc(cfg(feature = "proptest")))]
#[path = "gen/mod.rs"]
pub mod generators;
mod macros;
mod model;
mod parse;
mod rebind;
#[cfg(feature = "schema")]
#[cfg_attr(docsrs, doc(cfg(feature = "schema")))]
pub mod schema;
mod validate;

pub use self::construct::{
    IntoSpecs, any, array, array_of, boolean, float, integer, map_of, null, number, object, one_of,
    one_of_values, string, tuple,
};
pub use self::model::{
    ArraySpec, FloatSpec, IntSpec, MapSpec, NumberSpec, ObjSpec, Spec, StrSpec, TupleSpec,
};
#[allow(unused_imports)] // the model's internals, for sibling modules
pub(crate) use self::model::{Check, Field, Node, SpecKind};

pub use self::error::{SpecDecodeError, SpecParseError, Violation};

use codecbus_core::{DecodeErrorKind, DecodeLimits, Reader};

use crate::tree::JsValue;

impl Spec {
    /// Parses JSON text and checks it against this spec in the same pass:
    /// each value is checked as soon as it is read, and the first violation
    /// stops the parse, so a value that does not conform is never built.
    ///
    /// The plain parser's rules and limits apply as in
    /// [`JsValue::parse`]. A member that appears twice is checked each
    /// time (and, as in `JsValue::parse`, the last value is kept).
    ///
    /// # Errors
    ///
    /// [`SpecParseError::Json`] for text that is not JSON,
    /// [`SpecParseError::Invalid`] with the first violation (the one
    /// reached first in the text; [`validate`](Spec::validate) on the
    /// parsed value would report it too, unless it is in an earlier copy
    /// of a repeated member, which the value does not keep).
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::{array_of, integer, SpecParseError};
    /// use codecbus_json::{jsobj_spec, JsValue};
    ///
    /// let spec = jsobj_spec! { "items": array_of(jsobj_spec! { "qty": integer().range(1..=100) }) };
    /// let v = spec.parse(r#"{"items": [{"qty": 5}]}"#).unwrap();
    /// assert_eq!(v.pointer("/items/0/qty").unwrap(), &JsValue::from(5));
    ///
    /// let err = spec.parse(r#"{"items": [{"qty": 5}, {"qty": 500}, {"qty": "x"}]}"#).unwrap_err();
    /// let violation = err.violation().unwrap();
    /// assert_eq!(violation.pointer(), "/items/1/qty");
    /// assert_eq!(violation.found(), "500");
    /// assert!(matches!(spec.parse("{"), Err(SpecParseError::Json(_))));
    /// ```
    pub fn parse(&self, text: &str) -> Result<JsValue, SpecParseError> {
        parse::parse_with(self.node(), serde_json::de::StrRead::new(text))
    }

    /// [`parse`](Spec::parse) for UTF-8 bytes.
    ///
    /// # Errors
    ///
    /// As [`parse`](Spec::parse); bytes that are not UTF-8 are a
    /// [`SpecParseError::Json`].
    pub fn parse_slice(&self, bytes: &[u8]) -> Result<JsValue, SpecParseError> {
        parse::parse_with(self.node(), serde_json::de::SliceRead::new(bytes))
    }

    /// Decodes MessagePack (as the [`JsValue`] codec writes it) and checks
    /// it against this spec in the same pass: the first violation stops the
    /// decode, so a value that does not conform is never built. The default
    /// [`DecodeLimits`] apply, as in `codecbus_core::from_slice`.
    ///
    /// # Errors
    ///
    /// [`SpecDecodeError::Decode`] as the plain decoder reports it
    /// (truncation, limits, types outside JSON, trailing bytes);
    /// [`SpecDecodeError::Invalid`] with the first violation. As in
    /// [`parse`](Spec::parse), every copy of a repeated key is checked,
    /// while the decoded value keeps the last.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::{integer, string};
    /// use codecbus_json::{jsobj, jsobj_spec, JsValue};
    /// use codecbus_core::to_vec;
    ///
    /// let spec = jsobj_spec! { "name": string(), "age": integer().min(0) };
    /// let ok = to_vec(&jsobj! { "name": "Ada", "age": 36 }).unwrap();
    /// assert_eq!(spec.decode(&ok).unwrap().pointer("/age").unwrap(), &JsValue::from(36));
    ///
    /// let bad = to_vec(&jsobj! { "name": "Ada", "age": -1 }).unwrap();
    /// let err = spec.decode(&bad).unwrap_err();
    /// assert_eq!(err.violation().unwrap().to_string(), "/age: expected integer >= 0, found -1");
    /// ```
    pub fn decode(&self, bytes: &[u8]) -> Result<JsValue, SpecDecodeError> {
        self.decode_with_limits(bytes, DecodeLimits::default())
    }

    /// [`decode`](Spec::decode) with explicit limits.
    ///
    /// # Errors
    ///
    /// As [`decode`](Spec::decode).
    pub fn decode_with_limits(
        &self,
        bytes: &[u8],
        limits: DecodeLimits,
    ) -> Result<JsValue, SpecDecodeError> {
        let mut r = Reader::with_limits(bytes, limits);
        let v = self.decode_from(&mut r)?;
        if !r.is_empty() {
            return Err(r
                .error(DecodeErrorKind::TrailingBytes(r.remaining()))
                .into());
        }
        Ok(v)
    }

    /// Decodes one value from `r` against this spec, leaving the reader
    /// after it: for hand-written codecs that hold a JSON value checked
    /// against a spec.
    ///
    /// # Errors
    ///
    /// As [`decode`](Spec::decode), without the trailing-bytes check.
    pub fn decode_from(&self, r: &mut Reader<'_>) -> Result<JsValue, SpecDecodeError> {
        let mut c = decode::DecodeCtx::new();
        decode::value(r, self.node(), &mut c, None).map_err(|e| match c.ctx.take() {
            Some(v) => SpecDecodeError::Invalid(v),
            None => SpecDecodeError::Decode(e),
        })
    }

    /// Every violation of this spec by `value`, in document order within
    /// each container (object members in key order); empty when the value
    /// conforms.
    ///
    /// Below a value of the wrong kind nothing more is reported; a
    /// [`one_of`] that no alternative accepts is one violation at its own
    /// place; user checks run only on values that passed the rest of the
    /// spec.
    pub fn validate(&self, value: &JsValue) -> Vec<Violation> {
        let mut w = validate::Walker::new(true);
        let _ = w.walk(self.node(), value, None);
        w.out
    }

    /// Whether `value` conforms to this spec; stops at the first violation
    /// and allocates nothing when the value conforms.
    pub fn is_valid(&self, value: &JsValue) -> bool {
        validate::conforms(self.node(), value, None)
    }
}

/// The builders check values as the spec they build does.
macro_rules! builder_checks {
    ($($ty:ident),*) => {$(
        impl $ty {
            /// As [`Spec::validate`].
            pub fn validate(&self, value: &JsValue) -> Vec<Violation> {
                Spec::from(self.clone()).validate(value)
            }

            /// As [`Spec::is_valid`].
            pub fn is_valid(&self, value: &JsValue) -> bool {
                Spec::from(self.clone()).is_valid(value)
            }
        }
    )*};
}

builder_checks!(
    StrSpec, IntSpec, FloatSpec, NumberSpec, ArraySpec, TupleSpec, ObjSpec, MapSpec
);
