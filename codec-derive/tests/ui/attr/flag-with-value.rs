use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct Order {
    #[codec(skip = true)]
    cache: Vec<u8>,
}

fn main() {}
