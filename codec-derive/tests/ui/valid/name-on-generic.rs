use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(name = "envelope")]
struct Envelope<T> {
    body: T,
}

fn main() {}
