//! Values whose every form has one length (`Decode::FIXED_LEN`: floats,
//! booleans, tuples and positional structs of them) are read with one
//! bounds check when the input holds exactly their form. Any other input
//! (a map, a wider float, a wrong marker, too few bytes, too deep) takes
//! the usual path: the same values, the same errors.

use codecbus_core::{
    Decode, DecodeErrorKind, DecodeLimits, MessageCodec, from_slice, from_slice_with_limits, to_vec,
};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[codec(as_array)]
struct V3 {
    x: f32,
    y: f32,
    z: f32,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Face(V3, V3, bool, (f64, f32));

fn v3() -> impl Strategy<Value = V3> {
    let f = any::<f32>().prop_filter("NaN", |v| !v.is_nan());
    (f.clone(), f.clone(), f).prop_map(|(x, y, z)| V3 { x, y, z })
}

fn face() -> impl Strategy<Value = Face> {
    let f = any::<f64>().prop_filter("NaN", |v| !v.is_nan());
    let g = any::<f32>().prop_filter("NaN", |v| !v.is_nan());
    (v3(), v3(), any::<bool>(), f, g).prop_map(|(a, b, c, d, e)| Face(a, b, c, (d, e)))
}

#[test]
fn the_lengths_are_known_at_compile_time() {
    assert_eq!(<V3 as Decode<'_>>::FIXED_LEN, Some(16));
    assert_eq!(<Face as Decode<'_>>::FIXED_LEN, Some(1 + 16 + 16 + 1 + 15));
    assert_eq!(<(u8, f32) as Decode<'_>>::FIXED_LEN, None);
    assert_eq!(<String as Decode<'_>>::FIXED_LEN, None);
}

proptest! {
    /// Read back alone and in a `Vec`; rmp-serde's positional bytes are
    /// ours, and its named ones (maps) read the same.
    #[test]
    fn fixed_values_read_as_the_usual_path(faces in proptest::collection::vec(face(), 0..50)) {
        let ours = to_vec(&faces).unwrap();
        prop_assert_eq!(&ours, &rmp_serde::to_vec(&faces).unwrap());
        prop_assert_eq!(&from_slice::<Vec<Face>>(&ours).unwrap(), &faces);
        let named = rmp_serde::to_vec_named(&faces).unwrap();
        prop_assert_eq!(&from_slice::<Vec<Face>>(&named).unwrap(), &faces);
        for face in &faces {
            prop_assert_eq!(&from_slice::<Face>(&to_vec(face).unwrap()).unwrap(), face);
        }
    }

    /// Every prefix of a valid input is an error, never a panic or a value.
    #[test]
    fn a_cut_input_is_an_error(face in face()) {
        let bytes = to_vec(&vec![face]).unwrap();
        for end in 0..bytes.len() {
            prop_assert!(from_slice::<Vec<Face>>(&bytes[..end]).is_err());
        }
    }
}

/// A float in its wider form and an integer where a float is expected are
/// read by the usual path; a wrong marker is its type error.
#[test]
fn other_forms_take_the_usual_path() {
    let v = V3 {
        x: 1.5,
        y: -2.0,
        z: 0.25,
    };
    // x as a float 64: not the fixed form.
    let mut wide = vec![0x93, 0xcb];
    wide.extend_from_slice(&1.5f64.to_be_bytes());
    wide.extend_from_slice(&to_vec(&-2.0f32).unwrap());
    wide.extend_from_slice(&to_vec(&0.25f32).unwrap());
    assert_eq!(from_slice::<V3>(&wide).unwrap(), v);

    let mut bytes = to_vec(&v).unwrap();
    bytes[6] = 0xc0; // y's marker: nil
    let e = from_slice::<V3>(&bytes).unwrap_err();
    assert_eq!(e.pointer(), "/y");
    assert!(
        matches!(e.kind(), DecodeErrorKind::TypeMismatch { .. }),
        "{e}"
    );
}

/// The depth limit holds for values read with one bounds check.
#[test]
fn the_depth_limit_holds() {
    let face = Face(
        V3 {
            x: 0.0,
            y: 1.0,
            z: 2.0,
        },
        V3 {
            x: 3.0,
            y: 4.0,
            z: 5.0,
        },
        true,
        (6.0, 7.0),
    );
    let bytes = to_vec(&vec![face.clone()]).unwrap();
    // The Vec, the Face and its V3s: three levels.
    let e = from_slice_with_limits::<Vec<Face>>(&bytes, DecodeLimits::default().max_depth(2))
        .unwrap_err();
    assert_eq!(e.kind(), DecodeErrorKind::DepthLimitExceeded);
    let ok = from_slice_with_limits::<Vec<Face>>(&bytes, DecodeLimits::default().max_depth(3));
    assert_eq!(ok.unwrap(), vec![face]);
}

proptest! {
    /// A sequence of fixed-length elements is read with one bounds check
    /// until an element is in another form; from there one by one, with
    /// the same values and the same errors at the same index.
    #[test]
    fn sequences_read_in_their_forms_and_others(
        floats in proptest::collection::vec(any::<f32>().prop_filter("NaN", |v| !v.is_nan()), 1..40),
        flags in proptest::collection::vec(any::<bool>(), 1..40),
        wide in any::<prop::sample::Index>(),
    ) {
        // One float written in its 64-bit form.
        let at = wide.index(floats.len());
        let mut bytes = codecbus_core::Writer::new();
        bytes.write_array_len(floats.len()).unwrap();
        for (i, &v) in floats.iter().enumerate() {
            if i == at { bytes.write_f64(f64::from(v)) } else { bytes.write_f32(v) }
        }
        prop_assert_eq!(&from_slice::<Vec<f32>>(bytes.as_slice()).unwrap(), &floats);

        // A nil among booleans: the error names its index.
        let at = wide.index(flags.len());
        let mut bytes = to_vec(&flags).unwrap();
        let header = bytes.len() - flags.len();
        bytes[header + at] = 0xc0;
        let e = from_slice::<Vec<bool>>(&bytes).unwrap_err();
        prop_assert_eq!(e.pointer(), format!("/{at}"));
        for end in 0..bytes.len() {
            prop_assert!(from_slice::<Vec<bool>>(&to_vec(&flags).unwrap()[..end]).is_err());
        }
    }
}
