// Generates the `inventory` submission that lets a bus find the codec by
// name (and by its aliases, the names it had before) at start. Only for types without generic parameters (a registration
// names one concrete `'static` type) and not for `#[codec(unregistered)]`
// ones (a type that is not `Send + Sync + 'static` can still be encoded).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;

use crate::ast::Input;
use crate::codegen::Codegen;

/// The codec name, a `&'static str` expression: `name = "..."`, else the
/// module path and the type name.
pub(crate) fn codec_name(input: &Input<'_>) -> TokenStream {
    match &input.attrs.name {
        Some(lit) => quote!(#lit),
        None => {
            let type_name = input.ident.unraw().to_string();
            quote!(::core::concat!(::core::module_path!(), "::", #type_name))
        }
    }
}

pub(crate) fn expand(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    if input.is_generic() || input.attrs.unregistered.is_some() {
        return TokenStream::new();
    }
    let krate = cg.krate;
    let ident = input.ident;
    let name = codec_name(input);
    // Spanned on the type name: a type that is not `Send + Sync + 'static`
    // is reported there.
    let aliases = match &input.attrs.aliases {
        Some((_, aliases)) => quote!(.with_aliases(&[#(#aliases),*])),
        None => TokenStream::new(),
    };
    let record = quote_spanned! {ident.span()=>
        #krate::__private::CodecRegistration::of::<#ident>(#name) #aliases
    };
    quote! {
        #krate::__private::inventory::submit! {
            #record
        }
    }
}
