// Watching the traffic of bus addresses on NATS without taking part in
// it (`codecbus tap`): the same connection options and the same reading
// of frames (codec prefix or header, decompression, headers) as a node's
// readers, on plain subscriptions to the addresses' subjects.

use std::pin::Pin;
use std::time::Duration;

use async_nats::Client;
use bytes::Bytes;
use codecbus_core::shape::ShapeSet;
use futures_util::stream::{SelectAll, StreamExt};

use crate::base::error::{BuildError, BuildErrorKind};
use crate::base::headers::Headers;
use crate::transport::cluster::{H_NODE, read_announcement, unescape_address};
use crate::transport::nats::connect::connect;
use crate::transport::nats::options::NatsOptions;
use crate::transport::nats::{shapes, wire};

/// How a tapped message was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TapKind {
    /// `publish`: every node with a consumer of the address gets it.
    Publish,
    /// `send`: one consumer of the address gets it.
    Send,
    /// `request`: one consumer of the address gets it and answers.
    Request,
}

impl TapKind {
    /// `"publish"`, `"send"` or `"request"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Publish => "publish",
            Self::Send => "send",
            Self::Request => "request",
        }
    }
}

/// One message a [`Tap`] saw.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Tapped {
    /// The NATS subject it crossed.
    pub subject: String,
    /// The bus address it was sent to.
    pub address: String,
    /// How it was sent.
    pub kind: TapKind,
    /// The name of the codec that wrote its body, when it names one (a
    /// message from a codecbus node always does).
    pub codec: Option<String>,
    /// The user's headers.
    pub headers: Headers,
    /// Its size on the wire: the NATS payload's bytes (compressed, when
    /// its sender compressed it), headers not counted.
    pub size: usize,
    /// The body: the MessagePack its codec wrote, decompressed; the whole
    /// payload when it names no codec.
    pub body: Bytes,
    /// Why the body cannot be read although the message names its codec
    /// (a compressed body that does not decompress, or declares more than
    /// the server's `max_payload`).
    pub unreadable: Option<String>,
}

type Subscriptions = SelectAll<Pin<Box<async_nats::Subscriber>>>;

/// The traffic of bus addresses on NATS, watched: every `publish`,
/// `send` and `request` the cluster's nodes make to them, as it crosses
/// NATS.
///
/// A tap takes part in nothing: it is not a consumer (a `send` still goes
/// to one of the address's consumers, the tap sees it too), it answers
/// nothing. Replies are not seen: they travel on the requesters' own
/// subjects.
///
/// It learns the shapes of the running nodes' codecs as a node does,
/// asking on `{prefix}.shapes` when it connects and listening there for
/// nodes that join later ([`shapes`](Self::shapes)): the nodes see it as
/// a peer without codecs. With the feature `jetstream` it also reads the
/// deployment's shapes bucket, where nodes that use JetStream write every
/// shape they have, those of nodes no longer running among them.
///
/// # Examples
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use codecbus_bus::{NatsOptions, Tap};
///
/// let mut tap = Tap::connect(NatsOptions::new("nats://127.0.0.1:4222"), "orders").await?;
/// while let Some(message) = tap.next().await {
///     println!("{} {} {:?} {} bytes", message.kind.as_str(), message.address, message.codec, message.size);
/// }
/// # Ok(())
/// # }
/// ```
pub struct Tap {
    client: Client,
    /// The addresses' subjects.
    traffic: Subscriptions,
    /// The nodes' announcements of their shapes, and the answers to the
    /// tap's own.
    told: Subscriptions,
    prefix: String,
    limit: usize,
    /// The tap's name among the nodes.
    id: String,
    /// The codecs' shapes the nodes told.
    shapes: ShapeSet,
}

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tap")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Tap {
    /// Connects with `options` (servers, credentials, TLS, subject prefix:
    /// the bus's own) and watches `address`, or every address when it is
    /// `>`.
    ///
    /// # Errors
    ///
    /// [`BuildError`] when the options are invalid, the connection fails,
    /// the address cannot be a subject, or the server refuses the
    /// subscriptions.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it completes closes the connection it
    /// was making; nothing is left subscribed.
    pub async fn connect(options: NatsOptions, address: &str) -> Result<Tap, BuildError> {
        let config = |message: String| BuildError::new(BuildErrorKind::Config, message, None);
        let prefix = options.subject_prefix.clone();
        wire::check_prefix(&prefix).map_err(config)?;
        let subjects = if address == ">" {
            vec![format!("{prefix}.p.>"), format!("{prefix}.s.>")]
        } else {
            vec![
                wire::publish_subject(&prefix, address).map_err(config)?,
                wire::send_subject(&prefix, address).map_err(config)?,
            ]
        };
        let connected = connect(options, None).await?;
        let client = connected.client;
        let id = shapes::node_id(Some("codecbus tap"));
        let shapes_subject = shapes::subject(&prefix);
        let inbox = format!("{}.shapes", client.new_inbox());
        let (mut traffic, mut told) = (SelectAll::new(), SelectAll::new());
        let shapes_subjects = [shapes_subject.clone(), inbox.clone()];
        for (subject, is_traffic) in subjects
            .into_iter()
            .map(|s| (s, true))
            .chain(shapes_subjects.into_iter().map(|s| (s, false)))
        {
            let subscriber = client.subscribe(subject.clone()).await.map_err(|e| {
                BuildError::new(
                    BuildErrorKind::Connect,
                    format!("cannot subscribe to {subject}"),
                    Some(Box::new(e)),
                )
            })?;
            if is_traffic {
                traffic.push(Box::pin(subscriber));
            } else {
                told.push(Box::pin(subscriber));
            }
        }
        // The subscriptions are in place before `connect` returns: a
        // message sent after it is seen.
        client.flush().await.map_err(|e| {
            BuildError::new(
                BuildErrorKind::Connect,
                "cannot reach the NATS server".to_owned(),
                Some(Box::new(e)),
            )
        })?;
        let limit = client.server_info().max_payload;
        let mut tap = Tap {
            client,
            traffic,
            told,
            prefix,
            limit,
            id,
            shapes: ShapeSet::new(),
        };
        // Asks the running nodes for their shapes, as a node without
        // codecs joining, and takes the answers that come while they keep
        // coming (a node answers within milliseconds).
        let none = Bytes::from(ShapeSet::new().to_snapshot());
        let asked = tap
            .client
            .publish_with_reply_and_headers(shapes_subject, inbox, shapes::headers(&tap.id), none)
            .await;
        if asked.is_ok() {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
            while let Ok(Some(message)) =
                tokio::time::timeout(Duration::from_millis(200), tap.told.next()).await
            {
                tap.learn(&message);
                if tokio::time::Instant::now() >= deadline {
                    break;
                }
            }
        }
        #[cfg(feature = "jetstream")]
        tap.read_bucket().await;
        Ok(tap)
    }

    /// Takes the shapes of the deployment's key-value bucket, when there
    /// is one, for the codecs the running nodes did not tell.
    #[cfg(feature = "jetstream")]
    async fn read_bucket(&mut self) {
        let js = async_nats::jetstream::new(self.client.clone());
        let Ok(store) = js.get_key_value(shapes::bucket::name(&self.prefix)).await else {
            return;
        };
        match shapes::bucket::read(&store).await {
            Ok(sets) => {
                for codec in sets.iter().flat_map(ShapeSet::iter) {
                    if self.shapes.get(&codec.name).is_none() {
                        self.shapes.insert(codec.clone());
                    }
                }
            }
            Err(e) => tracing::warn!("{e}"),
        }
    }

    /// The shapes of the codecs the running nodes told this tap, by codec
    /// name (of two shapes of one codec, the one told last).
    #[must_use]
    pub fn shapes(&self) -> &ShapeSet {
        &self.shapes
    }

    /// The next message on the watched addresses; `None` once the
    /// connection is closed for good.
    ///
    /// Messages that are not the bus's (a subject of the prefix that
    /// names no address) are skipped; the shapes of nodes that join are
    /// taken in on the way.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: a message is taken from the subscription only when it
    /// is returned.
    pub async fn next(&mut self) -> Option<Tapped> {
        loop {
            // The shapes first: a node's announcement, which it sends
            // before its first message, is taken in before that message
            // is shown.
            tokio::select! {
                biased;
                Some(message) = self.told.next() => self.learn(&message),
                message = self.traffic.next() => {
                    if let Some(tapped) = self.tapped(message?) {
                        return Some(tapped);
                    }
                }
            }
        }
    }

    /// Unsubscribes and closes the connection.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future leaves the connection closing in the
    /// background, as dropping the tap does.
    pub async fn close(self) {
        drop((self.traffic, self.told));
        shapes::leave_as(&self.client, &self.prefix, &self.id).await;
        let _ = self.client.drain().await;
    }

    /// The message, unless it is not a message of an address.
    fn tapped(&self, message: async_nats::Message) -> Option<Tapped> {
        let subject = message.subject.to_string();
        let rest = subject.strip_prefix(&self.prefix)?.strip_prefix('.')?;
        let (kind, escaped) = match rest.split_at_checked(2)? {
            ("p.", escaped) => (TapKind::Publish, escaped),
            ("s.", escaped) if message.reply.is_some() => (TapKind::Request, escaped),
            ("s.", escaped) => (TapKind::Send, escaped),
            _ => return None,
        };
        let address = unescape_address(escaped)?;
        let size = message.payload.len();
        let frame = wire::frame(message.headers.as_ref(), message.payload, self.limit);
        let head = frame.head;
        let body = if head.unreadable.is_some() {
            Bytes::new()
        } else {
            frame.payload.slice(head.body_at.min(frame.payload.len())..)
        };
        Some(Tapped {
            subject,
            address,
            kind,
            codec: head.codec.map(|c| c.into_owned()),
            headers: head.user,
            size,
            body,
            unreadable: head.unreadable,
        })
    }

    /// Takes in the shapes a node announced.
    fn learn(&mut self, message: &async_nats::Message) {
        let node = message.headers.as_ref().and_then(|h| h.get(H_NODE));
        let Some(node) = node.map(|n| n.as_str()) else {
            return;
        };
        if node == self.id {
            return;
        }
        match read_announcement(node, &message.payload) {
            Ok(set) => {
                for codec in set.iter() {
                    self.shapes.insert(codec.clone());
                }
            }
            Err(e) => tracing::warn!(node, "a node's codec shapes were refused: {e}"),
        }
    }
}
