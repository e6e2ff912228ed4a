//! What the in-memory cluster adds to the conformance suite
//! (`conformance.rs`): its subscriptions follow the consumers, a node that
//! closes or goes away leaves it, a send takes turns among the nodes, a
//! body crosses encoded (never the sender's allocation), and a bus has one
//! cluster transport.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use codecbus_bus::{
    DEFAULT_MAX_PAYLOAD, EventBus, InMemoryCluster, Message, RequestErrorKind, Shared,
};
use codecbus_core::MessageCodec;

#[derive(MessageCodec, Debug, PartialEq)]
#[codec(name = "test.memory.snapshot", immutable)]
struct Snapshot {
    rows: Vec<String>,
}

fn node(cluster: &InMemoryCluster) -> EventBus {
    EventBus::builder()
        .in_memory_cluster(cluster)
        .build()
        .expect("a node of the in-memory cluster")
}

#[tokio::test]
async fn subscriptions_follow_the_exported_consumers() {
    let cluster = InMemoryCluster::new();
    assert_eq!(cluster.max_payload(), DEFAULT_MAX_PAYLOAD);
    let (a, b) = (node(&cluster), node(&cluster));
    assert!(a.is_clustered());
    let private = b.local_consumer("orders", |_m: Message<u32>| async {});
    assert_eq!(cluster.subscribers("orders"), 0, "local-only stays home");
    let first = b.consumer("orders", |_m: Message<u32>| async {});
    let second = b.consumer("orders", |_m: Message<u32>| async {});
    let _on_a = a.consumer("orders", |_m: Message<u32>| async {});
    assert_eq!(
        cluster.subscribers("orders"),
        2,
        "one subscription per node"
    );
    first.unregister().await;
    assert_eq!(cluster.subscribers("orders"), 2);
    second.unregister().await;
    assert_eq!(cluster.subscribers("orders"), 1);
    drop(private);

    // A closed node leaves: requests from elsewhere find nobody.
    let _echo = b.consumer("echo", |m: Message<u32>| async move { m.reply(*m.body()) });
    let r: Message<u32> = a.request("echo", 7u32).await.unwrap();
    assert_eq!(*r.body(), 7);
    b.close().await;
    assert_eq!(cluster.subscribers("echo"), 0);
    let err = a.request::<u32>("echo", 8u32).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::NoHandlers);
    assert_eq!(err.into_body::<u32>().as_deref(), Some(&8));
}

#[tokio::test]
async fn a_dropped_node_leaves_the_cluster() {
    let cluster = InMemoryCluster::new();
    let a = node(&cluster);
    {
        let b = node(&cluster);
        let _jobs = b.consumer_stream::<u32>("jobs");
        assert_eq!(cluster.subscribers("jobs"), 1);
        // A handler consumer keeps its node (as in Vert.x); a stream's
        // node goes with the stream and its last handle.
    }
    assert_eq!(cluster.subscribers("jobs"), 0);
    // At most once, as over NATS: a send nobody takes is no error.
    a.send("jobs", 1u32).await.unwrap();
}

#[tokio::test]
async fn sends_take_turns_among_the_nodes() {
    let cluster = InMemoryCluster::new();
    let nodes: Vec<EventBus> = (0..3).map(|_| node(&cluster)).collect();
    let counts: Vec<Arc<AtomicUsize>> = (0..3).map(|_| Arc::default()).collect();
    let _consumers: Vec<_> = nodes
        .iter()
        .zip(&counts)
        .map(|(bus, count)| {
            let count = Arc::clone(count);
            bus.consumer("work", move |_m: Message<u32>| {
                count.fetch_add(1, Ordering::SeqCst);
                async {}
            })
        })
        .collect();
    let sender = node(&cluster);
    for i in 0..30u32 {
        sender.send("work", i).await.unwrap();
    }
    common::eventually("every send handled", || {
        counts
            .iter()
            .map(|c| c.load(Ordering::SeqCst))
            .sum::<usize>()
            == 30
    })
    .await;
    for count in &counts {
        assert_eq!(count.load(Ordering::SeqCst), 10);
    }
}

#[tokio::test]
async fn a_body_crosses_encoded() {
    let cluster = InMemoryCluster::new();
    let (a, b) = (node(&cluster), node(&cluster));
    let _echo = b.consumer("echo", |m: Message<Snapshot>| async move {
        m.reply(Shared(Arc::clone(m.body_arc())))
    });
    let sent = Arc::new(Snapshot {
        rows: vec!["a".into(), "b".into()],
    });
    let back: Message<Snapshot> = a.request("echo", Shared(Arc::clone(&sent))).await.unwrap();
    assert_eq!(back.body(), &*sent);
    // Locally an immutable body is shared; across a cluster it was
    // encoded and decoded twice.
    assert!(!Arc::ptr_eq(back.body_arc(), &sent));
    assert_eq!(b.metrics().remote_received, 1);
    assert_eq!(a.metrics().remote_received, 0, "a reply is not an arrival");
}
