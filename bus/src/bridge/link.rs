//! What a connection shares with its registrations' consumers and the
//! requests waiting for the client's answer: its outgoing frames, its
//! reply addresses, and the delivery of a bus message to the client.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use codecbus_core::MessageType;
use tokio::sync::{mpsc, oneshot};

use crate::api::message::Message;
use crate::base::error::NO_FAILURE_CODE;
use crate::base::error::{ReplyFailure, RequestError};
use crate::bridge::answer::{Answer, Answered, Replier, Reply};
use crate::bridge::frame::{Dialect, Outgoing};
use crate::bridge::json::encode_json;
use crate::bridge::permit::Permits;

/// The limits of a bridge and its connections (`BridgeOptions`), copied
/// into each.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) max_frame: usize,
    pub(crate) max_registrations: usize,
    pub(crate) max_pending_replies: usize,
    pub(crate) max_connections: usize,
    pub(crate) max_address_length: usize,
    pub(crate) idle_timeout: Duration,
    pub(crate) reply_timeout: Duration,
    pub(crate) write_timeout: Duration,
}

/// What goes to the writer.
pub(crate) enum Out {
    /// A frame, which the transport sends as its own.
    Frame(Outgoing),
    /// A frame made by the writer: the work of turning a reply into JSON
    /// is done there, beside the reading of the next frames.
    Make(Box<dyn FnOnce() -> Outgoing + Send>),
    /// Write what is queued, then close.
    Close,
}

/// The part of a connection its consumers and waiting requests hold.
pub(crate) struct Link {
    pub(crate) outbound: Arc<Permits>,
    pub(crate) limits: Limits,
    pub(crate) outbox: mpsc::Sender<Out>,
    /// The reply addresses given to the client for the bus's requests.
    pub(crate) pending: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    pub(crate) next_reply: AtomicU64,
    pub(crate) id: u64,
    /// The frames of the connection's transport.
    pub(crate) dialect: Dialect,
}

impl Link {
    /// Queues `frame` for the client; `false` once the connection is
    /// closing.
    pub(crate) async fn write(&self, frame: Outgoing) -> bool {
        self.send(Out::Frame(frame)).await
    }

    /// Queues `out` for the writer; `false` once the connection is
    /// closing.
    pub(crate) async fn send(&self, out: Out) -> bool {
        self.outbox.send(out).await.is_ok()
    }

    /// Queues an `err` frame saying `message`; `false` once the
    /// connection is closing.
    pub(crate) async fn err(&self, message: &str) -> bool {
        self.write(Outgoing::of(&self.dialect.err(message))).await
    }

    /// Queues an `err` frame saying `message` and why; `false` once the
    /// connection is closing.
    pub(crate) async fn err_detail(&self, message: &str, detail: &str) -> bool {
        self.write(Outgoing::of(&self.dialect.err_detail(message, detail)))
            .await
    }

    /// What answers a client's request (at its `reply_address`, sent to
    /// `address`): the reply's `message` frame, its JSON made by the writer,
    /// with an address to answer at when the replier asks for an answer;
    /// or the failure's `err` frame.
    pub(crate) fn answer_out(
        self: &Arc<Self>,
        reply_address: String,
        address: Arc<str>,
        outcome: Result<Reply, RequestError>,
    ) -> Out {
        let dialect = self.dialect;
        match outcome {
            Ok(mut reply) => {
                let ask = reply
                    .ask
                    .take()
                    .and_then(|replier| self.await_answer(replier, &address));
                Out::Make(Box::new(move || match reply.json() {
                    Ok(body) => dialect.message(
                        &reply_address,
                        ask.as_deref(),
                        &reply.headers,
                        body.as_bytes(),
                        true,
                    ),
                    Err(e) => failure_frame(dialect, &reply_address, &address, &e),
                }))
            }
            Err(e) => Out::Frame(failure_frame(dialect, &reply_address, &address, &e)),
        }
    }

    pub(crate) fn pending(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Answer>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands a message of a client's registration to the client: as a
    /// `message` frame, when the outbound permissions admit its body; a
    /// request with a reply address of this connection, whose answer is
    /// decoded as an `R` and replied.
    pub(crate) async fn deliver<T, R>(self: &Arc<Self>, m: Message<T>)
    where
        T: MessageType + Send + Sync + 'static,
        R: MessageType + Send + Sync + 'static,
    {
        let address = m.address().to_string();
        let body = match encode_json(m.body()) {
            Ok(body) => body,
            Err(why) => {
                tracing::warn!(address, %why, "a message cannot cross the bridge as JSON");
                let _ = m.fail_coded(
                    NO_FAILURE_CODE,
                    format!(
                        "The message to address {address} cannot cross the bridge as JSON: {why}"
                    ),
                );
                return;
            }
        };
        if !self.outbound.admits(&address, &body) {
            // Not for this client: dropped, as Vert.x does (a request then
            // fails at once: its message was dropped unanswered).
            tracing::debug!(
                address,
                "outbound message refused by the bridge's permissions"
            );
            return;
        }
        if !m.expects_reply() {
            self.write(self.dialect.message(
                &address,
                None,
                m.headers(),
                body.as_bytes(),
                m.is_send(),
            ))
            .await;
            return;
        }
        let headers = m.headers().clone();
        let Some(reply_address) = self.await_answer(Replier::new::<T, R>(m), &address) else {
            return;
        };
        let sent = self.dialect.message(
            &address,
            Some(&reply_address),
            &headers,
            body.as_bytes(),
            true,
        );
        // A frame that cannot go means the connection is closing: the
        // answer's wait then ends with the others (`Gone`).
        self.write(sent).await;
    }

    /// A reply address of this connection at which the client owes
    /// `replier` (of a message to `address`) an answer, for the frame that
    /// asks it; the answer is handed to the replier by a task of its own,
    /// so that the asking goes on meanwhile (requests to a client overlap,
    /// as in Vert.x). `None`, and the replier failed, when as many answers
    /// as the limit allows are awaited already.
    pub(crate) fn await_answer(
        self: &Arc<Self>,
        replier: Replier,
        address: &str,
    ) -> Option<String> {
        let address = address.to_string();
        let limit = self.limits.max_pending_replies;
        let (reply_address, answer) = {
            let mut pending = self.pending();
            if pending.len() >= limit {
                drop(pending);
                replier.refuse(&address, limit);
                return None;
            }
            let n = self.next_reply.fetch_add(1, Ordering::Relaxed);
            let reply_address = format!("__codecbus.bridge.{}.{n}", self.id);
            let (tx, rx) = oneshot::channel();
            pending.insert(reply_address.clone(), tx);
            (reply_address, rx)
        };
        let link = Arc::clone(self);
        let waiting = reply_address.clone();
        tokio::spawn(async move {
            let wait = link.limits.reply_timeout;
            let answered = replier.settle(async { answer.await.ok() }, wait).await;
            link.pending().remove(&waiting);
            match answered {
                Answered::Done => {}
                Answered::Refused(why) => {
                    link.err_detail("invalid_body", &why).await;
                }
                // The conversation goes on: the next turn to the client.
                Answered::Next { at, next } => {
                    let out = link.answer_out(at, Arc::from(&*address), next.await);
                    link.send(out).await;
                }
            }
        });
        Some(reply_address)
    }
}

/// The `err` frame of a client's request that failed.
fn failure_frame(
    dialect: Dialect,
    reply_address: &str,
    address: &str,
    e: &RequestError,
) -> Outgoing {
    Outgoing::of(&dialect.failure(
        reply_address,
        address,
        e.wire_failure_code(),
        failure_name(e.failure_type()),
        e.message(),
    ))
}

/// Vert.x's name of a failure type.
fn failure_name(failure: ReplyFailure) -> &'static str {
    match failure {
        ReplyFailure::Timeout => "TIMEOUT",
        ReplyFailure::NoHandlers => "NO_HANDLERS",
        ReplyFailure::RecipientFailure => "RECIPIENT_FAILURE",
        ReplyFailure::Error => "ERROR",
    }
}
