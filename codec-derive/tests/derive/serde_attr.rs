//! `#[codec(serde)]`: a field of a serde type inside a derived codec.
//!
//! The types below derive both `MessageCodec` and serde's traits, so each
//! value is encoded both ways and the bytes compared with
//! `rmp_serde::to_vec_named` (the field types are serde-only: they have no
//! `MessageCodec`), then each side decodes the other's bytes. Hostile input
//! gives errors with the field's path, never a panic.

use crate::common;

use common::{agree_named, hex};

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;

use codecbus_core::{
    DecodeErrorKind, DecodeLimits, MessageCodec, Writer, from_slice, from_slice_with_limits, to_vec,
};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

// ---- serde-only types ------------------------------------------------------

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct LegacyLine {
    sku: String,
    quantity: u32,
    price: Option<f64>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
enum LegacyStatus {
    Open,
    Held(String),
    Moved(u8, u8),
    Closed { at: u64, reason: Option<String> },
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct LegacyOrder {
    id: u64,
    lines: Vec<LegacyLine>,
    status: LegacyStatus,
    attributes: BTreeMap<String, i64>,
    #[serde(with = "serde_bytes_like")]
    blob: Vec<u8>,
}

/// serde's own `bin` path (`serialize_bytes`), without the `serde_bytes`
/// crate.
mod serde_bytes_like {
    use serde::{Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
        }
        d.deserialize_bytes(V)
    }
}

/// Recursion through serde only, for the depth tests.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Nest(Vec<Nest>);

// ---- derived types with serde fields ---------------------------------------

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Envelope {
    id: u64,
    #[codec(serde)]
    order: LegacyOrder,
    #[codec(serde)]
    previous: Option<LegacyOrder>,
    #[codec(serde)]
    by_sku: HashMap<String, LegacyLine>,
    trailer: String,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct Compact {
    id: u64,
    #[codec(serde)]
    status: LegacyStatus,
    #[codec(serde)]
    note: Option<LegacyLine>,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
enum Event {
    Ping,
    Placed(#[codec(serde)] LegacyOrder),
    Pair(u8, #[codec(serde)] LegacyStatus),
    Changed {
        id: u64,
        #[codec(serde)]
        from: LegacyStatus,
        #[codec(serde)]
        to: Option<LegacyStatus>,
    },
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Sparse {
    id: u32,
    #[codec(serde, skip_if = "Option::is_none")]
    #[serde(skip_serializing_if = "Option::is_none", default)]
    line: Option<LegacyLine>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Deep {
    #[codec(serde)]
    nest: Nest,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Holder {
    inner: Vec<Deep>,
}

/// A generic type: `T` is only used through serde, so it needs serde's
/// traits and not `MessageCodec`.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Tagged<T> {
    tag: String,
    #[codec(serde)]
    value: T,
}

// ---- helpers ---------------------------------------------------------------

fn line(sku: &str, quantity: u32) -> LegacyLine {
    LegacyLine {
        sku: sku.into(),
        quantity,
        price: Some(f64::from(quantity) * 1.5),
    }
}

fn order(id: u64) -> LegacyOrder {
    LegacyOrder {
        id,
        lines: vec![line("tea", 2), line("cake", 1)],
        status: LegacyStatus::Closed {
            at: 1_700_000_000,
            reason: None,
        },
        attributes: [("priority".to_string(), -3), ("z".to_string(), 1 << 40)].into(),
        blob: vec![0, 1, 0xff],
    }
}

fn envelope() -> Envelope {
    Envelope {
        id: 9,
        order: order(1),
        previous: None,
        by_sku: [("tea".to_string(), line("tea", 2))].into(),
        trailer: "end".into(),
    }
}

fn nest(depth: usize) -> Nest {
    let mut n = Nest(vec![]);
    for _ in 0..depth {
        n = Nest(vec![n]);
    }
    n
}

// ---- byte compatibility ----------------------------------------------------

#[test]
fn map_struct_fields_match_rmp_serde_named() {
    agree_named(&envelope());
    agree_named(&Envelope {
        previous: Some(order(0)),
        by_sku: HashMap::new(),
        ..envelope()
    });
    for status in [
        LegacyStatus::Open,
        LegacyStatus::Held("why".into()),
        LegacyStatus::Moved(1, 2),
    ] {
        agree_named(&Envelope {
            order: LegacyOrder {
                status,
                lines: vec![],
                attributes: BTreeMap::new(),
                blob: vec![],
                ..order(u64::MAX)
            },
            ..envelope()
        });
    }
}

#[test]
fn the_field_is_written_in_serde_named_mode_inside_an_array() {
    // `as_array` positions the fields, the serde field itself stays named:
    // the same bytes as a tuple written by `to_vec_named`.
    let value = Compact {
        id: 3,
        status: LegacyStatus::Closed {
            at: 5,
            reason: Some("done".into()),
        },
        note: Some(line("jam", 4)),
    };
    let ours = to_vec(&value).unwrap();
    let theirs = rmp_serde::to_vec_named(&(3u64, &value.status, &value.note)).unwrap();
    assert_eq!(hex(&ours), hex(&theirs));
    assert_eq!(from_slice::<Compact>(&theirs).unwrap(), value);
    assert_eq!(
        rmp_serde::from_slice::<(u64, LegacyStatus, Option<LegacyLine>)>(&ours).unwrap(),
        (3, value.status.clone(), value.note.clone())
    );
    // A short array leaves the optional serde field out.
    let short = rmp_serde::to_vec_named(&(3u64, LegacyStatus::Open)).unwrap();
    assert_eq!(
        from_slice::<Compact>(&short).unwrap(),
        Compact {
            id: 3,
            status: LegacyStatus::Open,
            note: None
        }
    );
}

#[test]
fn enum_variant_fields_match_rmp_serde_named() {
    agree_named(&Event::Ping);
    agree_named(&Event::Placed(order(4)));
    agree_named(&Event::Pair(7, LegacyStatus::Held("x".into())));
    agree_named(&Event::Changed {
        id: 1,
        from: LegacyStatus::Open,
        to: Some(LegacyStatus::Moved(3, 4)),
    });
    agree_named(&Event::Changed {
        id: 2,
        from: LegacyStatus::Moved(0, 0),
        to: None,
    });
}

#[test]
fn generic_fields_through_serde() {
    agree_named(&Tagged {
        tag: "t".into(),
        value: order(2),
    });
    agree_named(&Tagged {
        tag: "m".into(),
        value: BTreeMap::from([(1u8, vec![Some(2i16), None])]),
    });
}

#[test]
fn option_fields_behave_like_option_fields() {
    // absent key → None
    let bytes = rmp_serde::to_vec_named(&BTreeMap::from([("id", 5u32)])).unwrap();
    assert_eq!(
        from_slice::<Sparse>(&bytes).unwrap(),
        Sparse { id: 5, line: None }
    );
    // skip_if leaves the key out; serde's skip_serializing_if agrees
    agree_named(&Sparse { id: 5, line: None });
    assert_eq!(
        to_vec(&Sparse { id: 5, line: None }).unwrap(),
        b"\x81\xa2id\x05"
    );
    agree_named(&Sparse {
        id: 6,
        line: Some(line("a", 1)),
    });
    // explicit nil → None
    let mut w = Writer::new();
    w.write_map_len(2).unwrap();
    w.write_str("id").unwrap();
    w.write_u64(1);
    w.write_str("line").unwrap();
    w.write_nil();
    assert_eq!(
        from_slice::<Sparse>(w.as_slice()).unwrap(),
        Sparse { id: 1, line: None }
    );
    // a required serde field that is absent is still an error
    let bytes = rmp_serde::to_vec_named(&BTreeMap::from([("id", 5u64)])).unwrap();
    let err = from_slice::<Envelope>(&bytes).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::MissingField("order"));
}

// ---- hostile input ---------------------------------------------------------

#[test]
fn every_truncation_is_an_error() {
    let bytes = to_vec(&Envelope {
        previous: Some(order(8)),
        ..envelope()
    })
    .unwrap();
    for cut in 0..bytes.len() {
        let err = from_slice::<Envelope>(&bytes[..cut]).unwrap_err();
        assert!(err.offset() <= cut, "cut {cut}: {err}");
    }
    let bytes = to_vec(&Event::Changed {
        id: 1,
        from: LegacyStatus::Held("abc".into()),
        to: Some(LegacyStatus::Open),
    })
    .unwrap();
    for cut in 0..bytes.len() {
        assert!(from_slice::<Event>(&bytes[..cut]).is_err(), "cut {cut}");
    }
}

#[test]
fn wrong_types_carry_the_field_path() {
    // {"id": 1, "order": "not an order", ...}
    let mut value = rmp_serde::to_vec_named(&envelope()).unwrap();
    let at = value.windows(6).position(|w| w == b"\xa5order").unwrap() + 6;
    let mut bad = value[..at].to_vec();
    bad.extend_from_slice(b"\xa3abc");
    // skip the original order value
    let mut r = codecbus_core::Reader::new(&value[at..]);
    r.skip_value().unwrap();
    bad.extend_from_slice(&value[at + r.position()..]);
    let err = from_slice::<Envelope>(&bad).unwrap_err();
    assert_eq!(err.pointer(), "/order");
    // serde reports type errors as text; the kind says it came from there
    assert_eq!(err.kind(), DecodeErrorKind::Custom);
    assert_eq!(
        err.detail(),
        Some(r#"serde: invalid type: string "abc", expected struct LegacyOrder"#)
    );
    // where rmp-serde stopped: it read the whole string before refusing it
    assert_eq!(err.offset(), at + 4, "{err}");
    assert!(std::error::Error::source(&err).is_some());

    // a mismatch deep inside the serde value: {"Pair": [7, {"Held": 5}]}
    let err = from_slice::<Event>(b"\x81\xa4Pair\x92\x07\x81\xa4Held\x05").unwrap_err();
    assert_eq!(err.pointer(), "/Pair/1");
    assert!(
        err.detail().unwrap().contains("invalid type: integer `5`"),
        "{err}"
    );

    // serde's own complaint: {"id": 1, "line": {"sku": "a"}}
    let err = from_slice::<Sparse>(b"\x82\xa2id\x01\xa4line\x81\xa3sku\xa1a").unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::Custom);
    assert_eq!(err.pointer(), "/line");
    assert!(
        err.detail().unwrap().contains("missing field `quantity`"),
        "{err}"
    );

    // invalid UTF-8 inside the serde value
    value = to_vec(&Sparse {
        id: 1,
        line: Some(line("ab", 1)),
    })
    .unwrap();
    let at = value.windows(3).position(|w| w == b"\xa2ab").unwrap();
    value[at + 1] = 0xff;
    let err = from_slice::<Sparse>(&value).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::InvalidUtf8, "{err}");
    assert_eq!(err.pointer(), "/line");
}

#[test]
fn deep_nesting_is_bounded_by_the_readers_limit() {
    let ok = Deep { nest: nest(100) };
    assert_eq!(from_slice::<Deep>(&to_vec(&ok).unwrap()).unwrap(), ok);

    // 100 000 arrays deep: refused before serde recurses.
    let mut bytes = b"\x81\xa4nest".to_vec();
    bytes.extend(std::iter::repeat_n(0x91, 100_000));
    bytes.push(0x90);
    let err = from_slice::<Deep>(&bytes).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::DepthLimitExceeded);
    assert_eq!(err.pointer(), "/nest");

    // The levels around the field count: `/inner/0/nest` of a `Holder` starts
    // three levels down (Holder, the Vec, Deep).
    let limits = DecodeLimits::default().max_depth(8);
    let fits = Holder {
        inner: vec![Deep { nest: nest(4) }],
    };
    let bytes = to_vec(&fits).unwrap();
    assert_eq!(
        from_slice_with_limits::<Holder>(&bytes, limits).unwrap(),
        fits
    );
    let deeper = to_vec(&Holder {
        inner: vec![Deep { nest: nest(5) }],
    })
    .unwrap();
    let err = from_slice_with_limits::<Holder>(&deeper, limits).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::DepthLimitExceeded);
    assert_eq!(err.pointer(), "/inner/0/nest");
}

#[test]
fn declared_lengths_and_budgets_hold() {
    // {"nest": [4 294 967 295 × …]}: a length the input cannot hold.
    let err = from_slice::<Deep>(b"\x81\xa4nest\xdd\xff\xff\xff\xff\x90").unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::LengthOverflow);
    assert_eq!(err.pointer(), "/nest");

    let bytes = to_vec(&Deep {
        nest: Nest(vec![nest(0), nest(0), nest(0)]),
    })
    .unwrap();
    let limits = DecodeLimits::default().max_collection_len(2);
    let err = from_slice_with_limits::<Deep>(&bytes, limits).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::LengthOverflow);

    let bytes = to_vec(&envelope()).unwrap();
    let limits = DecodeLimits::default().max_alloc_bytes(16);
    let err = from_slice_with_limits::<Envelope>(&bytes, limits).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::AllocLimitExceeded);

    // The reserved marker inside a serde value.
    let err = from_slice::<Deep>(b"\x81\xa4nest\x91\xc1").unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::InvalidMarker(0xc1));
}

// ---- properties ------------------------------------------------------------

fn legacy_line() -> impl Strategy<Value = LegacyLine> {
    (
        "[a-z]{0,40}",
        any::<u32>(),
        proptest::option::of(any::<f64>().prop_filter("NaN != NaN", |f| !f.is_nan())),
    )
        .prop_map(|(sku, quantity, price)| LegacyLine {
            sku,
            quantity,
            price,
        })
}

fn legacy_status() -> impl Strategy<Value = LegacyStatus> {
    prop_oneof![
        Just(LegacyStatus::Open),
        ".{0,10}".prop_map(LegacyStatus::Held),
        (any::<u8>(), any::<u8>()).prop_map(|(a, b)| LegacyStatus::Moved(a, b)),
        (any::<u64>(), proptest::option::of(".{0,5}"))
            .prop_map(|(at, reason)| LegacyStatus::Closed { at, reason }),
    ]
}

fn legacy_order() -> impl Strategy<Value = LegacyOrder> {
    (
        any::<u64>(),
        proptest::collection::vec(legacy_line(), 0..4),
        legacy_status(),
        proptest::collection::btree_map(".{0,6}", any::<i64>(), 0..4),
        proptest::collection::vec(any::<u8>(), 0..40),
    )
        .prop_map(|(id, lines, status, attributes, blob)| LegacyOrder {
            id,
            lines,
            status,
            attributes,
            blob,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn envelopes_round_trip_and_match_rmp_serde(
        id in any::<u64>(),
        order in legacy_order(),
        previous in proptest::option::of(legacy_order()),
        by_sku in proptest::collection::hash_map(".{0,6}", legacy_line(), 0..3),
    ) {
        let value = Envelope { id, order, previous, by_sku, trailer: String::new() };
        let ours = to_vec(&value).unwrap();
        prop_assert_eq!(&ours, &rmp_serde::to_vec_named(&value).unwrap());
        prop_assert_eq!(&from_slice::<Envelope>(&ours).unwrap(), &value);
        prop_assert_eq!(&rmp_serde::from_slice::<Envelope>(&ours).unwrap(), &value);
    }

    #[test]
    fn events_round_trip_and_match_rmp_serde(
        id in any::<u64>(),
        from in legacy_status(),
        to in proptest::option::of(legacy_status()),
    ) {
        let value = Event::Changed { id, from, to };
        let ours = to_vec(&value).unwrap();
        prop_assert_eq!(&ours, &rmp_serde::to_vec_named(&value).unwrap());
        prop_assert_eq!(&from_slice::<Event>(&ours).unwrap(), &value);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = from_slice::<Envelope>(&bytes);
        let _ = from_slice::<Event>(&bytes);
        let _ = from_slice::<Holder>(&bytes);
    }

    #[test]
    fn mutated_values_never_panic(
        order in legacy_order(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = to_vec(&Event::Placed(order)).unwrap();
        for (i, b) in flips {
            let i = i.index(bytes.len());
            bytes[i] = b;
        }
        let _ = from_slice::<Event>(&bytes);
    }
}
