//! Shared by the bus tests: hand-written codecs (an immutable type and a
//! deep-copied one, each counting its clones through a shared counter) and
//! a conversation of several turns, held in process and across nodes.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use codecbus_core::{Decode, DecodeError, Encode, EncodeError, MessageCodec, Reader, Writer};

/// Counts clones of every value made from one original.
#[derive(Debug, Default)]
pub struct Clones(AtomicUsize);

impl Clones {
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Immutable: `transform` shares the allocation.
#[derive(Debug)]
pub struct Frozen {
    pub text: String,
    pub clones: Arc<Clones>,
}

impl Frozen {
    pub fn new(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            clones: Arc::default(),
        }
    }
}

impl Clone for Frozen {
    fn clone(&self) -> Self {
        self.clones.0.fetch_add(1, Ordering::SeqCst);
        Self {
            text: self.text.clone(),
            clones: Arc::clone(&self.clones),
        }
    }
}

impl Encode for Frozen {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_str(&self.text)
    }
}

impl<'de> Decode<'de> for Frozen {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        Ok(Self::new(r.read_str()?))
    }
}

impl codecbus_core::MessageType for Frozen {}

impl MessageCodec for Frozen {
    const IMMUTABLE: bool = true;
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        Arc::clone(body)
    }
}

/// Deep-copied: `transform` clones.
#[derive(Debug)]
pub struct Copied {
    pub items: Vec<u32>,
    pub clones: Arc<Clones>,
}

impl Copied {
    pub fn new(items: &[u32]) -> Self {
        Self {
            items: items.to_vec(),
            clones: Arc::default(),
        }
    }
}

impl Clone for Copied {
    fn clone(&self) -> Self {
        self.clones.0.fetch_add(1, Ordering::SeqCst);
        Self {
            items: self.items.clone(),
            clones: Arc::clone(&self.clones),
        }
    }
}

impl Encode for Copied {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        self.items.encode(w)
    }
}

impl<'de> Decode<'de> for Copied {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        Ok(Self {
            items: Vec::decode(r)?,
            clones: Arc::default(),
        })
    }
}

impl codecbus_core::MessageType for Copied {}

impl MessageCodec for Copied {
    const IMMUTABLE: bool = false;
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        Arc::new((**body).clone())
    }
}

/// Another hand-written type, to collide with `Frozen` on a codec name.
#[derive(Debug, Clone)]
pub struct Other(pub u8);

impl Encode for Other {
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_u64(u64::from(self.0));
        Ok(())
    }
}

impl<'de> Decode<'de> for Other {
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        Ok(Self(r.read_u8()?))
    }
}

impl codecbus_core::MessageType for Other {}

impl MessageCodec for Other {
    const IMMUTABLE: bool = true;
    fn transform(body: &Arc<Self>) -> Arc<Self> {
        Arc::clone(body)
    }
}

/// Lets spawned consumers report into the test.
pub fn channel<T>() -> (
    tokio::sync::mpsc::UnboundedSender<T>,
    tokio::sync::mpsc::UnboundedReceiver<T>,
) {
    tokio::sync::mpsc::unbounded_channel()
}

/// A consumer at `address` that counts through a conversation with its
/// requester: it answers `n` with `n + 1` for four turns, then ends with
/// `n + 1000`.
pub fn counting_conversation(
    bus: &codecbus_bus::EventBus,
    address: &str,
) -> codecbus_bus::MessageConsumer {
    bus.consumer(address, |m: codecbus_bus::Message<u32>| async move {
        let mut n = *m.body();
        let mut turn: codecbus_bus::Message<u32> = m.reply_and_request(n + 1).await.unwrap();
        n = *turn.body();
        for _ in 0..3 {
            turn = turn.reply_and_request(n + 1).await.unwrap();
            n = *turn.body();
        }
        turn.reply(n + 1000)
    })
}

/// The requester's side of [`counting_conversation`]: every number it was
/// told, checking that the last message expects no answer.
pub async fn count_with(requester: &codecbus_bus::EventBus, address: &str) -> Vec<u32> {
    let mut turn: codecbus_bus::Message<u32> = requester.request(address, 0u32).await.unwrap();
    let mut seen = vec![*turn.body()];
    for _ in 0..4 {
        let next: codecbus_bus::Message<u32> =
            turn.reply_and_request(*turn.body() + 1).await.unwrap();
        seen.push(*next.body());
        turn = next;
    }
    assert!(!turn.expects_reply());
    seen
}

/// The texts of `err` and of every error in its `source()` chain, outermost
/// first.
pub fn chain_texts(err: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut texts = Vec::new();
    let mut next = Some(err);
    while let Some(e) = next {
        texts.push(e.to_string());
        next = e.source();
    }
    texts
}

/// A `BuildError`'s texts as a report shows them, each told once: its own
/// words (its `Display` up to the cause it ends with), then its cause and
/// every error below the cause.
pub fn build_error_texts(err: &codecbus_bus::BuildError) -> Vec<String> {
    let cause = err.cause().expect("a cause");
    let whole = err.to_string();
    let told = cause.to_string();
    let own = whole
        .strip_suffix(told.as_str())
        .and_then(|head| head.strip_suffix(": "))
        .unwrap_or_else(|| panic!("{whole:?} does not end with its cause {told:?}"));
    let mut texts = vec![own.to_owned()];
    texts.extend(chain_texts(cause));
    for inner in &texts[1..] {
        assert!(
            !inner.is_empty() && !own.contains(inner.as_str()),
            "{own:?} repeats its cause {inner:?}"
        );
    }
    texts
}

/// The options of a test node on the NATS server at `url`: 2 s to connect,
/// reconnecting within 50 ms.
#[cfg(feature = "nats")]
pub fn nats_options(url: &str) -> codecbus_bus::NatsOptions {
    codecbus_bus::NatsOptions::new(url)
        .connection_timeout(std::time::Duration::from_secs(2))
        .max_reconnect_delay(std::time::Duration::from_millis(50))
}

/// A bus node on the NATS server at `url` ([`nats_options`]), with a 2 s
/// request timeout.
#[cfg(feature = "nats")]
pub async fn nats_node(url: &str) -> codecbus_bus::EventBus {
    codecbus_bus::EventBus::builder()
        .default_timeout(std::time::Duration::from_secs(2))
        .nats(nats_options(url))
        .connect()
        .await
        .expect("connect to the test server")
}

/// Polls `check` every 5 ms until it holds; panics naming `what` after 5 s.
pub async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !check() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}
