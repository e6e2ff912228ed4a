use codecbus_core::MessageCodec;

// Key 1 held `email`, since removed.
#[derive(MessageCodec, Clone)]
#[codec(reserved(1))]
struct User {
    #[codec(key = 0)]
    id: u64,
    #[codec(key = 1)]
    phone: String,
}

fn main() {}
