// `#[codec(...)]` attributes on the container, its fields and its variants.
//
// Contract (serde_derive's attr.rs): parsing never fails. Every problem is
// recorded in the `Ctxt` with the smallest useful span (the key for unknown
// or duplicate keys, the literal for a bad value) and parsing carries on with
// the next key, so that several mistakes are reported in one compile. The
// returned values hold whatever parsed cleanly; a derive with any recorded
// error never reaches codegen.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{ExprPath, LitStr, Token};

use crate::case::RenameRule;
use crate::ctxt::Ctxt;
use crate::symbol::*;

/// Where an attribute was written, for messages and for the keys accepted.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Level {
    Container,
    Field,
    Variant,
}

impl Level {
    fn adjective(self) -> &'static str {
        match self {
            Level::Container => "container",
            Level::Field => "field",
            Level::Variant => "variant",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Level::Container => "a type",
            Level::Field => "a field",
            Level::Variant => "a variant",
        }
    }
}

const CONTAINER_KEYS: &[Symbol] = &[
    IMMUTABLE,
    NAME,
    ALIASES,
    AS_ARRAY,
    RENAME_ALL,
    CRATE,
    UNREGISTERED,
    BOUND,
    UNION,
    RESERVED,
];
const FIELD_KEYS: &[Symbol] = &[RENAME, SKIP, DEFAULT, BYTES, WITH, SKIP_IF, SERDE, KEY];
const VARIANT_KEYS: &[Symbol] = &[RENAME, TAG, OTHER];

/// One attribute value plus the span of its key, with duplicate detection.
struct Attr<'c, T> {
    cx: &'c Ctxt,
    name: Symbol,
    value: Option<(Span, T)>,
}

impl<'c, T> Attr<'c, T> {
    fn none(cx: &'c Ctxt, name: Symbol) -> Self {
        Attr {
            cx,
            name,
            value: None,
        }
    }

    fn set(&mut self, key: &syn::Path, value: T) {
        if self.value.is_some() {
            self.cx.error_spanned_by(
                key,
                format_args!("duplicate codec attribute `{}`", self.name),
            );
        } else {
            self.value = Some((key.span(), value));
        }
    }

    fn get(self) -> Option<(Span, T)> {
        self.value
    }

    fn value(self) -> Option<T> {
        self.value.map(|(_, v)| v)
    }

    fn span(&self) -> Option<Span> {
        self.value.as_ref().map(|(span, _)| *span)
    }
}

impl Attr<'_, ()> {
    fn set_true(&mut self, key: &syn::Path) {
        self.set(key, ());
    }

    fn flag(self) -> Option<Span> {
        self.span()
    }
}

/// Container attributes: `#[codec(...)]` on the struct or enum.
pub(crate) struct Container {
    /// Span of the `immutable` key when present.
    pub(crate) immutable: Option<Span>,
    /// The codec name literal (`name = "..."`).
    pub(crate) name: Option<LitStr>,
    /// `aliases("...", ...)`: the span of the key and the names the type
    /// had before, each a non-empty literal, none twice.
    pub(crate) aliases: Option<(Span, Vec<LitStr>)>,
    /// Span of the `as_array` key when present.
    pub(crate) as_array: Option<Span>,
    pub(crate) rename_all: RenameRule,
    /// Span of the `rename_all` key when present.
    pub(crate) rename_all_span: Option<Span>,
    /// The path that replaces `::codecbus_core` in generated code.
    pub(crate) crate_path: Option<syn::Path>,
    /// Span of the `unregistered` key when present: no inventory submission.
    pub(crate) unregistered: Option<Span>,
    /// `bound = "..."`: the where-clause predicates that replace the
    /// inferred ones.
    pub(crate) bound: Option<Vec<syn::WherePredicate>>,
    /// Span of the `union` key when present: an enum written as
    /// `[tag, payload]`.
    pub(crate) union: Option<Span>,
    /// `reserved(3, "old_name", ...)`: the span of the key and the keys,
    /// positions, tags or names removed fields or variants held, none
    /// twice.
    pub(crate) reserved: Option<(Span, Vec<Reserved>)>,
}

/// One item of `#[codec(reserved(...))]`.
pub(crate) enum Reserved {
    /// A key, position or tag.
    Int {
        /// The literal's span.
        span: Span,
        value: u32,
    },
    /// A field or variant name.
    Name(LitStr),
}

impl Reserved {
    pub(crate) fn span(&self) -> Span {
        match self {
            Reserved::Int { span, .. } => *span,
            Reserved::Name(lit) => lit.span(),
        }
    }
}

/// How a field absent from the input is filled in.
pub(crate) enum DefaultValue {
    /// Not set: `Option` fields become `None`, others are required.
    None,
    /// `#[codec(default)]`: `Default::default()`.
    Default,
    /// `#[codec(default = "path")]`: `path()`.
    Path(ExprPath),
}

/// Field attributes.
pub(crate) struct Field {
    /// The wire name literal (`rename = "..."`).
    pub(crate) rename: Option<LitStr>,
    /// Span of the `skip` key when present.
    pub(crate) skip: Option<Span>,
    /// Span of the `default` key, and what it says.
    pub(crate) default: (Option<Span>, DefaultValue),
    /// Span of the `bytes` key when present.
    pub(crate) bytes: Option<Span>,
    /// Span of the `serde` key when present: encoded through serde.
    pub(crate) serde: Option<Span>,
    /// `with = "module"`: key span and module path.
    pub(crate) with: Option<(Span, ExprPath)>,
    /// `skip_if = "path"`: key span and predicate path.
    pub(crate) skip_if: Option<(Span, ExprPath)>,
    /// `key = N`: the field's index in the keyed array layout.
    pub(crate) key: Option<Key>,
}

/// `#[codec(key = N)]` on a field.
#[derive(Copy, Clone)]
pub(crate) struct Key {
    /// Span of the `key` path.
    pub(crate) span: Span,
    /// Span of the integer literal.
    pub(crate) lit: Span,
    /// The index in the array.
    pub(crate) index: u32,
}

/// The largest `key`: the array is one longer, and its length must fit the
/// 32-bit length of a MessagePack array header.
pub(crate) const MAX_KEY: u32 = u32::MAX - 1;

/// Variant attributes.
pub(crate) struct Variant {
    /// The wire name literal (`rename = "..."`).
    pub(crate) rename: Option<LitStr>,
    /// `tag = N`: the variant's integer tag in a `union` enum.
    pub(crate) tag: Option<Tag>,
    /// Span of the `other` key when present: the catch-all of a `union`.
    pub(crate) other: Option<Span>,
    /// Whether a `tag` key was written, valid or not (an invalid one is
    /// reported where it is, not again as a missing tag).
    pub(crate) tag_written: bool,
}

/// `#[codec(tag = N)]` on a variant.
#[derive(Copy, Clone)]
pub(crate) struct Tag {
    /// Span of the `tag` path.
    pub(crate) span: Span,
    /// Span of the integer literal.
    pub(crate) lit: Span,
    /// The tag.
    pub(crate) value: u32,
}

impl Container {
    pub(crate) fn from_ast(cx: &Ctxt, attrs: &[syn::Attribute]) -> Self {
        let mut immutable = Attr::none(cx, IMMUTABLE);
        let mut name = Attr::none(cx, NAME);
        let mut aliases = Attr::none(cx, ALIASES);
        let mut as_array = Attr::none(cx, AS_ARRAY);
        let mut rename_all = Attr::none(cx, RENAME_ALL);
        let mut crate_path = Attr::none(cx, CRATE);
        let mut unregistered = Attr::none(cx, UNREGISTERED);
        let mut bound = Attr::none(cx, BOUND);
        let mut union = Attr::none(cx, UNION);
        let mut reserved = Attr::none(cx, RESERVED);

        for_each_key(cx, attrs, Level::Container, |meta| {
            if meta.path == UNION {
                if flag(cx, meta, UNION) {
                    union.set_true(&meta.path);
                }
            } else if meta.path == UNREGISTERED {
                if flag(cx, meta, UNREGISTERED) {
                    unregistered.set_true(&meta.path);
                }
            } else if meta.path == IMMUTABLE {
                if flag(cx, meta, IMMUTABLE) {
                    immutable.set_true(&meta.path);
                }
            } else if meta.path == AS_ARRAY {
                if flag(cx, meta, AS_ARRAY) {
                    as_array.set_true(&meta.path);
                }
            } else if meta.path == NAME {
                if let Some(lit) = lit_str(cx, meta, NAME)? {
                    if lit.value().is_empty() {
                        cx.error_spanned_by(&lit, "the codec name must not be empty");
                    } else {
                        name.set(&meta.path, lit);
                    }
                }
            } else if meta.path == ALIASES {
                if let Some(names) = lit_str_list(cx, meta, ALIASES)? {
                    aliases.set(&meta.path, names);
                }
            } else if meta.path == RESERVED {
                if let Some(items) = reserved_list(cx, meta)? {
                    reserved.set(&meta.path, items);
                }
            } else if meta.path == RENAME_ALL {
                if let Some(lit) = lit_str(cx, meta, RENAME_ALL)? {
                    match RenameRule::from_str(&lit.value()) {
                        Ok(rule) => rename_all.set(&meta.path, rule),
                        Err(err) => cx.error_spanned_by(&lit, err),
                    }
                }
            } else if meta.path == BOUND {
                if let Some(lit) = lit_str(cx, meta, BOUND)? {
                    let parser = Punctuated::<syn::WherePredicate, Token![,]>::parse_terminated;
                    match lit.parse_with(parser) {
                        Ok(predicates) => bound.set(&meta.path, predicates.into_iter().collect()),
                        Err(err) => cx.error_spanned_by(
                            &lit,
                            format_args!(
                                "expected where-clause predicates in `bound = \"...\"`, such as \
                                 `bound = \"T: MessageCodec + Clone\"`: {err}"
                            ),
                        ),
                    }
                }
            } else if meta.path == CRATE {
                if let Some(lit) = lit_str(cx, meta, CRATE)? {
                    match lit.parse::<syn::Path>() {
                        Ok(path) => crate_path.set(&meta.path, path),
                        Err(_) => cx.error_spanned_by(
                            &lit,
                            format_args!(
                                "expected a path in `crate = \"...\"`, found {:?}",
                                lit.value()
                            ),
                        ),
                    }
                }
            } else {
                return Ok(false);
            }
            Ok(true)
        });

        Container {
            immutable: immutable.flag(),
            name: name.value(),
            aliases: aliases.get(),
            as_array: as_array.flag(),
            rename_all_span: rename_all.span(),
            rename_all: rename_all.value().unwrap_or(RenameRule::None),
            crate_path: crate_path.value(),
            unregistered: unregistered.flag(),
            bound: bound.value(),
            union: union.flag(),
            reserved: reserved.get(),
        }
    }
}

impl Field {
    pub(crate) fn from_ast(cx: &Ctxt, attrs: &[syn::Attribute]) -> Self {
        let mut rename = Attr::none(cx, RENAME);
        let mut skip = Attr::none(cx, SKIP);
        let mut default = Attr::none(cx, DEFAULT);
        let mut bytes = Attr::none(cx, BYTES);
        let mut serde = Attr::none(cx, SERDE);
        let mut with = Attr::none(cx, WITH);
        let mut skip_if = Attr::none(cx, SKIP_IF);
        let mut key = Attr::none(cx, KEY);

        for_each_key(cx, attrs, Level::Field, |meta| {
            if meta.path == RENAME {
                if let Some(lit) = lit_str(cx, meta, RENAME)? {
                    rename.set(&meta.path, lit);
                }
            } else if meta.path == SKIP {
                if flag(cx, meta, SKIP) {
                    skip.set_true(&meta.path);
                }
            } else if meta.path == BYTES {
                if flag(cx, meta, BYTES) {
                    bytes.set_true(&meta.path);
                }
            } else if meta.path == SERDE {
                if flag(cx, meta, SERDE) {
                    serde.set_true(&meta.path);
                }
            } else if meta.path == DEFAULT {
                if meta.input.peek(Token![=]) {
                    if let Some(path) = lit_path(cx, meta, DEFAULT)? {
                        default.set(&meta.path, DefaultValue::Path(path));
                    }
                } else if meta.input.is_empty() || meta.input.peek(Token![,]) {
                    default.set(&meta.path, DefaultValue::Default);
                } else {
                    let rest = skip_value(meta)?;
                    cx.error_spanned_by(
                        rest,
                        "expected `#[codec(default)]` or `#[codec(default = \"path\")]`",
                    );
                }
            } else if meta.path == WITH {
                if let Some(path) = lit_path(cx, meta, WITH)? {
                    with.set(&meta.path, path);
                }
            } else if meta.path == SKIP_IF {
                if let Some(path) = lit_path(cx, meta, SKIP_IF)? {
                    skip_if.set(&meta.path, path);
                }
            } else if meta.path == KEY {
                if let Some((lit, index)) = lit_index(cx, meta, KEY, u64::from(MAX_KEY))? {
                    key.set(&meta.path, (lit, index as u32));
                }
            } else {
                return Ok(false);
            }
            Ok(true)
        });

        let default = match default.get() {
            Some((span, d)) => (Some(span), d),
            None => (None, DefaultValue::None),
        };
        Field {
            rename: rename.value(),
            skip: skip.flag(),
            default,
            bytes: bytes.flag(),
            serde: serde.flag(),
            with: with.get(),
            skip_if: skip_if.get(),
            key: key
                .get()
                .map(|(span, (lit, index))| Key { span, lit, index }),
        }
    }
}

impl Variant {
    pub(crate) fn from_ast(cx: &Ctxt, attrs: &[syn::Attribute]) -> Self {
        let mut rename = Attr::none(cx, RENAME);
        let mut tag = Attr::none(cx, TAG);
        let mut other = Attr::none(cx, OTHER);
        let mut tag_written = false;
        for_each_key(cx, attrs, Level::Variant, |meta| {
            if meta.path == RENAME {
                if let Some(lit) = lit_str(cx, meta, RENAME)? {
                    rename.set(&meta.path, lit);
                }
            } else if meta.path == TAG {
                tag_written = true;
                if let Some((lit, value)) = lit_index(cx, meta, TAG, u64::from(u32::MAX))? {
                    tag.set(&meta.path, (lit, value as u32));
                }
            } else if meta.path == OTHER {
                if flag(cx, meta, OTHER) {
                    other.set_true(&meta.path);
                }
            } else {
                return Ok(false);
            }
            Ok(true)
        });
        Variant {
            rename: rename.value(),
            tag: tag
                .get()
                .map(|(span, (lit, value))| Tag { span, lit, value }),
            other: other.flag(),
            tag_written,
        }
    }
}

/// Runs `handle` on every key of every `#[codec(...)]` attribute. `handle`
/// returns `Ok(false)` for a key it does not know; this reports it (with a
/// hint when the key belongs elsewhere), skips its value and goes on.
fn for_each_key(
    cx: &Ctxt,
    attrs: &[syn::Attribute],
    level: Level,
    mut handle: impl FnMut(&ParseNestedMeta<'_>) -> syn::Result<bool>,
) {
    for attr in attrs {
        if attr.path() != CODEC {
            continue;
        }
        let syn::Meta::List(list) = &attr.meta else {
            cx.error_spanned_by(attr, "expected `#[codec(...)]`");
            continue;
        };
        if list.tokens.is_empty() {
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            if handle(&meta)? {
                return Ok(());
            }
            cx.syn_error(meta.error(unknown_key_message(&meta.path, level)));
            skip_value(&meta)?;
            Ok(())
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
}

fn unknown_key_message(path: &syn::Path, level: Level) -> String {
    let key = path.to_token_stream().to_string().replace(' ', "");
    let elsewhere: Vec<&str> = [
        (Level::Container, CONTAINER_KEYS, "the type"),
        (Level::Field, FIELD_KEYS, "a field"),
        (Level::Variant, VARIANT_KEYS, "a variant"),
    ]
    .iter()
    .filter(|(l, keys, _)| *l != level && keys.iter().any(|k| path == k))
    .map(|&(_, _, place)| place)
    .collect();
    if elsewhere.is_empty() {
        let mut msg = format!("unknown codec {} attribute `{key}`", level.adjective());
        if let Some(suggestion) = suggest(&key, level) {
            msg.push_str(&format!("; did you mean `{suggestion}`?"));
        }
        return msg;
    }
    let mut msg = format!(
        "`#[codec({key})]` is not expected on {}; put it on {}",
        level.noun(),
        elsewhere.join(" or ")
    );
    if level == Level::Container && path == RENAME {
        msg.push_str(", or use `name = \"...\"` to set the codec name");
    }
    msg
}

/// The key the user probably meant: serde's spelling of the same idea, or a
/// key of this level within two edits.
fn suggest(key: &str, level: Level) -> Option<&'static str> {
    let serde_spelling = match (level, key) {
        (Level::Field, "skip_serializing_if") => Some(SKIP_IF.0),
        (Level::Field, "skip_serializing" | "skip_deserializing") => Some(SKIP.0),
        (Level::Field, "serialize_with" | "deserialize_with") => Some(WITH.0),
        (Level::Field, "serde_bytes") => Some(BYTES.0),
        _ => None,
    };
    if serde_spelling.is_some() {
        return serde_spelling;
    }
    let keys = match level {
        Level::Container => CONTAINER_KEYS,
        Level::Field => FIELD_KEYS,
        Level::Variant => VARIANT_KEYS,
    };
    keys.iter()
        .map(|k| (edit_distance(key, k.0), k.0))
        .filter(|&(d, _)| d <= 2)
        .min()
        .map(|(_, k)| k)
}

/// Levenshtein distance over bytes (keys are ASCII identifiers).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Consumes the rest of the current key's value (`= ...` or `(...)`) up to
/// the next comma, returning the skipped tokens (for spans).
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<TokenStream> {
    meta.input.step(|cursor| {
        let mut rest = *cursor;
        let mut skipped = TokenStream::new();
        while let Some((tt, next)) = rest.token_tree() {
            if let TokenTree::Punct(p) = &tt
                && p.as_char() == ','
            {
                break;
            }
            skipped.extend(std::iter::once(tt));
            rest = next;
        }
        Ok((skipped, rest))
    })
}

/// A flag key (`skip`): reports a value given to it. True when it is well formed.
fn flag(cx: &Ctxt, meta: &ParseNestedMeta<'_>, name: Symbol) -> bool {
    if meta.input.is_empty() || meta.input.peek(Token![,]) {
        return true;
    }
    match skip_value(meta) {
        Ok(rest) => {
            let mut tokens = meta.path.to_token_stream();
            tokens.extend(rest);
            cx.error_spanned_by(
                tokens,
                format_args!("`{name}` takes no value; write `#[codec({name})]`"),
            );
        }
        Err(err) => cx.syn_error(err),
    }
    false
}

/// The string literal of `key = "..."`; anything else is reported.
fn lit_str(cx: &Ctxt, meta: &ParseNestedMeta<'_>, name: Symbol) -> syn::Result<Option<LitStr>> {
    if !meta.input.peek(Token![=]) {
        let rest = skip_value(meta)?;
        let mut tokens = meta.path.to_token_stream();
        tokens.extend(rest);
        cx.error_spanned_by(
            tokens,
            format_args!("`{name}` needs a value: `{name} = \"...\"`"),
        );
        return Ok(None);
    }
    let value = meta.value()?;
    if let Some(lit) = parse_lit_str(value) {
        return Ok(Some(lit));
    }
    let rest = skip_value(meta)?;
    cx.error_spanned_by(
        rest,
        format_args!("expected a string literal: `{name} = \"...\"`"),
    );
    Ok(None)
}

/// The items of `key(a, b, ...)`: `None` (reported, `not_a_list` at the
/// key and its value) when no parenthesized list follows the key, or (at
/// the parentheses, `empty`) when it has no item.
fn paren_list(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    not_a_list: std::fmt::Arguments<'_>,
    empty: std::fmt::Arguments<'_>,
) -> syn::Result<Option<Punctuated<syn::Expr, Token![,]>>> {
    if !meta.input.peek(syn::token::Paren) {
        let rest = skip_value(meta)?;
        let mut tokens = meta.path.to_token_stream();
        tokens.extend(rest);
        cx.error_spanned_by(tokens, not_a_list);
        return Ok(None);
    }
    let content;
    let parens = syn::parenthesized!(content in meta.input);
    let items = match Punctuated::<syn::Expr, Token![,]>::parse_terminated(&content) {
        Ok(items) => items,
        Err(err) => {
            cx.syn_error(err);
            return Ok(None);
        }
    };
    if items.is_empty() {
        cx.error_at(parens.span.join(), empty);
        return Ok(None);
    }
    Ok(Some(items))
}

/// The string literals of `what("...", ...)` (the codec names of
/// `aliases`): at least one, each a non-empty string literal, none twice.
/// Anything else is reported at the offending token, and the literals that
/// passed are returned.
fn lit_str_list(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    what: Symbol,
) -> syn::Result<Option<Vec<LitStr>>> {
    let Some(items) = paren_list(
        cx,
        meta,
        format_args!(
            "`{what}` takes a list of the codec names the type had before: \
             `{what}(\"old.name\", ...)`"
        ),
        format_args!(
            "`{what}` needs at least one codec name: `{what}(\"old.name\")`, or no `{what}`"
        ),
    )?
    else {
        return Ok(None);
    };
    let mut names: Vec<LitStr> = Vec::with_capacity(items.len());
    for item in items {
        let Some(lit) = expr_lit_str(&item) else {
            cx.error_spanned_by(
                item,
                format_args!("expected a string literal: `{what}(\"old.name\", ...)`"),
            );
            continue;
        };
        if lit.value().is_empty() {
            cx.error_spanned_by(&lit, "an alias must not be empty");
        } else if names.iter().any(|seen| seen.value() == lit.value()) {
            cx.error_spanned_by(&lit, format_args!("duplicate alias {:?}", lit.value()));
        } else {
            names.push(lit);
        }
    }
    Ok(Some(names))
}

/// The items of `reserved(3, "old_name", ...)`: at least one, each an
/// integer literal up to `u32::MAX` or a non-empty string literal, none
/// twice. Anything else is reported at the offending token, and the items
/// that passed are returned.
fn reserved_list(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<Vec<Reserved>>> {
    const EXAMPLE: &str = "`reserved(3, \"old_name\")`";
    let Some(items) = paren_list(
        cx,
        meta,
        format_args!(
            "`reserved` takes a list of the keys, positions or tags (integers) and the \
             names (strings) that removed fields or variants held: {EXAMPLE}"
        ),
        format_args!("`reserved` needs at least one key, tag or name: {EXAMPLE}, or no `reserved`"),
    )?
    else {
        return Ok(None);
    };
    let mut out: Vec<Reserved> = Vec::with_capacity(items.len());
    for item in items {
        let item = match unwrap_expr(&item) {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(lit),
                ..
            }) if lit.suffix().is_empty() => match lit.base10_parse::<u32>() {
                Ok(value) => Reserved::Int {
                    span: lit.span(),
                    value,
                },
                Err(_) => {
                    cx.error_spanned_by(
                        lit,
                        format_args!(
                            "{} is too large: keys, positions and tags go up to {}",
                            lit.base10_digits(),
                            u32::MAX
                        ),
                    );
                    continue;
                }
            },
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(lit),
                ..
            }) => {
                if lit.value().is_empty() {
                    cx.error_spanned_by(lit, "a reserved name must not be empty");
                    continue;
                }
                Reserved::Name(lit.clone())
            }
            _ => {
                cx.error_spanned_by(
                    &item,
                    format_args!(
                        "expected a non-negative integer literal (a key, position or tag) or a \
                         string literal (a field or variant name): {EXAMPLE}"
                    ),
                );
                continue;
            }
        };
        let twice = out.iter().any(|seen| match (seen, &item) {
            (Reserved::Int { value: a, .. }, Reserved::Int { value: b, .. }) => a == b,
            (Reserved::Name(a), Reserved::Name(b)) => a.value() == b.value(),
            _ => false,
        });
        if twice {
            let what = match &item {
                Reserved::Int { value, .. } => value.to_string(),
                Reserved::Name(lit) => format!("{:?}", lit.value()),
            };
            cx.error_at(item.span(), format_args!("{what} is reserved twice"));
        } else {
            out.push(item);
        }
    }
    Ok(Some(out))
}

/// The expression inside the invisible groups of `macro_rules!` expansions
/// and parentheses.
fn unwrap_expr(expr: &syn::Expr) -> &syn::Expr {
    let mut expr = expr;
    loop {
        match expr {
            syn::Expr::Group(group) => expr = &group.expr,
            syn::Expr::Paren(paren) => expr = &paren.expr,
            other => return other,
        }
    }
}

/// The string literal an expression is, also inside the invisible group of
/// a `macro_rules!` expansion or in parentheses.
fn expr_lit_str(expr: &syn::Expr) -> Option<LitStr> {
    let mut expr = expr;
    loop {
        match expr {
            syn::Expr::Group(group) => expr = &group.expr,
            syn::Expr::Paren(paren) => expr = &paren.expr,
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(lit),
                ..
            }) => return Some(lit.clone()),
            _ => return None,
        }
    }
}

/// The integer literal of `what = N` and its value; anything else, or a
/// value above `max`, is reported at the value.
fn lit_index(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    what: Symbol,
    max: u64,
) -> syn::Result<Option<(Span, u64)>> {
    if !meta.input.peek(Token![=]) {
        let rest = skip_value(meta)?;
        let mut tokens = meta.path.to_token_stream();
        tokens.extend(rest);
        cx.error_spanned_by(tokens, format_args!("`{what}` needs a value: `{what} = N`"));
        return Ok(None);
    }
    meta.input.parse::<Token![=]>()?;
    let rest = skip_value(meta)?;
    let lit = match syn::parse2::<syn::Expr>(rest.clone()) {
        Ok(mut expr) => loop {
            match expr {
                syn::Expr::Group(group) => expr = *group.expr,
                syn::Expr::Paren(paren) => expr = *paren.expr,
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(lit),
                    ..
                }) if lit.suffix().is_empty() => break Some(lit),
                _ => break None,
            }
        },
        Err(_) => None,
    };
    let Some(lit) = lit else {
        cx.error_spanned_by(
            rest,
            format_args!("expected a non-negative integer literal: `{what} = N`"),
        );
        return Ok(None);
    };
    match lit.base10_parse::<u64>() {
        Ok(index) if index <= max => Ok(Some((lit.span(), index))),
        _ => {
            cx.error_spanned_by(
                &lit,
                format_args!(
                    "{what} {} is too large: the largest {what} is {max}",
                    lit.base10_digits()
                ),
            );
            Ok(None)
        }
    }
}

/// A string literal, also when a `macro_rules!` expansion wrapped it in an
/// invisible group.
fn parse_lit_str(input: syn::parse::ParseStream<'_>) -> Option<LitStr> {
    let fork = input.fork();
    let lit = match fork.parse::<syn::Expr>() {
        Ok(mut expr) => loop {
            match expr {
                syn::Expr::Group(group) => expr = *group.expr,
                syn::Expr::Paren(paren) => expr = *paren.expr,
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(lit),
                    ..
                }) => break lit,
                _ => return None,
            }
        },
        Err(_) => return None,
    };
    if !(fork.is_empty() || fork.peek(Token![,])) {
        return None;
    }
    use syn::parse::discouraged::Speculative;
    input.advance_to(&fork);
    Some(lit)
}

/// A path written as a string: `with = "module"`, `skip_if = "Vec::is_empty"`.
/// The parsed tokens carry the literal's span, so type errors in generated
/// calls point at the string.
fn lit_path(cx: &Ctxt, meta: &ParseNestedMeta<'_>, name: Symbol) -> syn::Result<Option<ExprPath>> {
    let Some(lit) = lit_str(cx, meta, name)? else {
        return Ok(None);
    };
    match lit.parse::<ExprPath>() {
        Ok(path) => Ok(Some(path)),
        Err(_) => {
            cx.error_spanned_by(
                &lit,
                format_args!(
                    "expected a path in `{name} = \"...\"`, found {:?}",
                    lit.value()
                ),
            );
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(edit_distance("immutible", "immutable"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(suggest("immutible", Level::Container), Some("immutable"));
        assert_eq!(suggest("renam", Level::Field), Some("rename"));
        assert_eq!(
            suggest("skip_serializing_if", Level::Field),
            Some("skip_if")
        );
        assert_eq!(suggest("alias", Level::Variant), None);
        assert_eq!(suggest("alias", Level::Container), Some("aliases"));
        assert_eq!(suggest("bound", Level::Container), Some("bound"));
        assert_eq!(suggest("deny_unknown_fields", Level::Container), None);
    }
}
