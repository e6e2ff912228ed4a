//! The bus across NATS: request/reply round trips between two nodes (each
//! its own connection to one local `nats-server`) with a derived type and
//! with `JsObj`, side by side with raw `async-nats` request/reply carrying
//! the same MessagePack bytes; and publish throughput from one node to a
//! consumer on the other, against raw publish/subscribe of the same bytes.
//!
//! Groups: `bus::cluster/rtt/<payload>` (one element = one round trip) and
//! `bus::cluster/publish/<payload>` (elements = messages, so criterion
//! reports messages/s). `cargo bench --bench cluster`; `cargo test --bench
//! cluster` runs each once. Without `nats-server` on `PATH` it prints a
//! message and measures nothing.

#[path = "../bus/tests/common/nats.rs"]
mod harness;
#[allow(unreachable_pub)] // shared with the bounce bench and example
#[path = "support/payloads.rs"]
mod payloads;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use codecbus::bus::{ConsumerOptions, EventBus, Message, NatsOptions, Shared};
use codecbus::json::{JsObj, JsValue};
use codecbus::{MessageCodec, to_vec};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use tokio::runtime::Runtime;

/// Messages per publish batch.
const BATCH: u64 = 1000;

struct Cluster {
    rt: Runtime,
    a: EventBus,
    b: EventBus,
    raw_a: async_nats::Client,
    raw_b: async_nats::Client,
    _server: harness::NatsServer,
}

fn cluster() -> Option<Cluster> {
    if harness::binary().is_none() {
        eprintln!(
            "bus::cluster: skipped, nats-server is not on PATH (install the Debian package `nats-server`)"
        );
        return None;
    }
    let server = harness::NatsServer::start("bus::cluster")?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let url = server.url();
    let (a, b, raw_a, raw_b) = rt.block_on(async {
        let node = || {
            EventBus::builder()
                .nats(NatsOptions::new(url.clone()))
                .connect()
        };
        let raw = || async_nats::connect(url.clone());
        (
            node().await.expect("node a"),
            node().await.expect("node b"),
            raw().await.expect("raw a"),
            raw().await.expect("raw b"),
        )
    });
    Some(Cluster {
        rt,
        a,
        b,
        raw_a,
        raw_b,
        _server: server,
    })
}

/// codecbus request/reply: `b` echoes the body it got (no copy).
fn bus_rtt<T>(c: &mut Criterion, cl: &Cluster, group: &str, name: &str, body: T)
where
    T: MessageCodec + Clone + Send + Sync + 'static,
{
    let address = format!("bench.rtt.{name}");
    let consumer = cl.rt.block_on(async {
        let consumer = cl.b.consumer(&address, |m: Message<T>| async move {
            m.reply(Shared(Arc::clone(m.body_arc())));
        });
        cl.b.flush().await.expect("flush");
        consumer
    });
    let body = Arc::new(body);
    c.benchmark_group(group)
        .throughput(Throughput::Elements(1))
        .bench_function(BenchmarkId::from_parameter(name), |bench| {
            bench.iter_custom(|rounds| {
                cl.rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..rounds {
                        let reply: Message<T> =
                            cl.a.request(&address, Shared(Arc::clone(&body)))
                                .await
                                .expect("request");
                        std::hint::black_box(reply);
                    }
                    start.elapsed()
                })
            })
        });
    cl.rt.block_on(consumer.unregister());
}

/// Raw async-nats request/reply of the same bytes: `raw_b` echoes them.
fn raw_rtt(c: &mut Criterion, cl: &Cluster, group: &str, payload: Bytes) {
    let subject = format!("raw.rtt.{group}");
    let responder = cl.rt.block_on(async {
        let mut sub = cl
            .raw_b
            .subscribe(subject.clone())
            .await
            .expect("subscribe");
        let client = cl.raw_b.clone();
        let task = tokio::spawn(async move {
            while let Some(m) = sub.next().await {
                if let Some(reply) = m.reply {
                    let _ = client.publish(reply, m.payload).await;
                }
            }
        });
        settle(&cl.raw_b).await;
        task
    });
    c.benchmark_group(group)
        .throughput(Throughput::Elements(1))
        .bench_function(BenchmarkId::from_parameter("raw_async_nats"), |bench| {
            bench.iter_custom(|rounds| {
                cl.rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..rounds {
                        let reply = cl
                            .raw_a
                            .request(subject.clone(), payload.clone())
                            .await
                            .expect("raw request");
                        std::hint::black_box(reply);
                    }
                    start.elapsed()
                })
            })
        });
    responder.abort();
}

/// codecbus publish from `a` to one consumer on `b`, `BATCH` per round.
fn bus_publish<T>(c: &mut Criterion, cl: &Cluster, group: &str, name: &str, body: T)
where
    T: MessageCodec + Clone + Send + Sync + 'static,
{
    let address = format!("bench.publish.{name}");
    let received = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&received);
    let options = ConsumerOptions::new().with_queue_capacity(1 << 20);
    let consumer = cl.rt.block_on(async {
        let consumer =
            cl.b.consumer_with(&address, options, move |_m: Message<T>| {
                counter.fetch_add(1, Ordering::Relaxed);
                async {}
            });
        cl.b.flush().await.expect("flush");
        consumer
    });
    let body = Arc::new(body);
    c.benchmark_group(group)
        .throughput(Throughput::Elements(BATCH))
        .bench_function(BenchmarkId::from_parameter(name), |bench| {
            bench.iter_custom(|rounds| {
                cl.rt.block_on(async {
                    let target = received.load(Ordering::Relaxed) + rounds * BATCH;
                    let start = Instant::now();
                    for _ in 0..rounds * BATCH {
                        cl.a.publish(&address, Shared(Arc::clone(&body)))
                            .await
                            .expect("publish");
                    }
                    wait_for(&received, target).await;
                    start.elapsed()
                })
            })
        });
    cl.rt.block_on(consumer.unregister());
}

/// Raw publish/subscribe of the same bytes.
fn raw_publish(c: &mut Criterion, cl: &Cluster, group: &str, payload: Bytes) {
    let subject = format!("raw.publish.{group}");
    let received = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&received);
    let task = cl.rt.block_on(async {
        let mut sub = cl
            .raw_b
            .subscribe(subject.clone())
            .await
            .expect("subscribe");
        let task = tokio::spawn(async move {
            while let Some(m) = sub.next().await {
                std::hint::black_box(m);
                counter.fetch_add(1, Ordering::Relaxed);
            }
        });
        settle(&cl.raw_b).await;
        task
    });
    c.benchmark_group(group)
        .throughput(Throughput::Elements(BATCH))
        .bench_function(BenchmarkId::from_parameter("raw_async_nats"), |bench| {
            bench.iter_custom(|rounds| {
                cl.rt.block_on(async {
                    let target = received.load(Ordering::Relaxed) + rounds * BATCH;
                    let start = Instant::now();
                    for _ in 0..rounds * BATCH {
                        cl.raw_a
                            .publish(subject.clone(), payload.clone())
                            .await
                            .expect("raw publish");
                    }
                    wait_for(&received, target).await;
                    start.elapsed()
                })
            })
        });
    task.abort();
}

/// Returns once the server has processed everything `client` sent (its
/// SUBs included): the server itself answers a request nobody listens to.
async fn settle(client: &async_nats::Client) {
    let err = client
        .request(client.new_inbox(), Bytes::new())
        .await
        .expect_err("nobody listens on a fresh inbox");
    assert_eq!(
        err.kind(),
        async_nats::client::RequestErrorKind::NoResponders
    );
}

async fn wait_for(counter: &AtomicU64, target: u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while counter.load(Ordering::Relaxed) < target {
        assert!(
            Instant::now() < deadline,
            "only {} of {target} messages arrived",
            counter.load(Ordering::Relaxed)
        );
        tokio::task::yield_now().await;
    }
}

fn cluster_benches(c: &mut Criterion) {
    let Some(cl) = cluster() else {
        return;
    };
    let derived = payloads::immutable::customer(0);
    let json = JsValue::from(payloads::json_payload("obj").expect("obj payload"));
    let jsobj = json
        .into_object()
        .expect("the obj payload is a JSON object");
    let derived_bytes = Bytes::from(to_vec(&derived).expect("encode"));
    let jsobj_bytes = Bytes::from(to_vec(&jsobj).expect("encode"));
    eprintln!(
        "bus::cluster: derived obj = {} bytes, jsobj obj = {} bytes of MessagePack",
        derived_bytes.len(),
        jsobj_bytes.len()
    );

    bus_rtt(
        c,
        &cl,
        "bus::cluster/rtt/derived_obj",
        "codecbus",
        derived.clone(),
    );
    raw_rtt(
        c,
        &cl,
        "bus::cluster/rtt/derived_obj",
        derived_bytes.clone(),
    );
    bus_rtt::<JsObj>(
        c,
        &cl,
        "bus::cluster/rtt/jsobj_obj",
        "codecbus",
        jsobj.clone(),
    );
    raw_rtt(c, &cl, "bus::cluster/rtt/jsobj_obj", jsobj_bytes.clone());

    bus_publish(
        c,
        &cl,
        "bus::cluster/publish/derived_obj",
        "codecbus",
        derived,
    );
    raw_publish(c, &cl, "bus::cluster/publish/derived_obj", derived_bytes);
    bus_publish::<JsObj>(c, &cl, "bus::cluster/publish/jsobj_obj", "codecbus", jsobj);
    raw_publish(c, &cl, "bus::cluster/publish/jsobj_obj", jsobj_bytes);

    cl.rt.block_on(async {
        cl.a.close().await;
        cl.b.close().await;
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = cluster_benches
}
criterion_main!(benches);
