//! SockJS over a WebSocket (`{prefix}/{server}/{session}/websocket`): the
//! bridge writes `o` on open, `a["<frame>"]` for each frame, `h` every
//! heartbeat interval of silence and `c[3000,"Go away!"]` before it closes;
//! the client writes JSON arrays of frames, each frame a JSON string. And
//! the raw WebSocket (`{prefix}/websocket`): one frame per message, the
//! bridge's in binary messages, as Vert.x writes them.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt as _, StreamExt as _};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio::time::timeout;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{self, Message};

use crate::bridge::budget::{Budget, frame_cost};
use crate::bridge::json;
use crate::bridge::transport::{Read, Sink, Source};
use crate::bridge::vocab::Outgoing;

/// How frames ride the WebSocket.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Framing {
    /// SockJS's framing, with its heartbeat interval.
    SockJs(Duration),
    /// One frame per message.
    Raw,
}

type Ws = WebSocketStream<TokioIo<Upgraded>>;

/// An upgraded connection as a frame source and sink, SockJS's `o` written
/// (within `write_timeout`); `None` when it could not be.
pub(crate) async fn open(
    upgraded: Upgraded,
    framing: Framing,
    max_frame: usize,
    write_timeout: Duration,
) -> Option<(WsSource, WsSink)> {
    // A SockJS message carries several frames, each escaped: room for
    // some, each still held to the frame limit.
    let max = max_frame.saturating_mul(2).saturating_add(1024);
    let config = WebSocketConfig::default()
        .max_message_size(Some(max))
        .max_frame_size(Some(max));
    let ws =
        WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config)).await;
    let (mut tx, rx) = ws.split();
    if matches!(framing, Framing::SockJs(_)) {
        let opened = timeout(write_timeout, tx.send(Message::text("o"))).await;
        if !matches!(opened, Ok(Ok(()))) {
            return None;
        }
    }
    let malformed = Arc::new(AtomicBool::new(false));
    let source = WsSource {
        rx,
        queue: VecDeque::new(),
        framing,
        max_frame,
        malformed: Arc::clone(&malformed),
    };
    let sink = WsSink {
        tx,
        queued: Vec::new(),
        framing,
        malformed,
    };
    Some((source, sink))
}

/// The client's side of a WebSocket connection: its messages, as frames.
pub(crate) struct WsSource {
    rx: SplitStream<Ws>,
    /// Frames of a SockJS message not handled yet.
    queue: VecDeque<String>,
    framing: Framing,
    max_frame: usize,
    /// Set when a message was not SockJS's: the session ends without its
    /// close frame.
    malformed: Arc<AtomicBool>,
}

impl Source for WsSource {
    async fn next(&mut self, budget: &Arc<Budget>) -> Read {
        loop {
            if let Some(frame) = self.queue.pop_front() {
                if frame.len() > self.max_frame {
                    return Read::Skipped(frame.len());
                }
                // A WebSocket message is read whole: its frames are
                // charged once they are.
                let charge = budget.charge(frame_cost(frame.len()));
                return Read::Frame(Bytes::from(frame), charge);
            }
            // Cancel-safe: a message is taken whole, then queued.
            let payload = match self.rx.next().await {
                Some(Ok(Message::Text(text))) => Bytes::from(text),
                Some(Ok(Message::Binary(bytes))) => bytes,
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                Some(Err(tungstenite::Error::Capacity(
                    tungstenite::error::CapacityError::MessageTooLong { size, .. },
                ))) => return Read::TooLarge(size),
                Some(Ok(Message::Close(_)) | Err(_)) | None => return Read::Closed,
            };
            match self.framing {
                Framing::Raw if payload.len() > self.max_frame => {
                    return Read::Skipped(payload.len());
                }
                Framing::Raw => {
                    let charge = budget.charge(frame_cost(payload.len()));
                    return Read::Frame(payload, charge);
                }
                Framing::SockJs(_) => {
                    // A JSON array of strings, each a frame; anything else
                    // ends the session, as Vert.x ends it (no close frame).
                    match serde_json::from_slice::<Vec<String>>(&payload) {
                        Ok(frames) => self.queue.extend(frames),
                        Err(_) => {
                            self.malformed.store(true, Ordering::Relaxed);
                            return Read::Closed;
                        }
                    }
                }
            }
        }
    }
}

/// The bridge's side of a WebSocket connection.
pub(crate) struct WsSink {
    tx: SplitSink<Ws, Message>,
    /// The messages fed since the last flush.
    queued: Vec<Message>,
    framing: Framing,
    malformed: Arc<AtomicBool>,
}

fn ws_error(e: tungstenite::Error) -> std::io::Error {
    std::io::Error::other(e)
}

/// A SockJS `a` message of one frame: `a`, then a JSON array of the
/// frame's text as a string.
pub(crate) fn sockjs_message(frame: &Outgoing) -> String {
    let text = frame.text();
    let mut sockjs = Vec::with_capacity(text.len() + text.len() / 8 + 8);
    sockjs.extend_from_slice(b"a[");
    json::write_scalar(&mut sockjs, text);
    sockjs.push(b']');
    String::from_utf8(sockjs).unwrap_or_default()
}

impl Sink for WsSink {
    fn feed(&mut self, frame: Outgoing) {
        let message = match self.framing {
            Framing::SockJs(_) => Message::text(sockjs_message(&frame)),
            Framing::Raw => Message::binary(frame.json().to_vec()),
        };
        self.queued.push(message);
    }

    async fn flush(&mut self) -> std::io::Result<()> {
        for message in self.queued.drain(..) {
            self.tx.feed(message).await.map_err(ws_error)?;
        }
        self.tx.flush().await.map_err(ws_error)
    }

    fn heartbeat(&self) -> Option<Duration> {
        match self.framing {
            Framing::SockJs(every) => Some(every),
            Framing::Raw => None,
        }
    }

    async fn beat(&mut self) -> std::io::Result<()> {
        self.tx.send(Message::text("h")).await.map_err(ws_error)
    }

    async fn close(&mut self) {
        if matches!(self.framing, Framing::SockJs(_)) && !self.malformed.load(Ordering::Relaxed) {
            let _ = self.tx.send(Message::text(r#"c[3000,"Go away!"]"#)).await;
        }
        let _ = self
            .tx
            .send(Message::Close(Some(CloseFrame {
                code: CloseCode::Normal,
                reason: "".into(),
            })))
            .await;
        let _ = self.tx.close().await;
    }
}
