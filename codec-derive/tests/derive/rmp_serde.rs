//! Byte-for-byte agreement with `rmp-serde` 1.3: the same types derive both
//! `MessageCodec` and serde's traits, every value is encoded both ways and
//! the bytes compared, and each side decodes the other's bytes.
//!
//! Map-mode types are compared with `rmp_serde::to_vec_named`,
//! `#[codec(as_array)]` types with `rmp_serde::to_vec`. Map-mode types also
//! decode `to_vec`'s positional output, and array-mode types `to_vec_named`'s
//! maps.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;

use codecbus_core::{MessageCodec, from_slice, to_vec};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::common;

use common::hex;

/// A map-mode type: same bytes as `to_vec_named`, decoded both ways, and
/// `to_vec`'s positional bytes decoded too.
#[track_caller]
fn agree_named<T>(value: &T)
where
    T: MessageCodec + Serialize + DeserializeOwned + PartialEq + Debug,
{
    common::agree_named(value);
    let positional = rmp_serde::to_vec(value).unwrap();
    assert_eq!(
        &from_slice::<T>(&positional).unwrap(),
        value,
        "we decode rmp-serde's positional form {}",
        hex(&positional)
    );
}

/// An `as_array` type: same bytes as `to_vec`, decoded both ways, and
/// `to_vec_named`'s maps decoded too.
#[track_caller]
fn agree_array<T>(value: &T)
where
    T: MessageCodec + Serialize + DeserializeOwned + PartialEq + Debug,
{
    common::agree_with(value, &rmp_serde::to_vec(value).unwrap());
    let named = rmp_serde::to_vec_named(value).unwrap();
    assert_eq!(
        &from_slice::<T>(&named).unwrap(),
        value,
        "we decode rmp-serde's named form {}",
        hex(&named)
    );
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Scalars {
    b: bool,
    u8_: u8,
    u16_: u16,
    u32_: u32,
    u64_: u64,
    i8_: i8,
    i16_: i16,
    i32_: i32,
    i64_: i64,
    f32_: f32,
    f64_: f64,
    c: char,
    s: String,
    unit: (),
}

fn scalars(n: u64, i: i64) -> Scalars {
    Scalars {
        b: n.is_multiple_of(2),
        u8_: n as u8,
        u16_: n as u16,
        u32_: n as u32,
        u64_: n,
        i8_: i as i8,
        i16_: i as i16,
        i32_: i as i32,
        i64_: i,
        f32_: i as f32 / 3.0,
        f64_: n as f64 * 1.5,
        c: char::from_u32((n % 0x7f) as u32).unwrap_or('x'),
        s: "x".repeat((n % 300) as usize),
        unit: (),
    }
}

#[test]
fn scalar_boundaries() {
    let unsigned = [
        0,
        1,
        127,
        128,
        255,
        256,
        65_535,
        65_536,
        u32::MAX as u64,
        u32::MAX as u64 + 1,
        u64::MAX,
    ];
    let signed = [
        0,
        -1,
        -32,
        -33,
        -128,
        -129,
        -32_768,
        -32_769,
        i32::MIN as i64,
        i32::MIN as i64 - 1,
        i64::MIN,
        i64::MAX,
    ];
    for (k, &n) in unsigned.iter().enumerate() {
        for &i in &signed {
            let mut v = scalars(n, i);
            v.s = "s".repeat([0, 31, 32, 255, 256, 65_536][k % 6]);
            agree_named(&v);
        }
    }
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Item {
    name: String,
    price: u32,
    note: Option<String>,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Order {
    id: u64,
    items: Vec<Item>,
    by_sku: BTreeMap<String, Item>,
    counts: HashMap<String, i32>,
    first: Option<Box<Item>>,
    nested: Vec<Vec<Option<u8>>>,
    pair: (u8, String),
    fixed: [u16; 3],
}

fn item(i: u32) -> Item {
    Item {
        name: format!("item-{i}"),
        price: i * 100,
        note: i.is_multiple_of(2).then(|| "even".to_string()),
    }
}

fn order(n: u32) -> Order {
    Order {
        id: u64::from(n) << 33,
        items: (0..n).map(item).collect(),
        by_sku: (0..n).map(|i| (format!("sku{i}"), item(i))).collect(),
        counts: (0..n.min(1))
            .map(|i| (format!("k{i}"), -(i as i32)))
            .collect(),
        first: (n > 0).then(|| Box::new(item(0))),
        nested: vec![vec![Some(1), None], vec![]],
        pair: (7, "seven".into()),
        fixed: [1, 300, 70_000u32 as u16],
    }
}

#[test]
fn nested_collections_and_options() {
    for n in [0, 1, 3, 17] {
        agree_named(&order(n));
    }
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct PositionalItem {
    name: String,
    price: u32,
    note: Option<String>,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct PositionalOrder {
    id: u64,
    items: Vec<PositionalItem>,
    first: Option<PositionalItem>,
}

#[test]
fn as_array_structs() {
    let items: Vec<PositionalItem> = (0..20)
        .map(|i| PositionalItem {
            name: format!("n{i}"),
            price: i,
            note: None,
        })
        .collect();
    agree_array(&PositionalOrder {
        id: 1,
        items: items.clone(),
        first: items.first().cloned(),
    });
    agree_array(&PositionalOrder {
        id: u64::MAX,
        items: vec![],
        first: None,
    });
}

/// Sixteen or more fields need a `map 16` / `array 16` header.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
struct Wide {
    f00: u8,
    f01: u8,
    f02: u8,
    f03: u8,
    f04: u8,
    f05: u8,
    f06: u8,
    f07: u8,
    f08: u8,
    f09: u8,
    f10: u8,
    f11: u8,
    f12: u8,
    f13: u8,
    f14: u8,
    f15: u8,
    a_field_name_that_is_longer_than_thirty_one_bytes: String,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[codec(as_array)]
struct WideArray {
    f00: u8,
    f01: u8,
    f02: u8,
    f03: u8,
    f04: u8,
    f05: u8,
    f06: u8,
    f07: u8,
    f08: u8,
    f09: u8,
    f10: u8,
    f11: u8,
    f12: u8,
    f13: u8,
    f14: u8,
    f15: u8,
}

#[test]
fn sixteen_fields_and_long_keys() {
    let wide = Wide {
        f07: 200,
        a_field_name_that_is_longer_than_thirty_one_bytes: "long".into(),
        ..Wide::default()
    };
    let bytes = to_vec(&wide).unwrap();
    assert_eq!(bytes[..3], [0xde, 0x00, 0x11]);
    agree_named(&wide);
    let bytes = to_vec(&WideArray::default()).unwrap();
    assert_eq!(bytes[..3], [0xdc, 0x00, 0x10]);
    agree_array(&WideArray {
        f15: 9,
        ..WideArray::default()
    });
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Newtype(Item);

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Meters(f64);

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Pair(u8, String);

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Unit;

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct EmptyBraces {}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct EmptyParens();

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Shapes {
    newtype: Newtype,
    meters: Meters,
    pair: Pair,
    unit: Unit,
    braces: EmptyBraces,
    parens: EmptyParens,
}

#[test]
fn struct_shapes() {
    agree_named(&Newtype(item(3)));
    agree_named(&Meters(2.5));
    agree_named(&Pair(1, "one".into()));
    agree_named(&Unit);
    agree_named(&EmptyBraces {});
    agree_named(&EmptyParens());
    assert_eq!(to_vec(&Unit).unwrap(), [0x90]);
    assert_eq!(to_vec(&EmptyBraces {}).unwrap(), [0x80]);
    assert_eq!(to_vec(&EmptyParens()).unwrap(), [0x90]);
    assert_eq!(to_vec(&Meters(0.5)).unwrap(), to_vec(&0.5f64).unwrap());
    agree_named(&Shapes {
        newtype: Newtype(item(1)),
        meters: Meters(-0.0),
        pair: Pair(255, String::new()),
        unit: Unit,
        braces: EmptyBraces {},
        parens: EmptyParens(),
    });
    // rmp-serde also writes a unit struct's `()`-like nil form; both decode.
    assert_eq!(from_slice::<Unit>(&[0xc0]).unwrap(), Unit);
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
enum Message {
    Ping,
    Text(String),
    Move(i32, i32),
    Login { user: String, token: Option<String> },
    NoFields(),
    NoNames {},
    Wrapped(Item),
    Nested(Box<Message>),
    List(Vec<Message>),
}

fn messages() -> Vec<Message> {
    vec![
        Message::Ping,
        Message::Text("hello".into()),
        Message::Move(-1, 70_000),
        Message::Login {
            user: "ann".into(),
            token: None,
        },
        Message::Login {
            user: "bob".into(),
            token: Some("t".into()),
        },
        Message::NoFields(),
        Message::NoNames {},
        Message::Wrapped(item(4)),
        Message::Nested(Box::new(Message::Nested(Box::new(Message::Ping)))),
        Message::List(vec![
            Message::Ping,
            Message::Move(0, 0),
            Message::NoNames {},
        ]),
    ]
}

#[test]
fn enums_every_variant_kind() {
    for m in messages() {
        agree_named(&m);
    }
    assert_eq!(to_vec(&Message::Ping).unwrap(), b"\xa4Ping");
    assert_eq!(
        to_vec(&Message::Text("a".into())).unwrap(),
        b"\x81\xa4Text\xa1a"
    );
    assert_eq!(
        to_vec(&Message::Move(1, 2)).unwrap(),
        b"\x81\xa4Move\x92\x01\x02"
    );
    assert_eq!(
        to_vec(&Message::Login {
            user: "u".into(),
            token: None
        })
        .unwrap(),
        b"\x81\xa5Login\x82\xa4user\xa1u\xa5token\xc0"
    );
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[codec(as_array)]
enum Compact {
    A,
    B(u8),
    C(u8, u8),
    D { x: u8, y: Option<u8> },
}

#[test]
fn as_array_enum_struct_variants_are_arrays() {
    for v in [
        Compact::A,
        Compact::B(1),
        Compact::C(1, 2),
        Compact::D { x: 1, y: Some(2) },
        Compact::D { x: 1, y: None },
    ] {
        agree_array(&v);
    }
    assert_eq!(
        to_vec(&Compact::D { x: 1, y: None }).unwrap(),
        b"\x81\xa1D\x92\x01\xc0"
    );
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[codec(rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
struct Renamed {
    user_id: u32,
    #[codec(rename = "DisplayName")]
    #[serde(rename = "DisplayName")]
    display_name: String,
    r#type: u8,
    r#loop: bool,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[codec(rename_all = "snake_case")]
#[serde(rename_all = "snake_case")]
#[allow(clippy::enum_variant_names)]
enum RenamedEnum {
    FirstThing,
    #[codec(rename = "two")]
    #[serde(rename = "two")]
    SecondThing(u8),
    ThirdThing {
        inner_field: u8,
    },
}

#[test]
fn rename_and_raw_identifiers() {
    let v = Renamed {
        user_id: 1,
        display_name: "d".into(),
        r#type: 2,
        r#loop: true,
    };
    agree_named(&v);
    let bytes = to_vec(&v).unwrap();
    assert_eq!(
        bytes,
        b"\x84\xa6userId\x01\xabDisplayName\xa1d\xa4type\x02\xa4loop\xc3"
    );
    for e in [
        RenamedEnum::FirstThing,
        RenamedEnum::SecondThing(2),
        RenamedEnum::ThirdThing { inner_field: 3 },
    ] {
        agree_named(&e);
    }
    assert_eq!(
        to_vec(&RenamedEnum::FirstThing).unwrap(),
        b"\xabfirst_thing"
    );
}

macro_rules! rename_all_case {
    ($struct:ident, $enum:ident, $rule:literal) => {
        #[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
        #[codec(rename_all = $rule)]
        #[serde(rename_all = $rule)]
        struct $struct {
            user_id: u8,
            x: u8,
            very_long_name_here: u8,
        }

        #[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
        #[codec(rename_all = $rule)]
        #[serde(rename_all = $rule)]
        enum $enum {
            UserId,
            X(u8),
            VeryLongNameHere { a_b: u8 },
        }
    };
}

rename_all_case!(SLower, ELower, "lowercase");
rename_all_case!(SUpper, EUpper, "UPPERCASE");
rename_all_case!(SPascal, EPascal, "PascalCase");
rename_all_case!(SCamel, ECamel, "camelCase");
rename_all_case!(SSnake, ESnake, "snake_case");
rename_all_case!(SScreaming, EScreaming, "SCREAMING_SNAKE_CASE");
rename_all_case!(SKebab, EKebab, "kebab-case");
rename_all_case!(SScreamingKebab, EScreamingKebab, "SCREAMING-KEBAB-CASE");

#[test]
fn rename_all_rules_match_serde() {
    macro_rules! check {
        ($($struct:ident / $enum:ident),*) => {$(
            agree_named(&$struct { user_id: 1, x: 2, very_long_name_here: 3 });
            agree_named(&$enum::UserId);
            agree_named(&$enum::X(4));
            agree_named(&$enum::VeryLongNameHere { a_b: 5 });
        )*};
    }
    check!(
        SLower / ELower,
        SUpper / EUpper,
        SPascal / EPascal,
        SCamel / ECamel,
        SSnake / ESnake,
        SScreaming / EScreaming,
        SKebab / EKebab,
        SScreamingKebab / EScreamingKebab
    );
}

fn default_port() -> u16 {
    8080
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Optional {
    host: String,
    #[codec(default = "default_port")]
    #[serde(default = "default_port")]
    port: u16,
    #[codec(skip)]
    #[serde(skip)]
    cache: Vec<u8>,
    #[codec(default)]
    #[serde(default)]
    retries: u8,
    #[codec(skip_if = "Option::is_none")]
    #[serde(skip_serializing_if = "Option::is_none")]
    comment: Option<String>,
    #[codec(skip_if = "is_zero")]
    #[serde(skip_serializing_if = "is_zero")]
    weight: u32,
    #[codec(skip_if = "Vec::is_empty", default)]
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    tags: Vec<String>,
}

#[test]
fn skip_default_and_skip_if() {
    for (comment, weight, tags) in [
        (None, 0, vec![]),
        (Some("c".to_string()), 0, vec![]),
        (None, 5, vec!["t".to_string()]),
        (Some("c".to_string()), 70_000, vec!["a".into(), "b".into()]),
    ] {
        let v = Optional {
            host: "h".into(),
            port: 1,
            cache: vec![],
            retries: 2,
            comment,
            weight,
            tags,
        };
        let ours = to_vec(&v).unwrap();
        assert_eq!(hex(&ours), hex(&rmp_serde::to_vec_named(&v).unwrap()));
        // `weight` has no default, so a value without it only decodes when
        // it was written (on both sides).
        if v.weight != 0 {
            assert_eq!(rmp_serde::from_slice::<Optional>(&ours).unwrap(), v);
            assert_eq!(from_slice::<Optional>(&ours).unwrap(), v);
        } else {
            assert!(from_slice::<Optional>(&ours).is_err());
            assert!(rmp_serde::from_slice::<Optional>(&ours).is_err());
        }
    }
    // The skipped field never travels; decoding fills it from `Default`.
    let with_cache = Optional {
        host: "h".into(),
        port: 1,
        cache: vec![1, 2, 3],
        retries: 0,
        comment: None,
        weight: 1,
        tags: vec![],
    };
    let decoded: Optional = from_slice(&to_vec(&with_cache).unwrap()).unwrap();
    assert_eq!(decoded.cache, Vec::<u8>::new());
    // Missing `default` fields take their defaults.
    let minimal = rmp_serde::to_vec_named(&serde_minimal()).unwrap();
    let decoded: Optional = from_slice(&minimal).unwrap();
    assert_eq!(
        (decoded.port, decoded.retries, decoded.comment),
        (8080, 0, None)
    );
}

fn serde_minimal() -> BTreeMap<&'static str, serde_json_like::Value> {
    let mut m = BTreeMap::new();
    m.insert("host", serde_json_like::Value::Str("h"));
    m.insert("weight", serde_json_like::Value::U32(3));
    m
}

/// A two-kind value so a hand-built map can be written with rmp-serde.
mod serde_json_like {
    use serde::Serialize;

    #[derive(Serialize)]
    #[serde(untagged)]
    pub(crate) enum Value {
        Str(&'static str),
        U32(u32),
    }
}

mod bin {
    use serde::Serializer;
    use serde::de::{Deserializer, Error, Visitor};

    pub(crate) fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
        }
        d.deserialize_byte_buf(V)
    }
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Blob {
    #[codec(bytes)]
    #[serde(with = "bin")]
    data: Vec<u8>,
    plain: Vec<u8>,
}

#[test]
fn bytes_attribute_is_bin() {
    for n in [0, 1, 255, 256, 70_000] {
        let v = Blob {
            data: vec![7; n],
            plain: vec![1, 200],
        };
        agree_named(&v);
    }
    let bytes = to_vec(&Blob {
        data: vec![1],
        plain: vec![],
    })
    .unwrap();
    assert_eq!(bytes, b"\x82\xa4data\xc4\x01\x01\xa5plain\x90");
}

/// `Option<Vec<u8>>` as serde writes it with a `bin` inner value.
mod opt_bin {
    use serde::Serializer;
    use serde::de::{Deserializer, Error, Visitor};

    pub(crate) fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_bytes(v),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<u8>>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<Vec<u8>>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("bytes or nil")
            }
            fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                super::bin::deserialize(d).map(Some)
            }
        }
        d.deserialize_option(V)
    }
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct MaybeBlob {
    #[codec(bytes)]
    #[serde(with = "opt_bin", default)]
    signature: Option<Vec<u8>>,
    n: u8,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct MaybeBlobArray(
    #[codec(bytes)]
    #[serde(with = "opt_bin")]
    Option<Vec<u8>>,
    u8,
);

#[test]
fn bytes_attribute_on_an_option_is_bin_or_nil() {
    for signature in [None, Some(vec![]), Some(vec![9; 300])] {
        agree_named(&MaybeBlob {
            signature: signature.clone(),
            n: 1,
        });
        agree_array(&MaybeBlobArray(signature, 2));
    }
    let some = to_vec(&MaybeBlob {
        signature: Some(vec![1, 2]),
        n: 0,
    })
    .unwrap();
    assert_eq!(some, b"\x82\xa9signature\xc4\x02\x01\x02\xa1n\x00");
    // Absent is `None`, like any `Option` field; `str` is read as bytes.
    let absent: MaybeBlob = from_slice(b"\x81\xa1n\x05").unwrap();
    assert_eq!(absent.signature, None);
    let text: MaybeBlob = from_slice(b"\x82\xa9signature\xa2hi\xa1n\x05").unwrap();
    assert_eq!(text.signature.as_deref(), Some(&b"hi"[..]));
    // Anything else is a type error at the field.
    let err = from_slice::<MaybeBlob>(b"\x82\xa9signature\x01\xa1n\x05").unwrap_err();
    assert!(err.to_string().contains("signature"), "{err}");
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Generic<T, U> {
    value: T,
    list: Vec<U>,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
enum Either<L, R> {
    Left(L),
    Right { value: R },
}

#[test]
fn generic_types() {
    agree_named(&Generic {
        value: item(1),
        list: vec![Message::Ping],
    });
    agree_named(&Either::<u8, String>::Left(1));
    agree_named(&Either::<u8, Generic<u8, u8>>::Right {
        value: Generic {
            value: 1,
            list: vec![2],
        },
    });
}

/// The SQL request of the Apache Ignite 3 design: 54 bytes from the
/// low-level writer (query, then the argument array), 55 as a derived
/// `as_array` struct (one array header more), the same as `rmp_serde::to_vec`.
#[test]
fn sql_request_sizes() {
    #[derive(codecbus_core::MessageCodec, serde::Serialize, Clone, Debug, PartialEq)]
    #[codec(as_array)]
    struct SqlRequest {
        query: String,
        args: Vec<i64>,
    }
    let query = "select * from cars where year > ? and seats = ?";
    let req = SqlRequest {
        query: query.into(),
        args: vec![2005, 2],
    };

    let mut w = codecbus_core::Writer::new();
    w.write_str(query).unwrap();
    w.write_array_len(2).unwrap();
    w.write_i64(2005);
    w.write_i64(2);
    assert_eq!(w.len(), 54);

    let derived = codecbus_core::to_vec(&req).unwrap();
    assert_eq!(derived.len(), 55);
    assert_eq!(&derived[1..], w.as_slice());
    assert_eq!(derived, rmp_serde::to_vec(&req).unwrap());
    assert_eq!(
        codecbus_core::from_slice::<SqlRequest>(&derived).unwrap(),
        req
    );
}

/// A struct of scalars has a bound on its size, so a sequence of them is
/// written a run at a time through the derived bounded writer: by name,
/// by position, as a tuple struct and a newtype, nested; the bytes are
/// rmp-serde's and each element's own, across runs (4 KiB each).
#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Sample {
    at: u64,
    value: f64,
    delta: i16,
    ok: bool,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[codec(as_array)]
struct Reading {
    a: Sample,
    b: f32,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Cell(u8, i64, Level);

#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Level(u32);

#[test]
fn sequences_of_bounded_structs_agree_across_runs() {
    let sample = |i: u64| Sample {
        at: i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (i % 64),
        value: i as f64 / 7.0,
        delta: (i as i16).wrapping_mul(257),
        ok: i.is_multiple_of(3),
    };
    let samples: Vec<Sample> = (0..900).map(sample).collect();
    common::agree_named(&samples);
    let readings: Vec<Reading> = (0..700)
        .map(|i| Reading {
            a: sample(i),
            b: -(i as f32),
        })
        .collect();
    // rmp-serde writes the inner map-layout struct by position here: the
    // bytes to compare are each element's own encoding, one by one.
    let mut one_by_one = vec![0xdc, 0x02, 0xbc];
    for reading in &readings {
        one_by_one.extend_from_slice(&to_vec(reading).unwrap());
    }
    assert_eq!(to_vec(&readings).unwrap(), one_by_one);
    assert_eq!(from_slice::<Vec<Reading>>(&one_by_one).unwrap(), readings);
    let cells: Vec<Cell> = (0..1000)
        .map(|i| Cell(i as u8, -(i as i64) << (i % 50), Level(i as u32 * 99_991)))
        .collect();
    agree_named(&cells);
    assert_eq!(
        <Sample as codecbus_core::Encode>::MAX_LEN,
        // The keys' 3 + 6 + 6 + 3 bytes and the header, and the fields'
        // rooms: a `u64` 9, an `f64` 9, an `i16` 4 (its padded small form),
        // a `bool` 1.
        Some(1 + 3 + 9 + 6 + 9 + 6 + 4 + 3 + 1)
    );
    assert_eq!(<Level as codecbus_core::Encode>::MAX_LEN, Some(5));
    assert_eq!(<Scalars as codecbus_core::Encode>::MAX_LEN, None);
}
