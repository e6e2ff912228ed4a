//! The bounce payloads, shared by `benches/bounce.rs` and
//! `benches/bounce-example/bounce.rs`.
//!
//! One REST-like object (`obj`: 15 keys, a nested object, an array of 10
//! small objects, strings of 10–40 characters), arrays of 4 and 100 of them,
//! and the twitter document. Each exists as a derived struct twice (with
//! and without `#[codec(immutable)]`), once more as a struct deriving only
//! serde's traits (`serde_derived`: what a user of rmp-serde writes), and
//! as JSON, both as the immutable `JsValue` and as the deep-copied
//! `serde_json::Value`, all holding the same data.

#![allow(dead_code)]

/// Defines the payload structs in a module, with the given derives and
/// container attributes, so all variants have the same fields.
macro_rules! payload_types {
    ($module:ident, [$($derive:path),*] $(, #[$attr:meta])*) => {
        pub mod $module {
            /// A customer record, the `obj` payload.
            #[derive($($derive,)* Clone, Debug, PartialEq)]
            $(#[$attr])*
            pub struct Customer {
                pub id: u64,
                pub guid: String,
                pub name: String,
                pub email: String,
                pub phone: String,
                pub company: String,
                pub active: bool,
                pub balance: f64,
                pub age: u32,
                pub registered: String,
                pub about: String,
                pub tags: Vec<String>,
                pub favorite_fruit: String,
                pub address: Address,
                pub orders: Vec<Order>,
            }

            /// The nested object.
            #[derive($($derive,)* Clone, Debug, PartialEq)]
            $(#[$attr])*
            pub struct Address {
                pub street: String,
                pub city: String,
                pub zip: String,
                pub country: String,
            }

            /// One of the ten small objects.
            #[derive($($derive,)* Clone, Debug, PartialEq)]
            $(#[$attr])*
            pub struct Order {
                pub sku: String,
                pub quantity: u32,
                pub price: f64,
            }

            /// The `i`-th customer (deterministic).
            pub fn customer(i: usize) -> Customer {
                Customer {
                    id: 10_000 + i as u64,
                    guid: format!("5f3c2a1e-{i:04}-4b6e-9d2f-8c7a1b0e3d4f"),
                    name: format!("Customer Number {i:05}"),
                    email: format!("customer.{i}@example.org"),
                    phone: format!("+1 (555) 010-{:04}", i % 10_000),
                    company: "Acme Distribution".to_string(),
                    active: i % 3 != 0,
                    balance: 1_234.5 + i as f64,
                    age: 20 + (i % 50) as u32,
                    registered: "2024-05-17T09:32:11Z".to_string(),
                    about: "Prefers email; ships to the warehouse dock".to_string(),
                    tags: vec!["wholesale".into(), "priority".into(), "net-30".into()],
                    favorite_fruit: "strawberry".to_string(),
                    address: Address {
                        street: format!("{} Harbour Street", 100 + i),
                        city: "Port Elizabeth".to_string(),
                        zip: format!("{:05}", 10_000 + i),
                        country: "South Africa".to_string(),
                    },
                    orders: (0..10)
                        .map(|k| Order {
                            sku: format!("SKU-{:06}", i * 10 + k),
                            quantity: 1 + k as u32,
                            price: 9.99 * (1 + k) as f64,
                        })
                        .collect(),
                }
            }
        }
    };
}

payload_types!(copied, [codecbus::MessageCodec, serde::Serialize]);
payload_types!(
    immutable,
    [codecbus::MessageCodec, serde::Serialize],
    #[codec(immutable)]
);
payload_types!(serde_derived, [serde::Serialize, serde::Deserialize]);

/// The payload names, in the order tables and charts show them.
pub const PAYLOADS: [&str; 4] = ["obj", "arr4", "arr100", "twitter"];

/// How many customers a payload holds (`None` for `obj`, a bare object;
/// `twitter` is JSON only).
pub fn array_len(payload: &str) -> Option<usize> {
    match payload {
        "arr4" => Some(4),
        "arr100" => Some(100),
        _ => None,
    }
}

/// The twitter document (`data/json/twitter.json`, in the repository),
/// built into the binary: this file is compiled by the bounce example of
/// the root package and by the benches of `benches/`, whose manifests sit in
/// different folders.
pub fn twitter_text() -> String {
    include_str!("../../data/json/twitter.json").to_owned()
}

/// The payload as `serde_json::Value` (`None` when twitter is absent).
pub fn json_payload(payload: &str) -> Option<serde_json::Value> {
    match payload {
        "obj" => Some(serde_json::to_value(copied::customer(0)).expect("serialize")),
        "twitter" => Some(serde_json::from_str(&twitter_text()).expect("twitter.json parses")),
        other => {
            let n = array_len(other)?;
            Some(
                serde_json::to_value((0..n).map(copied::customer).collect::<Vec<_>>())
                    .expect("serialize"),
            )
        }
    }
}
