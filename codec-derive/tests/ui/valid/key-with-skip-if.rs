use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct S {
    #[codec(key = 0, default, skip_if = "Option::is_none")]
    a: Option<u8>,
}

fn main() {}
