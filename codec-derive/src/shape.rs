// Generates `MessageCodec::shape`: what the type writes, as data
// (`codecbus_core::shape`). A struct or enum is a named codec: it records
// its definition under its codec name once (`Definitions::named`) and is
// a `Ref` to it, so a recursive type refers to itself. A newtype is its
// field's shape, as it is written as its field (`Definitions::transparent`:
// named all the same when it contains itself).
//
// Straight-line construction through short `__private::shape_*` calls; a
// function of its own, so encode and decode are untouched.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use crate::ast::{Data, Field, Input, Style, Variant, keyed_fields};
use crate::attr::DefaultValue;
use crate::codegen::Codegen;

/// The body of `shape(__defs: &mut Definitions) -> Shape`.
pub(crate) fn expand(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    let name = codec_name(cg, input);
    if let Data::Struct(Style::Newtype, fields) = &input.data {
        let shape = field_shape(cg, &fields[0]);
        return quote! {
            __defs.transparent(#name, |__defs| #shape)
        };
    }
    let definition = match &input.data {
        Data::Struct(style, fields) => {
            let record = struct_record(cg, input, *style, fields);
            let krate = cg.krate;
            quote!(#krate::__private::shape_struct(#record))
        }
        Data::Enum(variants) if cg.union => union_shape(cg, input, variants),
        Data::Enum(variants) => enum_shape(cg, input, variants),
    };
    quote! {
        __defs.named(#name, |__defs| #definition)
    }
}

/// The codec name the type is defined under: the registered one (`name`,
/// or the module path and the type name), and for a generic type the
/// default one followed by its arguments, `path::Type<arg,arg>` (see
/// `__private::shape_arg`), so that each instantiation is a codec of its
/// own.
fn codec_name(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    let krate = cg.krate;
    let base = crate::register::codec_name(input);
    let args: Vec<TokenStream> = input
        .generics
        .params
        .iter()
        .filter_map(|param| match param {
            syn::GenericParam::Type(param) => {
                let ident = &param.ident;
                Some(if is_codec_param(cg, ident) {
                    quote!(#krate::__private::shape_arg::<#ident>())
                } else {
                    quote!(#krate::__private::type_arg::<#ident>())
                })
            }
            syn::GenericParam::Const(param) => {
                let ident = &param.ident;
                Some(quote!(::std::string::ToString::to_string(&#ident)))
            }
            syn::GenericParam::Lifetime(_) => None,
        })
        .collect();
    if args.is_empty() {
        return base;
    }
    quote!(&#krate::__private::generic_name(#base, &[#(#args),*]))
}

/// Whether the `MessageCodec` impl knows `param` to be a `MessageCodec`:
/// one of its bounds (inferred by the derive for a parameter a field uses
/// through its own impl, written on the type, or given by `bound = "..."`)
/// names `MessageCodec` or `MessageType`.
fn is_codec_param(cg: &Codegen<'_>, param: &syn::Ident) -> bool {
    let names_codec =
        |bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::Token![+]>| {
            bounds.iter().any(|bound| match bound {
                syn::TypeParamBound::Trait(bound) => bound
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "MessageCodec" || s.ident == "MessageType"),
                _ => false,
            })
        };
    let inline = cg
        .generics
        .type_params()
        .any(|p| p.ident == *param && names_codec(&p.bounds));
    let in_where = cg.generics.where_clause.iter().any(|clause| {
        clause.predicates.iter().any(|predicate| match predicate {
            syn::WherePredicate::Type(predicate) => {
                matches!(&predicate.bounded_ty, syn::Type::Path(path)
                    if path.qself.is_none() && path.path.is_ident(param))
                    && names_codec(&predicate.bounds)
            }
            _ => false,
        })
    });
    inline || in_where
}

/// A struct's record (an expression of type `Record`): a map by name, an
/// array by position (`as_array`, a tuple or unit struct) or by key.
fn struct_record(
    cg: &Codegen<'_>,
    input: &Input<'_>,
    style: Style,
    fields: &[Field<'_>],
) -> TokenStream {
    match style {
        Style::Named => named_record(cg, fields, &input.reserved_ints(), &input.reserved_names()),
        Style::Tuple | Style::Unit | Style::Newtype => {
            let krate = cg.krate;
            let fields = vec_of(
                encoded(fields)
                    .enumerate()
                    .map(|(pos, f)| field(cg, f, Some(pos as u32))),
            );
            quote!(#krate::__private::shape_array(#fields, &[]))
        }
    }
}

/// Named fields: keyed, as an array (`as_array`, also when reserved
/// positions made it keyed: see `Input::lower_reserved_positions`), or a
/// map.
fn named_record(
    cg: &Codegen<'_>,
    fields: &[Field<'_>],
    ints: &[u32],
    names: &[String],
) -> TokenStream {
    let krate = cg.krate;
    if let Some(keyed) = keyed_fields(fields) {
        let fields = vec_of(keyed.iter().map(|&(key, f)| field(cg, f, Some(key))));
        return if cg.as_array {
            quote!(#krate::__private::shape_array(#fields, &[#(#ints),*]))
        } else {
            quote!(#krate::__private::shape_keyed(#fields, &[#(#ints),*]))
        };
    }
    if cg.as_array {
        let fields = vec_of(
            encoded(fields)
                .enumerate()
                .map(|(pos, f)| field(cg, f, Some(pos as u32))),
        );
        return quote!(#krate::__private::shape_array(#fields, &[#(#ints),*]));
    }
    let fields = vec_of(encoded(fields).map(|f| field(cg, f, None)));
    quote!(#krate::__private::shape_map(#fields, &[#(#names),*]))
}

fn encoded<'f, 'a>(fields: &'f [Field<'a>]) -> impl Iterator<Item = &'f Field<'a>> {
    fields.iter().filter(|f| f.is_encoded())
}

/// A field (an expression of type `FieldShape`), at a position or key in
/// the array layouts.
///
/// Optional when a reader takes the value without it (see
/// `decode::missing_value`): with a `default`, an `Option` through `bytes`
/// or `serde`, or of a type whose codec has a value when missing (an
/// `Option`). `skip_if` alone does not make it so: the writer may leave it
/// out, but the reader still asks for it.
fn field(cg: &Codegen<'_>, field: &Field<'_>, key: Option<u32>) -> TokenStream {
    let krate = cg.krate;
    let name = &field.wire_name;
    let key = match key {
        Some(key) => quote!(::core::option::Option::Some(#key)),
        None => quote!(::core::option::Option::None),
    };
    let default = !matches!(field.attrs.default.1, DefaultValue::None);
    if field.uses_codec_impl() {
        let ty = field.ty;
        // Spanned on the type: a field type that is no codec is reported
        // at the field.
        let function = quote_spanned!(ty.span()=> #krate::__private::shape_field_of::<#ty>);
        return quote!(#function(#name, #key, #default, __defs));
    }
    let optional = default || field.optional_bytes().is_some() || field.is_optional_serde();
    let shape = field_shape(cg, field);
    quote!(#krate::__private::shape_field(#name, #key, #optional, #shape))
}

/// The shape of what a field writes: `bin` for `bytes`, `Opaque` for
/// `with` and `serde`, else its type's own shape.
fn field_shape(cg: &Codegen<'_>, field: &Field<'_>) -> TokenStream {
    let krate = cg.krate;
    let ty = field.ty;
    if field.attrs.bytes.is_some() {
        let option = field.optional_bytes().is_some();
        quote!(#krate::__private::shape_bin(#option))
    } else if field.attrs.serde.is_some() || field.attrs.with.is_some() {
        quote!(#krate::__private::shape_opaque())
    } else {
        let function = quote_spanned!(ty.span()=> <#ty as #krate::MessageCodec>::shape);
        quote!(#function(__defs))
    }
}

/// An enum written with its variants' names.
fn enum_shape(cg: &Codegen<'_>, input: &Input<'_>, variants: &[Variant<'_>]) -> TokenStream {
    let krate = cg.krate;
    let names = input.reserved_names();
    let variants = vec_of(variants.iter().map(|v| variant(cg, v, None)));
    quote!(#krate::__private::shape_enum(#variants, &[#(#names),*]))
}

/// A `union`: the tagged variants, the catch-all's name.
fn union_shape(cg: &Codegen<'_>, input: &Input<'_>, variants: &[Variant<'_>]) -> TokenStream {
    let krate = cg.krate;
    let tags = input.reserved_ints();
    let tagged = vec_of(
        variants
            .iter()
            .filter_map(|v| Some(variant(cg, v, Some(v.attrs.tag?.value)))),
    );
    let catch_all = match variants.iter().find(|v| v.attrs.other.is_some()) {
        Some(v) => {
            let name = v.ident.unraw().to_string();
            quote!(::core::option::Option::Some(#name))
        }
        None => quote!(::core::option::Option::None),
    };
    quote!(#krate::__private::shape_union(#tagged, #catch_all, &[#(#tags),*]))
}

/// A variant: its name, its tag in a union, what follows them.
fn variant(cg: &Codegen<'_>, variant: &Variant<'_>, tag: Option<u32>) -> TokenStream {
    let krate = cg.krate;
    let name = &variant.wire_name;
    let tag = match tag {
        Some(tag) => quote!(::core::option::Option::Some(#tag)),
        None => quote!(::core::option::Option::None),
    };
    match variant.style {
        Style::Unit => quote!(#krate::__private::shape_unit_variant(#name, #tag)),
        Style::Newtype => {
            let shape = field_shape(cg, &variant.fields[0]);
            quote!(#krate::__private::shape_newtype_variant(#name, #tag, #shape))
        }
        Style::Tuple => {
            let shapes = vec_of(encoded(&variant.fields).map(|f| field_shape(cg, f)));
            quote!(#krate::__private::shape_tuple_variant(#name, #tag, #shapes))
        }
        Style::Named => {
            let record = named_record(cg, &variant.fields, &[], &[]);
            quote!(#krate::__private::shape_record_variant(#name, #tag, #record))
        }
    }
}

/// A `Vec` of `items`, built as `vec!` builds one (no `From` in scope is
/// needed, the expansion has no prelude to rely on).
fn vec_of(items: impl IntoIterator<Item = TokenStream>) -> TokenStream {
    let mut items = items.into_iter().peekable();
    if items.peek().is_none() {
        return quote!(::std::vec::Vec::new());
    }
    quote!(<[_]>::into_vec(::std::boxed::Box::new([#(#items),*])))
}
