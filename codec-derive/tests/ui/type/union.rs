use codecbus_core::MessageCodec;

#[derive(MessageCodec)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
