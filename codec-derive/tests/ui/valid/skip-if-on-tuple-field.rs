use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
struct Row(u64, #[codec(skip_if = "Option::is_none")] Option<String>);

fn main() {}
