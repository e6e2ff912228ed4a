//! The bounce benchmark: request/reply echo on the bus, immutable payloads
//! (shared, zero-copy) against deep-copied ones, with a bare tokio
//! mpsc + oneshot round trip carrying an `Arc` as the floor, a direct call
//! of the echo handler (what no bus can beat) and the request/reply of the
//! actor libraries kameo (`ask`), ractor (`call`) and actix (`send`), all
//! with the same `Arc` body. Requester and echo share one tokio
//! current-thread runtime; actix's run on actix-rt's, a tokio current-thread
//! runtime of their own (`Case::block_on`).
//!
//! Groups are payloads (`bus::bounce/obj`, `arr4`, `arr100`, `twitter`),
//! functions are implementations, so each report lines them up side by
//! side. `cargo bench -p codecbus-benches --bench bounce`;
//! `cargo test -p codecbus-benches --bench bounce` runs each
//! once.

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use support::bounce::{IMPLS, case};
use support::payloads::PAYLOADS;

fn bounce(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let _guard = rt.enter();
    for payload in PAYLOADS {
        let mut group = c.benchmark_group(format!("bus::bounce/{payload}"));
        group.throughput(Throughput::Elements(1));
        for implementation in IMPLS {
            let Some(case) = case(&rt, payload, implementation) else {
                eprintln!(
                    "bus::bounce/{payload}/{implementation}: skipped (no derived struct for this payload)"
                );
                continue;
            };
            group.bench_function(BenchmarkId::from_parameter(implementation), |b| {
                b.iter_custom(|rounds| {
                    case.block_on(&rt, async {
                        let start = Instant::now();
                        case.run(rounds).await;
                        start.elapsed()
                    })
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bounce);
criterion_main!(benches);
