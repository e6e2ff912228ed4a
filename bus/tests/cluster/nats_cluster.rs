//! The bus across a NATS cluster: three `nats-server`s joined by routes,
//! JetStream clustered over them (`NatsCluster` in the harness), and bus
//! nodes in this process, each attached to a server of its choice by
//! giving its server list in its own order
//! ([`NatsOptions::retain_server_order`]).
//!
//! Core NATS: sends spread over consumers on other servers, publishes
//! reach every node, requests and replies cross servers, and a node whose
//! server is killed (SIGKILL) moves to another server of its list and
//! serves again. Durable addresses: a stream with three replicas, a
//! replica count or placement that differs from the existing stream's is
//! a `Config` error naming it, and durable sends survive the loss of the
//! stream's leader.
#![cfg(feature = "nats")]

use crate::harness;
use crate::tally;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use codecbus_bus::{EventBus, Message, NatsOptions};
use harness::NatsCluster;
use tally::{Tally, counting};

/// Options for a node named `name` that tries the cluster's servers
/// starting with server `first`.
fn options(cluster: &NatsCluster, first: usize, name: &str) -> NatsOptions {
    NatsOptions::with_servers(cluster.urls_from(first))
        .retain_server_order()
        .connection_name(name)
        .connection_timeout(Duration::from_secs(2))
        .max_reconnect_delay(Duration::from_millis(50))
}

/// A node named `name` attached to server `first` (checked through the
/// server's monitoring endpoint).
async fn node_on(cluster: &NatsCluster, first: usize, name: &str) -> EventBus {
    let bus = EventBus::builder()
        .default_timeout(Duration::from_secs(2))
        .nats(options(cluster, first, name))
        .connect()
        .await
        .expect("connect to the test cluster");
    eventually(&format!("{name} shows on server {first}"), || {
        cluster.server_of(name) == Some(first)
    })
    .await;
    bus
}

/// Polls `check` every 10 ms until it holds; panics naming `what` after
/// 20 s (generous: three servers on a loaded machine).
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Until every node's subscriptions reached every server: a request to
/// `address` from each node in `from` is answered.
async fn until_routed(from: &[&EventBus], address: &str) {
    for bus in from {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match bus.request::<u64>(address, 0u64).await {
                Ok(_) => break,
                Err(e) => assert!(
                    Instant::now() < deadline,
                    "{address} not reachable across the cluster: {e}"
                ),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_order_given_is_kept() {
    let cluster = NatsCluster::for_test("the_server_order_given_is_kept", 3);
    // Each node starts its list with another server, and stays there.
    let mut nodes = Vec::new();
    for (i, name) in ["o1", "o2", "o3"].into_iter().enumerate() {
        nodes.push(node_on(&cluster, i, name).await);
    }
    for (i, name) in ["o1", "o2", "o3"].into_iter().enumerate() {
        assert_eq!(cluster.server_of(name), Some(i), "{name}");
    }
    for node in nodes {
        node.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sends_publishes_and_requests_cross_servers() {
    let cluster = NatsCluster::for_test("sends_publishes_and_requests_cross_servers", 3);
    // The sender on s1; consumers on s2 and s3 only.
    let sender = node_on(&cluster, 0, "sender").await;
    let b = node_on(&cluster, 1, "b").await;
    let c = node_on(&cluster, 2, "c").await;
    let tally = Tally::default();
    let _work_b = counting(&b, "work", "b", &tally);
    let _work_c = counting(&c, "work", "c", &tally);
    let _news_a = counting(&sender, "news", "a-news", &tally);
    let _news_b = counting(&b, "news", "b-news", &tally);
    let _news_c = counting(&c, "news", "c-news", &tally);
    // The echo service lives on s3 alone; every reply says who served it.
    let _echo = c.consumer("echo", |m: Message<u64>| async move {
        m.reply(*m.body() + 1000)
    });
    for bus in [&sender, &b, &c] {
        bus.flush().await.expect("flush");
    }
    until_routed(&[&sender, &b], "echo").await;

    // Wait until both consumers of `work` are known on s1: a handful of
    // sends reach each of them.
    let mut n = 0u64;
    let deadline = Instant::now() + Duration::from_secs(20);
    while tally.get("b").is_empty() || tally.get("c").is_empty() {
        assert!(Instant::now() < deadline, "a consumer of work got nothing");
        sender.send("work", n).await.expect("send");
        n += 1;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let before = (tally.get("b").len(), tally.get("c").len());
    const SENDS: u64 = 1000;
    for i in 0..SENDS {
        sender.send("work", n + i).await.expect("send");
    }
    let total = n + SENDS;
    eventually("every send handled once", || {
        tally.get("b").len() + tally.get("c").len() == total as usize
    })
    .await;
    let (on_b, on_c) = (
        tally.get("b").len() - before.0,
        tally.get("c").len() - before.1,
    );
    // NATS picks a remote member of a queue group at random: both servers
    // get a fair share (an even split has a standard deviation of 16 over
    // 1000; 300 is 12 of them away).
    assert!(
        on_b > 300 && on_c > 300,
        "sends across servers were not spread: s2 {on_b}, s3 {on_c}"
    );
    let mut all: Vec<u64> = tally.get("b");
    all.extend(tally.get("c"));
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), total as usize, "a send was handled twice");

    // A publish from s2 reaches the nodes of all three servers.
    for i in 0..50u64 {
        b.publish("news", i).await.expect("publish");
    }
    eventually("every node got every publish", || {
        ["a-news", "b-news", "c-news"]
            .iter()
            .all(|who| tally.get(who) == (0..50).collect::<Vec<_>>())
    })
    .await;

    // Requests from s1 and s2 answered on s3, replies back across.
    for (i, asker) in [&sender, &b].into_iter().enumerate() {
        let reply: Message<u64> = asker.request("echo", i as u64).await.expect("request");
        assert_eq!(*reply.body(), i as u64 + 1000);
    }
    for bus in [sender, b, c] {
        bus.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_server_dies_serves_again_from_another() {
    let mut cluster =
        NatsCluster::for_test("a_node_whose_server_dies_serves_again_from_another", 3);
    let asker = node_on(&cluster, 0, "asker").await;
    // The service's node prefers s2, then s3, then s1.
    let service = node_on(&cluster, 1, "service").await;
    let received = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&received);
    let _ticks = service.consumer("ticks", move |_: Message<u64>| {
        counter.fetch_add(1, Ordering::Relaxed);
        async {}
    });
    let _echo = service.consumer("echo", |m: Message<u64>| async move { m.reply(*m.body()) });
    service.flush().await.expect("flush");
    until_routed(&[&asker], "echo").await;

    // Publishes every millisecond, and a request every 20 ms, while s2 is
    // killed; at most once: those in flight while the service's node has
    // no server are lost, and its consumers are back once it reconnected.
    let sent = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ticker = {
        let (asker, sent, stop) = (asker.clone(), Arc::clone(&sent), Arc::clone(&stop));
        tokio::spawn(async move {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if asker.publish("ticks", i).await.is_ok() {
                    sent.fetch_add(1, Ordering::Relaxed);
                }
                i += 1;
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let killed = Instant::now();
    tokio::task::block_in_place(|| cluster.server_mut(1).kill());
    let mut failed = 0u32;
    let gap = loop {
        let asked = asker
            .request_with::<u64>(
                "echo",
                7u64,
                codecbus_bus::DeliveryOptions::new().timeout(Duration::from_millis(250)),
            )
            .await;
        match asked {
            Ok(reply) => {
                assert_eq!(*reply.body(), 7);
                break killed.elapsed();
            }
            Err(_) => failed += 1,
        }
        assert!(
            killed.elapsed() < Duration::from_secs(20),
            "the service did not answer again within 20 s of its server's kill"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let moved_to = cluster.server_of("service");
    assert!(
        matches!(moved_to, Some(0 | 2)),
        "the service's node is on {moved_to:?}, not on another server of its list"
    );
    // Publishes flow again after the move.
    let at_move = received.load(Ordering::Relaxed);
    eventually("publishes reach the moved node", || {
        received.load(Ordering::Relaxed) > at_move + 50
    })
    .await;
    stop.store(true, Ordering::Relaxed);
    ticker.await.expect("ticker");
    asker.flush().await.expect("flush");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (sent, got) = (
        sent.load(Ordering::Relaxed),
        received.load(Ordering::Relaxed),
    );
    // Figures, not limits: printed for RELIABILITY.md (`--nocapture`).
    eprintln!(
        "failover: served again {:.0} ms after SIGKILL of its server ({failed} requests failed meanwhile, now on s{}); publishes {sent} sent, {got} received, {} lost (at most once)",
        gap.as_secs_f64() * 1e3,
        moved_to.map_or(0, |i| i + 1),
        sent.saturating_sub(got)
    );
    assert!(
        got <= sent,
        "more publishes received ({got}) than sent ({sent})"
    );
    asker.close().await;
    service.close().await;
}

#[cfg(feature = "jetstream")]
mod durable {
    use super::*;
    use codecbus_bus::{BuildErrorKind, DeliveryOptions, DurableOptions, MESSAGE_ID_HEADER};

    fn replicated() -> DurableOptions {
        DurableOptions::new()
            .replicas(3)
            .ack_wait(Duration::from_secs(2))
            .redelivery_delay(Duration::from_millis(50))
            .store_timeout(Duration::from_secs(2))
    }

    async fn durable_node(
        cluster: &NatsCluster,
        first: usize,
        name: &str,
        durable: DurableOptions,
    ) -> Result<EventBus, codecbus_bus::BuildError> {
        EventBus::builder()
            .default_timeout(Duration::from_secs(2))
            .nats(options(cluster, first, name).durable("orders", durable))
            .connect()
            .await
    }

    /// The stream's leader and its followers, as JetStream reports them.
    async fn stream_servers(cluster: &NatsCluster) -> (String, Vec<String>) {
        let servers: Vec<async_nats::ServerAddr> = cluster
            .urls()
            .iter()
            .map(|u| u.parse().expect("a server URL"))
            .collect();
        let client = async_nats::connect(servers).await.expect("raw client");
        let js = async_nats::jetstream::new(client);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(mut stream) = js.get_stream("codecbus_orders").await
                && let Ok(info) = stream.info().await
                && let Some(c) = &info.cluster
                && let Some(leader) = &c.leader
                && c.replicas.len() == 2
            {
                let followers = c.replicas.iter().map(|r| r.name.clone()).collect();
                return (leader.clone(), followers);
            }
            assert!(
                Instant::now() < deadline,
                "the stream has no leader with 2 followers"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_replicated_stream_is_checked_like_any_other() {
        let cluster = NatsCluster::for_test("a_replicated_stream_is_checked", 3);
        let first = durable_node(&cluster, 0, "a", replicated())
            .await
            .expect("create the replicated stream");
        let (leader, mut followers) = stream_servers(&cluster).await;
        followers.push(leader);
        followers.sort();
        assert_eq!(followers, ["s1", "s2", "s3"], "a replica on every server");
        // The consumer of sends is replicated like its stream.
        let client = async_nats::connect(cluster.server(0).url())
            .await
            .expect("raw client");
        let js = async_nats::jetstream::new(client);
        let stream = js.get_stream("codecbus_orders").await.expect("stream");
        let info = stream
            .consumer_info("send")
            .await
            .expect("the consumer of sends");
        let replicas = info.cluster.as_ref().map_or(0, |c| c.replicas.len() + 1);
        assert_eq!(replicas, 3, "{:?}", info.cluster);

        // Another replica count: a Config error naming the setting.
        let err = durable_node(&cluster, 1, "b", replicated().replicas(1))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::Config);
        let text = err.to_string();
        assert!(text.contains("3 replicas, not 1"), "{text}");
        // Another placement: the same.
        let err = durable_node(
            &cluster,
            1,
            "b",
            replicated().placement_cluster("codecbus-test"),
        )
        .await
        .unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::Config);
        assert!(err.to_string().contains("placement"), "{err}");
        // The same settings from another server: accepted.
        let same = durable_node(&cluster, 2, "c", replicated())
            .await
            .expect("the same settings");
        // More replicas than servers: the server's refusal, with the stream.
        let err = EventBus::builder()
            .nats(options(&cluster, 0, "d").durable("five", DurableOptions::new().replicas(5)))
            .connect()
            .await
            .unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::Connect);
        assert!(err.to_string().contains("codecbus_five"), "{err}");
        same.close().await;
        first.close().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stream_placed_in_a_named_cluster() {
        let cluster = NatsCluster::for_test("a_stream_placed_in_a_named_cluster", 3);
        let err = durable_node(
            &cluster,
            0,
            "a",
            replicated().placement_cluster("elsewhere"),
        )
        .await
        .unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::Connect);
        assert!(err.to_string().contains("codecbus_orders"), "{err}");
        let placed = durable_node(
            &cluster,
            0,
            "a",
            replicated().placement_cluster("codecbus-test"),
        )
        .await
        .expect("placed in the test cluster");
        // Declared without a placement: a Config error naming it.
        let err = durable_node(&cluster, 1, "b", replicated())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::Config);
        assert!(err.to_string().contains("placement"), "{err}");
        placed.close().await;
    }

    /// Sends `ids` durably, each retried with its message id until stored.
    async fn send_all(bus: &EventBus, ids: std::ops::Range<u64>) -> u64 {
        let mut retries = 0;
        for id in ids {
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let options =
                    DeliveryOptions::new().header(MESSAGE_ID_HEADER, format!("order-{id}"));
                match bus.send_with("orders", id, options).await {
                    Ok(()) => break,
                    Err(e) => {
                        assert!(
                            Instant::now() < deadline,
                            "send {id} not stored in 30 s: {e}"
                        );
                        retries += 1;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            }
        }
        retries
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn durable_sends_survive_the_stream_leaders_kill() {
        let mut cluster = NatsCluster::for_test("durable_sends_survive_the_leaders_kill", 3);
        let sender = durable_node(&cluster, 0, "sender", replicated())
            .await
            .expect("sender");
        let consumer = durable_node(&cluster, 1, "consumer", replicated())
            .await
            .expect("consumer");
        let tally = Tally::default();
        let _orders = counting(&consumer, "orders", "consumer", &tally);
        consumer.flush().await.expect("flush");

        send_all(&sender, 0..300).await;
        let (leader, _) = stream_servers(&cluster).await;
        let leader = cluster.index_of(&leader).expect("a server of the cluster");
        tokio::task::block_in_place(|| cluster.server_mut(leader).kill());
        // Sent while the leader is down: stored by the new leader once one
        // is elected (the retries cover the election).
        let retries = send_all(&sender, 300..600).await;
        tokio::task::block_in_place(|| cluster.server_mut(leader).start_again());
        send_all(&sender, 600..700).await;

        eventually("every durable send handled", || {
            let mut ids = tally.get("consumer");
            ids.sort_unstable();
            ids.dedup();
            ids == (0..700).collect::<Vec<_>>()
        })
        .await;
        eprintln!(
            "durable R3: leader s{} killed, {retries} send retries, {} handlings of 700 sends",
            leader + 1,
            tally.get("consumer").len()
        );
        sender.close().await;
        consumer.close().await;
    }
}
