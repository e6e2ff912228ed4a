use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(aliases("shop.order"))]
struct Order {
    id: u64,
}

fn main() {}
