use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct Order {
    id: u64,
    #[codec(skip, rename = "c")]
    cache: Vec<u8>,
}

fn main() {}
