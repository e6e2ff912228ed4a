use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(rename_all = "camelCase")]
struct Order {
    order_id: u64,
    #[codec(rename = "orderId")]
    legacy_id: u64,
}

fn main() {}
