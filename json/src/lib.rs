//! The immutable JSON value: [`JsValue`], [`JsObj`] and [`JsArray`] on
//! persistent collections, the Rust counterpart of the Java library
//! json-values, with MessagePack codecs for codecbus.
//!
//! The facade crate `codecbus` re-exports this crate as `codecbus::json`,
//! and its macros as `codecbus::jsobj!` and `codecbus::jsarr!`.
//!
//! Every value is immutable and cheap to share. Cloning any of them is O(1)
//! whatever its size, and an update returns a new value that shares
//! everything it did not change with the old one, which stays as it was.
//! That is what lets the bus hand one message to many local consumers
//! without copying it: the three types are
//! [`Immutable`](codecbus_core::Immutable) and their codecs' `transform`
//! returns the same allocation.
//!
//! ```
//! use codecbus_json::{JsObj, JsPath, JsValue};
//! use codecbus_core::{from_slice, to_vec, MessageCodec};
//! use codecbus_json::jsobj;
//! use std::sync::Arc;
//!
//! // Build
//! let order = jsobj! {
//!     "id": 7,
//!     "customer": { "name": "Ada", "tier": "gold" },
//!     "items": [{ "sku": "tea", "qty": 2 }],
//! };
//!
//! // Read
//! let qty = JsPath::root().key("items").index(0).key("qty");
//! assert_eq!(order.get_in(&qty), Some(&JsValue::from(2)));
//! assert_eq!(order.get("missing"), None);
//!
//! // Update: a new object; `order` is unchanged
//! let more = order.set_in(&qty, 3).set("status", "paid");
//! assert_eq!(order.get_in(&qty), Some(&JsValue::from(2)));
//! assert_eq!(more.get_in(&qty), Some(&JsValue::from(3)));
//!
//! // Send: MessagePack both ways, and zero-copy local delivery
//! let bytes = to_vec(&more).unwrap();
//! assert_eq!(from_slice::<JsObj>(&bytes).unwrap(), more);
//! let body = Arc::new(more);
//! assert!(Arc::ptr_eq(&JsObj::transform(&body), &body));
//! ```
//!
//! # Building values
//!
//! [`jsobj!`](crate::jsobj) and [`jsarr!`](crate::jsarr) take JSON-like
//! literals whose values are any Rust expressions; `From` converts Rust
//! scalars, strings, `Option`, `Vec` and arrays; `FromIterator` collects
//! pairs into an object and values into an array; [`JsValue::parse`] reads
//! JSON text.
//!
//! ```
//! use codecbus_json::{JsArray, JsObj, JsValue};
//! use codecbus_json::{jsarr, jsobj};
//!
//! let a: JsArray = (1..=3).collect();
//! let o: JsObj = [("x", 1), ("y", 2)].into_iter().collect();
//! assert_eq!(a, jsarr![1, 2, 3]);
//! assert_eq!(o, jsobj! { "y": 2, "x": 1 });
//! assert_eq!(JsValue::from(Some("s")), JsValue::from("s"));
//! assert_eq!(JsValue::from(None::<i32>), JsValue::Null);
//! assert_eq!(JsValue::parse(r#"{"x":1,"y":2}"#).unwrap(), o);
//! ```
//!
//! Integers keep the whole `i64` and `u64` range ([`JsInt`]); floats are
//! `f64`. Nothing converts one into the other silently: `1` parses as an
//! integer and `1.0` as a float, and both print back as they were.
//!
//! # Reading: "nothing" is not `null`
//!
//! Lookups return `Option`: `None` means there is nothing at that key,
//! index or path, while a JSON `null` is `Some(&JsValue::Null)`.
//!
//! ```
//! use codecbus_json::JsValue;
//! use codecbus_json::jsobj;
//!
//! let v = JsValue::from(jsobj! { "a": null });
//! assert_eq!(v.pointer("/a"), Some(&JsValue::Null));
//! assert_eq!(v.pointer("/b"), None);
//! assert_eq!(v.pointer("/a/b"), None);
//! ```
//!
//! # Paths
//!
//! A [`JsPath`] is built with a typed builder or parsed from JSON Pointer
//! text (RFC 6901: `~1` stands for `/`, `~0` for `~`). Resolution follows
//! the RFC: on an object every segment names a member; on an array a
//! segment must be a canonical index, and `-` names the slot after the
//! last element (so `set_in` with `/list/-` appends).
//!
//! ```
//! use codecbus_json::{JsPath, JsValue};
//!
//! // The examples of RFC 6901, section 5
//! let doc = JsValue::parse(r#"{
//!     "foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3,
//!     "g|h": 4, "i\\j": 5, "k\"l": 6, " ": 7, "m~n": 8
//! }"#).unwrap();
//! assert_eq!(doc.pointer(""), Some(&doc));
//! assert_eq!(doc.pointer("/foo/0"), Some(&JsValue::from("bar")));
//! assert_eq!(doc.pointer("/a~1b"), Some(&JsValue::from(1)));
//! assert_eq!(doc.pointer("/m~0n"), Some(&JsValue::from(8)));
//! assert_eq!(doc.pointer("/ "), Some(&JsValue::from(7)));
//!
//! let path = JsPath::root().key("foo").key("-");
//! let more = doc.set_in(&path, "qux");
//! assert_eq!(more.pointer("/foo/2"), Some(&JsValue::from("qux")));
//! ```
//!
//! # Updating
//!
//! [`set_in`](JsValue::set_in) creates missing objects and arrays on the
//! way and pads arrays with nulls; [`remove_in`](JsValue::remove_in)
//! removes a member or element; [`update_in`](JsValue::update_in) applies
//! a closure to the value at a path. [`JsObj`] and [`JsArray`] have the
//! same methods, plus key- and index-level ones ([`JsObj::set`],
//! [`JsObj::without`], [`JsArray::set`], [`JsArray::appended`]). All of
//! them copy only the containers along the path: on an object of 10 000
//! members an update touches O(log n) tree nodes, never the whole map.
//!
//! `&mut self` methods such as [`JsObj::insert`] and [`JsArray::push`]
//! exist for building values step by step; they change one handle only, so
//! a value that was shared (cloned, sent) is never affected.
//!
//! ```
//! use codecbus_json::{JsPath, JsValue};
//! use codecbus_json::jsobj;
//!
//! let v = JsValue::from(jsobj! { "a": { "n": 1 } });
//! let path: JsPath = "/a/list/1".parse().unwrap();
//! let w = v.set_in(&path, true);
//! assert_eq!(w.to_string(), r#"{"a":{"list":[null,true],"n":1}}"#);
//! assert_eq!(w.remove_in(&"/a/n".parse().unwrap()).to_string(), r#"{"a":{"list":[null,true]}}"#);
//! assert_eq!(v.to_string(), r#"{"a":{"n":1}}"#); // never changed
//! ```
//!
//! # Whole-value operations
//!
//! [`map_values`](JsValue::map_values), [`map_keys`](JsValue::map_keys),
//! [`filter_values`](JsValue::filter_values),
//! [`filter_keys`](JsValue::filter_keys) and [`filter`](JsValue::filter)
//! walk the whole value and give the callback each value's path;
//! [`JsObj::union`], [`JsObj::union_deep`], [`JsObj::intersection`] and
//! [`JsObj::intersection_deep`] combine objects.
//!
//! ```
//! use codecbus_json::JsValue;
//! use codecbus_json::jsobj;
//!
//! let v = JsValue::from(jsobj! { "user": { "password": "x", "name": "ada" } });
//! let redacted = v.map_values(|path, v| {
//!     if path.last().and_then(|s| s.as_key()) == Some("password") {
//!         JsValue::from("***")
//!     } else {
//!         v.clone()
//!     }
//! });
//! assert_eq!(redacted.pointer("/user/password"), Some(&JsValue::from("***")));
//! ```
//!
//! # Equality, hashing and order
//!
//! Equality is JSON equality: member order never matters, and numbers
//! compare by value, exactly (`1 == 1.0`, but `2^53 + 1` is not equal to
//! the float `2^53`). `Hash` agrees with it, so values work as keys of hash
//! maps. Object members are always kept sorted by key, so iteration,
//! printing and encoding are deterministic: equal objects built in any
//! order print and encode to the same bytes. (An integer and an equal
//! float stay distinct on the wire, as in text: `1` and `1.0`.)
//!
//! ```
//! use codecbus_json::JsValue;
//! use codecbus_core::to_vec;
//! use codecbus_json::jsobj;
//! use std::collections::HashSet;
//!
//! let a = jsobj! { "x": 1, "y": [true] };
//! let b = jsobj! { "y": [true], "x": 1.0 };
//! assert_eq!(a, b);
//! let set: HashSet<JsValue> = [a.clone().into(), b.into()].into_iter().collect();
//! assert_eq!(set.len(), 1);
//! assert_eq!(to_vec(&a).unwrap(), to_vec(&jsobj! { "y": [true], "x": 1 }).unwrap());
//! ```
//!
//! # JSON text and serde
//!
//! [`JsValue::parse`] uses `serde_json`'s parser and builds the value
//! directly (no intermediate `serde_json::Value`); errors carry the line
//! and column ([`JsParseError`]). `Display` prints compact text and `{:#}`
//! indented text. The types implement `Serialize` and `Deserialize`, so they
//! work in any serde format and as fields of serde types, and convert from
//! and into `serde_json::Value`.
//!
//! ```
//! use codecbus_json::JsValue;
//! use codecbus_json::jsarr;
//!
//! let v = JsValue::from(jsarr![1, { "a": null }]);
//! assert_eq!(format!("{v}"), r#"[1,{"a":null}]"#);
//! assert_eq!(format!("{v:#}"), "[\n  1,\n  {\n    \"a\": null\n  }\n]");
//!
//! let s: serde_json::Value = v.clone().into();
//! assert_eq!(JsValue::from(s), v);
//! ```
//!
//! # MessagePack
//!
//! `null` ↔ nil, booleans, integers in their smallest form, floats as
//! `float 64`, strings, arrays and maps (keys in sorted order). Decoding
//! honours every [`DecodeLimits`](codecbus_core::DecodeLimits) (depth,
//! declared lengths, allocation budget), accepts any integer and float form,
//! reads integer map keys as their decimal text, and rejects other key
//! types, `bin` and extension values with a type error. Duplicate keys keep
//! the last value, as when parsing text.
//!
//! | type | codec name | local delivery |
//! |---|---|---|
//! | [`JsObj`] | `json-obj-value` | shared, zero copies |
//! | [`JsArray`] | `json-array-value` | shared, zero copies |
//! | [`JsValue`] | `json-value` | shared, zero copies |
//! | `serde_json::Value` | `serde-json-value` | deep copy per consumer |
//!
//! The codecs of the first three are registered by this crate; the codec of
//! `serde_json::Value` is codecbus-core's (feature `serde-json`, on by
//! default), with the same mapping.
//!
//! # Specs
//!
//! [`spec`] describes JSON values (types, ranges, lengths, patterns,
//! required and optional members, recursion) and checks them: on a built
//! value, reporting every violation with its JSON Pointer, or while parsing
//! and decoding, stopping at the first.
//!
//! ```
//! use codecbus_json::spec::{integer, string};
//! use codecbus_json::jsobj_spec;
//!
//! let spec = jsobj_spec! { "name": string(), "age"?: integer().min(0) };
//! assert!(spec.parse(r#"{"name": "Ada", "age": 36}"#).is_ok());
//! let err = spec.parse(r#"{"name": "Ada", "age": -1}"#).unwrap_err();
//! assert_eq!(err.violation().unwrap().pointer(), "/age");
//! ```
//!
//! # `JsObj` or `serde_json::Value`?
//!
//! Choose `JsObj` (or `JsValue`) for messages that are delivered to several
//! local consumers, kept and shared between tasks, or updated a little at a
//! time: delivery and cloning cost the same for ten members or ten
//! thousand, and an update copies a path, not the document. Choose
//! `serde_json::Value` when one owner builds and mutates a document in
//! place and then drops it, or when other code already speaks
//! `serde_json::Value`; on the bus it is deep-copied for every local
//! consumer, exactly like Vert.x's `JsonObject`. Conversions both ways are
//! one `into()`.
//!
//! # Features
//!
//! | feature | what it adds |
//! |---|---|
//! | `proptest` | [`spec::generators`]: proptest strategies of arbitrary values, of values a spec accepts and of values with exactly one violation |
//! | `schema` | [`spec::schema`]: a spec exported as JSON Schema (draft 2020-12) |
//!
//! # Where next
//!
//! * [`codecbus`](https://docs.rs/codecbus), the facade, re-exports this
//!   crate as `codecbus::json`; [`codecbus-bus`](https://docs.rs/codecbus-bus)
//!   sends its values and guards consumers with its specs.
//! * The guide, in the repository's `book/` folder: its chapter "The
//!   immutable JSON value and specs" (`book/src/json.md`), with the
//!   figures against `serde_json::Value` and how they were measured.

// On docs.rs (`--cfg docsrs`), items behind a feature say which.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

mod array;
mod keys;
mod macros;
mod msgpack;
mod number;
mod object;
mod ops;
mod path;
pub mod spec;
mod text;
mod tree;
mod value;

pub use self::array::Iter as ArrayIter;
pub use self::number::{JsInt, JsIntRangeError};
pub use self::object::Iter as ObjIter;
pub use self::path::{JsPath, JsPointerError, JsPointerErrorKind, Segment};
pub use self::text::JsParseError;
pub use self::tree::{JsArray, JsObj, JsValue};
