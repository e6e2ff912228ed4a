use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone, Debug)]
#[codec(immutible)]
struct Order {
    id: u64,
}

fn needs_codec<T: MessageCodec>(_: &T) {}

fn main() {
    // Only the attribute mistake is reported: the type still implements
    // `MessageCodec`, so none of these uses fail as well.
    let order = Order { id: 1 };
    needs_codec(&order);
    let bytes = codecbus_core::to_vec(&order).unwrap();
    let _back: Order = codecbus_core::from_slice(&bytes).unwrap();
}
