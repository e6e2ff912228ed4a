use codecbus_core::MessageCodec;

// Tag 7 was `Suspended`, since removed.
#[derive(MessageCodec, Clone)]
#[codec(union, reserved(7))]
enum Event {
    #[codec(tag = 0)]
    Created,
    #[codec(tag = 7)]
    Archived,
}

fn main() {}
