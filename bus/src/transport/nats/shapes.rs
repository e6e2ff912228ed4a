// The shapes of this node's codecs told to the cluster over NATS, and the
// peers' learned (`cluster::shapes` makes and reads the announcements).
//
// On `{prefix}.shapes`, every node subscribed: a node joining publishes its
// announcement there with a reply subject of its own
// (`_INBOX.<id>.shapes`); every other node
// learns it and answers with its own announcement to that reply subject,
// so the joining node learns the running ones. A node leaving publishes an
// empty announcement, and the others forget it. Each announcement names
// its node in the `Codecbus-Node` header; a node skips its own.

use std::hash::{BuildHasher as _, Hasher as _};
use std::sync::{Arc, Weak};

use async_nats::{HeaderMap, HeaderValue};
use bytes::Bytes;
use futures_util::StreamExt as _;

use crate::transport::Node;
use crate::transport::cluster::{self, H_NODE};
use crate::transport::nats::link::Link;

/// Names the transport in logs.
const FROM: &str = "NATS";

/// The subject of the announcements.
pub(super) fn subject(prefix: &str) -> String {
    format!("{prefix}.shapes")
}

/// A name for this node that no other run has: its connection name (or
/// `codecbus`) and 64 random bits.
pub(super) fn node_id(name: Option<&str>) -> String {
    let random = std::hash::RandomState::new().build_hasher().finish();
    format!("{}#{random:016x}", name.unwrap_or("codecbus"))
}

/// The headers of an announcement of the node `id`.
pub(super) fn headers(id: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    // A name a header cannot carry (CR, LF) leaves none: peers refuse the
    // announcement as naming no node.
    if let Ok(value) = id.parse::<HeaderValue>() {
        headers.insert(H_NODE, value);
    }
    headers
}

/// Tells the cluster this node's shapes and learns the others', until
/// the connection closes or the transport is gone (`stop` closes).
pub(super) async fn exchange(
    link: Arc<Link>,
    inner: Weak<dyn Node>,
    id: String,
    mut stop: tokio::sync::watch::Receiver<()>,
) {
    let subject = subject(&link.prefix);
    // Recognisable among the inbox's subjects (what a spy of the wire
    // leaves out).
    let inbox = format!("{}.shapes", link.client.new_inbox());
    let (mut announced, mut replies) = match (
        link.client.subscribe(subject.clone()).await,
        link.client.subscribe(inbox.clone()).await,
    ) {
        (Ok(announced), Ok(replies)) => (announced, replies),
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!(error = %e, "cannot subscribe to {subject}: this node does not learn its peers' codec shapes");
            return;
        }
    };
    let Some(mine) = inner
        .upgrade()
        .map(|node| Bytes::from(cluster::announcement(&*node)))
    else {
        return;
    };
    let headers = headers(&id);
    if let Err(e) = link
        .client
        .publish_with_reply_and_headers(subject.clone(), inbox, headers.clone(), mine.clone())
        .await
    {
        tracing::warn!(error = %e, "cannot tell the cluster this node's codec shapes");
    }
    loop {
        let message = tokio::select! {
            message = announced.next() => message,
            message = replies.next() => message,
            _ = stop.changed() => None,
        };
        let Some(message) = message else { break };
        let Some(node) = inner.upgrade() else { break };
        let peer = message
            .headers
            .as_ref()
            .and_then(|h| h.get(H_NODE))
            .map(|v| v.as_str().to_owned());
        let Some(peer) = peer else {
            tracing::warn!(
                subject = %message.subject,
                "an announcement of codec shapes without a {H_NODE} header was refused"
            );
            continue;
        };
        if peer == id {
            continue;
        }
        if message.payload.is_empty() {
            node.peers().forget(&peer);
            continue;
        }
        let learned = cluster::learn(&*node, &peer, &message.payload, FROM);
        drop(node);
        if let (Ok(()), Some(reply)) = (learned, message.reply) {
            let _ = link
                .client
                .publish_with_headers(reply, headers.clone(), mine.clone())
                .await;
        }
    }
}

/// Tells the cluster this node leaves.
pub(super) async fn leave(link: &Link, id: &str) {
    leave_as(&link.client, &link.prefix, id).await;
}

/// Tells the cluster of `prefix` that `id` leaves, through `client`.
pub(super) async fn leave_as(client: &async_nats::Client, prefix: &str, id: &str) {
    // Flushed: the connection is drained next, which may close it before
    // a publish still buffered leaves.
    if client
        .publish_with_headers(subject(prefix), headers(id), Bytes::new())
        .await
        .is_ok()
    {
        let _ = client.flush().await;
    }
}
