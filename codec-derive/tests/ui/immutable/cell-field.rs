use std::cell::Cell;

use codecbus_core::MessageCodec;

#[derive(MessageCodec)]
#[codec(immutable)]
struct Counter {
    name: String,
    #[codec(skip)]
    hits: Cell<u64>,
}

fn main() {}
