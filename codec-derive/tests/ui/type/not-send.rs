use std::rc::Rc;

use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct Order {
    id: u64,
    #[codec(skip)]
    cache: Rc<Vec<u8>>,
}

fn main() {}
