// Rules that involve more than one attribute, or an attribute and the shape
// of the type (thiserror's valid.rs, serde's check.rs). Each violation is
// recorded in `cx` with the span of the key that has to go.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::Span;
use quote::ToTokens;

use crate::ast::{Data, Field, Input, Style, Variant};
use crate::attr::Reserved;
use crate::ctxt::Ctxt;

pub(crate) fn check(cx: &Ctxt, input: &Input<'_>) {
    check_container(cx, input);
    check_reserved(cx, input);
    match &input.data {
        Data::Struct(style, fields) => check_fields(cx, input, *style, fields, "struct"),
        Data::Enum(variants) => {
            for variant in variants {
                check_fields(cx, input, variant.style, &variant.fields, "variant");
            }
            match input.attrs.union {
                Some(_) => {
                    if let Some(span) = input.attrs.rename_all_span {
                        cx.error_at(
                            span,
                            "`rename_all` has no effect in a `union`: its variants are known by \
                             their tag; remove it",
                        );
                    }
                    check_union(cx, variants)
                }
                None => {
                    check_variant_names(cx, variants);
                    check_no_tags(cx, variants);
                }
            }
        }
    }
}

/// A `union` enum: every variant has a tag (but the one catch-all, a
/// tuple variant of the tag and the raw payload), each tag once; names
/// play no part.
fn check_union(cx: &Ctxt, variants: &[Variant<'_>]) {
    let mut tags: BTreeMap<u32, &Variant<'_>> = BTreeMap::new();
    let mut catch_all: Option<&Variant<'_>> = None;
    for variant in variants {
        if let Some(lit) = &variant.attrs.rename {
            cx.error_spanned_by(
                lit,
                "`rename` has no effect in a `union`: its variants are known by their tag",
            );
        }
        match (variant.attrs.tag, variant.attrs.other) {
            (Some(_), Some(other)) => cx.error_at(
                other,
                "a variant is either tagged or the catch-all (`other`), not both; remove one",
            ),
            (None, None) if !variant.attrs.tag_written => cx.error_at(
                variant.ident.span(),
                format_args!(
                    "variant `{}` needs `#[codec(tag = N)]`: every variant of a `union` has a \
                     stable integer tag (or is its catch-all, `#[codec(other)]`)",
                    variant.ident
                ),
            ),
            (None, None) => {}
            (Some(tag), None) => {
                if let Some(first) = tags.get(&tag.value) {
                    cx.error_at(
                        tag.lit,
                        format_args!(
                            "duplicate tag {}, also on variant `{}`",
                            tag.value, first.ident
                        ),
                    );
                } else {
                    tags.insert(tag.value, variant);
                }
            }
            (None, Some(other)) => {
                if let Some(first) = catch_all {
                    cx.error_at(
                        other,
                        format_args!(
                            "a `union` has one catch-all: variant `{}` is already `other`",
                            first.ident
                        ),
                    );
                } else {
                    catch_all = Some(variant);
                }
                let fields = variant.fields.iter().filter(|f| f.is_encoded()).count();
                if variant.style != Style::Tuple || fields != 2 {
                    cx.error_at(
                        variant.ident.span(),
                        "the catch-all of a `union` holds the tag and the payload it does not \
                         know: write it as a tuple variant of two fields, \
                         `Unknown(u32, codecbus::ext::RawValue)`",
                    );
                }
            }
        }
    }
}

/// Outside a `union`, `tag` and `other` mean nothing.
fn check_no_tags(cx: &Ctxt, variants: &[Variant<'_>]) {
    for variant in variants {
        let spans = [
            ("tag", variant.attrs.tag.map(|t| t.span)),
            ("other", variant.attrs.other),
        ];
        for (key, span) in spans {
            if let Some(span) = span {
                cx.error_at(
                    span,
                    format_args!(
                        "`{key}` needs `#[codec(union)]` on the enum, which writes each value \
                         as `[tag, payload]`"
                    ),
                );
            }
        }
    }
}

fn check_container(cx: &Ctxt, input: &Input<'_>) {
    if let (Some(immutable), Some(lifetime)) =
        (input.attrs.immutable, input.borrowed_lifetimes().first())
    {
        cx.error_at(
            immutable,
            format_args!(
                "`immutable` is for message types, which own their data: this type borrows \
                 from its input (`{}`), so it decodes as a view of a buffer and never travels \
                 on the bus; remove `immutable`, or give the type owned fields",
                lifetime
            ),
        );
    }
    if let (Some(union), Data::Struct(..)) = (input.attrs.union, &input.data) {
        cx.error_at(
            union,
            "`union` applies to enums: it writes a variant as `[tag, payload]`",
        );
    }
    if let (Some(name), Some(_)) = (&input.attrs.name, input.attrs.unregistered) {
        cx.error_spanned_by(
            name,
            "`name` has no effect on an `unregistered` type: nothing is registered under it",
        );
    }
    if let Some(name) = &input.attrs.name
        && input.is_generic()
    {
        cx.error_spanned_by(
            name,
            "`name` is not allowed on a generic type: generic types are not registered, so \
             there is no codec to name",
        );
    }
    check_aliases(cx, input);
}

/// `aliases`: on a registered type with an explicit `name`, none of them
/// that name.
fn check_aliases(cx: &Ctxt, input: &Input<'_>) {
    let Some((span, aliases)) = &input.attrs.aliases else {
        return;
    };
    if input.attrs.unregistered.is_some() {
        cx.error_at(
            *span,
            "`aliases` has no effect on an `unregistered` type: nothing is registered under them",
        );
        return;
    }
    if input.is_generic() {
        cx.error_at(
            *span,
            "`aliases` is not allowed on a generic type: generic types are not registered, so \
             there is no codec to name",
        );
        return;
    }
    let Some(name) = &input.attrs.name else {
        cx.error_at(
            *span,
            "`aliases` needs an explicit `name = \"...\"`: the aliases are the codec names the \
             type had before, the name the one it has now (a default name, the module path, \
             would change again with the next move)",
        );
        return;
    };
    for alias in aliases {
        if alias.value() == name.value() {
            cx.error_spanned_by(
                alias,
                format_args!(
                    "alias {:?} is the codec name itself: list only the names the type had before",
                    alias.value()
                ),
            );
        }
    }
}

fn check_fields(cx: &Ctxt, input: &Input<'_>, style: Style, fields: &[Field<'_>], what: &str) {
    let as_array = input.attrs.as_array.is_some();
    for field in fields {
        let attrs = &field.attrs;
        let named = style == Style::Named;

        if let Some(skip) = attrs.skip {
            let others = [
                ("rename", attrs.rename.as_ref().map(|lit| lit.span())),
                ("bytes", attrs.bytes),
                ("serde", attrs.serde),
                ("with", attrs.with.as_ref().map(|(span, _)| *span)),
                ("skip_if", attrs.skip_if.as_ref().map(|(span, _)| *span)),
                ("key", attrs.key.map(|key| key.span)),
            ];
            for (key, span) in others {
                if let Some(span) = span {
                    cx.error_at(
                        span,
                        format_args!("`{key}` has no effect on a field with `skip`; remove one"),
                    );
                }
            }
            if style == Style::Newtype {
                cx.error_at(
                    skip,
                    format_args!(
                        "`skip` on the only field of a newtype {what} leaves nothing to encode; \
                         use a unit {what} instead"
                    ),
                );
            }
        }

        if let (Some(bytes), Some(_)) = (attrs.bytes, &attrs.with) {
            cx.error_at(bytes, "`bytes` cannot be combined with `with`; use one");
        }
        if let Some(serde) = attrs.serde {
            if attrs.bytes.is_some() {
                cx.error_at(serde, "`serde` cannot be combined with `bytes`; use one");
            }
            if attrs.with.is_some() {
                cx.error_at(serde, "`serde` cannot be combined with `with`; use one");
            }
        }

        if let Some(key) = attrs.key {
            if what == "variant" {
                cx.error_at(
                    key.span,
                    "`key` is not allowed on a field of an enum variant: put it on the named \
                     fields of a struct",
                );
            } else if !named {
                cx.error_at(
                    key.span,
                    "`key` is not allowed on a tuple field: put it on the named fields of a \
                     struct",
                );
            } else if let Some((span, _)) = &attrs.skip_if {
                cx.error_at(
                    *span,
                    "`skip_if` is not allowed on a field with `key`: every key has its \
                     position in the array",
                );
            }
        }

        if !named {
            if let Some(lit) = &attrs.rename {
                cx.error_spanned_by(
                    lit,
                    "`rename` is not expected on a tuple field: only named fields have a name \
                     on the wire",
                );
            }
            if let Some((span, _)) = &attrs.skip_if {
                cx.error_at(
                    *span,
                    "`skip_if` is not allowed on a tuple field: positions would shift",
                );
            }
        } else if as_array && let Some((span, _)) = &attrs.skip_if {
            cx.error_at(
                *span,
                "`skip_if` is not allowed on an `as_array` type: positions would shift",
            );
        }
    }

    if style == Style::Named && what == "struct" {
        check_keys(cx, input, fields);
    }

    if style == Style::Named {
        let mut seen: BTreeMap<&str, &Field<'_>> = BTreeMap::new();
        for field in fields.iter().filter(|f| f.is_encoded()) {
            if let Some(first) = seen.insert(&field.wire_name, field) {
                let first_name = first.member.to_token_stream().to_string();
                cx.error_at(
                    name_span(field),
                    format_args!(
                        "the key `{}` is used twice: field `{first_name}` already has it",
                        field.wire_name
                    ),
                );
                seen.insert(&first.wire_name, first);
            }
        }
    }
}

/// Keyed fields (`key = N`): all encoded fields or none, each key once, and
/// no `as_array` on the type.
fn check_keys(cx: &Ctxt, input: &Input<'_>, fields: &[Field<'_>]) {
    let encoded = || fields.iter().filter(|f| f.is_encoded());
    if !encoded().any(|f| f.attrs.key.is_some()) {
        return;
    }
    if let Some(as_array) = input.attrs.as_array {
        cx.error_at(
            as_array,
            "`as_array` cannot be combined with `key` on fields: keyed fields are written as an \
             array by key already; remove one",
        );
    }
    let mut seen: BTreeMap<u32, &Field<'_>> = BTreeMap::new();
    for field in encoded() {
        match field.attrs.key {
            None => cx.error_at(
                field
                    .original
                    .ident
                    .as_ref()
                    .map_or_else(|| name_span(field), |ident| ident.span()),
                "every field needs `#[codec(key = N)]` once one has it; give this field a key \
                 or `#[codec(skip)]`",
            ),
            Some(key) => {
                if let Some(first) = seen.get(&key.index) {
                    let first_name = first.member.to_token_stream().to_string();
                    cx.error_at(
                        key.lit,
                        format_args!("duplicate key {}, also on field `{first_name}`", key.index),
                    );
                } else {
                    seen.insert(key.index, field);
                }
            }
        }
    }
}

fn check_variant_names(cx: &Ctxt, variants: &[Variant<'_>]) {
    let mut seen: BTreeMap<&str, &Variant<'_>> = BTreeMap::new();
    for variant in variants {
        if let Some(first) = seen.insert(&variant.wire_name, variant) {
            let span = match &variant.attrs.rename {
                Some(lit) => lit.span(),
                None => variant.ident.span(),
            };
            cx.error_at(
                span,
                format_args!(
                    "the variant name `{}` is used twice: variant `{}` already has it",
                    variant.wire_name, first.ident
                ),
            );
            seen.insert(&first.wire_name, first);
        }
    }
}

/// Where a field's wire name comes from: its `rename` literal, else its ident.
fn name_span(field: &Field<'_>) -> Span {
    match (&field.attrs.rename, &field.original.ident) {
        (Some(lit), _) => lit.span(),
        (None, Some(ident)) => ident.span(),
        (None, None) => syn::spanned::Spanned::span(field.ty),
    }
}

/// What `reserved` holds back in a type of this layout.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Reserves {
    /// Keys of a keyed struct.
    Keys,
    /// Positions of an `as_array` struct.
    Positions,
    /// Field names of a struct written as a map.
    FieldNames,
    /// Tags of a `union`.
    Tags,
    /// Variant names of an enum.
    VariantNames,
}

impl Reserves {
    fn integers(self) -> bool {
        matches!(self, Reserves::Keys | Reserves::Positions | Reserves::Tags)
    }

    /// Why an item of the other kind means nothing in this layout.
    fn wrong_kind(self) -> &'static str {
        match self {
            Reserves::Keys => {
                "a keyed struct reserves keys, integers such as `reserved(3)`: its fields are \
                 known by key, so a name means nothing on its wire"
            }
            Reserves::Positions => {
                "an `as_array` struct reserves positions, integers such as `reserved(1)`: its \
                 fields are known by position, so a name means nothing on its wire"
            }
            Reserves::FieldNames => {
                "a struct written as a map reserves field names, strings such as \
                 `reserved(\"old_name\")`: its fields are known by name, so an integer means \
                 nothing on its wire (positions are reserved on an `as_array` struct, keys on \
                 one with `key = N` fields)"
            }
            Reserves::Tags => {
                "a `union` reserves tags, integers such as `reserved(7)`: its variants are known \
                 by tag, so a name means nothing on its wire"
            }
            Reserves::VariantNames => {
                "an enum reserves variant names, strings such as `reserved(\"OldVariant\")`: its \
                 variants are known by name, so an integer means nothing on its wire (tags are \
                 reserved on a `#[codec(union)]` enum)"
            }
        }
    }
}

/// `reserved(...)`: items of the kind the layout knows its fields or
/// variants by, and none of them taken again.
fn check_reserved(cx: &Ctxt, input: &Input<'_>) {
    let Some((span, items)) = &input.attrs.reserved else {
        return;
    };
    let reserves = match &input.data {
        Data::Struct(Style::Named, fields) => {
            if fields
                .iter()
                .any(|f| f.is_encoded() && f.attrs.key.is_some())
            {
                Reserves::Keys
            } else if input.attrs.as_array.is_some() {
                Reserves::Positions
            } else {
                Reserves::FieldNames
            }
        }
        Data::Struct(..) => {
            cx.error_at(
                *span,
                "`reserved` applies to structs with named fields and to enums: a tuple, newtype \
                 or unit struct has no keys or names to hold back (give the fields names, with \
                 `as_array` to keep them positional)",
            );
            return;
        }
        Data::Enum(_) if input.attrs.union.is_some() => Reserves::Tags,
        Data::Enum(_) => Reserves::VariantNames,
    };
    let mut ints: BTreeSet<u32> = BTreeSet::new();
    let mut names: BTreeSet<String> = BTreeSet::new();
    for item in items {
        match item {
            Reserved::Int { value, .. } if reserves.integers() => {
                ints.insert(*value);
            }
            Reserved::Name(lit) if !reserves.integers() => {
                names.insert(lit.value());
            }
            _ => cx.error_at(item.span(), reserves.wrong_kind()),
        }
    }
    match &input.data {
        Data::Struct(_, fields) => {
            for field in fields.iter().filter(|f| f.is_encoded()) {
                match (reserves, field.attrs.key) {
                    (Reserves::Keys, Some(key)) if ints.contains(&key.index) => cx.error_at(
                        key.lit,
                        format_args!(
                            "key {} is reserved: a key that was removed must never be reused: \
                             peers still running the old build read it as the old field; pick a \
                             new key",
                            key.index
                        ),
                    ),
                    (Reserves::FieldNames, _) if names.contains(&field.wire_name) => cx.error_at(
                        name_span(field),
                        format_args!(
                            "the field name `{}` is reserved: a field name that was removed \
                                 must never be reused: peers still running the old build read it \
                                 as the old field; pick a new name",
                            field.wire_name
                        ),
                    ),
                    _ => {}
                }
            }
        }
        Data::Enum(variants) => {
            for variant in variants {
                match (reserves, variant.attrs.tag) {
                    (Reserves::Tags, Some(tag)) if ints.contains(&tag.value) => cx.error_at(
                        tag.lit,
                        format_args!(
                            "tag {} is reserved: a tag that was removed must never be reused: \
                             peers still running the old build read it as the old variant; pick \
                             a new tag",
                            tag.value
                        ),
                    ),
                    (Reserves::VariantNames, _) if names.contains(&variant.wire_name) => {
                        let span = match &variant.attrs.rename {
                            Some(lit) => lit.span(),
                            None => variant.ident.span(),
                        };
                        cx.error_at(
                            span,
                            format_args!(
                                "the variant name `{}` is reserved: a variant name that was \
                                 removed must never be reused: peers still running the old build \
                                 read it as the old variant; pick a new name",
                                variant.wire_name
                            ),
                        );
                    }
                    _ => {}
                }
            }
        }
    }
}
