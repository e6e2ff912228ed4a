use codecbus_core::{CodecRegistration, MessageCodec};

#[derive(MessageCodec)]
struct View<'a> {
    name: &'a str,
}

fn main() {
    // A message owns its data: a borrowing type cannot be registered (nor
    // sent on the bus).
    let _ = CodecRegistration::of::<View<'static>>("view");
}
