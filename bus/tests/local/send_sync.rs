//! Compile-time checks that the public handles can cross threads.

use codecbus_bus::{
    DeliveryOptions, Error, EventBus, EventBusBuilder, Headers, Message, MessageConsumer,
    MessageProducer, MessageStream, PublishError, RequestError, SendError,
};

fn require_send_sync<T: Send + Sync>() {}
fn require_send<T: Send>(_: &T) {}

#[test]
fn public_types_are_send_and_sync() {
    require_send_sync::<EventBus>();
    require_send_sync::<EventBusBuilder>();
    require_send_sync::<MessageConsumer>();
    require_send_sync::<MessageStream<String>>();
    require_send_sync::<MessageProducer<String>>();
    require_send_sync::<Message<String>>();
    require_send_sync::<Message<Vec<u64>>>();
    require_send_sync::<DeliveryOptions>();
    require_send_sync::<Headers>();
    require_send_sync::<SendError>();
    require_send_sync::<PublishError>();
    require_send_sync::<RequestError>();
    require_send_sync::<Error<codecbus_bus::SendErrorKind>>();
    require_send_sync::<codecbus_bus::BuildError>();
    #[cfg(feature = "nats")]
    require_send_sync::<codecbus_bus::NatsOptions>();
}

#[test]
fn futures_of_async_methods_are_send() {
    // Never run: only type-checked.
    if std::hint::black_box(false) {
        let bus = EventBus::new();
        require_send(&bus.send("a", 1u8));
        require_send(&bus.publish("a", 1u8));
        require_send(&bus.request::<u8>("a", 1u8));
        let stream = bus.consumer_stream::<u8>("a");
        require_send(&stream.unregister());
        let consumer = bus.consumer("a", |_m: Message<u8>| async {});
        require_send(&consumer.unregister());
        require_send(&bus.flush());
        require_send(&bus.close());
        #[cfg(feature = "nats")]
        require_send(
            &EventBus::builder()
                .nats(codecbus_bus::NatsOptions::new("x"))
                .connect(),
        );
    }
}
