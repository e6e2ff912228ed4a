use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(as_array)]
struct S {
    #[codec(key = 0)]
    a: u8,
}

fn main() {}
