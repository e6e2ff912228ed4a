//! The bridge's transports, each behind one contract: a [`Source`] of the
//! peer's frames and a [`Sink`] for ours, one frame being the JSON text of
//! one bridge frame whatever carries it. A connection (`peer.rs`, both
//! ends of the bridge) reads a source and writes a sink and knows nothing
//! else of its transport, so a new transport is a file here.
//!
//! * [`tcp`]: Vert.x's TCP bridge framing, four bytes of length then the
//!   JSON, over any byte stream (plain TCP or TLS);
//! * [`websocket`]: SockJS over a WebSocket, and the raw WebSocket, one
//!   frame per message;
//! * [`polling`]: SockJS over plain HTTP (xhr-polling, xhr-streaming,
//!   eventsource, htmlfile, jsonp), a session across requests.

pub(crate) mod polling;
pub(crate) mod tcp;
pub(crate) mod websocket;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use crate::bridge::budget::{Budget, Charge};
use crate::bridge::vocab::Outgoing;

/// What reading the next frame gave.
pub(crate) enum Read {
    /// A whole frame's bytes, held against the connection's budget.
    Frame(Bytes, Charge),
    /// The next frame, which holds this many bytes (`frame_cost`), does not
    /// fit in the budget now: nothing of it is read until it does
    /// (`Budget::room_for`).
    Wait(usize),
    /// The peer closed the connection (between frames or in one).
    Closed,
    /// A frame over the limit, of this many bytes, which the transport
    /// cannot skip: the connection ends.
    TooLarge(usize),
    /// A frame over the limit, of this many bytes, skipped without being
    /// held: the connection goes on with the next one.
    Skipped(usize),
}

/// A transport's incoming side: the peer's frames, each one JSON text.
pub(crate) trait Source: Send {
    /// The next frame, its bytes held against `budget`: admitted before
    /// they are read where the transport announces a frame's length (TCP),
    /// charged once read otherwise. Cancel-safe: a frame is never lost to
    /// a `select!`.
    fn next(&mut self, budget: &Arc<Budget>) -> impl Future<Output = Read> + Send;
}

/// A transport's outgoing side: frames to the peer, each one JSON text,
/// and the transport's own keep-alive and close. Frames are fed, then
/// flushed together: a burst of answers leaves in one write.
pub(crate) trait Sink: Send + 'static {
    /// Queues one frame, to be written by the next flush.
    fn feed(&mut self, frame: Outgoing);

    /// Writes the frames queued.
    fn flush(&mut self) -> impl Future<Output = std::io::Result<()>> + Send;

    /// How often the transport beats when nothing else is written
    /// (SockJS's heartbeat); `None` for no beat.
    fn heartbeat(&self) -> Option<Duration> {
        None
    }

    /// Writes one beat.
    fn beat(&mut self) -> impl Future<Output = std::io::Result<()>> + Send {
        std::future::ready(Ok(()))
    }

    /// Ends the connection's writing side, as the transport closes.
    fn close(&mut self) -> impl Future<Output = ()> + Send;
}
