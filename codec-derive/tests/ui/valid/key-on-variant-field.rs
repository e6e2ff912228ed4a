use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
enum E {
    V {
        #[codec(key = 0)]
        a: u8,
    },
}

fn main() {}
