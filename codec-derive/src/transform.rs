// Generates `MessageCodec::transform` and, for `#[codec(immutable)]`, the
// `Immutable` impl with one compile-time check per field.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::Input;
use crate::expand::Codegen;

/// The body of `transform(__body: &Arc<Self>) -> Arc<Self>`.
pub(crate) fn expand(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    let krate = cg.krate;
    if cg.immutable {
        // Each check is spanned on the field's type, so a `Cell` field is
        // reported where it is written. They compile to nothing.
        let checks = input.all_fields().map(|field| {
            let ty = field.ty;
            quote_spanned!(ty.span()=> #krate::__private::assert_immutable::<#ty>();)
        });
        quote! {
            #(#checks)*
            <::std::sync::Arc<Self> as ::core::clone::Clone>::clone(__body)
        }
    } else {
        // Cloning through a function bounded on `CopyOnDelivery` (rather than
        // calling `Clone::clone` directly) makes a missing `Clone` one error,
        // with that trait's message, at the type's name.
        let copy = quote_spanned!(input.ident.span()=> __copy::<Self>);
        quote! {
            #[inline(always)]
            fn __copy<__T: #krate::__private::CopyOnDelivery>(__v: &__T) -> __T {
                ::core::clone::Clone::clone(__v)
            }
            ::std::sync::Arc::new(#copy(&**__body))
        }
    }
}

/// `impl Immutable for Ty {}` for `#[codec(immutable)]` types.
pub(crate) fn immutable_impl(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    if !cg.immutable {
        return TokenStream::new();
    }
    let krate = cg.krate;
    let ident = input.ident;
    let (impl_generics, ty_generics, where_clause) = cg.generics.split_for_impl();
    let trait_path = quote_spanned!(ident.span()=> #krate::Immutable);
    quote! {
        #[automatically_derived]
        impl #impl_generics #trait_path for #ident #ty_generics #where_clause {}
    }
}
