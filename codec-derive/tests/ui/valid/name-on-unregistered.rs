use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(unregistered, name = "orders.placed")]
struct Placed {
    id: u64,
}

fn main() {}
