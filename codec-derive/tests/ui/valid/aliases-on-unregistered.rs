use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(unregistered, aliases("shop.order"))]
struct Order {
    id: u64,
}

fn main() {}
