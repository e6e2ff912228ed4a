use codecbus_core::MessageCodec;

#[derive(Clone)]
struct Connection;

#[derive(MessageCodec, Clone)]
struct Session {
    id: u64,
    #[codec(skip)]
    connection: Connection,
}

fn main() {}
