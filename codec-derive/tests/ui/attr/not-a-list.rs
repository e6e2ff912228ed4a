use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec = "immutable"]
struct Order {
    id: u64,
}

fn main() {}
