use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct Token(#[codec(skip)] String);

fn main() {}
