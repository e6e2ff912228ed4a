use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct S {
    #[codec(key = "0")]
    a: u8,
    #[codec(key = -1)]
    b: u8,
    #[codec(key)]
    c: u8,
}

fn main() {}
