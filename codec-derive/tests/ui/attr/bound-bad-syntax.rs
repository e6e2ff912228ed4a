use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(bound = "T MessageCodec")]
struct Wrapper<T> {
    value: T,
}

fn main() {}
