use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
enum E {
    #[codec(tag = 1)]
    A,
    B,
}

fn main() {}
