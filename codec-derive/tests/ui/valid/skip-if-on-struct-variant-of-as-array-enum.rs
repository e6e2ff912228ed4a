use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(as_array)]
enum Event {
    Moved {
        x: i32,
        #[codec(skip_if = "Option::is_none")]
        label: Option<String>,
    },
}

fn main() {}
