// What is emitted next to `compile_error!` when the input has errors:
// `Encode`, `Decode` and `MessageCodec` impls whose bodies are
// unreachable. Code that uses the type as a codec then compiles, so the
// user sees the attribute mistakes and not a cascade of "`MessageCodec` is
// not implemented" at every call site (thiserror's fallback.rs).

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

pub(crate) fn expand(input: &DeriveInput, krate: &TokenStream) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut decode_generics = input.generics.clone();
    // Nothing is read, so any input will do: no `'__de: 'a` bounds, and the
    // type is a `MessageCodec` whatever its fields borrow.
    decode_generics.params.insert(0, syn::parse_quote!('__de));
    let (decode_impl, _, _) = decode_generics.split_for_impl();
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #krate::Encode for #ident #ty_generics #where_clause {
                fn encode(
                    &self,
                    _: &mut #krate::Writer,
                ) -> ::core::result::Result<(), #krate::EncodeError> {
                    ::core::unreachable!()
                }
            }

            #[automatically_derived]
            impl #decode_impl #krate::Decode<'__de> for #ident #ty_generics #where_clause {
                fn decode(
                    _: &mut #krate::Reader<'__de>,
                ) -> ::core::result::Result<Self, #krate::DecodeError> {
                    ::core::unreachable!()
                }
            }

            #[automatically_derived]
            impl #impl_generics #krate::MessageCodec for #ident #ty_generics #where_clause {
                const IMMUTABLE: ::core::primitive::bool = false;

                fn transform(_: &::std::sync::Arc<Self>) -> ::std::sync::Arc<Self> {
                    ::core::unreachable!()
                }
            }

            #[automatically_derived]
            impl #impl_generics #krate::MessageType for #ident #ty_generics #where_clause {}
        };
    }
}
