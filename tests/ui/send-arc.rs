use std::sync::Arc;

use codecbus::bus::EventBus;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let bus = EventBus::new();
    let text = Arc::new("a large text".to_string());
    let _ = bus.send("big", text).await;
}
