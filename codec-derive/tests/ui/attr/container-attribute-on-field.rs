use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct Order {
    #[codec(immutable)]
    id: u64,
}

fn main() {}
