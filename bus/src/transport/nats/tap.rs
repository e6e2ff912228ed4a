// Watching the traffic of bus addresses on NATS without taking part in
// it (`codecbus tap`): the same connection options and the same reading
// of frames (codec prefix or header, decompression, headers) as a node's
// readers, on plain subscriptions to the addresses' subjects.

use std::pin::Pin;

use async_nats::Client;
use bytes::Bytes;
use futures_util::stream::{SelectAll, StreamExt};

use crate::base::error::{BuildError, BuildErrorKind};
use crate::base::headers::Headers;
use crate::transport::cluster::unescape_address;
use crate::transport::nats::connect::connect;
use crate::transport::nats::options::NatsOptions;
use crate::transport::nats::wire;

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
/// nothing, and a node does not know it is there. Replies are not seen:
/// they travel on the requesters' own subjects.
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
    subscriptions: Subscriptions,
    prefix: String,
    limit: usize,
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
        let mut subscriptions = SelectAll::new();
        for subject in subjects {
            let subscriber = client.subscribe(subject.clone()).await.map_err(|e| {
                BuildError::new(
                    BuildErrorKind::Connect,
                    format!("cannot subscribe to {subject}"),
                    Some(Box::new(e)),
                )
            })?;
            subscriptions.push(Box::pin(subscriber));
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
        Ok(Tap {
            client,
            subscriptions,
            prefix,
            limit,
        })
    }

    /// The next message on the watched addresses; `None` once the
    /// connection is closed for good.
    ///
    /// Messages that are not the bus's (a subject of the prefix that
    /// names no address) are skipped.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: a message is taken from the subscription only when it
    /// is returned.
    pub async fn next(&mut self) -> Option<Tapped> {
        loop {
            let message = self.subscriptions.next().await?;
            if let Some(tapped) = self.tapped(message) {
                return Some(tapped);
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
        drop(self.subscriptions);
        let _ = self.client.drain().await;
    }

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
}
