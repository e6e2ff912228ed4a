//! `jsobj_spec!`: an object spec written like the object it describes.
//!
//! Contract: one rule application per member, so the recursion depth grows
//! with the number of members, not with the tokens of their specs. A value
//! written `{ ... }` is a nested object spec; any other value is an
//! expression with `Into<Spec>`.

/// Builds an object [`Spec`](crate::spec::Spec) from `key: spec` pairs,
/// written like the object it describes.
///
/// * `"key": spec` is a required member, `"key"?: spec` an optional one;
///   `spec` is any expression with `Into<Spec>`, or a nested `{ ... }`
///   written the same way.
/// * The object is strict (no other members) unless the last entry is
///   `..`, which accepts any other member.
/// * Keys are string literals or parenthesized expressions with
///   `Into<Arc<str>>`.
///
/// # Examples
///
/// ```
/// use codecbus_json::spec::{array_of, integer, one_of_values, string};
/// use codecbus_json::{jsobj, jsobj_spec};
///
/// let order = jsobj_spec! {
///     "id": integer().min(1),
///     "customer": { "name": string().length(1..), "tier"?: one_of_values(["gold", "silver"]) },
///     "items": array_of(jsobj_spec! { "sku": string(), "qty": integer().range(1..=100) }).length(1..),
///     "note"?: string().nullable(),
///     "meta"?: { .. },
/// };
///
/// let ok = jsobj! {
///     "id": 7,
///     "customer": { "name": "Ada" },
///     "items": [{ "sku": "tea", "qty": 2 }],
///     "meta": { "anything": [1, 2] },
/// };
/// assert!(order.is_valid(&ok.into()));
///
/// let bad = jsobj! { "id": 7, "customer": { "name": "Ada", "vip": true }, "items": [{ "sku": "tea", "qty": 0 }] };
/// let violations = order.validate(&bad.into());
/// let pointers: Vec<String> = violations.iter().map(|v| v.pointer()).collect();
/// assert_eq!(pointers, ["/customer/vip", "/items/0/qty"]);
/// assert_eq!(violations[1].expected(), "integer in 1..=100");
/// assert_eq!(violations[1].found(), "0");
/// ```
#[macro_export]
macro_rules! jsobj_spec {
    ($($tt:tt)*) => {
        $crate::spec::Spec::from($crate::__jsobj_spec_members!($crate::spec::object(); $($tt)*))
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __jsobj_spec_members {
    ($s:expr;) => {
        $s
    };
    ($s:expr; ..) => {
        $s.lenient()
    };
    ($s:expr; .., ) => {
        $s.lenient()
    };
    // Nested object specs.
    ($s:expr; $key:tt ? : { $($inner:tt)* } $(, $($rest:tt)*)?) => {
        $crate::__jsobj_spec_members!(
            $s.optional($key, $crate::jsobj_spec! { $($inner)* }); $($($rest)*)?
        )
    };
    ($s:expr; $key:tt : { $($inner:tt)* } $(, $($rest:tt)*)?) => {
        $crate::__jsobj_spec_members!(
            $s.required($key, $crate::jsobj_spec! { $($inner)* }); $($($rest)*)?
        )
    };
    // Any other spec expression.
    ($s:expr; $key:tt ? : $value:expr $(, $($rest:tt)*)?) => {
        $crate::__jsobj_spec_members!($s.optional($key, $value); $($($rest)*)?)
    };
    ($s:expr; $key:tt : $value:expr $(, $($rest:tt)*)?) => {
        $crate::__jsobj_spec_members!($s.required($key, $value); $($($rest)*)?)
    };
}
