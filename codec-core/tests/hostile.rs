//! The hostile-input table: each row is an input an attacker (or a broken
//! peer) could send, with the error kind it must produce. Also measured
//! here, with a counting allocator: huge declared lengths cost no memory.
//!
//! Rules this table pins (see the guide, `book/src/codecs.md`, "Untrusted input"):
//! * a declared length beyond the bytes left is `LengthOverflow` (or
//!   `Truncated` when it is small) before anything is allocated;
//! * nesting beyond `max_depth` (128) is `DepthLimitExceeded`, on the
//!   default stack, whatever the nesting;
//! * duplicate keys: a derived struct rejects them (`DuplicateField`), maps
//!   and JSON objects keep the last value;
//! * a key that is not valid UTF-8 is skipped by a derived struct like any
//!   unknown key (keys are matched as bytes), and is `InvalidUtf8` for a
//!   `String`-keyed map;
//! * NaN and infinities are valid floats and decode as such.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};

use codecbus_core::ext::{Bytes, Ext, Timestamp};
use codecbus_core::{DecodeErrorKind as K, MessageCodec, from_slice, to_vec};
use codecbus_json::JsValue;

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout contract is passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` and returns how far the live heap rose above its level at the
/// start. Other tests in this binary run on other threads, so the figure
/// is an upper bound on what `f` itself allocated.
fn peak_growth(f: impl FnOnce()) -> usize {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    f();
    PEAK.load(Ordering::Relaxed).saturating_sub(base)
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Item {
    name: String,
    price: i64,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Order {
    id: u64,
    items: Vec<Item>,
    note: Option<String>,
}

fn order() -> Order {
    Order {
        id: 77,
        items: (0..5)
            .map(|i| Item {
                name: format!("item-{i}"),
                price: 100 * i,
            })
            .collect(),
        note: Some("leave at the door".into()),
    }
}

/// What a row expects.
enum Expect {
    Kind(K),
    /// Any error of these kinds (truncations may hit a header or a body).
    OneOf(&'static [K]),
    Ok,
}

struct Row {
    name: &'static str,
    bytes: Vec<u8>,
    decode: fn(&[u8]) -> Result<(), codecbus_core::DecodeError>,
    expect: Expect,
}

fn as_type<T: MessageCodec>(bytes: &[u8]) -> Result<(), codecbus_core::DecodeError> {
    from_slice::<T>(bytes).map(drop)
}

fn header(marker: u8, len: u32, tail: &[u8]) -> Vec<u8> {
    let mut v = vec![marker];
    v.extend(len.to_be_bytes());
    v.extend_from_slice(tail);
    v
}

fn table() -> Vec<Row> {
    let max = u32::MAX;
    let mut rows = vec![
        Row {
            name: "str32 of 2^32-1",
            bytes: header(0xdb, max, b"abc"),
            decode: as_type::<String>,
            expect: Expect::Kind(K::LengthOverflow),
        },
        Row {
            name: "bin32 of 2^32-1",
            bytes: header(0xc6, max, b"abc"),
            decode: as_type::<Bytes>,
            expect: Expect::Kind(K::LengthOverflow),
        },
        Row {
            name: "array32 of 2^32-1",
            bytes: header(0xdd, max, &[1, 2, 3]),
            decode: as_type::<Vec<u64>>,
            expect: Expect::Kind(K::LengthOverflow),
        },
        Row {
            name: "map32 of 2^32-1",
            bytes: header(0xdf, max, &[1, 2, 3]),
            decode: as_type::<HashMap<u8, u8>>,
            expect: Expect::Kind(K::LengthOverflow),
        },
        Row {
            name: "ext32 of 2^32-1",
            bytes: {
                let mut v = header(0xc9, max, &[]);
                v.extend([7, 1, 2]);
                v
            },
            decode: as_type::<Ext>,
            expect: Expect::Kind(K::LengthOverflow),
        },
        Row {
            name: "array32 of 2^32-1 as JsValue",
            bytes: header(0xdd, max, &[1, 2, 3]),
            decode: as_type::<JsValue>,
            expect: Expect::Kind(K::LengthOverflow),
        },
        Row {
            name: "map32 of 2^32-1 as JsValue",
            bytes: header(0xdf, max, &[1, 2, 3]),
            decode: as_type::<JsValue>,
            expect: Expect::Kind(K::LengthOverflow),
        },
        Row {
            name: "str32 of 2^32-1 as struct field",
            bytes: {
                let mut v = vec![0x81, 0xa4];
                v.extend(b"name");
                v.extend(header(0xdb, max, b"x"));
                v
            },
            decode: as_type::<Item>,
            expect: Expect::Kind(K::LengthOverflow),
        },
        Row {
            name: "map of 10 million pairs (header only)",
            bytes: header(0xdf, 10_000_000, &[0xa1, b'a', 1]),
            decode: as_type::<BTreeMap<String, u8>>,
            expect: Expect::Kind(K::LengthOverflow),
        },
        Row {
            name: "map of 10 million pairs as a struct",
            bytes: header(0xdf, 10_000_000, &[0xa1, b'a', 1]),
            decode: as_type::<Order>,
            expect: Expect::Kind(K::LengthOverflow),
        },
        Row {
            name: "100 000 nested arrays as JsValue",
            bytes: {
                let mut v = vec![0x91; 100_000];
                v.push(0xc0);
                v
            },
            decode: as_type::<JsValue>,
            expect: Expect::Kind(K::DepthLimitExceeded),
        },
        Row {
            name: "100 000 nested maps as JsValue",
            bytes: {
                let mut v = Vec::new();
                for _ in 0..100_000 {
                    v.extend([0x81, 0xa1, b'k']);
                }
                v.push(0xc0);
                v
            },
            decode: as_type::<JsValue>,
            expect: Expect::Kind(K::DepthLimitExceeded),
        },
        Row {
            name: "129 nested options of boxes",
            bytes: vec![0x01],
            decode: as_type::<Option<Box<Option<Box<u8>>>>>,
            expect: Expect::Ok,
        },
        Row {
            name: "invalid UTF-8 in a value",
            bytes: vec![0xa2, 0xc3, 0x28],
            decode: as_type::<String>,
            expect: Expect::Kind(K::InvalidUtf8),
        },
        Row {
            name: "invalid UTF-8 in a map key",
            bytes: vec![0x81, 0xa2, 0xc3, 0x28, 0x01],
            decode: as_type::<BTreeMap<String, u8>>,
            expect: Expect::Kind(K::InvalidUtf8),
        },
        Row {
            name: "invalid UTF-8 in a JSON key",
            bytes: vec![0x81, 0xa2, 0xc3, 0x28, 0x01],
            decode: as_type::<JsValue>,
            expect: Expect::Kind(K::InvalidUtf8),
        },
        Row {
            name: "invalid UTF-8 key in a struct is skipped",
            bytes: {
                let mut v = to_vec(&Item {
                    name: "a".into(),
                    price: 1,
                })
                .unwrap();
                v[0] += 1;
                v.extend([0xa2, 0xc3, 0x28, 0x01]);
                v
            },
            decode: as_type::<Item>,
            expect: Expect::Ok,
        },
        Row {
            name: "duplicate struct field",
            bytes: {
                let mut v = vec![0x83, 0xa4];
                v.extend(b"name");
                v.extend([0xa1, b'a', 0xa5]);
                v.extend(b"price");
                v.push(1);
                v.push(0xa4);
                v.extend(b"name");
                v.extend([0xa1, b'b']);
                v
            },
            decode: as_type::<Item>,
            expect: Expect::Kind(K::DuplicateField("name")),
        },
        Row {
            name: "duplicate map key (last wins)",
            bytes: vec![0x82, 0x01, 0x0a, 0x01, 0x0b],
            decode: |b| {
                let m = from_slice::<BTreeMap<u8, u8>>(b)?;
                assert_eq!(m[&1], 0x0b);
                Ok(())
            },
            expect: Expect::Ok,
        },
        Row {
            name: "duplicate JSON key (last wins)",
            bytes: vec![0x82, 0xa1, b'a', 0x01, 0xa1, b'a', 0x02],
            decode: |b| {
                let v = from_slice::<JsValue>(b)?;
                assert_eq!(v.pointer("/a").and_then(JsValue::as_i64), Some(2));
                Ok(())
            },
            expect: Expect::Ok,
        },
        Row {
            name: "u8 one past its range",
            bytes: to_vec(&256u16).unwrap(),
            decode: as_type::<u8>,
            expect: Expect::Kind(K::IntegerOutOfRange { target: "u8" }),
        },
        Row {
            name: "i8 one past its range",
            bytes: to_vec(&128u16).unwrap(),
            decode: as_type::<i8>,
            expect: Expect::Kind(K::IntegerOutOfRange { target: "i8" }),
        },
        Row {
            name: "i8 one below its range",
            bytes: to_vec(&-129i16).unwrap(),
            decode: as_type::<i8>,
            expect: Expect::Kind(K::IntegerOutOfRange { target: "i8" }),
        },
        Row {
            name: "u16 one past its range",
            bytes: to_vec(&65_536u32).unwrap(),
            decode: as_type::<u16>,
            expect: Expect::Kind(K::IntegerOutOfRange { target: "u16" }),
        },
        Row {
            name: "i16 one past its range",
            bytes: to_vec(&32_768u32).unwrap(),
            decode: as_type::<i16>,
            expect: Expect::Kind(K::IntegerOutOfRange { target: "i16" }),
        },
        Row {
            name: "u32 one past its range",
            bytes: to_vec(&(1u64 << 32)).unwrap(),
            decode: as_type::<u32>,
            expect: Expect::Kind(K::IntegerOutOfRange { target: "u32" }),
        },
        Row {
            name: "i32 one below its range",
            bytes: to_vec(&(i32::MIN as i64 - 1)).unwrap(),
            decode: as_type::<i32>,
            expect: Expect::Kind(K::IntegerOutOfRange { target: "i32" }),
        },
        Row {
            name: "i64 one past its range",
            bytes: to_vec(&(i64::MAX as u64 + 1)).unwrap(),
            decode: as_type::<i64>,
            expect: Expect::Kind(K::IntegerOutOfRange { target: "i64" }),
        },
        Row {
            name: "u64 from a negative",
            bytes: to_vec(&-1i8).unwrap(),
            decode: as_type::<u64>,
            expect: Expect::Kind(K::IntegerOutOfRange { target: "u64" }),
        },
        Row {
            name: "NaN is a float",
            bytes: to_vec(&f64::NAN).unwrap(),
            decode: |b| {
                assert!(from_slice::<f64>(b)?.is_nan());
                Ok(())
            },
            expect: Expect::Ok,
        },
        Row {
            name: "+infinity is a float",
            bytes: to_vec(&f64::INFINITY).unwrap(),
            decode: as_type::<f64>,
            expect: Expect::Ok,
        },
        Row {
            name: "-infinity as f32",
            bytes: to_vec(&f32::NEG_INFINITY).unwrap(),
            decode: as_type::<f32>,
            expect: Expect::Ok,
        },
        Row {
            name: "unknown extension type is carried raw",
            bytes: vec![0xd5, 99, 1, 2],
            decode: as_type::<Ext>,
            expect: Expect::Ok,
        },
        Row {
            name: "unknown extension type where a timestamp is due",
            bytes: vec![0xd5, 99, 1, 2],
            decode: as_type::<Timestamp>,
            expect: Expect::Kind(K::UnexpectedExtType {
                expected: -1,
                found: 99,
            }),
        },
        Row {
            name: "timestamp with nanoseconds = 10^9",
            bytes: {
                let mut v = vec![0xc7, 12, 0xff];
                v.extend(1_000_000_000u32.to_be_bytes());
                v.extend(0i64.to_be_bytes());
                v
            },
            decode: as_type::<Timestamp>,
            expect: Expect::Kind(K::InvalidExtData(
                "timestamp nanoseconds must be below 1 000 000 000",
            )),
        },
        Row {
            name: "reserved marker 0xc1",
            bytes: vec![0xc1],
            decode: as_type::<JsValue>,
            expect: Expect::Kind(K::InvalidMarker(0xc1)),
        },
        Row {
            name: "trailing bytes",
            bytes: vec![0x01, 0x02],
            decode: as_type::<u8>,
            expect: Expect::Kind(K::TrailingBytes(1)),
        },
        Row {
            name: "empty input",
            bytes: vec![],
            decode: as_type::<Order>,
            expect: Expect::Kind(K::Truncated),
        },
    ];
    #[cfg(feature = "decimal")]
    rows.push(Row {
        name: "decimal with scale 29",
        bytes: vec![0xd5, codecbus_core::ext::DECIMAL as u8, 29, 0x01],
        decode: as_type::<rust_decimal::Decimal>,
        expect: Expect::Kind(K::InvalidExtData("decimal scale above 28")),
    });
    let valid = to_vec(&order()).unwrap();
    for cut in 0..valid.len() {
        rows.push(Row {
            name: "prefix of a valid order",
            bytes: valid[..cut].to_vec(),
            decode: as_type::<Order>,
            expect: Expect::OneOf(&[K::Truncated, K::LengthOverflow]),
        });
    }
    rows
}

#[test]
fn hostile_table() {
    let rows = table();
    for row in &rows {
        let mut result = None;
        let growth = peak_growth(|| result = Some((row.decode)(&row.bytes)));
        let result = result.unwrap();
        match (&row.expect, &result) {
            (Expect::Ok, Ok(())) => {}
            (Expect::Kind(k), Err(e)) if e.kind() == *k => {}
            (Expect::OneOf(ks), Err(e)) if ks.contains(&e.kind()) => {}
            (_, other) => panic!("{}: unexpected {other:?}", row.name),
        }
        assert!(
            growth < 1 << 20,
            "{}: the live heap grew by {growth} bytes",
            row.name
        );
    }
    println!("{} hostile inputs checked", rows.len());
}
