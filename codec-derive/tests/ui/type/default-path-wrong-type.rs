use codecbus_core::MessageCodec;

fn default_port() -> &'static str {
    "8080"
}

#[derive(MessageCodec, Clone)]
struct Config {
    #[codec(default = "default_port")]
    port: u16,
}

fn main() {}
