use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct Order {
    #[codec(with = "as_txt")]
    id: u64,
}

fn main() {}
