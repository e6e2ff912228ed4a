use codecbus_core::MessageCodec;

mod as_text {
    pub fn encode(v: &u64) -> String {
        v.to_string()
    }
}

#[derive(MessageCodec, Clone)]
struct Order {
    #[codec(with = "as_text")]
    id: u64,
}

fn main() {}
