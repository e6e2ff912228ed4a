//! What crosses the bridge in answer: a reply on its way to a client (its
//! body written as JSON where its frame is made), a message awaiting a
//! client's answer (a request to a client's registration, a reply that asks
//! for an answer), completed by what comes back, and the turn a reply from
//! across the bridge gives when it asks for an answer. Both ends of the
//! bridge, the server's connections and `BridgeClient`, use these.

use std::any::{Any, type_name};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use codecbus_core::{AnyBody, CodecRegistration, MessageType, Writer};
use codecbus_json::JsValue;

use crate::api::message::Message;
use crate::base::error::{NO_FAILURE_CODE, RequestError, RequestErrorKind};
use crate::base::headers::Headers;
use crate::base::options::ReplyOptions;
use crate::base::reply::{self, ReplyEnvelope, Turn};
use crate::bridge::json::{self, decode_as};
use crate::engine::state::State;
use crate::engine::waiting;

/// A future the bridge awaits, boxed (the carriers are trait objects).
pub(crate) type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A reply on its way to a client: its headers, and its body with the
/// codec that writes it, turned into JSON text where the frame is made
/// ([`json`](Reply::json)), on the connection's writer.
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
    /// The answer's body (its JSON text) and headers, and where the client
    /// awaits an answer to it in turn, if it does.
    Body {
        body: String,
        headers: Headers,
        reply_address: Option<String>,
    },
    /// A failure, with its code and text.
    Failure { code: i32, message: String },
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
/// an answer at `at`: `next` is it, to go there; a reply that asks, as
/// [`turn`] gives it, is such a turn too).
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
            // a requester that went away is not the client's to hear of.
            let (_, answered) = match answer {
                Answer::Body {
                    body,
                    headers,
                    reply_address,
                } => {
                    let options = ReplyOptions::new().headers(headers);
                    match (decode_as::<R>(&body), reply_address) {
                        // The client awaits an answer to its answer: the
                        // conversation's next turn, read as any type.
                        (Ok(reply), Some(at)) => {
                            let address: Arc<str> = Arc::from(address);
                            let next = Box::pin(async move {
                                let (env, state) =
                                    m.reply_and_await(Arc::new(reply), options).await?;
                                reply_of::<JsValue>(env, address, &state)
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
                Answer::Failure { code, message } => (m.fail_coded(code, message), Answered::Done),
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
        self.answer(Answer::Failure {
            code: NO_FAILURE_CODE,
            message: format!(
                "The bridge client at address {address} has {limit} requests waiting for its answer already"
            ),
        });
    }
}

impl Reply {
    /// The body's JSON text: written by its codec, transcoded.
    ///
    /// # Errors
    ///
    /// A `Codec` error when the body cannot be written, or not as JSON.
    pub(crate) fn json(&self) -> Result<String, RequestError> {
        let mut w = Writer::from_vec(Vec::with_capacity(512));
        self.codec
            .encode(&*self.body, &mut w)
            .map_err(|e| reply_error(&self.address, e.to_string()))?;
        json::to_json_string(w.as_slice()).map_err(|e| reply_error(&self.address, e.to_string()))
    }
}

/// The turn of a reply from across the bridge that asks for an answer (a
/// Vert.x reply to a `BridgeClient` request, sent with `replyAndRequest`),
/// for the reply's message to carry, and the conversation's next turn: the
/// answer given there, awaited for the bus's default timeout, as a reply
/// to cross the bridge (the `next` of [`Answered::Next`]).
pub(crate) fn turn(
    address: Arc<str>,
    state: &Arc<State>,
) -> (Box<Turn>, Boxed<'static, Result<Reply, RequestError>>) {
    let (tx, rx) = reply::channel();
    let wait = state.default_timeout;
    let state = Arc::clone(state);
    let next = Box::pin(async move {
        let env = waiting::await_reply(rx, &address, wait).await?;
        reply_of::<JsValue>(env, address, &state)
    });
    (Box::new(Turn { tx, wait }), next)
}

/// A reply's envelope as it goes to a client: its codec found by its type,
/// and, when it asks for an answer (`reply_and_request`), its turn as a
/// [`Replier`] whose answers are `R`s (the client answers it at a reply
/// address of its connection, as it answers the bus's requests).
pub(crate) fn reply_of<R>(
    env: ReplyEnvelope,
    address: Arc<str>,
    state: &Arc<State>,
) -> Result<Reply, RequestError>
where
    R: MessageType + Send + Sync + 'static,
{
    let type_id = Any::type_id(&*env.body);
    let Some(codec) = state.registry().by_type(type_id) else {
        return Err(reply_error(
            &address,
            format!(
                "the reply is a `{}`, which has no registered codec",
                env.type_name
            ),
        ));
    };
    let ask = env.reply.and_then(|turn| {
        // The turn, as a message to answer (its body unused).
        let replier = Message::<JsValue>::from_reply(
            ReplyEnvelope {
                address: Arc::clone(&address),
                headers: Headers::new(),
                body: Arc::new(JsValue::Null),
                type_name: type_name::<JsValue>(),
                transformed: true,
                reply: Some(turn),
            },
            state,
        );
        replier.ok().map(Replier::new::<JsValue, R>)
    });
    Ok(Reply {
        headers: env.headers,
        body: env.body,
        codec,
        address,
        ask,
    })
}

fn reply_error(address: &str, why: String) -> RequestError {
    RequestError::new(
        RequestErrorKind::Codec,
        format!("The reply from address {address} cannot cross the bridge as JSON: {why}"),
    )
    .with_address(Arc::from(address))
}
