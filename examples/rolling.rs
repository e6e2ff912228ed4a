//! A rolling deploy, one process per node: three builds of one message
//! type meet on NATS, and each node says what it makes of the others'
//! shapes.
//!
//! - build 1 writes `rolling.order` as `{id}`;
//! - build 2 made a new field required, `{id, customer}`: it cannot read
//!   build 1's orders (nor build 3's);
//! - build 3 added an optional field, `{id, note}`: every build reads it,
//!   and it reads every build.
//!
//! ```text
//! nats-server -js -p 4222                                              # terminal 1
//! cargo run --example rolling -- --build 2 --serve --jetstream         # terminal 2: serves orders.b2
//! cargo run --example rolling -- --build 1 --ask orders.b2             # terminal 3: refused, SHAPE_MISMATCH
//! cargo run --example rolling -- --build 3 --ask orders.b2             # refused too: build 2 needs `customer`
//! cargo run --example rolling -- --build 3 --report --jetstream        # the shapes of the bucket
//! ```
//!
//! Node 2 logs the mismatch when the others join, before their first
//! message (`RUST_LOG` is not needed: warnings and errors are printed).
//! Options: `--url nats://HOST:PORT` (default `nats://127.0.0.1:4222`);
//! `--jetstream`: the node uses JetStream (a durable address of its own),
//! so it writes its shapes into the bucket `codecbus-shapes` and reads the
//! bucket's when it joins; `--serve` runs until standard input closes
//! (for `--seconds N` instead, if given), then prints its report; `--ask ADDRESS` sends one
//! order and prints what came back, then the report; `--report` prints
//! the report once the node has met the others.

use std::time::Duration;

use codecbus::MessageCodec;
use codecbus::bus::{CodecRegistration, DurableOptions, EventBus, Message, NatsOptions};
use tokio::io::AsyncReadExt as _;

/// The codec every build names its order by.
const ORDER: &str = "rolling.order";

/// Build 1's order.
#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered)]
struct OrderV1 {
    id: u64,
}

/// Build 2's: a new required field.
#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered)]
struct OrderV2 {
    id: u64,
    customer: String,
}

/// Build 3's: a new optional field.
#[derive(MessageCodec, Clone, Debug)]
#[codec(unregistered)]
struct OrderV3 {
    id: u64,
    note: Option<String>,
}

enum Role {
    Serve,
    Ask(String),
    Report,
}

struct Args {
    url: String,
    build: u8,
    role: Role,
    jetstream: bool,
    seconds: Option<u64>,
}

fn args() -> Result<Args, String> {
    let usage = "usage: rolling --build 1|2|3 (--serve | --ask ADDRESS | --report) [--url URL] [--jetstream] [--seconds N]";
    let mut url = "nats://127.0.0.1:4222".to_owned();
    let (mut build, mut role, mut jetstream, mut seconds) = (None, None, false, None);
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value\n{usage}"));
        match arg.as_str() {
            "--url" => url = value("--url")?,
            "--build" => {
                build = value("--build")?
                    .parse::<u8>()
                    .ok()
                    .filter(|b| (1..=3).contains(b))
            }
            "--serve" => role = Some(Role::Serve),
            "--ask" => role = Some(Role::Ask(value("--ask")?)),
            "--report" => role = Some(Role::Report),
            "--jetstream" => jetstream = true,
            "--seconds" => seconds = value("--seconds")?.parse().ok(),
            other => return Err(format!("unknown argument {other:?}\n{usage}")),
        }
    }
    Ok(Args {
        url,
        build: build.ok_or(format!("--build 1, 2 or 3\n{usage}"))?,
        role: role.ok_or(format!("--serve, --ask or --report\n{usage}"))?,
        jetstream,
        seconds,
    })
}

#[tokio::main]
async fn main() -> Result<(), String> {
    // The bus's warnings and errors (the shapes' mismatches among them) on
    // standard error.
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let Args {
        url,
        build,
        role,
        jetstream,
        seconds,
    } = args()?;
    let name = format!("build{build}");
    let mut options = NatsOptions::new(&url)
        .connection_name(&name)
        .connection_timeout(Duration::from_secs(3));
    if jetstream {
        options = options.durable(format!("rolling.audit.b{build}"), DurableOptions::new());
    }
    let codec = match build {
        1 => CodecRegistration::of::<OrderV1>(ORDER),
        2 => CodecRegistration::of::<OrderV2>(ORDER),
        _ => CodecRegistration::of::<OrderV3>(ORDER),
    };
    let bus = EventBus::builder()
        .default_timeout(Duration::from_secs(5))
        .codec(codec)
        .nats(options)
        .connect()
        .await
        .map_err(|e| e.to_string())?;
    // The others answer at once; a moment lets their shapes arrive.
    tokio::time::sleep(Duration::from_millis(300)).await;
    match role {
        Role::Serve => {
            let address = format!("orders.b{build}");
            let _consumer = match build {
                1 => bus.consumer(&address, |m: Message<OrderV1>| async move {
                    m.reply(m.body().id)
                }),
                2 => bus.consumer(&address, |m: Message<OrderV2>| async move {
                    m.reply(m.body().id)
                }),
                _ => bus.consumer(&address, |m: Message<OrderV3>| async move {
                    m.reply(m.body().id)
                }),
            };
            bus.flush().await.map_err(|e| e.to_string())?;
            println!("ready: build {build} serves {address}");
            match seconds {
                Some(s) => tokio::time::sleep(Duration::from_secs(s)).await,
                None => {
                    let mut stdin = tokio::io::stdin();
                    let mut byte = [0u8; 1];
                    while let Ok(1) = stdin.read(&mut byte).await {}
                }
            }
        }
        Role::Ask(address) => {
            let asked = match build {
                1 => bus.request::<u64>(&address, OrderV1 { id: 7 }).await,
                2 => {
                    let order = OrderV2 {
                        id: 7,
                        customer: "ada".into(),
                    };
                    bus.request::<u64>(&address, order).await
                }
                _ => {
                    bus.request::<u64>(&address, OrderV3 { id: 7, note: None })
                        .await
                }
            };
            match asked {
                Ok(reply) => println!("answered: {}", reply.body()),
                Err(e) => println!("refused: {} {e}", e.kind()),
            }
        }
        Role::Report => {}
    }
    let metrics = bus.metrics();
    println!("report of build {build}:\n{}", bus.shape_report());
    println!(
        "shape_mismatches {} shape_differences {}",
        metrics.shape_mismatches, metrics.shape_differences
    );
    bus.close().await;
    Ok(())
}
