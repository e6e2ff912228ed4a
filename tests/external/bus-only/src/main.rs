//! A crate that depends on `codecbus-bus` alone: the derive reaches the
//! codec crate through the bus's re-export (`codecbus_bus::codec`).

use codecbus_bus::{EventBus, Message, MessageCodec};

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "external.ping.v1")]
struct Ping {
    n: u32,
}

#[derive(MessageCodec, Debug, PartialEq)]
#[codec(immutable)]
struct Pong {
    n: u32,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let bus = EventBus::new();
    let _c = bus.consumer("ping", |m: Message<Ping>| async move {
        let n = m.body().n;
        m.reply(Pong { n: n + 1 })
    });
    let pong: Message<Pong> = bus.request("ping", Ping { n: 41 }).await?;
    assert_eq!(pong.body(), &Pong { n: 42 });
    let bytes = codecbus_bus::codec::to_vec(&Ping { n: 1 })?;
    assert_eq!(bytes, b"\x81\xa1n\x01");
    println!("bus-only: derive and request work with codecbus-bus alone");
    Ok(())
}
