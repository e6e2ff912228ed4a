use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(reserved("email", 1))]
struct User {
    id: u64,
}

fn main() {}
