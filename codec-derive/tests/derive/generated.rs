//! Compile-only coverage of what the derive accepts (serde's test_gen.rs):
//! generics with bounds, defaults and where clauses, lifetimes, const
//! generics, associated types, raw identifiers, recursion, types made by
//! `macro_rules!`, types inside functions, every attribute, and a module
//! where the prelude names the generated code could trip over are shadowed.
//! A value of each type is also round-tripped once, so the impls are used.

#![allow(
    dead_code,
    non_camel_case_types,
    non_snake_case,
    unused_imports,
    explicit_outlives_requirements,
    clippy::all,
    clippy::pedantic
)]

use codecbus_core::MessageCodec;

fn assert_codec<T: MessageCodec>() {}

fn round_trip<T: MessageCodec + PartialEq + std::fmt::Debug>(value: &T) {
    let bytes = codecbus_core::to_vec(value).unwrap();
    assert_eq!(&codecbus_core::from_slice::<T>(&bytes).unwrap(), value);
}

/// Every name the generated code could resolve by accident is taken by
/// something useless here; the derive must use absolute paths throughout.
#[allow(unused_macros)]
mod shadowed {
    use ::codecbus_core::MessageCodec;

    struct Result;
    struct Ok;
    struct Err;
    struct Option;
    struct Some;
    struct None;
    struct Box;
    struct Vec;
    struct String;
    struct Arc;
    struct Default;
    struct Clone;
    struct Writer;
    struct Reader;
    struct DecodeError;
    struct EncodeError;
    struct DecodeErrorKind;
    struct bool;
    struct usize;
    mod core {}
    mod std {}
    mod codecbus_core {}
    mod inventory {}
    macro_rules! unreachable {
        () => {
            compile_error!("shadowed")
        };
    }
    macro_rules! concat {
        ($($t:tt)*) => {
            compile_error!("shadowed")
        };
    }
    macro_rules! module_path {
        () => {
            compile_error!("shadowed")
        };
    }

    #[derive(MessageCodec, ::core::clone::Clone, ::core::fmt::Debug, ::core::cmp::PartialEq)]
    pub(crate) struct Plain {
        a: u8,
        b: ::std::option::Option<::std::string::String>,
        c: ::std::vec::Vec<::std::boxed::Box<u8>>,
        #[codec(skip)]
        d: u32,
        #[codec(default)]
        e: i64,
        #[codec(skip_if = "::std::option::Option::is_none")]
        f: ::std::option::Option<u8>,
    }

    #[derive(MessageCodec, ::core::clone::Clone, ::core::fmt::Debug, ::core::cmp::PartialEq)]
    #[codec(as_array)]
    pub(crate) enum Every {
        Unit,
        Newtype(u8),
        Tuple(u8, ::std::string::String),
        Struct { x: u8, y: ::std::option::Option<u8> },
    }

    #[derive(MessageCodec, ::core::fmt::Debug, ::core::cmp::PartialEq)]
    #[codec(immutable)]
    pub(crate) struct Frozen(u8, ::std::string::String);

    #[derive(MessageCodec, ::core::fmt::Debug, ::core::cmp::PartialEq)]
    #[codec(immutable)]
    pub(crate) struct FrozenNewtype(u8);

    #[derive(MessageCodec, ::core::clone::Clone, ::core::fmt::Debug, ::core::cmp::PartialEq)]
    pub(crate) struct Generic<T> {
        t: T,
    }

    #[derive(MessageCodec, ::core::clone::Clone, ::core::fmt::Debug, ::core::cmp::PartialEq)]
    pub(crate) struct Unit;

    #[derive(MessageCodec, ::core::clone::Clone)]
    pub(crate) enum Never {}

    pub(crate) fn values() -> (Plain, Every, Frozen, FrozenNewtype, Generic<u8>, Unit) {
        (
            Plain {
                a: 1,
                b: ::core::option::Option::None,
                c: ::std::vec![::std::boxed::Box::new(2)],
                d: 0,
                e: 3,
                f: ::core::option::Option::Some(4),
            },
            Every::Struct {
                x: 1,
                y: ::core::option::Option::None,
            },
            Frozen(1, ::std::string::String::from("x")),
            FrozenNewtype(2),
            Generic { t: 5 },
            Unit,
        )
    }
}

#[test]
fn shadowed_prelude() {
    let (plain, every, frozen, newtype, generic, unit) = shadowed::values();
    round_trip(&plain);
    round_trip(&every);
    round_trip(&frozen);
    round_trip(&newtype);
    round_trip(&generic);
    round_trip(&unit);
    assert_codec::<shadowed::Never>();
}

// ---- generics ----

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Bounds<'a, T: Clone + 'a, U = u8, const N: usize = 2>
where
    T: std::fmt::Debug,
    U: Copy,
{
    t: T,
    u: U,
    arr: [u8; N],
    #[codec(skip)]
    marker: std::marker::PhantomData<&'a T>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
enum GenericEnum<T, U>
where
    U: Default,
{
    A(T),
    B { u: U },
    C(T, U),
    D,
}

/// A type parameter that only appears in `PhantomData` and skipped fields
/// needs no `MessageCodec` bound.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Phantom<T> {
    #[codec(skip)]
    marker: std::marker::PhantomData<T>,
    x: u8,
}

#[derive(Clone, Debug, PartialEq)]
struct NotACodec;

trait Family {
    type Member;
}

#[derive(Clone, Debug, PartialEq)]
struct Bytes;

impl Family for Bytes {
    type Member = Vec<u8>;
}

/// Associated types of parameters are bounded directly.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Associated<F: Family>
where
    F::Member: Clone,
{
    member: F::Member,
    qualified: Vec<<F as Family>::Member>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Recursive<T> {
    value: T,
    children: Vec<Recursive<T>>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct SelfReferential {
    next: Option<Box<Self>>,
}

/// Arrays (like every `codecbus_core` container) need `Clone` elements; the
/// derive only infers `T: MessageCodec + Immutable`, so the type says it.
#[derive(MessageCodec, Debug, PartialEq)]
#[codec(immutable)]
struct FrozenGeneric<T: Clone, const N: usize> {
    items: [T; N],
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Lifetimes<'a, 'b: 'a> {
    id: u8,
    #[codec(skip)]
    borrowed: std::marker::PhantomData<(&'a str, &'b str)>,
}

#[test]
fn generics() {
    round_trip(&Bounds::<String, u16, 3> {
        t: "t".into(),
        u: 9,
        arr: [1, 2, 3],
        marker: std::marker::PhantomData,
    });
    round_trip(&Bounds::<u8> {
        t: 1,
        u: 2,
        arr: [3, 4],
        marker: std::marker::PhantomData,
    });
    round_trip(&GenericEnum::<String, u8>::C("c".into(), 1));
    round_trip(&GenericEnum::<u8, u8>::D);
    round_trip(&Phantom::<NotACodec> {
        marker: std::marker::PhantomData,
        x: 1,
    });
    round_trip(&Associated::<Bytes> {
        member: vec![1],
        qualified: vec![vec![2]],
    });
    round_trip(&Recursive {
        value: 1u8,
        children: vec![Recursive {
            value: 2,
            children: vec![],
        }],
    });
    round_trip(&SelfReferential {
        next: Some(Box::new(SelfReferential { next: None })),
    });
    round_trip(&FrozenGeneric { items: [1u8, 2, 3] });
    assert_codec::<FrozenGeneric<String, 0>>();
    round_trip(&Lifetimes {
        id: 1,
        borrowed: std::marker::PhantomData,
    });
}

/// Discriminants and `repr` do not matter: variants travel by name.
#[derive(MessageCodec, Clone, Copy, Debug, PartialEq)]
#[repr(u8)]
enum WithDiscriminants {
    Low = 1,
    High = 200,
}

#[test]
fn discriminants_are_ignored() {
    round_trip(&WithDiscriminants::High);
    assert_eq!(
        codecbus_core::to_vec(&WithDiscriminants::Low).unwrap(),
        b"\xa3Low"
    );
}

// ---- raw identifiers ----

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct r#struct {
    r#type: u8,
    r#match: String,
    r#fn: Option<u8>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
enum r#enum {
    r#loop,
    r#if(u8),
    r#while { r#break: u8 },
}

#[test]
fn raw_identifiers() {
    let v = r#struct {
        r#type: 1,
        r#match: "m".into(),
        r#fn: None,
    };
    round_trip(&v);
    let bytes = codecbus_core::to_vec(&v).unwrap();
    assert_eq!(bytes, b"\x83\xa4type\x01\xa5match\xa1m\xa2fn\xc0");
    round_trip(&r#enum::r#loop);
    round_trip(&r#enum::r#while { r#break: 1 });
    assert_eq!(codecbus_core::to_vec(&r#enum::r#loop).unwrap(), b"\xa4loop");
}

// ---- every attribute ----

mod reexport {
    pub(crate) use codecbus_core as codec;
}

fn seven() -> u32 {
    7
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

mod as_text {
    use codecbus_core::{DecodeError, EncodeError, Reader, Writer};

    pub(crate) fn encode(v: &u64, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_str(&v.to_string())
    }

    pub(crate) fn decode(r: &mut Reader<'_>) -> Result<u64, DecodeError> {
        let at = r.position();
        r.read_str()?
            .parse()
            .map_err(|e| DecodeError::custom(e, at))
    }
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "gen.all", rename_all = "camelCase", crate = "reexport::codec")]
struct AllAttributes {
    plain_field: u8,
    #[codec(rename = "other")]
    renamed: u8,
    #[codec(skip)]
    skipped: Vec<u8>,
    #[codec(skip, default = "seven")]
    skipped_with_path: u32,
    #[codec(default)]
    defaulted: String,
    #[codec(default = "seven")]
    defaulted_with_path: u32,
    #[codec(bytes)]
    blob: Vec<u8>,
    #[codec(bytes, default)]
    maybe_blob: Vec<u8>,
    #[codec(with = "as_text")]
    as_text: u64,
    #[codec(skip_if = "is_default", default)]
    sometimes: u16,
    #[codec(with = "as_text", skip_if = "is_default", default, rename = "t")]
    combined: u64,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(
    immutable,
    as_array,
    crate = "::codecbus_core",
    rename_all = "kebab-case"
)]
enum AllVariantAttributes {
    FirstOne,
    #[codec(rename = "2")]
    Second(u8),
    Third {
        #[codec(default)]
        x: u8,
        #[codec(with = "as_text")]
        y: u64,
    },
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct TupleAttributes(
    #[codec(bytes)] Vec<u8>,
    #[codec(with = "as_text")] u64,
    #[codec(skip)] u8,
    #[codec(default)] u8,
);

#[test]
fn every_attribute() {
    let all = AllAttributes {
        plain_field: 1,
        renamed: 2,
        skipped: vec![],
        skipped_with_path: 7,
        defaulted: "d".into(),
        defaulted_with_path: 8,
        blob: vec![1, 2],
        maybe_blob: vec![],
        as_text: 12345,
        sometimes: 0,
        combined: 9,
    };
    round_trip(&all);
    let bytes = codecbus_core::to_vec(&all).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    for key in [
        "plainField",
        "other",
        "defaultedWithPath",
        "maybeBlob",
        "asText",
        "t",
    ] {
        assert!(text.contains(key), "{key} in {text}");
    }
    assert!(!text.contains("sometimes"));
    assert!(codecbus_core::registrations().any(|r| r.name() == "gen.all"));

    round_trip(&AllVariantAttributes::FirstOne);
    round_trip(&AllVariantAttributes::Second(1));
    round_trip(&AllVariantAttributes::Third { x: 1, y: 2 });
    assert_eq!(
        codecbus_core::to_vec(&AllVariantAttributes::FirstOne).unwrap(),
        b"\xa9first-one"
    );
    round_trip(&TupleAttributes(vec![1], 2, 0, 3));
}

// ---- macro_rules and function bodies ----

macro_rules! make_types {
    ($name:ident, $field:ident: $ty:ty, $variant:ident) => {
        #[derive(MessageCodec, Clone, Debug, PartialEq)]
        struct $name {
            $field: $ty,
            #[codec(skip_if = "Option::is_none")]
            extra: Option<$ty>,
        }

        #[derive(MessageCodec, Clone, Debug, PartialEq)]
        enum Wrapper {
            $variant($name),
            Other { $field: $ty },
        }
    };
}

make_types!(FromMacro, value: u32, Held);

#[test]
fn made_by_macro_rules_and_inside_functions() {
    round_trip(&Wrapper::Held(FromMacro {
        value: 1,
        extra: Some(2),
    }));
    round_trip(&Wrapper::Other { value: 3 });

    #[derive(MessageCodec, Clone, Debug, PartialEq)]
    struct Local {
        x: u8,
    }
    #[derive(MessageCodec, Clone, Debug, PartialEq)]
    enum LocalEnum {
        A(Local),
    }
    round_trip(&LocalEnum::A(Local { x: 1 }));
}

// ---- no prelude at all ----

mod no_prelude {
    #![no_implicit_prelude]

    #[derive(
        ::codecbus_core::MessageCodec,
        ::core::clone::Clone,
        ::core::fmt::Debug,
        ::core::cmp::PartialEq,
    )]
    pub(crate) struct Plain {
        pub(crate) a: u8,
        pub(crate) b: ::std::option::Option<::std::string::String>,
        #[codec(skip_if = "::std::vec::Vec::is_empty", default)]
        pub(crate) c: ::std::vec::Vec<u8>,
        #[codec(bytes)]
        pub(crate) d: ::std::vec::Vec<u8>,
    }

    #[derive(::codecbus_core::MessageCodec, ::core::fmt::Debug, ::core::cmp::PartialEq)]
    #[codec(immutable, as_array)]
    pub(crate) enum Every {
        Unit,
        Newtype(u8),
        Tuple(u8, ::std::string::String),
        Struct { x: u8 },
    }

    #[derive(::codecbus_core::MessageCodec, ::core::clone::Clone)]
    pub(crate) enum Never {}
}

#[test]
fn without_prelude() {
    round_trip(&no_prelude::Plain {
        a: 1,
        b: None,
        c: vec![],
        d: vec![1],
    });
    round_trip(&no_prelude::Every::Tuple(1, "x".into()));
    round_trip(&no_prelude::Every::Struct { x: 2 });
    assert_codec::<no_prelude::Never>();
}
