//! `Serde<T>`: any serde type as a message body. The bytes are
//! `rmp_serde::to_vec_named`'s, each side decodes the other's, local
//! delivery deep-copies, `serde_codec!` registers it by name, and hostile
//! input gives errors, never a panic.
#![cfg(feature = "serde")]

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::sync::Arc;

use codecbus_core::{
    DecodeErrorKind, DecodeLimits, MessageCodec, Reader, Serde, from_slice, from_slice_with_limits,
    serde_codec, to_vec,
};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
enum Kind {
    Plain,
    Gift(String),
    Split(u8, i16),
    Bundle { of: Vec<u32>, label: Option<String> },
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Line {
    sku: String,
    quantity: u32,
    kind: Kind,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct LegacyOrder {
    id: u64,
    lines: Vec<Line>,
    note: Option<String>,
    totals: BTreeMap<String, f64>,
    flags: (bool, char),
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Wrapper(LegacyOrder);

serde_codec!(LegacyOrder, "test.serde.legacy-order.v1");

fn order(id: u64) -> LegacyOrder {
    LegacyOrder {
        id,
        lines: vec![
            Line {
                sku: "tea".into(),
                quantity: 2,
                kind: Kind::Plain,
            },
            Line {
                sku: "cake".into(),
                quantity: 1,
                kind: Kind::Bundle {
                    of: vec![1, 70_000],
                    label: None,
                },
            },
        ],
        note: Some("ring twice".into()),
        totals: BTreeMap::from([("net".to_owned(), 12.5), ("tax".to_owned(), -0.0)]),
        flags: (true, 'é'),
    }
}

#[track_caller]
fn agree<T>(value: T)
where
    T: Serialize + DeserializeOwned + Clone + PartialEq + Debug,
{
    let body = Serde(value.clone());
    let ours = to_vec(&body).unwrap();
    let theirs = rmp_serde::to_vec_named(&value).unwrap();
    assert_eq!(ours, theirs, "encoding of {value:?}");
    assert_eq!(from_slice::<Serde<T>>(&theirs).unwrap().0, value);
    assert_eq!(rmp_serde::from_slice::<T>(&ours).unwrap(), value);
}

#[test]
fn bytes_are_rmp_serde_named_both_ways() {
    agree(order(1));
    agree(Wrapper(order(u64::MAX)));
    agree(Kind::Plain);
    agree(Kind::Gift("x".repeat(40)));
    agree(Kind::Split(255, -300));
    agree(Kind::Bundle {
        of: (0..20).collect(),
        label: Some(String::new()),
    });
    agree(Some(order(2)));
    agree(None::<LegacyOrder>);
    agree(HashMap::from([(1u16, vec![Some(true), None])]));
    agree(BTreeMap::from([
        ("a".to_owned(), order(3)),
        ("b".to_owned(), order(4)),
    ]));
    agree(vec![(1u8, "x".to_owned()), (2, "y".to_owned())]);
    agree(());
    agree(i64::MIN);
    agree("plain string".to_owned());
}

#[test]
fn local_delivery_is_a_deep_copy() {
    const { assert!(!<Serde<LegacyOrder> as MessageCodec>::IMMUTABLE) };
    let body = Arc::new(Serde(order(5)));
    let copy = Serde::transform(&body);
    assert!(!Arc::ptr_eq(&body, &copy));
    assert_eq!(copy, body);
    assert!(!std::ptr::eq(body.lines.as_ptr(), copy.lines.as_ptr()));
}

#[test]
fn the_registration_decodes_by_name() {
    let reg = codecbus_core::registrations()
        .find(|r| r.name() == "test.serde.legacy-order.v1")
        .expect("registered by serde_codec!");
    assert_eq!(reg.type_id(), std::any::TypeId::of::<Serde<LegacyOrder>>());
    assert!(!reg.is_immutable());

    let mut w = codecbus_core::Writer::new();
    reg.encode(&Serde(order(6)), &mut w).unwrap();
    assert_eq!(w.as_slice(), rmp_serde::to_vec_named(&order(6)).unwrap());
    let body = reg.decode(&mut Reader::new(w.as_slice())).unwrap();
    let copy = reg.transform(&body);
    assert!(!Arc::ptr_eq(&body, &copy));
    let decoded = copy.downcast_ref::<Serde<LegacyOrder>>().unwrap();
    assert_eq!(decoded.0, order(6));
}

#[test]
fn conversions() {
    let body: Serde<u8> = 3.into();
    assert_eq!(*body, 3);
    assert_eq!(body.into_inner(), 3);
    let mut body = Serde(vec![1]);
    body.push(2);
    assert_eq!(body.0, [1, 2]);
}

#[test]
fn hostile_input_gives_errors() {
    let bytes = to_vec(&Serde(order(7))).unwrap();
    for cut in 0..bytes.len() {
        let err = from_slice::<Serde<LegacyOrder>>(&bytes[..cut]).unwrap_err();
        assert!(err.offset() <= cut, "{err}");
    }
    // trailing bytes after a complete value
    let mut long = bytes.clone();
    long.push(0xc0);
    assert_eq!(
        from_slice::<Serde<LegacyOrder>>(&long).unwrap_err().kind(),
        DecodeErrorKind::TrailingBytes(1)
    );
    // the wrong type: a string where the struct belongs
    let err = from_slice::<Serde<LegacyOrder>>(b"\xa3abc").unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::Custom);
    assert!(err.to_string().contains("invalid type: string"), "{err}");
    // a declared length the input cannot hold
    let err = from_slice::<Serde<Vec<u8>>>(b"\xdd\x7f\xff\xff\xff\x01").unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::LengthOverflow);
    let err = from_slice::<Serde<String>>(b"\xdb\xff\xff\xff\xff").unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::LengthOverflow);
    // nesting far past the limit, through a serde type that recurses
    #[derive(Serialize, Deserialize, Clone, Debug)]
    struct Nest(Vec<Nest>);
    let deep = [vec![0x91; 50_000], vec![0x90]].concat();
    let err = from_slice::<Serde<Nest>>(&deep).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::DepthLimitExceeded);
    let limits = DecodeLimits::default().max_depth(3);
    assert!(from_slice_with_limits::<Serde<Nest>>(b"\x91\x91\x90", limits).is_ok());
    let err = from_slice_with_limits::<Serde<Nest>>(b"\x91\x91\x91\x90", limits).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::DepthLimitExceeded);
    assert_eq!(err.offset(), 3);
    // a reserved marker
    assert_eq!(
        from_slice::<Serde<Vec<u8>>>(b"\x91\xc1")
            .unwrap_err()
            .kind(),
        DecodeErrorKind::InvalidMarker(0xc1)
    );
    // an integer out of the target's range
    let err = from_slice::<Serde<u8>>(b"\xcd\x01\x00").unwrap_err();
    assert!(err.to_string().contains("serde"), "{err}");
}

#[test]
fn encode_errors_leave_the_buffer_as_it_was() {
    struct Refuses;
    impl Serialize for Refuses {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("no"))
        }
    }
    // A body whose serde form fails halfway: the map header is written,
    // then the value refuses.
    #[derive(Serialize)]
    struct Half {
        ok: u8,
        bad: Refuses,
    }
    let mut w = codecbus_core::Writer::new();
    w.write_nil();
    let err = codecbus_core::__private::encode_serde(
        &Half {
            ok: 1,
            bad: Refuses,
        },
        &mut w,
    )
    .unwrap_err();
    assert_eq!(err.kind(), codecbus_core::EncodeErrorKind::Custom);
    assert!(err.to_string().contains("no"), "{err}");
    assert_eq!(w.as_slice(), [0xc0]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn values_round_trip_and_match_rmp_serde(
        id in any::<u64>(),
        skus in proptest::collection::vec(".{0,12}", 0..5),
        note in proptest::option::of(".{0,20}"),
        totals in proptest::collection::btree_map("[a-z]{0,4}", any::<f64>().prop_filter("NaN", |f| !f.is_nan()), 0..4),
        flags in (any::<bool>(), any::<char>()),
    ) {
        let value = LegacyOrder {
            id,
            lines: skus.into_iter().enumerate().map(|(i, sku)| Line {
                sku,
                quantity: i as u32,
                kind: match i % 4 {
                    0 => Kind::Plain,
                    1 => Kind::Gift(i.to_string()),
                    2 => Kind::Split(i as u8, -(i as i16)),
                    _ => Kind::Bundle { of: vec![i as u32; i], label: None },
                },
            }).collect(),
            note,
            totals,
            flags,
        };
        let ours = to_vec(&Serde(value.clone())).unwrap();
        prop_assert_eq!(&ours, &rmp_serde::to_vec_named(&value).unwrap());
        prop_assert_eq!(&from_slice::<Serde<LegacyOrder>>(&ours).unwrap().0, &value);
        prop_assert_eq!(&rmp_serde::from_slice::<LegacyOrder>(&ours).unwrap(), &value);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = from_slice::<Serde<LegacyOrder>>(&bytes);
        let _ = from_slice::<Serde<HashMap<String, Vec<Option<i32>>>>>(&bytes);
        let _ = from_slice::<Serde<Kind>>(&bytes);
    }
}
