use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(as_array)]
struct Row {
    id: u64,
    #[codec(skip_if = "Option::is_none")]
    note: Option<String>,
}

fn main() {}
