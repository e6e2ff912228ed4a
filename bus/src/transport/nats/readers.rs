// Readers: one task per address with an exported consumer on this node,
// holding its two subscriptions (publish, and the queue group for sends
// and requests). A reader decodes what arrives (checking the consumers'
// shared guard in the same pass), delivers it to the local consumers and
// awaits the replies to requests.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use async_nats::Subscriber;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::error::{NO_FAILURE_CODE, RequestErrorKind};
use crate::interceptor::DeliveryKind;
use crate::metrics::bump;
use crate::reply;
use crate::telemetry::Probe;
use crate::telemetry::probe::RefusedBy;
use crate::transport::BoxFuture;
use crate::transport::Node;
use crate::transport::local::{Refusal, Scope, Verdicts, count_delivered};
use crate::transport::nats::connect::Link;
use crate::transport::nats::outbound::publish_failure;
use crate::transport::nats::reply::{
    Arrival, Decoded, answer, arrival, decode_checked, first_then_transform, undecodable,
};
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
                        self.on_publish(message);
                        HandOver::default().await;
                    }
                    None => plain_open = false,
                },
                message = queue.next(), if queue_open => match message {
                    Some(message) => {
                        self.on_send(message, &mut pending);
                        HandOver::default().await;
                    }
                    None => queue_open = false,
                },
                else => break,
            }
        }
        tracing::debug!(address = &*self.address, "NATS reader finished");
    }

    fn on_publish(&self, message: async_nats::Message) {
        let Some(inner) = self.inner.upgrade() else {
            return;
        };
        let Arrival { head, probe, span } = arrival(
            &inner,
            &self.address,
            message.headers.as_ref(),
            message.payload.len(),
        );
        let _entered = span.as_ref().map(tracing::Span::enter);
        let (codec, body, checked) = match decode_checked(
            &inner,
            &self.address,
            &head,
            &message.payload,
        ) {
            Decoded::Body(codec, body, checked) => (codec, body, checked),
            Decoded::Undecodable(error) => {
                return dropped_undecodable(
                    &inner,
                    probe.as_deref(),
                    &self.address,
                    "publish",
                    &error,
                );
            }
            Decoded::Refused(_, reasons, consumers) => {
                bump(&inner.counters().invalid, consumers as u64);
                if let Some(probe) = &probe {
                    probe.refused(RefusedBy::Invalid, consumers as u64);
                }
                tracing::warn!(address = &*self.address, %reasons, "publish from NATS refused by the consumers' spec");
                return;
            }
        };
        let fan = inner.local().deliver_all(
            &self.address,
            Scope::Exported,
            codec.type_id(),
            Verdicts::checked(&*body, checked),
            first_then_transform(&codec, &body),
            &head.user,
            None,
        );
        fan.count(inner.counters(), probe.as_deref());
        if let Some(reasons) = &fan.invalid_reasons {
            tracing::warn!(
                address = &*self.address,
                invalid = fan.invalid,
                %reasons,
                "publish from NATS refused by a consumer's spec"
            );
        }
        if fan.refused > 0 {
            tracing::warn!(
                address = &*self.address,
                refused = fan.refused,
                delivered = fan.delivered,
                "publish from NATS refused by full consumer queues"
            );
        } else {
            tracing::debug!(
                address = &*self.address,
                delivered = fan.delivered,
                "publish from NATS delivered"
            );
        }
    }

    fn on_send(&self, message: async_nats::Message, pending: &mut Pending) {
        let Some(inner) = self.inner.upgrade() else {
            return;
        };
        let Arrival { head, probe, span } = arrival(
            &inner,
            &self.address,
            message.headers.as_ref(),
            message.payload.len(),
        );
        let _entered = span.as_ref().map(tracing::Span::enter);
        let reply_to = message.reply.clone();
        let kind = if reply_to.is_some() {
            DeliveryKind::Request
        } else {
            DeliveryKind::Send
        };
        let (codec, body, checked) = match decode_checked(
            &inner,
            &self.address,
            &head,
            &message.payload,
        ) {
            Decoded::Body(codec, body, checked) => (codec, body, checked),
            Decoded::Refused(codec, reasons, _) => {
                let refusal = Refusal::Invalid(reasons);
                refusal.count(inner.counters(), probe.as_deref());
                let err = refusal.into_error::<RequestErrorKind>(&self.address, codec.type_name());
                match reply_to {
                    Some(to) => pending.push(self.fail(
                        to,
                        err.kind(),
                        NO_FAILURE_CODE,
                        err.message().to_owned(),
                    )),
                    None => {
                        tracing::warn!(address = &*self.address, reason = %err, "send from NATS refused by the consumers' spec");
                    }
                }
                return;
            }
            Decoded::Undecodable(error) => {
                undecodable(&inner, probe.as_deref());
                match reply_to {
                    Some(to) => {
                        tracing::debug!(address = &*self.address, %error, "request from NATS not decodable; answering with a codec error");
                        let message = format!("Request to address {}: {error}", self.address);
                        pending.push(self.fail(
                            to,
                            RequestErrorKind::Codec,
                            NO_FAILURE_CODE,
                            message,
                        ));
                    }
                    None => {
                        tracing::warn!(address = &*self.address, %error, "send from NATS dropped: not decodable");
                    }
                }
                return;
            }
        };
        let (tx, rx) = match reply_to {
            Some(_) => {
                let (tx, rx) = reply::channel();
                (Some(tx), Some(rx))
            }
            None => (None, None),
        };
        let result = inner.local().deliver_one(
            &self.address,
            Scope::Exported,
            codec.type_id(),
            Verdicts::checked(&*body, checked),
            first_then_transform(&codec, &body),
            head.user,
            kind,
            tx,
        );
        drop(body);
        match result {
            Ok(()) => {
                count_delivered(inner.counters(), probe.as_deref());
                if let (Some(to), Some(rx)) = (reply_to, rx) {
                    pending.push(Box::pin(answer(
                        Arc::clone(&self.shared),
                        Weak::clone(&self.inner),
                        Arc::clone(&self.address),
                        to,
                        rx,
                    )));
                }
            }
            Err(refusal) => {
                refusal.count(inner.counters(), probe.as_deref());
                let err = refusal.into_error::<RequestErrorKind>(&self.address, codec.type_name());
                let (failure, text) = (err.kind(), err.message().to_owned());
                match reply_to {
                    Some(to) => pending.push(self.fail(to, failure, NO_FAILURE_CODE, text)),
                    None => {
                        tracing::warn!(address = &*self.address, reason = %text, "send from NATS not delivered")
                    }
                }
            }
        }
    }

    fn fail(
        &self,
        to: async_nats::Subject,
        kind: RequestErrorKind,
        code: i32,
        message: String,
    ) -> BoxFuture<'static, ()> {
        Box::pin(publish_failure(
            Arc::clone(&self.shared),
            to,
            kind,
            code,
            message,
        ))
    }
}

/// Lets the consumers a message was just delivered to run before the
/// reader decodes the next one: the reader wakes itself and returns
/// `Pending` once, which puts it at the back of its worker's run queue,
/// behind the consumer tasks the delivery woke.
///
/// Without it a reader drains everything its subscriptions hold (up to
/// tokio's budget of 128 messages) before a consumer runs, so hundreds of
/// freshly decoded bodies are alive at once and are freed together later:
/// the allocator then works from cold, fragmented memory instead of
/// reusing what the previous message just freed. In the cluster benchmark
/// that made decoding and dropping a message two to three times as
/// expensive as decoding and dropping it at once (README, Performance,
/// Cluster).
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

#[cold]
fn dropped_undecodable(
    inner: &Arc<dyn Node>,
    probe: Option<&Probe>,
    address: &str,
    what: &str,
    error: &str,
) {
    undecodable(inner, probe);
    tracing::warn!(address, %error, "{what} from NATS dropped: not decodable");
}
