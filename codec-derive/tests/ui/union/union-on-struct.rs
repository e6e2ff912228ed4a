use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(union)]
struct S {
    a: u8,
}

fn main() {}
