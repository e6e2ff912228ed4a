use std::sync::Arc;

use codecbus::bus::{EventBus, Message};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let bus = EventBus::new();
    let _reply: Result<Message<Arc<String>>, _> = bus.request("big", 1u8).await;
}
