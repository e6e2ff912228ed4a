use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone, Copy)]
union Bits {
    int: u32,
}

fn main() {
    let bits = Bits { int: 1 };
    let _ = codecbus_core::to_vec(&bits);
}
