//! Requests whose reply's type is not known where they are made: the
//! Vert.x bridge's way into the bus. A client's request crosses the bridge
//! as JSON, decoded as the type declared for its address; its reply may be
//! of any type, and goes back as JSON written by that type's registered
//! codec. These are the bus's own paths ([`EventBus::request_with`],
//! [`Message::reply_and_request_with`]), stopped at the reply's envelope,
//! which is kept as it came: its body with the codec that writes it.

use std::any::{Any, type_name};
use std::future::Future;
use std::sync::Arc;

use codecbus_core::{AnyBody, CodecRegistration, MessageType};
use codecbus_json::JsValue;

use crate::api::bus::EventBus;
use crate::api::message::Message;
use crate::base::error::{RequestError, RequestErrorKind};
use crate::base::headers::Headers;
use crate::base::options::{DeliveryOptions, ReplyOptions};
use crate::base::reply::{self, ReplyEnvelope, Turn};
use crate::engine::routing::{self, Quiet};
use crate::engine::state::State;
use crate::engine::waiting;

/// A reply of a type not known in advance: its headers, and its body with
/// the codec registered for its type.
pub(crate) struct AnyReply {
    /// The address the request went to.
    pub(crate) address: Arc<str>,
    pub(crate) headers: Headers,
    pub(crate) body: AnyBody,
    pub(crate) codec: CodecRegistration,
    /// When the replier asks for an answer (`reply_and_request`): the
    /// message to answer it with (its body unused).
    pub(crate) turn: Option<Message<JsValue>>,
}

impl EventBus {
    /// [`request_with`](EventBus::request_with), whatever the reply's
    /// type.
    ///
    /// # Errors
    ///
    /// As `request_with`; `Codec` when the reply's type has no registered
    /// codec.
    pub(crate) async fn request_any<T>(
        &self,
        address: Arc<str>,
        body: Arc<T>,
        options: DeliveryOptions,
    ) -> Result<AnyReply, RequestError>
    where
        T: MessageType + Send + Sync + 'static,
    {
        let state = &self.state;
        let env = match routing::observation(state, &address) {
            None => routing::request(state, Quiet, &address, body, options).await?,
            Some(o) => {
                Box::pin(routing::observed_request(state, o, &address, body, options)).await?
            }
        };
        any_reply(env, address, state)
    }

    /// A turn of a conversation to be taken from outside the bus (a reply
    /// from across the bridge that asks for an answer), for a message to
    /// carry, and the answer given there, whatever its type, awaited for
    /// the bus's default timeout.
    pub(crate) fn await_turn(
        &self,
        address: Arc<str>,
    ) -> (
        Box<Turn>,
        impl Future<Output = Result<AnyReply, RequestError>> + Send + 'static,
    ) {
        let (tx, rx) = reply::channel();
        let wait = self.state.default_timeout;
        let state = Arc::clone(&self.state);
        let answer = async move {
            let env = waiting::await_reply(rx, &address, wait).await?;
            any_reply(env, address, &state)
        };
        (Box::new(Turn { tx, wait }), answer)
    }

    /// The message a requester gets for a reply decoded outside the bus
    /// (its body its own, not transformed again), carrying `turn` when the
    /// replier asks for an answer.
    ///
    /// # Errors
    ///
    /// None in practice: the body is an `R` (the envelope's type check).
    pub(crate) fn reply_message<R>(
        &self,
        address: Arc<str>,
        headers: Headers,
        body: R,
        turn: Option<Box<Turn>>,
    ) -> Result<Message<R>, RequestError>
    where
        R: MessageType + Send + Sync + 'static,
    {
        Message::from_reply(
            ReplyEnvelope {
                address,
                headers,
                body: Arc::new(body),
                type_name: type_name::<R>(),
                transformed: true,
                reply: turn,
            },
            &self.state,
        )
    }
}

impl<T: Send + Sync + 'static> Message<T> {
    /// [`reply_and_request_with`](Message::reply_and_request_with),
    /// whatever the answer's type.
    ///
    /// # Errors
    ///
    /// As `reply_and_request_with`; `Codec` when the answer's type has no
    /// registered codec.
    pub(crate) async fn reply_and_await_any<B: Send + Sync + 'static>(
        &self,
        body: Arc<B>,
        options: ReplyOptions,
    ) -> Result<AnyReply, RequestError> {
        let (env, state) = self.reply_and_await(body, options).await?;
        let address: Arc<str> = Arc::from(self.address());
        any_reply(env, address, &state)
    }
}

/// A reply's envelope with its codec found by its type, and its turn, when
/// it asks for an answer, as a message.
fn any_reply(
    env: ReplyEnvelope,
    address: Arc<str>,
    state: &Arc<State>,
) -> Result<AnyReply, RequestError> {
    let type_id = Any::type_id(&*env.body);
    let Some(codec) = state.registry().by_type(type_id) else {
        return Err(RequestError::new(
            RequestErrorKind::Codec,
            format!(
                "The reply from address {address} is a `{}`, which has no registered codec",
                env.type_name
            ),
        )
        .with_address(address));
    };
    let turn = env.reply.and_then(|turn| {
        Message::<JsValue>::from_reply(
            ReplyEnvelope {
                address: Arc::clone(&address),
                headers: Headers::new(),
                body: Arc::new(JsValue::Null),
                type_name: type_name::<JsValue>(),
                transformed: true,
                reply: Some(turn),
            },
            state,
        )
        .ok()
    });
    Ok(AnyReply {
        address,
        headers: env.headers,
        body: env.body,
        codec,
        turn,
    })
}
