//! `jsobj!` and `jsarr!`: JSON literals.
//!
//! Contract: values are token-munched up to the next top-level comma, so a
//! value may be any expression (`-1`, `a + b`, `x.name()`), `null`, or a
//! nested `{ ... }` object or `[ ... ]` array literal. Entries whose value
//! is a single token tree take a fast rule, so that the recursion depth
//! grows with the number of entries, not with their tokens.

/// Builds a [`JsObj`](crate::JsObj) from `key: value` pairs.
///
/// Keys are string literals or any expression convertible into
/// `Arc<str>` (`&str`, `String`); wrap a non-literal key in parentheses
/// unless it is a single identifier. Values are `null`, nested `{ ... }`
/// objects and `[ ... ]` arrays, or any expression with
/// `Into<JsValue>` (numbers, strings, booleans, `Option`, `JsObj`,
/// `JsArray`, ...). A block expression must be wrapped in parentheses, as
/// `{ ... }` means a nested object. When a key repeats, the last value
/// wins.
///
/// # Examples
///
/// ```
/// use codecbus_json::{jsarr, jsobj};
///
/// let name = "Ada";
/// let key = String::from("born");
/// let person = jsobj! {
///     "name": name,
///     (key): 1815,
///     "languages": ["en", "fr"],
///     "address": { "city": "London", "zip": null },
///     "balance": -12.5,
///     "tags": jsarr![],
/// };
/// assert_eq!(
///     person.to_string(),
///     r#"{"address":{"city":"London","zip":null},"balance":-12.5,"born":1815,"languages":["en","fr"],"name":"Ada","tags":[]}"#
/// );
/// ```
#[macro_export]
macro_rules! jsobj {
    () => {
        $crate::JsObj::new()
    };
    ($($tt:tt)+) => {{
        let mut members: ::std::vec::Vec<(::std::sync::Arc<str>, $crate::JsValue)> =
            ::std::vec::Vec::new();
        $crate::__jsobj_members!(members; $($tt)+);
        <$crate::JsObj as ::core::iter::FromIterator<_>>::from_iter(members)
    }};
}

/// Builds a [`JsArray`](crate::JsArray) from values, written as in
/// [`jsobj!`].
///
/// # Examples
///
/// ```
/// use codecbus_json::jsarr;
///
/// let n = 3;
/// let a = jsarr![1, -2, n + 1, "x", null, true, [1.5], { "k": "v" }];
/// assert_eq!(a.to_string(), r#"[1,-2,4,"x",null,true,[1.5],{"k":"v"}]"#);
/// ```
#[macro_export]
macro_rules! jsarr {
    () => {
        $crate::JsArray::new()
    };
    ($($tt:tt)+) => {{
        let mut elems: ::std::vec::Vec<$crate::JsValue> = ::std::vec::Vec::new();
        $crate::__jsarr_elems!(elems; $($tt)+);
        $crate::JsArray::from(elems)
    }};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __jsobj_members {
    (@value $m:ident; $key:tt; ($($acc:tt)*); , $($rest:tt)*) => {
        $m.push((::std::sync::Arc::<str>::from($key), $crate::__jsvalue!($($acc)*)));
        $crate::__jsobj_members!($m; $($rest)*);
    };
    (@value $m:ident; $key:tt; ($($acc:tt)*); $next:tt $($rest:tt)*) => {
        $crate::__jsobj_members!(@value $m; $key; ($($acc)* $next); $($rest)*);
    };
    (@value $m:ident; $key:tt; ($($acc:tt)*);) => {
        $m.push((::std::sync::Arc::<str>::from($key), $crate::__jsvalue!($($acc)*)));
    };
    ($m:ident;) => {};
    ($m:ident; $key:tt : $value:tt , $($rest:tt)*) => {
        $m.push((::std::sync::Arc::<str>::from($key), $crate::__jsvalue!($value)));
        $crate::__jsobj_members!($m; $($rest)*);
    };
    ($m:ident; $key:tt : $value:tt) => {
        $m.push((::std::sync::Arc::<str>::from($key), $crate::__jsvalue!($value)));
    };
    ($m:ident; $key:tt : $($rest:tt)+) => {
        $crate::__jsobj_members!(@value $m; $key; (); $($rest)+);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __jsarr_elems {
    (@value $v:ident; ($($acc:tt)*); , $($rest:tt)*) => {
        $v.push($crate::__jsvalue!($($acc)*));
        $crate::__jsarr_elems!($v; $($rest)*);
    };
    (@value $v:ident; ($($acc:tt)*); $next:tt $($rest:tt)*) => {
        $crate::__jsarr_elems!(@value $v; ($($acc)* $next); $($rest)*);
    };
    (@value $v:ident; ($($acc:tt)*);) => {
        $v.push($crate::__jsvalue!($($acc)*));
    };
    ($v:ident;) => {};
    ($v:ident; $value:tt , $($rest:tt)*) => {
        $v.push($crate::__jsvalue!($value));
        $crate::__jsarr_elems!($v; $($rest)*);
    };
    ($v:ident; $value:tt) => {
        $v.push($crate::__jsvalue!($value));
    };
    ($v:ident; $($rest:tt)+) => {
        $crate::__jsarr_elems!(@value $v; (); $($rest)+);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __jsvalue {
    (null) => {
        $crate::JsValue::Null
    };
    ({ $($tt:tt)* }) => {
        $crate::JsValue::Object($crate::jsobj! { $($tt)* })
    };
    ([ $($tt:tt)* ]) => {
        $crate::JsValue::Array($crate::jsarr![ $($tt)* ])
    };
    ($($e:tt)+) => {
        $crate::JsValue::from($($e)+)
    };
}
