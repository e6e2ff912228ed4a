// Durable addresses at run time (the set-up is `jetstream.rs`): a send or
// publish stored in the address's stream before `Ok` (the server's
// acknowledgement, with the message id for duplicate suppression), and
// the readers of a node with consumers of a durable address: they pull
// from the JetStream consumers, deliver to the local consumers with a
// reply cell as the acknowledgement, and ack, nak (redeliver after the
// delay) or dead-letter by the outcome.
//
// Outcomes: each delivery of the message holds a share of its
// acknowledgement (`reply::Ack`); when every share was handled and let go
// (handler returned Ok, stream message acked) the receiver reads `None`
// and the message is acked; a failure (handler error or panic,
// `Message::fail`) naks with the redelivery delay, or dead-letters when it
// was the last allowed delivery; a share let go unhandled (a stream
// consumer's message dropped without `Message::ack`, the consumer went
// away, an inbound interceptor dropped it, a type mismatch) does the same.
// A message delivered more
// often than allowed (its handler kept timing out, or its node kept dying)
// is dead-lettered without being handled again. Nothing is acked before
// it was handled or stored at the dead-letter address.

use std::sync::{Arc, Weak};
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::AckKind;
use async_nats::jetstream::consumer::PullConsumer;
use async_nats::jetstream::message::Acker;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::base::headers::DELIVERY_HEADER;
use crate::base::interceptor::DeliveryKind;
use crate::base::reply::{self, Ack, Completion, Settlement};
use crate::telemetry::probe::RefusedBy;
use crate::telemetry::record::{Event, record};
use crate::telemetry::{Probe, Settled};
use crate::transport::cluster::{
    self, Arrival, Decoded, decode_checked, first_then_transform, undecodable,
};
use crate::transport::local::{Refusal, Scope, Verdicts, count_delivered};
use crate::transport::nats::durable_options::{
    DEAD_LETTER_ADDRESS_HEADER, DEAD_LETTER_DELIVERIES_HEADER, DEAD_LETTER_REASON_HEADER,
};
use crate::transport::nats::jetstream::{
    DurableAddress, SEND_CONSUMER, ensure_consumer, node_consumer_config,
};
use crate::transport::nats::link::Link;
use crate::transport::nats::link::NATS_MSG_ID;
use crate::transport::{BoxFuture, Node};

/// The durable readers of one address on this node.
pub(super) struct DurableReaders {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl DurableReaders {
    /// Stops pulling and waits (at most the ack wait) for the messages in
    /// flight to be handled and acknowledged.
    pub(super) async fn stop(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

/// Starts the readers of the durable `address` (sends, and this node's
/// publishes); `None` when the address is not durable.
pub(super) async fn start(
    shared: &Arc<Link>,
    inner: &Weak<dyn Node>,
    address: &Arc<str>,
) -> Option<DurableReaders> {
    let durables = shared.durables.as_ref()?;
    let d = Arc::clone(durables.get(address)?);
    let (stop, stopped) = watch::channel(false);
    let node_consumer = durables.node_consumer();
    if let Err(e) = ensure_consumer(
        &durables.js,
        &d,
        &node_consumer_config(&d, node_consumer.clone()),
    )
    .await
    {
        tracing::error!(address = &**address, error = %e, "cannot create this node's JetStream consumer of durable publishes");
    }
    let mut tasks = Vec::with_capacity(2);
    for (consumer, fan_out) in [(SEND_CONSUMER.to_owned(), false), (node_consumer, true)] {
        let reader = DurableReader {
            shared: Arc::clone(shared),
            inner: Weak::clone(inner),
            d: Arc::clone(&d),
            consumer,
            fan_out,
        };
        tasks.push(tokio::spawn(reader.run(stopped.clone())));
    }
    tracing::debug!(address = &**address, "durable readers started");
    Some(DurableReaders { stop, tasks })
}

struct DurableReader {
    shared: Arc<Link>,
    inner: Weak<dyn Node>,
    d: Arc<DurableAddress>,
    consumer: String,
    /// `true`: publishes (every local consumer); `false`: sends (one).
    fan_out: bool,
}

/// What to do with a delivered message.
enum Verdict {
    Ack,
    /// Deliver again after the delay.
    Nak(Duration),
    DeadLetter(String),
}

impl DurableReader {
    async fn open(&self) -> Option<async_nats::jetstream::consumer::pull::Stream> {
        let durables = self.shared.durables.as_ref()?;
        let consumer: PullConsumer = match durables.js.get_stream_no_info(&self.d.stream).await {
            Ok(stream) => match stream.get_consumer(&self.consumer).await {
                Ok(consumer) => consumer,
                Err(e) => {
                    tracing::debug!(address = &*self.d.address, consumer = %self.consumer, error = %e, "JetStream consumer not available yet");
                    return None;
                }
            },
            Err(e) => {
                tracing::debug!(address = &*self.d.address, error = %e, "JetStream stream not available yet");
                return None;
            }
        };
        let batch = self.d.options.max_in_flight.clamp(1, 256);
        match consumer
            .stream()
            .max_messages_per_batch(batch)
            .expires(Duration::from_secs(5))
            .heartbeat(Duration::from_secs(1))
            .messages()
            .await
        {
            Ok(messages) => Some(messages),
            Err(e) => {
                tracing::debug!(address = &*self.d.address, error = %e, "cannot pull from JetStream yet");
                None
            }
        }
    }

    async fn run(self, mut stop: watch::Receiver<bool>) {
        let mut pending: FuturesUnordered<BoxFuture<'static, ()>> = FuturesUnordered::new();
        let mut messages = None;
        let max = self.d.options.max_in_flight;
        loop {
            if *stop.borrow() {
                break;
            }
            if messages.is_none() {
                messages = self.open().await;
                if messages.is_none() {
                    tokio::select! {
                        _ = stop.changed() => {}
                        Some(()) = pending.next(), if !pending.is_empty() => {}
                        () = tokio::time::sleep(Duration::from_millis(500)) => {}
                    }
                    continue;
                }
            }
            let Some(stream) = messages.as_mut() else {
                continue;
            };
            tokio::select! {
                _ = stop.changed() => {}
                Some(()) = pending.next(), if !pending.is_empty() => {}
                next = stream.next(), if pending.len() < max => match next {
                    Some(Ok(message)) => {
                        if let Some(work) = self.on_message(message) {
                            pending.push(work);
                        }
                    }
                    Some(Err(e)) => {
                        tracing::debug!(address = &*self.d.address, error = %e, "JetStream pull interrupted; resuming");
                    }
                    None => messages = None,
                },
            }
        }
        // Stopped: finish what was delivered (bounded by the ack wait; what
        // is still unhandled then is redelivered by the server).
        drop(messages);
        let rest = async { while pending.next().await.is_some() {} };
        let _ = tokio::time::timeout(self.d.options.ack_wait, rest).await;
        tracing::debug!(address = &*self.d.address, consumer = %self.consumer, "durable reader finished");
    }

    /// Delivers one message; the returned future settles it.
    fn on_message(
        &self,
        message: async_nats::jetstream::Message,
    ) -> Option<BoxFuture<'static, ()>> {
        let inner = self.inner.upgrade()?;
        let (delivered, sequence) = match message.info() {
            Ok(info) => (
                u32::try_from(info.delivered).unwrap_or(u32::MAX),
                info.stream_sequence,
            ),
            Err(_) => (1, 0),
        };
        let (message, acker) = message.split();
        let frame = self
            .shared
            .arrived(message.headers.as_ref(), message.payload.clone());
        let Arrival { probe, span } =
            cluster::arrival(&inner, &self.d.address, &frame.head, frame.body().len());
        if let Some(span) = &span {
            // Which delivery of the stored message this is.
            span.record("delivery", i64::from(delivered));
        }
        let settle = Settle {
            shared: Arc::clone(&self.shared),
            node: Weak::clone(&self.inner),
            d: Arc::clone(&self.d),
            probe: probe.clone(),
            message,
            acker,
            delivered,
            sequence,
        };
        let max = self.d.options.max_deliveries;
        if max.is_some_and(|max| delivered > max) {
            let reason = format!(
                "not acknowledged after {} deliveries (handler timed out or its node went away)",
                delivered - 1
            );
            return Some(Box::pin(settle.run(Verdict::DeadLetter(reason))));
        }
        let _entered = span.as_ref().map(tracing::Span::enter);
        let decoded = decode_checked(&inner, &self.d.address, &frame.head, &frame.body_bytes());
        let (codec, body, checked) = match decoded {
            Decoded::Body(codec, body, checked) => (codec, body, checked),
            Decoded::Undecodable(error) => {
                undecodable(&inner, probe.as_deref());
                tracing::warn!(address = &*self.d.address, %error, "durable message not decodable: to the dead-letter address");
                return Some(Box::pin(settle.run(self.d.unfit(error.message))));
            }
            // Checked while decoding: refused for good, never built.
            Decoded::Refused(codec, reasons, consumers) => {
                let refused = if self.fan_out { consumers } else { 1 };
                let event = Event::Refused(RefusedBy::Invalid, refused as u64);
                record(inner.counters(), probe.as_deref(), event);
                let reason = Refusal::Invalid(reasons)
                    .into_error::<crate::base::error::RequestErrorKind>(
                        &self.d.address,
                        codec.type_name(),
                    )
                    .message()
                    .to_owned();
                tracing::warn!(address = &*self.d.address, %reason, "durable message refused by the consumers' spec");
                return Some(Box::pin(settle.run(self.d.unfit(reason))));
            }
        };
        let mut headers = frame.head.user;
        headers.remove(NATS_MSG_ID);
        headers.insert(DELIVERY_HEADER, delivered.to_string());
        let (tx, rx) = reply::ack_channel();
        let delivery = if self.fan_out {
            let fan = inner.local().deliver_all(
                &self.d.address,
                Scope::Exported,
                codec.type_id(),
                Verdicts::checked(&*body, checked),
                first_then_transform(&codec, &body),
                &headers,
                Some(&tx),
                span.is_some(),
            );
            fan.count(inner.counters(), probe.as_deref());
            if let Some(reasons) = &fan.invalid_reasons {
                tracing::warn!(address = &*self.d.address, invalid = fan.invalid, %reasons, "durable publish refused by a consumer's spec");
            }
            // Consumers of another type are skipped, as for any publish;
            // a consumer whose spec refuses the body will refuse it again.
            if fan.refused > 0 || (fan.delivered == 0 && fan.invalid == 0) {
                Err(Undelivered {
                    reason: format!(
                        "{} of the node's consumers of the type refused it (queue full), {} took it",
                        fan.refused, fan.delivered
                    ),
                    for_good: false,
                })
            } else if fan.delivered == 0 {
                Err(Undelivered {
                    reason: fan.invalid_reasons.unwrap_or_default(),
                    for_good: true,
                })
            } else {
                Ok(())
            }
        } else {
            inner
                .local()
                .deliver_one(
                    &self.d.address,
                    Scope::Exported,
                    codec.type_id(),
                    Verdicts::checked(&*body, checked),
                    || Arc::clone(&body),
                    headers,
                    DeliveryKind::Send,
                    Completion::Ack(Ack::new(tx.clone())),
                    span.is_some(),
                )
                .map(|_| count_delivered(inner.counters(), probe.as_deref()))
                .map_err(|refusal| {
                    refusal.count(inner.counters(), probe.as_deref());
                    let for_good = matches!(refusal, Refusal::Invalid(_));
                    let reason = refusal
                        .into_error::<crate::base::error::RequestErrorKind>(
                            &self.d.address,
                            codec.type_name(),
                        )
                        .message()
                        .to_owned();
                    Undelivered { reason, for_good }
                })
        };
        drop(tx);
        drop(body);
        let delay = self.d.options.redelivery_delay;
        let last = max.is_some_and(|max| delivered >= max);
        let dead_letter = self.d.dead_letter.is_some();
        Some(Box::pin(async move {
            let verdict = match delivery {
                // Refused by the consumers' spec: another delivery would be
                // refused alike, so it goes to the dead letters at once.
                Err(Undelivered {
                    reason,
                    for_good: true,
                }) if dead_letter => {
                    tracing::warn!(address = &*settle.d.address, %reason, "durable message refused by the consumers' spec: to the dead-letter address");
                    drop(rx);
                    Verdict::DeadLetter(reason)
                }
                // Not handed to every consumer: all of them get it again
                // (those that took it: at least once).
                Err(Undelivered { reason, .. }) => {
                    tracing::debug!(address = &*settle.d.address, %reason, "durable message not delivered here; redelivering");
                    drop(rx);
                    if last {
                        Verdict::DeadLetter(reason)
                    } else {
                        Verdict::Nak(delay)
                    }
                }
                // Every delivery of it handled and let go: `None`.
                Ok(()) => match rx.await {
                    None => Verdict::Ack,
                    Some(Settlement::Failed(failure)) if last => {
                        Verdict::DeadLetter(failure.message)
                    }
                    // Let go unacknowledged (a stream consumer's message
                    // dropped without `ack`, a consumer gone): as a failure.
                    Some(Settlement::Unhandled) if last => Verdict::DeadLetter(
                        "let go unacknowledged on its last allowed delivery".to_owned(),
                    ),
                    Some(Settlement::Failed(_) | Settlement::Unhandled) => Verdict::Nak(delay),
                },
            };
            settle.run(verdict).await;
        }))
    }
}

impl DurableAddress {
    /// The verdict on a message no delivery can help (undecodable, refused
    /// by the consumers' spec): the dead-letter address, or without one,
    /// redelivery until the most deliveries.
    fn unfit(&self, reason: String) -> Verdict {
        match &self.dead_letter {
            Some(_) => Verdict::DeadLetter(reason),
            None => Verdict::Nak(self.options.redelivery_delay),
        }
    }
}

/// Why a durable message was not handed to this node's consumers.
struct Undelivered {
    reason: String,
    /// Refused for good (the consumers' spec): delivering it again cannot
    /// help.
    for_good: bool,
}

/// A delivered message and what settles it with the server.
struct Settle {
    shared: Arc<Link>,
    /// The node, to count the outcome (gone: the bus closed meanwhile).
    node: Weak<dyn Node>,
    d: Arc<DurableAddress>,
    /// The address's metric handles (metrics on), to count the outcome.
    probe: Option<Arc<Probe>>,
    message: async_nats::Message,
    acker: Acker,
    delivered: u32,
    sequence: u64,
}

impl Settle {
    async fn run(self, verdict: Verdict) {
        let (result, outcome) = match verdict {
            Verdict::Ack => (self.acker.ack().await, Settled::Acked),
            Verdict::Nak(delay) => (
                self.acker.ack_with(AckKind::Nak(Some(delay))).await,
                Settled::Redelivered,
            ),
            Verdict::DeadLetter(reason) => match self.dead_letter(&reason).await {
                Ok(()) => (self.acker.ack().await, Settled::DeadLettered),
                Err(e) => {
                    tracing::warn!(address = &*self.d.address, error = %e, "cannot store a dead letter; the message is redelivered");
                    let result = self
                        .acker
                        .ack_with(AckKind::Nak(Some(self.d.options.redelivery_delay)))
                        .await;
                    (result, Settled::Redelivered)
                }
            },
        };
        if let Err(e) = result {
            // The server redelivers after the ack wait.
            tracing::debug!(address = &*self.d.address, error = %e, "cannot settle a durable message");
            return;
        }
        if let Some(node) = self.node.upgrade() {
            record(
                node.counters(),
                self.probe.as_deref(),
                Event::Settled(outcome),
            );
        }
    }

    /// Stores the message at the dead-letter address: the same body and
    /// codec, the user's headers, and why.
    async fn dead_letter(&self, reason: &str) -> Result<(), String> {
        let Some(dead) = &self.d.dead_letter else {
            return Err("the address has no dead-letter address".to_owned());
        };
        let Some(durables) = &self.shared.durables else {
            return Err("no JetStream".to_owned());
        };
        let Some(target) = durables.get(dead) else {
            return Err(format!("dead-letter address {dead} is not durable"));
        };
        let mut headers = HeaderMap::new();
        if let Some(original) = &self.message.headers {
            for (name, values) in original.iter() {
                let name: &str = name.as_ref();
                if name.eq_ignore_ascii_case(NATS_MSG_ID) || name.starts_with("Dead-Letter-") {
                    continue;
                }
                for value in values {
                    headers.append(name, value.clone());
                }
            }
        }
        let clean = |s: &str| s.replace(['\r', '\n'], " ");
        headers.insert(DEAD_LETTER_ADDRESS_HEADER, clean(&self.d.address).as_str());
        headers.insert(
            DEAD_LETTER_DELIVERIES_HEADER,
            self.delivered.to_string().as_str(),
        );
        headers.insert(DEAD_LETTER_REASON_HEADER, clean(reason).as_str());
        // The same id for the same stored message: a dead letter stored
        // twice (this node died before acking) is stored once.
        let id = format!("dead-{}-{}", self.d.stream, self.sequence);
        headers.insert(NATS_MSG_ID, id.as_str());
        let ack = durables
            .js
            .publish_with_headers(
                target.send_subject.clone(),
                headers,
                self.message.payload.clone(),
            )
            .await
            .map_err(|e| e.to_string())?;
        ack.await.map_err(|e| e.to_string())?;
        tracing::warn!(
            address = &*self.d.address,
            dead_letter = &**dead,
            deliveries = self.delivered,
            reason,
            "durable message moved to its dead-letter address"
        );
        Ok(())
    }
}
