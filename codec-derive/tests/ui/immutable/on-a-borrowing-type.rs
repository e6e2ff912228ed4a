use codecbus_core::MessageCodec;

// A view of a buffer is never shared on the bus: `immutable` is refused.
#[derive(MessageCodec)]
#[codec(immutable)]
struct View<'a> {
    name: &'a str,
}

fn main() {}
