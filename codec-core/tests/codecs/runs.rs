//! Derived values written in one run (`Encode::bound`): a struct or enum
//! whose bound is short is written with one capacity check; a longer one
//! field by field. Both write rmp-serde's bytes, on either side of the
//! limit, appended to what the buffer holds.

use std::fmt::Debug;

use codecbus_core::{MessageCodec, Writer, encode_into, from_slice, to_vec};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

#[derive(MessageCodec, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
enum Kind {
    A,
    Medium,
    #[codec(rename = "a_name_of_forty_bytes_which_takes_str8__")]
    #[serde(rename = "a_name_of_forty_bytes_which_takes_str8__")]
    Long,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
enum Event {
    Quiet,
    Said(String),
    Moved { x: i16, y: i16 },
    Tagged(Vec<u16>, Option<Kind>),
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Record {
    id: u32,
    name: String,
    kind: Option<Kind>,
    flags: Vec<bool>,
    angles: Vec<u16>,
    at: (f32, i8),
    corner: [i16; 3],
    note: Option<String>,
    event: Event,
}

/// A tuple struct: an array in both.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Positional(Vec<Kind>, Vec<Record>);

/// Our bytes are rmp-serde's (maps for named fields, as `to_vec_named`),
/// alone and appended to a buffer that keeps what it held, and each side
/// reads the other's.
fn agrees<T>(value: &T) -> Result<(), TestCaseError>
where
    T: MessageCodec + Serialize + DeserializeOwned + PartialEq + Debug,
{
    let ours = to_vec(value).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let theirs = rmp_serde::to_vec_named(value).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&ours, &theirs);
    let mut buf = b"kept".to_vec();
    encode_into(value, &mut buf).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&buf[..4], b"kept");
    prop_assert_eq!(&buf[4..], &ours[..]);
    let back: T = from_slice(&theirs).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&back, value);
    let back: T = rmp_serde::from_slice(&ours).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&back, value);
    Ok(())
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![Just(Kind::A), Just(Kind::Medium), Just(Kind::Long)]
}

/// Strings from empty to beyond a run (4 KiB), with multi-byte characters.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zé]{0,40}",
        proptest::collection::vec(any::<char>(), 0..2000).prop_map(String::from_iter),
    ]
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        Just(Event::Quiet),
        text().prop_map(Event::Said),
        (any::<i16>(), any::<i16>()).prop_map(|(x, y)| Event::Moved { x, y }),
        (
            proptest::collection::vec(any::<u16>(), 0..1500),
            proptest::option::of(kind())
        )
            .prop_map(|(v, k)| Event::Tagged(v, k)),
    ]
}

fn record() -> impl Strategy<Value = Record> {
    (
        any::<u32>(),
        text(),
        proptest::option::of(kind()),
        proptest::collection::vec(any::<bool>(), 0..300),
        proptest::collection::vec(any::<u16>(), 0..40),
        (
            any::<f32>().prop_filter("NaN", |v| !v.is_nan()),
            any::<i8>(),
        ),
        any::<[i16; 3]>(),
        proptest::option::of(text()),
        event(),
    )
        .prop_map(
            |(id, name, kind, flags, angles, at, corner, note, event)| Record {
                id,
                name,
                kind,
                flags,
                angles,
                at,
                corner,
                note,
                event,
            },
        )
}

proptest! {
    #[test]
    fn values_written_in_one_run_or_field_by_field_agree(
        record in record(),
        event in event(),
        kinds in proptest::collection::vec(kind(), 0..100),
        records in proptest::collection::vec(record(), 0..4),
    ) {
        agrees(&record)?;
        agrees(&event)?;
        agrees(&kinds)?;
        agrees(&Positional(kinds, records))?;
    }
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Blob {
    #[codec(bytes)]
    data: Vec<u8>,
    #[codec(bytes)]
    maybe: Option<Vec<u8>>,
}

/// `#[codec(bytes)]` fields, short (one run) and long (field by field),
/// as the writer writes them by hand.
#[test]
fn bytes_fields_are_written_as_bin_in_one_run_or_not() {
    for (len, maybe) in [
        (0, None),
        (3, Some(300)),
        (255, Some(0)),
        (256, None),
        (5000, Some(70_000)),
    ] {
        let blob = Blob {
            data: vec![7; len],
            maybe: maybe.map(|n| vec![9; n]),
        };
        let mut w = Writer::new();
        w.write_map_len(2).unwrap();
        w.write_str("data").unwrap();
        w.write_bin(&blob.data).unwrap();
        w.write_str("maybe").unwrap();
        match &blob.maybe {
            Some(b) => w.write_bin(b).unwrap(),
            None => w.write_nil(),
        }
        let ours = to_vec(&blob).unwrap();
        assert_eq!(ours, w.as_slice(), "{len} {maybe:?}");
        assert_eq!(from_slice::<Blob>(&ours).unwrap(), blob);
    }
}
