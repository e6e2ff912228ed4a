//! The TCP bridge's framing: four bytes of big-endian length, then that
//! many bytes of UTF-8 JSON, one object per frame, over any byte stream (a
//! TCP socket, TLS over one). Reading is cancel-safe (what arrived stays in
//! the reader's buffer), and a frame over the limit is skipped as it
//! arrives, never held. A frame is admitted into the connection's budget
//! once its length is known and before its bytes are read; beyond the
//! frame being read, the reader reads at most [`READ_AHEAD`] bytes ahead
//! (several small frames in one read), so what it holds unaccounted is
//! bounded.

use std::sync::Arc;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use crate::bridge::budget::{Budget, Charge, frame_cost};
use crate::bridge::transport::{Read, Sink, Source};
use crate::bridge::vocab::Outgoing;

/// How many bytes the reader reads ahead of the frame it was admitted
/// for: the small frames that follow it, taken in the same read.
const READ_AHEAD: usize = 64 * 1024;

/// The least the read buffer grows by when it must (it doubles beyond).
const READ_GROWTH: usize = 4096;

/// Reads frames off a connection, at most `max` bytes each.
pub(crate) struct FrameReader {
    buf: BytesMut,
    max: usize,
    /// Bytes of a frame over the limit still to be passed over.
    skip: usize,
    /// The frame being read, admitted into the budget.
    admitted: Option<Charge>,
    /// Whether the last read filled all the room it was given: more was
    /// waiting, and the next read gets a larger buffer.
    filled: bool,
}

impl FrameReader {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            buf: BytesMut::with_capacity(4096.min(max + 4)),
            max,
            skip: 0,
            admitted: None,
            filled: false,
        }
    }

    /// The next frame, admitted into `budget` before its bytes are read.
    /// Cancel-safe.
    pub(crate) async fn next<R: AsyncRead + Unpin>(
        &mut self,
        rd: &mut R,
        budget: &Arc<Budget>,
    ) -> std::io::Result<Read> {
        loop {
            if self.skip > 0 {
                let n = self.skip.min(self.buf.len());
                self.buf.advance(n);
                self.skip -= n;
                if self.skip > 0 {
                    self.buf.clear();
                    if self.fill(rd, READ_AHEAD).await? == 0 {
                        return Ok(Read::Closed);
                    }
                    continue;
                }
            }
            if let Some(head) = self.buf.get(..4) {
                let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
                if len > self.max {
                    self.skip = 4 + len;
                    return Ok(Read::Skipped(len));
                }
                if self.admitted.is_none() {
                    let cost = frame_cost(len);
                    match budget.admit(cost) {
                        Some(charge) => self.admitted = Some(charge),
                        None => return Ok(Read::Wait(cost)),
                    }
                }
                if self.buf.len() >= 4 + len {
                    self.buf.advance(4);
                    let charge = self.admitted.take().unwrap_or_else(|| budget.charge(0));
                    let frame = self.buf.split_to(len).freeze();
                    if len > READ_AHEAD {
                        // What was read ahead moves to a buffer of its own,
                        // so the large frame's memory goes with the frame.
                        self.buf = BytesMut::from(&self.buf[..]);
                    }
                    return Ok(Read::Frame(frame, charge));
                }
                // Room for the whole frame at once, admitted already.
                self.buf.reserve(4 + len - self.buf.len());
                if self.fill(rd, (4 + len).max(READ_AHEAD)).await? == 0 {
                    return Ok(Read::Closed);
                }
            } else if self.fill(rd, READ_AHEAD).await? == 0 {
                return Ok(Read::Closed);
            }
        }
    }

    /// Reads what has arrived, up to `upto` bytes in the buffer in all;
    /// how many bytes came (0: the connection closed). The buffer grows a
    /// little at a time for what is read ahead, so an idle connection
    /// holds a small one, and doubles while reads fill it (up to the
    /// read-ahead): a busy connection's bursts then take a read, not a
    /// read per 4 KiB (with 32 requests of 831 bytes in flight on one
    /// connection, 1.02 times the requests per second).
    async fn fill<R: AsyncRead + Unpin>(
        &mut self,
        rd: &mut R,
        upto: usize,
    ) -> std::io::Result<usize> {
        let room = upto.saturating_sub(self.buf.len()).max(1);
        let spare = self.buf.capacity() - self.buf.len();
        if spare < room.min(READ_GROWTH) || (self.filled && spare < room) {
            self.buf
                .reserve(room.min(READ_GROWTH.max(self.buf.capacity())));
        }
        let offered = room.min(self.buf.capacity() - self.buf.len());
        let n = (&mut *rd).take(room as u64).read_buf(&mut self.buf).await?;
        self.filled = n == offered;
        Ok(n)
    }
}

/// The reading side of a framed connection.
pub(crate) struct TcpSource<R> {
    reader: FrameReader,
    rd: R,
}

/// The writing side of a framed connection.
pub(crate) struct TcpSink<W> {
    wr: W,
    /// The frames fed since the last flush, each with its length.
    queued: Vec<u8>,
}

/// A TCP connection as a frame source and sink.
pub(crate) fn tcp(
    stream: TcpStream,
    max_frame: usize,
) -> (TcpSource<OwnedReadHalf>, TcpSink<OwnedWriteHalf>) {
    let _ = stream.set_nodelay(true);
    let (rd, wr) = stream.into_split();
    halves(rd, wr, max_frame)
}

/// Any byte stream (TLS over TCP) as a frame source and sink.
pub(crate) fn framed<S>(
    stream: S,
    max_frame: usize,
) -> (
    TcpSource<tokio::io::ReadHalf<S>>,
    TcpSink<tokio::io::WriteHalf<S>>,
)
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (rd, wr) = tokio::io::split(stream);
    halves(rd, wr, max_frame)
}

fn halves<R, W>(rd: R, wr: W, max_frame: usize) -> (TcpSource<R>, TcpSink<W>) {
    (
        TcpSource {
            reader: FrameReader::new(max_frame),
            rd,
        },
        TcpSink {
            wr,
            queued: Vec::new(),
        },
    )
}

impl<R: AsyncRead + Unpin + Send> Source for TcpSource<R> {
    async fn next(&mut self, budget: &Arc<Budget>) -> Read {
        match self.reader.next(&mut self.rd, budget).await {
            Ok(read) => read,
            Err(_) => Read::Closed,
        }
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> Sink for TcpSink<W> {
    fn feed(&mut self, frame: Outgoing) {
        if self.queued.is_empty() {
            self.queued = frame.into_tcp();
        } else {
            self.queued.extend_from_slice(&frame.into_tcp());
        }
    }

    async fn flush(&mut self) -> std::io::Result<()> {
        let written = self.wr.write_all(&self.queued).await;
        self.queued.clear();
        written?;
        self.wr.flush().await
    }

    async fn close(&mut self) {
        let _ = self.wr.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::bridge::budget::Pool;

    #[tokio::test(flavor = "current_thread")]
    async fn frames_in_pieces_and_over_the_limit_skipped() {
        let mut bytes = Outgoing::of(&json!({"type": "ping"})).into_tcp();
        bytes.extend(Outgoing::of(&json!({"type": "send", "address": "a"})).into_tcp());
        bytes.extend_from_slice(&100u32.to_be_bytes());
        bytes.extend_from_slice(&[b'x'; 100]);
        bytes.extend(Outgoing::of(&json!({"type": "after"})).into_tcp());
        let budget = Budget::new(usize::MAX, &Pool::new(usize::MAX));
        let mut reader = FrameReader::new(64);
        let mut input = &bytes[..];
        let mut frames = Vec::new();
        loop {
            match reader.next(&mut input, &budget).await.unwrap() {
                Read::Frame(f, _) => frames.push(serde_json::from_slice::<Value>(&f).unwrap()),
                Read::Wait(_) => panic!("an endless budget"),
                Read::Skipped(n) => {
                    assert_eq!(n, 100);
                    frames.push(json!("skipped"));
                }
                Read::TooLarge(_) => panic!("a TCP frame is skipped"),
                Read::Closed => break,
            }
        }
        assert_eq!(
            frames,
            [
                json!({"type": "ping"}),
                json!({"type": "send", "address": "a"}),
                json!("skipped"),
                json!({"type": "after"}),
            ]
        );
        let mut cut = &Outgoing::of(&json!({"type": "ping"})).into_tcp()[..5];
        assert!(matches!(
            FrameReader::new(64).next(&mut cut, &budget).await.unwrap(),
            Read::Closed
        ));
    }

    /// A byte stream that gives at most `at_once` bytes a read.
    struct Trickle<'a> {
        bytes: &'a [u8],
        at_once: usize,
    }

    impl AsyncRead for Trickle<'_> {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let n = self.at_once.min(self.bytes.len()).min(buf.remaining());
            buf.put_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn the_buffer_grows_while_reads_fill_it() {
        let mut bytes = Vec::new();
        for n in 0..100 {
            bytes.extend(Outgoing::of(&json!({"n": n, "pad": "x".repeat(800)})).into_tcp());
        }
        let budget = Budget::new(usize::MAX, &Pool::new(usize::MAX));
        let read_all = |at_once| {
            let budget = Arc::clone(&budget);
            let bytes = &bytes;
            async move {
                let mut reader = FrameReader::new(1 << 20);
                let mut input = Trickle { bytes, at_once };
                let mut frames = 0;
                while let Read::Frame(..) = reader.next(&mut input, &budget).await.unwrap() {
                    frames += 1;
                }
                (frames, reader.buf.capacity())
            }
        };
        // All of it waiting: reads fill the buffer, which doubles.
        let (frames, capacity) = read_all(usize::MAX).await;
        assert_eq!(frames, 100);
        assert!(capacity >= 4 * 4096, "{capacity}");
        assert!(capacity <= 2 * READ_AHEAD, "{capacity}");
        // A little at a time: the buffer stays small.
        let (frames, capacity) = read_all(1000).await;
        assert_eq!(frames, 100);
        assert!(capacity <= 2 * 4096, "{capacity}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_frame_is_admitted_before_it_is_read() {
        let budget = Budget::new(200, &Pool::new(usize::MAX));
        let mut bytes = Vec::new();
        for _ in 0..2 {
            bytes.extend(Outgoing::of(&json!({"data": "x".repeat(50)})).into_tcp());
        }
        let mut reader = FrameReader::new(1000);
        let mut input = &bytes[..];
        let Read::Frame(first, charge) = reader.next(&mut input, &budget).await.unwrap() else {
            panic!("the first frame fits");
        };
        assert_eq!(budget.used(), frame_cost(first.len()));
        // The second does not fit beside the first, and is not read.
        assert!(matches!(
            reader.next(&mut input, &budget).await.unwrap(),
            Read::Wait(n) if n == frame_cost(first.len())
        ));
        drop(charge);
        assert!(matches!(
            reader.next(&mut input, &budget).await.unwrap(),
            Read::Frame(..)
        ));
    }
}
