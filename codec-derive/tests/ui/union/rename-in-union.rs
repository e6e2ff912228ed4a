use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(union)]
enum E {
    #[codec(tag = 0, rename = "a")]
    A,
}

fn main() {}
