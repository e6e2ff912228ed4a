use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(union)]
enum E {
    #[codec(tag = 0)]
    A,
    #[codec(other)]
    Unknown { tag: u32 },
}

fn main() {}
