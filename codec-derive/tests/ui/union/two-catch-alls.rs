use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(union)]
enum E {
    #[codec(tag = 0)]
    A,
    #[codec(other)]
    B(u32, codecbus_core::ext::RawValue),
    #[codec(other)]
    C(u32, codecbus_core::ext::RawValue),
}

fn main() {}
