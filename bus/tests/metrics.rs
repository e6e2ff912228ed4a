//! Metrics through the `metrics` facade agree with `EventBus::metrics`: a
//! run of every kind of outcome, locally and across NATS, then the
//! recorder's series are checked against the bus's own snapshot. Each test
//! uses its own prefix, so they share the recorder this binary installs.
#![cfg(feature = "metrics")]

mod common;
#[cfg(feature = "nats")]
#[path = "common/nats.rs"]
mod harness;

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use codecbus_bus::{
    ConsumerOptions, DeliveryOptions, EventBus, Message, MetricsOptions, RequestErrorKind, Verdict,
};
use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use metrics_util::registry::{AtomicStorage, Registry};

/// A recorder that keeps every series' value for the tests to read, never
/// resetting it (reads don't drain, so parallel tests can share it).
struct Keeper {
    registry: Registry<Key, AtomicStorage>,
}

impl Recorder for Keeper {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        self.registry
            .get_or_create_counter(key, |c| Counter::from_arc(Arc::clone(c)))
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        self.registry
            .get_or_create_gauge(key, |g| Gauge::from_arc(Arc::clone(g)))
    }

    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        self.registry
            .get_or_create_histogram(key, |h| Histogram::from_arc(Arc::clone(h)))
    }
}

/// A series' value.
#[derive(Debug)]
enum Value {
    Counter(u64),
    Gauge(f64),
    Histogram(Vec<f64>),
}

/// The recorder of this test binary, installed once.
fn keeper() -> &'static Keeper {
    static KEEPER: OnceLock<&'static Keeper> = OnceLock::new();
    KEEPER.get_or_init(|| {
        let keeper: &'static Keeper = Box::leak(Box::new(Keeper {
            registry: Registry::atomic(),
        }));
        metrics::set_global_recorder(keeper).expect("install the test recorder");
        keeper
    })
}

/// What the recorder holds for series named `{prefix}_...`.
#[derive(Debug)]
struct Series {
    prefix: String,
    series: Vec<(Key, Value)>,
}

impl Series {
    fn of(prefix: &str) -> Self {
        let prefix = format!("{prefix}_");
        let registry = &keeper().registry;
        let mut series: Vec<(Key, Value)> = Vec::new();
        for (key, c) in registry.get_counter_handles() {
            series.push((key, Value::Counter(c.load(Ordering::SeqCst))));
        }
        for (key, g) in registry.get_gauge_handles() {
            series.push((key, Value::Gauge(f64::from_bits(g.load(Ordering::SeqCst)))));
        }
        for (key, h) in registry.get_histogram_handles() {
            series.push((key, Value::Histogram(h.data())));
        }
        series.retain(|(key, _)| key.name().starts_with(&prefix));
        Self { prefix, series }
    }

    /// The matching series: `name` without the prefix, each label pair
    /// required.
    fn matching<'a>(
        &'a self,
        name: &'a str,
        labels: &'a [(&'a str, &'a str)],
    ) -> impl Iterator<Item = &'a (Key, Value)> + 'a {
        self.series.iter().filter(move |(key, _)| {
            key.name().strip_prefix(&self.prefix) == Some(name)
                && labels
                    .iter()
                    .all(|(k, v)| key.labels().any(|l| l.key() == *k && l.value() == *v))
        })
    }

    /// The sum of the matching counters.
    fn counter(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
        self.matching(name, labels)
            .map(|(_, value)| match value {
                Value::Counter(n) => *n,
                other => panic!("{name} is not a counter: {other:?}"),
            })
            .sum()
    }

    /// The sum of the matching gauges.
    fn gauge(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.matching(name, labels)
            .map(|(_, value)| match value {
                Value::Gauge(g) => *g,
                other => panic!("{name} is not a gauge: {other:?}"),
            })
            .sum()
    }

    /// The samples of the matching histograms.
    fn samples(&self, name: &str, labels: &[(&str, &str)]) -> Vec<f64> {
        self.matching(name, labels)
            .flat_map(|(_, value)| match value {
                Value::Histogram(samples) => samples.iter().copied(),
                other => panic!("{name} is not a histogram: {other:?}"),
            })
            .collect()
    }

    /// The distinct values of label `label` among series `name`.
    fn label_values(&self, name: &str, label: &str) -> Vec<String> {
        let mut values: Vec<String> = self
            .matching(name, &[])
            .filter_map(|(key, _)| {
                key.labels()
                    .find(|l| l.key() == label)
                    .map(|l| l.value().to_owned())
            })
            .collect();
        values.sort();
        values.dedup();
        values
    }
}

fn metered(prefix: &str) -> codecbus_bus::EventBusBuilder {
    keeper();
    EventBus::builder()
        .metrics(MetricsOptions::new().prefix(prefix))
        .default_timeout(Duration::from_secs(2))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_outcome_agrees_with_the_snapshot() {
    let test_start = std::time::Instant::now();
    let bus = metered("agree")
        .outbound_interceptor(|ctx| {
            if ctx.headers().contains("drop") {
                Verdict::Drop
            } else {
                Verdict::Continue
            }
        })
        .build()
        .unwrap();
    let _orders = bus.consumer("orders", |_m: Message<u32>| async {});
    let _quotes = bus.consumer(
        "quotes",
        |m: Message<u32>| async move { m.reply(*m.body() + 1) },
    );
    let _fails = bus.consumer("fails", |m: Message<u32>| async move { m.fail(7, "no") });
    let _silent = bus.consumer("silent", |_m: Message<u32>| async {
        tokio::time::sleep(Duration::from_millis(300)).await;
    });
    let _prices_a = bus.consumer("prices", |_m: Message<String>| async {});
    let _prices_b = bus.consumer("prices", |_m: Message<String>| async {});
    let full = bus.consumer_with(
        "full",
        ConsumerOptions::new().queue_capacity(1),
        |_m: Message<u32>| async {},
    );
    full.pause();

    for i in 0..10u32 {
        bus.send("orders", i).await.unwrap();
    }
    for _ in 0..4 {
        bus.publish("prices", "ACME".to_string()).await.unwrap();
    }
    for i in 0..5u32 {
        let r: Message<u32> = bus.request("quotes", i).await.unwrap();
        assert_eq!(*r.body(), i + 1);
    }
    for i in 0..3u32 {
        let err = bus.request::<u32>("fails", i).await.unwrap_err();
        assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
    }
    let err = bus
        .request_with::<u32>(
            "silent",
            1u32,
            DeliveryOptions::new().timeout(Duration::from_millis(20)),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::Timeout);
    assert!(bus.send("nowhere", 1u32).await.is_err());
    assert!(bus.request::<u32>("nowhere", 1u32).await.is_err());
    assert!(
        bus.send("orders", "not a number".to_string())
            .await
            .is_err()
    );
    bus.send("full", 1u32).await.unwrap();
    tokio::task::yield_now().await;
    assert!(bus.send("full", 2u32).await.is_err());
    bus.send_with("orders", 1u32, DeliveryOptions::new().header("drop", "1"))
        .await
        .unwrap_err();
    // The paused consumer's message is still pending; unregistering it
    // discards it.
    common::eventually("handlers ran", || bus.metrics().handled >= 23).await;
    let pending = Series::of("agree").gauge("pending", &[("address", "full")]);
    assert_eq!(pending, 1.0);
    full.unregister().await;
    // The slow handler's run is timed once it ends.
    common::eventually("every handler run timed", || {
        Series::of("agree")
            .samples("processing_time_seconds", &[])
            .len() as u64
            == bus.metrics().handled
    })
    .await;

    let m = bus.metrics();
    let s = Series::of("agree");
    assert_eq!(s.counter("sent_total", &[]), m.sent);
    assert_eq!(s.counter("published_total", &[]), m.published);
    assert_eq!(s.counter("delivered_total", &[]), m.delivered);
    assert_eq!(
        s.counter("refused_total", &[("reason", "QUEUE_FULL")]),
        m.refused
    );
    assert_eq!(
        s.counter("refused_total", &[("reason", "NO_HANDLERS")]),
        m.no_handlers
    );
    assert_eq!(
        s.counter("refused_total", &[("reason", "TYPE_MISMATCH")]),
        m.type_mismatches
    );
    assert_eq!(
        s.counter("refused_total", &[("reason", "INVALID")]),
        m.invalid
    );
    assert_eq!(s.counter("dropped_total", &[]), m.dropped);
    assert_eq!(s.counter("discarded_total", &[]), m.discarded);
    assert_eq!(
        s.counter("reply_failures_total", &[("failure", "RECIPIENT_FAILURE")]),
        m.recipient_failures
    );
    assert_eq!(
        s.counter("reply_failures_total", &[("failure", "TIMEOUT")]),
        m.timeouts
    );
    // And the values themselves, by address.
    assert_eq!(m.sent, 10 + 5 + 3 + 1 + 2 + 1 + 2 + 1);
    assert_eq!(s.counter("sent_total", &[("address", "orders")]), 12);
    assert_eq!(s.counter("published_total", &[("address", "prices")]), 4);
    assert_eq!(s.counter("delivered_total", &[("address", "prices")]), 8);
    assert_eq!(
        s.counter(
            "received_total",
            &[("address", "prices"), ("side", "local")]
        ),
        4
    );
    assert_eq!(s.counter("refused_total", &[("address", "nowhere")]), 2);
    assert_eq!(
        s.counter(
            "reply_failures_total",
            &[("address", "nowhere"), ("failure", "NO_HANDLERS")]
        ),
        1
    );
    assert_eq!(
        s.counter("reply_failures_total", &[("address", "fails")]),
        3
    );
    assert_eq!(
        s.counter(
            "dropped_total",
            &[("address", "orders"), ("interceptor", "outbound")]
        ),
        1
    );
    assert_eq!(s.counter("discarded_total", &[("address", "full")]), 1);
    assert_eq!(s.gauge("handlers", &[("address", "prices")]), 2.0);
    assert_eq!(s.gauge("handlers", &[("address", "full")]), 0.0);
    assert_eq!(s.gauge("pending", &[("address", "full")]), 0.0);
    assert_eq!(s.gauge("pending", &[("address", "orders")]), 0.0);
    assert_eq!(
        s.samples("request_time_seconds", &[("address", "quotes")])
            .len(),
        5
    );
    let handled = s.samples("processing_time_seconds", &[]);
    assert_eq!(handled.len() as u64, m.handled);
    // Each run took some time, and none longer than the test so far.
    let elapsed = test_start.elapsed().as_secs_f64();
    assert!(
        handled.iter().all(|&t| t > 0.0 && t <= elapsed),
        "{handled:?} (test ran {elapsed} s)"
    );
    // Nothing went to the cluster.
    assert_eq!(s.samples("bytes_written", &[]).len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn address_labels_are_grouped_excluded_and_bounded() {
    let options = MetricsOptions::new()
        .prefix("bounded")
        .group("orders.*", "orders")
        .exclude("internal.*")
        .max_addresses(3);
    keeper();
    let bus = EventBus::builder().metrics(options).build().unwrap();
    let _c = bus.consumer("orders.1", |_m: Message<u8>| async {});
    for i in 0..50 {
        let _ = bus.send(&format!("orders.{i}"), 1u8).await;
        let _ = bus.send(&format!("internal.{i}"), 1u8).await;
        let _ = bus.send(&format!("user.{i}"), 1u8).await;
    }
    let s = Series::of("bounded");
    // `orders` plus two more, then everything else is `_other`.
    assert_eq!(
        s.label_values("sent_total", "address"),
        ["_other", "orders", "user.0", "user.1"]
    );
    assert_eq!(s.counter("sent_total", &[("address", "orders")]), 50);
    assert_eq!(s.counter("sent_total", &[("address", "_other")]), 48);
    assert_eq!(s.counter("sent_total", &[]), 100);
    assert_eq!(bus.metrics().sent, 150);
    assert_eq!(s.counter("delivered_total", &[("address", "orders")]), 1);
}

/// A series is exported once it has a value: timings off and a local-only
/// bus export no timing or byte-size histogram (whose summary quantiles
/// would read 0 where nothing was measured), and a refusal reason appears
/// with its first refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_series_appears_with_its_first_value() {
    keeper();
    let bus = EventBus::builder()
        .metrics(MetricsOptions::new().prefix("lazy").timings(false))
        .build()
        .unwrap();
    let _c = bus.consumer("echo", |m: Message<u32>| async move { m.reply(*m.body()) });
    for i in 0..5u32 {
        let r: Message<u32> = bus.request("echo", i).await.unwrap();
        assert_eq!(*r.body(), i);
    }
    bus.send("echo", 1u32).await.unwrap();
    let names = |s: &Series| {
        let mut names: Vec<String> = s
            .series
            .iter()
            .map(|(key, _)| key.name().strip_prefix("lazy_").unwrap().to_owned())
            .collect();
        names.sort();
        names.dedup();
        names
    };
    let s = Series::of("lazy");
    assert_eq!(
        names(&s),
        [
            "delivered_total",
            "handlers",
            "pending",
            "received_total",
            "sent_total"
        ],
        "{s:?}"
    );
    assert_eq!(s.label_values("received_total", "side"), ["local"]);

    // The first refusal brings its reason's series, and only that one.
    let err = bus.send("nowhere", 1u32).await.unwrap_err();
    assert_eq!(err.kind().as_str(), "NO_HANDLERS");
    let s = Series::of("lazy");
    assert_eq!(s.label_values("refused_total", "reason"), ["NO_HANDLERS"]);
    assert_eq!(s.counter("refused_total", &[("address", "nowhere")]), 1);
    assert!(s.matching("processing_time_seconds", &[]).next().is_none());
    assert!(s.matching("bytes_written", &[]).next().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_metrics_off_nothing_is_reported() {
    keeper();
    let bus = EventBus::new();
    let _c = bus.consumer("quiet.metrics.off", |_m: Message<u8>| async {});
    bus.send("quiet.metrics.off", 1u8).await.unwrap();
    let reported: Vec<String> = keeper()
        .registry
        .get_counter_handles()
        .into_keys()
        .filter(|key| key.labels().any(|l| l.value() == "quiet.metrics.off"))
        .map(|key| key.name().to_owned())
        .collect();
    assert!(reported.is_empty(), "{reported:?}");
}

#[cfg(feature = "nats")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn across_nats_each_node_reports_its_side() {
    let server = harness::NatsServer::for_test("across_nats_each_node_reports_its_side");
    keeper();
    let node = |prefix: &'static str| {
        let url = server.url();
        async move {
            EventBus::builder()
                .metrics(MetricsOptions::new().prefix(prefix))
                .default_timeout(Duration::from_secs(2))
                .nats(common::nats_options(&url))
                .connect()
                .await
                .unwrap()
        }
    };
    let (a, b) = (node("nats_a").await, node("nats_b").await);
    let _echo = b.consumer("echo", |m: Message<String>| async move {
        m.reply(m.body().clone())
    });
    let _news_a = a.consumer("news", |_m: Message<String>| async {});
    let _news_b = b.consumer("news", |_m: Message<String>| async {});
    a.flush().await.unwrap();
    b.flush().await.unwrap();
    for i in 0..6 {
        let r: Message<String> = a.request("echo", format!("hello {i}")).await.unwrap();
        assert_eq!(r.body(), &format!("hello {i}"));
    }
    a.publish("news", "x".repeat(100)).await.unwrap();
    common::eventually("both nodes got the publish", || {
        a.metrics().remote_received >= 1 && b.metrics().remote_received >= 7
    })
    .await;

    let (ma, mb) = (a.metrics(), b.metrics());
    let (sa, sb) = (Series::of("nats_a"), Series::of("nats_b"));
    for (s, m) in [(&sa, ma), (&sb, mb)] {
        assert_eq!(
            s.counter("received_total", &[("side", "remote")]),
            m.remote_received
        );
        assert_eq!(s.counter("delivered_total", &[]), m.delivered);
        assert_eq!(s.counter("sent_total", &[]), m.sent);
        assert_eq!(s.counter("undecodable_total", &[]), m.undecodable);
    }
    assert_eq!(
        sb.counter("received_total", &[("address", "echo"), ("side", "remote")]),
        6
    );
    assert_eq!(
        sa.counter("received_total", &[("address", "news"), ("side", "remote")]),
        1
    );
    assert_eq!(
        sb.counter("received_total", &[("address", "news"), ("side", "remote")]),
        1
    );
    // Encoded sizes: six requests and a publish written by a, read by b.
    let written = sa.samples("bytes_written", &[("address", "echo")]);
    assert_eq!(written.len(), 6);
    assert!(written.iter().all(|&n| n > 7.0), "{written:?}");
    let read = sb.samples("bytes_read", &[("address", "news")]);
    assert_eq!(read, [102.0]);
    assert_eq!(
        sa.samples("request_time_seconds", &[("address", "echo")])
            .len(),
        6
    );
    assert_eq!(
        sb.samples("processing_time_seconds", &[("address", "echo")])
            .len(),
        6
    );
    a.close().await;
    b.close().await;
}

/// Durable messages settled every way (acknowledged, given back for
/// redelivery, dead-lettered) and a lost connection: the series agree with
/// the snapshot, per address for the settlements.
#[cfg(feature = "jetstream")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_settlements_and_lost_connections_agree_with_the_snapshot() {
    use codecbus_bus::DurableOptions;

    let mut server = harness::jetstream_for_test(
        "durable_settlements_and_lost_connections_agree_with_the_snapshot",
    );
    keeper();
    let durable = DurableOptions::new()
        .ack_wait(Duration::from_secs(2))
        .redelivery_delay(Duration::from_millis(50))
        .max_deliveries(2);
    let bus = metered("settle")
        .nats(
            common::nats_options(&server.url())
                .connection_name("settle")
                .durable("jobs", durable),
        )
        .connect()
        .await
        .unwrap();
    // Job 0 is done at once, job 1 at its second delivery, job 2 never:
    // after two deliveries it goes to `jobs.dead` (durable too), whose
    // consumer takes it.
    let _jobs = bus.consumer("jobs", |m: Message<u32>| async move {
        match (*m.body(), m.delivery_count()) {
            (0, _) | (1, 2) => Ok(()),
            _ => Err("not now"),
        }
    });
    let _dead = bus.consumer("jobs.dead", |_m: Message<u32>| async {});
    bus.flush().await.unwrap();
    for job in 0..3u32 {
        bus.send("jobs", job).await.unwrap();
    }
    common::eventually("every job settled", || {
        let m = bus.metrics();
        (m.durable_acked, m.durable_redelivered, m.dead_lettered) == (3, 2, 1)
    })
    .await;
    let (s, m) = (Series::of("settle"), bus.metrics());
    let settled = |outcome: &str| s.counter("durable_settled_total", &[("outcome", outcome)]);
    assert_eq!(
        (
            settled("acked"),
            settled("redelivered"),
            settled("dead_lettered")
        ),
        (m.durable_acked, m.durable_redelivered, m.dead_lettered)
    );
    let at = |address: &str, outcome: &str| {
        s.counter(
            "durable_settled_total",
            &[("address", address), ("outcome", outcome)],
        )
    };
    assert_eq!((at("jobs", "acked"), at("jobs.dead", "acked")), (2, 1));
    assert_eq!(
        (at("jobs", "redelivered"), at("jobs", "dead_lettered")),
        (2, 1)
    );
    assert_eq!(s.counter("remote_disconnects_total", &[]), 0);

    // The server goes away and comes back: one lost connection.
    server.restart();
    common::eventually("the lost connection counted", || {
        bus.metrics().remote_disconnects == 1
    })
    .await;
    let s = Series::of("settle");
    assert_eq!(s.counter("remote_disconnects_total", &[]), 1);
    assert_eq!(
        s.counter("remote_dropped_total", &[]),
        bus.metrics().remote_dropped
    );
    bus.close().await;
}

/// A publish the server refuses for lack of permission is counted in the
/// snapshot and in the series alike.
#[cfg(feature = "nats")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_by_the_server_agree_with_the_snapshot() {
    const PERMISSIONS: &str = r#"authorization {
  users = [
    { user: "limited", password: "pw", permissions: {
        publish: { allow: ["codecbus.shapes", "_INBOX.>"] }
        subscribe: { allow: ["codecbus.shapes", "_INBOX.>"] }
    } }
  ]
}"#;
    let config = harness::Config {
        extra: Some(PERMISSIONS.to_owned()),
        ..harness::Config::default()
    };
    let server = harness::NatsServer::for_test_with(
        "refusals_by_the_server_agree_with_the_snapshot",
        &config,
    );
    keeper();
    let bus = metered("denied")
        .nats(common::nats_options(&server.url()).user_and_password("limited", "pw"))
        .connect()
        .await
        .unwrap();
    // Returns before the server answers; the refusal comes after.
    bus.publish("forbidden", 1u32).await.unwrap();
    common::eventually("the refusal counted", || bus.metrics().remote_denied == 1).await;
    assert_eq!(Series::of("denied").counter("remote_denied_total", &[]), 1);
    bus.close().await;
}
