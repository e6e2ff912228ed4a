//! Traffic of every layout on a NATS server, for `codecbus tap` to show:
//! a positional struct (`as_array`), a keyed one, a union and a struct
//! by name, published and sent.
//!
//! ```text
//! nats-server -p 4222                                            # terminal 1
//! codecbus tap '>' --server nats://127.0.0.1:4222 \
//!     --shapes examples/codecs.snapshot.json                     # terminal 2
//! cargo run --example traffic -- --url nats://127.0.0.1:4222     # terminal 3
//! ```
//!
//! Each message goes out once; the program exits when all have left.

use std::time::Duration;

use codecbus::MessageCodec;
use codecbus::bus::{DeliveryOptions, EventBus, NatsOptions};
use codecbus::ext::Timestamp;

/// A sensor's reading, written by position: `["hall", 21.5, <timestamp>]`.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "traffic.reading", as_array)]
pub struct Reading {
    /// The sensor's name.
    pub sensor: String,
    /// The temperature.
    pub celsius: f32,
    /// When it was read.
    pub at: Timestamp,
}

/// An account, written by stable keys: `[id, nil, owner]`.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "traffic.account", reserved(1))]
pub struct Account {
    /// Its id.
    #[codec(key = 0)]
    pub id: u64,
    /// Who owns it.
    #[codec(key = 2)]
    pub owner: String,
}

/// What happened, written as `[tag, payload]`.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "traffic.event", union)]
pub enum Event {
    /// An account was opened.
    #[codec(tag = 1)]
    Opened {
        /// The account's id.
        account: u64,
    },
    /// A reading came in.
    #[codec(tag = 2)]
    Read(Reading),
    /// The day was closed.
    #[codec(tag = 3)]
    Closed,
}

/// A note, written by name (the default layout).
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "traffic.note")]
pub struct Note {
    /// What it says.
    pub text: String,
}

/// The readings' address.
pub const SENSORS: &str = "sensors";
/// The accounts' address.
pub const ACCOUNTS: &str = "accounts";
/// The events' address.
pub const EVENTS: &str = "events";
/// The notes' address.
pub const NOTES: &str = "notes";

/// The reading every run sends.
pub fn reading() -> Reading {
    Reading {
        sensor: "hall".into(),
        celsius: 21.5,
        at: Timestamp::new(1_767_225_600, 0).expect("a valid timestamp"),
    }
}

/// Sends one message of each kind through `bus`: five in all.
pub async fn send_all(bus: &EventBus) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    bus.publish(SENSORS, reading()).await.map_err(|e| err(&e))?;
    let account = Account {
        id: 7,
        owner: "ada".into(),
    };
    bus.send(ACCOUNTS, account).await.map_err(|e| err(&e))?;
    bus.publish(EVENTS, Event::Opened { account: 7 })
        .await
        .map_err(|e| err(&e))?;
    bus.publish(EVENTS, Event::Read(reading()))
        .await
        .map_err(|e| err(&e))?;
    let note = Note {
        text: "closing early".into(),
    };
    let options = DeliveryOptions::new().header("from", "traffic");
    bus.publish_with(NOTES, note, options)
        .await
        .map_err(|e| err(&e))?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let mut url = "nats://127.0.0.1:4222".to_owned();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--url" => url = args.next().ok_or("--url needs a value")?,
            other => {
                return Err(format!(
                    "unknown argument {other:?}\nusage: traffic [--url nats://HOST:PORT]"
                ));
            }
        }
    }
    let bus = EventBus::builder()
        .nats(NatsOptions::new(&url).connection_timeout(Duration::from_secs(3)))
        .connect()
        .await
        .map_err(|e| e.to_string())?;
    send_all(&bus).await?;
    bus.flush().await.map_err(|e| e.to_string())?;
    bus.close().await;
    println!("sent 5 messages to {url}");
    Ok(())
}
