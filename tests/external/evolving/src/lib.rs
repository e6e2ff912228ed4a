//! The message types of a service that deploys one node at a time: their
//! wire contract is the committed `codecs.snapshot.json`, which
//! `tests/contract.rs` checks them against.

use codecbus::MessageCodec;

/// An order placed in the shop.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "shop.order")]
pub struct Order {
    /// The order's id.
    pub id: u64,
    /// What was ordered.
    pub lines: Vec<Line>,
    /// A note from the customer.
    pub note: Option<String>,
}

/// One line of an order, positional for size.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "shop.line", as_array)]
pub struct Line {
    /// The article.
    pub sku: String,
    /// How many.
    pub quantity: u32,
}

/// What happened to an order, by stable tag.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "shop.event", union)]
pub enum Event {
    /// Placed.
    #[codec(tag = 0)]
    Placed(Order),
    /// Shipped, with its parcel.
    #[codec(tag = 1)]
    Shipped {
        /// The parcel's tracking code.
        parcel: String,
    },
}
