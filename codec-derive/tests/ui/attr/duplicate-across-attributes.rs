use codecbus_core::MessageCodec;

#[derive(MessageCodec)]
#[codec(immutable)]
#[codec(name = "orders", immutable)]
struct Order {
    id: u64,
}

fn main() {}
