//! The Vert.x event bus bridge (feature `bridge`): the TCP bridge protocol
//! of Vert.x 3.9.4 served in front of an [`EventBus`](crate::EventBus), so
//! that programs in other languages (Vert.x's bridge clients for Python,
//! Go, C, ...) send, publish, request and consume on the bus.
//!
//! # The protocol
//!
//! Each frame is four bytes of big-endian length, then that many bytes of
//! UTF-8 JSON, one object. A client sends `ping`, `send`, `publish`,
//! `register` and `unregister` frames; the bridge answers `pong`,
//! `message` and `err` frames. The members: `type`, `address`,
//! `replyAddress`, `headers` (an object of strings), `body`, and in
//! answers `send` (whether the message was sent rather than published)
//! and, for failures, `failureCode`, `failureType` and `message`. Every
//! frame the bridge writes is the one Vert.x 3.9.4's `TcpEventBusBridge`
//! writes for the same case (the tests compare them, case by case, with
//! frames captured from Vert.x); where codecbus differs, on purpose, the
//! guide's bridge chapter (`book/src/bridge.md`) lists it.
//!
//! * `send` with a `replyAddress` is a request: its reply comes back as a
//!   `message` frame at that address, a failure as an `err` frame with
//!   `address` (the reply address), `sourceAddress`, `failureCode`,
//!   `failureType` and `message`. Without one the outcome is not reported.
//!   A reply that asks for an answer (`reply_and_request`) carries a
//!   `replyAddress` of its own, where the client answers it as it answers
//!   a request from the bus.
//! * `register` makes the client a consumer of the address: every message
//!   there (sent, published or requested) comes as a `message` frame; a
//!   request carries a `replyAddress`, and the client answers it with a
//!   `send` to that address (`failureCode` and `message` to fail it).
//! * A frame the permissions refuse gets `{"type":"err","message":"access_denied"}`
//!   and the connection goes on. So do malformed frames, each with its
//!   `err` frame, and a frame over the size limit (`frame_too_large`),
//!   which is skipped as it arrives, never held.
//!
//! # Permissions
//!
//! Nothing crosses unless a [`PermittedOptions`] entry lists it: inbound
//! entries for what clients send and publish, outbound ones for what they
//! register and receive; by `address`, by `address_regex` (the whole
//! address) and, for bodies, `match` (a JSON subset the body must contain).
//!
//! # Bodies
//!
//! Bodies are JSON at the edge and typed on the bus. A client's body is
//! read as the type declared for its address
//! ([`BridgeOptions::typed`]), transcoded to MessagePack and decoded by
//! that type's own codec, so a derived type crosses as the JSON object of
//! its named layout (`#[codec(as_array)]` and keyed types as arrays,
//! unions as `[tag, payload]`), and a body that does not decode is the
//! client's `err` frame. An address with no declared type carries
//! [`JsValue`](codecbus_json::JsValue). The way back is the same: a
//! message's codec writes MessagePack, which becomes JSON (byte strings as
//! base64 text, extension values as `{"$ext": type, "$data": base64}`).
//! A [`JsValue`](codecbus_json::JsValue) message is printed to JSON
//! straight, without MessagePack in between.
//!
//! ```
//! use codecbus_bus::bridge::{Bridge, BridgeOptions, PermittedOptions};
//! use codecbus_bus::{EventBus, Message};
//! use codecbus_core::MessageCodec;
//!
//! #[derive(MessageCodec, Clone, Debug)]
//! struct Order { id: u64, quantity: u32 }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let bus = EventBus::new();
//! let _shop = bus.consumer("shop.orders", |m: Message<Order>| async move {
//!     m.reply(format!("order {} taken", m.body().id))
//! });
//! let options = BridgeOptions::new()
//!     .inbound(PermittedOptions::new().address("shop.orders"))
//!     .typed::<Order>("shop.orders");
//! let server = Bridge::new(&bus, options)?.listen("127.0.0.1:0").await?;
//!
//! // A bridge client, by hand: one frame out, one back.
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//! let mut client = tokio::net::TcpStream::connect(server.local_addr()).await?;
//! let frame = br#"{"type":"send","address":"shop.orders","replyAddress":"r",
//!                  "body":{"id":7,"quantity":2}}"#;
//! client.write_all(&(frame.len() as u32).to_be_bytes()).await?;
//! client.write_all(frame).await?;
//! let mut reply = vec![0; client.read_u32().await? as usize];
//! client.read_exact(&mut reply).await?;
//! let reply: serde_json::Value = serde_json::from_slice(&reply)?;
//! assert_eq!(
//!     reply,
//!     serde_json::json!({"type": "message", "address": "r", "headers": {},
//!                        "body": "order 7 taken", "send": true})
//! );
//! # server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # SockJS
//!
//! [`Bridge::listen_sockjs`] serves the same frames to browsers: the
//! SockJS bridge of vertx-web 3.9.4 at `/eventbus` (its info, SockJS over
//! WebSocket, the raw WebSocket), for Vert.x's JavaScript clients, in that
//! bridge's dialect (`rec` messages, `err` frames with a `body`). See
//! [`SockJsOptions`].
//!
//! # Limits
//!
//! Per connection: the frame size, the registrations, the requests waiting
//! in each direction, the frames waiting to be written (a client that does
//! not read is closed) and the silence allowed (clients `ping`); per
//! bridge, the connections. See [`BridgeOptions`].
#![cfg_attr(docsrs, doc(cfg(feature = "bridge")))]

mod answer;
mod budget;
mod carry;
mod client;
mod conn;
mod error;
mod events;
mod json;
mod options;
mod peer;
mod permit;
mod server;
mod sockjs;
mod tls;
mod transport;
mod vocab;

/// The reading of a client's frame and the transcoding of bodies, for the
/// fuzz target `bridge_frame` in `fuzz/`: panics on what must not happen
/// (a transcoded body that does not come back as the JSON it was, JSON
/// written that does not parse, a body parsed as its frame is read that
/// is not the one parsed from its text). Compiled only under `--cfg
/// fuzzing`.
#[cfg(fuzzing)]
pub(crate) fn fuzz_frame(bytes: &[u8]) {
    if let Ok(frame) = vocab::Incoming::parse(bytes) {
        let _ = frame.headers();
        let _ = vocab::Member::of(frame.address).text();
        let body = frame.body();
        let read = vocab::Incoming::parse_with(bytes, &|_| true)
            .ok()
            .expect("a frame read raw is read with its body parsed");
        if let Some(value) = read.value {
            let parsed = codecbus_json::JsValue::parse(&body).expect("the body parsed once");
            assert_eq!(value, parsed, "the body parsed as read differs: {body}");
        }
        if let Ok(msgpack) = json::to_msgpack(&body) {
            let text = json::to_json_string(&msgpack).expect("MessagePack from JSON goes back");
            let again: serde_json::Value =
                serde_json::from_str(&text).expect("written JSON parses");
            let first: serde_json::Value =
                serde_json::from_str(&body).expect("the body parsed once");
            assert_eq!(
                again, first,
                "the body came back otherwise: {body} -> {text}"
            );
        }
    }
    // The bytes as MessagePack: JSON written from them parses.
    if let Ok(text) = json::to_json_string(bytes) {
        serde_json::from_str::<serde_json::Value>(&text).expect("written JSON parses");
    }
}

pub use self::client::{
    BridgeClient, BridgeClientError, BridgeClientOptions, BridgeConsumer, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_RECONNECT_DELAY, DEFAULT_PING_INTERVAL, DEFAULT_PING_TIMEOUT,
    DEFAULT_RECONNECT_DELAY,
};
pub use self::error::BridgeError;
pub use self::events::{BridgeConnection, BridgeEvent, BridgeEventType, Verdict};
pub use self::options::{
    BridgeOptions, DEFAULT_BRIDGE_BUDGET, DEFAULT_CONNECTION_BUDGET, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_ADDRESS_LENGTH, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_FRAME,
    DEFAULT_MAX_PENDING_REPLIES, DEFAULT_MAX_REGISTRATIONS, DEFAULT_REPLY_TIMEOUT,
    DEFAULT_WRITE_TIMEOUT,
};
pub use self::permit::PermittedOptions;
pub use self::server::{Bridge, BridgeServer};
pub use self::sockjs::{DEFAULT_HEARTBEAT_INTERVAL, SockJsOptions};
pub use self::tls::{BridgeClientTls, BridgeTls};
