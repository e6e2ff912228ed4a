//! Short forms of the load and fault scenarios (`examples/soak.rs` runs
//! them at full size: `cargo run --release --example soak -- --help`).

#[path = "support/soak.rs"]
mod soak;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn mixed_traffic_loses_and_duplicates_nothing() {
    let r = soak::mixed(60_000, 8, 4).await.unwrap();
    assert_eq!(r.messages, 60_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sender_one_consumer_in_order() {
    soak::ordered(100_000).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_consumer_refuses_past_its_queue() {
    let (accepted, refused) = soak::paused(100_000).await.unwrap();
    assert_eq!((accepted, refused), (1_000, 99_000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_handler_fails_requests_at_once() {
    let failures = soak::panicking(1_000, 1_000).await.unwrap();
    assert_eq!(failures, 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumers_come_and_go_under_traffic() {
    let cycles = soak::churn(20_000).await.unwrap();
    assert!(cycles > 0);
}
