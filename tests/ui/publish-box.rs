use codecbus::bus::EventBus;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let bus = EventBus::new();
    let _ = bus.publish("news", Box::new(7u64)).await;
}
