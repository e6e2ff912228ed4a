//! What crosses the bridge in answer: a reply on its way to the other end
//! (its body written as JSON where its frame is made), and a message
//! awaiting the other end's answer (a request to a client's registration,
//! a reply that asks for an answer), completed by what comes back. Both
//! ends of the bridge, the server's connections and `BridgeClient`, use
//! these, through their peer (`peer.rs`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use codecbus_core::{AnyBody, CodecRegistration, MessageType, Writer};
use codecbus_json::JsValue;

use crate::api::any::AnyReply;
use crate::api::message::Message;
use crate::base::error::{NO_FAILURE_CODE, RequestError, RequestErrorKind};
use crate::base::headers::Headers;
use crate::base::options::ReplyOptions;
use crate::bridge::json::{self, decode_as};

/// A future the bridge awaits, boxed (the carriers are trait objects).
pub(crate) type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A reply on its way to the other end: its headers, and its body with the
/// codec that writes it, turned into JSON text where the frame is made
/// ([`json`](Reply::json)).
pub(crate) struct Reply {
    pub(crate) headers: Headers,
    body: AnyBody,
    codec: CodecRegistration,
    /// The address the request went to.
    address: Arc<str>,
    /// When the replier asks for an answer (`reply_and_request`): the
    /// replier, to be given the answer that comes across the bridge.
    pub(crate) ask: Option<Replier>,
}

/// What came back across the bridge for a message that awaits an answer.
pub(crate) enum Answer {
    /// The answer's body (its JSON text) and headers, and where the other
    /// end awaits an answer to it in turn, if it does.
    Body {
        body: String,
        headers: Headers,
        reply_address: Option<String>,
    },
    /// A failure: the other end's `fail` (its code and text) or, from a
    /// bridge, the request's failure on its bus.
    Failed(RequestError),
    /// The connection went before the answer came.
    Gone,
    /// No answer within this wait.
    TimedOut(Duration),
}

/// A message awaiting an answer from across the bridge (a request to a
/// bridge client, a reply that asks for an answer), with the type its
/// answer is read as: [`answer`](Replier::answer) completes it.
pub(crate) struct Replier(Box<dyn FnOnce(Answer) -> Answered + Send>);

/// What answering a [`Replier`] gave: nothing more, why the answer's body
/// was refused, or the next turn of the conversation (the answer asked for
/// an answer at `at`: `next` is it, to go there).
pub(crate) enum Answered {
    Done,
    Refused(String),
    Next {
        at: String,
        next: Boxed<'static, Result<Reply, RequestError>>,
    },
}

impl Replier {
    /// `m`, whose answers are read as `R`s.
    pub(crate) fn new<T, R>(m: Message<T>) -> Self
    where
        T: Send + Sync + 'static,
        R: MessageType + Send + Sync + 'static,
    {
        Self(Box::new(move |answer| {
            let address = m.address().to_string();
            // Whether the message takes its completion is its own affair:
            // a requester that went away is not the other end's to hear of.
            let (_, answered) = match answer {
                Answer::Body {
                    body,
                    headers,
                    reply_address,
                } => {
                    let options = ReplyOptions::new().headers(headers);
                    match (decode_as::<R>(&body), reply_address) {
                        // The other end awaits an answer to its answer:
                        // the conversation's next turn, read as any type.
                        (Ok(reply), Some(at)) => {
                            let next = Box::pin(async move {
                                let answer =
                                    m.reply_and_await_any(Arc::new(reply), options).await?;
                                Ok(Reply::of::<JsValue>(answer))
                            });
                            return Answered::Next { at, next };
                        }
                        (Ok(reply), None) => (m.reply_with(reply, options), Answered::Done),
                        (Err(why), _) => {
                            let text =
                                format!("The bridge client's answer at address {address} is {why}");
                            (m.fail_coded(NO_FAILURE_CODE, text), Answered::Refused(why))
                        }
                    }
                }
                Answer::Failed(e) => (
                    m.fail_coded(
                        e.failure_code().unwrap_or(NO_FAILURE_CODE),
                        e.message().to_owned(),
                    ),
                    Answered::Done,
                ),
                Answer::Gone => {
                    let text = format!(
                        "The bridge client at address {address} went away before it answered"
                    );
                    (m.fail_coded(NO_FAILURE_CODE, text), Answered::Done)
                }
                Answer::TimedOut(wait) => {
                    let text = format!(
                        "The bridge client at address {address} did not answer within {}(ms)",
                        wait.as_millis()
                    );
                    (m.fail_coded(NO_FAILURE_CODE, text), Answered::Done)
                }
            };
            answered
        }))
    }

    /// Waits up to `wait` for the answer (`None`: the other side went
    /// before it came) and completes the message with it.
    pub(crate) async fn settle(
        self,
        answer: impl Future<Output = Option<Answer>>,
        wait: Duration,
    ) -> Answered {
        let answer = match tokio::time::timeout(wait, answer).await {
            Ok(Some(answer)) => answer,
            Ok(None) => Answer::Gone,
            Err(_) => Answer::TimedOut(wait),
        };
        self.answer(answer)
    }

    /// Completes the message with `answer`.
    pub(crate) fn answer(self, answer: Answer) -> Answered {
        (self.0)(answer)
    }

    /// Fails the message at once: `limit` answers wait already.
    pub(crate) fn refuse(self, address: &str, limit: usize) {
        self.answer(Answer::Failed(RequestError::new(
            RequestErrorKind::RecipientFailure,
            format!(
                "The bridge client at address {address} has {limit} requests waiting for its answer already"
            ),
        )));
    }
}

impl Reply {
    /// A reply of any type as it goes to the other end; when it asks for an
    /// answer (`reply_and_request`), its turn as a [`Replier`] whose
    /// answers are `R`s (the other end answers it at a reply address of
    /// its connection, as it answers requests).
    pub(crate) fn of<R>(reply: AnyReply) -> Self
    where
        R: MessageType + Send + Sync + 'static,
    {
        Self {
            headers: reply.headers,
            body: reply.body,
            codec: reply.codec,
            address: reply.address,
            ask: reply.turn.map(Replier::new::<JsValue, R>),
        }
    }

    /// The body's JSON text: written by its codec, transcoded.
    ///
    /// # Errors
    ///
    /// A `Codec` error when the body cannot be written, or not as JSON.
    pub(crate) fn json(&self) -> Result<String, RequestError> {
        if let Some(text) = json::js_text(&*self.body) {
            return Ok(text);
        }
        let mut w = Writer::from_vec(Vec::with_capacity(512));
        self.codec
            .encode(&*self.body, &mut w)
            .map_err(|e| reply_error(&self.address, e.to_string()))?;
        json::to_json_string(w.as_slice()).map_err(|e| reply_error(&self.address, e.to_string()))
    }
}

fn reply_error(address: &str, why: String) -> RequestError {
    RequestError::new(
        RequestErrorKind::Codec,
        format!("The reply from address {address} cannot cross the bridge as JSON: {why}"),
    )
    .with_address(Arc::from(address))
}
