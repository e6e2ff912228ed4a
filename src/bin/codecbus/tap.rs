//! `codecbus tap ADDRESS`: the traffic of a bus address on NATS, each
//! message's body shown as JSON with the field names of its codec's shape
//! (`codecbus::shape::render`).

use std::ffi::OsString;
use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::time::Duration;

use codecbus::bus::{NatsOptions, Tap, Tapped};
use codecbus::shape::ShapeSet;
use codecbus::shape::render::to_json;
use serde_json::{Map, Value};

use crate::{Usage, Words};

const USAGE: &str = "\
usage: codecbus tap ADDRESS [options]

Prints every publish, send and request to ADDRESS (`>` for every address)
as it crosses NATS: its address, codec, headers, size and body, the body
shown as JSON with the field names of its codec's shape. The shapes come
from snapshot files (--shapes), from the running nodes (which tell them
on the subject PREFIX.shapes) and from the codecs this program knows (the
built-in ones), in that order; a body of another codec is shown as plain
MessagePack and marked so.

  --server URL          a NATS server (repeatable; default nats://127.0.0.1:4222)
  --prefix PREFIX       the bus's subject prefix (default codecbus)
  --user USER --password PASSWORD | --token TOKEN | --nkey SEED | --creds FILE
                        credentials, as the bus's NatsOptions take them
  --tls                 require TLS
  --tls-ca FILE         the root certificates to trust (PEM)
  --tls-cert FILE --tls-key FILE
                        a client certificate (PEM)
  --shapes FILE         a shape snapshot (repeatable; a folder: its .json files)
  --json                one JSON object per line, for scripts
  --count N             stop after N messages
  --for SECONDS         stop after this long

Exit status: 0 when it stopped as asked, 2 for bad input, usage or a failed
connection.";

/// What the command line asked for.
struct Args {
    address: String,
    options: NatsOptions,
    shapes: ShapeSet,
    json: bool,
    count: Option<u64>,
    limit: Option<Duration>,
}

/// Runs `codecbus tap` with `args` (after `tap`).
pub(crate) fn run(args: Vec<OsString>) -> Result<(), Usage> {
    let Some(args) = parse(args)? else {
        println!("{USAGE}");
        return Ok(());
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Usage(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(tap(args))
}

fn parse(args: Vec<OsString>) -> Result<Option<Args>, Usage> {
    let usage = |message: String| Usage(format!("{message}\n{USAGE}"));
    let mut words = Words::new(args, USAGE);
    let mut address = None;
    let mut servers = Vec::new();
    let mut prefix = None;
    let (mut user, mut password) = (None, None);
    let (mut token, mut nkey, mut creds) = (None, None, None);
    let (mut tls, mut tls_ca, mut tls_cert, mut tls_key) = (false, None, None, None);
    let mut shape_paths = Vec::new();
    let mut json = false;
    let mut count = None;
    let mut limit = None;
    while let Some(word) = words.next() {
        let text = word.text.clone();
        match word.option.as_str() {
            "-h" | "--help" => return Ok(None),
            "--server" => servers.push(words.value(&word)?),
            "--prefix" => prefix = Some(words.value(&word)?),
            "--user" => user = Some(words.value(&word)?),
            "--password" => password = Some(words.value(&word)?),
            "--token" => token = Some(words.value(&word)?),
            "--nkey" => nkey = Some(words.value(&word)?),
            "--creds" => creds = Some(PathBuf::from(words.value(&word)?)),
            "--tls" => tls = true,
            "--tls-ca" => tls_ca = Some(PathBuf::from(words.value(&word)?)),
            "--tls-cert" => tls_cert = Some(PathBuf::from(words.value(&word)?)),
            "--tls-key" => tls_key = Some(PathBuf::from(words.value(&word)?)),
            "--shapes" => shape_paths.push(PathBuf::from(words.value(&word)?)),
            "--json" => json = true,
            "--count" => {
                let v = words.value(&word)?;
                count = Some(
                    v.parse::<u64>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| usage(format!("--count {v}: a whole number above 0")))?,
                );
            }
            "--for" => {
                let v = words.value(&word)?;
                limit = Some(
                    v.parse::<f64>()
                        .ok()
                        .and_then(|s| Duration::try_from_secs_f64(s).ok())
                        .filter(|d| !d.is_zero())
                        .ok_or_else(|| usage(format!("--for {v}: a number of seconds above 0")))?,
                );
            }
            o if o.starts_with('-') && o.len() > 1 => {
                return Err(usage(format!("unknown option `{o}`")));
            }
            _ if address.is_some() => {
                return Err(usage(format!("one ADDRESS only, `{text}` is a second")));
            }
            _ => address = Some(text),
        }
    }
    let address =
        address.ok_or_else(|| usage("no ADDRESS given (`>` for every address)".into()))?;

    if servers.is_empty() {
        servers.push("nats://127.0.0.1:4222".to_owned());
    }
    let mut options = NatsOptions::with_servers(servers)
        .connection_name("codecbus tap")
        .connection_timeout(Duration::from_secs(5));
    if let Some(prefix) = prefix {
        options = options.subject_prefix(prefix);
    }
    match (user, password) {
        (Some(user), Some(password)) => options = options.user_and_password(user, password),
        (None, None) => {}
        _ => return Err(usage("--user and --password go together".into())),
    }
    if let Some(token) = token {
        options = options.token(token);
    }
    if let Some(seed) = nkey {
        options = options.nkey(seed);
    }
    if let Some(path) = creds {
        options = options.credentials_file(path);
    }
    if tls {
        options = options.require_tls(true);
    }
    if let Some(path) = tls_ca {
        options = options.root_certificates(path);
    }
    match (tls_cert, tls_key) {
        (Some(cert), Some(key)) => options = options.client_certificate(cert, key),
        (None, None) => {}
        _ => return Err(usage("--tls-cert and --tls-key go together".into())),
    }

    let mut shapes = ShapeSet::new();
    for path in shape_paths {
        let files = if path.is_dir() {
            crate::snapshots_in(&path)?
        } else {
            vec![path]
        };
        for file in files {
            for codec in crate::read(&file)?.iter() {
                shapes.insert(codec.clone());
            }
        }
    }
    Ok(Some(Args {
        address,
        options,
        shapes,
        json,
        count,
        limit,
    }))
}

async fn tap(args: Args) -> Result<(), Usage> {
    let Args {
        address,
        options,
        shapes,
        json,
        count,
        limit,
    } = args;
    let mut tap = Tap::connect(options, &address)
        .await
        .map_err(|e| Usage(format!("{e}")))?;
    eprintln!(
        "codecbus tap: watching {} ({} codec shapes given, {} told by the running nodes)",
        if address == ">" {
            "every address"
        } else {
            &address
        },
        shapes.len(),
        tap.shapes().len()
    );
    let colors = !json && std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let builtin = ShapeSet::registered();
    let deadline = limit.map(|d| tokio::time::Instant::now() + d);
    let mut seen = 0u64;
    let mut out = std::io::stdout().lock();
    while count.is_none_or(|n| seen < n) {
        let next = match deadline {
            Some(at) => match tokio::time::timeout_at(at, tap.next()).await {
                Ok(next) => next,
                Err(_) => break,
            },
            None => tap.next().await,
        };
        let Some(message) = next else { break };
        seen += 1;
        let shown = show(&message, &shapes, tap.shapes(), &builtin);
        let written = if json {
            writeln!(out, "{shown}")
        } else {
            write_block(&mut out, &message, &shown, colors)
        };
        // A closed pipe (`| head`) ends the tap quietly.
        if written.and_then(|()| out.flush()).is_err() {
            break;
        }
    }
    drop(out);
    tap.close().await;
    Ok(())
}

/// The message as one JSON object, its body by the first of the shape
/// sets that has its codec.
fn show(message: &Tapped, given: &ShapeSet, told: &ShapeSet, builtin: &ShapeSet) -> Value {
    let mut object = Map::new();
    object.insert("subject".into(), Value::from(message.subject.as_str()));
    object.insert("address".into(), Value::from(message.address.as_str()));
    object.insert("kind".into(), Value::from(message.kind.as_str()));
    object.insert(
        "codec".into(),
        message.codec.as_deref().map_or(Value::Null, Value::from),
    );
    let mut headers = Map::new();
    for (name, value) in message.headers.iter() {
        match headers.get_mut(name) {
            Some(Value::Array(values)) => values.push(Value::from(value)),
            Some(first) => *first = Value::Array(vec![first.take(), Value::from(value)]),
            None => {
                headers.insert(name.to_owned(), Value::from(value));
            }
        }
    }
    object.insert("headers".into(), Value::Object(headers));
    object.insert("size".into(), Value::from(message.size));
    let shape = message.codec.as_deref().and_then(|name| {
        [given, told, builtin]
            .into_iter()
            .find_map(|set| set.find(name))
    });
    object.insert("shaped".into(), Value::Bool(shape.is_some()));
    let body = match &message.unreadable {
        Some(why) => Err(why.clone()),
        None => to_json(&message.body, shape).map_err(|e| e.to_string()),
    };
    match body {
        Ok(body) => {
            object.insert("body".into(), body);
        }
        Err(why) => {
            object.insert("body".into(), Value::Null);
            object.insert("error".into(), Value::from(why));
        }
    }
    Value::Object(object)
}

/// The message as a block for a person: a line of what it is, its
/// headers, its body pretty-printed.
fn write_block(
    out: &mut impl std::io::Write,
    message: &Tapped,
    shown: &Value,
    colors: bool,
) -> std::io::Result<()> {
    let (bold, dim, reset) = if colors {
        ("\x1b[1;36m", "\x1b[2m", "\x1b[0m")
    } else {
        ("", "", "")
    };
    let codec = match (&message.codec, shown["shaped"].as_bool()) {
        (Some(codec), Some(true)) => codec.clone(),
        (Some(codec), _) => format!("{codec} (shape unknown: plain MessagePack)"),
        (None, _) => "no codec named (plain MessagePack)".to_owned(),
    };
    writeln!(
        out,
        "{bold}{} {}{reset} {dim}· {codec} · {} bytes{reset}",
        message.kind.as_str(),
        message.address,
        message.size
    )?;
    for (name, value) in message.headers.iter() {
        writeln!(out, "  {dim}{name}:{reset} {value}")?;
    }
    match shown.get("error").and_then(Value::as_str) {
        Some(why) => writeln!(out, "  cannot show the body: {why}")?,
        None => {
            let body = serde_json::to_string_pretty(&shown["body"]).unwrap_or_default();
            writeln!(out, "{body}")?;
        }
    }
    writeln!(out)
}
