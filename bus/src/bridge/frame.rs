//! The TCP bridge's frames: four bytes of big-endian length, then that
//! many bytes of UTF-8 JSON, one object per frame. Reading is cancel-safe
//! (what arrived stays in the reader's buffer), so a connection may wait
//! for a frame and for other things at once.

use bytes::{Buf, BytesMut};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::base::headers::Headers;

/// What reading the next frame gave.
pub(crate) enum Read {
    /// A whole frame's bytes.
    Frame(BytesMut),
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
                    return Ok(Read::Frame(self.buf.split_to(len)));
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

/// `json` as a frame's bytes.
pub(crate) fn encode(json: &Value) -> Vec<u8> {
    let text = json.to_string();
    let mut out = Vec::with_capacity(4 + text.len());
    // A frame we write is far below 4 GiB (its body came within limits).
    out.extend_from_slice(&u32::try_from(text.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(text.as_bytes());
    out
}

/// A `pong`.
pub(crate) fn pong() -> Value {
    json!({"type": "pong"})
}

/// An `err` frame with `message` alone (Vert.x: refusals and malformed
/// frames).
pub(crate) fn err(message: &str) -> Value {
    json!({"type": "err", "message": message})
}

/// An `err` frame with a `detail` member saying why (beyond Vert.x's
/// frame, which clients ignore).
pub(crate) fn err_detail(message: &str, detail: &str) -> Value {
    json!({"type": "err", "message": message, "detail": detail})
}

/// The `err` frame of a failed request: at the client's reply address,
/// naming the address it was sent to.
pub(crate) fn failure(
    reply_address: &str,
    source: &str,
    code: i32,
    failure_type: &str,
    message: &str,
) -> Value {
    json!({
        "type": "err",
        "address": reply_address,
        "sourceAddress": source,
        "failureCode": code,
        "failureType": failure_type,
        "message": message,
    })
}

/// A `message` frame. `headers` is always present (`{}` when empty) and
/// `body` absent when null, as Vert.x writes them.
pub(crate) fn message(
    address: &str,
    reply_address: Option<&str>,
    headers: &Headers,
    body: Value,
    send: bool,
) -> Value {
    let mut frame = Map::new();
    frame.insert("type".into(), "message".into());
    frame.insert("address".into(), address.into());
    if let Some(reply) = reply_address {
        frame.insert("replyAddress".into(), reply.into());
    }
    let mut names = Map::new();
    for (name, value) in headers.iter() {
        // As Vert.x: one value per name in the frame, the last one.
        names.insert(name.into(), value.into());
    }
    frame.insert("headers".into(), Value::Object(names));
    if !body.is_null() {
        frame.insert("body".into(), body);
    }
    frame.insert("send".into(), send.into());
    Value::Object(frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn frames_in_pieces_and_over_the_limit() {
        let mut bytes = encode(&json!({"type": "ping"}));
        bytes.extend(encode(&json!({"type": "send", "address": "a"})));
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
        let mut cut = &encode(&json!({"type": "ping"}))[..5];
        assert!(matches!(
            FrameReader::new(64).next(&mut cut).await.unwrap(),
            Read::Closed
        ));
    }

    #[test]
    fn message_frames_as_vertx_writes_them() {
        let mut headers = Headers::new();
        headers.insert("k", "v");
        assert_eq!(
            message("a", Some("r"), &headers, json!({"x": 1}), true),
            json!({"type": "message", "address": "a", "replyAddress": "r",
                   "headers": {"k": "v"}, "body": {"x": 1}, "send": true})
        );
        assert_eq!(
            message("a", None, &Headers::new(), Value::Null, false),
            json!({"type": "message", "address": "a", "headers": {}, "send": false})
        );
    }
}
