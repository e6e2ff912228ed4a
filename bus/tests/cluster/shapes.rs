//! Nodes tell each other their codecs' shapes when they meet, on the
//! in-memory cluster and on a real nats-server alike: a node whose reader
//! of a codec cannot read a peer's writer names it (the report's verdict,
//! the field and the rule, and `Metrics::shape_mismatches`); a compatible
//! difference is counted; a node that leaves is forgotten; a malformed or
//! oversized announcement from a peer is refused without harm.

#![cfg(feature = "shapes")]

#[cfg(feature = "nats")]
use crate::common;
#[cfg(feature = "nats")]
use crate::harness;

use std::time::Duration;

use codecbus_bus::{CodecRegistration, EventBus, InMemoryCluster, ShapeReport, ShapeVerdict};
use codecbus_core::MessageCodec;
use codecbus_core::shape::check::Rule;
#[cfg(feature = "nats")]
use common::eventually;

const ORDER: &str = "test.shapes.order";

/// The first build's order.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(unregistered)]
struct OrderV1 {
    id: u64,
}

/// A build that made a new field required: it cannot read the first
/// build's orders.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(unregistered)]
struct OrderV2 {
    id: u64,
    customer: String,
}

/// A build that added an optional field: it reads the first build's
/// orders, and the first build reads its own.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(unregistered)]
struct OrderV3 {
    id: u64,
    note: Option<String>,
}

fn verdict<'r>(report: &'r ShapeReport, peer: &str) -> &'r ShapeVerdict {
    let peer = report
        .peers
        .iter()
        .find(|p| p.node.starts_with(peer))
        .unwrap_or_else(|| panic!("no peer {peer} in {report:?}"));
    &peer
        .codec(ORDER)
        .unwrap_or_else(|| panic!("no {ORDER} of {} in {report:?}", peer.node))
        .verdict
}

fn builder(codec: CodecRegistration) -> codecbus_bus::EventBusBuilder {
    EventBus::builder()
        .default_timeout(Duration::from_secs(2))
        .codec(codec)
}

#[tokio::test]
async fn in_memory_nodes_name_a_peer_they_cannot_read() {
    let cluster = InMemoryCluster::new();
    let node = |codec| builder(codec).in_memory_cluster(&cluster).build().unwrap();
    let v1 = node(CodecRegistration::of::<OrderV1>(ORDER));
    let v2 = node(CodecRegistration::of::<OrderV2>(ORDER));
    let v3 = node(CodecRegistration::of::<OrderV3>(ORDER));
    // The in-memory nodes are named by number: v1 is node 0.
    let (n1, n2, n3) = ("in-memory node 0", "in-memory node 1", "in-memory node 2");
    assert!(v2.shape_report().peer(n1).is_some());
    assert!(v1.shape_report().peer(n2).is_some());
    assert!(v1.shape_report().peer(n3).is_some());
    check_three_named(&v1, &v2, &v3, [n1, n2, n3]);

    // A node that leaves is forgotten.
    v2.close().await;
    drop(v2);
    assert!(v1.shape_report().peer(n2).is_none());
    assert_eq!(v1.shape_report().peers.len(), 1);
}

/// [`check_three`] with the nodes' names.
fn check_three_named(v1: &EventBus, v2: &EventBus, v3: &EventBus, names: [&str; 3]) {
    let rename = |report: ShapeReport| {
        let mut report = report;
        for peer in &mut report.peers {
            if let Some(i) = names.iter().position(|n| *n == peer.node) {
                peer.node = ["v1", "v2", "v3"][i].to_owned();
            }
        }
        report
    };
    check_three_reports([v1, v2, v3].map(|bus| (rename(bus.shape_report()), bus.metrics())));
}

/// Checks what the three nodes `v1`, `v2` and `v3` (their reports' peers
/// named so) learned of each other.
fn check_three_reports(nodes: [(ShapeReport, codecbus_bus::Metrics); 3]) {
    let [(r1, m1), (r2, m2), (r3, m3)] = nodes;
    // The new required field: v2 cannot read v1's orders, nor v3's.
    let report = &r2;
    for peer in ["v1", "v3"] {
        let ShapeVerdict::Incompatible(findings) = verdict(report, peer) else {
            panic!("{peer}: {report:?}");
        };
        assert!(
            findings
                .iter()
                .any(|f| f.path.contains("customer") && f.rule == Rule::FieldAddedRequired),
            "{findings:?}"
        );
    }
    assert!(!report.is_compatible());
    assert_eq!(report.incompatible().count(), 2);
    assert_eq!(m2.shape_mismatches, 2);
    let text = report.to_string();
    assert!(text.contains("INCOMPATIBLE"), "{text}");
    // v1 and v3 read each other's and v2's (a field they do not know is
    // skipped): compatible, counted, not refused.
    for (report, metrics, peers) in [(&r1, &m1, ["v2", "v3"]), (&r3, &m3, ["v1", "v2"])] {
        for peer in peers {
            assert_eq!(
                verdict(report, peer),
                &ShapeVerdict::Compatible,
                "{report:?}"
            );
        }
        assert!(report.is_compatible());
        assert_eq!(metrics.shape_mismatches, 0);
        assert_eq!(metrics.shape_differences, 2);
    }
}

#[test]
fn the_same_build_is_the_same_everywhere() {
    let cluster = InMemoryCluster::new();
    let a = EventBus::builder()
        .in_memory_cluster(&cluster)
        .build()
        .unwrap();
    let b = EventBus::builder()
        .in_memory_cluster(&cluster)
        .build()
        .unwrap();
    for bus in [&a, &b] {
        let report = bus.shape_report();
        assert_eq!(report.peers.len(), 1);
        assert!(!report.peers[0].codecs.is_empty());
        assert!(
            report.peers[0]
                .codecs
                .iter()
                .all(|c| c.verdict == ShapeVerdict::Same),
            "{report:?}"
        );
        assert_eq!(bus.metrics().shape_differences, 0);
    }
    // A bus alone has no peers.
    assert!(EventBus::new().shape_report().peers.is_empty());
}

#[cfg(feature = "nats")]
#[tokio::test]
async fn nats_nodes_name_a_peer_they_cannot_read_and_refuse_bad_announcements() {
    let server = harness::NatsServer::for_test("shapes_at_join");
    let node = |name: &'static str, codec| {
        let url = server.url();
        async move {
            builder(codec)
                .nats(common::nats_options(&url).connection_name(name))
                .connect()
                .await
                .unwrap()
        }
    };
    let v1 = node("v1", CodecRegistration::of::<OrderV1>(ORDER)).await;
    // Junk first: malformed, oversized, nameless. Refused, logged, no harm.
    let client = async_nats::connect(server.url()).await.unwrap();
    let mut named = async_nats::HeaderMap::new();
    named.insert("Codecbus-Node", "junk");
    for payload in [
        b"{not json".to_vec(),
        vec![b' '; 2 * 1024 * 1024 - 4096],
        b"{\"codecs\": []}".to_vec(),
    ] {
        let _ = client
            .publish_with_headers("codecbus.shapes", named.clone(), payload.into())
            .await;
    }
    client
        .publish("codecbus.shapes", "nameless".into())
        .await
        .unwrap();
    client.flush().await.unwrap();

    let v2 = node("v2", CodecRegistration::of::<OrderV2>(ORDER)).await;
    let v3 = node("v3", CodecRegistration::of::<OrderV3>(ORDER)).await;
    let learned = |bus: &EventBus, n: usize| {
        bus.shape_report()
            .peers
            .iter()
            .filter(|p| p.node.starts_with('v'))
            .count()
            == n
    };
    eventually("every node learns the other two", || {
        learned(&v1, 2) && learned(&v2, 2) && learned(&v3, 2)
    })
    .await;
    let short = |report: ShapeReport| {
        let mut report = report;
        report.peers.retain(|p| p.node.starts_with('v'));
        for peer in &mut report.peers {
            peer.node.truncate(2);
        }
        report
    };
    check_three_reports([&v1, &v2, &v3].map(|bus| (short(bus.shape_report()), bus.metrics())));
    // An empty-snapshot peer (`junk`) has no codec in common: no verdicts.
    assert!(
        v1.shape_report()
            .peer("junk")
            .is_none_or(|p| p.codecs.is_empty())
    );

    // A node that leaves is forgotten.
    v2.close().await;
    eventually("v2 is forgotten", || learned(&v1, 1) && learned(&v3, 1)).await;
    v1.close().await;
    v3.close().await;
}

const POINT: &str = "test.shapes.point";

/// A point by position.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(unregistered, as_array)]
struct PointXy {
    x: u64,
    y: u64,
}

/// The same point with its fields swapped: it decodes what `PointXy`
/// writes, into the wrong fields.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(unregistered, as_array)]
struct PointYx {
    y: u64,
    x: u64,
}

/// Messages between nodes that met: refused with `ShapeMismatch` where
/// the reader cannot read the writer's shape (before its decoder would
/// fail deep in the body, or read the wrong value), delivered where it
/// can.
async fn messages_between(
    v1: &EventBus,
    v2: &EventBus,
    v3: &EventBus,
    xy: &EventBus,
    yx: &EventBus,
) {
    use codecbus_bus::{Message, RequestErrorKind};

    let _v2_orders = v2.consumer("orders.v2", |m: Message<OrderV2>| async move {
        m.reply(m.body().id)
    });
    let _v3_orders = v3.consumer("orders.v3", |m: Message<OrderV3>| async move {
        m.reply(m.body().id)
    });
    let _v1_orders = v1.consumer("orders.v1", |m: Message<OrderV1>| async move {
        m.reply(m.body().id)
    });
    let _yx_points = yx.consumer("points", |m: Message<PointYx>| async move {
        m.reply(m.body().x)
    });
    for bus in [v1, v2, v3, xy, yx] {
        bus.flush().await.unwrap();
    }

    // v2 cannot read v1's orders: the request fails with the shape's
    // error, naming the field and the rule, not a decode error.
    let err = v1
        .request::<u64>("orders.v2", OrderV1 { id: 1 })
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::ShapeMismatch, "{err}");
    let text = err.to_string();
    assert!(
        text.contains("FIELD_ADDED_REQUIRED") && text.contains("customer"),
        "{text}"
    );
    assert!(v2.metrics().undecodable >= 1);

    // A compatible difference is delivered, both ways.
    let id: Message<u64> = v1.request("orders.v3", OrderV1 { id: 2 }).await.unwrap();
    assert_eq!(*id.body(), 2);
    let id: Message<u64> = v3
        .request(
            "orders.v1",
            OrderV3 {
                id: 3,
                note: Some("n".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(*id.body(), 3);

    // Swapped positions would decode into the wrong fields: refused.
    let err = xy
        .request::<u64>("points", PointXy { x: 1, y: 2 })
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::ShapeMismatch, "{err}");
}

#[tokio::test]
async fn in_memory_messages_of_a_shape_the_reader_cannot_read_are_refused() {
    let cluster = InMemoryCluster::new();
    let node = |codecs: Vec<CodecRegistration>| {
        let mut builder = EventBus::builder().default_timeout(Duration::from_secs(2));
        for codec in codecs {
            builder = builder.codec(codec);
        }
        builder.in_memory_cluster(&cluster).build().unwrap()
    };
    let v1 = node(vec![CodecRegistration::of::<OrderV1>(ORDER)]);
    let v2 = node(vec![CodecRegistration::of::<OrderV2>(ORDER)]);
    let v3 = node(vec![CodecRegistration::of::<OrderV3>(ORDER)]);
    let xy = node(vec![CodecRegistration::of::<PointXy>(POINT)]);
    let yx = node(vec![CodecRegistration::of::<PointYx>(POINT)]);
    messages_between(&v1, &v2, &v3, &xy, &yx).await;
}

#[cfg(feature = "nats")]
#[tokio::test]
async fn nats_messages_of_a_shape_the_reader_cannot_read_are_refused() {
    let server = harness::NatsServer::for_test("shape_mismatch_messages");
    let url = server.url();
    let node = |codec: CodecRegistration| {
        let url = url.clone();
        async move {
            builder(codec)
                .nats(common::nats_options(&url))
                .connect()
                .await
                .unwrap()
        }
    };
    let v1 = node(CodecRegistration::of::<OrderV1>(ORDER)).await;
    let v2 = node(CodecRegistration::of::<OrderV2>(ORDER)).await;
    let v3 = node(CodecRegistration::of::<OrderV3>(ORDER)).await;
    let xy = node(CodecRegistration::of::<PointXy>(POINT)).await;
    let yx = node(CodecRegistration::of::<PointYx>(POINT)).await;
    let all = [&v1, &v2, &v3, &xy, &yx];
    eventually("every node learns the other four", || {
        all.iter().all(|bus| bus.shape_report().peers.len() == 4)
    })
    .await;
    messages_between(&v1, &v2, &v3, &xy, &yx).await;
    for bus in all {
        bus.close().await;
    }
}

/// A node that uses JetStream writes its shapes into the bucket: a node
/// started after it stopped learns them there, and so does a tap.
#[cfg(feature = "jetstream")]
#[tokio::test]
async fn a_later_node_learns_the_shapes_of_the_bucket() {
    use codecbus_bus::{DurableOptions, Tap};

    let server = harness::jetstream_for_test("shapes bucket");
    let url = server.url();
    let node = |name: &'static str, codec: CodecRegistration| {
        let url = url.clone();
        async move {
            builder(codec)
                .nats(
                    common::nats_options(&url)
                        .connection_name(name)
                        .durable(format!("{name}.orders"), DurableOptions::new()),
                )
                .connect()
                .await
                .unwrap()
        }
    };
    let v1 = node("v1", CodecRegistration::of::<OrderV1>(ORDER)).await;
    // v1 has written its shapes when it reads them back: its own is there.
    eventually("v1 learns the bucket", || {
        v1.shape_report()
            .peers
            .iter()
            .any(|p| p.node.starts_with("bucket codecbus-shapes"))
    })
    .await;
    v1.close().await;
    drop(v1);

    let v2 = node("v2", CodecRegistration::of::<OrderV2>(ORDER)).await;
    eventually("v2 learns v1's shape from the bucket", || {
        v2.shape_report()
            .incompatible()
            .any(|(peer, c)| peer.node.starts_with("bucket codecbus-shapes") && c.codec == ORDER)
    })
    .await;
    assert!(v2.metrics().shape_mismatches >= 1);

    // A tap reads the bucket too: both shapes of the codec are there, the
    // tap keeps one.
    let tap = Tap::connect(common::nats_options(&url), ">").await.unwrap();
    assert!(tap.shapes().get(ORDER).is_some());
    tap.close().await;
    v2.close().await;
}
