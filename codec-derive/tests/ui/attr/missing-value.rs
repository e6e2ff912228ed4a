use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct Order {
    #[codec(rename)]
    id: u64,
}

fn main() {}
