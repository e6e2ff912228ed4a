use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(immutible)]
struct Order {
    id: u64,
}

fn main() {}
