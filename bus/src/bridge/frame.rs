//! The bridge's frames. On TCP: four bytes of big-endian length, then that
//! many bytes of UTF-8 JSON, one object per frame. Reading is cancel-safe
//! (what arrived stays in the reader's buffer), so a connection may wait
//! for a frame and for other things at once. The JSON of the frames the
//! bridge writes, in the dialect of each transport ([`Dialect`]).

use bytes::{Buf, Bytes, BytesMut};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use crate::base::headers::Headers;

/// What reading the next frame gave.
pub(crate) enum Read {
    /// A whole frame's bytes.
    Frame(Bytes),
    /// The client closed the connection (between frames or in one).
    Closed,
    /// The next frame announces more than the limit.
    TooLarge(usize),
}

/// Reads frames off a connection, at most `max` bytes each.
pub(crate) struct FrameReader {
    buf: BytesMut,
    max: usize,
}

impl FrameReader {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            buf: BytesMut::with_capacity(4096.min(max + 4)),
            max,
        }
    }

    /// The next frame. Cancel-safe.
    pub(crate) async fn next<R: AsyncRead + Unpin>(&mut self, rd: &mut R) -> std::io::Result<Read> {
        loop {
            if let Some(head) = self.buf.get(..4) {
                let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
                if len > self.max {
                    return Ok(Read::TooLarge(len));
                }
                if self.buf.len() >= 4 + len {
                    self.buf.advance(4);
                    return Ok(Read::Frame(self.buf.split_to(len).freeze()));
                }
                self.buf.reserve(4 + len - self.buf.len());
            } else {
                self.buf.reserve(4);
            }
            if rd.read_buf(&mut self.buf).await? == 0 {
                return Ok(Read::Closed);
            }
        }
    }
}

/// `text` (a frame's JSON) as a TCP frame's bytes.
pub(crate) fn encode(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + text.len());
    // A frame we write is far below 4 GiB (its body came within limits).
    out.extend_from_slice(&u32::try_from(text.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(text.as_bytes());
    out
}

/// A transport's incoming side: the client's frames, each one JSON text.
pub(crate) trait Source: Send {
    /// The next frame. Cancel-safe: a frame is never lost to a `select!`.
    fn next(&mut self) -> impl Future<Output = Read> + Send;
}

/// A transport's outgoing side: frames to the client, each one JSON text,
/// and the transport's own keep-alive and close.
pub(crate) trait Sink: Send + 'static {
    /// Writes one frame.
    fn write(&mut self, frame: String) -> impl Future<Output = std::io::Result<()>> + Send;

    /// How often the transport beats when nothing else is written
    /// (SockJS's heartbeat); `None` for no beat.
    fn heartbeat(&self) -> Option<std::time::Duration> {
        None
    }

    /// Writes one beat.
    fn beat(&mut self) -> impl Future<Output = std::io::Result<()>> + Send {
        std::future::ready(Ok(()))
    }

    /// Ends the connection's writing side, as the transport closes.
    fn close(&mut self) -> impl Future<Output = ()> + Send;
}

/// The TCP bridge's side of a connection: frames read off the socket.
pub(crate) struct TcpSource {
    reader: FrameReader,
    rd: OwnedReadHalf,
}

/// The TCP bridge's side of a connection: frames written to the socket.
pub(crate) struct TcpSink {
    wr: OwnedWriteHalf,
}

/// A TCP client's connection as a frame source and sink.
pub(crate) fn tcp(stream: TcpStream, max_frame: usize) -> (TcpSource, TcpSink) {
    let _ = stream.set_nodelay(true);
    let (rd, wr) = stream.into_split();
    (
        TcpSource {
            reader: FrameReader::new(max_frame),
            rd,
        },
        TcpSink { wr },
    )
}

impl Source for TcpSource {
    async fn next(&mut self) -> Read {
        match self.reader.next(&mut self.rd).await {
            Ok(read) => read,
            Err(_) => Read::Closed,
        }
    }
}

impl Sink for TcpSink {
    async fn write(&mut self, frame: String) -> std::io::Result<()> {
        self.wr.write_all(&encode(&frame)).await
    }

    async fn close(&mut self) {
        let _ = self.wr.shutdown().await;
    }
}

/// The frames of one transport: the TCP bridge's (Vert.x's
/// `TcpEventBusBridge`) or the SockJS bridge's (vertx-web's
/// `SockJSHandler.bridge`), which name and fill some of them otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Tcp,
    SockJs,
}

impl Dialect {
    /// The answer to a `ping`: `pong` on TCP, nothing on SockJS (a ping
    /// only keeps the connection open there).
    pub(crate) fn pong(self) -> Option<Value> {
        match self {
            Dialect::Tcp => Some(json!({"type": "pong"})),
            Dialect::SockJs => None,
        }
    }

    /// An `err` frame saying `message` alone (Vert.x: refusals and
    /// malformed frames): in `message` on TCP, in `body` on SockJS.
    pub(crate) fn err(self, message: &str) -> Value {
        match self {
            Dialect::Tcp => json!({"type": "err", "message": message}),
            Dialect::SockJs => json!({"type": "err", "body": message}),
        }
    }

    /// An `err` frame with a `detail` member saying why (beyond Vert.x's
    /// frame, which clients ignore).
    pub(crate) fn err_detail(self, message: &str, detail: &str) -> Value {
        let mut frame = self.err(message);
        if let Some(map) = frame.as_object_mut() {
            map.insert("detail".into(), detail.into());
        }
        frame
    }

    /// The `message` of an `err` frame for a frame of an unknown type.
    pub(crate) fn unknown_type(self) -> &'static str {
        match self {
            Dialect::Tcp => "unknown_type",
            Dialect::SockJs => "invalid_type",
        }
    }

    /// The answers to a frame without an address: two frames on TCP (as
    /// Vert.x 3.9.4 writes them), one on SockJS.
    pub(crate) fn missing_address(self) -> Vec<Value> {
        match self {
            Dialect::Tcp => vec![self.err("missing_address"), self.err("address_required")],
            Dialect::SockJs => vec![self.err("missing_address")],
        }
    }

    /// The answer to an `unregister` of an address not registered: an
    /// `err` frame on TCP, nothing on SockJS.
    pub(crate) fn unknown_address(self) -> Option<Value> {
        match self {
            Dialect::Tcp => Some(self.err("unknown_address")),
            Dialect::SockJs => None,
        }
    }

    /// The `err` frame of a failed request: at the client's reply address,
    /// naming the address it was sent to on TCP.
    pub(crate) fn failure(
        self,
        reply_address: &str,
        source: &str,
        code: i32,
        failure_type: &str,
        message: &str,
    ) -> Value {
        let mut frame = json!({
            "type": "err",
            "address": reply_address,
            "failureCode": code,
            "failureType": failure_type,
            "message": message,
        });
        if let (Dialect::Tcp, Some(map)) = (self, frame.as_object_mut()) {
            map.insert("sourceAddress".into(), source.into());
        }
        frame
    }

    /// A message for the client. On TCP a `message` frame: `headers`
    /// always present (`{}` when empty), `body` absent when null, and
    /// `send`; on SockJS a `rec` frame: `headers` only when there are
    /// some, `body` always, no `send`. As Vert.x writes them.
    pub(crate) fn message(
        self,
        address: &str,
        reply_address: Option<&str>,
        headers: &Headers,
        body: Value,
        send: bool,
    ) -> Value {
        let mut frame = Map::new();
        let kind = match self {
            Dialect::Tcp => "message",
            Dialect::SockJs => "rec",
        };
        frame.insert("type".into(), kind.into());
        frame.insert("address".into(), address.into());
        if let Some(reply) = reply_address {
            frame.insert("replyAddress".into(), reply.into());
        }
        let mut names = Map::new();
        for (name, value) in headers.iter() {
            // As Vert.x: one value per name in the frame, the last one.
            names.insert(name.into(), value.into());
        }
        if self == Dialect::Tcp || !names.is_empty() {
            frame.insert("headers".into(), Value::Object(names));
        }
        if self == Dialect::SockJs || !body.is_null() {
            frame.insert("body".into(), body);
        }
        if self == Dialect::Tcp {
            frame.insert("send".into(), send.into());
        }
        Value::Object(frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn frames_in_pieces_and_over_the_limit() {
        let mut bytes = encode(&json!({"type": "ping"}).to_string());
        bytes.extend(encode(&json!({"type": "send", "address": "a"}).to_string()));
        bytes.extend_from_slice(&100u32.to_be_bytes());
        let mut reader = FrameReader::new(64);
        let mut input = &bytes[..];
        let mut frames = Vec::new();
        loop {
            match reader.next(&mut input).await.unwrap() {
                Read::Frame(f) => frames.push(serde_json::from_slice::<Value>(&f).unwrap()),
                Read::TooLarge(n) => {
                    assert_eq!(n, 100);
                    break;
                }
                Read::Closed => panic!("closed before the large frame"),
            }
        }
        assert_eq!(frames[0], json!({"type": "ping"}));
        assert_eq!(frames[1]["address"], "a");
        let mut cut = &encode(&json!({"type": "ping"}).to_string())[..5];
        assert!(matches!(
            FrameReader::new(64).next(&mut cut).await.unwrap(),
            Read::Closed
        ));
    }

    #[test]
    fn message_frames_as_vertx_writes_them() {
        let mut headers = Headers::new();
        headers.insert("k", "v");
        let tcp = Dialect::Tcp;
        assert_eq!(
            tcp.message("a", Some("r"), &headers, json!({"x": 1}), true),
            json!({"type": "message", "address": "a", "replyAddress": "r",
                   "headers": {"k": "v"}, "body": {"x": 1}, "send": true})
        );
        assert_eq!(
            tcp.message("a", None, &Headers::new(), Value::Null, false),
            json!({"type": "message", "address": "a", "headers": {}, "send": false})
        );
        let sockjs = Dialect::SockJs;
        assert_eq!(
            sockjs.message("a", Some("r"), &headers, json!({"x": 1}), true),
            json!({"type": "rec", "address": "a", "replyAddress": "r",
                   "headers": {"k": "v"}, "body": {"x": 1}})
        );
        assert_eq!(
            sockjs.message("a", None, &Headers::new(), Value::Null, false),
            json!({"type": "rec", "address": "a", "body": null})
        );
        assert_eq!(
            sockjs.err("access_denied"),
            json!({"type": "err", "body": "access_denied"})
        );
        assert_eq!(
            sockjs.failure("r", "fail", 42, "RECIPIENT_FAILURE", "it failed"),
            json!({"type": "err", "address": "r", "failureCode": 42,
                   "failureType": "RECIPIENT_FAILURE", "message": "it failed"})
        );
    }
}
