//! A codec renamed during a rolling deploy, across a real `nats-server`:
//! a node of the older build sends under the old name, a node of the newer
//! build reads it through the alias (counting the alias once) and replies
//! under the new name, which the older node does not know. The in-memory
//! cluster's cases are in `local/renamed_codecs.rs`.
#![cfg(feature = "nats")]

use crate::common;
use crate::harness;

use std::time::Duration;

use codecbus_bus::{CodecRegistration, EventBus, Message, RequestErrorKind};
use codecbus_core::MessageCodec;
use harness::NatsServer;

const OLD: &str = "test.nats.renamed.order";
const NEW: &str = "test.nats.renamed.order.v2";

/// The older build's order.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(unregistered)]
struct OldOrder {
    id: u64,
}

/// The newer build's order: renamed, the old name an alias.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(unregistered)]
struct NewOrder {
    id: u64,
}

async fn node(server: &NatsServer, codec: CodecRegistration) -> EventBus {
    EventBus::builder()
        .default_timeout(Duration::from_secs(2))
        .codec(codec)
        .nats(common::nats_options(&server.url()))
        .connect()
        .await
        .expect("connect to the test server")
}

#[tokio::test]
async fn an_older_peer_is_read_through_the_alias_and_cannot_read_the_new_name() {
    let server = NatsServer::for_test("renamed_codec_across_nats");
    let old = node(&server, CodecRegistration::of::<OldOrder>(OLD)).await;
    let new = node(
        &server,
        CodecRegistration::of::<NewOrder>(NEW).with_aliases(&[OLD]),
    )
    .await;
    let mut orders = new.consumer_stream::<NewOrder>("orders");
    let _ask = new.consumer("orders.ask", |m: Message<NewOrder>| async move {
        m.reply(m.body().id * 10)
    });
    let _echo = new.consumer("orders.echo", |m: Message<NewOrder>| async move {
        m.reply(m.body().clone())
    });
    new.flush().await.unwrap();

    old.send("orders", OldOrder { id: 1 }).await.unwrap();
    old.publish("orders", OldOrder { id: 2 }).await.unwrap();
    // Two subjects (queue and plain subscription): in either order.
    let mut ids = [
        orders.recv().await.unwrap().body().id,
        orders.recv().await.unwrap().body().id,
    ];
    ids.sort_unstable();
    assert_eq!(ids, [1, 2]);
    let reply: Message<u64> = old.request("orders.ask", OldOrder { id: 3 }).await.unwrap();
    assert_eq!(*reply.body(), 30);

    // The reply leaves under the new name: the old node cannot read it.
    let err = old
        .request::<OldOrder>("orders.echo", OldOrder { id: 4 })
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::Codec);
    assert!(
        err.to_string().contains(&format!("Unknown codec {NEW:?}")),
        "{err}"
    );

    let metrics = new.metrics();
    assert_eq!(metrics.old_codec_names, 1, "one alias, counted once");
    assert_eq!((metrics.remote_received, metrics.undecodable), (4, 0));
    assert_eq!(old.metrics().undecodable, 1, "the reply under the new name");
    old.close().await;
    new.close().await;
}
