// Entry of the pipeline: parse (`Input::from_syn`) → check (`valid`) →
// generate, or `compile_error!` plus the fallback impl when anything was
// recorded. All generated items go inside one `const _: () = { .. };` so
// they add no names to the user's module.

use std::collections::BTreeSet;

use proc_macro_crate::FoundCrate;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::visit::{self, Visit};
use syn::{DeriveInput, Ident, TypePath};

use crate::ast::{Data, Input, Style};
use crate::codegen::Codegen;
use crate::ctxt::Ctxt;
use crate::{decode, encode, fallback, register, shape, transform, valid};

pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let parsed = Input::from_syn(&cx, input);
    if let Some(parsed) = &parsed {
        valid::check(&cx, parsed);
    }
    let krate = crate_path(&cx, parsed.as_ref());
    match (cx.check(), parsed) {
        (Ok(()), Some(mut parsed)) => {
            parsed.lower_reserved_positions();
            expand(&parsed, &krate)
        }
        (Err(err), _) => {
            let mut out = err.to_compile_error();
            out.extend(fallback::expand(input, &krate));
            out
        }
        (Ok(()), None) => unreachable!("an input that is not modelled always records an error"),
    }
}

fn crate_path(cx: &Ctxt, input: Option<&Input<'_>>) -> TokenStream {
    match input.and_then(|i| i.attrs.crate_path.as_ref()) {
        Some(path) => quote!(#path),
        None => found_crate_path(cx),
    }
}

/// Where the codec crate is, read from the deriving crate's own
/// `Cargo.toml`: `codecbus-core` itself, or the facade `codecbus` or
/// `codecbus-bus` (each re-exports it as `codec`), under whatever name the
/// user gave the dependency.
fn found_crate_path(cx: &Ctxt) -> TokenStream {
    let mut all_absent = true;
    for (package, module) in [
        ("codecbus-core", None),
        ("codecbus", Some("codec")),
        ("codecbus-bus", Some("codec")),
    ] {
        let name = match proc_macro_crate::crate_name(package) {
            // A package's own examples, tests and doctests reach it by its
            // crate name (each lib declares `extern crate self as ...`).
            Ok(FoundCrate::Itself) => package.replace('-', "_"),
            Ok(FoundCrate::Name(name)) => name,
            Err(proc_macro_crate::Error::CrateNotFound { .. }) => continue,
            Err(_) => {
                all_absent = false;
                continue;
            }
        };
        let name = Ident::new(&name, Span::call_site());
        return match module {
            None => quote!(::#name),
            Some(module) => {
                let module = Ident::new(module, Span::call_site());
                quote!(::#name::#module)
            }
        };
    }
    if all_absent {
        cx.error_at(
            Span::call_site(),
            "MessageCodec: none of `codecbus`, `codecbus-core` or `codecbus-bus` is a dependency of \
             this crate; add one to its Cargo.toml, or name the path with #[codec(crate = \"...\")]",
        );
    }
    // No manifest to read (a build outside cargo): the plain name.
    quote!(::codecbus_core)
}

fn expand(input: &Input<'_>, krate: &TokenStream) -> TokenStream {
    let immutable = input.attrs.immutable.is_some();
    let cg = Codegen {
        krate,
        as_array: input.attrs.as_array.is_some(),
        union: input.attrs.union.is_some(),
        immutable,
        generics: bounded_generics(input, krate, Bounds::Message { immutable }),
    };

    let ident = input.ident;
    let encode = encode::expand(&cg, input);
    let encode_bounded = encode::bounded(&cg, input);
    let decode::Decoders {
        decode,
        in_place: decode_in_place,
        to_slot: decode_to,
        general: decode_general,
    } = decode::expand(&cg, input);
    let value_when_missing = value_when_missing(&cg, input);
    let nesting = decode::nesting(&cg, input);
    let fixed = decode::fixed(&cg, input);

    let encode_generics = bounded_generics(input, krate, Bounds::Encode);
    let (encode_impl, ty_generics, encode_where) = encode_generics.split_for_impl();
    let decode_generics = decode_generics(input, krate);
    let (decode_impl, _, decode_where) = decode_generics.split_for_impl();

    // A type that borrows from its input is `Encode` and `Decode<'de>`
    // only: a message of the bus owns its data.
    let message_impl = if input.borrows() {
        TokenStream::new()
    } else {
        let (impl_generics, ty_generics, where_clause) = cg.generics.split_for_impl();
        let transform = transform::expand(&cg, input);
        let deep_copy = transform::deep_copy(&cg, input);
        let shape = shape::expand(&cg, input);
        quote! {
            #[automatically_derived]
            impl #impl_generics #krate::MessageCodec for #ident #ty_generics #where_clause {
                const IMMUTABLE: ::core::primitive::bool = #immutable;

                #[inline]
                fn transform(__body: &::std::sync::Arc<Self>) -> ::std::sync::Arc<Self> {
                    #transform
                }

                #[inline]
                fn deep_copy(__value: &Self) -> ::core::option::Option<Self> {
                    #deep_copy
                }

                fn shape(
                    __defs: &mut #krate::shape::Definitions,
                ) -> #krate::shape::Shape {
                    #shape
                }
            }

            #[automatically_derived]
            impl #impl_generics #krate::MessageType for #ident #ty_generics #where_clause {}
        }
    };
    // A fast path is a straight line, inlined into the decoder of what
    // holds the type whatever the optimizer's estimate of its size.
    let decode_inline = if decode_general.is_some() {
        quote!(#[inline(always)])
    } else {
        quote!(#[inline])
    };
    let decode_in_place = decode_in_place.map(|in_place| {
        quote! {
            #[inline(always)]
            fn decode_in_place(
                __r: &mut #krate::Reader<'__de>,
                __out: &mut ::core::option::Option<Self>,
            ) -> ::core::result::Result<(), #krate::DecodeError> {
                #in_place
            }
        }
    });
    let decode_to = decode_to.map(|to_slot| {
        quote! {
            #[inline(always)]
            fn decode_to<'__s>(
                __r: &mut #krate::Reader<'__de>,
                __slot: &'__s mut ::core::mem::MaybeUninit<Self>,
            ) -> ::core::result::Result<&'__s mut Self, #krate::DecodeError> {
                #to_slot
            }
        }
    });
    let general_impl = decode_general.map(|general| {
        quote! {
            #[automatically_derived]
            impl #decode_impl #krate::__private::DecodeGeneral<'__de> for #ident #ty_generics #decode_where {
                #[inline(never)]
                fn decode_general(
                    __r: &mut #krate::Reader<'__de>,
                    __out: &mut ::core::option::Option<Self>,
                ) -> ::core::result::Result<(), #krate::DecodeError> {
                    let __decode = |__r: &mut #krate::Reader<'__de>|
                        -> ::core::result::Result<Self, #krate::DecodeError> {
                        #general
                    };
                    *__out = ::core::option::Option::Some(__decode(__r)?);
                    ::core::result::Result::Ok(())
                }
            }
        }
    });
    let immutable_impl = transform::immutable_impl(&cg, input);
    let register = register::expand(&cg, input);

    quote! {
        const _: () = {
            #[automatically_derived]
            impl #encode_impl #krate::Encode for #ident #ty_generics #encode_where {
                #encode_bounded

                #[inline]
                fn encode(
                    &self,
                    __w: &mut #krate::Writer,
                ) -> ::core::result::Result<(), #krate::EncodeError> {
                    #encode
                }
            }

            #[automatically_derived]
            impl #decode_impl #krate::Decode<'__de> for #ident #ty_generics #decode_where {
                #nesting

                #fixed

                #decode_inline
                fn decode(
                    __r: &mut #krate::Reader<'__de>,
                ) -> ::core::result::Result<Self, #krate::DecodeError> {
                    #decode
                }

                #decode_in_place

                #decode_to

                #value_when_missing
            }

            #general_impl

            #message_impl

            #immutable_impl

            #register
        };
    }
}

/// The generics of the `Decode<'__de>` impl: the type's own, bounded for
/// decoding, with the input's lifetime `'__de` outliving each lifetime a
/// field borrows (`&'a str`, `Cow<'a, str>`, `Vec<&'a str>`, a borrowed
/// struct).
fn decode_generics(input: &Input<'_>, krate: &TokenStream) -> syn::Generics {
    let mut generics = bounded_generics(input, krate, Bounds::Decode);
    let mut de: syn::LifetimeParam = syn::parse_quote!('__de);
    de.bounds
        .extend(input.borrowed_lifetimes().into_iter().cloned());
    generics.params.insert(0, syn::GenericParam::Lifetime(de));
    generics
}

/// A newtype is transparent, also when absent: a missing field of type
/// `struct Maybe(Option<u32>)` becomes `Maybe(None)` like the `Option`
/// itself would.
fn value_when_missing(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    let Data::Struct(Style::Newtype, fields) = &input.data else {
        return TokenStream::new();
    };
    let field = &fields[0];
    if !field.uses_codec_impl() {
        return TokenStream::new();
    }
    let krate = cg.krate;
    let ty = field.ty;
    let member = &field.member;
    quote! {
        #[inline]
        fn value_when_missing() -> ::core::option::Option<Self> {
            match <#ty as #krate::Decode<'__de>>::value_when_missing() {
                ::core::option::Option::Some(__v) => ::core::option::Option::Some(Self { #member: __v }),
                ::core::option::Option::None => ::core::option::Option::None,
            }
        }
    }
}

/// Which of the three impls a set of bounds is for.
#[derive(Clone, Copy)]
enum Bounds {
    Encode,
    /// `Decode<'__de>`.
    Decode,
    Message {
        immutable: bool,
    },
}

/// The type's generics with the bounds the generated code relies on:
///
/// * `T: Encode`, `T: Decode<'__de>` or `T: MessageCodec` (by impl) for
///   every type parameter that appears in a field encoded through its own
///   impl (not `skip`, `with`, `bytes` or `serde`; not inside
///   `PhantomData`), and the same of associated types used that way
///   (serde's inference);
/// * `T: Serialize + DeserializeOwned` for those that appear in
///   `#[codec(serde)]` fields;
/// * on the `MessageCodec` impl, `T: Immutable` for every type parameter of
///   an immutable type (each field is checked against `Immutable`), else
///   `T: Clone` (a derived `Clone` needs it of every parameter for the deep
///   copy).
///
/// `#[codec(bound = "...")]` replaces all of these with the user's
/// predicates; the type's own where clause is kept either way.
fn bounded_generics(input: &Input<'_>, krate: &TokenStream, bounds: Bounds) -> syn::Generics {
    let mut generics = input.generics.clone();
    if let Some(bound) = &input.attrs.bound {
        generics
            .make_where_clause()
            .predicates
            .extend(bound.iter().cloned());
        return generics;
    }
    let params: Vec<Ident> = generics.type_params().map(|p| p.ident.clone()).collect();
    if params.is_empty() {
        return generics;
    }

    let param_set: BTreeSet<&Ident> = params.iter().collect();
    let (codec_used, codec_associated) = find_params(
        &param_set,
        input.all_fields().filter(|f| f.uses_codec_impl()),
    );
    let (serde_used, serde_associated) =
        find_params(&param_set, input.all_fields().filter(|f| f.uses_serde()));
    let serde_bound = quote! {
        #krate::__private::serde::Serialize + #krate::__private::serde::de::DeserializeOwned
    };

    let codec_bound = match bounds {
        Bounds::Encode => quote!(#krate::Encode),
        Bounds::Decode => quote!(#krate::Decode<'__de>),
        Bounds::Message { .. } => quote!(#krate::MessageCodec),
    };
    let where_clause = generics.make_where_clause();
    for param in &params {
        if codec_used.contains(param) {
            where_clause
                .predicates
                .push(syn::parse_quote!(#param: #codec_bound));
        }
        if serde_used.contains(param) {
            where_clause
                .predicates
                .push(syn::parse_quote!(#param: #serde_bound));
        }
        match bounds {
            Bounds::Message { immutable: true } => where_clause
                .predicates
                .push(syn::parse_quote!(#param: #krate::Immutable)),
            Bounds::Message { immutable: false } => where_clause
                .predicates
                .push(syn::parse_quote!(#param: ::core::clone::Clone)),
            Bounds::Encode | Bounds::Decode => {}
        }
    }
    let mut seen = BTreeSet::new();
    let associated = codec_associated
        .into_iter()
        .map(|path| (path, codec_bound.clone()))
        .chain(
            serde_associated
                .into_iter()
                .map(|path| (path, serde_bound.clone())),
        );
    for (path, bound) in associated {
        let key = quote!(#path: #bound).to_string();
        if seen.insert(key) {
            where_clause
                .predicates
                .push(syn::parse_quote!(#path: #bound));
        }
    }
    generics
}

/// The type parameters, and the associated types of type parameters, that
/// the types of `fields` mention.
fn find_params<'a, 'f>(
    params: &BTreeSet<&Ident>,
    fields: impl Iterator<Item = &'f crate::ast::Field<'a>>,
) -> (BTreeSet<Ident>, Vec<TypePath>)
where
    'a: 'f,
{
    let mut finder = FindTyParams {
        params,
        used: BTreeSet::new(),
        associated: Vec::new(),
    };
    for field in fields {
        finder.visit_type(field.ty);
    }
    (finder.used, finder.associated)
}

struct FindTyParams<'p> {
    params: &'p BTreeSet<&'p Ident>,
    used: BTreeSet<Ident>,
    associated: Vec<TypePath>,
}

impl<'ast> Visit<'ast> for FindTyParams<'_> {
    fn visit_type_path(&mut self, ty: &'ast TypePath) {
        // `PhantomData<T>` is a codec whatever `T` is.
        if ty.qself.is_none()
            && let Some(last) = ty.path.segments.last()
            && last.ident == "PhantomData"
        {
            return;
        }
        let is_associated = match &ty.qself {
            Some(qself) => mentions_param(&qself.ty, self.params),
            None => {
                ty.path.leading_colon.is_none()
                    && ty.path.segments.len() > 1
                    && self.params.contains(&ty.path.segments[0].ident)
            }
        };
        if is_associated {
            // Bounded as a whole (`T::Member: MessageCodec`); `T` itself
            // need not be a codec.
            self.associated.push(ty.clone());
            return;
        }
        visit::visit_type_path(self, ty);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none()
            && path.segments.len() == 1
            && self.params.contains(&path.segments[0].ident)
        {
            self.used.insert(path.segments[0].ident.clone());
        }
        visit::visit_path(self, path);
    }

    // Types inside macro invocations cannot be seen; leave them alone.
    fn visit_macro(&mut self, _: &'ast syn::Macro) {}
}

fn mentions_param(ty: &syn::Type, params: &BTreeSet<&Ident>) -> bool {
    let mut finder = FindTyParams {
        params,
        used: BTreeSet::new(),
        associated: Vec::new(),
    };
    finder.visit_type(ty);
    !finder.used.is_empty()
}
