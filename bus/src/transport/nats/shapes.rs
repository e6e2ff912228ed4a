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

/// Tells the cluster this node's shapes (and sets `told` once they left,
/// or could not) and learns the others', until the connection closes or
/// the transport is gone (`stop` closes).
pub(super) async fn exchange(
    link: Arc<Link>,
    inner: Weak<dyn Node>,
    id: String,
    mut stop: tokio::sync::watch::Receiver<()>,
    told: tokio::sync::watch::Sender<bool>,
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
            told.send_replace(true);
            return;
        }
    };
    let Some(mine) = inner
        .upgrade()
        .map(|node| Bytes::from(cluster::announcement(&*node)))
    else {
        told.send_replace(true);
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
    // Flushed before the node's first message can leave.
    let _ = link.client.flush().await;
    told.send_replace(true);
    #[cfg(feature = "jetstream")]
    if let Some(durables) = &link.durables {
        with_bucket(&durables.js, &link.prefix, &inner).await;
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
        let learned = learn_off_runtime(node, peer, message.payload, FROM).await;
        if let (Ok(()), Some(reply)) = (learned, message.reply) {
            let _ = link
                .client
                .publish_with_headers(reply, headers.clone(), mine.clone())
                .await;
        }
    }
}

/// [`cluster::learn`] on a blocking thread: parsing up to 1 MiB of JSON and
/// checking it is CPU work that would hold a runtime worker for as long.
async fn learn_off_runtime(
    node: Arc<dyn Node>,
    peer: String,
    payload: Bytes,
    from: &'static str,
) -> Result<(), String> {
    tokio::task::spawn_blocking(move || cluster::learn(&*node, &peer, &payload, from))
        .await
        .unwrap_or_else(|e| Err(format!("learning a peer's shapes failed: {e}")))
}

/// A node that uses JetStream writes its shapes into the bucket and
/// learns every shape there, the shapes of nodes that ran before among
/// them: each set of the bucket ([`bucket::read`]) as a peer named after
/// the bucket.
#[cfg(feature = "jetstream")]
async fn with_bucket(js: &async_nats::jetstream::Context, prefix: &str, inner: &Weak<dyn Node>) {
    let store = match bucket::open(js, prefix).await {
        Ok(store) => store,
        Err(e) => {
            tracing::warn!("{e}: the codec shapes are told on {}.shapes only", prefix);
            return;
        }
    };
    let Some(mine) = inner.upgrade().map(|node| node.shapes()) else {
        return;
    };
    if let Err(e) = bucket::write(&store, &mine).await {
        tracing::warn!("{e}");
    }
    drop(mine);
    let sets = match bucket::read(&store).await {
        Ok(sets) => sets,
        Err(e) => {
            tracing::warn!("{e}");
            return;
        }
    };
    let Some(node) = inner.upgrade() else { return };
    let name = bucket::name(prefix);
    for (i, set) in sets.iter().enumerate() {
        let peer = match i {
            0 => format!("bucket {name}"),
            i => format!("bucket {name} #{}", i + 1),
        };
        let payload = Bytes::from(set.to_snapshot());
        let _ = learn_off_runtime(Arc::clone(&node), peer, payload, "the shapes bucket").await;
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

/// The key-value bucket of the codecs' shapes (feature `jetstream`, for a
/// node that uses JetStream): one key per codec name and fingerprint, the
/// value the snapshot of that one codec, so that a node or a tool started
/// later reads every shape the deployment has written. Bounded: a value
/// is at most `MAX_ANNOUNCEMENT` bytes (the bucket's own limit), and a
/// reader takes at most `MAX_BUCKET_KEYS` keys and `MAX_BUCKET_BYTES` bytes
/// of entries.
#[cfg(feature = "jetstream")]
pub(crate) mod bucket {
    use async_nats::jetstream::Context;
    use async_nats::jetstream::kv::Store;
    use async_nats::jetstream::stream::{Config as StreamConfig, DiscardPolicy};
    use bytes::Bytes;
    use codecbus_core::shape::ShapeSet;
    use futures_util::StreamExt as _;

    use crate::transport::cluster::{MAX_ANNOUNCEMENT, read_announcement};

    /// The most keys read from the bucket.
    pub(crate) const MAX_BUCKET_KEYS: usize = 4096;

    /// The most bytes of entries read from the bucket (each one at most
    /// `MAX_ANNOUNCEMENT`): what a reader holds of it at once.
    pub(crate) const MAX_BUCKET_BYTES: usize = 16 * 1024 * 1024;

    /// The bucket's name for the subject prefix `prefix`: `{prefix}-shapes`,
    /// made a stream name as the durable addresses' are.
    pub(crate) fn name(prefix: &str) -> String {
        crate::transport::nats::jetstream::sanitize(&format!("{prefix}-shapes"), 200)
    }

    /// The key of `codec`'s shape of fingerprint `fingerprint`: the name's
    /// bytes but ASCII letters, digits, `-` and `_` as `=XX`, then `.` and
    /// 16 hex digits.
    pub(crate) fn key(codec: &str, fingerprint: u64) -> String {
        let mut key = String::with_capacity(codec.len() + 17);
        for b in codec.bytes() {
            if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
                key.push(char::from(b));
            } else {
                key.push_str(&format!("={b:02X}"));
            }
        }
        key.push_str(&format!(".{fingerprint:016x}"));
        key
    }

    /// Opens the bucket, made if it is not there yet: the stream of a
    /// key-value bucket of history 1 (`KV_{name}` on `$KV.{name}.>`), made
    /// as the stream it is, since the client's own way asks the server for
    /// account details that servers before 2.10 give in another form.
    pub(crate) async fn open(js: &Context, prefix: &str) -> Result<Store, String> {
        let name = name(prefix);
        if let Ok(store) = js.get_key_value(name.as_str()).await {
            return Ok(store);
        }
        let made = js
            .get_or_create_stream(StreamConfig {
                name: format!("KV_{name}"),
                description: Some("codecbus: the shapes of the deployment's codecs".to_owned()),
                subjects: vec![format!("$KV.{name}.>")],
                max_messages_per_subject: 1,
                max_message_size: i32::try_from(MAX_ANNOUNCEMENT).unwrap_or(i32::MAX),
                allow_rollup: true,
                deny_delete: true,
                allow_direct: true,
                discard: DiscardPolicy::New,
                ..StreamConfig::default()
            })
            .await;
        if let Err(e) = made {
            return Err(format!("cannot make the key-value bucket {name}: {e}"));
        }
        js.get_key_value(name.as_str())
            .await
            .map_err(|e| format!("cannot open the key-value bucket {name}: {e}"))
    }

    /// Writes the shapes of `codecs` into `store`, a key each.
    pub(crate) async fn write(store: &Store, codecs: &ShapeSet) -> Result<(), String> {
        for codec in codecs.iter() {
            let value = ShapeSet::from_codecs([codec.clone()]).to_snapshot();
            store
                .put(key(&codec.name, codec.fingerprint()), Bytes::from(value))
                .await
                .map_err(|e| format!("cannot write the shape of {}: {e}", codec.name))?;
        }
        Ok(())
    }

    /// Every shape in `store` (at most [`MAX_BUCKET_KEYS`]), as sets of
    /// at most one shape per codec: the first set has one shape of each
    /// codec, the second the codecs' second shapes, and so on. An entry
    /// that is not the snapshot of one codec is skipped with a warning.
    pub(crate) async fn read(store: &Store) -> Result<Vec<ShapeSet>, String> {
        let mut keys = store
            .keys()
            .await
            .map_err(|e| format!("cannot list the shapes bucket: {e}"))?;
        let mut names = Vec::new();
        while let Some(key) = keys.next().await {
            let Ok(key) = key else { continue };
            names.push(key);
            if names.len() >= MAX_BUCKET_KEYS {
                tracing::warn!(
                    "the shapes bucket has more than {MAX_BUCKET_KEYS} keys: the rest are not read"
                );
                break;
            }
        }
        let mut sets: Vec<ShapeSet> = Vec::new();
        let mut read = 0usize;
        for key in names {
            let Ok(Some(value)) = store.get(key.as_str()).await else {
                continue;
            };
            read += value.len();
            if read > MAX_BUCKET_BYTES {
                tracing::warn!(
                    "the shapes bucket holds more than {MAX_BUCKET_BYTES} bytes: the rest is not read"
                );
                break;
            }
            let set = match read_announcement(&key, &value) {
                Ok(set) if set.len() == 1 => set,
                Ok(_) => {
                    tracing::warn!(
                        key,
                        "a shapes bucket entry that is not one codec was skipped"
                    );
                    continue;
                }
                Err(e) => {
                    tracing::warn!(key, "a shapes bucket entry was skipped: {e}");
                    continue;
                }
            };
            for codec in set.iter() {
                match sets.iter_mut().find(|s| s.get(&codec.name).is_none()) {
                    Some(s) => {
                        s.insert(codec.clone());
                    }
                    None => sets.push(ShapeSet::from_codecs([codec.clone()])),
                }
            }
        }
        Ok(sets)
    }
}
