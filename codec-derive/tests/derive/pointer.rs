//! A decode error of a derived type, as its user sees it: the message
//! locates the bad value with a JSON Pointer.

use std::collections::BTreeMap;

use codecbus_core::{MessageCodec, from_slice, to_vec};

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Shipment {
    id: u64,
    parcels: Vec<Parcel>,
    status: Status,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Parcel {
    contents: Vec<Line>,
    labels: BTreeMap<String, String>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Line {
    sku: String,
    qty: u16,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
enum Status {
    Packed,
    Shipped { at: u64 },
}

fn shipment() -> Shipment {
    Shipment {
        id: 7,
        parcels: vec![Parcel {
            contents: vec![Line {
                sku: "tea".into(),
                qty: 2,
            }],
            labels: [("to/from".into(), "x".into())].into(),
        }],
        status: Status::Shipped { at: 1_700_000_000 },
    }
}

/// `bytes` with the first occurrence of `from` replaced by `to`.
fn patched(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let at = bytes
        .windows(from.len())
        .position(|w| w == from)
        .expect("pattern present");
    [&bytes[..at], to, &bytes[at + from.len()..]].concat()
}

#[test]
fn a_derived_type_says_where_its_bad_value_is() {
    let good = to_vec(&shipment()).unwrap();
    assert_eq!(from_slice::<Shipment>(&good).unwrap(), shipment());

    // The first line's quantity written as a string: "qty": "2".
    let bad = patched(&good, b"\xa3qty\x02", b"\xa3qty\xa12");
    let err = from_slice::<Shipment>(&bad).unwrap_err();
    let at = bad.windows(5).position(|w| w == b"\xa3qty\xa1").unwrap() + 4;
    assert_eq!(
        err.to_string(),
        format!("expected integer, found string at `/parcels/0/contents/0/qty` (byte {at})")
    );

    // A label whose key holds a `/`: the value is not a string.
    let bad = patched(&good, b"\xa7to/from\xa1x", b"\xa7to/from\x01");
    let err = from_slice::<Shipment>(&bad).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("expected string, found integer at `/parcels/0/labels/to~1from` "),
        "{err}"
    );

    // The shipping time of the `Shipped` variant, negative.
    let bad = patched(&good, b"\xa2at\xce\x65\x53\xf1\x00", b"\xa2at\xff");
    let err = from_slice::<Shipment>(&bad).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("integer out of range for u64 at `/status/Shipped/at` "),
        "{err}"
    );

    // A label key that is not UTF-8: located at the labels' map.
    let bad = patched(&good, b"\xa7to/from", b"\xa7to\xfffrom");
    let err = from_slice::<Shipment>(&bad).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid UTF-8 in string at `/parcels/0/labels` "),
        "{err}"
    );
}
