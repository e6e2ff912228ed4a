use std::sync::Arc;

use codecbus::bus::{EventBus, Message};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let bus = EventBus::new();
    let _c = bus.consumer("big", |_m: Message<Arc<String>>| async {});
}
