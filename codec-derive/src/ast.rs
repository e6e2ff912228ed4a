// The model the code generators work on: the derive input with its
// attributes parsed and every wire name computed. Each node keeps its
// `original` syn node for spans.

use std::collections::BTreeSet;

use syn::ext::IdentExt;
use syn::visit::{self, Visit};
use syn::{DeriveInput, Ident, Member, Type};

use crate::attr;
use crate::case::RenameRule;
use crate::ctxt::Ctxt;

pub(crate) struct Input<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) generics: &'a syn::Generics,
    pub(crate) attrs: attr::Container,
    pub(crate) data: Data<'a>,
}

pub(crate) enum Data<'a> {
    Struct(Style, Vec<Field<'a>>),
    Enum(Vec<Variant<'a>>),
}

/// The shape of a struct or variant, which decides its layout on the wire.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) enum Style {
    /// `{ a: A, b: B }`: a map by name (an array with `as_array`).
    Named,
    /// `(A, B)`: an array. Also `()` with no fields.
    Tuple,
    /// `(A)`: the inner value itself.
    Newtype,
    /// No fields and no delimiters.
    Unit,
}

pub(crate) struct Variant<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) attrs: attr::Variant,
    pub(crate) style: Style,
    pub(crate) fields: Vec<Field<'a>>,
    /// The name on the wire, after `rename` / `rename_all`.
    pub(crate) wire_name: String,
}

pub(crate) struct Field<'a> {
    pub(crate) original: &'a syn::Field,
    pub(crate) member: Member,
    pub(crate) ty: &'a Type,
    pub(crate) attrs: attr::Field,
    /// The name on the wire (map key), after `rename` / `rename_all`; the
    /// index for tuple fields, where it only appears in error paths.
    pub(crate) wire_name: String,
}

impl<'a> Input<'a> {
    /// `None` when the input cannot be modelled at all (a union); the reason
    /// is recorded in `cx`.
    pub(crate) fn from_syn(cx: &Ctxt, input: &'a DeriveInput) -> Option<Self> {
        let attrs = attr::Container::from_ast(cx, &input.attrs);
        check_not_packed(cx, &input.attrs);
        let data = match &input.data {
            syn::Data::Struct(data) => {
                let (style, fields) = fields_from_syn(cx, &data.fields, attrs.rename_all);
                Data::Struct(style, fields)
            }
            syn::Data::Enum(data) => Data::Enum(
                data.variants
                    .iter()
                    .map(|v| Variant::from_syn(cx, v, attrs.rename_all))
                    .collect(),
            ),
            syn::Data::Union(data) => {
                cx.error_spanned_by(
                    data.union_token,
                    "`MessageCodec` cannot be derived for a union; use a struct or an enum",
                );
                return None;
            }
        };
        Some(Input {
            ident: &input.ident,
            generics: &input.generics,
            attrs,
            data,
        })
    }

    /// Every field of the type, across variants.
    pub(crate) fn all_fields(&self) -> Box<dyn Iterator<Item = &Field<'a>> + '_> {
        match &self.data {
            Data::Struct(_, fields) => Box::new(fields.iter()),
            Data::Enum(variants) => Box::new(variants.iter().flat_map(|v| v.fields.iter())),
        }
    }

    /// The type has generic parameters of any kind (and therefore is not
    /// registered: a registration names one concrete `'static` type).
    pub(crate) fn is_generic(&self) -> bool {
        !self.generics.params.is_empty()
    }

    /// The type's lifetime parameters that a field decoded through its own
    /// impl names (outside `PhantomData`): what the type borrows from the
    /// input it is decoded from. The input must outlive each of them.
    pub(crate) fn borrowed_lifetimes(&self) -> Vec<&'a syn::Lifetime> {
        let mut finder = FindLifetimes {
            found: BTreeSet::new(),
        };
        for field in self.all_fields().filter(|f| f.uses_codec_impl()) {
            finder.visit_type(field.ty);
        }
        self.generics
            .lifetimes()
            .map(|param| &param.lifetime)
            .filter(|lifetime| finder.found.contains(&lifetime.ident))
            .collect()
    }

    /// A field borrows from the input: the type is `Encode` and `Decode`
    /// but no `MessageCodec` (a message owns its data).
    pub(crate) fn borrows(&self) -> bool {
        !self.borrowed_lifetimes().is_empty()
    }

    /// The integers of `#[codec(reserved(...))]`: keys, positions or tags.
    pub(crate) fn reserved_ints(&self) -> Vec<u32> {
        let items = self.attrs.reserved.iter().flat_map(|(_, items)| items);
        items
            .filter_map(|item| match item {
                attr::Reserved::Int { value, .. } => Some(*value),
                attr::Reserved::Name(_) => None,
            })
            .collect()
    }

    /// The strings of `#[codec(reserved(...))]`: field or variant names.
    pub(crate) fn reserved_names(&self) -> Vec<String> {
        let items = self.attrs.reserved.iter().flat_map(|(_, items)| items);
        items
            .filter_map(|item| match item {
                attr::Reserved::Name(lit) => Some(lit.value()),
                attr::Reserved::Int { .. } => None,
            })
            .collect()
    }

    /// An `as_array` struct with reserved positions is written as a keyed
    /// one: each encoded field gets the key of its position, the `i`-th
    /// position that is not reserved, so a reserved position is a gap,
    /// written as `nil` and skipped when read, and the positions of the
    /// other fields step over it. Valid input only (no keys of its own:
    /// `key` and `as_array` exclude each other).
    pub(crate) fn lower_reserved_positions(&mut self) {
        let reserved = self.reserved_ints();
        if self.attrs.as_array.is_none() || reserved.is_empty() {
            return;
        }
        let Data::Struct(Style::Named, fields) = &mut self.data else {
            return;
        };
        let mut position = 0u32;
        for field in fields.iter_mut().filter(|f| f.is_encoded()) {
            while reserved.contains(&position) {
                position += 1;
            }
            let span = field
                .original
                .ident
                .as_ref()
                .map_or_else(proc_macro2::Span::call_site, Ident::span);
            field.attrs.key = Some(attr::Key {
                span,
                lit: span,
                index: position,
            });
            position += 1;
        }
    }
}

impl<'a> Variant<'a> {
    fn from_syn(cx: &Ctxt, variant: &'a syn::Variant, rule: RenameRule) -> Self {
        let attrs = attr::Variant::from_ast(cx, &variant.attrs);
        // Fields of struct variants keep their Rust names: the container's
        // `rename_all` applies to the variant names, as in serde.
        let (style, fields) = fields_from_syn(cx, &variant.fields, RenameRule::None);
        let wire_name = match &attrs.rename {
            Some(lit) => lit.value(),
            None => rule.apply_to_variant(&variant.ident.unraw().to_string()),
        };
        Variant {
            ident: &variant.ident,
            attrs,
            style,
            fields,
            wire_name,
        }
    }
}

impl Field<'_> {
    /// Encoded at all (not `#[codec(skip)]`).
    pub(crate) fn is_encoded(&self) -> bool {
        self.attrs.skip.is_none()
    }

    /// Encoded and decoded through the type's own `MessageCodec` impl (not
    /// `skip`, `with`, `bytes` or `serde`), so the type must implement it.
    pub(crate) fn uses_codec_impl(&self) -> bool {
        self.is_encoded()
            && self.attrs.with.is_none()
            && self.attrs.bytes.is_none()
            && self.attrs.serde.is_none()
    }

    /// Encoded through serde (`#[codec(serde)]`, not skipped).
    pub(crate) fn uses_serde(&self) -> bool {
        self.is_encoded() && self.attrs.serde.is_some()
    }

    /// For `#[codec(serde)]` on a type spelled `Option<..>`: an absent field
    /// is `None`, as for any `Option` field.
    pub(crate) fn is_optional_serde(&self) -> bool {
        self.attrs.serde.is_some() && option_argument(self.ty).is_some()
    }

    /// For `#[codec(bytes)]` on an `Option<B>`: `B`. Recognized by its
    /// spelling (`Option`, `std::option::Option`, `core::option::Option`),
    /// as a derive has no type information; `None` is `nil`.
    pub(crate) fn optional_bytes(&self) -> Option<&syn::Type> {
        self.attrs.bytes.and_then(|_| option_argument(self.ty))
    }
}

/// The encoded fields of a keyed struct (`#[codec(key = N)]` on its fields)
/// with their keys, in key order; `None` when the fields have no keys.
/// Valid input only: every encoded field has a key, each key once.
pub(crate) fn keyed_fields<'f, 'a>(fields: &'f [Field<'a>]) -> Option<Vec<(u32, &'f Field<'a>)>> {
    let mut keyed: Vec<(u32, &Field<'_>)> = fields
        .iter()
        .filter(|f| f.is_encoded())
        .filter_map(|f| Some((f.attrs.key?.index, f)))
        .collect();
    if keyed.is_empty() {
        return None;
    }
    keyed.sort_by_key(|&(key, _)| key);
    Some(keyed)
}

/// `T` of a type spelled `Option<T>`.
fn option_argument(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(syn::GenericArgument::Type(inner)) if args.args.len() == 1 => Some(inner),
        _ => None,
    }
}

fn fields_from_syn<'a>(
    cx: &Ctxt,
    fields: &'a syn::Fields,
    rule: RenameRule,
) -> (Style, Vec<Field<'a>>) {
    let style = match fields {
        syn::Fields::Named(_) => Style::Named,
        syn::Fields::Unnamed(f) if f.unnamed.len() == 1 => Style::Newtype,
        syn::Fields::Unnamed(_) => Style::Tuple,
        syn::Fields::Unit => Style::Unit,
    };
    let fields = fields
        .iter()
        .enumerate()
        .map(|(i, field)| {
            let attrs = attr::Field::from_ast(cx, &field.attrs);
            let (member, wire_name) = match &field.ident {
                Some(ident) => {
                    let wire_name = match &attrs.rename {
                        Some(lit) => lit.value(),
                        None => rule.apply_to_field(&ident.unraw().to_string()),
                    };
                    (Member::Named(ident.clone()), wire_name)
                }
                None => (Member::Unnamed(i.into()), i.to_string()),
            };
            Field {
                original: field,
                member,
                ty: &field.ty,
                attrs,
                wire_name,
            }
        })
        .collect();
    (style, fields)
}

/// Fields of a `#[repr(packed)]` type may be unaligned, and the generated
/// code borrows every field; say so instead of letting rustc report
/// references to packed fields inside generated code.
fn check_not_packed(cx: &Ctxt, attrs: &[syn::Attribute]) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("repr")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("packed") {
                cx.error_spanned_by(
                    &meta.path,
                    "`MessageCodec` cannot be derived for a `#[repr(packed)]` type: the \
                     generated code borrows its fields, which may be unaligned",
                );
            }
            if meta.input.peek(syn::token::Paren) {
                let _content;
                syn::parenthesized!(_content in meta.input);
            }
            Ok(())
        });
    }
}

/// Collects the lifetimes a type names, outside `PhantomData`.
struct FindLifetimes {
    found: BTreeSet<Ident>,
}

impl<'ast> Visit<'ast> for FindLifetimes {
    fn visit_type_path(&mut self, ty: &'ast syn::TypePath) {
        if ty.qself.is_none()
            && let Some(last) = ty.path.segments.last()
            && last.ident == "PhantomData"
        {
            return;
        }
        visit::visit_type_path(self, ty);
    }

    fn visit_lifetime(&mut self, lifetime: &'ast syn::Lifetime) {
        self.found.insert(lifetime.ident.clone());
    }

    fn visit_macro(&mut self, _: &'ast syn::Macro) {}
}
