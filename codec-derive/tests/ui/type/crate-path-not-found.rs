use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(crate = "codecbus::codec")]
struct Order {
    id: u64,
}

fn main() {}
