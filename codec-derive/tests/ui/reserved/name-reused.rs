use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone)]
#[codec(reserved("old_name", "nickname"))]
struct Person {
    #[codec(rename = "old_name")]
    name: String,
    nickname: Option<String>,
    // Not written: takes no name on the wire.
    #[codec(skip)]
    old_name: u8,
}

#[derive(MessageCodec, Clone)]
#[codec(rename_all = "snake_case", reserved("paused", "Stopped"))]
enum State {
    Paused,
    #[codec(rename = "Stopped")]
    Halted,
    // The wire name is `running`: free.
    Running,
}

fn main() {}
