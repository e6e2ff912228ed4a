// Readers: one task per address with an exported consumer on this node,
// holding its two subscriptions (publish, and the queue group for sends
// and requests). A reader hands what arrives to the cluster's inbound path
// (`cluster::deliver_publish`, `cluster::deliver_send`: decode, check,
// deliver) and awaits the answers to requests.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use async_nats::Subscriber;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::transport::BoxFuture;
use crate::transport::Node;
use crate::transport::cluster::{self, Answers, Delivered};
use crate::transport::nats::link::Link;
use crate::transport::nats::wire;

pub(super) enum Stop {
    /// The node's last exported consumer of the address went: unsubscribe
    /// (acknowledged once the UNSUBs are queued), then answer what is
    /// still buffered.
    Unsubscribe(oneshot::Sender<()>),
    /// The bus is closing: drain both subscriptions.
    Drain,
}

pub(super) struct ReaderHandle {
    pub(super) stop: oneshot::Sender<Stop>,
    pub(super) task: JoinHandle<()>,
}

pub(super) async fn subscribe(
    shared: &Arc<Link>,
    inner: &Weak<dyn Node>,
    address: &Arc<str>,
) -> Result<ReaderHandle, String> {
    let publish = wire::publish_subject(&shared.prefix, address)?;
    let send = wire::send_subject(&shared.prefix, address)?;
    let client = &shared.client;
    let plain = client.subscribe(publish).await.map_err(|e| e.to_string())?;
    let queue = client
        .queue_subscribe(send, shared.prefix.to_string())
        .await
        .map_err(|e| e.to_string())?;
    tracing::debug!(address = &**address, "subscribed on NATS");
    let (stop, stopped) = oneshot::channel();
    let reader = AddressReader {
        shared: Arc::clone(shared),
        inner: Weak::clone(inner),
        address: Arc::clone(address),
    };
    let task = tokio::spawn(reader.run(plain, queue, stopped));
    Ok(ReaderHandle { stop, task })
}

type Pending = FuturesUnordered<BoxFuture<'static, ()>>;

struct AddressReader {
    shared: Arc<Link>,
    inner: Weak<dyn Node>,
    address: Arc<str>,
}

impl AddressReader {
    async fn run(
        self,
        mut plain: Subscriber,
        mut queue: Subscriber,
        mut stop: oneshot::Receiver<Stop>,
    ) {
        let mut pending: Pending = FuturesUnordered::new();
        let (mut plain_open, mut queue_open, mut stop_open) = (true, true, true);
        loop {
            // Not `biased`: a steady stream of publishes must not starve
            // the queue subscription (or the other way round).
            tokio::select! {
                command = &mut stop, if stop_open => {
                    stop_open = false;
                    match command {
                        Ok(Stop::Drain) => {
                            let _ = plain.drain().await;
                            let _ = queue.drain().await;
                        }
                        Ok(Stop::Unsubscribe(ack)) => {
                            let _ = plain.unsubscribe().await;
                            let _ = queue.unsubscribe().await;
                            let _ = ack.send(());
                        }
                        Err(_) => {
                            let _ = plain.unsubscribe().await;
                            let _ = queue.unsubscribe().await;
                        }
                    }
                }
                Some(()) = pending.next(), if !pending.is_empty() => {}
                message = plain.next(), if plain_open => match message {
                    Some(message) => {
                        if self.on_publish(message) {
                            HandOver::default().await;
                        }
                    }
                    None => plain_open = false,
                },
                message = queue.next(), if queue_open => match message {
                    Some(message) => {
                        if self.on_send(message, &mut pending) {
                            HandOver::default().await;
                        }
                    }
                    None => queue_open = false,
                },
                else => break,
            }
        }
        tracing::debug!(address = &*self.address, "NATS reader finished");
    }

    /// Delivers a publish; `true` when a consumer's task was woken for it.
    fn on_publish(&self, message: async_nats::Message) -> bool {
        let Some(inner) = self.inner.upgrade() else {
            return false;
        };
        let frame = self
            .shared
            .arrived(message.headers.as_ref(), message.payload);
        cluster::deliver_publish(&inner, &self.address, &frame, "NATS")
    }

    /// Delivers a send or request; `true` when a consumer's task was woken
    /// for it.
    fn on_send(&self, message: async_nats::Message, pending: &mut Pending) -> bool {
        let Some(inner) = self.inner.upgrade() else {
            return false;
        };
        let frame = self
            .shared
            .arrived(message.headers.as_ref(), message.payload);
        let request = message.reply.is_some();
        let delivered = cluster::deliver_send(&inner, &self.address, frame, request, "NATS");
        let queued = delivered.queued();
        let Some(to) = message.reply else {
            return queued;
        };
        match delivered {
            Delivered::Done { .. } => {}
            Delivered::Awaiting { rx, .. } => pending.push(Box::pin(cluster::answer(
                Arc::clone(&self.shared),
                Weak::clone(&self.inner),
                Arc::clone(&self.address),
                to,
                rx,
            ))),
            Delivered::Failed(failure) => {
                pending.push(self.shared.finish(to, failure));
            }
        }
        queued
    }
}

/// Lets the consumers a message was just queued for run before the
/// reader decodes the next one: the reader wakes itself and returns
/// `Pending` once, which puts it at the back of its worker's run queue,
/// behind the consumer tasks the delivery woke. (A message whose handler
/// started on the reader's task needs none: its body is gone already.)
///
/// Without it a reader drains everything its subscriptions hold (up to
/// tokio's budget of 128 messages) before a consumer runs, so hundreds of
/// freshly decoded bodies are alive at once and are freed together later:
/// the allocator then works from cold, fragmented memory instead of
/// reusing what the previous message just freed. In the cluster benchmark
/// that made decoding and dropping a message two to three times as
/// expensive as decoding and dropping it at once (the guide,
/// `book/src/performance.md`, "Cluster").
#[derive(Default)]
struct HandOver {
    yielded: bool,
}

impl Future for HandOver {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
