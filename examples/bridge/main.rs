//! The event bus in a browser: a bus with a few consumers, and the SockJS
//! bridge in front of it serving a page (`examples/bridge/page.html`) that
//! sends, requests and publishes through Vert.x's JavaScript client.
//!
//! ```text
//! cargo run --example bridge --features bridge      # then open http://127.0.0.1:8080/
//! cargo run --example bridge --features bridge -- --listen 127.0.0.1:9000 --seconds 60
//! ```
//!
//! The page loads `sockjs-client` and `@vertx/eventbus-bridge-client.js`
//! from npm: the example installs them with `npm` into
//! `target/npm-bridge/` the first time (the folder the bridge tests use),
//! or takes them from `--js <node_modules folder>`.
//!
//! On the bus: `demo.upper` answers a string in capitals, `demo.order`
//! takes an `Order` (its JSON object) and answers a `Receipt`, `demo.ticks`
//! is published every second, `demo.chat` carries what the pages publish
//! to each other, and `demo.secret` is a consumer no permission lets a
//! page reach.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use codecbus::MessageCodec;
use codecbus::bus::bridge::{Bridge, BridgeOptions, PermittedOptions, SockJsOptions};
use codecbus::bus::{EventBus, Message};
use codecbus::jsobj;
use codecbus::json::JsValue;

/// What a page orders.
#[derive(MessageCodec, Clone, Debug)]
#[codec(name = "demo.order")]
struct Order {
    id: u64,
    sku: String,
    quantity: u32,
}

/// The answer to an order.
#[derive(MessageCodec, Debug)]
#[codec(immutable, name = "demo.receipt")]
struct Receipt {
    order: u64,
    sku: String,
    total_cents: i64,
}

/// The npm packages the page loads.
const PACKAGES: [&str; 2] = [
    "@vertx/eventbus-bridge-client.js@1.0.0",
    "sockjs-client@1.6.1",
];

struct Args {
    listen: String,
    seconds: Option<u64>,
    js: Option<PathBuf>,
}

fn args() -> Result<Args, String> {
    let mut args = Args {
        listen: "127.0.0.1:8080".into(),
        seconds: None,
        js: None,
    };
    let mut given = std::env::args().skip(1);
    while let Some(flag) = given.next() {
        let mut value = || given.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--listen" => args.listen = value()?,
            "--seconds" => {
                let v = value()?;
                args.seconds = Some(
                    v.parse()
                        .map_err(|_| format!("--seconds {v}: not a number"))?,
                );
            }
            "--js" => args.js = Some(PathBuf::from(value()?)),
            "-h" | "--help" => {
                return Err(
                    "usage: bridge [--listen ADDR] [--seconds N] [--js NODE_MODULES]".into(),
                );
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(args)
}

/// The `node_modules` folder with the page's scripts, installed with npm
/// into the target folder when not given.
fn scripts(given: Option<PathBuf>) -> Result<PathBuf, String> {
    if let Some(dir) = given {
        return Ok(dir);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let prefix = target.join("npm-bridge");
    let modules = prefix.join("node_modules");
    if PACKAGES.iter().all(|p| {
        let name = p.rsplit_once('@').map_or(*p, |(name, _)| name);
        modules.join(name).join("package.json").is_file()
    }) {
        return Ok(modules);
    }
    eprintln!(
        "installing {} into {} with npm",
        PACKAGES.join(" "),
        prefix.display()
    );
    let status = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
        .arg(&prefix)
        .args(PACKAGES)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| {
            format!("cannot run npm ({e}): install it (apt-get install npm) or pass --js")
        })?;
    if !status.success() {
        return Err(format!("npm could not install {}", PACKAGES.join(" ")));
    }
    Ok(modules)
}

fn read(modules: &Path, file: &str) -> Result<Vec<u8>, String> {
    let path = modules.join(file);
    std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match args() {
        Ok(args) => args,
        Err(why) => {
            eprintln!("{why}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("{why}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let modules = scripts(args.js)?;
    let bus = EventBus::new();
    let _upper = bus.consumer("demo.upper", |m: Message<JsValue>| async move {
        let text = m.body().as_str().unwrap_or_default().to_uppercase();
        m.reply(JsValue::from(text))
    });
    let _order = bus.consumer("demo.order", |m: Message<Order>| async move {
        let order = m.body();
        m.reply(Receipt {
            order: order.id,
            sku: order.sku.clone(),
            total_cents: 475 * i64::from(order.quantity),
        })
    });
    let _secret = bus.consumer("demo.secret", |m: Message<JsValue>| async move {
        m.reply(JsValue::from("nobody should read this"))
    });
    let ticker = bus.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(1));
        for tick in 0u64.. {
            every.tick().await;
            let _ = ticker
                .publish("demo.ticks", JsValue::from(jsobj! {"tick": tick}))
                .await;
        }
    });

    let options = BridgeOptions::new()
        .inbound(PermittedOptions::new().address("demo.upper"))
        .inbound(PermittedOptions::new().address("demo.order"))
        .inbound(PermittedOptions::new().address("demo.chat"))
        .outbound(PermittedOptions::new().address("demo.ticks"))
        .outbound(PermittedOptions::new().address("demo.chat"))
        .typed::<Order>("demo.order");
    let js = "application/javascript";
    let sockjs = SockJsOptions::new()
        .file("/", "text/html; charset=utf-8", include_str!("page.html"))
        .file(
            "/js/sockjs.min.js",
            js,
            read(&modules, "sockjs-client/dist/sockjs.min.js")?,
        )
        .file(
            "/js/vertx-eventbus.js",
            js,
            read(
                &modules,
                "@vertx/eventbus-bridge-client.js/vertx-eventbus.js",
            )?,
        );
    let bridge = Bridge::new(&bus, options).map_err(|e| e.to_string())?;
    let server = bridge
        .listen_sockjs(args.listen.as_str(), sockjs)
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "serving the bus on http://{}/ (open it in a browser)",
        server.local_addr()
    );
    match args.seconds {
        Some(seconds) => tokio::time::sleep(Duration::from_secs(seconds)).await,
        None => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
    server.shutdown().await;
    Ok(())
}
