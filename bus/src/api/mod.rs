//! What users touch: the bus handle and its builder, the message, the
//! consumers and streams, the producer. Each hands its work to the engine
//! below and does not reach around it.

#[cfg(feature = "bridge")]
pub(crate) mod any;
pub(crate) mod builder;
pub(crate) mod bus;
pub(crate) mod consumer;
pub(crate) mod message;
pub(crate) mod producer;
