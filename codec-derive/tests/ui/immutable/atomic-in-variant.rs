use std::sync::atomic::AtomicU32;

use codecbus_core::MessageCodec;

#[derive(MessageCodec)]
#[codec(immutable)]
enum State {
    Idle,
    Busy {
        since: u64,
        #[codec(skip)]
        jobs: AtomicU32,
    },
}

fn main() {}
