//! SockJS over plain HTTP, as vertx-web 3.9.4 serves it for browsers
//! whose path blocks WebSockets: a session, named by the client in its
//! URLs, whose frames to the client go out on one receiving request at a
//! time (xhr-polling, xhr-streaming, eventsource, htmlfile, jsonp) and
//! whose frames from the client come in on send requests (`xhr_send`,
//! `jsonp_send`). A session is a bridge connection like any other: its
//! [`SessionSource`] and [`SessionSink`] are the transport's side of it.
//!
//! What the client receives is vertx-web's, byte for byte: each SockJS
//! message (`o`, `h`, `a[...]`, `c[...]`) in its transport's wrapping, the
//! transport's prelude first, every character past ASCII escaped, and for
//! jsonp and htmlfile escaped again for a JavaScript string. A streaming
//! response ends after [`MAX_BYTES_STREAMING`] bytes and the client opens
//! the next; a polling one ends after each message. One receiving request
//! at a time: another gets `c[2010,"Another connection still open"]`. A
//! client that drops its receiving request ends the session; so does
//! [`DISCONNECT_DELAY`] without one.

use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use hyper::body::Frame;
use tokio::sync::{Notify, mpsc};
use tokio::time::{Instant, sleep_until};

use crate::bridge::budget::{Budget, Charge, frame_cost};
use crate::bridge::transport::{Read, Sink, Source};
use crate::bridge::vocab::Outgoing;

/// How many bytes a streaming response carries before it ends (the client
/// then opens the next): vertx-web's `maxBytesStreaming`, 128 KiB.
pub(crate) const MAX_BYTES_STREAMING: usize = 128 * 1024;

/// How long a session lives without a receiving request: vertx-web's
/// `sessionTimeout`, 5 s.
pub(crate) const DISCONNECT_DELAY: Duration = Duration::from_secs(5);

/// A receiving transport, with its callback for jsonp and htmlfile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Receiving {
    XhrPolling,
    XhrStreaming,
    EventSource,
    HtmlFile(String),
    Jsonp(String),
}

/// The htmlfile page, around its callback: what vertx-web writes first,
/// then spaces up to 1 KiB (counted without the callback), then `\r\n`.
const HTMLFILE_HEAD: &str = "<!doctype html>\n<html><head>\n  <meta http-equiv=\"X-UA-Compatible\" content=\"IE=edge\" />\n  <meta http-equiv=\"Content-Type\" content=\"text/html; charset=UTF-8\" />\n</head><body><h2>Don't panic!</h2>\n  <script>\n    document.domain = document.domain;\n    var c = parent.";
const HTMLFILE_TAIL: &str = ";\n    c.start();\n    function p(d) {c.message(d);};\n    window.onload = function() {c.stop();};\n  </script>";

impl Receiving {
    /// Whether one response carries several messages.
    pub(crate) fn streaming(&self) -> bool {
        matches!(
            self,
            Receiving::XhrStreaming | Receiving::EventSource | Receiving::HtmlFile(_)
        )
    }

    /// The response's `Content-Type`.
    pub(crate) fn content_type(&self) -> &'static str {
        match self {
            Receiving::XhrPolling | Receiving::XhrStreaming | Receiving::Jsonp(_) => {
                "application/javascript; charset=UTF-8"
            }
            Receiving::EventSource => "text/event-stream",
            Receiving::HtmlFile(_) => "text/html; charset=UTF-8",
        }
    }

    /// What a response starts with, before its first message.
    pub(crate) fn prelude(&self) -> Bytes {
        match self {
            Receiving::XhrStreaming => {
                let mut prelude = vec![b'h'; 2048];
                prelude.push(b'\n');
                Bytes::from(prelude)
            }
            Receiving::EventSource => Bytes::from_static(b"\r\n"),
            Receiving::HtmlFile(callback) => {
                let mut page = String::with_capacity(1100);
                page.push_str(HTMLFILE_HEAD);
                page.push_str(callback);
                page.push_str(HTMLFILE_TAIL);
                let written = HTMLFILE_HEAD.len() + HTMLFILE_TAIL.len();
                page.extend(std::iter::repeat_n(' ', 1024usize.saturating_sub(written)));
                page.push_str("\r\n");
                Bytes::from(page)
            }
            Receiving::XhrPolling | Receiving::Jsonp(_) => Bytes::new(),
        }
    }

    /// One SockJS message (`o`, `h`, `a[...]`, `c[...]`, ASCII) as this
    /// transport sends it.
    pub(crate) fn wrap(&self, message: &str) -> Bytes {
        let text = match self {
            Receiving::XhrPolling | Receiving::XhrStreaming => format!("{message}\n"),
            Receiving::EventSource => format!("data: {message}\r\n\r\n"),
            Receiving::HtmlFile(_) => {
                format!("<script>\np(\"{}\");\n</script>\r\n", js_escape(message))
            }
            Receiving::Jsonp(callback) => {
                format!("/**/{callback}(\"{}\");\r\n", js_escape(message))
            }
        };
        Bytes::from(text)
    }
}

/// A callback name as vertx-web takes it: letters, digits, `_`, `.` and
/// `-`, at most 32 of them for jsonp (`limit`).
pub(crate) fn callback_ok(callback: &str, limit: Option<usize>) -> bool {
    !callback.is_empty()
        && limit.is_none_or(|limit| callback.len() <= limit)
        && callback
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// The SockJS message of frames: `a[` and the frames' texts as JSON
/// strings, every character past ASCII escaped as `\u` and four lowercase
/// hex digits per UTF-16 unit, as vertx-web writes them.
pub(crate) fn array(frames: &[String]) -> String {
    let mut out = String::with_capacity(frames.iter().map(|f| f.len() + 8).sum::<usize>() + 3);
    out.push_str("a[");
    for (i, frame) in frames.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        for c in frame.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 || (c as u32) >= 0x7f => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
    out.push(']');
    out
}

/// A SockJS message escaped for a JavaScript string (jsonp, htmlfile).
fn js_escape(message: &str) -> String {
    let mut out = String::with_capacity(message.len() + message.len() / 4);
    for c in message.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str("\\/"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// The frames of a send request's payload: a JSON array of strings, or one
/// JSON string; `None` when it is neither.
pub(crate) fn payload_frames(payload: &[u8]) -> Option<Vec<String>> {
    let text = std::str::from_utf8(payload).ok()?;
    if text.trim_start().starts_with('[') {
        serde_json::from_str::<Vec<String>>(text).ok()
    } else {
        serde_json::from_str::<String>(text)
            .ok()
            .map(|one| vec![one])
    }
}

/// The sessions of a SockJS bridge, by id.
#[derive(Default)]
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, Arc<Session>>>,
}

impl Sessions {
    fn map(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The session `id`, when it lives.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.map().get(id).cloned()
    }

    /// A new session `id`, its source and sink (beating every
    /// `heartbeat`), the frames of its send requests charged to `budget`
    /// (its connection's); `None` when `id` lives already or `limit`
    /// sessions do.
    pub(crate) fn open(
        &self,
        id: &str,
        budget: Arc<Budget>,
        max_frame: usize,
        heartbeat: Duration,
        limit: usize,
    ) -> Option<(Arc<Session>, SessionSource, SessionSink)> {
        let mut map = self.map();
        if map.contains_key(id) || map.len() >= limit {
            return None;
        }
        let (inbound, rx) = mpsc::unbounded_channel();
        let session = Arc::new(Session {
            inbound,
            budget,
            max_frame,
            state: Mutex::new(State {
                receiver: None,
                next_receiver: 1,
                gone: false,
                left_at: Instant::now(),
            }),
            changed: Notify::new(),
        });
        map.insert(id.to_owned(), Arc::clone(&session));
        let source = SessionSource {
            rx,
            session: Arc::clone(&session),
        };
        let sink = SessionSink {
            session: Arc::clone(&session),
            queued: Vec::new(),
            every: heartbeat,
        };
        Some((session, source, sink))
    }

    /// Forgets the session `id` (its connection ended).
    pub(crate) fn remove(&self, id: &str, session: &Arc<Session>) {
        let mut map = self.map();
        if map.get(id).is_some_and(|s| Arc::ptr_eq(s, session)) {
            map.remove(id);
        }
    }
}

/// One session: its frames from the client, and its receiving request.
pub(crate) struct Session {
    /// The frames of send requests, each charged to the connection's
    /// budget from the moment it is queued: bounded in bytes, as a TCP
    /// connection's frames are.
    inbound: mpsc::UnboundedSender<(Bytes, Charge)>,
    budget: Arc<Budget>,
    max_frame: usize,
    state: Mutex<State>,
    /// Woken when the receiving request comes or goes, or the session
    /// ends.
    changed: Notify,
}

struct State {
    receiver: Option<Attached>,
    next_receiver: u64,
    /// Ended: by the client, the bridge, or the disconnect delay.
    gone: bool,
    /// When the last receiving request ended.
    left_at: Instant,
}

/// The receiving request the session writes to.
struct Attached {
    id: u64,
    kind: Receiving,
    tx: mpsc::Sender<Bytes>,
    written: usize,
}

/// What a receiving request gets of a session.
pub(crate) enum Attach {
    /// The session's messages, as they come.
    Body(ReceiverBody),
    /// Another receiving request is open: `c[2010,...]`.
    Busy,
    /// The session ended: `c[3000,"Go away!"]`.
    Gone,
}

impl Session {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes a receiving request of `kind` the session's, its body starting
    /// with `first` (the prelude, `o` for a session just opened).
    pub(crate) fn attach(self: &Arc<Self>, kind: Receiving, first: Vec<Bytes>) -> Attach {
        let mut state = self.state();
        if state.gone {
            return Attach::Gone;
        }
        if state.receiver.is_some() {
            return Attach::Busy;
        }
        let (tx, rx) = mpsc::channel(16 + first.len());
        for bytes in first {
            let _ = tx.try_send(bytes);
        }
        let id = state.next_receiver;
        state.next_receiver += 1;
        state.receiver = Some(Attached {
            id,
            kind,
            tx,
            written: 0,
        });
        drop(state);
        self.changed.notify_waiters();
        Attach::Body(ReceiverBody {
            rx,
            gone: Some((Arc::clone(self), id)),
        })
    }

    /// The receiving request `id` ended its response (its messages sent);
    /// the session waits for the next.
    fn detach(&self, id: u64) {
        let mut state = self.state();
        if state.receiver.as_ref().is_some_and(|r| r.id == id) {
            state.receiver = None;
            state.left_at = Instant::now();
            drop(state);
            self.changed.notify_waiters();
        }
    }

    /// The receiving request `id` was dropped: by the client when it is
    /// still the session's, which ends the session (as vertx-web).
    fn dropped(&self, id: u64) {
        let mut state = self.state();
        if state.receiver.as_ref().is_some_and(|r| r.id == id) {
            state.receiver = None;
            state.gone = true;
            drop(state);
            self.changed.notify_waiters();
        }
    }

    /// Ends the session.
    fn end(&self) {
        self.state().gone = true;
        self.changed.notify_waiters();
    }

    /// Queues the frames of a send request for the connection, each once
    /// it fits in the connection's budget (over it, the send request
    /// waits, as a TCP connection's reading does); `false` when the
    /// session ended. A frame over the frame limit is queued uncharged, to
    /// be skipped.
    pub(crate) async fn receive(&self, frames: Vec<String>) -> bool {
        for frame in frames {
            let charge = if frame.len() > self.max_frame {
                self.budget.charge(0)
            } else {
                let cost = frame_cost(frame.len());
                self.budget.room_for(cost).await;
                self.budget.charge(cost)
            };
            if self.inbound.send((Bytes::from(frame), charge)).is_err() {
                return false;
            }
        }
        true
    }

    /// Sends `message` on the receiving request, waiting for one when there
    /// is none (`wait`), or drops it when there is none (`!wait`: a
    /// heartbeat). A polling response ends after it; a streaming one after
    /// [`MAX_BYTES_STREAMING`].
    async fn deliver(&self, message: &str, wait: bool) -> std::io::Result<()> {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let taken = {
                let state = self.state();
                if state.gone {
                    return Err(std::io::ErrorKind::BrokenPipe.into());
                }
                state
                    .receiver
                    .as_ref()
                    .map(|r| (r.id, r.kind.clone(), r.tx.clone()))
            };
            let Some((id, kind, tx)) = taken else {
                if !wait {
                    return Ok(());
                }
                notified.await;
                continue;
            };
            let bytes = kind.wrap(message);
            let len = bytes.len();
            if tx.send(bytes).await.is_err() {
                self.dropped(id);
                continue;
            }
            drop(tx);
            let done = {
                let mut state = self.state();
                match state.receiver.as_mut() {
                    Some(r) if r.id == id => {
                        r.written += len;
                        !r.kind.streaming() || r.written >= MAX_BYTES_STREAMING
                    }
                    _ => false,
                }
            };
            if done {
                self.detach(id);
            }
            return Ok(());
        }
    }

    /// Waits until the session ends: by the client or the bridge, or
    /// without a receiving request for `delay`.
    async fn ended(&self, delay: Duration) {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let until = {
                let state = self.state();
                if state.gone {
                    return;
                }
                state.receiver.is_none().then_some(state.left_at + delay)
            };
            match until {
                Some(until) if until <= Instant::now() => {
                    self.end();
                    return;
                }
                Some(until) => {
                    tokio::select! {
                        () = notified => {}
                        () = sleep_until(until) => {}
                    }
                }
                None => notified.await,
            }
        }
    }
}

/// A receiving request's body: the session's messages as they come; when
/// dropped while still the session's (the client went), the session ends.
pub(crate) struct ReceiverBody {
    rx: mpsc::Receiver<Bytes>,
    gone: Option<(Arc<Session>, u64)>,
}

impl Stream for ReceiverBody {
    type Item = Result<Frame<Bytes>, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx
            .poll_recv(cx)
            .map(|bytes| bytes.map(|b| Ok(Frame::data(b))))
    }
}

impl Drop for ReceiverBody {
    fn drop(&mut self) {
        if let Some((session, id)) = self.gone.take() {
            session.dropped(id);
        }
    }
}

/// A session's frames from the client.
pub(crate) struct SessionSource {
    rx: mpsc::UnboundedReceiver<(Bytes, Charge)>,
    session: Arc<Session>,
}

impl Source for SessionSource {
    /// The frames come charged already, to the budget the session was
    /// opened with (the connection's).
    async fn next(&mut self, _budget: &Arc<Budget>) -> Read {
        tokio::select! {
            biased;
            frame = self.rx.recv() => match frame {
                Some((frame, _)) if frame.len() > self.session.max_frame => {
                    Read::Skipped(frame.len())
                }
                Some((frame, charge)) => Read::Frame(frame, charge),
                None => Read::Closed,
            },
            () = self.session.ended(DISCONNECT_DELAY) => Read::Closed,
        }
    }
}

/// A session's frames to the client.
pub(crate) struct SessionSink {
    session: Arc<Session>,
    /// The frames fed since the last flush, each its JSON text.
    queued: Vec<String>,
    /// SockJS's heartbeat interval.
    every: Duration,
}

impl Sink for SessionSink {
    fn feed(&mut self, frame: Outgoing) {
        self.queued.push(frame.text().to_owned());
    }

    async fn flush(&mut self) -> std::io::Result<()> {
        let message = array(&self.queued);
        self.queued.clear();
        self.session.deliver(&message, true).await
    }

    fn heartbeat(&self) -> Option<Duration> {
        Some(self.every)
    }

    async fn beat(&mut self) -> std::io::Result<()> {
        // To the receiving request only, as vertx-web.
        self.session.deliver("h", false).await
    }

    async fn close(&mut self) {
        // The close frame to the receiving request, if there is one now.
        let _ = self.session.deliver(r#"c[3000,"Go away!"]"#, false).await;
        self.session.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A send request's frames count against the connection's budget from
    /// the moment they are queued, and a send request over the budget
    /// waits until the connection has taken (and let go of) earlier ones.
    #[tokio::test(flavor = "current_thread")]
    async fn queued_frames_are_charged_and_wait_for_room() {
        use crate::bridge::budget::Pool;

        let budget = Budget::new(1_000, &Pool::new(usize::MAX));
        let sessions = Sessions::default();
        let (session, mut source, _sink) = sessions
            .open("s", Arc::clone(&budget), 10_000, Duration::from_secs(25), 1)
            .expect("a session");
        assert!(session.receive(vec!["x".repeat(300)]).await);
        assert_eq!(budget.used(), 600, "charged once queued, before it is read");
        let more = session.receive(vec!["y".repeat(300)]);
        tokio::pin!(more);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), more.as_mut())
                .await
                .is_err(),
            "over the budget: the send request waits"
        );
        let Read::Frame(first, charge) = source.next(&budget).await else {
            panic!("the first frame");
        };
        assert_eq!(first.len(), 300);
        drop(charge);
        assert!(more.await, "room once the first frame is let go");
        assert_eq!(budget.used(), 600);
        // A frame over the frame limit is queued uncharged, to be skipped.
        let (big, mut big_source, _big_sink) = Sessions::default()
            .open("b", Arc::clone(&budget), 10, Duration::from_secs(25), 1)
            .expect("a session");
        assert!(big.receive(vec!["z".repeat(20)]).await);
        assert_eq!(budget.used(), 600);
        assert!(matches!(big_source.next(&budget).await, Read::Skipped(20)));
    }

    #[test]
    fn messages_as_vertx_web_writes_them() {
        let frame =
            "{\"s\":\"\u{e9}\u{20ac}\u{1f600}\u{2028}/'\\\"\\\\\\t\\n\\u0001<&>\"}".to_owned();
        let a = array(&[frame]);
        assert_eq!(
            a,
            r#"a["{\"s\":\"\u00e9\u20ac\ud83d\ude00\u2028/'\\\"\\\\\\t\\n\\u0001<&>\"}"]"#
        );
        assert_eq!(
            Receiving::Jsonp("cb".into()).wrap(r#"c[2010,"Another connection still open"]"#),
            Bytes::from_static(b"/**/cb(\"c[2010,\\\"Another connection still open\\\"]\");\r\n")
        );
        assert_eq!(
            Receiving::HtmlFile("c".into()).wrap("a[\"/'\"]"),
            Bytes::from_static(b"<script>\np(\"a[\\\"\\/\\'\\\"]\");\n</script>\r\n")
        );
        assert_eq!(
            Receiving::EventSource.wrap("o"),
            Bytes::from_static(b"data: o\r\n\r\n")
        );
        let page = Receiving::HtmlFile("_jp.cb1".into()).prelude();
        assert_eq!(page.len(), 1024 + "_jp.cb1".len() + 2);
        let tail = format!("</script>{}\r\n", " ".repeat(654));
        assert!(page.ends_with(tail.as_bytes()));
        assert_eq!(Receiving::XhrStreaming.prelude().len(), 2049);
    }

    #[test]
    fn payloads_and_callbacks() {
        assert_eq!(
            payload_frames(br#"["a","b"]"#),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(payload_frames(br#""one""#), Some(vec!["one".into()]));
        assert_eq!(payload_frames(b"["), None);
        assert_eq!(payload_frames(b"{}"), None);
        assert!(callback_ok("_jp.cb1", Some(32)));
        assert!(!callback_ok("a(b", None));
        assert!(!callback_ok(&"x".repeat(33), Some(32)));
        assert!(callback_ok(&"x".repeat(33), None));
        assert!(!callback_ok("", None));
    }
}
