use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct Order {
    #[codec(rename = "id", rename = "order_id")]
    id: u64,
}

fn main() {}
