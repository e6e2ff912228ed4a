use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(reserved(1, 1, -2, "", email, 4294967296, 3u8))]
struct A {
    #[codec(key = 0)]
    id: u64,
}

#[derive(MessageCodec, Clone)]
#[codec(reserved())]
struct B {
    id: u64,
}

#[derive(MessageCodec, Clone)]
#[codec(reserved = 1)]
struct C {
    id: u64,
}

#[derive(MessageCodec, Clone)]
#[codec(reserved("a"), reserved("b"))]
struct D {
    id: u64,
}

fn main() {}
