use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct Order {
    #[codec(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

fn main() {}
