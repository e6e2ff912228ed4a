//! Malformed input: every failure is an error of a distinct kind with a
//! position and a path, never a panic or an oversized allocation.

use std::collections::BTreeMap;

use codecbus_core::{
    DecodeErrorKind, DecodeLimits, MessageCodec, from_slice, from_slice_with_limits, to_vec,
};
use proptest::prelude::*;

#[test]
fn truncation_at_every_byte() {
    let value: (String, Vec<i64>, BTreeMap<String, f64>) = (
        "select * from cars".into(),
        vec![2005, -2, 1 << 40],
        [("a".to_string(), 1.5), ("b".to_string(), -0.25)].into(),
    );
    let bytes = to_vec(&value).unwrap();
    for cut in 0..bytes.len() {
        let err =
            from_slice::<(String, Vec<i64>, BTreeMap<String, f64>)>(&bytes[..cut]).unwrap_err();
        assert!(
            matches!(
                err.kind(),
                DecodeErrorKind::Truncated | DecodeErrorKind::LengthOverflow
            ),
            "cut at {cut}: {err}"
        );
    }
}

#[test]
fn huge_declared_lengths_fail_before_allocating() {
    let cases: &[(&str, &[u8])] = &[
        ("str32", &[0xdb, 0xff, 0xff, 0xff, 0xff, b'a']),
        ("bin32", &[0xc6, 0xff, 0xff, 0xff, 0xff, 1, 2]),
        ("array32", &[0xdd, 0xff, 0xff, 0xff, 0xff, 1, 2, 3]),
        ("map32", &[0xdf, 0xff, 0xff, 0xff, 0xff, 1, 2, 3]),
        ("ext32", &[0xc9, 0xff, 0xff, 0xff, 0xff, 5, 1]),
    ];
    for (name, bytes) in cases {
        let err = match *name {
            "str32" => from_slice::<String>(bytes).unwrap_err(),
            "bin32" => from_slice::<codecbus_core::ext::Bytes>(bytes).unwrap_err(),
            "array32" => from_slice::<Vec<u8>>(bytes).unwrap_err(),
            "map32" => from_slice::<BTreeMap<u8, u8>>(bytes).unwrap_err(),
            _ => from_slice::<codecbus_core::ext::Ext>(bytes).unwrap_err(),
        };
        assert_eq!(err.kind(), DecodeErrorKind::LengthOverflow, "{name}: {err}");
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let mut bytes = vec![0x91; 100_000];
    bytes.push(0x01);
    type Deep = Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<u8>>>>>>>>;
    let limits = DecodeLimits::default().max_depth(4);
    let err = from_slice_with_limits::<Deep>(&bytes, limits).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::DepthLimitExceeded);
    // skipping is iterative: a 100 000-deep value is skipped without recursion
    let mut r = codecbus_core::Reader::new(&bytes);
    r.skip_value().unwrap();
    assert!(r.is_empty());
}

#[test]
fn limits_are_configurable() {
    let bytes = to_vec(&vec![1u8; 100]).unwrap();
    let err =
        from_slice_with_limits::<Vec<u8>>(&bytes, DecodeLimits::default().max_collection_len(99))
            .unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::LengthOverflow);
    let bytes = to_vec(&"x".repeat(100)).unwrap();
    let err = from_slice_with_limits::<String>(&bytes, DecodeLimits::default().max_alloc_bytes(50))
        .unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::AllocLimitExceeded);
}

#[test]
fn each_failure_has_its_own_kind() {
    assert_eq!(
        from_slice::<String>(&[0xa2, 0xff, 0xfe])
            .unwrap_err()
            .kind(),
        DecodeErrorKind::InvalidUtf8
    );
    assert_eq!(
        from_slice::<u8>(&[0xcd, 0x01, 0x00]).unwrap_err().kind(),
        DecodeErrorKind::IntegerOutOfRange { target: "u8" }
    );
    assert_eq!(
        from_slice::<u32>(&[0xff]).unwrap_err().kind(),
        DecodeErrorKind::IntegerOutOfRange { target: "u32" }
    );
    assert_eq!(
        from_slice::<bool>(&[0xa1, b'x']).unwrap_err().kind(),
        DecodeErrorKind::TypeMismatch {
            expected: "boolean",
            found: "string"
        }
    );
    assert_eq!(
        from_slice::<u8>(&[0xc1]).unwrap_err().kind(),
        DecodeErrorKind::InvalidMarker(0xc1)
    );
    assert_eq!(
        from_slice::<u8>(&[0x01, 0x02]).unwrap_err().kind(),
        DecodeErrorKind::TrailingBytes(1)
    );
    assert_eq!(
        from_slice::<(u8, u8)>(&[0x93, 1, 2, 3]).unwrap_err().kind(),
        DecodeErrorKind::WrongLength {
            expected: 2,
            found: 3
        }
    );
    assert_eq!(
        from_slice::<char>(&[0xa2, b'a', b'b']).unwrap_err().kind(),
        DecodeErrorKind::InvalidValue("expected a string of exactly one character")
    );
    assert_eq!(
        from_slice::<u8>(&[]).unwrap_err().kind(),
        DecodeErrorKind::Truncated
    );
}

#[test]
fn integers_one_past_each_range() {
    assert!(from_slice::<u8>(&to_vec(&256u16).unwrap()).is_err());
    assert!(from_slice::<i8>(&to_vec(&128i16).unwrap()).is_err());
    assert!(from_slice::<i8>(&to_vec(&-129i16).unwrap()).is_err());
    assert!(from_slice::<u16>(&to_vec(&65_536u32).unwrap()).is_err());
    assert!(from_slice::<i16>(&to_vec(&32_768i32).unwrap()).is_err());
    assert!(from_slice::<i16>(&to_vec(&-32_769i32).unwrap()).is_err());
    assert!(from_slice::<u32>(&to_vec(&(1u64 << 32)).unwrap()).is_err());
    assert!(from_slice::<i32>(&to_vec(&(1i64 << 31)).unwrap()).is_err());
    assert!(from_slice::<i32>(&to_vec(&(-(1i64 << 31) - 1)).unwrap()).is_err());
    assert!(from_slice::<i64>(&to_vec(&(i64::MAX as u64 + 1)).unwrap()).is_err());
    assert!(from_slice::<u64>(&to_vec(&-1i64).unwrap()).is_err());
}

#[test]
fn errors_carry_the_path() {
    let bytes = to_vec(&vec![vec![1u16], vec![2, 300]]).unwrap();
    let err = from_slice::<Vec<Vec<u8>>>(&bytes).unwrap_err();
    assert_eq!(err.pointer(), "/1/1");
    let map: BTreeMap<String, Vec<i32>> = [("price".to_string(), vec![1, -1])].into();
    let err = from_slice::<BTreeMap<String, Vec<u32>>>(&to_vec(&map).unwrap()).unwrap_err();
    assert_eq!(err.pointer(), "/price/1");
    assert!(err.to_string().contains("at `/price/1`"), "{err}");
}

fn never_panics<T: MessageCodec>(bytes: &[u8]) {
    let _ = from_slice::<T>(bytes);
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        never_panics::<Vec<(String, Option<i64>)>>(&bytes);
        never_panics::<BTreeMap<String, Vec<f32>>>(&bytes);
        never_panics::<(bool, char, u128, codecbus_core::ext::Timestamp, codecbus_core::ext::Ext)>(&bytes);
        never_panics::<std::collections::HashSet<codecbus_core::ext::Bytes>>(&bytes);
        never_panics::<std::time::SystemTime>(&bytes);
        never_panics::<imbl::Vector<Option<Box<u8>>>>(&bytes);
        let mut r = codecbus_core::Reader::new(&bytes);
        let _ = r.skip_value();
    }
}

/// `v` in every MessagePack integer form that can hold it, not only the
/// smallest (other encoders write wider forms).
fn int_forms(v: i128) -> Vec<Vec<u8>> {
    let mut forms = Vec::new();
    if (0..=0x7f).contains(&v) {
        forms.push(vec![v as u8]);
    }
    if (-32..0).contains(&v) {
        forms.push(vec![v as i8 as u8]);
    }
    let mut push = |marker: u8, fits: bool, bytes: &[u8]| {
        if fits {
            let mut f = vec![marker];
            f.extend_from_slice(bytes);
            forms.push(f);
        }
    };
    push(0xcc, (0..=0xff).contains(&v), &(v as u8).to_be_bytes());
    push(0xcd, (0..=0xffff).contains(&v), &(v as u16).to_be_bytes());
    push(
        0xce,
        (0..=0xffff_ffff).contains(&v),
        &(v as u32).to_be_bytes(),
    );
    push(
        0xcf,
        (0..=u64::MAX as i128).contains(&v),
        &(v as u64).to_be_bytes(),
    );
    push(0xd0, (-128..=127).contains(&v), &(v as i8).to_be_bytes());
    push(
        0xd1,
        (-32768..=32767).contains(&v),
        &(v as i16).to_be_bytes(),
    );
    push(
        0xd2,
        (i32::MIN as i128..=i32::MAX as i128).contains(&v),
        &(v as i32).to_be_bytes(),
    );
    push(
        0xd3,
        (i64::MIN as i128..=i64::MAX as i128).contains(&v),
        &(v as i64).to_be_bytes(),
    );
    forms
}

proptest! {
    /// Every integer type reads every form of every value as `try_from`
    /// says: the value where it fits, `IntegerOutOfRange` where it does not
    /// (the common forms are read inline, the others out of line).
    #[test]
    fn integers_narrow_in_every_form(
        v in prop_oneof![
            any::<u64>().prop_map(i128::from),
            any::<i64>().prop_map(i128::from),
            (0u64..70_000).prop_map(i128::from),
            (-40_000i64..200).prop_map(i128::from),
        ]
    ) {
        for form in int_forms(v) {
            macro_rules! check {
                ($($ty:ty),*) => {$(
                    let read = codecbus_core::from_slice::<$ty>(&form);
                    match <$ty>::try_from(v) {
                        Ok(expected) => prop_assert_eq!(read.unwrap(), expected, "{:x?}", form),
                        Err(_) => prop_assert!(
                            matches!(
                                read.unwrap_err().kind(),
                                DecodeErrorKind::IntegerOutOfRange { .. }
                            ),
                            "{:x?} as {}", form, stringify!($ty)
                        ),
                    }
                    // Cut short anywhere: an error, never a panic.
                    for cut in 0..form.len() {
                        prop_assert!(codecbus_core::from_slice::<$ty>(&form[..cut]).is_err());
                    }
                )*};
            }
            check!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);
        }
    }
}
