//! A codec renamed during a rolling deploy, on the in-memory cluster: an
//! older node names the type by its old name, a newer node by its new one
//! with the old as an alias. The newer node reads what the older sends
//! (warning once per alias, counting it in `Metrics::old_codec_names`)
//! and sends the new name only, which the older node does not know.

use crate::common;

use std::sync::{Arc, Mutex, OnceLock};

use codecbus_bus::{CodecRegistration, EventBus, InMemoryCluster, Message, RequestErrorKind};
use codecbus_core::MessageCodec;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};

/// The codec name of the older build.
const OLD: &str = "test.renamed.order";
/// The codec name of the newer build.
const NEW: &str = "test.renamed.order.v2";

/// The order as the older build has it (registered by hand, by each node
/// of its own: the two builds' types are in one process here).
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(unregistered)]
struct OldOrder {
    id: u64,
    sku: String,
}

/// The order as the newer build has it: the same fields, another name.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(unregistered)]
struct NewOrder {
    id: u64,
    sku: String,
}

fn old_order(id: u64) -> OldOrder {
    OldOrder {
        id,
        sku: "tea".into(),
    }
}

/// A node of the older build: the order under its old name.
fn old_node(cluster: &InMemoryCluster) -> EventBus {
    EventBus::builder()
        .in_memory_cluster(cluster)
        .codec(CodecRegistration::of::<OldOrder>(OLD))
        .build()
        .expect("an old node")
}

/// A node of the newer build: the order renamed, its old name an alias.
fn new_node(cluster: &InMemoryCluster) -> EventBus {
    EventBus::builder()
        .in_memory_cluster(cluster)
        .codec(CodecRegistration::of::<NewOrder>(NEW).with_aliases(&[OLD]))
        .build()
        .expect("a new node")
}

/// A warning the bus logged, with its fields as text.
#[derive(Debug, Clone, Default)]
struct Logged {
    fields: Vec<(&'static str, String)>,
}

impl Logged {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Visit for Logged {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.fields.push((field.name(), value.to_owned()));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.fields.push((field.name(), format!("{value:?}")));
    }
}

/// Keeps every warning of the bus's cluster code.
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<Logged>>>);

impl Warnings {
    /// The warnings whose message mentions `text`.
    fn about(&self, text: &str) -> Vec<Logged> {
        let all = self.0.lock().unwrap();
        all.iter()
            .filter(|w| w.field("message").is_some_and(|m| m.contains(text)))
            .cloned()
            .collect()
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Warnings {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if *event.metadata().level() == tracing::Level::WARN {
            let mut logged = Logged::default();
            event.record(&mut logged);
            self.0.lock().unwrap().push(logged);
        }
    }
}

/// Captures this thread's warnings (the test's runtime is current-thread,
/// so the nodes' reader tasks run here too) until the guard is dropped.
fn capture() -> (Warnings, tracing::subscriber::DefaultGuard) {
    // With a single live dispatcher, `tracing` computes the interest of a
    // callsite first reached on another thread from that thread's default
    // alone: a test there without a subscriber would cache "never" for the
    // warning, hiding it here. A second dispatcher, kept for the whole
    // process, makes every callsite ask all of them.
    static SECOND: OnceLock<tracing::Dispatch> = OnceLock::new();
    SECOND.get_or_init(|| tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default()));
    let warnings = Warnings::default();
    let subscriber = tracing_subscriber::registry().with(warnings.clone());
    (warnings, tracing::subscriber::set_default(subscriber))
}

#[tokio::test]
async fn an_older_peer_s_send_publish_and_request_decode_under_the_alias() {
    let (warnings, _guard) = capture();
    let cluster = InMemoryCluster::new();
    let (old, new) = (old_node(&cluster), new_node(&cluster));
    let mut orders = new.consumer_stream::<NewOrder>("orders");
    let _ask = new.consumer("orders.ask", |m: Message<NewOrder>| async move {
        // The reply's codec, `u64`, is the same in both builds.
        m.reply(m.body().id * 10)
    });

    old.send("orders", old_order(1)).await.unwrap();
    old.publish("orders", old_order(2)).await.unwrap();
    for id in [1, 2] {
        let m = orders.recv().await.unwrap();
        assert_eq!(
            m.body(),
            &NewOrder {
                id,
                sku: "tea".into()
            }
        );
    }
    let reply: Message<u64> = old.request("orders.ask", old_order(3)).await.unwrap();
    assert_eq!(*reply.body(), 30);
    for id in 4..8 {
        old.send("orders", old_order(id)).await.unwrap();
        assert_eq!(orders.recv().await.unwrap().body().id, id);
    }

    let metrics = new.metrics();
    assert_eq!(metrics.old_codec_names, 1, "one alias, counted once");
    assert_eq!((metrics.remote_received, metrics.undecodable), (7, 0));
    assert_eq!(old.metrics().old_codec_names, 0);
    let logged = warnings.about("old codec name");
    assert_eq!(logged.len(), 1, "logged once per alias: {logged:?}");
    let warning = &logged[0];
    assert_eq!(warning.field("alias"), Some(OLD));
    assert_eq!(warning.field("codec"), Some(NEW));
    assert_eq!(warning.field("address"), Some("orders"));
    let message = warning.field("message").unwrap();
    assert!(message.contains("NewOrder"), "{message}");
}

#[tokio::test]
async fn a_reply_under_the_new_name_fails_the_older_peer_s_request() {
    let cluster = InMemoryCluster::new();
    let (old, new) = (old_node(&cluster), new_node(&cluster));
    let _echo = new.consumer("orders.echo", |m: Message<NewOrder>| async move {
        m.reply(m.body().clone())
    });

    // The request decodes on the new node; its reply leaves under the new
    // name, which the old node does not know.
    let err = old
        .request::<OldOrder>("orders.echo", old_order(1))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::Codec);
    let text = err.to_string();
    assert!(text.contains(&format!("Unknown codec {NEW:?}")), "{text}");
    assert!(text.contains("orders.echo"), "{text}");
    assert_eq!(old.metrics().undecodable, 1);
    assert_eq!(new.metrics().old_codec_names, 1);

    // And what the new node sends, the old one cannot read.
    let _on_old = old.consumer("to.old", |_m: Message<OldOrder>| async {});
    new.send(
        "to.old",
        NewOrder {
            id: 2,
            sku: "tea".into(),
        },
    )
    .await
    .unwrap();
    common::eventually("the old node drops it", || old.metrics().undecodable == 2).await;
    assert_eq!(old.metrics().handled, 0);
}

#[tokio::test]
async fn an_older_peer_s_reply_decodes_under_the_alias() {
    let cluster = InMemoryCluster::new();
    let (old, new) = (old_node(&cluster), new_node(&cluster));
    let _old_echo = old.consumer("orders.old", |m: Message<u64>| async move {
        m.reply(old_order(*m.body()))
    });
    for id in 1..4u64 {
        let reply: Message<NewOrder> = new.request("orders.old", id).await.unwrap();
        assert_eq!(reply.body().id, id);
    }
    assert_eq!(new.metrics().old_codec_names, 1);
    assert_eq!(new.metrics().undecodable, 0);
}

/// The order a rename goes in: first a build that reads the new name as
/// an alias and still sends the old one, then, once no node runs the
/// build before it, the build that sends the new name.
#[tokio::test]
async fn aliases_first_rename_later_keeps_every_pair_of_builds_talking() {
    /// The step between: the old name, the new one an alias.
    #[derive(MessageCodec, Clone, Debug, PartialEq)]
    #[codec(unregistered)]
    struct StepOrder {
        id: u64,
        sku: String,
    }

    let cluster = InMemoryCluster::new();
    let old = old_node(&cluster);
    let step = EventBus::builder()
        .in_memory_cluster(&cluster)
        .codec(CodecRegistration::of::<StepOrder>(OLD).with_aliases(&[NEW]))
        .build()
        .unwrap();
    let _on_step = step.consumer("step", |m: Message<StepOrder>| async move {
        m.reply(m.body().clone())
    });

    // The old build and the step understand each other both ways.
    let _on_old = old.consumer("old", |m: Message<OldOrder>| async move {
        m.reply(m.body().clone())
    });
    let r: Message<OldOrder> = old.request("step", old_order(1)).await.unwrap();
    assert_eq!(r.body().id, 1);
    let step_order = StepOrder {
        id: 2,
        sku: "tea".into(),
    };
    let r: Message<StepOrder> = step.request("old", step_order).await.unwrap();
    assert_eq!(r.body().id, 2);
    assert_eq!(
        step.metrics().old_codec_names,
        0,
        "the old name is its name"
    );

    // Once the old build is gone, the new build joins: the step reads its
    // name as an alias, the new build the step's as one.
    old.close().await;
    let new = new_node(&cluster);
    let _on_new = new.consumer("new", |m: Message<NewOrder>| async move {
        m.reply(m.body().clone())
    });
    let new_order = NewOrder {
        id: 3,
        sku: "tea".into(),
    };
    let r: Message<NewOrder> = new.request("step", new_order).await.unwrap();
    assert_eq!(r.body().id, 3);
    let step_order = StepOrder {
        id: 4,
        sku: "tea".into(),
    };
    let r: Message<StepOrder> = step.request("new", step_order).await.unwrap();
    assert_eq!(r.body().id, 4);
    assert_eq!(
        step.metrics().old_codec_names,
        1,
        "the new name, as an alias"
    );
    assert_eq!(
        new.metrics().old_codec_names,
        1,
        "the old name, as an alias"
    );
    assert_eq!(
        (step.metrics().undecodable, new.metrics().undecodable),
        (0, 0)
    );
}

#[tokio::test]
async fn a_name_neither_a_codec_nor_an_alias_still_fails_naming_it() {
    /// A type the new node knows under no name.
    #[derive(MessageCodec, Clone, Debug)]
    #[codec(unregistered)]
    struct Unknown(u8);

    let cluster = InMemoryCluster::new();
    let new = new_node(&cluster);
    let sender = EventBus::builder()
        .in_memory_cluster(&cluster)
        .codec(CodecRegistration::of::<Unknown>("test.renamed.unknown"))
        .build()
        .unwrap();
    let _ask = new.consumer("orders.ask", |m: Message<NewOrder>| async move {
        m.reply(m.body().id)
    });
    let err = sender
        .request::<u64>("orders.ask", Unknown(1))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::Codec);
    let text = err.to_string();
    assert!(
        text.contains("Unknown codec \"test.renamed.unknown\""),
        "{text}"
    );
    let metrics = new.metrics();
    assert_eq!((metrics.undecodable, metrics.old_codec_names), (1, 0));
}

#[tokio::test]
async fn each_alias_is_counted_once_per_node() {
    /// The order's first name, before `OLD`.
    const FIRST: &str = "test.renamed.order.v0";

    #[derive(MessageCodec, Clone, Debug, PartialEq)]
    #[codec(unregistered)]
    struct FirstOrder {
        id: u64,
        sku: String,
    }

    let cluster = InMemoryCluster::new();
    let newest = EventBus::builder()
        .in_memory_cluster(&cluster)
        .codec(CodecRegistration::of::<NewOrder>(NEW).with_aliases(&[OLD, FIRST]))
        .build()
        .unwrap();
    let other_new = new_node(&cluster);
    let first = EventBus::builder()
        .in_memory_cluster(&cluster)
        .codec(CodecRegistration::of::<FirstOrder>(FIRST))
        .build()
        .unwrap();
    let old = old_node(&cluster);
    let mut on_newest = newest.consumer_stream::<NewOrder>("orders");
    let mut on_other = other_new.consumer_stream::<NewOrder>("orders");
    let mut first_orders = newest.consumer_stream::<NewOrder>("orders.first");
    for id in 0..3 {
        old.publish("orders", old_order(id)).await.unwrap();
        let order = FirstOrder {
            id: 10 + id,
            sku: "tea".into(),
        };
        first.send("orders.first", order).await.unwrap();
    }
    for id in 0..3 {
        assert_eq!(on_newest.recv().await.unwrap().body().id, id);
        assert_eq!(on_other.recv().await.unwrap().body().id, id);
        assert_eq!(first_orders.recv().await.unwrap().body().id, 10 + id);
    }
    assert_eq!(newest.metrics().old_codec_names, 2, "two aliases");
    assert_eq!(other_new.metrics().old_codec_names, 1, "its own count");
}
