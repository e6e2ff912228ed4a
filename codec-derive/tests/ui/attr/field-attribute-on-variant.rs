use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
enum Event {
    Started,
    #[codec(skip)]
    Internal,
}

fn main() {}
