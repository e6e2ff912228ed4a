//! Round-trip properties for every built-in type, and byte-for-byte
//! agreement with `rmp-serde` for primitives, strings, collections and
//! `Option` (both directions: each side decodes the other's bytes).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fmt::Debug;
use std::sync::Arc;

use codecbus_core::{MessageCodec, from_slice, to_vec};
use proptest::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

fn round_trip<T: MessageCodec + PartialEq + Debug>(value: &T) -> Result<(), TestCaseError> {
    let bytes = to_vec(value).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back: T = from_slice(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&back, value);
    Ok(())
}

fn agrees<T>(value: &T) -> Result<(), TestCaseError>
where
    T: MessageCodec + Serialize + DeserializeOwned + PartialEq + Debug,
{
    let ours = to_vec(value).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let theirs = rmp_serde::to_vec_named(value).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&ours, &theirs, "bytes differ for {:?}", value);
    let from_theirs: T = from_slice(&theirs).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&from_theirs, value);
    let from_ours: T =
        rmp_serde::from_slice(&ours).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&from_ours, value);
    Ok(())
}

proptest! {
    #[test]
    fn integers_agree(a: u8, b: u16, c: u32, d: u64, e: i8, f: i16, g: i32, h: i64, i: usize, j: isize) {
        agrees(&a)?; agrees(&b)?; agrees(&c)?; agrees(&d)?; agrees(&e)?;
        agrees(&f)?; agrees(&g)?; agrees(&h)?; agrees(&i)?; agrees(&j)?;
    }

    #[test]
    fn floats_round_trip_bit_exact(a: f32, b: f64) {
        let back: f32 = from_slice(&to_vec(&a).unwrap()).unwrap();
        prop_assert_eq!(back.to_bits(), a.to_bits());
        let back: f64 = from_slice(&to_vec(&b).unwrap()).unwrap();
        prop_assert_eq!(back.to_bits(), b.to_bits());
        prop_assert_eq!(to_vec(&a).unwrap(), rmp_serde::to_vec(&a).unwrap());
        prop_assert_eq!(to_vec(&b).unwrap(), rmp_serde::to_vec(&b).unwrap());
    }

    #[test]
    fn strings_and_chars_agree(s: String, c: char, b: bool) {
        agrees(&s)?; agrees(&c)?; agrees(&b)?;
        round_trip(&Box::<str>::from(s.as_str()))?;
        round_trip(&Arc::<str>::from(s.as_str()))?;
    }

    #[test]
    fn options_and_tuples_agree(a: Option<i32>, b: (u8, String, bool), c: Option<(i64, f64)>) {
        agrees(&a)?; agrees(&b)?;
        if c.is_none_or(|(_, f)| !f.is_nan()) {
            agrees(&c)?;
        }
        agrees(&[1u8, 2, 3])?;
    }

    #[test]
    fn collections_agree(
        v: Vec<i64>,
        d: VecDeque<String>,
        m: BTreeMap<String, Vec<u32>>,
        s: BTreeSet<i16>,
        h: HashMap<u32, bool>,
        hs: HashSet<String>,
    ) {
        agrees(&v)?; agrees(&d)?; agrees(&m)?; agrees(&s)?;
        // hash iteration order is the map's own, so compare values, not bytes
        round_trip(&h)?; round_trip(&hs)?;
        let theirs: HashMap<u32, bool> = rmp_serde::from_slice(&to_vec(&h).unwrap()).unwrap();
        prop_assert_eq!(&theirs, &h);
    }

    #[test]
    fn imbl_collections_round_trip(v: Vec<i32>, m: BTreeMap<String, i64>) {
        let vector: imbl::Vector<i32> = v.iter().copied().collect();
        let ordmap: imbl::OrdMap<String, i64> = m.clone().into_iter().collect();
        let hashmap: imbl::HashMap<String, i64> = m.clone().into_iter().collect();
        let ordset: imbl::OrdSet<i32> = v.iter().copied().collect();
        let hashset: imbl::HashSet<i32> = v.iter().copied().collect();
        round_trip(&vector)?; round_trip(&ordmap)?; round_trip(&hashmap)?;
        round_trip(&ordset)?; round_trip(&hashset)?;
        // same layout as the std equivalents
        prop_assert_eq!(to_vec(&vector).unwrap(), to_vec(&v).unwrap());
        prop_assert_eq!(to_vec(&ordmap).unwrap(), to_vec(&m).unwrap());
    }

    #[test]
    fn time_types_round_trip(secs in -(1i64 << 40)..(1i64 << 40), nanos in 0u32..1_000_000_000) {
        let ts = codecbus_core::ext::Timestamp::new(secs, nanos).unwrap();
        round_trip(&ts)?;
        round_trip(&std::time::Duration::new(secs.unsigned_abs(), nanos))?;
        let st = if secs >= 0 {
            std::time::UNIX_EPOCH + std::time::Duration::new(secs as u64, nanos)
        } else {
            std::time::UNIX_EPOCH - std::time::Duration::new(secs.unsigned_abs(), nanos)
        };
        round_trip(&st)?;
    }

    #[test]
    fn bytes_and_ext_round_trip(data: Vec<u8>, type_id: i8) {
        round_trip(&codecbus_core::ext::Bytes(data.clone()))?;
        round_trip(&codecbus_core::ext::Ext { type_id, data: data.clone() })?;
        // `Bytes` and serde_bytes write the same `bin`
        prop_assert_eq!(
            to_vec(&codecbus_core::ext::Bytes(data.clone())).unwrap(),
            rmp_serde::to_vec(&serde_bytes_like(&data)).unwrap()
        );
    }
}

#[cfg(feature = "decimal")]
proptest! {
    #[test]
    fn decimals_round_trip(lo: u32, mid: u32, hi: u32, negative: bool, scale in 0u32..=28) {
        let d = rust_decimal::Decimal::from_parts(lo, mid, hi, negative, scale);
        round_trip(&d)?;
    }
}

#[cfg(feature = "uuid")]
proptest! {
    #[test]
    fn uuids_round_trip(v: u128) {
        round_trip(&uuid::Uuid::from_u128(v))?;
    }
}

/// A `bin` through serde, without depending on `serde_bytes`.
fn serde_bytes_like(data: &[u8]) -> impl Serialize + '_ {
    struct AsBin<'a>(&'a [u8]);
    impl Serialize for AsBin<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }
    AsBin(data)
}

#[test]
fn nan_round_trips_as_nan() {
    let back: f64 = from_slice(&to_vec(&f64::NAN).unwrap()).unwrap();
    assert!(back.is_nan());
    let back: f32 = from_slice(&to_vec(&f32::NAN).unwrap()).unwrap();
    assert!(back.is_nan());
    let back: Vec<f64> =
        from_slice(&to_vec(&vec![f64::INFINITY, f64::NEG_INFINITY]).unwrap()).unwrap();
    assert_eq!(back, [f64::INFINITY, f64::NEG_INFINITY]);
}

#[test]
fn transform_shares_immutable_and_copies_the_rest() {
    let shared = Arc::new(vec![1u32, 2, 3]);
    assert!(Arc::ptr_eq(&shared, &<Vec<u32>>::transform(&shared)));
    let s = Arc::new(String::from("hello"));
    assert!(Arc::ptr_eq(&s, &String::transform(&s)));
}

proptest! {
    /// Sequences of scalars are written a run at a time through the
    /// scalars' bounded writers: the same bytes as rmp-serde's, across run
    /// boundaries (a run is 4 KiB: a few hundred to a few thousand values).
    #[test]
    fn sequences_of_scalars_written_in_runs_agree(
        ints in proptest::collection::vec(any::<i64>(), 0..1500),
        small in proptest::collection::vec(-40i64..300, 0..5000),
        unsigned in proptest::collection::vec(any::<u64>(), 0..1500),
        bytes in proptest::collection::vec(any::<u8>(), 0..5000),
        shorts in proptest::collection::vec(any::<i16>(), 0..3000),
        flags in proptest::collection::vec(any::<bool>(), 0..5000),
        singles in proptest::collection::vec(any::<f32>().prop_filter("NaN", |v| !v.is_nan()), 0..1500),
        doubles in proptest::collection::vec(any::<f64>().prop_filter("NaN", |v| !v.is_nan()), 0..1000),
    ) {
        agrees(&ints)?;
        agrees(&small)?;
        agrees(&unsigned)?;
        agrees(&shorts)?;
        agrees(&flags)?;
        agrees(&singles)?;
        agrees(&doubles)?;
        // `Vec<u8>` without `#[codec(bytes)]` is an array of integers.
        let ours = to_vec(&bytes).unwrap();
        let theirs = rmp_serde::to_vec(&bytes.iter().map(|&b| b as u16).collect::<Vec<_>>()).unwrap();
        prop_assert_eq!(ours, theirs);
        // Appended to what a buffer already holds, which stays.
        let mut buf = b"kept".to_vec();
        codecbus_core::encode_into(&ints, &mut buf).unwrap();
        prop_assert_eq!(&buf[..4], b"kept");
        prop_assert_eq!(&buf[4..], &to_vec(&ints).unwrap()[..]);
    }
}

/// A hand-written codec whose bounded writer writes more than its
/// `MAX_LEN` says: the sequence's encode fails with an error naming the
/// bug, and the buffer keeps what it held; nothing panics, nothing past
/// the run is touched.
#[test]
fn a_bounded_writer_that_overruns_its_bound_is_an_error() {
    use codecbus_core::__private::Run;
    use codecbus_core::{EncodeError, EncodeErrorKind, Writer};

    struct Liar;
    impl codecbus_core::Encode for Liar {
        const MAX_LEN: Option<usize> = Some(2);
        fn encode_bounded(&self, out: &mut Run<'_>) {
            out.put([0xa3, b'a', b'b', b'c']);
        }
        fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
            w.write_str("abc")
        }
    }
    struct Honest;
    impl codecbus_core::Encode for Honest {
        const MAX_LEN: Option<usize> = Some(4);
        fn encode_bounded(&self, out: &mut Run<'_>) {
            out.put([0xa3, b'a', b'b', b'c']);
        }
        fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
            w.write_str("abc")
        }
    }

    for len in [1, 2, 1000, 5000] {
        let mut buf = b"kept".to_vec();
        let liars: Vec<Liar> = (0..len).map(|_| Liar).collect();
        let e = codecbus_core::encode_into(&liars, &mut buf).unwrap_err();
        assert_eq!(e.kind(), EncodeErrorKind::Custom);
        assert!(e.to_string().contains("MAX_LEN"), "{e}");
        assert_eq!(buf, b"kept");

        let honest: Vec<Honest> = (0..len).map(|_| Honest).collect();
        let bytes = to_vec(&honest).unwrap();
        let strings: Vec<&str> = from_slice(&bytes).unwrap();
        assert_eq!(strings, vec!["abc"; len]);
    }
}

/// A `Vec`'s elements are decoded straight into its spare capacity
/// (`Decode::decode_to`). A hand-written `decode_to` that returns another
/// value than its slot is an error: the element is not taken, nothing
/// uninitialized is read.
#[test]
fn a_decode_to_that_returns_another_value_is_an_error() {
    use std::mem::MaybeUninit;

    use codecbus_core::{Decode, DecodeError, Reader};

    #[derive(Debug, PartialEq)]
    struct Elsewhere(u8);
    impl<'de> Decode<'de> for Elsewhere {
        fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
            Ok(Elsewhere(u8::decode(r)?))
        }
        fn decode_to<'s>(
            r: &mut Reader<'de>,
            _slot: &'s mut MaybeUninit<Self>,
        ) -> Result<&'s mut Self, DecodeError> {
            Ok(Box::leak(Box::new(Self::decode(r)?)))
        }
    }
    #[derive(Debug, PartialEq)]
    struct Honest(u8);
    impl<'de> Decode<'de> for Honest {
        fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
            Ok(Honest(u8::decode(r)?))
        }
    }

    let bytes = to_vec(&vec![1u8, 2, 3]).unwrap();
    assert!(from_slice::<Vec<Elsewhere>>(&bytes).is_err());
    assert_eq!(
        from_slice::<Vec<Honest>>(&bytes).unwrap(),
        [Honest(1), Honest(2), Honest(3)]
    );
    // Zero-sized elements are taken by value.
    let units = to_vec(&vec![(); 4]).unwrap();
    assert_eq!(from_slice::<Vec<()>>(&units).unwrap(), vec![(); 4]);
}
