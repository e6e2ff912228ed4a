//! Sequences of flat values (`Encode::FLAT`: floats, booleans, and
//! tuples, arrays and derived structs made only of them) are written with
//! byte shuffles. Their bytes are rmp-serde's, and the same as written
//! one element at a time, for every length (the last elements are read
//! from a copy), appended to what the buffer holds, in every layout.

use std::collections::VecDeque;
use std::fmt::Debug;

use codecbus_core::{Encode, MessageCodec, Writer, encode_into, from_slice, to_vec};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[codec(as_array)]
struct Point {
    x: f32,
    y: f32,
    z: f32,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[codec(as_array)]
struct Triangle {
    a: Point,
    b: Point,
    c: Point,
    normal: Point,
}

/// Named, in the default map layout: its keys are constant bytes.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Sample {
    at: f64,
    ok: bool,
    level: f32,
    seen: bool,
    flags: [bool; 2],
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Meters(f64);

#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Pair(f32, [f32; 2]);

/// Padding after `ok`: not flat.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[codec(as_array)]
struct Padded {
    at: f64,
    ok: bool,
}

/// An integer has forms of several lengths: not flat.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[codec(as_array)]
struct Counted {
    x: f32,
    n: u32,
}

/// A skipped field's bytes are not written: not flat.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Default)]
#[codec(as_array)]
struct Skipping {
    x: f32,
    #[codec(skip)]
    #[serde(skip)]
    cache: f32,
}

/// Larger than a flat value may be (64 bytes): not flat.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[codec(as_array)]
struct Large {
    a: [f64; 4],
    b: [f64; 4],
    c: f64,
}

#[test]
fn flat_types_are_those_whose_every_byte_is_a_field_of_one_form() {
    assert!(f32::FLAT.is_some() && f64::FLAT.is_some() && bool::FLAT.is_some());
    assert!(Point::FLAT.is_some());
    assert!(Triangle::FLAT.is_some());
    assert!(Sample::FLAT.is_some());
    assert!(Meters::FLAT.is_some());
    assert!(Pair::FLAT.is_some());
    assert!(<(f32, f32)>::FLAT.is_some());
    assert!(<(f32, bool)>::FLAT.is_none());
    assert!(<[f32; 3]>::FLAT.is_some());
    assert!(Padded::FLAT.is_none());
    assert!(Counted::FLAT.is_none());
    assert!(Skipping::FLAT.is_none());
    assert!(Large::FLAT.is_none());
    assert!(<[f32; 0]>::FLAT.is_none());
    assert!(<(f64, bool)>::FLAT.is_none());
    assert!(u8::FLAT.is_none() && String::FLAT.is_none());
}

/// Our bytes are rmp-serde's (`named`: maps, as `to_vec_named`), the same as each
/// element written alone after the header, alone and appended to a buffer
/// that keeps what it held; and they read back.
fn agrees<T>(items: &[T], named: bool) -> Result<(), TestCaseError>
where
    T: MessageCodec + Serialize + DeserializeOwned + PartialEq + Debug + Clone,
{
    let value = items.to_vec();
    let ours = to_vec(&value).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let theirs = if named {
        rmp_serde::to_vec_named(&value)
    } else {
        rmp_serde::to_vec(&value)
    }
    .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&ours, &theirs);
    let mut one_by_one = Writer::new();
    one_by_one
        .write_array_len(items.len())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    for item in items {
        item.encode(&mut one_by_one)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
    prop_assert_eq!(&ours[..], one_by_one.as_slice());
    let mut buf = b"kept".to_vec();
    encode_into(&value, &mut buf).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&buf[..4], b"kept");
    prop_assert_eq!(&buf[4..], &ours[..]);
    let back: Vec<T> = from_slice(&ours).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&back, &value);
    // A deque whose elements lie in one slice, and one that wraps around.
    let mut deque: VecDeque<T> = value.iter().cloned().collect();
    prop_assert_eq!(
        &to_vec(&deque).map_err(|e| TestCaseError::fail(e.to_string()))?,
        &ours
    );
    if let Some(first) = deque.pop_front() {
        deque.push_back(first);
        deque.rotate_right(1);
        prop_assert_eq!(
            &to_vec(&deque).map_err(|e| TestCaseError::fail(e.to_string()))?,
            &ours
        );
    }
    Ok(())
}

/// Every bit pattern: NaNs keep their payloads, as rmp-serde writes them.
fn f32_bits() -> impl Strategy<Value = f32> {
    any::<u32>().prop_map(f32::from_bits)
}

fn point() -> impl Strategy<Value = Point> {
    (f32_bits(), f32_bits(), f32_bits()).prop_map(|(x, y, z)| Point { x, y, z })
}

/// `PartialEq` on bits, so that NaNs compare.
fn same_bits<T: Serialize>(a: &T, b: &T) -> bool {
    rmp_serde::to_vec(a).ok() == rmp_serde::to_vec(b).ok()
}

proptest! {
    #[test]
    fn sequences_of_flat_values_are_written_as_one_by_one(
        points in proptest::collection::vec(point().prop_filter("NaN", |p| same_bits(p, p) && !p.x.is_nan() && !p.y.is_nan() && !p.z.is_nan()), 0..40),
        triangles in proptest::collection::vec(
            (point(), point(), point(), point())
                .prop_filter("NaN", |t| ![t.0, t.1, t.2, t.3].iter().any(|p| p.x.is_nan() || p.y.is_nan() || p.z.is_nan()))
                .prop_map(|(a, b, c, normal)| Triangle { a, b, c, normal }),
            0..12,
        ),
        samples in proptest::collection::vec(
            (any::<f64>(), any::<bool>(), any::<f32>(), any::<bool>(), any::<[bool; 2]>())
                .prop_filter("NaN", |s| !s.0.is_nan() && !s.2.is_nan())
                .prop_map(|(at, ok, level, seen, flags)| Sample { at, ok, level, seen, flags }),
            0..20,
        ),
        meters in proptest::collection::vec(any::<f64>().prop_filter("NaN", |v| !v.is_nan()).prop_map(Meters), 0..30),
        pairs in proptest::collection::vec(
            (any::<f32>(), any::<[f32; 2]>()).prop_filter("NaN", |p| !p.0.is_nan() && !p.1.iter().any(|v| v.is_nan())).prop_map(|(a, b)| Pair(a, b)),
            0..30,
        ),
        floats in proptest::collection::vec(any::<f32>().prop_filter("NaN", |v| !v.is_nan()), 0..100),
        doubles in proptest::collection::vec(any::<f64>().prop_filter("NaN", |v| !v.is_nan()), 0..60),
        flags in proptest::collection::vec(any::<bool>(), 0..200),
        tuples in proptest::collection::vec((any::<bool>(), any::<bool>()), 0..50),
        arrays in proptest::collection::vec(any::<[f64; 2]>().prop_filter("NaN", |a| !a.iter().any(|v| v.is_nan())), 0..30),
    ) {
        agrees(&points, false)?;
        agrees(&triangles, false)?;
        agrees(&samples, true)?;
        agrees(&meters, false)?;
        agrees(&pairs, false)?;
        agrees(&floats, false)?;
        agrees(&doubles, false)?;
        agrees(&flags, false)?;
        agrees(&tuples, false)?;
        agrees(&arrays, false)?;
    }

    #[test]
    fn nan_payloads_are_written_as_they_are(bits in proptest::collection::vec(any::<u32>(), 0..60)) {
        let floats: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
        let ours = to_vec(&floats).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let theirs = rmp_serde::to_vec(&floats).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(ours, theirs);
    }
}

/// Types that are not flat go the usual way, with the same bytes.
#[test]
fn sequences_of_other_values_are_written_as_before() {
    let padded: Vec<Padded> = (0..50)
        .map(|i| Padded {
            at: f64::from(i),
            ok: i % 2 == 0,
        })
        .collect();
    assert_eq!(
        to_vec(&padded).unwrap(),
        rmp_serde::to_vec(&padded).unwrap()
    );
    let counted: Vec<Counted> = (0..50)
        .map(|i| Counted {
            x: i as f32,
            n: i * 1000,
        })
        .collect();
    assert_eq!(
        to_vec(&counted).unwrap(),
        rmp_serde::to_vec(&counted).unwrap()
    );
    let skipping: Vec<Skipping> = (0..50)
        .map(|i| Skipping {
            x: i as f32,
            cache: 7.0,
        })
        .collect();
    assert_eq!(
        to_vec(&skipping).unwrap(),
        rmp_serde::to_vec(&skipping).unwrap()
    );
    let large: Vec<Large> = (0..10)
        .map(|i| Large {
            a: [f64::from(i); 4],
            b: [0.5; 4],
            c: -1.0,
        })
        .collect();
    assert_eq!(to_vec(&large).unwrap(), rmp_serde::to_vec(&large).unwrap());
}

/// A hand-written codec that claims another type's form (`FLAT` is not
/// part of the API) is written the usual way: the form's size is not its.
struct Liar(u8);

impl Encode for Liar {
    const FLAT: Option<codecbus_core::__private::Flat> = <f64 as Encode>::FLAT;

    fn encode(&self, w: &mut Writer) -> Result<(), codecbus_core::EncodeError> {
        w.write_u64(u64::from(self.0));
        Ok(())
    }
}

#[test]
fn a_form_of_another_size_is_not_used() {
    let liars: Vec<Liar> = (0..100).map(Liar).collect();
    let numbers: Vec<u8> = (0..100).collect();
    assert_eq!(to_vec(&liars).unwrap(), to_vec(&numbers).unwrap());
}
