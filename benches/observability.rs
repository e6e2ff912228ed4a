//! What observability costs: request/reply round trips with metrics and
//! traces off (the default), metrics on (a Prometheus recorder; with and
//! without the handler and request timings), traces on (spans exported
//! through `tracing-opentelemetry` and a batch processor; 1% of traces
//! sampled by the bus, `trace_sampling(0.01)`; 1% sampled by the
//! OpenTelemetry SDK's sampler alone, the bus making every span; or all),
//! and metrics with all traces, side by side in one process.
//!
//! Two settings: the local bounce (requester and echoing consumer on one
//! bus, an immutable body shared without copies) and a NATS round trip
//! between two nodes on one local `nats-server`. Each configuration runs
//! in blocks that alternate with the others, several times over, and the
//! report gives each one's median time per round trip and its median ratio
//! to "off" (a loaded machine moves every block alike, the ratio much
//! less). Plain timing loops, no criterion: the ratio is the result.
//!
//! `cargo bench -p codecbus-benches --bench observability`;
//! `cargo test --benches` runs nothing here (it takes a minute). Without
//! `nats-server` on `PATH` the NATS part says so and is left out.

#[path = "../bus/tests/common/nats.rs"]
mod harness;

use std::sync::Arc;
use std::time::{Duration, Instant};

use codecbus::bus::{EventBus, EventBusBuilder, Message, MetricsOptions, NatsOptions, Shared};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider, SpanData, SpanExporter};
use tokio::runtime::Runtime;
use tracing::Dispatch;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;

/// An exporter that drops what it gets: the cost measured is the bus's
/// and the SDK's, not a collector's.
#[derive(Debug)]
struct Discard;

impl SpanExporter for Discard {
    async fn export(&self, _batch: Vec<SpanData>) -> OTelSdkResult {
        Ok(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Setting {
    Off,
    Counters,
    Metrics,
    Filtered,
    Sampled,
    SdkSampled,
    Traces,
    Both,
}

const SETTINGS: [Setting; 8] = [
    Setting::Off,
    Setting::Counters,
    Setting::Metrics,
    Setting::Filtered,
    Setting::Sampled,
    Setting::SdkSampled,
    Setting::Traces,
    Setting::Both,
];

impl Setting {
    fn name(self) -> &'static str {
        match self {
            Self::Off => "off (default)",
            Self::Counters => "metrics, timings off",
            Self::Metrics => "metrics",
            Self::Filtered => "traces, filtered out",
            Self::Sampled => "traces, 1% sampled",
            Self::SdkSampled => "traces, 1% by the SDK",
            Self::Traces => "traces, all sampled",
            Self::Both => "metrics and all traces",
        }
    }

    fn builder(self) -> EventBusBuilder {
        let builder = EventBus::builder();
        let builder = match self {
            Self::Counters => builder.metrics(MetricsOptions::new().timings(false)),
            Self::Metrics | Self::Both => builder.metrics(MetricsOptions::new()),
            _ => builder,
        };
        let builder = if self == Self::Sampled {
            builder.trace_sampling(0.01)
        } else {
            builder
        };
        builder.traces(matches!(
            self,
            Self::Filtered | Self::Sampled | Self::SdkSampled | Self::Traces | Self::Both
        ))
    }

    /// The subscriber the setting runs under (none: the default).
    fn dispatch(self, otel: &Otel) -> Option<&Dispatch> {
        match self {
            Self::Filtered => Some(&otel.filtered),
            Self::SdkSampled => Some(&otel.sdk_sampled),
            Self::Sampled | Self::Traces | Self::Both => Some(&otel.all),
            _ => None,
        }
    }
}

/// The subscribers of the traced settings: the OpenTelemetry layer as the
/// guide recommends it for the bus (`book/src/observability.md`) (no per-span thread, source location
/// or busy/idle attributes) under an INFO level filter, spans exported in
/// batches, every trace sampled (the SDK's sampler follows the bus's
/// decision) or 1% of them by the SDK's sampler (decided where a trace
/// starts, followed by its children on every node).
/// `filtered` is the same layer under a WARN filter: the bus makes its
/// spans, the subscriber takes none of them.
struct Otel {
    all: Dispatch,
    sdk_sampled: Dispatch,
    filtered: Dispatch,
}

fn otel() -> Otel {
    // The bus writes and reads trace context with the global propagator: W3C
    // Trace Context, as a production program installs it (without one no
    // context is written and the traced figures would be too low).
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    let dispatch = |sampler: Sampler, level: LevelFilter| {
        let provider = SdkTracerProvider::builder()
            .with_sampler(sampler)
            .with_batch_exporter(Discard)
            .build();
        let layer = tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("codecbus-bench"))
            .with_tracked_inactivity(false)
            .with_threads(false)
            .with_location(false);
        // As in production: events below INFO (the bus's debug logs) off.
        Dispatch::new(tracing_subscriber::registry().with(layer).with(level))
    };
    Otel {
        all: dispatch(
            Sampler::ParentBased(Box::new(Sampler::AlwaysOn)),
            LevelFilter::INFO,
        ),
        sdk_sampled: dispatch(
            Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(0.01))),
            LevelFilter::INFO,
        ),
        filtered: dispatch(Sampler::AlwaysOn, LevelFilter::WARN),
    }
}

/// One bus (or pair of nodes) per setting, and how to run a block of
/// round trips on it.
struct Pair {
    requester: EventBus,
    address: &'static str,
    _nodes: Vec<EventBus>,
}

fn echo(bus: &EventBus, address: &str) {
    let _ = bus.consumer(address, |m: Message<String>| async move {
        m.reply(Shared(Arc::clone(m.body_arc())))
    });
}

async fn block(pair: &Pair, body: &Arc<String>, rounds: u32) -> Duration {
    let start = Instant::now();
    for _ in 0..rounds {
        let back: Message<String> = pair
            .requester
            .request(pair.address, Shared(Arc::clone(body)))
            .await
            .expect("echo");
        debug_assert_eq!(back.body().len(), body.len());
    }
    start.elapsed()
}

/// Runs `blocks` alternating blocks of `rounds` round trips per setting;
/// prints the medians.
fn compare(
    title: &str,
    rt: &Runtime,
    otel: &Otel,
    pairs: &[(Setting, Pair)],
    rounds: u32,
    blocks: usize,
) {
    let body = Arc::new("x".repeat(256));
    let run = |setting: Setting, pair: &Pair, rounds: u32| {
        let go = || rt.block_on(block(pair, &body, rounds));
        match setting.dispatch(otel) {
            Some(dispatch) => tracing::dispatcher::with_default(dispatch, go),
            None => go(),
        }
    };
    for (setting, pair) in pairs {
        run(*setting, pair, rounds / 5); // warm up
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); pairs.len()];
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); pairs.len()];
    for _ in 0..blocks {
        let per: Vec<f64> = pairs
            .iter()
            .map(|(setting, pair)| {
                run(*setting, pair, rounds).as_nanos() as f64 / f64::from(rounds)
            })
            .collect();
        for (i, t) in per.iter().enumerate() {
            times[i].push(*t);
            ratios[i].push(t / per[0]);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("{title} ({blocks} alternating blocks of {rounds} round trips):");
    for (i, (setting, _)) in pairs.iter().enumerate() {
        println!(
            "  {:<24} {:>9.0} ns per round trip, {:.3}x off (median ratio)",
            setting.name(),
            median(&mut times[i]),
            median(&mut ratios[i])
        );
    }
}

fn local(rt: &Runtime, otel: &Otel) {
    let pairs: Vec<(Setting, Pair)> = SETTINGS
        .iter()
        .map(|&setting| {
            let bus = setting.builder().build().expect("bus");
            let _guard = rt.enter();
            echo(&bus, "bounce");
            (
                setting,
                Pair {
                    requester: bus.clone(),
                    address: "bounce",
                    _nodes: vec![bus],
                },
            )
        })
        .collect();
    compare("local bounce", rt, otel, &pairs, 50_000, 9);
}

fn nats(rt: &Runtime, otel: &Otel) {
    if harness::binary().is_none() {
        println!(
            "NATS round trip: left out, nats-server is not on PATH (install the Debian package `nats-server`)"
        );
        return;
    }
    let Some(server) = harness::NatsServer::start("observability") else {
        return;
    };
    let url = server.url();
    let pairs: Vec<(Setting, Pair)> = SETTINGS
        .iter()
        .map(|&setting| {
            let address: &'static str = match setting {
                Setting::Off => "obs.off",
                Setting::Counters => "obs.counters",
                Setting::Metrics => "obs.metrics",
                Setting::Filtered => "obs.filtered",
                Setting::Sampled => "obs.sampled",
                Setting::SdkSampled => "obs.sdk_sampled",
                Setting::Traces => "obs.traces",
                Setting::Both => "obs.both",
            };
            let node = || {
                setting
                    .builder()
                    .nats(NatsOptions::new(url.clone()))
                    .connect()
            };
            let (a, b) = rt.block_on(async {
                let (a, b) = (node().await.expect("node a"), node().await.expect("node b"));
                echo(&b, address);
                b.flush().await.expect("flush");
                (a, b)
            });
            (
                setting,
                Pair {
                    requester: a.clone(),
                    address,
                    _nodes: vec![a, b],
                },
            )
        })
        .collect();
    compare("NATS round trip", rt, otel, &pairs, 2_000, 9);
    rt.block_on(async {
        for (_, pair) in &pairs {
            for node in &pair._nodes {
                node.close().await;
            }
        }
    });
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    // A Prometheus recorder, as a service would install one; buses with
    // metrics off never touch it.
    let _handle = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .expect("install the Prometheus recorder");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let otel = otel();
    // Profiling aid: `OBSERVABILITY_PROFILE=metrics` (a setting's name, or
    // the start of one) runs that setting's local bounce alone.
    if let Ok(only) = std::env::var("OBSERVABILITY_PROFILE") {
        let setting = SETTINGS
            .into_iter()
            .find(|s| s.name() == only)
            .or_else(|| SETTINGS.into_iter().find(|s| s.name().starts_with(&only)))
            .expect("OBSERVABILITY_PROFILE: a setting's name or the start of one");
        let bus = setting.builder().build().expect("bus");
        let _guard = rt.enter();
        echo(&bus, "bounce");
        let pair = Pair {
            requester: bus.clone(),
            address: "bounce",
            _nodes: vec![bus],
        };
        compare("profile", &rt, &otel, &[(setting, pair)], 200_000, 3);
        return;
    }
    local(&rt, &otel);
    nats(&rt, &otel);
}
