//! A tour of `#[derive(MessageCodec)]`: encodes a few derived values, prints
//! their bytes in hex and their size next to `rmp-serde`'s, and decodes them
//! back.
//!
//! ```text
//! cargo run --example derive_tour
//! ```

use codecbus::{MessageCodec, from_slice, to_vec};
use serde::{Deserialize, Serialize};

/// A map keyed by field name: robust across versions.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[codec(rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
struct Order {
    order_id: u64,
    customer: String,
    lines: Vec<Line>,
    note: Option<String>,
}

/// Positional: smaller and faster, for types whose shape is fixed.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct Line {
    sku: String,
    quantity: u32,
    price_cents: i64,
}

/// Shared between local consumers without a copy.
#[derive(MessageCodec, Serialize, Deserialize, Debug, PartialEq)]
#[codec(immutable, name = "tour.price-update")]
struct PriceUpdate {
    sku: String,
    price_cents: i64,
}

/// Externally tagged, as `rmp-serde` writes enums.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
enum Event {
    Opened,
    Paid(i64),
    Moved { from: String, to: String },
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn show<T>(label: &str, value: &T, serde_bytes: Vec<u8>)
where
    T: MessageCodec + std::fmt::Debug + PartialEq,
{
    let bytes = to_vec(value).expect("encode");
    let back: T = from_slice(&bytes).expect("decode");
    assert_eq!(&back, value);
    println!("{label}");
    println!("  value      {value:?}");
    println!("  bytes      {}", hex(&bytes));
    println!(
        "  size       {} bytes (rmp-serde: {} bytes{})",
        bytes.len(),
        serde_bytes.len(),
        if bytes == serde_bytes {
            ", identical"
        } else {
            ", different"
        }
    );
    println!("  decoded    {back:?}\n");
}

fn main() {
    let order = Order {
        order_id: 1001,
        customer: "ada".into(),
        lines: vec![Line {
            sku: "tea".into(),
            quantity: 2,
            price_cents: 450,
        }],
        note: None,
    };
    show(
        "Order (map by field name, camelCase)",
        &order,
        rmp_serde::to_vec_named(&order).unwrap(),
    );

    let line = Line {
        sku: "cup".into(),
        quantity: 1,
        price_cents: 1200,
    };
    show(
        "Line (#[codec(as_array)])",
        &line,
        rmp_serde::to_vec(&line).unwrap(),
    );

    let update = PriceUpdate {
        sku: "tea".into(),
        price_cents: 475,
    };
    show(
        "PriceUpdate (#[codec(immutable)])",
        &update,
        rmp_serde::to_vec_named(&update).unwrap(),
    );

    for event in [
        Event::Opened,
        Event::Paid(450),
        Event::Moved {
            from: "a".into(),
            to: "b".into(),
        },
    ] {
        show("Event", &event, rmp_serde::to_vec_named(&event).unwrap());
    }

    println!("registered codecs in this program:");
    let mut regs: Vec<_> = codecbus::registrations().collect();
    regs.sort_by_key(|r| r.name());
    for reg in regs {
        println!(
            "  {:<40} {:<45} {}",
            reg.name(),
            reg.type_name(),
            if reg.is_immutable() {
                "immutable (shared)"
            } else {
                "deep-copied"
            }
        );
    }
}
