//! The codecbus event bus: Vert.x event-bus semantics on tokio, for
//! [`MessageCodec`](codec_core::MessageCodec) types.
//!
//! ```
//! use bus::{EventBus, Message};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let bus = EventBus::new();
//! let _c = bus.consumer("greet", |m: Message<String>| async move {
//!     m.reply(format!("hello {}", m.body()));
//! });
//! let reply: Message<String> = bus.request("greet", "world".to_string()).await.unwrap();
//! assert_eq!(reply.body(), "hello world");
//! # }
//! ```
#![deny(unreachable_pub)]
#![deny(missing_docs)]

mod body;
mod bus;
mod consumer;
mod error;
mod headers;
mod interceptor;
mod message;
mod metrics;
mod options;
mod producer;
mod registry;
mod reply;
mod timer;
mod transport;

pub use crate::body::{IntoBody, Shared};
pub use crate::bus::{DEFAULT_TIMEOUT, EventBus, EventBusBuilder};
pub use crate::consumer::{HandlerResult, MessageConsumer, MessageStream};
pub use crate::error::{
    BuildError, BuildErrorKind, Error, NO_FAILURE_CODE, PublishError, PublishErrorKind,
    RegistryError, RegistryErrorKind, ReplyFailure, RequestError, RequestErrorKind, SendError,
    SendErrorKind,
};
pub use crate::headers::Headers;
pub use crate::interceptor::{DeliveryContext, DeliveryKind, Verdict};
pub use crate::message::Message;
pub use crate::metrics::Metrics;
pub use crate::options::{ConsumerOptions, DEFAULT_QUEUE_CAPACITY, DeliveryOptions};
pub use crate::producer::MessageProducer;
pub use codec_core::CodecRegistration;
