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
    // A further turn of a message that expects no reply: nobody takes it,
    // the error says why and hands the body back.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let tx = std::sync::Mutex::new(Some(tx));
    let _t = bus.consumer("turn", move |m: Message<Ping>| {
        let tx = tx.lock().unwrap().take();
        async move {
            let err = m
                .reply_and_request::<Ping>(Pong { n: 7 })
                .await
                .unwrap_err();
            if let Some(tx) = tx {
                let _ = tx.send((err.kind(), err.to_string(), err.into_body::<Pong>()));
            }
        }
    });
    bus.send("turn", Ping { n: 1 }).await?;
    let (kind, text, body) = rx.await?;
    assert_eq!(kind, codecbus_bus::RequestErrorKind::NoHandlers);
    assert_eq!(kind.as_str(), "NO_HANDLERS");
    assert_eq!(
        text,
        "Reply to address turn not taken: the message expects no reply"
    );
    assert_eq!(body.as_deref(), Some(&Pong { n: 7 }));
    let bytes = codecbus_bus::codec::to_vec(&Ping { n: 1 })?;
    assert_eq!(bytes, b"\x81\xa1n\x01");
    println!("bus-only: derive and request work with codecbus-bus alone");
    Ok(())
}
