use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
enum Event {
    Moved(#[codec(rename = "x")] i32, i32),
}

fn main() {}
