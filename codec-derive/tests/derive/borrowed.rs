//! Types with lifetimes: decoded from the input without copying their
//! strings and bytes (`&str`, `&[u8]`, `Cow`, `Vec<&str>`, nested borrowed
//! structs and enums), writing the bytes their owned twins write.

use std::borrow::Cow;
use std::collections::BTreeMap;

use codecbus_core::{DecodeErrorKind, MessageCodec, from_slice, to_vec};
use proptest::prelude::*;

/// The owned twin of `Order`: the same fields, owned.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct OrderOwned {
    id: u64,
    customer: String,
    lines: Vec<LineOwned>,
    tags: Vec<String>,
    note: Option<String>,
    totals: BTreeMap<String, i64>,
    #[codec(bytes)]
    signature: Vec<u8>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct LineOwned {
    sku: String,
    qty: u32,
}

#[derive(MessageCodec, Debug, PartialEq)]
struct Order<'a> {
    id: u64,
    customer: &'a str,
    lines: Vec<Line<'a>>,
    tags: Vec<&'a str>,
    note: Option<Cow<'a, str>>,
    totals: BTreeMap<&'a str, i64>,
    signature: &'a [u8],
}

#[derive(MessageCodec, Debug, PartialEq)]
struct Line<'a> {
    sku: Cow<'a, str>,
    qty: u32,
}

fn owned() -> OrderOwned {
    OrderOwned {
        id: 7,
        customer: "Ada Lovelace".into(),
        lines: vec![
            LineOwned {
                sku: "tea".into(),
                qty: 2,
            },
            LineOwned {
                sku: "cake".into(),
                qty: 1,
            },
        ],
        tags: vec!["gift".into(), "".into(), "grüße".into()],
        note: Some("ring twice".into()),
        totals: [("net".to_owned(), 950), ("tax".to_owned(), 190)].into(),
        signature: vec![0, 1, 2, 255],
    }
}

/// Whether `s` points into `input`.
fn inside(input: &[u8], s: &[u8]) -> bool {
    let range = input.as_ptr_range();
    range.contains(&s.as_ptr()) && s.as_ptr_range().end <= range.end
}

#[test]
fn decodes_borrowing_every_string_and_byte_field() {
    let bytes = to_vec(&owned()).unwrap();
    let order: Order<'_> = from_slice(&bytes).unwrap();
    assert_eq!(order.id, 7);
    assert_eq!(order.customer, "Ada Lovelace");
    assert_eq!(order.tags, ["gift", "", "grüße"]);
    assert_eq!(order.signature, [0, 1, 2, 255]);
    assert_eq!(order.totals.get("tax"), Some(&190));

    assert!(inside(&bytes, order.customer.as_bytes()));
    assert!(inside(&bytes, order.signature));
    for tag in order.tags.iter().filter(|t| !t.is_empty()) {
        assert!(inside(&bytes, tag.as_bytes()));
    }
    for key in order.totals.keys() {
        assert!(inside(&bytes, key.as_bytes()));
    }
    for line in &order.lines {
        assert!(matches!(line.sku, Cow::Borrowed(_)), "{:?}", line.sku);
        assert!(inside(&bytes, line.sku.as_bytes()));
    }
    assert!(matches!(order.note, Some(Cow::Borrowed("ring twice"))));
}

#[test]
fn writes_the_bytes_of_its_owned_twin() {
    let owned = owned();
    let bytes = to_vec(&owned).unwrap();
    let order: Order<'_> = from_slice(&bytes).unwrap();
    assert_eq!(to_vec(&order).unwrap(), bytes);
    // And a view built by hand, with owned `Cow`s, writes them too.
    let built = Order {
        lines: vec![
            Line {
                sku: Cow::Owned("tea".into()),
                qty: 2,
            },
            Line {
                sku: "cake".into(),
                qty: 1,
            },
        ],
        ..order
    };
    assert_eq!(to_vec(&built).unwrap(), bytes);
    assert_eq!(
        from_slice::<OrderOwned>(&to_vec(&built).unwrap()).unwrap(),
        owned
    );
}

#[test]
fn byte_pinned() {
    #[derive(MessageCodec, Debug, PartialEq)]
    #[codec(as_array)]
    struct Pair<'a> {
        name: &'a str,
        raw: &'a [u8],
    }
    let bytes = b"\x92\xa2hi\xc4\x02\x01\x02";
    let pair: Pair<'_> = from_slice(bytes).unwrap();
    assert_eq!(
        pair,
        Pair {
            name: "hi",
            raw: &[1, 2]
        }
    );
    assert_eq!(to_vec(&pair).unwrap(), bytes);
}

#[test]
fn keyed_unions_and_enums_borrow_too() {
    #[derive(MessageCodec, Debug, PartialEq)]
    struct Keyed<'a> {
        #[codec(key = 0)]
        id: u32,
        #[codec(key = 2)]
        name: &'a str,
        #[codec(key = 3)]
        alias: Option<&'a str>,
    }
    #[derive(MessageCodec, Debug, PartialEq)]
    #[codec(union)]
    enum Event<'a> {
        #[codec(tag = 1)]
        Login { user: &'a str },
        #[codec(tag = 2)]
        Note(Cow<'a, str>),
    }
    #[derive(MessageCodec, Debug, PartialEq)]
    enum Plain<'a> {
        Text(&'a str),
        Pair(&'a str, &'a [u8]),
        Nothing,
    }

    let bytes = to_vec(&Keyed {
        id: 1,
        name: "ada",
        alias: None,
    })
    .unwrap();
    assert_eq!(bytes, b"\x94\x01\xc0\xa3ada\xc0");
    let keyed: Keyed<'_> = from_slice(&bytes).unwrap();
    assert!(inside(&bytes, keyed.name.as_bytes()));

    for event in [Event::Login { user: "ada" }, Event::Note("hello".into())] {
        let bytes = to_vec(&event).unwrap();
        assert_eq!(from_slice::<Event<'_>>(&bytes).unwrap(), event);
    }
    for plain in [Plain::Text("t"), Plain::Pair("p", b"\x00"), Plain::Nothing] {
        let bytes = to_vec(&plain).unwrap();
        assert_eq!(from_slice::<Plain<'_>>(&bytes).unwrap(), plain);
    }
}

/// A lifetime that no decoded field borrows (skipped, or in `PhantomData`)
/// does not make the type borrow: it stays a `MessageCodec`.
#[test]
fn a_lifetime_no_field_borrows_keeps_the_type_a_message() {
    #[derive(MessageCodec, Clone, Debug, PartialEq)]
    struct Tagged<'a> {
        id: u8,
        #[codec(skip)]
        origin: Option<&'a str>,
    }
    fn message<T: MessageCodec>(value: &T) -> Vec<u8> {
        to_vec(value).unwrap()
    }
    let bytes = message(&Tagged {
        id: 3,
        origin: Some("here"),
    });
    // Decoded from a buffer that is dropped right after: owned.
    let back: Tagged<'static> = codecbus_core::from_slice(&bytes.clone()).unwrap();
    assert_eq!(
        back,
        Tagged {
            id: 3,
            origin: None
        }
    );
}

/// A generic borrowed type: the parameter is bounded by `Decode<'de>`, so
/// it can itself borrow.
#[test]
fn generic_parameters_may_borrow() {
    #[derive(MessageCodec, Debug, PartialEq)]
    struct Page<'a, T> {
        title: &'a str,
        items: Vec<T>,
    }
    let bytes = to_vec(&Page {
        title: "p",
        items: vec!["a", "b"],
    })
    .unwrap();
    let page: Page<'_, &str> = from_slice(&bytes).unwrap();
    assert_eq!(page.items, ["a", "b"]);
    let page: Page<'_, String> = from_slice(&bytes).unwrap();
    assert_eq!(page.items, ["a", "b"]);
}

#[test]
fn bad_input_is_an_error_located_by_its_pointer() {
    let mut bytes = to_vec(&owned()).unwrap();
    // The first byte of "gift" made invalid UTF-8.
    let at = bytes.windows(4).position(|w| w == b"gift").unwrap();
    bytes[at] = 0xff;
    let e = from_slice::<Order<'_>>(&bytes).unwrap_err();
    assert_eq!(e.kind(), DecodeErrorKind::InvalidUtf8);
    assert_eq!(e.pointer(), "/tags/0");
    assert_eq!(e.offset(), at);

    // An integer where a byte slice is due is refused.
    let e = from_slice::<&[u8]>(b"\x05").unwrap_err();
    assert!(e.to_string().contains("binary"), "{e}");
    // Every truncation of a valid value is an error, never a panic.
    let good = to_vec(&owned()).unwrap();
    for len in 0..good.len() {
        assert!(from_slice::<Order<'_>>(&good[..len]).is_err(), "{len}");
    }
}

proptest! {
    #[test]
    fn borrowed_and_owned_read_each_other(
        id in any::<u64>(),
        customer in ".{0,20}",
        tags in proptest::collection::vec(".{0,6}", 0..5),
        note in proptest::option::of(".{0,10}"),
        signature in proptest::collection::vec(any::<u8>(), 0..20),
        lines in proptest::collection::vec((".{0,5}", any::<u32>()), 0..4),
    ) {
        let owned = OrderOwned {
            id,
            customer,
            lines: lines.into_iter().map(|(sku, qty)| LineOwned { sku, qty }).collect(),
            tags,
            note,
            totals: BTreeMap::new(),
            signature,
        };
        let bytes = to_vec(&owned).unwrap();
        let view: Order<'_> = from_slice(&bytes).unwrap();
        prop_assert_eq!(view.customer, owned.customer.as_str());
        prop_assert_eq!(&view.tags, &owned.tags);
        prop_assert_eq!(view.note.as_deref(), owned.note.as_deref());
        prop_assert_eq!(view.signature, &owned.signature[..]);
        prop_assert_eq!(to_vec(&view).unwrap(), bytes.clone());
        prop_assert_eq!(from_slice::<OrderOwned>(&to_vec(&view).unwrap()).unwrap(), owned);
    }

    #[test]
    fn any_bytes_decode_without_panic(data in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = from_slice::<Order<'_>>(&data);
        let _ = from_slice::<Vec<&str>>(&data);
        let _ = from_slice::<BTreeMap<&str, Cow<'_, [u8]>>>(&data);
    }
}
