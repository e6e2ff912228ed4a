use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct S {
    #[codec(key = 0)]
    a: u8,
    b: u8,
    #[codec(skip)]
    c: u8,
}

fn main() {}
