// Generates `Decode::decode` (and, for a positional struct,
// `Decode::decode_in_place` and `DecodeGeneral::decode_general`).
//
// Map keys are matched as raw bytes: while they come in declared order each
// is compared, header included, with its pre-encoded form
// (`__private::eat_raw`); any
// other key is read as a string and matched (`match key { b"id" => .. }`).
// No UTF-8 check and no allocation for known keys, unknown keys are skipped
// without recursion. Every struct, variant payload and newtype calls
// `__private::enter_as` first (and `leave_as` after), so the depth limit
// holds on every recursive path (`struct N(Option<Box<N>>)` included); a
// struct of fixed nesting (`Decode::NESTING`) compares it once.
//
// A positional struct read as it writes itself takes a fast path
// (`fast_path`): its fields decoded in a straight line into their places
// (`Decode::decode_in_place`), every other layout out of line
// (`DecodeGeneral`). Errors pick up their path while
// they travel outwards: `in_field` / `in_index` here, `in_variant` for enum
// payloads (passed down as `suffix`, appended to every error built inside),
// so the pointer of a variant's field is `/Variant/field`, where it sits
// in `{"Variant": {"field": ..}}`.
//
// A named struct accepts both layouts whatever its own mode: a map by name
// (the default) and an array by position (`as_array`, and what `rmp_serde::
// to_vec` writes). Missing trailing array elements are filled in like
// missing keys: `Option` fields become `None`, `default` fields their
// default; any other gap is a `WrongLength` error.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{Data, Field, Input, Style, Variant, keyed_fields};
use crate::attr::DefaultValue;
use crate::codegen::Codegen;

/// The bodies of the decoders of `input`.
pub(crate) fn expand(cg: &Codegen<'_>, input: &Input<'_>) -> Decoders {
    let helper = if input.all_fields().any(|f| f.attrs.with.is_some()) {
        let krate = cg.krate;
        // See `encode::expand`: reports a `with` function of the wrong
        // signature at its string.
        quote! {
            #[inline(always)]
            fn __with_decode<__T, __F>(
                __f: __F,
                __r: &mut #krate::Reader<'_>,
            ) -> ::core::result::Result<__T, #krate::DecodeError>
            where
                __F: ::core::ops::FnOnce(
                    &mut #krate::Reader<'_>,
                ) -> ::core::result::Result<__T, #krate::DecodeError>,
            {
                __f(__r)
            }
        }
    } else {
        TokenStream::new()
    };
    let body = body(cg, input);
    let with_helper = |tokens: TokenStream| {
        quote! {
            #helper
            #tokens
        }
    };
    Decoders {
        decode: with_helper(body),
        in_place: in_place(cg, input).map(with_helper),
        to_slot: to_slot(cg, input).map(with_helper),
        general: general(cg, input).map(with_helper),
    }
}

/// The bodies of the generated decoders.
pub(crate) struct Decoders {
    /// `Decode::decode`.
    pub(crate) decode: TokenStream,
    /// `Decode::decode_in_place`, for a type with a fast path.
    pub(crate) in_place: Option<TokenStream>,
    /// `Decode::decode_to`, for the same types.
    pub(crate) to_slot: Option<TokenStream>,
    /// `DecodeGeneral::decode_general`, the same types' fallback.
    pub(crate) general: Option<TokenStream>,
}

fn body(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    let krate = cg.krate;
    match fast_path(cg, input, Sink::Option) {
        Some(_) => quote! {
            let mut __out = ::core::option::Option::None;
            <Self as #krate::Decode<'__de>>::decode_in_place(__r, &mut __out)?;
            match __out {
                ::core::option::Option::Some(__v) => ::core::result::Result::Ok(__v),
                ::core::option::Option::None => {
                    ::core::result::Result::Err(#krate::__private::no_value(__r))
                }
            }
        },
        None => every_layout(cg, input),
    }
}

/// The body of `Decode::decode_in_place` for a type with a fast path.
fn in_place(cg: &Codegen<'_>, input: &Input<'_>) -> Option<TokenStream> {
    fast_path(cg, input, Sink::Option)
}

/// The body of `Decode::decode_to` for a type with a fast path.
fn to_slot(cg: &Codegen<'_>, input: &Input<'_>) -> Option<TokenStream> {
    fast_path(cg, input, Sink::Slot)
}

/// `Decode::FIXED_LEN` and `Decode::decode_fixed` of a type with a fast
/// path whose fields all go through their types' codecs: its header's
/// length plus its fields' (`None` at compile time when one has none),
/// and its form read from a slice of exactly that length, each field from
/// its own part.
pub(crate) fn fixed(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    let krate = cg.krate;
    if fast_path(cg, input, Sink::Option).is_none() {
        return TokenStream::new();
    }
    let Data::Struct(_, fields) = &input.data else {
        return TokenStream::new();
    };
    let encoded: Vec<&Field<'_>> = fields.iter().filter(|f| f.is_encoded()).collect();
    if !encoded.iter().all(|f| f.uses_codec_impl()) {
        return TokenStream::new();
    }
    let header_bytes = crate::encode::array_header(encoded.len());
    let header_len = header_bytes.len();
    let header = Literal::byte_string(&header_bytes);
    let lens: Vec<TokenStream> = encoded
        .iter()
        .map(|f| {
            let ty = f.ty;
            quote!(<#ty as #krate::Decode<'__de>>::FIXED_LEN)
        })
        .collect();
    let slots: Vec<syn::Ident> = encoded.iter().map(|f| slot_of(fields, f)).collect();
    let reads = encoded.iter().zip(&slots).map(|(f, slot)| {
        let ty = f.ty;
        quote!(let #slot = <#ty as #krate::Decode<'__de>>::decode_fixed(#slot)?;)
    });
    let inits = inits(fields);
    quote! {
        const FIXED_LEN: ::core::option::Option<::core::primitive::usize> =
            #krate::__private::fixed_len(#header_len, &[#(#lens),*]);

        #[inline(always)]
        fn decode_fixed(__b: &'__de [::core::primitive::u8]) -> ::core::option::Option<Self> {
            let (__h, __b) = __b.split_at_checked(#header_len)?;
            if __h != #header {
                return ::core::option::Option::None;
            }
            #( let (#slots, __b) = #krate::__private::split_fixed(__b, #lens)?; )*
            let _ = __b;
            #(#reads)*
            ::core::option::Option::Some(Self { #(#inits,)* })
        }
    }
}

/// Where a fast path puts the value it decodes.
#[derive(Clone, Copy)]
enum Sink {
    /// `__out: &mut Option<Self>` (`Decode::decode_in_place`).
    Option,
    /// `__slot: &mut MaybeUninit<Self>`, returned initialized
    /// (`Decode::decode_to`).
    Slot,
}

/// `Decode::NESTING` of a struct: one more than its deepest field's when
/// every decoded field's is fixed (a field read through `bytes` is a
/// scalar; one read by `serde` or `with` may nest anything). Enums keep
/// the default, `None`: their variants nest differently.
pub(crate) fn nesting(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    let krate = cg.krate;
    let fields = match &input.data {
        Data::Struct(Style::Unit, _) => {
            return quote! {
                const NESTING: ::core::option::Option<::core::primitive::u32> =
                    ::core::option::Option::Some(0);
            };
        }
        Data::Struct(_, fields) => fields,
        Data::Enum(_) => return TokenStream::new(),
    };
    let levels = fields.iter().filter(|f| f.is_encoded()).map(|f| {
        let ty = f.ty;
        if f.uses_codec_impl() {
            quote!(<#ty as #krate::Decode<'__de>>::NESTING)
        } else if f.attrs.bytes.is_some() {
            quote!(::core::option::Option::Some(0))
        } else {
            quote!(::core::option::Option::None)
        }
    });
    quote! {
        const NESTING: ::core::option::Option<::core::primitive::u32> =
            #krate::__private::nesting(&[#(#levels),*]);
    }
}

/// The decoder of every layout the type reads, out of line behind the fast
/// path when the type has one.
fn general(cg: &Codegen<'_>, input: &Input<'_>) -> Option<TokenStream> {
    fast_path(cg, input, Sink::Option).map(|_| every_layout(cg, input))
}

/// A positional struct (`as_array` or a tuple struct, not keyed) whose
/// array header comes exactly as it writes it: the fields decoded in a
/// straight line, no length compared per field, no slots. Anything else
/// (a map, another length) goes to `decode_general`, out of line, so that
/// this stays small enough to inline into the decoder of what holds it
/// (a `Vec` of it, another struct).
fn fast_path(cg: &Codegen<'_>, input: &Input<'_>, sink: Sink) -> Option<TokenStream> {
    let krate = cg.krate;
    let Data::Struct(style, fields) = &input.data else {
        return None;
    };
    let positional = match style {
        Style::Tuple => true,
        Style::Named => cg.as_array,
        Style::Unit | Style::Newtype => false,
    };
    if !positional || keyed_fields(fields).is_some() {
        return None;
    }
    let encoded: Vec<(usize, &Field<'_>)> = fields
        .iter()
        .filter(|f| f.is_encoded())
        .enumerate()
        .collect();
    let header = Literal::byte_string(&crate::encode::array_header(encoded.len()));
    let lets = encoded.iter().map(|&(pos, f)| {
        let slot = slot_of(fields, f);
        let segment = path_segment(f, pos);
        let into_slot = field_decode_in_place(cg, f, &slot);
        quote! {
            let mut #slot = ::core::option::Option::None;
            #into_slot.map_err(|__e| __e.#segment)?;
        }
    });
    let encoded_slots: Vec<syn::Ident> = encoded.iter().map(|&(_, f)| slot_of(fields, f)).collect();
    let inits = inits(fields);
    // Each field decoded into an `Option` of its own (`decode_in_place`)
    // and the value built into `__out`: no `Result<Field, _>` and no
    // `Result<Self, _>` on the way (see `Decode::decode_in_place`).
    let fixed_done = match sink {
        Sink::Option => quote! {
            *__out = ::core::option::Option::Some(__v);
            return ::core::result::Result::Ok(());
        },
        Sink::Slot => quote!(return ::core::result::Result::Ok(__slot.write(__v));),
    };
    let (done, general_done) = match sink {
        Sink::Option => (
            quote! {
                *__out = ::core::option::Option::Some(Self { #(#inits,)* });
                return ::core::result::Result::Ok(());
            },
            quote! {
                *__out = __general;
                ::core::result::Result::Ok(())
            },
        ),
        Sink::Slot => (
            quote! {
                return ::core::result::Result::Ok(__slot.write(Self { #(#inits,)* }));
            },
            quote! {
                match __general {
                    ::core::option::Option::Some(__v) => ::core::result::Result::Ok(__slot.write(__v)),
                    ::core::option::Option::None => {
                        ::core::result::Result::Err(#krate::__private::no_value(__r))
                    }
                }
            },
        ),
    };
    Some(quote! {
        // A value of fixed length (a struct of floats) with one bounds
        // check; nothing when the type has none.
        if let ::core::option::Option::Some(__v) = #krate::__private::decode_fixed_as::<Self>(__r) {
            #fixed_done
        }
        #krate::__private::enter_as::<Self>(__r)?;
        if #krate::__private::eat_raw(__r, #header) {
            #(#lets)*
            #krate::__private::leave_as::<Self>(__r);
            if let (#(::core::option::Option::Some(#encoded_slots),)*) = (#(#encoded_slots,)*) {
                #done
            }
            return ::core::result::Result::Err(#krate::__private::no_value(__r));
        }
        #krate::__private::leave_as::<Self>(__r);
        // Into a local, then moved: `__out` handed to a call out of line
        // would have to live in memory, the fast path's too, and be read
        // back (stalling) where the value is moved on.
        let mut __general = ::core::option::Option::None;
        <Self as #krate::__private::DecodeGeneral<'__de>>::decode_general(__r, &mut __general)?;
        #general_done
    })
}

/// Every layout the type reads: a map or an array for a named struct,
/// whatever its own.
fn every_layout(cg: &Codegen<'_>, input: &Input<'_>) -> TokenStream {
    let krate = cg.krate;
    let ctor = quote!(Self);
    let none = TokenStream::new();
    match &input.data {
        Data::Struct(Style::Unit, _) => quote! {
            if !__r.try_read_nil() {
                let __len = __r.read_array_len()?;
                if __len != 0 {
                    return ::core::result::Result::Err(__r.error(
                        #krate::DecodeErrorKind::WrongLength { expected: 0, found: __len },
                    ));
                }
            }
            ::core::result::Result::Ok(Self {})
        },
        Data::Struct(Style::Newtype, fields) => {
            let field = &fields[0];
            let member = &field.member;
            let value = field_decode(cg, field);
            quote! {
                #krate::__private::enter_as::<Self>(__r)?;
                let __v = #value?;
                #krate::__private::leave_as::<Self>(__r);
                ::core::result::Result::Ok(Self { #member: __v })
            }
        }
        Data::Struct(Style::Tuple, fields) => {
            let seq = seq_block(cg, fields, &ctor, &none);
            quote! {
                #krate::__private::enter_as::<Self>(__r)?;
                let __len = __r.read_array_len()?;
                let __v = #seq;
                #krate::__private::leave_as::<Self>(__r);
                ::core::result::Result::Ok(__v)
            }
        }
        Data::Struct(Style::Named, fields) => {
            let body = named_body(cg, fields, &ctor, &none);
            quote! {
                #krate::__private::enter_as::<Self>(__r)?;
                let __v = #body;
                #krate::__private::leave_as::<Self>(__r);
                ::core::result::Result::Ok(__v)
            }
        }
        Data::Enum(variants) => enum_body(cg, variants),
    }
}

/// Reads the struct header and decodes by key or by position, evaluating to
/// `ctor { .. }`. The type's own layout is the first arm.
fn named_body(
    cg: &Codegen<'_>,
    fields: &[Field<'_>],
    ctor: &TokenStream,
    suffix: &TokenStream,
) -> TokenStream {
    let krate = cg.krate;
    let try_ = try_suffix(suffix);
    let map = map_block(cg, fields, ctor, suffix);
    let seq = seq_block(cg, fields, ctor, suffix);
    let header = quote!(#krate::__private::StructHeader);
    let map_arm = quote!(#header::Map(__len) => #map,);
    let seq_arm = quote!(#header::Array(__len) => #seq,);
    let arms = if cg.as_array || keyed_fields(fields).is_some() {
        quote!(#seq_arm #map_arm)
    } else {
        quote!(#map_arm #seq_arm)
    };
    quote! {
        match #krate::__private::read_struct_header(__r) #try_ {
            #arms
        }
    }
}

/// Decodes `__len` key/value pairs into the fields.
fn map_block(
    cg: &Codegen<'_>,
    fields: &[Field<'_>],
    ctor: &TokenStream,
    suffix: &TokenStream,
) -> TokenStream {
    let krate = cg.krate;
    let encoded: Vec<(usize, &Field<'_>)> = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.is_encoded())
        .collect();
    let slot = |i: usize| format_ident!("__f{}", i);
    let try_ = try_suffix(suffix);

    let slots = encoded.iter().map(|&(i, f)| {
        let slot = slot(i);
        let ty = f.ty;
        quote!(let mut #slot: ::core::option::Option<#ty> = ::core::option::Option::None;)
    });

    // In-order pass: while the keys come in declared order, in their
    // smallest string form (as every encoder here and rmp-serde writes
    // them), each is matched by comparing its pre-encoded bytes (header and
    // name) with the input, and its value decoded straight into its slot.
    // The first key that does not match ends the pass; that key and the
    // rest are read as strings and looked up by the general loop below.
    let in_order = encoded.iter().map(|&(i, f)| {
        let slot = slot(i);
        let name = &f.wire_name;
        let raw = Literal::byte_string(&crate::encode::str_bytes(&f.wire_name));
        let value = field_decode(cg, f);
        quote! {
            if __n == __len || !#krate::__private::eat_raw(__r, #raw) {
                break '__in_order;
            }
            #slot = ::core::option::Option::Some(
                #value.map_err(|__e| __e.in_field(#name) #suffix)?,
            );
            __n += 1;
        }
    });
    let in_order = if encoded.is_empty() {
        quote!(let __n: ::core::primitive::usize = 0;)
    } else {
        quote! {
            let mut __n: ::core::primitive::usize = 0;
            '__in_order: {
                #(#in_order)*
            }
        }
    };

    let arms = encoded.iter().map(|&(i, f)| {
        let slot = slot(i);
        let key = Literal::byte_string(f.wire_name.as_bytes());
        let name = &f.wire_name;
        let value = field_decode(cg, f);
        quote! {
            #key => {
                if #slot.is_some() {
                    return ::core::result::Result::Err(
                        __r.error(#krate::DecodeErrorKind::DuplicateField(#name)) #suffix,
                    );
                }
                #slot = ::core::option::Option::Some(
                    #value.map_err(|__e| __e.in_field(#name) #suffix)?,
                );
            }
        }
    });

    let loop_body = if encoded.is_empty() {
        quote! {
            __r.read_str_bytes() #try_;
            __r.skip_value() #try_;
        }
    } else {
        quote! {
            match __r.read_str_bytes() #try_ {
                #(#arms)*
                _ => __r.skip_value() #try_,
            }
        }
    };

    let inits = fields.iter().enumerate().map(|(i, f)| {
        let member = &f.member;
        if !f.is_encoded() {
            let value = skipped_value(f);
            return quote!(#member: #value);
        }
        let slot = slot(i);
        let name = &f.wire_name;
        let error = quote! {
            __r.error(#krate::DecodeErrorKind::MissingField(#name)) #suffix
        };
        let missing = missing_value(cg, f, &error);
        quote! {
            #member: match #slot {
                ::core::option::Option::Some(__v) => __v,
                ::core::option::Option::None => #missing,
            }
        }
    });

    quote! {{
        #(#slots)*
        #in_order
        for _ in __n..__len {
            #loop_body
        }
        #ctor { #(#inits,)* }
    }}
}

/// Decodes `__len` array elements into the encoded fields: by position, or
/// by key for a keyed struct (`#[codec(key = N)]`), where element N is the
/// field with key N, elements at other indexes (gaps, or fields of a newer
/// version) are skipped, a `nil` at a `default` field is its default, and a
/// field past the end of the array is missing as from a map.
fn seq_block(
    cg: &Codegen<'_>,
    fields: &[Field<'_>],
    ctor: &TokenStream,
    suffix: &TokenStream,
) -> TokenStream {
    let krate = cg.krate;
    let keyed = keyed_fields(fields);
    let try_ = try_suffix(suffix);
    // (position in the array, slot, field)
    let positions: Vec<(usize, syn::Ident, &Field<'_>)> = match &keyed {
        Some(keyed) => keyed
            .iter()
            .map(|&(key, f)| (key as usize, slot_of(fields, f), f))
            .collect(),
        None => fields
            .iter()
            .filter(|f| f.is_encoded())
            .enumerate()
            .map(|(pos, f)| (pos, slot_of(fields, f), f))
            .collect(),
    };
    let expected = positions.len();
    let wrong_length = quote! {
        __r.error(#krate::DecodeErrorKind::WrongLength { expected: #expected, found: __len }) #suffix
    };

    let lets = positions.iter().map(|(pos, slot, f)| {
        let ty = f.ty;
        let value = field_decode(cg, f);
        let segment = path_segment(f, *pos);
        let value = quote!(#value.map_err(|__e| __e.#segment #suffix)?);
        if keyed.is_none() {
            let missing = missing_value(cg, f, &wrong_length);
            return quote! {
                let #slot: #ty = if __len > #pos {
                    #value
                } else {
                    #missing
                };
            };
        }
        let name = &f.wire_name;
        let missing_field = quote! {
            __r.error(#krate::DecodeErrorKind::MissingField(#name)) #suffix
        };
        let missing = missing_value(cg, f, &missing_field);
        let value = match &f.attrs.default.1 {
            DefaultValue::None => value,
            _ => quote! {
                if __r.try_read_nil() {
                    #missing
                } else {
                    #value
                }
            },
        };
        quote! {
            while __i < #pos && __i < __len {
                __r.skip_value() #try_;
                __i += 1;
            }
            let #slot: #ty = if __len > #pos {
                __i += 1;
                #value
            } else {
                #missing
            };
        }
    });

    let inits = inits(fields);

    let (head, tail) = if keyed.is_some() {
        (
            quote!(let mut __i: ::core::primitive::usize = 0;),
            quote! {
                while __i < __len {
                    __r.skip_value() #try_;
                    __i += 1;
                }
            },
        )
    } else {
        (
            quote! {
                if __len > #expected {
                    return ::core::result::Result::Err(#wrong_length);
                }
            },
            TokenStream::new(),
        )
    };

    quote! {{
        #head
        #(#lets)*
        #tail
        #ctor { #(#inits,)* }
    }}
}

/// The call that adds a positional field's segment to an error's path:
/// its name, or its index `pos` in a tuple struct.
fn path_segment(field: &Field<'_>, pos: usize) -> TokenStream {
    match &field.member {
        syn::Member::Named(_) => {
            let name = &field.wire_name;
            quote!(in_field(#name))
        }
        syn::Member::Unnamed(_) => quote!(in_index(#pos)),
    }
}

/// `member: value` of each field, for `Self { .. }`: an encoded field's
/// slot (`slot_of`), a skipped field's default.
fn inits(fields: &[Field<'_>]) -> Vec<TokenStream> {
    fields
        .iter()
        .map(|f| {
            let member = &f.member;
            if f.is_encoded() {
                let slot = slot_of(fields, f);
                quote!(#member: #slot)
            } else {
                let value = skipped_value(f);
                quote!(#member: #value)
            }
        })
        .collect()
}

/// The local holding a field's decoded value: `__f` and its index.
fn slot_of(fields: &[Field<'_>], field: &Field<'_>) -> syn::Ident {
    let i = fields
        .iter()
        .position(|f| std::ptr::eq(f, field))
        .expect("field of these fields");
    format_ident!("__f{}", i)
}

fn enum_body(cg: &Codegen<'_>, variants: &[Variant<'_>]) -> TokenStream {
    let krate = cg.krate;
    if variants.is_empty() {
        return empty_enum_body(cg);
    }
    if cg.union {
        return union_body(cg, variants);
    }

    // A bare string names a unit variant; naming a data variant that way is
    // a type error at the enum's own pointer (the string is there: there is
    // no payload to point into), the variant named in the detail.
    let string_arms = variants.iter().map(|v| {
        let ident = v.ident;
        let key = Literal::byte_string(v.wire_name.as_bytes());
        if v.style == Style::Unit {
            quote!(#key => Self::#ident {},)
        } else {
            let detail = format!("variant `{}` has data", v.wire_name);
            quote! {
                #key => return ::core::result::Result::Err(
                    #krate::DecodeError::new(
                        #krate::DecodeErrorKind::TypeMismatch { expected: "map", found: "string" },
                        __at,
                    ).with_detail(#detail),
                ),
            }
        }
    });

    let map_arms = variants.iter().map(|v| {
        let key = Literal::byte_string(v.wire_name.as_bytes());
        let value = variant_value(cg, v);
        quote!(#key => #value,)
    });

    let unknown = quote! {
        return ::core::result::Result::Err(
            #krate::DecodeError::new(#krate::DecodeErrorKind::UnknownVariant, __at)
                .with_detail(::std::string::String::from_utf8_lossy(__other)),
        )
    };

    quote! {
        #krate::__private::enter_as::<Self>(__r)?;
        let __at = __r.position();
        let __v = match __r.peek()? {
            0xa0..=0xbf | 0xd9..=0xdb => match __r.read_str_bytes()? {
                #(#string_arms)*
                __other => #unknown,
            },
            0x80..=0x8f | 0xde | 0xdf => {
                let __len = __r.read_map_len()?;
                if __len != 1 {
                    return ::core::result::Result::Err(
                        #krate::DecodeError::new(
                            #krate::DecodeErrorKind::WrongLength { expected: 1, found: __len },
                            __at,
                        )
                        .with_detail("an enum value is a variant name or a map with one entry"),
                    );
                }
                let __at = __r.position();
                match __r.read_str_bytes()? {
                    #(#map_arms)*
                    __other => #unknown,
                }
            }
            __m => return ::core::result::Result::Err(__r.mismatch("string or map", __m, __at)),
        };
        #krate::__private::leave_as::<Self>(__r);
        ::core::result::Result::Ok(__v)
    }
}

/// The payload of variant `v`, read as an externally tagged variant's
/// (`nil` for a unit variant), as a `Self` expression; errors located in
/// the variant.
fn variant_value(cg: &Codegen<'_>, v: &Variant<'_>) -> TokenStream {
    let ident = v.ident;
    let name = &v.wire_name;
    let suffix = quote!(.in_variant(#name));
    let try_ = try_suffix(&suffix);
    let ctor = quote!(Self::#ident);
    match v.style {
        Style::Unit => quote! {{
            __r.read_nil() #try_;
            Self::#ident {}
        }},
        Style::Newtype => {
            let field = &v.fields[0];
            let member = &field.member;
            let value = field_decode(cg, field);
            quote!(Self::#ident { #member: #value #try_ })
        }
        Style::Tuple => {
            let seq = seq_block(cg, &v.fields, &ctor, &suffix);
            own_frame(
                cg,
                quote! {
                    let __len = __r.read_array_len() #try_;
                    #seq
                },
            )
        }
        Style::Named => {
            let body = named_body(cg, &v.fields, &ctor, &suffix);
            own_frame(cg, body)
        }
    }
}

/// A `union` enum: `[tag, payload]`, the payload read by the variant of
/// that tag; a tag no variant has lands in the catch-all (the tag and the
/// payload kept raw) or is an `UnknownVariant` error naming it.
fn union_body(cg: &Codegen<'_>, variants: &[Variant<'_>]) -> TokenStream {
    let krate = cg.krate;
    let arms = variants.iter().filter_map(|v| {
        let tag = v.attrs.tag?.value;
        let value = variant_value(cg, v);
        Some(quote!(#tag => #value,))
    });
    let unknown = match variants.iter().find(|v| v.attrs.other.is_some()) {
        Some(v) => {
            let ident = v.ident;
            let mut encoded = v.fields.iter().filter(|f| f.is_encoded());
            let (tag_field, raw_field) = (encoded.next(), encoded.next());
            let (Some(tag_field), Some(raw_field)) = (tag_field, raw_field) else {
                // Refused by `valid`: never generated.
                return quote!();
            };
            let (tag_member, raw_member) = (&tag_field.member, &raw_field.member);
            let tag_value = quote_spanned!(tag_field.ty.span()=> __other);
            let raw_value = field_decode(cg, raw_field);
            let name = v.ident.to_string();
            let defaults = v.fields.iter().filter(|f| !f.is_encoded()).map(|f| {
                let member = &f.member;
                quote!(#member: ::core::default::Default::default())
            });
            quote! {
                Self::#ident {
                    #tag_member: #tag_value,
                    #raw_member: #raw_value.map_err(|e| e.in_variant(#name))?,
                    #(#defaults,)*
                }
            }
        }
        None => quote! {
            return ::core::result::Result::Err(
                #krate::DecodeError::new(#krate::DecodeErrorKind::UnknownVariant, __tag_at)
                    .with_detail(::std::format!("tag {}", __other)),
            )
        },
    };
    quote! {
        #krate::__private::enter_as::<Self>(__r)?;
        let __at = __r.position();
        let __len = __r.read_array_len()?;
        if __len != 2 {
            return ::core::result::Result::Err(
                #krate::DecodeError::new(
                    #krate::DecodeErrorKind::WrongLength { expected: 2, found: __len },
                    __at,
                )
                .with_detail("a union's value is `[tag, payload]`"),
            );
        }
        let __tag_at = __r.position();
        let __v = match __r.read_u32()? {
            #(#arms)*
            __other => #unknown,
        };
        #krate::__private::leave_as::<Self>(__r);
        ::core::result::Result::Ok(__v)
    }
}

/// An enum without variants has no values: read the variant name for the
/// error and fail. (Written without diverging `let`s, so no lint fires on
/// unreachable code; an `allow` would clash with a user's `forbid`.)
fn empty_enum_body(cg: &Codegen<'_>) -> TokenStream {
    let krate = cg.krate;
    quote! {
        let __at = __r.position();
        let __other = match __r.peek()? {
            0xa0..=0xbf | 0xd9..=0xdb => __r.read_str_bytes()?,
            0x80..=0x8f | 0xde | 0xdf => {
                let __len = __r.read_map_len()?;
                if __len != 1 {
                    return ::core::result::Result::Err(
                        #krate::DecodeError::new(
                            #krate::DecodeErrorKind::WrongLength { expected: 1, found: __len },
                            __at,
                        )
                        .with_detail("an enum value is a variant name or a map with one entry"),
                    );
                }
                __r.read_str_bytes()?
            }
            __m => return ::core::result::Result::Err(__r.mismatch("string or map", __m, __at)),
        };
        ::core::result::Result::Err(
            #krate::DecodeError::new(#krate::DecodeErrorKind::UnknownVariant, __at)
                .with_detail(::std::string::String::from_utf8_lossy(__other)),
        )
    }
}

/// Runs `body` (statements ending in a `Self` expression) in a closure
/// called on the spot. Unoptimized builds give every local of a function
/// its own stack slot, so without this an enum's decode frame would hold
/// the fields of all its variants at once, and a recursive enum with large
/// variants would exhaust a 2 MiB stack well before the depth limit. The
/// closure is inlined in optimized builds.
fn own_frame(cg: &Codegen<'_>, body: TokenStream) -> TokenStream {
    let krate = cg.krate;
    quote! {{
        let __payload = |__r: &mut #krate::Reader<'__de>|
            -> ::core::result::Result<Self, #krate::DecodeError> {
            ::core::result::Result::Ok({ #body })
        };
        __payload(__r)?
    }}
}

/// `?`, or `.map_err(..)?` adding the enclosing segments.
fn try_suffix(suffix: &TokenStream) -> TokenStream {
    if suffix.is_empty() {
        quote!(?)
    } else {
        quote!(.map_err(|__e| __e #suffix)?)
    }
}

/// A `Result<FieldTy, DecodeError>` expression reading the field from `__r`.
/// Only the function path carries the user's span (see `encode::field_encode`).
fn field_decode(cg: &Codegen<'_>, field: &Field<'_>) -> TokenStream {
    let krate = cg.krate;
    let ty = field.ty;
    let function = if let Some(inner) = field.optional_bytes() {
        quote_spanned!(ty.span()=> #krate::__private::decode_bytes_opt::<#inner>)
    } else if field.attrs.bytes.is_some() {
        quote_spanned!(ty.span()=> #krate::__private::decode_bytes::<#ty>)
    } else if field.attrs.serde.is_some() {
        quote_spanned!(ty.span()=> #krate::__private::decode_serde::<#ty>)
    } else if let Some((_, module)) = &field.attrs.with {
        let function = quote_spanned!(module.span()=> #module::decode);
        return quote!(__with_decode::<#ty, _>(#function, __r));
    } else {
        quote_spanned!(ty.span()=> <#ty as #krate::Decode<'__de>>::decode)
    };
    quote!(#function(__r))
}

/// A `Result<(), DecodeError>` expression reading the field from `__r` into
/// `slot`, an `Option` of its type: through `Decode::decode_in_place` when
/// the field uses its type's codec, else its value put there.
fn field_decode_in_place(cg: &Codegen<'_>, field: &Field<'_>, slot: &syn::Ident) -> TokenStream {
    let krate = cg.krate;
    let ty = field.ty;
    if field.uses_codec_impl() {
        let function = quote_spanned!(ty.span()=> <#ty as #krate::Decode<'__de>>::decode_in_place);
        return quote!(#function(__r, &mut #slot));
    }
    let value = field_decode(cg, field);
    quote! {
        #value.map(|__v| #slot = ::core::option::Option::Some(__v))
    }
}

/// The value of an encoded field that is absent; `error` when it is required.
fn missing_value(cg: &Codegen<'_>, field: &Field<'_>, error: &TokenStream) -> TokenStream {
    let krate = cg.krate;
    let ty = field.ty;
    match &field.attrs.default.1 {
        DefaultValue::Default => {
            quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default())
        }
        DefaultValue::Path(_) => default_path_call(field),
        // As an `Option` field through its own impl: absent is `None`.
        DefaultValue::None if field.optional_bytes().is_some() || field.is_optional_serde() => {
            quote!(::core::option::Option::None)
        }
        DefaultValue::None if field.uses_codec_impl() => quote! {
            match <#ty as #krate::Decode<'__de>>::value_when_missing() {
                ::core::option::Option::Some(__v) => __v,
                ::core::option::Option::None => return ::core::result::Result::Err(#error),
            }
        },
        DefaultValue::None => quote!(return ::core::result::Result::Err(#error)),
    }
}

/// `path()` for `default = "path"`, typed the same way wherever it is used,
/// so a function of the wrong type is one error (rustc drops exact
/// duplicates) instead of one per decode path.
fn default_path_call(field: &Field<'_>) -> TokenStream {
    let ty = field.ty;
    let DefaultValue::Path(path) = &field.attrs.default.1 else {
        unreachable!("called for `default = \"path\"` only");
    };
    let call = quote_spanned!(path.span()=> #path());
    quote! {{
        let __default: #ty = #call;
        __default
    }}
}

/// The value of a `#[codec(skip)]` field.
fn skipped_value(field: &Field<'_>) -> TokenStream {
    let ty = field.ty;
    match &field.attrs.default.1 {
        DefaultValue::Path(_) => default_path_call(field),
        _ => quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default()),
    }
}
