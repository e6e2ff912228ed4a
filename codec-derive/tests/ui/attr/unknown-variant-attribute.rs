use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
enum Event {
    #[codec(alias = "start")]
    Started,
}

fn main() {}
