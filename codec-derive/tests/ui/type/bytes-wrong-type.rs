use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct Frame {
    #[codec(bytes)]
    count: u32,
    #[codec(bytes)]
    maybe: Option<u32>,
}

fn main() {}
