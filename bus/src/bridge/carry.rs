//! The Rust types a bridge carries: for each, how a client's JSON body
//! becomes a value of it and goes through the bus (`send`, `publish`,
//! `request`, a consumer for a client's registration). Every operation is
//! the bus's own, through its api (`EventBus`'s calls, and `request_any`
//! for a request whose reply's type is not known here): the bridge adds no
//! path of its own.

use std::any::type_name;
use std::marker::PhantomData;
use std::sync::Arc;

use codecbus_core::MessageType;
use codecbus_json::JsValue;

use crate::api::bus::EventBus;
use crate::api::consumer::MessageConsumer;
use crate::api::message::Message;
use crate::base::body::Shared;
use crate::base::error::{PublishError, RequestError, SendError};
use crate::base::options::DeliveryOptions;
use crate::base::report::PublishReport;
use crate::bridge::answer::{Boxed, Reply};
use crate::bridge::json::decode_as;
use crate::bridge::peer::Peer;

/// One carried type, `T`, whose answers from clients (to requests from
/// the bus) are `R`s.
pub(crate) trait Carry: Send + Sync + 'static {
    /// `T`'s Rust name, for error texts.
    fn type_name(&self) -> &'static str;

    /// A client's JSON body (its text) as a `T`, ready to go through the
    /// bus.
    fn decode(&self, body: &str) -> Result<Box<dyn Decoded>, String>;

    /// A consumer of `T` at `address` that hands its messages to a
    /// client's connection.
    fn consume(&self, bus: &EventBus, address: &str, peer: Arc<Peer>) -> MessageConsumer;

    /// The JSON Schema of the JSON form of `T` (its shape under the codec
    /// name `bus` knows it by, else its Rust name).
    fn json_schema(&self, bus: &EventBus) -> serde_json::Value;
}

/// A body a client sent, decoded as its carrier's type.
pub(crate) trait Decoded: Send + 'static {
    /// `EventBus::send_with`.
    fn send<'a>(
        self: Box<Self>,
        bus: &'a EventBus,
        address: &'a str,
        options: DeliveryOptions,
    ) -> Boxed<'a, Result<(), SendError>>;

    /// `EventBus::publish_with`.
    fn publish<'a>(
        self: Box<Self>,
        bus: &'a EventBus,
        address: &'a str,
        options: DeliveryOptions,
    ) -> Boxed<'a, Result<PublishReport, PublishError>>;

    /// `EventBus::request_with`, whatever the reply's type: the reply
    /// comes back as JSON, through its type's registered codec.
    fn request(
        self: Box<Self>,
        bus: EventBus,
        address: Arc<str>,
        options: DeliveryOptions,
    ) -> Boxed<'static, Result<Reply, RequestError>>;
}

/// The carrier of `T`, answered with `R`.
pub(crate) struct Typed<T, R>(PhantomData<fn() -> (T, R)>);

impl<T, R> Typed<T, R> {
    pub(crate) fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T, R> Carry for Typed<T, R>
where
    T: MessageType + Send + Sync + 'static,
    R: MessageType + Send + Sync + 'static,
{
    fn type_name(&self) -> &'static str {
        type_name::<T>()
    }

    fn decode(&self, body: &str) -> Result<Box<dyn Decoded>, String> {
        decode_as::<T>(body).map(decoded::<T, R>)
    }

    fn consume(&self, bus: &EventBus, address: &str, peer: Arc<Peer>) -> MessageConsumer {
        bus.consumer(address, move |m: Message<T>| {
            let peer = Arc::clone(&peer);
            async move { peer.deliver::<T, R>(m).await }
        })
    }

    fn json_schema(&self, bus: &EventBus) -> serde_json::Value {
        let type_id = std::any::TypeId::of::<T>();
        let name = bus
            .codecs()
            .into_iter()
            .find(|c| c.type_id() == type_id)
            .map_or_else(|| type_name::<T>().to_owned(), |c| c.name().to_owned());
        codecbus_core::shape::json_schema::json_schema(&codecbus_core::shape::CodecShape::of::<T>(
            &name,
        ))
    }
}

/// A body parsed as its frame was read, for an address that declares no
/// type: what the `JsValue` carrier decodes from its text.
pub(crate) fn any_json(value: JsValue) -> Box<dyn Decoded> {
    decoded::<JsValue, JsValue>(value)
}

/// A decoded `T`, ready to go through the bus, answered with `R`s.
fn decoded<T, R>(value: T) -> Box<dyn Decoded>
where
    T: MessageType + Send + Sync + 'static,
    R: MessageType + Send + Sync + 'static,
{
    Box::new(Body::<T, R>(Arc::new(value), PhantomData))
}

/// A decoded body of type `T`, whose answers from clients are `R`s.
struct Body<T, R>(Arc<T>, PhantomData<fn() -> R>);

impl<T, R> Decoded for Body<T, R>
where
    T: MessageType + Send + Sync + 'static,
    R: MessageType + Send + Sync + 'static,
{
    fn send<'a>(
        self: Box<Self>,
        bus: &'a EventBus,
        address: &'a str,
        options: DeliveryOptions,
    ) -> Boxed<'a, Result<(), SendError>> {
        Box::pin(bus.send_with(address, Shared(self.0), options))
    }

    fn publish<'a>(
        self: Box<Self>,
        bus: &'a EventBus,
        address: &'a str,
        options: DeliveryOptions,
    ) -> Boxed<'a, Result<PublishReport, PublishError>> {
        Box::pin(bus.publish_with(address, Shared(self.0), options))
    }

    fn request(
        self: Box<Self>,
        bus: EventBus,
        address: Arc<str>,
        options: DeliveryOptions,
    ) -> Boxed<'static, Result<Reply, RequestError>> {
        let body = self.0;
        Box::pin(async move {
            let reply = bus.request_any(address, body, options).await?;
            Ok(Reply::of::<R>(reply))
        })
    }
}
