use codecbus_core::MessageCodec;

#[derive(Clone)]
struct Money(u64);

#[derive(MessageCodec, Clone)]
struct Order {
    id: u64,
    total: Money,
}

fn main() {}
