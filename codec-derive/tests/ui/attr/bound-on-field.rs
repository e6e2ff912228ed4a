use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct Wrapper<T> {
    #[codec(bound = "T: MessageCodec")]
    value: T,
}

fn main() {}
