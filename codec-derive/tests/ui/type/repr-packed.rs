use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone, Copy)]
#[repr(C, packed)]
struct Header {
    kind: u8,
    len: u32,
}

fn main() {}
