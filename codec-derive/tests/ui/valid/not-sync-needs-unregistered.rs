use codecbus_core::MessageCodec;
use std::marker::PhantomData;

#[derive(MessageCodec, Clone)]
struct PerThread {
    count: u64,
    #[codec(skip)]
    _not_send: PhantomData<*const ()>,
}

fn main() {}
