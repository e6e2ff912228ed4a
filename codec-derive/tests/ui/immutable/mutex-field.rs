use std::sync::Mutex;

use codec_core::MessageCodec;

#[derive(MessageCodec)]
#[codec(immutable)]
struct Shared {
    #[codec(skip)]
    lock: Mutex<Vec<u8>>,
    id: u64,
}

fn main() {}
