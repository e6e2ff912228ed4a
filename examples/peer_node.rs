//! The Rust node that `examples/peer.py` (a peer written in Python from the
//! guide's wire contract, `book/src/wire.md`) talks to. Needs a running `nats-server`;
//! `scripts/peer-check` starts one, this node and the peer.
//!
//! ```text
//! nats-server -a 127.0.0.1 -p 4222                          # terminal 1
//! cargo run --example peer_node                              # terminal 2
//! python3 examples/peer.py nats://127.0.0.1:4222             # terminal 3
//! ```
//!
//! Options: `--url nats://HOST:PORT` (default `nats://127.0.0.1:4222`),
//! `--wire-version 1|2` (default 2: `NatsOptions::wire_version`; the peer
//! of version 1 is `python3 examples/peer.py --wire 1`). Bodies over 1 KiB
//! leave compressed (`NatsOptions::compress_above`) in version 2; version 1
//! has no compressed form.
//! Prints `ready` once its consumers are subscribed on the server, then
//! serves until Ctrl-C or SIGTERM.
//!
//! | address | body → reply | what for |
//! |---|---|---|
//! | `peer.quote` | `peer.quote-request` → `peer.quote`; fails with code 400 when `qty` is 0 | a derived type, a failure reply |
//! | `peer.upper` | `string` → `string` (upper case) | a built-in codec |
//! | `peer.echo` | `json-obj-value` → the object with `echoed: true` and `headers`: the names of the user headers it got | `JsObj`, headers |
//! | `peer.notes` | `string`, no reply | publish and send: records what came, and how |
//! | `peer.seen` | `unit` → `json-obj-value` `{publish: [...], send: [...], undecodable: n}` | what `peer.notes` got |
//! | `peer.login` | `string` (a user) → `string` `"password?"` → `string` `"otp?"` → `bool` | a conversation (`reply_and_request`) |
//! | `peer.relay` | `string` → the `string` reply of a request this node makes to `peer.py` (served by the peer); when that fails, a failure with code 502 naming the error's kind and code | the peer in the queue group, replies read by this node |
//! | `peer.codecs` | `unit` → `json-array-value` of every codec name this node knows | the registry |

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use codecbus::MessageCodec;
use codecbus::bus::{DeliveryKind, EventBus, Message, NatsOptions, WireVersion};
use codecbus::json::{JsArray, JsObj};

/// What the peer asks at `peer.quote`; the peer encodes it by hand as a map
/// `{"sku": str, "qty": int}` (or positionally, `[sku, qty]`).
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "peer.quote-request")]
struct QuoteRequest {
    sku: String,
    qty: u32,
}

/// The answer: a map with these four keys.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "peer.quote", immutable)]
struct Quote {
    sku: String,
    qty: u32,
    unit_cents: i64,
    total_cents: i64,
}

fn unit_price(sku: &str) -> i64 {
    sku.bytes().map(i64::from).sum::<i64>() % 900 + 100
}

/// What `peer.notes` received.
#[derive(Default)]
struct Notes {
    published: Vec<String>,
    sent: Vec<String>,
}

fn parse() -> Option<(String, WireVersion)> {
    let mut url = "nats://127.0.0.1:4222".to_owned();
    let mut version = WireVersion::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--url" => url = args.next()?,
            "--wire-version" => {
                version = match args.next()?.as_str() {
                    "1" => WireVersion::V1,
                    "2" => WireVersion::V2,
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    Some((url, version))
}

async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

async fn serve(url: &str, version: WireVersion) -> Result<(), String> {
    let options = NatsOptions::new(url)
        .connection_name("peer-node")
        .connection_timeout(Duration::from_secs(3))
        .max_reconnect_delay(Duration::from_millis(500))
        .wire_version(version)
        // Bodies over 1 KiB leave LZ4-compressed in version 2: the peer
        // reads them. Version 1 has no compressed form: there they leave
        // plain (and `connect` warns that this setting has no effect).
        .compress_above(1024);
    let bus = EventBus::builder()
        .default_timeout(Duration::from_secs(5))
        .nats(options)
        .connect()
        .await
        .map_err(|e| e.to_string())?;

    let _quote = bus.consumer("peer.quote", |m: Message<QuoteRequest>| async move {
        let QuoteRequest { sku, qty } = m.body().clone();
        if qty == 0 {
            return m.fail(400, format!("quantity of {sku} must be at least 1"));
        }
        let unit = unit_price(&sku);
        m.reply(Quote {
            sku,
            qty,
            unit_cents: unit,
            total_cents: unit * i64::from(qty),
        })
    });

    let _upper = bus.consumer("peer.upper", |m: Message<String>| async move {
        m.reply(m.body().to_uppercase())
    });

    let _echo = bus.consumer("peer.echo", |m: Message<JsObj>| async move {
        let mut names: Vec<&str> = m.headers().iter().map(|(name, _)| name).collect();
        names.sort_unstable();
        names.dedup();
        let names: JsArray = names.into_iter().collect();
        m.reply(m.body().set("echoed", true).set("headers", names))
    });

    let notes = Arc::new(Mutex::new(Notes::default()));
    let recorder = Arc::clone(&notes);
    let _notes = bus.consumer("peer.notes", move |m: Message<String>| {
        let recorder = Arc::clone(&recorder);
        async move {
            let mut notes = recorder.lock().unwrap_or_else(|e| e.into_inner());
            match m.kind() {
                DeliveryKind::Publish => notes.published.push(m.body().clone()),
                _ => notes.sent.push(m.body().clone()),
            }
        }
    });
    let seen_bus = bus.clone();
    let _seen = bus.consumer("peer.seen", move |m: Message<()>| {
        let notes = Arc::clone(&notes);
        let undecodable = seen_bus.metrics().undecodable;
        async move {
            let (published, sent): (JsArray, JsArray) = {
                let notes = notes.lock().unwrap_or_else(|e| e.into_inner());
                (
                    notes.published.iter().map(String::as_str).collect(),
                    notes.sent.iter().map(String::as_str).collect(),
                )
            };
            m.reply(
                JsObj::new()
                    .set("publish", published)
                    .set("send", sent)
                    .set("undecodable", undecodable),
            )
        }
    });

    let _login = bus.consumer("peer.login", |m: Message<String>| async move {
        let user = m.body().clone();
        let password: Message<String> = match m.reply_and_request("password?".to_owned()).await {
            Ok(answer) => answer,
            Err(e) => {
                println!("login of {user}: the password turn failed: {e}");
                return Ok(());
            }
        };
        if password.body() != "hunter2" {
            return password.fail(401, format!("wrong password for {user}"));
        }
        let otp: Message<String> = match password.reply_and_request("otp?".to_owned()).await {
            Ok(answer) => answer,
            Err(e) => {
                println!("login of {user}: the otp turn failed: {e}");
                return Ok(());
            }
        };
        otp.reply(otp.body() == "123456")
    });

    let relay_bus = bus.clone();
    let _relay = bus.consumer("peer.relay", move |m: Message<String>| {
        let bus = relay_bus.clone();
        async move {
            match bus.request::<String>("peer.py", m.body().clone()).await {
                Ok(answer) => m.reply(answer.body().clone()),
                Err(e) => {
                    let kind = e.kind();
                    let code = e.failure_code().map_or(-1, |c| c);
                    m.fail(502, format!("peer.py answered {kind:?} {code}: {e}"))
                }
            }
        }
    });

    let codecs_bus = bus.clone();
    let _codecs = bus.consumer("peer.codecs", move |m: Message<()>| {
        let names: JsArray = codecs_bus.codecs().iter().map(|c| c.name()).collect();
        async move { m.reply(names) }
    });

    bus.flush().await.map_err(|e| e.to_string())?;
    println!(
        "peer node on {url}, wire version {} (pid {})",
        version.number(),
        std::process::id()
    );
    println!("ready");
    stopped().await;
    bus.close().await;
    println!("bye");
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let Some((url, version)) = parse() else {
        eprintln!("usage: peer_node [--url nats://HOST:PORT] [--wire-version 1|2]");
        return ExitCode::from(2);
    };
    match serve(&url, version).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peer_node: {e}");
            ExitCode::FAILURE
        }
    }
}
