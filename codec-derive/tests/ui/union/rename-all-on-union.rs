use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(union, rename_all = "snake_case")]
enum Event {
    #[codec(tag = 0)]
    Created { order_id: u64 },
    #[codec(tag = 1)]
    Cancelled,
}

fn main() {}
