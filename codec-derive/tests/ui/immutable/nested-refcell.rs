use std::cell::RefCell;

use codecbus_core::MessageCodec;

#[derive(MessageCodec)]
#[codec(immutable)]
struct Log {
    #[codec(skip)]
    lines: Vec<RefCell<String>>,
}

fn main() {}
