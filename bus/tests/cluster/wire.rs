//! The wire, pinned: what a node writes for each case of the guide's wire
//! chapter (`book/src/wire.md`), in each wire version, captured on a real
//! nats-server by a plain NATS client subscribed to every subject, as a
//! peer sees it, and compared byte for byte with the committed corpus in
//! `bus/tests/wire/corpus/` (its `README.md` says the format). The Python
//! peer (`examples/peer.py --corpus`) decodes the same files with its own
//! reader.
//!
//! A released version's bytes never change: a change to what a node
//! writes is a new `WireVersion`, its corpus blessed and the CHANGELOG
//! saying so. `CODECBUS_BLESS_WIRE=1` rewrites the corpus from what the
//! code writes (then review the diff).
#![cfg(feature = "nats")]

use crate::harness;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use codecbus_bus::{
    DeliveryOptions, EventBus, Message, ReplyOptions, RequestErrorKind, WireVersion,
};
use codecbus_core::MessageCodec;
use futures_util::StreamExt;
use harness::NatsServer;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Every version a node writes, oldest first: the last is the current one.
/// A new `WireVersion` joins this list, and its corpus is blessed.
const VERSIONS: [WireVersion; 2] = [WireVersion::V1, WireVersion::V2];

/// The rule a change to the current version's bytes breaks.
const UNVERSIONED: &str =
    "the wire changed without a new version: bump it and say so in the CHANGELOG";

/// The environment variable that rewrites the corpus.
const BLESS: &str = "CODECBUS_BLESS_WIRE";

/// A message's subject or reply subject that is a client's inbox
/// (`_INBOX.` and random tokens) is written as this.
const INBOX: &str = "_INBOX";

/// The body of the `send` and `user-headers` cases: a derived type, a map
/// by field name.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "corpus.order")]
struct Order {
    id: u64,
    sku: String,
    qty: u32,
}

/// One case of the corpus, as its file holds it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Case {
    /// The wire version the messages are written in.
    wire_version: u8,
    /// The case's name (the file's, without `.json`).
    case: String,
    /// What happens, in words.
    about: String,
    /// What the nodes wrote, in the order the server relayed it.
    messages: Vec<Wire>,
}

/// One NATS message as a peer receives it, and what it carries.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Wire {
    /// Who wrote it, in the case's words.
    from: String,
    /// The subject; [`INBOX`] for a client's inbox.
    subject: String,
    /// The reply subject, if any ([`INBOX`]: a client's inbox).
    reply: Option<String>,
    /// Every header as `name: value`, as a line of the NATS header
    /// block, sorted by name (NATS keeps no order between names), values
    /// of one name in their order.
    headers: Vec<String>,
    /// The payload, as lower-case hex, a space between bytes.
    payload: String,
    /// What the payload holds: a body of a codec, or a failure.
    carries: Carries,
}

/// What a message carries, as its sender meant it (not read from its
/// bytes: the readers check their reading against it).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Carries {
    /// A body: its codec's name, and its value as JSON.
    Body {
        codec: String,
        value: serde_json::Value,
    },
    /// A failure reply: its kind, code and text.
    Failure {
        kind: String,
        code: i32,
        message: String,
    },
}

fn body(codec: &str, value: serde_json::Value) -> Carries {
    Carries::Body {
        codec: codec.to_owned(),
        value,
    }
}

fn failure(kind: &str, code: i32, message: &str) -> Carries {
    Carries::Failure {
        kind: kind.to_owned(),
        code,
        message: message.to_owned(),
    }
}

/// The corpus folder.
fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wire/corpus")
}

/// `path` as the repository names it (`bus/tests/wire/corpus/...`).
fn shown(path: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn case_path(version: WireVersion, case: &str) -> PathBuf {
    corpus_dir()
        .join(format!("v{}", version.number()))
        .join(format!("{case}.json"))
}

/// A node writing `version`; `compress_above` bytes, when given.
async fn node(server: &NatsServer, version: WireVersion, compress: Option<usize>) -> EventBus {
    let mut options = crate::common::nats_options(&server.url()).wire_version(version);
    if let Some(above) = compress {
        options = options.compress_above(above);
    }
    EventBus::builder()
        .default_timeout(Duration::from_secs(5))
        .nats(options)
        .connect()
        .await
        .expect("connect to the test server")
}

/// A plain NATS client subscribed to the bus's subjects and to the
/// clients' request inboxes: what any peer could see of what the nodes
/// write.
///
/// Not to `>`: a node's flush is a request to an inbox nobody listens on
/// (`_INBOX.` and one token), answered "no responders" by the server, and
/// a subscriber there would hold it; a request's reply subject has two
/// tokens after `_INBOX.`. The two subscriptions keep their own orders;
/// a case's messages to the bus's subjects come before those to an inbox
/// (every case is so built), so that is the order of the whole.
struct Sniffer {
    /// Keeps the connection open.
    _client: async_nats::Client,
    subjects: async_nats::Subscriber,
    inboxes: async_nats::Subscriber,
}

impl Sniffer {
    async fn new(server: &NatsServer) -> Self {
        let client = async_nats::connect(server.url()).await.unwrap();
        let subjects = client.subscribe("codecbus.>").await.unwrap();
        let inboxes = client.subscribe("_INBOX.*.*").await.unwrap();
        client.flush().await.unwrap();
        Self {
            _client: client,
            subjects,
            inboxes,
        }
    }

    /// The next message on either subscription, within `until`.
    async fn one(&mut self, until: tokio::time::Instant) -> Option<async_nats::Message> {
        let next = async {
            tokio::select! {
                Some(m) = self.subjects.next() => m,
                Some(m) = self.inboxes.next() => m,
            }
        };
        tokio::time::timeout_at(until, next).await.ok()
    }

    /// The next `n` messages whose subject `keep` takes, within 10 s.
    async fn next(&mut self, n: usize, keep: &dyn Fn(&str) -> bool) -> Vec<async_nats::Message> {
        let until = tokio::time::Instant::now() + Duration::from_secs(10);
        let (mut subjects, mut inboxes) = (Vec::new(), Vec::new());
        while subjects.len() + inboxes.len() < n {
            let Some(message) = self.one(until).await else {
                panic!(
                    "{} of {n} messages seen within 10 s",
                    subjects.len() + inboxes.len()
                );
            };
            if !keep(&message.subject) {
                continue;
            }
            if message.subject.starts_with("_INBOX.") {
                inboxes.push(message);
            } else {
                subjects.push(message);
            }
        }
        subjects.extend(inboxes);
        subjects
    }

    /// Fails when a message `keep` takes arrives within 100 ms: a case
    /// wrote more than it should.
    async fn quiet(&mut self, case: &str, keep: &dyn Fn(&str) -> bool) {
        let until = tokio::time::Instant::now() + Duration::from_millis(100);
        while let Some(message) = self.one(until).await {
            assert!(
                !keep(&message.subject),
                "case {case}: one message more than expected: {message:?}"
            );
        }
    }
}

/// What a case's messages are: the bus's core subjects (not the `ping`
/// address of the no-handlers case) and the nodes' inboxes, where
/// replies and turns go; not the nodes' codec shapes, which they tell
/// each other as they join (`codecbus.shapes`, answered on
/// `_INBOX.<id>.shapes`).
fn core(subject: &str) -> bool {
    if subject == "codecbus.shapes" || subject.ends_with(".shapes") {
        return false;
    }
    (subject.starts_with("codecbus.") && subject != "codecbus.s.corpus.ping")
        || subject.starts_with("_INBOX.")
}

/// `subject` with a client's inbox written as [`INBOX`].
fn normal(subject: &str) -> String {
    if subject.starts_with("_INBOX.") {
        INBOX.to_owned()
    } else {
        subject.to_owned()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A message as the corpus holds it, with what it carries.
fn wire(message: &async_nats::Message, from: &str, carries: Carries) -> Wire {
    let mut headers = Vec::new();
    if let Some(map) = &message.headers {
        for (name, values) in map.iter() {
            let name: &str = name.as_ref();
            for value in values {
                headers.push((name.to_owned(), value.as_str().to_owned()));
            }
        }
    }
    headers.sort_by(|a, b| a.0.cmp(&b.0));
    let headers = headers
        .into_iter()
        .map(|(name, value)| format!("{name}: {value}"))
        .collect();
    Wire {
        from: from.to_owned(),
        subject: normal(&message.subject),
        reply: message.reply.as_deref().map(normal),
        headers,
        payload: hex(&message.payload),
        carries,
    }
}

/// The case `name`: the messages `sniffer` sees after `run`, each with
/// who wrote it and what it carries (`expect`, in order).
async fn capture<F: std::future::Future<Output = ()>>(
    sniffer: &mut Sniffer,
    version: WireVersion,
    name: &str,
    about: &str,
    keep: &dyn Fn(&str) -> bool,
    expect: Vec<(&str, Carries)>,
    run: F,
) -> Case {
    let ((), messages) = tokio::join!(run, sniffer.next(expect.len(), keep));
    sniffer.quiet(name, keep).await;
    Case {
        wire_version: version.number(),
        case: name.to_owned(),
        about: about.to_owned(),
        messages: messages
            .iter()
            .zip(expect)
            .map(|(message, (from, carries))| wire(message, from, carries))
            .collect(),
    }
}

/// Every case in `version`, on a fresh server.
async fn cases(version: WireVersion) -> Vec<Case> {
    let server = NatsServer::for_test("wire::a_node_writes_the_corpus");
    let mut sniffer = Sniffer::new(&server).await;
    let a = node(&server, version, None).await;
    let b = node(&server, version, None).await;

    let _orders = b.consumer("corpus.orders", |_: Message<Order>| async {});
    let _news = b.consumer("corpus.news", |_: Message<String>| async {});
    let _double = b.consumer("corpus.double", |m: Message<u64>| async move {
        m.reply(*m.body() * 2)
    });
    let _quote = b.consumer("corpus.quote", |m: Message<Order>| async move {
        m.fail(
            422,
            format!("quantity of {} must be at least 1", m.body().sku),
        )
    });
    let _login = b.consumer("corpus.login", |m: Message<String>| async move {
        // The turn: a reply that asks for an answer.
        let answer = m.reply_and_request::<String>("password?".to_owned()).await;
        assert_eq!(answer.unwrap().body(), "hunter2");
    });
    let _echo = b.consumer("corpus.echo", |m: Message<u64>| async move {
        let options = ReplyOptions::new().header("X-Replied-By", "b");
        m.reply_with(*m.body(), options)
    });
    b.flush().await.unwrap();

    let order = Order {
        id: 7,
        sku: "tea".to_owned(),
        qty: 3,
    };
    let order_json = json!({"id": 7, "sku": "tea", "qty": 3});
    let mut all = Vec::new();

    all.push(
        capture(
            &mut sniffer,
            version,
            "send",
            "a.send(\"corpus.orders\", Order { id: 7, sku: \"tea\", qty: 3 }), a derived type named corpus.order",
            &core,
            vec![("sender", body("corpus.order", order_json.clone()))],
            async { a.send("corpus.orders", order.clone()).await.unwrap() },
        )
        .await,
    );

    all.push(
        capture(
            &mut sniffer,
            version,
            "publish",
            "a.publish(\"corpus.news\", \"hello\")",
            &core,
            vec![("publisher", body("string", json!("hello")))],
            async {
                a.publish("corpus.news", "hello".to_owned()).await.unwrap();
            },
        )
        .await,
    );

    all.push(
        capture(
            &mut sniffer,
            version,
            "request",
            "a.request::<u64>(\"corpus.double\", 21u64), and b's reply 42",
            &core,
            vec![
                ("requester", body("u64", json!(21))),
                ("replier", body("u64", json!(42))),
            ],
            async {
                let reply: Message<u64> = a.request("corpus.double", 21u64).await.unwrap();
                assert_eq!(*reply.body(), 42);
            },
        )
        .await,
    );

    all.push(
        capture(
            &mut sniffer,
            version,
            "user-headers",
            "a.request_with::<u64>(\"corpus.echo\", 5u64, headers Trace-Id: 7f3a, Tag: a, Tag: b), and b's reply with the header X-Replied-By: b",
            &core,
            vec![
                ("requester", body("u64", json!(5))),
                ("replier", body("u64", json!(5))),
            ],
            async {
                let options = DeliveryOptions::new()
                    .header("Trace-Id", "7f3a")
                    .header("Tag", "a")
                    .header("Tag", "b");
                let reply: Message<u64> =
                    a.request_with("corpus.echo", 5u64, options).await.unwrap();
                assert_eq!(reply.headers().get("X-Replied-By"), Some("b"));
            },
        )
        .await,
    );

    all.push(
        capture(
            &mut sniffer,
            version,
            "reply-and-request",
            "a.request::<String>(\"corpus.login\", \"alice\"); b answers with reply_and_request(\"password?\"), a turn carrying a reply subject; a replies \"hunter2\" to the turn, which ends the conversation",
            &core,
            vec![
                ("requester", body("string", json!("alice"))),
                ("replier", body("string", json!("password?"))),
                ("requester", body("string", json!("hunter2"))),
            ],
            async {
                let turn: Message<String> = a.request("corpus.login", "alice".to_owned()).await.unwrap();
                assert_eq!(turn.body(), "password?");
                turn.reply("hunter2".to_owned()).unwrap();
            },
        )
        .await,
    );

    let empty = Order {
        id: 8,
        sku: "tea".to_owned(),
        qty: 0,
    };
    all.push(
        capture(
            &mut sniffer,
            version,
            "failure",
            "a.request::<u64>(\"corpus.quote\", Order { id: 8, sku: \"tea\", qty: 0 }); b's consumer calls m.fail(422, \"quantity of tea must be at least 1\")",
            &core,
            vec![
                ("requester", body("corpus.order", json!({"id": 8, "sku": "tea", "qty": 0}))),
                ("replier", failure("RECIPIENT_FAILURE", 422, "quantity of tea must be at least 1")),
            ],
            async {
                let err = a.request::<u64>("corpus.quote", empty.clone()).await.unwrap_err();
                assert_eq!(err.failure_code(), Some(422));
            },
        )
        .await,
    );

    all.push(no_handlers(&mut sniffer, version, &server, &a, &b).await);

    let text = "compress me ".repeat(50);
    let c = node(&server, version, Some(64)).await;
    all.push(
        capture(
            &mut sniffer,
            version,
            "compressed",
            "c.send(\"corpus.news\", \"compress me \" × 50) from a node with compress_above(64): a body of 603 bytes, LZ4-compressed in version 2; version 1 has no compressed form and sends it plain",
            &core,
            vec![("sender", body("string", json!(text)))],
            async { c.send("corpus.news", text.clone()).await.unwrap() },
        )
        .await,
    );

    #[cfg(feature = "jetstream")]
    all.push(durable(version).await);

    for bus in [a, b, c] {
        bus.close().await;
    }
    all
}

/// A request that reaches a node whose last consumer of the address left
/// while the request waited in its subscription: the node answers
/// `NO_HANDLERS`. The address's reader is held on a first message (its
/// handler runs on the reader's task and blocks it) while the request
/// arrives and the consumer unregisters; then it goes on, and finds no
/// consumer for the request.
async fn no_handlers(
    sniffer: &mut Sniffer,
    version: WireVersion,
    server: &NatsServer,
    a: &EventBus,
    b: &EventBus,
) -> Case {
    let (release, held) = std::sync::mpsc::channel::<()>();
    let held = Arc::new(std::sync::Mutex::new(held));
    let (entered, mut inside) = tokio::sync::mpsc::unbounded_channel::<()>();
    let gone = b.consumer("corpus.gone", move |m: Message<String>| {
        if m.body() == "hold" {
            let _ = entered.send(());
            let held = held.lock().unwrap();
            // Blocks the reader's task, which started this run, until
            // released.
            tokio::task::block_in_place(|| held.recv_timeout(Duration::from_secs(20)).unwrap());
        }
        async {}
    });
    // A second address of b: its answer tells that b's client has read
    // everything sent before, the request to corpus.gone included.
    let _ping = b.consumer(
        "corpus.ping",
        |m: Message<u64>| async move { m.reply(0u64) },
    );
    b.flush().await.unwrap();
    let pinger = async_nats::ConnectOptions::new()
        .custom_inbox_prefix("_PING")
        .connect(server.url())
        .await
        .unwrap();

    let run = async {
        a.send("corpus.gone", "hold".to_owned()).await.unwrap();
        inside.recv().await.expect("the handler holds the reader");
        let request = a.request::<String>("corpus.gone", "anyone?".to_owned());
        let rest = async {
            // Both messages reached the server, which relayed them to b
            // before the ping; b's client has buffered the request once
            // the ping is answered.
            tokio::time::sleep(Duration::from_millis(50)).await;
            pinger
                .request(
                    "codecbus.s.corpus.ping",
                    codecbus_core::to_vec(&0u64).unwrap().into(),
                )
                .await
                .expect("b answers the ping");
            let unregistered = tokio::spawn(gone.unregister());
            tokio::time::sleep(Duration::from_millis(100)).await;
            release.send(()).unwrap();
            unregistered.await.unwrap();
        };
        let (result, ()) = tokio::join!(request, rest);
        let err = result.unwrap_err();
        assert_eq!(err.kind(), RequestErrorKind::NoHandlers, "{err}");
    };
    capture(
        sniffer,
        version,
        "failure-no-handlers",
        "a.send(\"corpus.gone\", \"hold\") holds b's reader; a.request::<String>(\"corpus.gone\", \"anyone?\") waits in b's subscription while b's only consumer of corpus.gone unregisters; b answers it NO_HANDLERS",
        &core,
        vec![
            ("sender", body("string", json!("hold"))),
            ("requester", body("string", json!("anyone?"))),
            ("replier", failure("NO_HANDLERS", -1, "No handlers for address corpus.gone")),
        ],
        run,
    )
    .await
}

/// A send to a durable address: a JetStream publish to the address's
/// stream subject, with the message id; only that message is the case's
/// (the server's acknowledgement is JetStream's, not the bus's).
#[cfg(feature = "jetstream")]
async fn durable(version: WireVersion) -> Case {
    let server = harness::jetstream_for_test("wire::a_node_writes_the_corpus (durable)");
    let mut sniffer = Sniffer::new(&server).await;
    let options = crate::common::nats_options(&server.url())
        .wire_version(version)
        .connection_name("corpus-d")
        .durable("corpus.durable", codecbus_bus::DurableOptions::new());
    let d = EventBus::builder()
        .nats(options)
        .connect()
        .await
        .expect("connect to the test server");
    let stored = |subject: &str| subject.starts_with("codecbus.js.");
    let case = capture(
        &mut sniffer,
        version,
        "durable",
        "d.send_with(\"corpus.durable\", 9u64, header Message-Id: corpus-1) from a node with the durable address corpus.durable (feature jetstream)",
        &stored,
        vec![("sender", body("u64", json!(9)))],
        async {
            let options =
                DeliveryOptions::new().header(codecbus_bus::MESSAGE_ID_HEADER, "corpus-1");
            d.send_with("corpus.durable", 9u64, options).await.unwrap();
        },
    )
    .await;
    d.close().await;
    case
}

/// How `found` differs from `want`: the first field that does.
fn difference(want: &Case, found: &Case) -> String {
    if want.messages.len() != found.messages.len() {
        return format!(
            "{} messages in the corpus, {} written",
            want.messages.len(),
            found.messages.len()
        );
    }
    for (i, (w, f)) in want.messages.iter().zip(&found.messages).enumerate() {
        for (field, a, b) in [
            ("subject", json!(w.subject), json!(f.subject)),
            ("reply", json!(w.reply), json!(f.reply)),
            ("headers", json!(w.headers), json!(f.headers)),
            ("payload", json!(w.payload), json!(f.payload)),
            ("carries", json!(w.carries), json!(f.carries)),
            ("from", json!(w.from), json!(f.from)),
        ] {
            if a != b {
                return format!("message {i} ({}): {field}: corpus {a}, written {b}", w.from);
            }
        }
    }
    format!(
        "the case's version or words: corpus {:?} ({}), written {:?} ({})",
        want.about, want.wire_version, found.about, found.wire_version
    )
}

/// Whether the bytes on the wire differ (not only the case's words).
fn wire_differs(want: &Case, found: &Case) -> bool {
    want.messages.len() != found.messages.len()
        || want.messages.iter().zip(&found.messages).any(|(w, f)| {
            (&w.subject, &w.reply, &w.headers, &w.payload)
                != (&f.subject, &f.reply, &f.headers, &f.payload)
        })
}

fn write_case(case: &Case, version: WireVersion) {
    let path = case_path(version, &case.case);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut text = serde_json::to_string_pretty(case).unwrap();
    text.push('\n');
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// What a node writes in every version is the committed corpus, byte for
/// byte; a difference in the current version is a wire change without a
/// new version, one in an older version a change to a released version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_writes_the_corpus() {
    let bless = std::env::var_os(BLESS).is_some_and(|v| v == "1");
    let current = *VERSIONS.last().unwrap();
    let mut problems = Vec::new();
    let mut written = BTreeSet::new();
    for version in VERSIONS {
        for case in cases(version).await {
            assert_eq!(case.wire_version, version.number());
            let path = case_path(version, &case.case);
            written.insert(path.clone());
            if bless {
                write_case(&case, version);
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                problems.push(format!(
                    "{}: no such corpus file: a new case, or a new wire version; write it with {BLESS}=1 (and say so in the CHANGELOG)",
                    shown(&path)
                ));
                continue;
            };
            let committed: Case = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: not a corpus case: {e}", shown(&path)));
            if committed == case {
                continue;
            }
            let why = difference(&committed, &case);
            let rule = if !wire_differs(&committed, &case) {
                format!("the case changed (not its bytes): write it with {BLESS}=1")
            } else if committed.wire_version != version.number() {
                format!(
                    "the file says wire version {}, but holds version {}'s case",
                    committed.wire_version,
                    version.number()
                )
            } else if version == current {
                UNVERSIONED.to_owned()
            } else {
                format!(
                    "wire version {} is released and its peers read exactly these bytes: it never changes; write a change as a new version",
                    version.number()
                )
            };
            problems.push(format!("{}: {why}\n    {rule}", shown(&path)));
        }
    }
    // Files no case writes: a case renamed or gone.
    for version in VERSIONS {
        let dir = corpus_dir().join(format!("v{}", version.number()));
        for entry in std::fs::read_dir(&dir).into_iter().flatten() {
            let path = entry.unwrap().path();
            let durable = path.file_name().is_some_and(|n| n == "durable.json");
            if path.extension().is_some_and(|e| e == "json")
                && !written.contains(&path)
                && !(durable && cfg!(not(feature = "jetstream")))
            {
                problems.push(format!("{}: no case writes it any more", shown(&path)));
            }
        }
    }
    if bless {
        eprintln!("{BLESS}=1: wrote {} corpus files", written.len());
    }
    assert!(
        problems.is_empty(),
        "what a node writes is not the corpus (bus/tests/wire/corpus/):\n{}",
        problems.join("\n")
    );
}

/// The guide's wire chapter and the CHANGELOG name the current version.
#[test]
fn the_changelog_and_the_wire_chapter_name_the_current_version() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let current = VERSIONS.last().unwrap().number();
    let chapter = std::fs::read_to_string(root.join("book/src/wire.md")).unwrap();
    for version in VERSIONS {
        let heading = format!("## Version {}", version.number());
        assert!(
            chapter.contains(&heading),
            "book/src/wire.md has no `{heading}`"
        );
    }
    let changelog = std::fs::read_to_string(root.join("CHANGELOG.md")).unwrap();
    let named = format!("wire version {current}");
    assert!(
        changelog.contains(&named),
        "CHANGELOG.md does not name the current {named}"
    );
    assert_eq!(
        WireVersion::default(),
        *VERSIONS.last().unwrap(),
        "a node writes the current version unless told otherwise"
    );
}

/// Nodes of either version talk: each reads what the other writes, a
/// request, its reply, a conversation's turns and a failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_of_either_version_talk() {
    let server = NatsServer::for_test("wire::nodes_of_either_version_talk");
    for (asking, answering) in [
        (WireVersion::V1, WireVersion::V2),
        (WireVersion::V2, WireVersion::V1),
    ] {
        let a = node(&server, asking, Some(16)).await;
        let b = node(&server, answering, Some(16)).await;
        let _twice = b.consumer("mixed.twice", |m: Message<String>| async move {
            m.reply(m.body().repeat(2))
        });
        let _login = b.consumer("mixed.login", |m: Message<String>| async move {
            let Ok(answer) = m.reply_and_request::<String>("password?".to_owned()).await else {
                return Ok(());
            };
            if answer.body() == "hunter2" {
                answer.reply(true)
            } else {
                answer.fail(401, "wrong password")
            }
        });
        b.flush().await.unwrap();
        let long = "abc".repeat(40);
        let reply: Message<String> = a.request("mixed.twice", long.clone()).await.unwrap();
        assert_eq!(
            reply.body(),
            &long.repeat(2),
            "{asking:?} asks {answering:?}"
        );
        let turn: Message<String> = a.request("mixed.login", "alice".to_owned()).await.unwrap();
        let done: Message<bool> = turn.reply_and_request("hunter2".to_owned()).await.unwrap();
        assert!(*done.body());
        let turn: Message<String> = a.request("mixed.login", "bob".to_owned()).await.unwrap();
        let err = turn
            .reply_and_request::<bool>("guess".to_owned())
            .await
            .unwrap_err();
        assert_eq!(
            (err.kind(), err.failure_code()),
            (RequestErrorKind::RecipientFailure, Some(401))
        );
        assert_eq!(a.metrics().undecodable + b.metrics().undecodable, 0);
        a.close().await;
        b.close().await;
    }
}
