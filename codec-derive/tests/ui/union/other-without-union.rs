use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
enum E {
    A,
    #[codec(other)]
    B(u32, codecbus_core::ext::RawValue),
}

fn main() {}
