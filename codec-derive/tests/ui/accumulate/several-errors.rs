use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(as_array, rename_all = "Camel")]
struct Order {
    #[codec(renam = "id")]
    id: u64,
    #[codec(skip_if = "Option::is_none")]
    note: Option<String>,
    #[codec(default, default)]
    count: u32,
}

fn main() {}
