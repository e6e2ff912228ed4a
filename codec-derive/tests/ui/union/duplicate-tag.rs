use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(union)]
enum E {
    #[codec(tag = 3)]
    A,
    #[codec(tag = 3)]
    B(u8),
}

fn main() {}
