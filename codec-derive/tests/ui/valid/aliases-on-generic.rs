use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(aliases("envelope.v1"))]
struct Envelope<T> {
    body: T,
}

fn main() {}
