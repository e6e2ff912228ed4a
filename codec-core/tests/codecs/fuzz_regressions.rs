//! Replays what the fuzz targets in `fuzz/` found, and the hostile inputs the
//! fuzzing plan names, so `cargo test` keeps them fixed. Each input is decoded as the
//! fuzz types it was found with (copied here in small form); a decode must
//! never panic, and where it succeeds the value must re-encode and decode
//! back equal.
//!
//! To add a finding: minimize it (`cargo fuzz tmin <target> <artifact>`),
//! then add its bytes to `FOUND` with the target name and what went wrong.

use std::collections::BTreeMap;
use std::fmt::Debug;

use codecbus_core::{DecodeErrorKind, MessageCodec, from_slice, to_vec};
use codecbus_json::JsValue;

/// The self-recursive newtype (the byte 0x01 crashes rmp-serde 1.3.1 on it).
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct N(Option<Box<N>>);

/// A recursive enum.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
enum Tree {
    Leaf,
    Value(i32),
    Boxed(Box<Tree>),
    Node(Vec<Tree>),
    Pair {
        left: Box<Tree>,
        right: Option<Box<Tree>>,
    },
}

/// An enum with every variant kind.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
enum Status {
    Open,
    Held(String),
    Moved(u32, i64),
    Nothing(),
    Failed { code: u16, reason: Option<String> },
    Blank {},
    Nested(Box<Status>),
}

/// A nested map-mode struct.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Order {
    id: u64,
    #[codec(default)]
    port: u16,
    #[codec(bytes)]
    blob: Vec<u8>,
    attrs: BTreeMap<String, i64>,
    status: Status,
    tree: Tree,
    n: N,
    parent: Option<Box<Order>>,
}

/// The same, positionally.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct OrderArr {
    id: u64,
    status: Status,
    tree: Tree,
    n: N,
    parent: Option<Box<OrderArr>>,
    #[codec(default)]
    port: u16,
}

/// Inputs found by the fuzz targets, as `(target, what happened, bytes)`.
/// The 10-minute runs found no crash in the decoders themselves; the two
/// findings about what the decoders accept are pinned by
/// `json_text_of_the_deepest_msgpack_value` and `n_encodings_collapse_to_nil`.
const FOUND: &[(&str, &str, &[u8])] = &[(
    "decode_json",
    "128 nested arrays decode from MessagePack; their JSON text is refused",
    DEEPEST_JSON,
)];

/// `[[[...[35]...]]]`, 128 arrays deep: the deepest value the MessagePack
/// decoder accepts with default limits (minimized from `decode_json`).
const DEEPEST_JSON: &[u8] = &{
    let mut b = [0x91; 129];
    b[128] = 0x23;
    b
};

/// Inputs that crash other decoders, or sit on limits.
const HOSTILE: &[(&str, &[u8])] = &[
    // Stack overflow in rmp-serde 1.3.1 when decoded as `N`: a positive
    // fixint is not nil, so `Some`, then `N` again, without consuming input.
    ("rmp-serde N crash", &[0x01]),
    ("N crash in an array", &[0x91, 0x01]),
    ("N crash in a map", &[0x81, 0xa1, b'n', 0x01]),
    ("reserved marker", &[0xc1]),
    ("empty input", &[]),
    ("deep arrays", &[0x91; 4096]),
    (
        "truncated Boxed",
        &[0x81, 0xa5, b'B', b'o', b'x', b'e', b'd'],
    ),
    ("huge str", &[0xdb, 0xff, 0xff, 0xff, 0xff, b'a']),
    ("huge bin", &[0xc6, 0xff, 0xff, 0xff, 0xff, 0]),
    ("huge array", &[0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0]),
    ("huge map", &[0xdf, 0xff, 0xff, 0xff, 0xff, 0xc0]),
    ("huge ext", &[0xc9, 0xff, 0xff, 0xff, 0xff, 1, 0]),
];

#[track_caller]
fn replay<T: MessageCodec + PartialEq + Debug>(name: &str, bytes: &[u8]) {
    let Ok(value) = from_slice::<T>(bytes) else {
        return;
    };
    let again = to_vec(&value).unwrap_or_else(|e| panic!("{name}: re-encode: {e}"));
    let back = from_slice::<T>(&again).unwrap_or_else(|e| panic!("{name}: re-decode: {e}"));
    assert_eq!(back, value, "{name}");
}

fn replay_all(name: &str, bytes: &[u8]) {
    replay::<N>(name, bytes);
    replay::<Tree>(name, bytes);
    replay::<Status>(name, bytes);
    replay::<Order>(name, bytes);
    replay::<OrderArr>(name, bytes);
    replay::<JsValue>(name, bytes);
    replay::<Vec<N>>(name, bytes);
    replay::<BTreeMap<String, N>>(name, bytes);
}

#[test]
fn fuzz_findings_replay() {
    for (target, what, bytes) in FOUND {
        replay_all(&format!("{target}: {what}"), bytes);
    }
}

#[test]
fn hostile_inputs_replay() {
    for (name, bytes) in HOSTILE {
        replay_all(name, bytes);
    }
    replay_all("deep maps", &b"\x81\xa1a".repeat(1000));
    replay_all("deep Boxed chain", &b"\x81\xa5Boxed".repeat(1000));
}

#[test]
fn one_byte_0x01_as_recursive_newtype_is_an_error() {
    // rmp-serde 1.3.1 overflows the stack on this input.
    let err = from_slice::<N>(&[0x01]).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::DepthLimitExceeded, "{err}");
    let err = from_slice::<Vec<N>>(&[0x91, 0x01]).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::DepthLimitExceeded, "{err}");
    // The recursive enum ends the same way on an endless chain of
    // `{"Boxed": {"Boxed": ...}}`.
    let chain = b"\x81\xa5Boxed".repeat(10_000);
    let err = from_slice::<Tree>(&chain).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::DepthLimitExceeded, "{err}");
    // nil is the one `N` there is on the wire.
    assert_eq!(from_slice::<N>(&[0xc0]).unwrap(), N(None));
}

/// Found by the round-trip target: a newtype is its inner value and `Some(x)`
/// is `x`, so every finite `N` encodes as `nil`, which decodes as `N(None)`.
/// Not a decoder fault (rmp-serde writes the same bytes and reads `None`
/// too, as for `Option<Option<T>>`), but the encoding cannot carry `N`'s
/// depth: `N` survives a round trip only as `N(None)`.
#[test]
fn n_encodings_collapse_to_nil() {
    let deep = N(Some(Box::new(N(Some(Box::new(N(None)))))));
    assert_eq!(to_vec(&deep).unwrap(), [0xc0]);
    assert_eq!(from_slice::<N>(&[0xc0]).unwrap(), N(None));
}

/// Found by `decode_json`: the MessagePack decoder accepts 128 levels of
/// nesting (`DecodeLimits::DEFAULT_MAX_DEPTH`), while `JsValue::parse`
/// (serde_json's recursion limit) accepts 127, so the JSON text of the
/// deepest MessagePack value does not parse back. It must be refused with
/// an error, never parsed into something else; one level less round-trips.
#[test]
fn json_text_of_the_deepest_msgpack_value() {
    let v: JsValue = from_slice(DEEPEST_JSON).unwrap();
    let err = JsValue::parse(&v.to_string()).unwrap_err();
    assert!(err.to_string().contains("recursion limit"), "{err}");
    let shallower: JsValue = from_slice(&DEEPEST_JSON[1..]).unwrap();
    assert_eq!(JsValue::parse(&shallower.to_string()).unwrap(), shallower);
    // one level more is a depth error on the MessagePack side
    let deeper = [&[0x91][..], DEEPEST_JSON].concat();
    let err = from_slice::<JsValue>(&deeper).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::DepthLimitExceeded);
}
