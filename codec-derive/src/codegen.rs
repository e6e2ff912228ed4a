// The context every code generator (`encode`, `decode`, `transform`,
// `register`) receives besides the input; `expand` fills it in once per
// derive.

use proc_macro2::TokenStream;

/// What every code generator needs besides the input.
pub(crate) struct Codegen<'a> {
    /// `::codecbus_core`, or the `crate = "..."` path.
    pub(crate) krate: &'a TokenStream,
    pub(crate) as_array: bool,
    /// An enum written as `[tag, payload]` (`#[codec(union)]`).
    pub(crate) union: bool,
    pub(crate) immutable: bool,
    /// The type's generics plus the bounds the generated impls need.
    pub(crate) generics: syn::Generics,
}
