use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(name = "")]
struct Order {
    id: u64,
}

fn main() {}
