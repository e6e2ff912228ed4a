use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(union)]
enum E {
    #[codec(tag = 0, other)]
    A(u32, codecbus_core::ext::RawValue),
}

fn main() {}
