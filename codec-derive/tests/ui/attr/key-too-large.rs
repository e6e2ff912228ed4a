use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct S {
    #[codec(key = 4294967295)]
    a: u8,
}

fn main() {}
