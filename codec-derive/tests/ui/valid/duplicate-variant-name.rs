use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(rename_all = "lowercase")]
enum Level {
    Info,
    #[codec(rename = "info")]
    Notice,
}

fn main() {}
