use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct S(#[codec(key = 0)] u8, #[codec(key = 1)] u8);

fn main() {}
