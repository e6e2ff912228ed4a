use codecbus_core::MessageCodec;

mod raw {}

#[derive(MessageCodec, Clone)]
struct Blob {
    #[codec(bytes, with = "raw")]
    data: Vec<u8>,
}

fn main() {}
