use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct S {
    #[codec(key = 3)]
    x: u8,
    #[codec(key = 3)]
    y: u8,
}

fn main() {}
