use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(union)]
enum E {
    #[codec(tag = 4294967296)]
    A,
}

fn main() {}
