use std::sync::Mutex;

use codecbus_core::MessageCodec;

#[derive(MessageCodec)]
#[codec(immutable)]
struct Shared {
    #[codec(skip)]
    lock: Mutex<Vec<u8>>,
    id: u64,
}

fn main() {}
