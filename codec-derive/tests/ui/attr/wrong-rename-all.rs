use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(rename_all = "camelcase")]
struct Order {
    order_id: u64,
}

fn main() {}
