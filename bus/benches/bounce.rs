//! The bounce: sequential request/reply echo on the bus against a bare
//! tokio `mpsc` + `oneshot` round trip carrying the same `Arc` (the floor).
//! Requester and consumer are tasks on one runtime. Prints the ratio; run
//! with `cargo bench -p codecbus-bus --bench bounce`.
//!
//! Plain timing loops (no criterion) so that both sides run alternately in
//! one process and the ratio is taken side by side.

use std::sync::Arc;
use std::time::{Duration, Instant};

use codecbus_bus::{EventBus, Message, Shared};
use tokio::sync::{mpsc, oneshot};

type Body = Arc<String>;

async fn floor(rounds: u64, body: &Body) -> Duration {
    let (tx, mut rx) = mpsc::channel::<(Body, oneshot::Sender<Body>)>(1000);
    let server = tokio::spawn(async move {
        while let Some((body, reply)) = rx.recv().await {
            let _ = reply.send(body);
        }
    });
    let start = Instant::now();
    for _ in 0..rounds {
        let (otx, orx) = oneshot::channel();
        tx.send((Arc::clone(body), otx)).await.unwrap();
        let back = orx.await.unwrap();
        debug_assert!(Arc::ptr_eq(&back, body));
    }
    let elapsed = start.elapsed();
    drop(tx);
    server.await.unwrap();
    elapsed
}

async fn bounce(rounds: u64, body: &Body) -> Duration {
    let bus = EventBus::new();
    let consumer = bus.consumer("bounce", |m: Message<String>| async move {
        m.reply(Shared(Arc::clone(m.body_arc())))
    });
    let start = Instant::now();
    for _ in 0..rounds {
        let back: Message<String> = bus
            .request("bounce", Shared(Arc::clone(body)))
            .await
            .unwrap();
        debug_assert!(Arc::ptr_eq(back.body_arc(), body));
    }
    let elapsed = start.elapsed();
    consumer.unregister().await;
    elapsed
}

fn run(name: &str, rt: &tokio::runtime::Runtime) {
    let body: Body = Arc::new("x".repeat(256));
    let rounds = 100_000;
    rt.block_on(async {
        // warm up
        floor(rounds / 10, &body).await;
        bounce(rounds / 10, &body).await;
    });
    let mut ratios = Vec::new();
    let (mut best_floor, mut best_bus) = (Duration::MAX, Duration::MAX);
    for _ in 0..7 {
        let (f, b) = rt.block_on(async {
            let f = tokio::spawn({
                let body = Arc::clone(&body);
                async move { floor(rounds, &body).await }
            })
            .await
            .unwrap();
            let b = tokio::spawn({
                let body = Arc::clone(&body);
                async move { bounce(rounds, &body).await }
            })
            .await
            .unwrap();
            (f, b)
        });
        best_floor = best_floor.min(f);
        best_bus = best_bus.min(b);
        ratios.push(b.as_secs_f64() / f.as_secs_f64());
    }
    ratios.sort_by(f64::total_cmp);
    let per = |d: Duration| d.as_nanos() as f64 / rounds as f64;
    println!(
        "bus::bounce/{name}: floor {:.0} ns, bus {:.0} ns per round trip; ratio median {:.2}, best-of {:.2}",
        per(best_floor),
        per(best_bus),
        ratios[ratios.len() / 2],
        best_bus.as_secs_f64() / best_floor.as_secs_f64()
    );
}

fn main() {
    // `cargo test --benches` runs this with `--bench` absent: keep it short.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Profiling aid: one side only (e.g. under callgrind).
    if let Ok(side) = std::env::var("BOUNCE_ONLY") {
        let body: Body = Arc::new("x".repeat(256));
        let rounds = 200_000;
        let elapsed = current.block_on(async {
            match side.as_str() {
                "floor" => floor(rounds, &body).await,
                _ => bounce(rounds, &body).await,
            }
        });
        let per = elapsed.as_nanos() as f64 / rounds as f64;
        println!("{side}: {per:.0} ns per round trip");
        return;
    }
    run("current_thread", &current);
    if std::env::var_os("BOUNCE_CURRENT_ONLY").is_some() {
        return;
    }
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    run("multi_thread", &multi);
}
