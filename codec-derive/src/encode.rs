// Generates `Encode::encode`.
//
// Everything known at macro time is written as raw bytes: map and array
// headers of fixed size, every map key with its string header, the
// `{variant:` prefix of enum payloads. Consecutive constant bytes are merged
// into one `write_raw` call, so a struct with n fields costs n + 1 raw writes
// plus the field encodes. Only `skip_if` makes a header length dynamic.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{Data, Field, Input, Style, Variant, keyed_fields};
use crate::codegen::Codegen;

pub(crate) fn expand(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    let helper = if input.all_fields().any(|f| f.attrs.with.is_some()) {
        let krate = cg.krate;
        // `with` functions are passed through this, so one with the wrong
        // signature is reported at the `with = "..."` string as such.
        quote! {
            #[inline(always)]
            fn __with_encode<__T: ?::core::marker::Sized, __F>(
                __f: __F,
                __v: &__T,
                __w: &mut #krate::Writer,
            ) -> ::core::result::Result<(), #krate::EncodeError>
            where
                __F: ::core::ops::FnOnce(
                    &__T,
                    &mut #krate::Writer,
                ) -> ::core::result::Result<(), #krate::EncodeError>,
            {
                __f(__v, __w)
            }
        }
    } else {
        TokenStream::new()
    };
    let body = body(cg, input);
    quote! {
        #helper
        #body
    }
}

/// Whether a type is written into a run (`Encode::MAX_LEN`,
/// `Encode::bound`, `Encode::encode_bounded`): every encoded field goes
/// through its type's codec or is `#[codec(bytes)]`, without `skip_if` or
/// keys, so its bytes are its constant bytes (headers, keys, tags) and its
/// fields'.
pub(crate) fn is_bounded(input: &Input<'_>) -> bool {
    let field_ok = |f: &Field<'_>| {
        !f.is_encoded()
            || ((f.uses_codec_impl() || f.attrs.bytes.is_some()) && f.attrs.skip_if.is_none())
    };
    match &input.data {
        Data::Struct(_, fields) => fields.iter().all(field_ok) && keyed_fields(fields).is_none(),
        Data::Enum(variants) => {
            !variants.is_empty()
                && variants
                    .iter()
                    .all(|v| v.fields.iter().all(field_ok) && keyed_fields(&v.fields).is_none())
        }
    }
}

/// `Encode::MAX_LEN`, `Encode::bound` and `Encode::encode_bounded` of a
/// type [`is_bounded`]: its `MAX_LEN` is its constant bytes plus its
/// fields' (the largest variant's for an enum), `None` when a field has
/// none; its `bound` adds up its fields' bounds for this value.
pub(crate) fn bounded(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    let krate = cg.krate;
    if !is_bounded(input) {
        return TokenStream::new();
    }
    let mut flat = TokenStream::new();
    let (max_len, bound, body) = match &input.data {
        Data::Struct(style, fields) => {
            let mut emit = Emit::bounded(cg);
            struct_body(cg, &mut emit, *style, fields);
            let bounded = emit.finish_bounded();
            let form = bounded.flat;
            // `offset_of!` on a deprecated field is a use the lint
            // reports (it is not in the derive's own expansion): such a
            // struct is written the usual way.
            let deprecated = fields.iter().any(|f| {
                f.original
                    .attrs
                    .iter()
                    .any(|a| a.path().is_ident("deprecated"))
            });
            if !deprecated {
                flat = quote! {
                    const FLAT: ::core::option::Option<#krate::__private::Flat> = #form;
                };
            }
            (bounded.max_len, bounded.bound, bounded.body)
        }
        Data::Enum(variants) if !cg.union && variants.iter().all(|v| v.style == Style::Unit) => {
            names_table(cg, variants)
        }
        Data::Enum(variants) => {
            let mut max_lens = Vec::new();
            let mut bounds = Vec::new();
            let mut bodies = Vec::new();
            for variant in variants {
                let (pattern, emit) = variant_arm(cg, variant, Emit::bounded(cg));
                let Bounded {
                    max_len,
                    bound,
                    body,
                    ..
                } = emit.finish_bounded();
                max_lens.push(max_len);
                bounds.push(quote!(#pattern => { #bound }));
                bodies.push(quote!(#pattern => { #body }));
            }
            (
                quote!(#krate::__private::max_of(&[#(#max_lens),*])),
                quote!(match self { #(#bounds)* }),
                quote!(match self { #(#bodies)* }),
            )
        }
    };
    quote! {
        const MAX_LEN: ::core::option::Option<::core::primitive::usize> = #max_len;
        #flat

        #[inline(always)]
        fn bound(&self) -> ::core::option::Option<::core::primitive::usize> {
            if let ::core::option::Option::Some(__len) = <Self as #krate::Encode>::MAX_LEN {
                return ::core::option::Option::Some(__len);
            }
            #bound
        }

        #[inline(always)]
        fn encode_bounded(&self, __out: &mut #krate::__private::Run<'_>) {
            #body
        }
    }
}

/// A C-like enum (unit variants only, written as their names): each name
/// padded to the longest, in a table indexed by the variant, written
/// without a branch and kept to its length. A `match` writing the names
/// jumps through a table on the variant, mispredicted for varied values.
fn names_table(
    cg: &Codegen<'_>,
    variants: &[Variant<'_>],
) -> (TokenStream, TokenStream, TokenStream) {
    let krate = cg.krate;
    let names: Vec<Vec<u8>> = variants.iter().map(|v| str_bytes(&v.wire_name)).collect();
    let width = names.iter().map(Vec::len).max().unwrap_or(0);
    let forms = names.iter().map(|name| {
        let mut padded = name.clone();
        padded.resize(width, 0);
        let lit = Literal::byte_string(&padded);
        quote!(*#lit)
    });
    let lens = names.iter().map(Vec::len);
    let count = variants.len();
    let arms = variants.iter().enumerate().map(|(i, v)| {
        let ident = v.ident;
        quote!(Self::#ident { .. } => #i,)
    });
    let body = quote! {
        const FORMS: [[::core::primitive::u8; #width]; #count] = [#(#forms),*];
        const LENS: [::core::primitive::usize; #count] = [#(#lens),*];
        let __i: ::core::primitive::usize = match self { #(#arms)* };
        #krate::__private::put_prefix(__out, FORMS[__i], LENS[__i]);
    };
    (
        quote!(::core::option::Option::Some(#width)),
        quote!(::core::option::Option::Some(#width)),
        body,
    )
}

/// A struct's fields (`self.member`) written in its layout.
fn struct_body(cg: &Codegen<'_>, emit: &mut Emit, style: Style, fields: &[Field<'_>]) {
    let access = |f: &Field<'_>| {
        let member = &f.member;
        quote!(&self.#member)
    };
    match style {
        Style::Unit => emit.raw(&array_header(0)),
        Style::Newtype => emit.field(cg, &fields[0], &access(&fields[0])),
        Style::Tuple => tuple_body(cg, emit, fields, access),
        Style::Named => named_body(cg, emit, fields, access),
    }
}

fn body(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    let krate = cg.krate;
    // A value with a short bound is written in one run, its room checked
    // once; otherwise (and for a type without a bound) field by field.
    let one_run = if is_bounded(input) {
        // An enum with data only when its every value has a short bound:
        // the bound of a value would match on its variant, and its
        // writing again.
        let guard = match &input.data {
            Data::Enum(_) => quote!(<Self as #krate::Encode>::MAX_LEN.is_some()),
            Data::Struct(..) => quote!(true),
        };
        quote! {
            if #guard {
                if let ::core::option::Option::Some(__done) =
                    #krate::__private::encode_in_one_run(self, __w)
                {
                    return __done;
                }
            }
        }
    } else {
        TokenStream::new()
    };
    let fields = fields_body(cg, input);
    quote! {
        #one_run
        #fields
    }
}

/// The fields written one by one into the writer.
fn fields_body(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    match &input.data {
        Data::Struct(style, fields) => {
            let mut emit = Emit::new(cg);
            struct_body(cg, &mut emit, *style, fields);
            let body = emit.finish();
            quote! {
                #body
                ::core::result::Result::Ok(())
            }
        }
        Data::Enum(variants) if variants.is_empty() => quote!(match *self {}),
        Data::Enum(variants) => {
            let arms = variants.iter().map(|v| {
                let (pattern, emit) = variant_arm(cg, v, Emit::new(cg));
                let body = emit.finish();
                quote!(#pattern => { #body })
            });
            quote! {
                match self {
                    #(#arms)*
                }
                ::core::result::Result::Ok(())
            }
        }
    }
}

/// A variant's pattern, and `emit` with the variant written into it.
fn variant_arm(cg: &Codegen<'_>, variant: &Variant<'_>, mut emit: Emit) -> (TokenStream, Emit) {
    let ident = variant.ident;
    let members = variant
        .fields
        .iter()
        .filter(|f| f.is_encoded())
        .map(|f| &f.member);
    let bindings = (0..variant.fields.len())
        .filter(|&i| variant.fields[i].is_encoded())
        .map(|i| format_ident!("__f{}", i));
    let pattern = quote!(Self::#ident { #(#members: #bindings,)* .. });

    let binding = |f: &Field<'_>| {
        let i = variant
            .fields
            .iter()
            .position(|g| std::ptr::eq(g, f))
            .expect("field of this variant");
        let ident = format_ident!("__f{}", i);
        quote!(#ident)
    };

    if cg.union {
        union_arm(cg, &mut emit, variant, binding);
        return (pattern, emit);
    }
    let name = str_bytes(&variant.wire_name);
    match variant.style {
        Style::Unit => emit.raw(&name),
        Style::Newtype => {
            emit.raw(&map_header(1));
            emit.raw(&name);
            let field = &variant.fields[0];
            emit.field(cg, field, &binding(field));
        }
        Style::Tuple => {
            emit.raw(&map_header(1));
            emit.raw(&name);
            tuple_body(cg, &mut emit, &variant.fields, binding);
        }
        Style::Named => {
            emit.raw(&map_header(1));
            emit.raw(&name);
            named_body(cg, &mut emit, &variant.fields, binding);
        }
    }
    (pattern, emit)
}

/// A variant of a `union`: `[tag, payload]`, the payload written as an
/// externally tagged variant's (`nil` for a unit variant). The catch-all
/// (untagged, two fields: the tag and the raw payload it kept) is written
/// back as it came.
fn union_arm<'f, 'a: 'f>(
    cg: &Codegen<'_>,
    emit: &mut Emit,
    variant: &'f Variant<'a>,
    binding: impl Fn(&'f Field<'a>) -> TokenStream,
) {
    let Some(tag) = variant.attrs.tag else {
        tuple_body(cg, emit, &variant.fields, binding);
        return;
    };
    emit.raw(&array_header(2));
    emit.raw(&uint_bytes(tag.value));
    match variant.style {
        Style::Unit => emit.raw(&[0xc0]),
        Style::Newtype => {
            let field = &variant.fields[0];
            emit.field(cg, field, &binding(field));
        }
        Style::Tuple => tuple_body(cg, emit, &variant.fields, binding),
        Style::Named => named_body(cg, emit, &variant.fields, binding),
    }
}

/// `v` as MessagePack writes an unsigned integer: its smallest form.
pub(crate) fn uint_bytes(v: u32) -> Vec<u8> {
    match v {
        0..=0x7f => vec![v as u8],
        0x80..=0xff => vec![0xcc, v as u8],
        0x100..=0xffff => {
            let mut out = vec![0xcd];
            out.extend_from_slice(&(v as u16).to_be_bytes());
            out
        }
        _ => {
            let mut out = vec![0xce];
            out.extend_from_slice(&v.to_be_bytes());
            out
        }
    }
}

/// A tuple struct or tuple variant: an array of the encoded fields.
fn tuple_body<'f, 'a: 'f>(
    cg: &Codegen<'_>,
    emit: &mut Emit,
    fields: &'f [Field<'a>],
    access: impl Fn(&'f Field<'a>) -> TokenStream,
) {
    let encoded: Vec<&Field<'_>> = fields.iter().filter(|f| f.is_encoded()).collect();
    emit.raw(&array_header(encoded.len()));
    for field in encoded {
        emit.field(cg, field, &access(field));
    }
}

/// Named fields: a map keyed by wire name, or an array in `as_array` mode.
fn named_body<'f, 'a: 'f>(
    cg: &Codegen<'_>,
    emit: &mut Emit,
    fields: &'f [Field<'a>],
    access: impl Fn(&'f Field<'a>) -> TokenStream,
) {
    if let Some(keyed) = keyed_fields(fields) {
        // An array indexed by key: element N is the field with key N, a
        // key no field has is `nil`.
        let len = keyed.last().map_or(0, |&(key, _)| key as usize + 1);
        emit.raw(&array_header(len));
        let mut next = 0;
        for (key, field) in keyed {
            nils(emit, (key - next) as usize);
            emit.field(cg, field, &access(field));
            next = key + 1;
        }
        return;
    }

    let encoded: Vec<&Field<'_>> = fields.iter().filter(|f| f.is_encoded()).collect();
    if cg.as_array {
        emit.raw(&array_header(encoded.len()));
        for field in encoded {
            emit.field(cg, field, &access(field));
        }
        return;
    }

    let optional: Vec<&Field<'_>> = encoded
        .iter()
        .copied()
        .filter(|f| f.attrs.skip_if.is_some())
        .collect();
    if optional.is_empty() {
        emit.raw(&map_header(encoded.len()));
        for field in encoded {
            emit.raw(&str_bytes(&field.wire_name));
            emit.field(cg, field, &access(field));
        }
        return;
    }

    // `skip_if`: evaluate each predicate once, count the keys, then write.
    let krate = cg.krate;
    let always = encoded.len() - optional.len();
    let mut head = TokenStream::new();
    let flag = |f: &Field<'_>| format_ident!("__skip_{}", f.wire_name_ident());
    for field in &optional {
        let (_, pred) = field.attrs.skip_if.as_ref().expect("filtered on skip_if");
        let value = access(field);
        let flag = flag(field);
        head.extend(quote! {
            let #flag: ::core::primitive::bool = #pred(#value);
        });
    }
    let flags = optional.iter().map(|f| flag(f));
    head.extend(quote! {
        let mut __len: ::core::primitive::usize = #always;
        #(
            if !#flags {
                __len += 1;
            }
        )*
        #krate::Writer::write_map_len(__w, __len)?;
    });
    emit.call(head);
    for field in encoded {
        if field.attrs.skip_if.is_some() {
            let mut inner = Emit::new(cg);
            inner.raw(&str_bytes(&field.wire_name));
            inner.field(cg, field, &access(field));
            let inner = inner.finish();
            let flag = flag(field);
            emit.call(quote! {
                if !#flag {
                    #inner
                }
            });
        } else {
            emit.raw(&str_bytes(&field.wire_name));
            emit.field(cg, field, &access(field));
        }
    }
}

/// `count` nils: raw bytes for a short gap, a loop for a long one.
fn nils(emit: &mut Emit, count: usize) {
    const RAW_UP_TO: usize = 32;
    if count <= RAW_UP_TO {
        emit.raw(&vec![0xc0; count]);
    } else {
        let krate = &emit.krate;
        let call = quote! {
            for _ in 0..#count {
                #krate::__private::write_raw(__w, b"\xc0");
            }
        };
        emit.call(call);
    }
}

impl Field<'_> {
    /// An identifier fragment unique within the struct, for generated locals.
    fn wire_name_ident(&self) -> String {
        match &self.member {
            syn::Member::Named(ident) => syn::ext::IdentExt::unraw(ident).to_string(),
            syn::Member::Unnamed(index) => index.index.to_string(),
        }
    }
}

/// `value` (an expression of type `&FieldTy`) appended to `__w`.
///
/// Only the function path is spanned on the user's tokens (so a type error
/// points at the field); the arguments keep the macro's own span, or a field
/// type coming from a `macro_rules!` expansion would not see `__w`.
fn field_encode(cg: &Codegen<'_>, field: &Field<'_>, value: &TokenStream) -> TokenStream {
    let krate = cg.krate;
    let ty = field.ty;
    // The turbofish carries the field type's span, so a type that is not
    // bytes is reported at the field.
    let function = if let Some(inner) = field.optional_bytes() {
        let bytes = quote_spanned!(ty.span()=> #krate::__private::as_bytes_opt::<#inner>);
        return quote!(#krate::__private::encode_bytes_opt(#bytes(#value), __w)?;);
    } else if field.attrs.bytes.is_some() {
        let bytes = quote_spanned!(ty.span()=> #krate::__private::as_bytes::<#ty>);
        return quote!(#krate::__private::encode_bytes(#bytes(#value), __w)?;);
    } else if field.attrs.serde.is_some() {
        quote_spanned!(ty.span()=> #krate::__private::encode_serde::<#ty>)
    } else if let Some((_, module)) = &field.attrs.with {
        let function = quote_spanned!(module.span()=> #module::encode);
        return quote!(__with_encode(#function, #value, __w)?;);
    } else {
        quote_spanned!(ty.span()=> <#ty as #krate::Encode>::encode)
    };
    quote!(#function(#value, __w)?;)
}

/// Collects generated statements, merging constant bytes into one
/// `write_raw` per run.
///
/// Into a `Writer` (`__w`, for `Encode::encode`), or, `bounded`, into a
/// `Run` (`__out`, for `Encode::encode_bounded`): the same statements,
/// only the two ways of writing differ.
struct Emit {
    krate: TokenStream,
    bounded: bool,
    pending: Vec<u8>,
    out: TokenStream,
    /// Constant bytes emitted so far (for `MAX_LEN`).
    constant: usize,
    /// Bounded: each field's `MAX_LEN` and its `bound` for this value.
    max_lens: Vec<TokenStream>,
    bounds: Vec<TokenStream>,
    /// Bounded: the parts of `Encode::FLAT`, constant bytes and fields
    /// (of a struct: `self.member`) in order.
    flat: Vec<TokenStream>,
}

/// What a bounded [`Emit`] gives: the `MAX_LEN` expression, the body of
/// `bound`, the body of `encode_bounded`.
struct Bounded {
    max_len: TokenStream,
    bound: TokenStream,
    body: TokenStream,
    /// `Encode::FLAT` of a struct.
    flat: TokenStream,
}

impl Emit {
    fn new(cg: &Codegen<'_>) -> Self {
        Emit {
            krate: cg.krate.clone(),
            bounded: false,
            pending: Vec::new(),
            out: TokenStream::new(),
            constant: 0,
            max_lens: Vec::new(),
            bounds: Vec::new(),
            flat: Vec::new(),
        }
    }

    fn bounded(cg: &Codegen<'_>) -> Self {
        Emit {
            bounded: true,
            ..Emit::new(cg)
        }
    }

    fn raw(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        self.constant += bytes.len();
        if self.bounded {
            let krate = &self.krate;
            let lit = Literal::byte_string(bytes);
            self.flat
                .push(quote!(#krate::__private::FlatPart::Bytes(#lit)));
        }
    }

    fn call(&mut self, tokens: TokenStream) {
        self.flush();
        self.out.extend(tokens);
    }

    /// The field's value, `value` (a `&FieldTy` expression), written.
    fn field(&mut self, cg: &Codegen<'_>, field: &Field<'_>, value: &TokenStream) {
        if self.bounded {
            let krate = cg.krate;
            let ty = field.ty;
            let none = quote!(::core::option::Option::None);
            let member = &field.member;
            self.flat.push(if field.attrs.bytes.is_some() {
                quote!(#krate::__private::FlatPart::Field(::core::option::Option::None, 0))
            } else {
                quote!(#krate::__private::FlatPart::Field(
                    <#ty as #krate::Encode>::FLAT,
                    ::core::mem::offset_of!(Self, #member),
                ))
            });
            let (put, bound, max_len) = if let Some(inner) = field.optional_bytes() {
                let bytes = quote_spanned!(ty.span()=> #krate::__private::as_bytes_opt::<#inner>);
                (
                    quote!(#krate::__private::put_bytes_opt(#bytes(#value), __out);),
                    quote!(#krate::__private::bytes_opt_bound(#bytes(#value))),
                    none,
                )
            } else if field.attrs.bytes.is_some() {
                let bytes = quote_spanned!(ty.span()=> #krate::__private::as_bytes::<#ty>);
                (
                    quote!(#krate::__private::put_bytes(#bytes(#value), __out);),
                    quote!(#krate::__private::bytes_bound(#bytes(#value))),
                    none,
                )
            } else {
                let put = quote_spanned!(ty.span()=> <#ty as #krate::Encode>::encode_bounded);
                let bound = quote_spanned!(ty.span()=> <#ty as #krate::Encode>::bound);
                (
                    quote!(#put(#value, __out);),
                    quote!(#bound(#value)),
                    quote!(<#ty as #krate::Encode>::MAX_LEN),
                )
            };
            self.max_lens.push(max_len);
            self.bounds.push(bound);
            self.call(put);
        } else {
            self.call(field_encode(cg, field, value));
        }
    }

    fn flush(&mut self) {
        if !self.pending.is_empty() {
            let lit = Literal::byte_string(&self.pending);
            if self.bounded {
                // From the static bytes: an array passed by value was
                // built on the stack, a key of 7 bytes as two overlapping
                // words, and read back stalled.
                self.out.extend(quote!(__out.put_slice(#lit);));
            } else {
                let krate = &self.krate;
                self.out
                    .extend(quote!(#krate::__private::write_raw(__w, #lit);));
            }
            self.pending.clear();
        }
    }

    fn finish(mut self) -> TokenStream {
        self.flush();
        self.out
    }

    fn finish_bounded(mut self) -> Bounded {
        self.flush();
        let krate = &self.krate;
        let constant = self.constant;
        let max_lens = &self.max_lens;
        let bounds = &self.bounds;
        let parts = &self.flat;
        Bounded {
            flat: quote!(#krate::__private::flat_record(
                &[#(#parts),*],
                ::core::mem::size_of::<Self>(),
            )),
            max_len: quote!(#krate::__private::max_len(#constant, &[#(#max_lens),*])),
            bound: quote! {
                let __len: ::core::primitive::usize = #constant;
                #( let __len = #krate::__private::add_bound(__len, #bounds)?; )*
                ::core::option::Option::Some(__len)
            },
            body: self.out,
        }
    }
}

/// MessagePack string: the smallest header for its length, then the bytes.
pub(crate) fn str_bytes(s: &str) -> Vec<u8> {
    let len = s.len();
    let mut out = Vec::with_capacity(len + 5);
    if len < 32 {
        out.push(0xa0 | len as u8);
    } else if len < 256 {
        out.extend_from_slice(&[0xd9, len as u8]);
    } else if len < 65_536 {
        out.push(0xda);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
    out.extend_from_slice(s.as_bytes());
    out
}

/// MessagePack map header for `len` pairs.
pub(crate) fn map_header(len: usize) -> Vec<u8> {
    collection_header(len, 0x80, 0xde, 0xdf)
}

/// MessagePack array header for `len` elements.
pub(crate) fn array_header(len: usize) -> Vec<u8> {
    collection_header(len, 0x90, 0xdc, 0xdd)
}

fn collection_header(len: usize, fix: u8, m16: u8, m32: u8) -> Vec<u8> {
    if len < 16 {
        vec![fix | len as u8]
    } else if len < 65_536 {
        let b = (len as u16).to_be_bytes();
        vec![m16, b[0], b[1]]
    } else {
        let b = (len as u32).to_be_bytes();
        vec![m32, b[0], b[1], b[2], b[3]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        assert_eq!(str_bytes("id"), b"\xa2id");
        assert_eq!(str_bytes(&"x".repeat(31))[0], 0xbf);
        assert_eq!(str_bytes(&"x".repeat(32))[..2], [0xd9, 32]);
        assert_eq!(str_bytes(&"x".repeat(256))[..3], [0xda, 1, 0]);
        assert_eq!(map_header(15), [0x8f]);
        assert_eq!(map_header(16), [0xde, 0, 16]);
        assert_eq!(array_header(0), [0x90]);
        assert_eq!(array_header(65_536), [0xdd, 0, 1, 0, 0]);
    }
}
