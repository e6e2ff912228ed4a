use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(name = "shop.order.v2", aliases("shop.order", "shop.order.v2"))]
struct Order {
    id: u64,
}

fn main() {}
