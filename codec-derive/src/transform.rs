// Generates `MessageCodec::transform` and, for `#[codec(immutable)]`, the
// `Immutable` impl with one compile-time check per field.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{Data, Field, Input};
use crate::codegen::Codegen;

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
        // with that trait's message, at the type's name (`deep_copy` makes
        // the same call, which rustc reports once).
        let copy =
            quote_spanned!(input.ident.span()=> #krate::__private::clone_on_delivery::<Self>);
        quote! {
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

/// The body of `deep_copy(value: &Self) -> Option<Self>`: a `Clone` for a
/// deep-copied type; for an immutable one (which need not be `Clone`), a
/// copy field by field through each field's own `deep_copy`, or `None` when
/// a field is not encoded through its codec (`skip`, `with`, `bytes`,
/// `serde`: nothing says how to copy it).
pub(crate) fn deep_copy(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    let krate = cg.krate;
    if !cg.immutable {
        // The same bound and span as in `expand`, so a missing `Clone` stays
        // one error.
        let copy =
            quote_spanned!(input.ident.span()=> #krate::__private::clone_on_delivery::<Self>);
        return quote! {
            ::core::option::Option::Some(#copy(__value))
        };
    }
    if input.all_fields().any(|f| !f.uses_codec_impl()) {
        return quote! {
            let _ = __value;
            ::core::option::Option::None
        };
    }
    let copy_fields = |fields: &[Field<'_>], access: &dyn Fn(&Field<'_>, usize) -> TokenStream| {
        let inits = fields.iter().enumerate().map(|(i, f)| {
            let member = &f.member;
            let ty = f.ty;
            let value = access(f, i);
            let call = quote_spanned!(ty.span()=> <#ty as #krate::MessageCodec>::deep_copy);
            quote!(#member: #call(#value)?)
        });
        quote!({ #(#inits,)* })
    };
    match &input.data {
        Data::Struct(_, fields) => {
            let init = copy_fields(fields, &|f, _| {
                let member = &f.member;
                quote!(&__value.#member)
            });
            quote!(::core::option::Option::Some(Self #init))
        }
        Data::Enum(variants) if variants.is_empty() => quote!(match *__value {}),
        Data::Enum(variants) => {
            let arms = variants.iter().map(|v| {
                let ident = v.ident;
                let members = v.fields.iter().map(|f| &f.member);
                let bindings = (0..v.fields.len()).map(|i| format_ident!("__f{}", i));
                let init = copy_fields(&v.fields, &|_, i| {
                    let binding = format_ident!("__f{}", i);
                    quote!(#binding)
                });
                quote! {
                    Self::#ident { #(#members: #bindings,)* } => Self::#ident #init,
                }
            });
            quote! {
                ::core::option::Option::Some(match __value {
                    #(#arms)*
                })
            }
        }
    }
}
