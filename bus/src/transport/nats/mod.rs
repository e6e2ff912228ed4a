// The NATS cluster transport (`book/src/wire.md` is the wire
// contract; `wire.rs` holds its names). What every cluster transport does
// alike (frames, decoding by codec name, delivery, answers) is
// `transport/cluster/`; this folder carries frames over NATS. One file per
// job, top to bottom: `transport` (the `RemoteTransport` impl) →
// `control` (the control task) → `readers` (one task per subscribed
// address) and `durable` (the durable readers) → `link` (the connection
// and all it does: the one outbound path for core and durable messages,
// the answers to NATS reply subjects) → `connect` (connecting) →
// `options`, `refusals` (publishes the server refused), `wire`; `tap`
// watches addresses' traffic through `connect` and `wire` (`codecbus tap`);
// `shapes` tells the cluster this node's codec shapes and learns the others'.
//
// Contract:
// * One NATS connection per bus. Outbound messages are encoded once with
//   the registry entry of their type (`Outbound::codec`) and published:
//   `send` / `request` to `{prefix}.s.{address}`, `publish` to
//   `{prefix}.p.{address}`.
// * For every address with at least one exported consumer on this node, a
//   reader task holds two subscriptions: a plain one on the publish
//   subject (every node receives each publish once and fans it out
//   locally) and a queue subscription (group `{prefix}`) on the send
//   subject (exactly one node gets each send or request). The reader
//   decodes by codec name and delivers with `Scope::Exported`, so local-only
//   consumers never see remote traffic; replies to requests are awaited in
//   the reader (a `FuturesUnordered`, no task per request) and published to
//   the NATS reply subject.
// * A conversation (`reply_and_request`) is a chain of NATS requests: a
//   reply that expects an answer is published as a request to the other
//   side's reply subject, and the reply carrying a NATS reply subject is
//   handed to the requester with a reply channel whose answer a spawned
//   task publishes there (`answer` on both sides).
// * A control task owns the readers and processes, in order,
//   `Sync(address)` (reconcile the subscription with the local table:
//   subscribe when the address has an exported consumer, unsubscribe when
//   not; reconciling makes racing register/unregister calls harmless),
//   `Flush` and `Close`. When the transport is dropped (the last bus handle
//   and consumer are gone) its channel closes and the control task stops
//   every reader.
// * Readers and the control task hold the bus weakly; a pending reply holds
//   it strongly until it is sent, a conversation turn until its answer came
//   (at most the replier's timeout). A task answering a turn holds the
//   connection as long as the requester keeps the message.
// * Durable addresses (feature `jetstream`): `jetstream` creates or checks
//   their streams and consumers at connect; `durable` stores their sends
//   and publishes (server-acknowledged) and runs, next to an address's
//   reader, the pull readers that deliver with an acknowledgement cell
//   and ack, nak or dead-letter by the handler's outcome; `durable_options`
//   is their public settings.

mod connect;
mod control;
#[cfg(feature = "jetstream")]
mod durable;
#[cfg(feature = "jetstream")]
mod durable_options;
#[cfg(feature = "jetstream")]
mod jetstream;
mod link;
mod options;
mod readers;
mod refusals;
mod shapes;
mod tap;
mod transport;
mod wire;

pub(crate) use self::connect::{Connected, connect};
#[cfg(feature = "jetstream")]
#[cfg_attr(docsrs, doc(cfg(feature = "jetstream")))]
pub use self::durable_options::{
    DEAD_LETTER_ADDRESS_HEADER, DEAD_LETTER_DELIVERIES_HEADER, DEAD_LETTER_REASON_HEADER,
    DEFAULT_MAX_AGE, DEFAULT_STORE_TIMEOUT, DurableOptions, MESSAGE_ID_HEADER, Retention,
};
pub use self::options::{DEFAULT_SUBJECT_PREFIX, NatsEvent, NatsOptions};
pub use self::tap::{Tap, TapKind, Tapped};
pub(crate) use self::transport::NatsTransport;
