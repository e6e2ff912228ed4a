use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(reserved(2, "email"))]
struct Keyed {
    #[codec(key = 0)]
    id: u64,
}

#[derive(MessageCodec, Clone)]
#[codec(as_array, reserved("email"))]
struct Positional {
    id: u64,
}

#[derive(MessageCodec, Clone)]
#[codec(union, reserved("Suspended"))]
enum Tagged {
    #[codec(tag = 0)]
    Created,
}

#[derive(MessageCodec, Clone)]
#[codec(reserved(3))]
enum Named {
    Created,
}

#[derive(MessageCodec, Clone)]
#[codec(reserved(1))]
struct Pair(u8, u8);

fn main() {}
