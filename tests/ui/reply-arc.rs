use std::sync::Arc;

use codecbus::bus::{EventBus, Message};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let bus = EventBus::new();
    let _c = bus.consumer("big", |m: Message<u8>| async move {
        m.reply(Arc::new("answer".to_string()))
    });
}
