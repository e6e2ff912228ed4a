//! A crate that depends on the facade under another name (`cb`) and
//! without its default features: the derive follows the rename.

use cb::bus::{EventBus, Message};
use cb::{MessageCodec, from_slice, to_vec};

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "external.renamed.v1", as_array)]
struct Reading {
    sensor: String,
    celsius: f64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let reading = Reading {
        sensor: "t1".into(),
        celsius: 21.5,
    };
    assert_eq!(from_slice::<Reading>(&to_vec(&reading)?)?, reading);

    let bus = EventBus::new();
    let _c = bus.consumer("readings", |m: Message<Reading>| async move {
        let celsius = m.body().celsius;
        m.reply(celsius * 9.0 / 5.0 + 32.0)
    });
    let f: Message<f64> = bus.request("readings", reading).await?;
    assert_eq!(*f.body(), 70.7);
    println!("renamed: derive and request work with the facade renamed to `cb`");
    Ok(())
}
