use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct Order {
    #[codec(skip_if = "|v| v.is_empty()")]
    items: Vec<u64>,
}

fn main() {}
