//! The bus across NATS: request/reply round trips between two nodes (each
//! its own connection to one local `nats-server`) with a derived type and
//! with `JsObj`, side by side with raw `async-nats` request/reply carrying
//! the same MessagePack bytes; and publish throughput from one node to a
//! consumer on the other, against raw publish/subscribe of the same bytes.
//!
//! Baselines besides raw async-nats moving the bytes: raw async-nats doing
//! the same derived codec calls by hand ("raw + codec": the publisher or
//! requester encodes, the receiver decodes, a responder decodes and
//! re-encodes), and, for the derived type, what a user writes instead of
//! codecbus ("raw + rmp-serde"): raw async-nats and `rmp-serde` on a struct
//! with the same fields deriving `serde::Serialize` and `Deserialize`
//! (`payloads::serde_derived`), encoded with `rmp_serde::to_vec_named`
//! (the same bytes as the derived codec's map encoding, checked at start)
//! and decoded with `rmp_serde::from_slice` on the receiving side, naming
//! the type the way a user would, in a header (`Codecbus-Codec: 1 <codec
//! name>`, the form a peer in another language may use, checked at start
//! to be read by a node) on every message, replies included. The bus
//! itself names the codec in the payload and sends no header.
//! `JsObj` has no serde-derived counterpart, so its payload has no
//! rmp-serde baseline.
//!
//! Groups: `bus::cluster/rtt/<payload>` (one element = one round trip:
//! `codecbus`, `raw_async_nats`, and `raw_rmp_serde` for the derived type)
//! and `bus::cluster/publish/<payload>` (elements = messages, so criterion
//! reports messages/s: `codecbus`, `raw_async_nats`,
//! `raw_async_nats_codec`, and `raw_rmp_serde` for the derived type).
//! `cargo bench -p codecbus-benches --bench cluster`;
//! `cargo test -p codecbus-benches --bench cluster` runs each
//! once. Without `nats-server` on `PATH` it prints a message and measures
//! nothing.
//!
//! After the criterion groups, under `cargo bench` only, two paired runs
//! print ratios that hold on a loaded machine: `bus::cluster/paired-publish`
//! (blocks of codecbus, raw + codec and, for the derived type, raw +
//! rmp-serde publishes alternating; throughput and CPU per message) and
//! `bus::cluster/paired-rtt` (the same for round trips, with raw
//! async-nats echoing the bytes as a further variant). A filter selects
//! them by those names, e.g. `cargo bench -p codecbus-benches --bench cluster --
//! paired-publish`. `bus::cluster/paired-lz4` does the same for a node
//! compressing bodies over 1 KiB against one that does not (the twitter
//! document, 400 KB, and the derived object, under the threshold).
//!
//! With the `jetstream` feature, `bus::cluster/durable/derived_obj`
//! compares `send` to a durable address (stored by a `nats-server -js`
//! and acknowledged by the consumer's node) with `send` to a plain one,
//! from one node to a consumer on the other, one send at a time, and
//! durable sends from 16 tasks; elements = messages, each round waits
//! until the consumer handled them all. (Plain sends from 16 tasks can outrun
//! the receiving node, and what NATS core then loses would keep a round
//! from completing, so they are not measured.) `cargo bench -p codecbus-benches
//! --features jetstream --bench cluster -- durable`.

#[path = "../bus/tests/common/nats.rs"]
mod harness;
#[allow(unreachable_pub)] // shared with the bounce bench and example
#[path = "support/payloads.rs"]
mod payloads;

use std::any::TypeId;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_nats::HeaderMap;
use bytes::Bytes;
use codecbus::bus::{ConsumerOptions, EventBus, Message, NatsOptions, Shared};
use codecbus::json::{JsObj, JsValue};
use codecbus::{MessageType, to_vec};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use serde::Serialize;
use serde::de::DeserializeOwned;
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
    T: MessageType + Clone + Send + Sync + 'static,
{
    let address = format!("bench.rtt.{name}");
    let consumer = cl.rt.block_on(async {
        let consumer = cl.b.consumer(&address, |m: Message<T>| async move {
            m.reply(Shared(Arc::clone(m.body_arc())))
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
    let mut sub = cl
        .rt
        .block_on(cl.raw_b.subscribe(subject.clone()))
        .expect("subscribe");
    let client = cl.raw_b.clone();
    let responder = cl.rt.spawn(async move {
        while let Some(m) = sub.next().await {
            if let Some(reply) = m.reply {
                let _ = client.publish(reply, m.payload).await;
            }
        }
    });
    cl.rt.block_on(settle(&cl.raw_b));
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

/// The header naming the codec of `T` that a node reads from a peer:
/// `Codecbus-Codec: <wire version> <codec name>`.
fn codec_header<T: 'static>() -> HeaderMap {
    let name = codecbus::registrations()
        .find(|r| r.type_id() == TypeId::of::<T>())
        .expect("a derived type is registered")
        .name();
    let mut headers = HeaderMap::new();
    headers.insert("Codecbus-Codec", format!("1 {name}").as_str());
    headers
}

/// Checks that the rmp-serde baseline carries what the bus carries: its
/// encoding of `serde_body` is the bus's encoding of `body`, and a node
/// answers a raw request carrying `headers` and those bytes (so it reads
/// them as its own) with the same bytes, after the codec prefix naming
/// the same codec, that rmp-serde decodes to `serde_body`.
fn check_rmp_serde<T, S>(cl: &Cluster, body: &T, serde_body: &S, headers: &HeaderMap)
where
    T: MessageType + Clone + Send + Sync + 'static,
    S: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let bytes = rmp_serde::to_vec_named(serde_body).expect("encode");
    assert_eq!(
        bytes,
        to_vec(body).expect("encode"),
        "rmp-serde's bytes differ from the derived codec's"
    );
    cl.rt.block_on(async {
        let consumer =
            cl.b.consumer("bench.check.rmp_serde", |m: Message<T>| async move {
                m.reply(Shared(Arc::clone(m.body_arc())))
            });
        cl.b.flush().await.expect("flush");
        // The subject of a node's address (`codecbus.s.<address>`).
        let reply = cl
            .raw_a
            .request_with_headers(
                "codecbus.s.bench.check.rmp_serde",
                headers.clone(),
                Bytes::from(bytes.clone()),
            )
            .await
            .expect("raw request to a node");
        // 0xC1, wire version 2, the codec name as a MessagePack str.
        let name = headers
            .get("Codecbus-Codec")
            .and_then(|v| v.as_str().strip_prefix("1 "))
            .expect("a codec header")
            .to_owned();
        let mut prefix = vec![0xc1, 2];
        prefix.extend(to_vec(&name).expect("encode"));
        assert_eq!(
            &reply.payload[..prefix.len()],
            &prefix[..],
            "the node's reply names another codec"
        );
        let reply = &reply.payload[prefix.len()..];
        assert_eq!(reply, &bytes[..]);
        let value: S = rmp_serde::from_slice(reply).expect("decode");
        assert_eq!(&value, serde_body);
        consumer.unregister().await;
    });
}

/// Raw async-nats request/reply as a user writes it without codecbus:
/// rmp-serde on a serde-derived type, with a header naming the type. The
/// requester encodes each request and decodes each reply; `raw_b` decodes
/// each request and encodes its reply (with the same header).
fn raw_rmp_serde_rtt<S>(c: &mut Criterion, cl: &Cluster, group: &str, body: S, headers: HeaderMap)
where
    S: Serialize + DeserializeOwned + Send + 'static,
{
    let subject = format!("raw.rmp_serde.rtt.{group}");
    let mut sub = cl
        .rt
        .block_on(cl.raw_b.subscribe(subject.clone()))
        .expect("subscribe");
    let client = cl.raw_b.clone();
    let reply_headers = headers.clone();
    let responder = cl.rt.spawn(async move {
        while let Some(m) = sub.next().await {
            let value: S = rmp_serde::from_slice(&m.payload).expect("decode");
            let bytes = Bytes::from(rmp_serde::to_vec_named(&value).expect("encode"));
            if let Some(reply) = m.reply {
                let _ = client
                    .publish_with_headers(reply, reply_headers.clone(), bytes)
                    .await;
            }
        }
    });
    cl.rt.block_on(settle(&cl.raw_b));
    c.benchmark_group(group)
        .throughput(Throughput::Elements(1))
        .bench_function(BenchmarkId::from_parameter("raw_rmp_serde"), |bench| {
            bench.iter_custom(|rounds| {
                cl.rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..rounds {
                        let bytes = Bytes::from(rmp_serde::to_vec_named(&body).expect("encode"));
                        let reply = cl
                            .raw_a
                            .request_with_headers(subject.clone(), headers.clone(), bytes)
                            .await
                            .expect("raw request");
                        let value: S = rmp_serde::from_slice(&reply.payload).expect("decode");
                        std::hint::black_box(value);
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
    T: MessageType + Clone + Send + Sync + 'static,
{
    let address = format!("bench.publish.{name}");
    let received = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&received);
    let options = ConsumerOptions::new().queue_capacity(1 << 20);
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
                    let start = Instant::now();
                    // A batch at a time, each awaited: a round of hundreds
                    // of thousands at once outruns the receiving node, and
                    // NATS core drops what a slow subscriber cannot take.
                    for _ in 0..rounds {
                        let target = received.load(Ordering::Relaxed) + BATCH;
                        for _ in 0..BATCH {
                            cl.a.publish(&address, Shared(Arc::clone(&body)))
                                .await
                                .expect("publish");
                        }
                        wait_for(&received, target).await;
                    }
                    start.elapsed()
                })
            })
        });
    cl.rt.block_on(consumer.unregister());
}

/// Raw publish/subscribe of the same bytes.
fn raw_publish(c: &mut Criterion, cl: &Cluster, group: &str, payload: Bytes) {
    raw_publish_with(
        c,
        cl,
        group,
        "raw_async_nats",
        None,
        move || payload.clone(),
        |_| {},
    );
}

/// Raw publish/subscribe doing the codec work by hand: the publisher
/// encodes each message, the subscriber decodes it.
fn raw_codec_publish<T>(c: &mut Criterion, cl: &Cluster, group: &str, body: T)
where
    T: MessageType + Clone + Send + Sync + 'static,
{
    raw_publish_with(
        c,
        cl,
        group,
        "raw_async_nats_codec",
        None,
        move || Bytes::from(to_vec(&body).expect("encode")),
        |payload| {
            let value: T = codecbus::from_slice(payload).expect("decode");
            std::hint::black_box(value);
        },
    );
}

/// Raw publish/subscribe as a user writes it without codecbus: rmp-serde
/// on a serde-derived type, with a header naming the type. The publisher
/// encodes each message, the subscriber decodes it.
fn raw_rmp_serde_publish<S>(
    c: &mut Criterion,
    cl: &Cluster,
    group: &str,
    body: S,
    headers: HeaderMap,
) where
    S: Serialize + DeserializeOwned + 'static,
{
    raw_publish_with(
        c,
        cl,
        group,
        "raw_rmp_serde",
        Some(headers),
        move || Bytes::from(rmp_serde::to_vec_named(&body).expect("encode")),
        |payload| {
            let value: S = rmp_serde::from_slice(payload).expect("decode");
            std::hint::black_box(value);
        },
    );
}

/// Raw async-nats publishing `make()` (with `headers`, if any) in batches
/// to a subscriber on the other connection that hands each payload to
/// `read`.
fn raw_publish_with(
    c: &mut Criterion,
    cl: &Cluster,
    group: &str,
    name: &str,
    headers: Option<HeaderMap>,
    make: impl Fn() -> Bytes,
    read: impl Fn(&[u8]) + Send + 'static,
) {
    let subject = format!("{name}.{group}");
    let received = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&received);
    let mut sub = cl
        .rt
        .block_on(cl.raw_b.subscribe(subject.clone()))
        .expect("subscribe");
    let task = cl.rt.spawn(async move {
        while let Some(m) = sub.next().await {
            read(std::hint::black_box(&m.payload));
            counter.fetch_add(1, Ordering::Relaxed);
        }
    });
    cl.rt.block_on(settle(&cl.raw_b));
    c.benchmark_group(group)
        .throughput(Throughput::Elements(BATCH))
        .bench_function(BenchmarkId::from_parameter(name), |bench| {
            bench.iter_custom(|rounds| {
                cl.rt.block_on(async {
                    let start = Instant::now();
                    // A batch at a time, each awaited, as for the bus.
                    for _ in 0..rounds {
                        let target = received.load(Ordering::Relaxed) + BATCH;
                        for _ in 0..BATCH {
                            match &headers {
                                Some(headers) => {
                                    cl.raw_a
                                        .publish_with_headers(
                                            subject.clone(),
                                            headers.clone(),
                                            make(),
                                        )
                                        .await
                                }
                                None => cl.raw_a.publish(subject.clone(), make()).await,
                            }
                            .expect("raw publish");
                        }
                        wait_for(&received, target).await;
                    }
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

/// The value the rmp-serde baseline sends in the paired runs, and the
/// header it sends with it (the bus's, see [`codec_header`]).
struct RmpSerde<S> {
    body: S,
    headers: HeaderMap,
}

/// The round-trip overhead measured the way a noisy machine allows:
/// blocks of the variants alternate, so load changes hit all alike.
/// Prints mean times, this process's CPU time per round trip (from Linux
/// `schedstat`) and the median per-block ratios. Only under `cargo bench`.
///
/// The variants: codecbus; raw async-nats echoing the bytes (the goal's
/// baseline); raw async-nats doing the codec work by hand (encode the
/// request, decode and re-encode it in the responder, decode the reply),
/// which separates what the bus adds from what typed messages cost; and,
/// with `serde`, raw async-nats with rmp-serde on a serde-derived type
/// doing the same work and naming the type in a header on request and reply
/// (what a user writes instead of codecbus).
fn paired_ratio<T, S>(cl: &Cluster, name: &str, body: T, payload: Bytes, serde: Option<RmpSerde<S>>)
where
    T: MessageType + Clone + Send + Sync + 'static,
    S: Serialize + DeserializeOwned + Send + 'static,
{
    const BLOCKS: usize = 40;
    const PER_BLOCK: u32 = 200;
    const VARIANTS: [&str; 4] = [
        "codecbus",
        "raw async-nats",
        "raw async-nats + codec",
        "raw async-nats + rmp-serde",
    ];
    let variants = if serde.is_some() { 4 } else { 3 };
    let address = format!("bench.paired.{name}");
    let subject = format!("raw.paired.{name}");
    let codec_subject = format!("raw.paired.codec.{name}");
    let serde_subject = format!("raw.paired.rmp_serde.{name}");
    let body = Arc::new(body);
    let (elapsed, cpu, ratios) = cl.rt.block_on(async {
        let consumer = cl.b.consumer(&address, |m: Message<T>| async move {
            m.reply(Shared(Arc::clone(m.body_arc())))
        });
        cl.b.flush().await.expect("flush");
        let mut sub = cl
            .raw_b
            .subscribe(subject.clone())
            .await
            .expect("subscribe");
        let client = cl.raw_b.clone();
        let echo = tokio::spawn(async move {
            while let Some(m) = sub.next().await {
                if let Some(reply) = m.reply {
                    let _ = client.publish(reply, m.payload).await;
                }
            }
        });
        let mut sub = cl
            .raw_b
            .subscribe(codec_subject.clone())
            .await
            .expect("subscribe");
        let client = cl.raw_b.clone();
        let typed_echo = tokio::spawn(async move {
            while let Some(m) = sub.next().await {
                let value: T = codecbus::from_slice(&m.payload).expect("decode");
                let bytes = Bytes::from(to_vec(&value).expect("encode"));
                if let Some(reply) = m.reply {
                    let _ = client.publish(reply, bytes).await;
                }
            }
        });
        let serde_echo = match &serde {
            Some(serde) => {
                let mut sub = cl
                    .raw_b
                    .subscribe(serde_subject.clone())
                    .await
                    .expect("subscribe");
                let client = cl.raw_b.clone();
                let headers = serde.headers.clone();
                Some(tokio::spawn(async move {
                    while let Some(m) = sub.next().await {
                        let value: S = rmp_serde::from_slice(&m.payload).expect("decode");
                        let bytes = Bytes::from(rmp_serde::to_vec_named(&value).expect("encode"));
                        if let Some(reply) = m.reply {
                            let _ = client
                                .publish_with_headers(reply, headers.clone(), bytes)
                                .await;
                        }
                    }
                }))
            }
            None => None,
        };
        settle(&cl.raw_b).await;
        let mut elapsed = [Duration::ZERO; 4];
        let mut cpu = [0u64; 4];
        let mut ratios: [Vec<f64>; 3] = std::array::from_fn(|_| Vec::with_capacity(BLOCKS));
        for _ in 0..BLOCKS {
            let mut block = [Duration::ZERO; 4];
            for (variant, time) in block.iter_mut().enumerate().take(variants) {
                let cpu0 = schedstat()[0];
                let start = Instant::now();
                for _ in 0..PER_BLOCK {
                    match variant {
                        0 => {
                            let reply: Message<T> =
                                cl.a.request(&address, Shared(Arc::clone(&body)))
                                    .await
                                    .expect("request");
                            std::hint::black_box(reply);
                        }
                        1 => {
                            let reply = cl
                                .raw_a
                                .request(subject.clone(), payload.clone())
                                .await
                                .expect("raw request");
                            std::hint::black_box(reply);
                        }
                        2 => {
                            let bytes = Bytes::from(to_vec(&*body).expect("encode"));
                            let reply = cl
                                .raw_a
                                .request(codec_subject.clone(), bytes)
                                .await
                                .expect("raw request");
                            let value: T = codecbus::from_slice(&reply.payload).expect("decode");
                            std::hint::black_box(value);
                        }
                        _ => {
                            let serde = serde.as_ref().expect("a fourth variant with serde");
                            let bytes =
                                Bytes::from(rmp_serde::to_vec_named(&serde.body).expect("encode"));
                            let reply = cl
                                .raw_a
                                .request_with_headers(
                                    serde_subject.clone(),
                                    serde.headers.clone(),
                                    bytes,
                                )
                                .await
                                .expect("raw request");
                            let value: S = rmp_serde::from_slice(&reply.payload).expect("decode");
                            std::hint::black_box(value);
                        }
                    }
                }
                *time = start.elapsed();
                cpu[variant] += schedstat()[0] - cpu0;
                elapsed[variant] += *time;
            }
            for (against, ratios) in ratios.iter_mut().enumerate().take(variants - 1) {
                ratios.push(block[0].as_secs_f64() / block[against + 1].as_secs_f64());
            }
        }
        echo.abort();
        typed_echo.abort();
        if let Some(serde_echo) = serde_echo {
            serde_echo.abort();
        }
        consumer.unregister().await;
        (elapsed, cpu, ratios)
    });
    let n = f64::from(PER_BLOCK) * BLOCKS as f64;
    for (i, variant) in VARIANTS.iter().enumerate().take(variants) {
        eprintln!(
            "bus::cluster/paired-rtt/{name}: {variant:<26} {:>6.1} µs per round trip, {:>5.1} µs of it on this process's CPU (both nodes)",
            elapsed[i].as_secs_f64() * 1e6 / n,
            cpu[i] as f64 / 1e3 / n
        );
    }
    for (ratios, against) in ratios.into_iter().zip(&VARIANTS[1..variants]) {
        let mut sorted = ratios;
        sorted.sort_by(f64::total_cmp);
        eprintln!(
            "bus::cluster/paired-rtt/{name}: codecbus / {against} = {:.3} (median of {BLOCKS} alternating blocks of {PER_BLOCK}; quartiles {:.3}..{:.3})",
            sorted[BLOCKS / 2],
            sorted[BLOCKS / 4],
            sorted[BLOCKS * 3 / 4]
        );
    }
}

/// Messages that arrived, and a wake-up when a target count is reached
/// (the paired publish run awaits it instead of polling).
#[derive(Default)]
struct Arrivals {
    count: AtomicU64,
    target: AtomicU64,
    reached: tokio::sync::Notify,
}

impl Arrivals {
    fn arrived(&self) {
        let n = self.count.fetch_add(1, Ordering::AcqRel) + 1;
        if n == self.target.load(Ordering::Acquire) {
            self.reached.notify_one();
        }
    }

    /// Expects `more` further messages: returns the count to wait for.
    /// Call before sending them.
    fn expect(&self, more: u64) -> u64 {
        let target = self.count.load(Ordering::Acquire) + more;
        self.target.store(target, Ordering::Release);
        target
    }

    /// Waits until `target` messages arrived in all.
    async fn wait_for(&self, target: u64) {
        let wait = async {
            while self.count.load(Ordering::Acquire) < target {
                self.reached.notified().await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), wait)
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "only {} of {target} messages arrived",
                    self.count.load(Ordering::Acquire)
                )
            });
    }
}

/// Publish throughput measured the way a noisy machine allows: blocks of
/// codecbus, of raw async-nats doing the same codec work (encode on the
/// publisher, decode on the subscriber) and, with `serde`, of raw
/// async-nats with rmp-serde on a serde-derived type doing the same work
/// and naming the type in a header (what a user writes instead of codecbus)
/// alternate, so load changes hit all alike. Each block publishes
/// `PER_BLOCK` messages from `a` and awaits their arrival on `b`. Prints
/// messages/s, this process's CPU time per message (both nodes, from
/// `schedstat`) and, against each baseline, the median of the per-block
/// throughput ratios. Only under `cargo bench`.
fn paired_publish<T, S>(cl: &Cluster, name: &str, body: T, serde: Option<RmpSerde<S>>)
where
    T: MessageType + Clone + Send + Sync + 'static,
    S: Serialize + DeserializeOwned + Send + 'static,
{
    const BLOCKS: usize = 30;
    const PER_BLOCK: u64 = 4000;
    const VARIANTS: [&str; 3] = [
        "codecbus",
        "raw async-nats + codec",
        "raw async-nats + rmp-serde",
    ];
    let variants = if serde.is_some() { 3 } else { 2 };
    let address = format!("bench.paired.publish.{name}");
    let subject = format!("raw.paired.publish.{name}");
    let serde_subject = format!("raw.paired.publish.rmp_serde.{name}");
    let body = Arc::new(body);
    let arrivals: [Arc<Arrivals>; 3] = std::array::from_fn(|_| Arc::default());
    let (elapsed, cpu, ratios) = cl.rt.block_on(async {
        let bus_arrivals = Arc::clone(&arrivals[0]);
        let options = ConsumerOptions::new().queue_capacity(1 << 20);
        let consumer =
            cl.b.consumer_with(&address, options, move |_m: Message<T>| {
                bus_arrivals.arrived();
                async {}
            });
        cl.b.flush().await.expect("flush");
        let mut sub = cl
            .raw_b
            .subscribe(subject.clone())
            .await
            .expect("subscribe");
        let raw_arrivals = Arc::clone(&arrivals[1]);
        let reader = tokio::spawn(async move {
            while let Some(m) = sub.next().await {
                let value: T = codecbus::from_slice(&m.payload).expect("decode");
                std::hint::black_box(value);
                raw_arrivals.arrived();
            }
        });
        let serde_reader = if serde.is_some() {
            let mut sub = cl
                .raw_b
                .subscribe(serde_subject.clone())
                .await
                .expect("subscribe");
            let serde_arrivals = Arc::clone(&arrivals[2]);
            Some(tokio::spawn(async move {
                while let Some(m) = sub.next().await {
                    let value: S = rmp_serde::from_slice(&m.payload).expect("decode");
                    std::hint::black_box(value);
                    serde_arrivals.arrived();
                }
            }))
        } else {
            None
        };
        settle(&cl.raw_b).await;
        let mut elapsed = [Duration::ZERO; 3];
        let mut cpu = [0u64; 3];
        let mut ratios: [Vec<f64>; 2] = std::array::from_fn(|_| Vec::with_capacity(BLOCKS));
        for _ in 0..BLOCKS {
            let mut block = [Duration::ZERO; 3];
            for (variant, time) in block.iter_mut().enumerate().take(variants) {
                let cpu0 = schedstat()[0];
                let start = Instant::now();
                let target = arrivals[variant].expect(PER_BLOCK);
                match variant {
                    0 => {
                        for _ in 0..PER_BLOCK {
                            cl.a.publish(&address, Shared(Arc::clone(&body)))
                                .await
                                .expect("publish");
                        }
                    }
                    1 => {
                        for _ in 0..PER_BLOCK {
                            let bytes = Bytes::from(to_vec(&*body).expect("encode"));
                            cl.raw_a
                                .publish(subject.clone(), bytes)
                                .await
                                .expect("raw publish");
                        }
                    }
                    _ => {
                        let serde = serde.as_ref().expect("a third variant with serde");
                        for _ in 0..PER_BLOCK {
                            let bytes =
                                Bytes::from(rmp_serde::to_vec_named(&serde.body).expect("encode"));
                            cl.raw_a
                                .publish_with_headers(
                                    serde_subject.clone(),
                                    serde.headers.clone(),
                                    bytes,
                                )
                                .await
                                .expect("raw publish");
                        }
                    }
                }
                arrivals[variant].wait_for(target).await;
                *time = start.elapsed();
                cpu[variant] += schedstat()[0] - cpu0;
                elapsed[variant] += *time;
            }
            // Throughput ratio: the inverse of the time ratio.
            for (against, ratios) in ratios.iter_mut().enumerate().take(variants - 1) {
                ratios.push(block[against + 1].as_secs_f64() / block[0].as_secs_f64());
            }
        }
        reader.abort();
        if let Some(serde_reader) = serde_reader {
            serde_reader.abort();
        }
        consumer.unregister().await;
        (elapsed, cpu, ratios)
    });
    let n = PER_BLOCK as f64 * BLOCKS as f64;
    for (i, variant) in VARIANTS.iter().enumerate().take(variants) {
        eprintln!(
            "bus::cluster/paired-publish/{name}: {variant:<26} {:>8.0} msg/s, {:>5.2} µs of this process's CPU per message (both nodes)",
            n / elapsed[i].as_secs_f64(),
            cpu[i] as f64 / 1e3 / n
        );
    }
    for (i, (ratios, against)) in ratios.into_iter().zip(&VARIANTS[1..variants]).enumerate() {
        let mut sorted = ratios;
        sorted.sort_by(f64::total_cmp);
        eprintln!(
            "bus::cluster/paired-publish/{name}: codecbus / {against} throughput = {:.3} (median of {BLOCKS} alternating blocks of {PER_BLOCK}; quartiles {:.3}..{:.3}); CPU per message {:.3}",
            sorted[BLOCKS / 2],
            sorted[BLOCKS / 4],
            sorted[BLOCKS * 3 / 4],
            cpu[0] as f64 / cpu[i + 1] as f64
        );
    }
}

/// LZ4 on the wire, paired: publishes of `body` to a consumer on `b`, from
/// `a` (no compression) and from a node that compresses bodies over
/// 1 KiB (`NatsOptions::compress_above(1024)`), in alternating blocks of
/// `per_block`. Prints each one's messages/s, the median ratio of the
/// compressing node's throughput to the plain one's (quartiles), and the
/// bytes one message of each takes on the wire. Only under `cargo bench`.
fn paired_compression<T>(cl: &Cluster, name: &str, body: T, per_block: u64)
where
    T: MessageType + Clone + Send + Sync + 'static,
{
    const BLOCKS: usize = 20;
    let address = format!("bench.paired.lz4.{name}");
    let body = Arc::new(body);
    let arrivals = Arc::new(Arrivals::default());
    let url = cl._server.url();
    let (elapsed, ratios, wire) = cl.rt.block_on(async {
        let compressing = EventBus::builder()
            .nats(NatsOptions::new(url).compress_above(1024))
            .connect()
            .await
            .expect("compressing node");
        let counted = Arc::clone(&arrivals);
        let consumer = cl.b.consumer_with(
            &address,
            ConsumerOptions::new().queue_capacity(1 << 20),
            move |_m: Message<T>| {
                counted.arrived();
                async {}
            },
        );
        cl.b.flush().await.expect("flush");
        // One message from each, seen raw on the publish subject.
        let mut sniff = cl
            .raw_b
            .subscribe(format!("codecbus.p.{address}"))
            .await
            .expect("subscribe");
        settle(&cl.raw_b).await;
        let mut wire = [0usize; 2];
        for (variant, size) in wire.iter_mut().enumerate() {
            let from = if variant == 0 { &cl.a } else { &compressing };
            let target = arrivals.expect(1);
            from.publish(&address, Shared(Arc::clone(&body)))
                .await
                .expect("publish");
            arrivals.wait_for(target).await;
            *size = sniff.next().await.expect("a sniffed message").payload.len();
        }
        drop(sniff);
        let mut elapsed = [Duration::ZERO; 2];
        let mut ratios = Vec::with_capacity(BLOCKS);
        for _ in 0..BLOCKS {
            let mut block = [Duration::ZERO; 2];
            for (variant, time) in block.iter_mut().enumerate() {
                let from = if variant == 0 { &cl.a } else { &compressing };
                let start = Instant::now();
                let target = arrivals.expect(per_block);
                for _ in 0..per_block {
                    from.publish(&address, Shared(Arc::clone(&body)))
                        .await
                        .expect("publish");
                }
                arrivals.wait_for(target).await;
                *time = start.elapsed();
                elapsed[variant] += *time;
            }
            ratios.push(block[0].as_secs_f64() / block[1].as_secs_f64());
        }
        consumer.unregister().await;
        compressing.close().await;
        (elapsed, ratios, wire)
    });
    let n = per_block as f64 * BLOCKS as f64;
    for (i, variant) in ["plain", "compress_above(1024)"].iter().enumerate() {
        eprintln!(
            "bus::cluster/paired-lz4/{name}: {variant:<21} {:>8.0} msg/s, {:>7} bytes on the wire",
            n / elapsed[i].as_secs_f64(),
            wire[i]
        );
    }
    let mut sorted = ratios;
    sorted.sort_by(f64::total_cmp);
    eprintln!(
        "bus::cluster/paired-lz4/{name}: compressed / plain throughput = {:.3} (median of {BLOCKS} alternating blocks of {per_block}; quartiles {:.3}..{:.3}); {:.2}x smaller on the wire",
        sorted[BLOCKS / 2],
        sorted[BLOCKS / 4],
        sorted[BLOCKS * 3 / 4],
        wire[0] as f64 / wire[1] as f64
    );
}

/// This thread's time on a CPU and time runnable but waiting for one, in
/// ns (Linux `schedstat`; zeros elsewhere).
fn schedstat() -> [u64; 2] {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let mut fields = text.split_whitespace().map(|f| f.parse().unwrap_or(0));
    [fields.next().unwrap_or(0), fields.next().unwrap_or(0)]
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
    // The rmp-serde baseline of the derived type: the same fields on a
    // serde-derived struct, with a header naming the type.
    let serde_derived = payloads::serde_derived::customer(0);
    let derived_header = codec_header::<payloads::immutable::Customer>();
    check_rmp_serde(&cl, &derived, &serde_derived, &derived_header);
    let rmp_serde_baseline = || RmpSerde {
        body: serde_derived.clone(),
        headers: derived_header.clone(),
    };

    let rtt = "bus::cluster/rtt/derived_obj";
    bus_rtt(c, &cl, rtt, "codecbus", derived.clone());
    raw_rtt(c, &cl, rtt, derived_bytes.clone());
    raw_rmp_serde_rtt(c, &cl, rtt, serde_derived.clone(), derived_header.clone());
    let rtt = "bus::cluster/rtt/jsobj_obj";
    bus_rtt::<JsObj>(c, &cl, rtt, "codecbus", jsobj.clone());
    raw_rtt(c, &cl, rtt, jsobj_bytes.clone());

    let publish = "bus::cluster/publish/derived_obj";
    bus_publish(c, &cl, publish, "codecbus", derived.clone());
    raw_publish(c, &cl, publish, derived_bytes.clone());
    raw_codec_publish(c, &cl, publish, derived.clone());
    raw_rmp_serde_publish(
        c,
        &cl,
        publish,
        serde_derived.clone(),
        derived_header.clone(),
    );
    let publish = "bus::cluster/publish/jsobj_obj";
    bus_publish::<JsObj>(c, &cl, publish, "codecbus", jsobj.clone());
    raw_publish(c, &cl, publish, jsobj_bytes.clone());
    raw_codec_publish(c, &cl, publish, jsobj.clone());

    // Under `cargo bench`, unless a filter excludes it.
    let bench = std::env::args().any(|a| a == "--bench");
    let filter = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let paired = |what: &str| bench && filter.as_ref().is_none_or(|f| what.contains(f.as_str()));
    // `JsObj` has no serde-derived counterpart: no rmp-serde baseline.
    let no_rmp_serde = || None::<RmpSerde<()>>;
    if paired("bus::cluster/paired-publish") {
        paired_publish(
            &cl,
            "derived_obj",
            derived.clone(),
            Some(rmp_serde_baseline()),
        );
        paired_publish::<JsObj, _>(&cl, "jsobj_obj", jsobj.clone(), no_rmp_serde());
    }
    if paired("bus::cluster/paired-lz4") {
        let twitter = JsValue::from(payloads::json_payload("twitter").expect("twitter payload"))
            .into_object()
            .expect("the twitter payload is a JSON object");
        paired_compression::<JsObj>(&cl, "twitter", twitter, 50);
        // Under the threshold: both nodes send it plain.
        paired_compression(&cl, "derived_obj", derived.clone(), 4000);
    }
    if paired("bus::cluster/paired-rtt") {
        paired_ratio(
            &cl,
            "derived_obj",
            derived,
            derived_bytes,
            Some(rmp_serde_baseline()),
        );
        paired_ratio::<JsObj, _>(&cl, "jsobj_obj", jsobj, jsobj_bytes, no_rmp_serde());
    }

    cl.rt.block_on(async {
        cl.a.close().await;
        cl.b.close().await;
    });
    #[cfg(feature = "jetstream")]
    durable_send(c, payloads::immutable::customer(0));
}

/// Durable against plain sends on two nodes of a `nats-server -js`.
#[cfg(feature = "jetstream")]
fn durable_send<T>(c: &mut Criterion, body: T)
where
    T: MessageType + Clone + Send + Sync + 'static,
{
    use codecbus::bus::DurableOptions;

    let config = harness::Config {
        jetstream: true,
        ..harness::Config::default()
    };
    let Some(server) = harness::NatsServer::start_with("bus::cluster durable", &config) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let url = server.url();
    let node = |name: &'static str| {
        EventBus::builder()
            .nats(
                NatsOptions::new(url.clone())
                    .connection_name(name)
                    .durable("bench.durable", DurableOptions::new()),
            )
            .connect()
    };
    let (a, b) = rt.block_on(async { (node("a").await.expect("a"), node("b").await.expect("b")) });
    let received = Arc::new(AtomicU64::new(0));
    let options = ConsumerOptions::new().queue_capacity(1 << 20);
    let consumers = rt.block_on(async {
        let mut consumers = Vec::new();
        for address in ["bench.durable", "bench.plain"] {
            let counter = Arc::clone(&received);
            consumers.push(
                b.consumer_with(address, options.clone(), move |_m: Message<T>| {
                    counter.fetch_add(1, Ordering::Relaxed);
                    async {}
                }),
            );
        }
        b.flush().await.expect("flush");
        consumers
    });
    let body = Arc::new(body);
    let group = "bus::cluster/durable/derived_obj";
    for (name, address, tasks) in [
        ("plain", "bench.plain", 1u64),
        ("durable", "bench.durable", 1),
        ("durable_16_tasks", "bench.durable", 16),
    ] {
        c.benchmark_group(group)
            .throughput(Throughput::Elements(BATCH))
            .bench_function(BenchmarkId::from_parameter(name), |bench| {
                bench.iter_custom(|rounds| {
                    rt.block_on(async {
                        let target = received.load(Ordering::Relaxed) + rounds * BATCH;
                        let start = Instant::now();
                        let mut senders = Vec::new();
                        for task in 0..tasks {
                            let per_task = (rounds * BATCH + task) / tasks;
                            let (a, body) = (a.clone(), Arc::clone(&body));
                            senders.push(tokio::spawn(async move {
                                for _ in 0..per_task {
                                    a.send(address, Shared(Arc::clone(&body)))
                                        .await
                                        .expect("send");
                                }
                            }));
                        }
                        for sender in senders {
                            sender.await.expect("sender");
                        }
                        wait_for(&received, target).await;
                        start.elapsed()
                    })
                })
            });
    }
    rt.block_on(async {
        for consumer in consumers {
            consumer.unregister().await;
        }
        a.close().await;
        b.close().await;
    });
    drop(server);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = cluster_benches
}
criterion_main!(benches);
