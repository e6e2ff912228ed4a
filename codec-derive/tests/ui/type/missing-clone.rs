use codecbus_core::MessageCodec;

#[derive(MessageCodec)]
struct Order {
    id: u64,
}

fn main() {}
