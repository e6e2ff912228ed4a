use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(rename = "order")]
struct Order {
    id: u64,
}

fn main() {}
