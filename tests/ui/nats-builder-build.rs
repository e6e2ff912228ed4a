use codecbus::bus::{EventBus, NatsOptions};

fn main() {
    let _bus = EventBus::builder()
        .nats(NatsOptions::new("nats://127.0.0.1:4222"))
        .build();
}
