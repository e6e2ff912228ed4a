// What every cluster transport does the same way, whatever carries the
// bytes (a NATS server, or the in-memory cluster): a message leaving the
// node becomes a `Frame` (codec name, user headers, the encoded body), and
// a frame arriving for this node's consumers is counted, decoded by the
// codec it names (checked by the consumers' shared guard in the same pass
// where there is one) and delivered with `Scope::Exported`, the first
// consumer getting the decoded allocation and every further one the
// codec's transform of it. A request's answer goes back as a frame too: a
// reply body, or a failure (kind, code, text).
//
// A transport only moves frames: it maps a frame to its own message (NATS
// headers) and back, checks its size limit on `Frame::wire_len`, and
// answers a request with what `deliver_send` returns.
//
// Here: the frame, the wire names, and the outbound side (a message's or a
// reply's frame); `address.rs` an address as it leaves the node (escaped,
// within the bus's length limit); `compress.rs` the LZ4 form of large bodies;
// `inbound.rs` the arrival of a message for this node's consumers;
// `answers.rs` the answers of requests and conversations; `shapes.rs` what
// nodes tell each other of their codecs' shapes when they meet.

mod address;
mod answers;
mod compress;
mod frame;
mod inbound;
mod shapes;

pub(crate) use self::address::*;
pub(crate) use self::answers::*;
pub(crate) use self::frame::*;
// The version a node writes, `NatsOptions::wire_version`'s setting.
#[cfg_attr(not(feature = "nats"), allow(unused_imports, unreachable_pub))]
pub use self::frame::WireVersion;
// The fuzz targets' entry points, re-exported hidden by the crate root.
#[cfg(fuzzing)]
pub use self::frame::{PayloadRead, read_payload, write_payload};
pub(crate) use self::inbound::*;
pub(crate) use self::shapes::*;
