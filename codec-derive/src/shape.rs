// Generates `MessageCodec::shape`: what the type writes, as data
// (`codecbus_core::shape`). A struct or enum is a named codec: it records
// its definition under its codec name once (`Definitions::named`) and is
// a `Ref` to it, so a recursive type refers to itself. A newtype is its
// field's shape, as it is written as its field (`Definitions::transparent`:
// named all the same when it contains itself).
//
// A function of its own, so encode and decode are untouched. To keep it
// cheap to compile, it is one call of a `__private::shape_*` function
// given a function that lists the fields or variants, one plain call
// each: a nested function item (a closure in a generic type), passed as a
// function pointer, so nothing generic is instantiated per type, and
// holding no value of its own, so it has no unwinding path to compile.
// Building a crate of 200 derived types takes 3% more instructions than
// without `shape`; with the temporaries built in `shape` itself and
// `Definitions::named` instantiated per type, it took 9% more.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use crate::ast::{Data, Field, Input, Style, Variant, keyed_fields};
use crate::attr::DefaultValue;
use crate::codegen::Codegen;

/// The body of `shape(__defs: &mut Definitions) -> Shape`.
pub(crate) fn expand(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    let krate = cg.krate;
    let name = codec_name(cg, input);
    let g = &Gen {
        krate,
        as_array: cg.as_array,
        // A nested item names neither the type's parameters nor `Self`.
        nested_fns: cg.generics.params.is_empty()
            && !input
                .all_fields()
                .any(|f| f.is_encoded() && mentions_self(f.ty.to_token_stream())),
    };
    match &input.data {
        Data::Struct(Style::Newtype, fields) => {
            let field = &fields[0];
            let describe = if field.uses_codec_impl() {
                let ty = field.ty;
                quote_spanned!(ty.span()=> <#ty as #krate::MessageCodec>::shape)
            } else {
                let shape = other_shape(g, field);
                quote!(|_| #shape)
            };
            quote!(#krate::__private::shape_transparent(__defs, #name, #describe))
        }
        Data::Struct(Style::Named, fields) => named_struct(
            g,
            fields,
            &name,
            &input.reserved_ints(),
            &input.reserved_names(),
        ),
        Data::Struct(Style::Tuple | Style::Unit, fields) => {
            let fill = fill_positions(g, fields);
            quote!(#krate::__private::shape_array(__defs, #name, &[], #fill))
        }
        Data::Enum(variants) if cg.union => {
            let tags = input.reserved_ints();
            let tagged = variants
                .iter()
                .filter_map(|v| Some(variant(g, v, Some(v.attrs.tag?.value))));
            let catch_all = match variants.iter().find(|v| v.attrs.other.is_some()) {
                Some(v) => {
                    let name = v.ident.unraw().to_string();
                    quote!(::core::option::Option::Some(#name))
                }
                None => quote!(::core::option::Option::None),
            };
            let fill = list(g, quote!(__v), quote!(ShapeVariants), tagged);
            quote!(#krate::__private::shape_union(__defs, #name, #catch_all, &[#(#tags),*], #fill))
        }
        Data::Enum(variants) => {
            let names = input.reserved_names();
            let variants = variants.iter().map(|v| variant(g, v, None));
            let fill = list(g, quote!(__v), quote!(ShapeVariants), variants);
            quote!(#krate::__private::shape_enum(__defs, #name, &[#(#names),*], #fill))
        }
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

/// What the helpers below need to know of the derive.
struct Gen<'a> {
    krate: &'a TokenStream,
    as_array: bool,
    /// The lists of fields and variants are function items (else
    /// closures, which cost a shim more each).
    nested_fns: bool,
}

/// Whether `tokens` name `Self`.
fn mentions_self(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|tt| match tt {
        proc_macro2::TokenTree::Ident(ident) => ident == "Self",
        proc_macro2::TokenTree::Group(group) => mentions_self(group.stream()),
        _ => false,
    })
}

/// A struct with named fields: keyed, as an array (`as_array`, also when
/// reserved positions made it keyed: see
/// `Input::lower_reserved_positions`), or a map.
fn named_struct(
    g: &Gen<'_>,
    fields: &[Field<'_>],
    name: &TokenStream,
    ints: &[u32],
    names: &[String],
) -> TokenStream {
    let krate = g.krate;
    if let Some(keyed) = keyed_fields(fields) {
        let fill = fill(g, keyed.iter().map(|&(key, f)| field(g, f, Some(key))));
        let function = if g.as_array {
            quote!(shape_array)
        } else {
            quote!(shape_keyed)
        };
        return quote!(#krate::__private::#function(__defs, #name, &[#(#ints),*], #fill));
    }
    if g.as_array {
        let fill = fill_positions(g, fields);
        return quote!(#krate::__private::shape_array(__defs, #name, &[#(#ints),*], #fill));
    }
    let fill = fill(g, encoded(fields).map(|f| field(g, f, None)));
    quote!(#krate::__private::shape_map(__defs, #name, &[#(#names),*], #fill))
}

/// The function that lists the fields: `__f` a `&mut ShapeFields`.
fn fill(g: &Gen<'_>, fields: impl Iterator<Item = TokenStream>) -> TokenStream {
    list(g, quote!(__f), quote!(ShapeFields), fields)
}

/// A function of `#param: &mut __private::#ty<'_>` running `items`: a
/// function item, or a closure where a nested item could not name what
/// the fields do (see `Gen::nested_fns`).
fn list(
    g: &Gen<'_>,
    param: TokenStream,
    ty: TokenStream,
    items: impl Iterator<Item = TokenStream>,
) -> TokenStream {
    let krate = g.krate;
    let mut items = items.peekable();
    let param = match items.peek() {
        Some(_) => param,
        // No unused variable.
        None => quote!(_),
    };
    if g.nested_fns {
        quote! {{
            fn __list(#param: &mut #krate::__private::#ty<'_>) {
                #(#items)*
            }
            __list
        }}
    } else {
        quote!(|#param| { #(#items)* })
    }
}

/// The encoded fields by position.
fn fill_positions(g: &Gen<'_>, fields: &[Field<'_>]) -> TokenStream {
    fill(
        g,
        encoded(fields)
            .enumerate()
            .map(|(pos, f)| field(g, f, Some(pos as u32))),
    )
}

fn encoded<'f, 'a>(fields: &'f [Field<'a>]) -> impl Iterator<Item = &'f Field<'a>> {
    fields.iter().filter(|f| f.is_encoded())
}

/// One field added to `__f`, at a position or key in the array layouts.
///
/// Optional when a reader takes the value without it (see
/// `decode::missing_value`): with a `default`, an `Option` through `bytes`
/// or `serde`, or of a type whose codec has a value when missing (an
/// `Option`). `skip_if` alone does not make it so: the writer may leave it
/// out, but the reader still asks for it.
fn field(g: &Gen<'_>, field: &Field<'_>, key: Option<u32>) -> TokenStream {
    let krate = g.krate;
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
        let function = quote_spanned!(ty.span()=> #krate::__private::ShapeFields::of::<#ty>);
        return quote!(#function(__f, #name, #key, #default););
    }
    let optional = default || field.optional_bytes().is_some() || field.is_optional_serde();
    let shape = other_shape(g, field);
    quote!(#krate::__private::ShapeFields::other(__f, #name, #key, #optional, #shape);)
}

/// The shape of a field that is not written through its type's codec:
/// `bin` for `bytes`, `Opaque` for `with` and `serde`.
fn other_shape(g: &Gen<'_>, field: &Field<'_>) -> TokenStream {
    let krate = g.krate;
    if field.attrs.bytes.is_some() {
        let option = field.optional_bytes().is_some();
        quote!(#krate::__private::shape_bin(#option))
    } else {
        quote!(#krate::__private::shape_opaque())
    }
}

/// One variant added to `__v`: its name, its tag in a union, what follows
/// them.
fn variant(g: &Gen<'_>, variant: &Variant<'_>, tag: Option<u32>) -> TokenStream {
    let krate = g.krate;
    let variants = quote!(#krate::__private::ShapeVariants);
    let name = &variant.wire_name;
    let tag = match tag {
        Some(tag) => quote!(::core::option::Option::Some(#tag)),
        None => quote!(::core::option::Option::None),
    };
    match variant.style {
        Style::Unit => quote!(#variants::unit(__v, #name, #tag);),
        Style::Newtype => {
            let field = &variant.fields[0];
            if field.uses_codec_impl() {
                let ty = field.ty;
                let function = quote_spanned!(ty.span()=> #variants::newtype_of::<#ty>);
                quote!(#function(__v, #name, #tag);)
            } else {
                let shape = other_shape(g, field);
                quote!(#variants::newtype(__v, #name, #tag, #shape);)
            }
        }
        Style::Tuple => {
            let fill = fill_positions(g, &variant.fields);
            quote!(#variants::tuple(__v, #name, #tag, #fill);)
        }
        Style::Named => {
            // By position with `as_array` on the enum, else by name.
            if g.as_array {
                let fill = fill_positions(g, &variant.fields);
                quote!(#variants::array(__v, #name, #tag, #fill);)
            } else {
                let fill = fill(g, encoded(&variant.fields).map(|f| field(g, f, None)));
                quote!(#variants::map(__v, #name, #tag, #fill);)
            }
        }
    }
}
