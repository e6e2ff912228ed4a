//! The Vert.x bridge's frames, both ways: the JSON objects a bridge and its
//! clients exchange, read without building a tree ([`Incoming`]) and
//! written straight into the bytes a transport sends ([`Outgoing`]), in the
//! dialect of each end ([`Dialect`]): a TCP bridge's and a SockJS bridge's
//! answers to their clients, and a client's frames to a Vert.x TCP bridge.
//! Every name of a frame, member and failure lives here.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use codecbus_json::JsValue;
use serde::Deserialize;
use serde::de::{Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::base::error::{NO_FAILURE_CODE, ReplyFailure, RequestError, RequestErrorKind};
use crate::base::headers::Headers;
use crate::bridge::answer::Answer;
use crate::bridge::json;

/// A frame on its way out: its JSON text, after four bytes kept for the
/// TCP bridge's length, so that the TCP transport sends it as it is.
#[derive(Debug)]
pub(crate) struct Outgoing(Vec<u8>);

impl Outgoing {
    /// An empty frame, room made for `capacity` bytes of JSON.
    fn with_capacity(capacity: usize) -> Self {
        let mut buf = Vec::with_capacity(4 + capacity);
        buf.extend_from_slice(&[0; 4]);
        Self(buf)
    }

    /// The frame of `value`.
    pub(crate) fn of(value: &Value) -> Self {
        let mut frame = Self::with_capacity(64);
        json::write_scalar(&mut frame.0, value);
        frame
    }

    /// The JSON text.
    pub(crate) fn json(&self) -> &[u8] {
        &self.0[4..]
    }

    /// The JSON text as a `str`: every writer of a frame writes UTF-8.
    pub(crate) fn text(&self) -> &str {
        std::str::from_utf8(self.json()).unwrap_or("null")
    }

    /// The TCP frame: the length, then the JSON text.
    pub(crate) fn into_tcp(mut self) -> Vec<u8> {
        // A frame we write is far below 4 GiB (its body came within limits).
        let len = u32::try_from(self.0.len() - 4).unwrap_or(u32::MAX);
        self.0[..4].copy_from_slice(&len.to_be_bytes());
        self.0
    }

    /// A frame's object begun: `{"type":kind,"address":address`, room
    /// made for `capacity` more bytes. Members follow, then [`end`](Self::end).
    pub(crate) fn object(kind: &str, address: &str, capacity: usize) -> Self {
        let mut frame = Self::with_capacity(address.len() + capacity + 32);
        frame.0.extend_from_slice(b"{\"type\":");
        json::write_scalar(&mut frame.0, kind);
        frame.member("address", address);
        frame
    }

    /// A member whose value is a string, a number or a boolean.
    pub(crate) fn member<S: serde::Serialize + ?Sized>(&mut self, name: &str, value: &S) {
        self.name(name);
        json::write_scalar(&mut self.0, value);
    }

    /// A member whose value is JSON text already.
    pub(crate) fn member_json(&mut self, name: &str, json: &[u8]) {
        self.name(name);
        self.0.extend_from_slice(json);
    }

    /// The `headers` member: one value per name, the last one (as Vert.x
    /// writes them).
    pub(crate) fn headers(&mut self, headers: &Headers) {
        self.name("headers");
        self.0.push(b'{');
        write_headers(headers, &mut self.0);
        self.0.push(b'}');
    }

    /// The object ended.
    pub(crate) fn end(mut self) -> Self {
        self.0.push(b'}');
        self
    }

    fn name(&mut self, name: &str) {
        self.0.push(b',');
        json::write_scalar(&mut self.0, name);
        self.0.push(b':');
    }
}

/// A frame that arrived, read without building its tree: each member the
/// bridge knows kept as its raw JSON text, borrowed from the frame, the
/// others skipped; or, for the body, parsed into a [`JsValue`] as it is
/// read, when the reader asks for that ([`Incoming::parse_with`]). A member
/// given twice counts the last time, as when the object is read whole.
#[derive(Default)]
pub(crate) struct Incoming<'a> {
    pub(crate) kind: Option<&'a RawValue>,
    pub(crate) address: Option<&'a RawValue>,
    pub(crate) reply_address: Option<&'a RawValue>,
    pub(crate) headers: Option<&'a RawValue>,
    pub(crate) body: Option<&'a RawValue>,
    /// The body, parsed as it was read (then `body` is `None`).
    pub(crate) value: Option<JsValue>,
    pub(crate) send: Option<&'a RawValue>,
    pub(crate) failure_code: Option<&'a RawValue>,
    pub(crate) failure_type: Option<&'a RawValue>,
    pub(crate) message: Option<&'a RawValue>,
    pub(crate) source_address: Option<&'a RawValue>,
}

/// Why a frame could not be read.
pub(crate) enum Malformed {
    /// It is not JSON (or not UTF-8): why.
    Json(String),
    /// It is JSON, not an object.
    NotAnObject,
}

impl<'a> Incoming<'a> {
    /// Reads a frame's JSON text.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Self, Malformed> {
        Self::parse_with(bytes, &|_| false)
    }

    /// Reads a frame's JSON text, and its body straight into a
    /// [`JsValue`] ([`value`](Self::value)) when `as_value` says so of
    /// the frame's `address`, a string given before the body (as Vert.x's
    /// clients write their frames). Why: the body is then read once, not
    /// skipped over and parsed again (0.94 times the CPU per request for
    /// bodies of 831 bytes).
    ///
    /// A frame whose body fails to parse so (too deep beside the frame's
    /// own level, say), or that gives its `address` again after the body,
    /// is read again as raw text: the outcome is the same either way. A
    /// frame malformed before any body was parsed so is not read again.
    pub(crate) fn parse_with(
        bytes: &'a [u8],
        as_value: &dyn Fn(&str) -> bool,
    ) -> Result<Self, Malformed> {
        // Checked once here, the text is not checked again: not by the
        // parser, not by the body's transcoding.
        let text =
            std::str::from_utf8(bytes).map_err(|e| Malformed::Json(format!("not UTF-8: {e}")))?;
        let read = |as_value: &dyn Fn(&str) -> bool| {
            let mut de = serde_json::Deserializer::from_str(text);
            let frame = match de.deserialize_any(FrameVisitor(as_value)) {
                Ok(Some(frame)) => frame,
                Ok(None) => return Err(Malformed::NotAnObject),
                Err(e) => return Err(Malformed::Json(e.to_string())),
            };
            de.end().map_err(|e| Malformed::Json(e.to_string()))?;
            Ok(frame)
        };
        let parsed_a_body = std::cell::Cell::new(false);
        let first = read(&|address| {
            let yes = as_value(address);
            parsed_a_body.set(parsed_a_body.get() || yes);
            yes
        });
        match first {
            Err(Malformed::Json(_)) if parsed_a_body.get() => read(&|_| false),
            first => first,
        }
    }

    /// The frame's `type`, when it is a string.
    pub(crate) fn kind(&self) -> Member<'a> {
        Member::of(self.kind)
    }

    /// The body's JSON text; `null` when it has none. Printed when the
    /// body was parsed as it was read.
    pub(crate) fn body(&self) -> Cow<'a, str> {
        match (&self.value, self.body) {
            (Some(value), _) => Cow::Owned(value.to_string()),
            (None, raw) => Cow::Borrowed(raw.map_or("null", RawValue::get)),
        }
    }

    /// The frame's headers: an object whose members are strings (other
    /// scalars as their JSON text, null members left out).
    pub(crate) fn headers(&self) -> Result<Headers, String> {
        let mut headers = Headers::new();
        let Some(raw) = self.headers else {
            return Ok(headers);
        };
        if raw.get() == "null" {
            return Ok(headers);
        }
        let mut de = serde_json::Deserializer::from_str(raw.get());
        let Ok(Some(members)) = de.deserialize_any(MembersVisitor) else {
            return Err("`headers` is not an object".into());
        };
        for (name, value) in members {
            match Member::of(Some(value)) {
                Member::Text(text) => headers.insert(name.0, text),
                Member::Absent => {}
                Member::Other(raw) if !raw.starts_with(['[', '{']) => headers.insert(name.0, raw),
                Member::Other(_) => {
                    return Err(format!("the header {:?} is not a string", name.0));
                }
            }
        }
        Ok(headers)
    }
}

/// A member of a frame, as the bridge looks at it.
pub(crate) enum Member<'a> {
    /// Absent, or null.
    Absent,
    /// A string, unescaped.
    Text(Cow<'a, str>),
    /// Anything else: its JSON text.
    Other(&'a str),
}

impl<'a> Member<'a> {
    pub(crate) fn of(raw: Option<&'a RawValue>) -> Self {
        let Some(raw) = raw else {
            return Member::Absent;
        };
        let text = raw.get();
        if text == "null" {
            return Member::Absent;
        }
        if !text.starts_with('"') {
            return Member::Other(text);
        }
        let inner = &text[1..text.len() - 1];
        if !inner.contains('\\') {
            return Member::Text(Cow::Borrowed(inner));
        }
        match serde_json::from_str::<String>(text) {
            Ok(s) => Member::Text(Cow::Owned(s)),
            Err(_) => Member::Other(text),
        }
    }

    /// The 32-bit integer, if it is one (a `failureCode`).
    pub(crate) fn int(self) -> Option<i32> {
        match self {
            Member::Other(text) => serde_json::from_str(text).ok(),
            _ => None,
        }
    }

    /// The string, if it is one.
    pub(crate) fn text(self) -> Option<Cow<'a, str>> {
        match self {
            Member::Text(text) => Some(text),
            _ => None,
        }
    }
}

/// A member name: borrowed from the frame when it has no escapes.
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(s.to_owned())))
            }
        }
        de.deserialize_str(V)
    }
}

/// Reads an object's members, each as its raw text; `None` for JSON that
/// is not an object.
struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Option<Vec<(Text<'de>, &'de RawValue)>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry()? {
            members.push(member);
        }
        Ok(Some(members))
    }
}

/// Reads a frame's object member by member; `None` for JSON that is not
/// an object. Its body is parsed into a [`JsValue`] when the function
/// says so of the `address` read before it.
struct FrameVisitor<'f>(&'f dyn Fn(&str) -> bool);

impl<'de> Visitor<'de> for FrameVisitor<'_> {
    type Value = Option<Incoming<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a frame")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut frame = Incoming::default();
        while let Some(name) = map.next_key::<Text<'de>>()? {
            if frame.value.is_some() && name.0 == "address" {
                // The body was parsed for the address before it, which
                // this one replaces: the frame is read again, raw.
                return Err(serde::de::Error::custom("an address after the body"));
            }
            let slot = match &*name.0 {
                "type" => &mut frame.kind,
                "address" => &mut frame.address,
                "replyAddress" => &mut frame.reply_address,
                "headers" => &mut frame.headers,
                "body" => {
                    frame.value = None;
                    if let Some(address) = Member::of(frame.address).text()
                        && (self.0)(&address)
                    {
                        frame.body = None;
                        frame.value = Some(map.next_value()?);
                        continue;
                    }
                    &mut frame.body
                }
                "send" => &mut frame.send,
                "failureCode" => &mut frame.failure_code,
                "failureType" => &mut frame.failure_type,
                "message" => &mut frame.message,
                "sourceAddress" => &mut frame.source_address,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value()?);
        }
        Ok(Some(frame))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// The frames of one end of a bridge: a TCP bridge's (Vert.x's
/// `TcpEventBusBridge`) or a SockJS bridge's (vertx-web's
/// `SockJSHandler.bridge`) to their clients, which name and fill some of
/// them otherwise, or a client's to a TCP bridge (`BridgeClient`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Tcp,
    SockJs,
    Client,
}

impl Dialect {
    /// The answer to a `ping`: `pong` on TCP, nothing on SockJS (a ping
    /// only keeps the connection open there), nor from a client.
    pub(crate) fn pong(self) -> Option<Value> {
        match self {
            Dialect::Tcp => Some(json!({"type": "pong"})),
            Dialect::SockJs | Dialect::Client => None,
        }
    }

    /// An `err` frame saying `message` alone (Vert.x: refusals and
    /// malformed frames): in `message` on TCP, in `body` on SockJS.
    pub(crate) fn err(self, message: &str) -> Value {
        match self {
            Dialect::Tcp | Dialect::Client => json!({"type": "err", "message": message}),
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

    /// The `message` of an `err` frame for a frame the bridge's event hook
    /// refused: Vert.x's TCP bridge's and vertx-web's words.
    pub(crate) fn rejected(self) -> &'static str {
        match self {
            Dialect::Tcp | Dialect::Client => "blocked by bridgeEvent handler",
            Dialect::SockJs => "rejected",
        }
    }

    /// The `message` of an `err` frame for a frame of an unknown type.
    pub(crate) fn unknown_type(self) -> &'static str {
        match self {
            Dialect::Tcp | Dialect::Client => "unknown_type",
            Dialect::SockJs => "invalid_type",
        }
    }

    /// The answers to a frame without an address: two frames on TCP (as
    /// Vert.x 3.9.4 writes them), one on SockJS.
    pub(crate) fn missing_address(self) -> Vec<Value> {
        match self {
            Dialect::Tcp | Dialect::Client => {
                vec![self.err("missing_address"), self.err("address_required")]
            }
            Dialect::SockJs => vec![self.err("missing_address")],
        }
    }

    /// The answer to an `unregister` of an address not registered: an
    /// `err` frame on TCP, nothing on SockJS.
    pub(crate) fn unknown_address(self) -> Option<Value> {
        match self {
            Dialect::Tcp | Dialect::Client => Some(self.err("unknown_address")),
            Dialect::SockJs => None,
        }
    }

    /// The `err` frame of a client's request that failed: at its reply
    /// address, naming the address it was sent to on TCP.
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
        if let (Dialect::Tcp | Dialect::Client, Some(map)) = (self, frame.as_object_mut()) {
            map.insert("sourceAddress".into(), source.into());
        }
        frame
    }

    /// A message for the other end, its body's JSON text given. From a TCP
    /// bridge a `message` frame: `headers` always present (`{}` when
    /// empty), `body` absent when null, and `send`; from a SockJS bridge a
    /// `rec` frame: `headers` only when there are some, `body` always, no
    /// `send`; from a client a `send` or `publish` frame, `headers` when
    /// there are some, `body` absent when null. As Vert.x writes them.
    pub(crate) fn message(
        self,
        address: &str,
        reply_address: Option<&str>,
        headers: &Headers,
        body: &[u8],
        send: bool,
    ) -> Outgoing {
        let kind = match self {
            Dialect::Tcp => "message",
            Dialect::SockJs => "rec",
            Dialect::Client if send => "send",
            Dialect::Client => "publish",
        };
        let mut frame = Outgoing::object(kind, address, body.len() + 64);
        if let Some(reply) = reply_address {
            frame.member("replyAddress", reply);
        }
        if self == Dialect::Tcp || !headers.is_empty() {
            frame.headers(headers);
        }
        if self == Dialect::SockJs || body != b"null" {
            frame.member_json("body", body);
        }
        if self == Dialect::Tcp {
            frame.member("send", &send);
        }
        frame.end()
    }

    /// The frame that fails a request from the other end, at its
    /// `reply_address` (the request went to `source`): a bridge's `err`
    /// frame, a client's `send` with `failureCode` and `message`.
    pub(crate) fn answer_failure(
        self,
        reply_address: &str,
        source: &str,
        e: &RequestError,
    ) -> Outgoing {
        match self {
            Dialect::Client => Outgoing::of(&json!({"type": "send", "address": reply_address,
                "failureCode": e.wire_failure_code(), "message": e.message()})),
            Dialect::Tcp | Dialect::SockJs => Outgoing::of(&self.failure(
                reply_address,
                source,
                e.wire_failure_code(),
                failure_name(e.failure_type()),
                e.message(),
            )),
        }
    }

    /// A client's frame that registers (`true`) or unregisters `address`.
    pub(crate) fn registration(address: &str, register: bool) -> Outgoing {
        let kind = if register { "register" } else { "unregister" };
        Outgoing::of(&json!({"type": kind, "address": address}))
    }

    /// A client's `ping`.
    pub(crate) fn ping() -> Outgoing {
        Outgoing::of(&json!({"type": "ping"}))
    }
}

/// What a frame at a reply address the reading end awaits an answer at
/// says: an answer (a client's `send`, a bridge's `message`: the body, or
/// the failure its `failureCode` and `message` give) or a failure (a
/// bridge's `err`). `Err` with the name of the refusal when `failureCode`
/// is not a 32-bit integer.
pub(crate) fn answer_of(frame: &Incoming<'_>, kind: &str) -> Result<Answer, &'static str> {
    if kind == "err" {
        return Ok(Answer::Failed(failure_of(frame)));
    }
    match Member::of(frame.failure_code) {
        Member::Absent => Ok(Answer::Body {
            body: frame.body().into_owned(),
            headers: frame.headers().unwrap_or_default(),
            reply_address: Member::of(frame.reply_address).text().map(Cow::into_owned),
        }),
        code => {
            let code = code.int().ok_or("invalid_failure_code")?;
            let message = Member::of(frame.message).text().unwrap_or_default();
            Ok(Answer::Failed(
                RequestError::new(RequestErrorKind::RecipientFailure, message.into_owned())
                    .with_code(code),
            ))
        }
    }
}

/// The error of a failed request, from a bridge's `err` frame: its kind by
/// `failureType`, its `failureCode`, `message` and `sourceAddress`.
fn failure_of(frame: &Incoming<'_>) -> RequestError {
    let message = Member::of(frame.message)
        .text()
        .map_or_else(|| "the request failed".to_string(), Cow::into_owned);
    let kind = match Member::of(frame.failure_type).text().as_deref() {
        Some("TIMEOUT") => RequestErrorKind::Timeout,
        Some("NO_HANDLERS") => RequestErrorKind::NoHandlers,
        _ => RequestErrorKind::RecipientFailure,
    };
    let code = Member::of(frame.failure_code).int();
    let mut error = RequestError::new(kind, message).with_code(code.unwrap_or(NO_FAILURE_CODE));
    if let Some(source) = Member::of(frame.source_address).text() {
        error = error.with_address(Arc::from(&*source));
    }
    error
}

/// Vert.x's name of a failure type.
fn failure_name(failure: ReplyFailure) -> &'static str {
    match failure {
        ReplyFailure::Timeout => "TIMEOUT",
        ReplyFailure::NoHandlers => "NO_HANDLERS",
        ReplyFailure::RecipientFailure => "RECIPIENT_FAILURE",
        ReplyFailure::Error => "ERROR",
    }
}

/// The members of a frame's `headers` object.
fn write_headers(headers: &Headers, out: &mut Vec<u8>) {
    let mut member = |i: usize, name: &str, value: &str| {
        if i > 0 {
            out.push(b',');
        }
        json::write_scalar(out, name);
        out.push(b':');
        json::write_scalar(out, value);
    };
    // A name given twice is rare: its last value is found by a look ahead
    // over a few headers, through a map over many.
    if headers.len() <= 16 {
        let all: Vec<(&str, &str)> = headers.iter().collect();
        let mut i = 0;
        for (at, &(name, _)) in all.iter().enumerate() {
            if all[..at].iter().any(|&(n, _)| n == name) {
                continue;
            }
            let value = all[at..]
                .iter()
                .rev()
                .find(|&&(n, _)| n == name)
                .map_or("", |&(_, v)| v);
            member(i, name, value);
            i += 1;
        }
    } else {
        let last: std::collections::BTreeMap<&str, &str> = headers.iter().collect();
        for (i, (name, value)) in last.into_iter().enumerate() {
            member(i, name, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(frame: Outgoing) -> Value {
        serde_json::from_slice(frame.json()).expect("a frame is JSON")
    }

    #[test]
    fn message_frames_as_vertx_writes_them() {
        let mut headers = Headers::new();
        headers.insert("k", "v");
        headers.append("k", "last");
        headers.insert("q", "\"quoted\"");
        let tcp = Dialect::Tcp;
        assert_eq!(
            value(tcp.message("a", Some("r"), &headers, br#"{"x":1}"#, true)),
            json!({"type": "message", "address": "a", "replyAddress": "r",
                   "headers": {"k": "last", "q": "\"quoted\""}, "body": {"x": 1}, "send": true})
        );
        assert_eq!(
            value(tcp.message("a", None, &Headers::new(), b"null", false)),
            json!({"type": "message", "address": "a", "headers": {}, "send": false})
        );
        let sockjs = Dialect::SockJs;
        assert_eq!(
            value(sockjs.message("a", Some("r"), &headers, br#"{"x":1}"#, true)),
            json!({"type": "rec", "address": "a", "replyAddress": "r",
                   "headers": {"k": "last", "q": "\"quoted\""}, "body": {"x": 1}})
        );
        assert_eq!(
            value(sockjs.message("a", None, &Headers::new(), b"null", false)),
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

    #[test]
    fn a_body_after_its_address_is_parsed_as_it_is_read() {
        let only_a = |address: &str| address == "a";
        fn value(text: &[u8]) -> (Option<JsValue>, Option<String>) {
            let frame = Incoming::parse_with(text, &|address| address == "a")
                .ok()
                .expect("a frame");
            (frame.value, frame.body.map(|raw| raw.get().to_owned()))
        }
        let parsed = JsValue::parse(r#"{"x":[1,2]}"#).unwrap();
        // The address first: parsed, and its text is the value printed.
        let text = br#"{"type":"send","address":"a","body":{"x":[1,2]},"k":[]}"#;
        assert_eq!(value(text), (Some(parsed.clone()), None));
        let frame = Incoming::parse_with(text, &only_a).ok().unwrap();
        assert_eq!(frame.body(), r#"{"x":[1,2]}"#);
        // Another address, the body before the address, or no address:
        // raw text.
        for text in [
            &br#"{"address":"b","body":{"x":[1,2]}}"#[..],
            br#"{"body":{"x":[1,2]},"address":"a"}"#,
            br#"{"body":{"x":[1,2]}}"#,
            br#"{"address":7,"body":{"x":[1,2]}}"#,
        ] {
            assert_eq!(value(text), (None, Some(r#"{"x":[1,2]}"#.to_owned())));
        }
        // The body given twice: the last counts, parsed or raw.
        assert_eq!(
            value(br#"{"address":"a","body":1,"body":{"x":[1,2]}}"#),
            (Some(parsed), None)
        );
        // An address after the body replaces the one it was parsed for:
        // read again, raw.
        assert_eq!(
            value(br#"{"address":"a","body":[true],"address":"b"}"#),
            (None, Some("[true]".to_owned()))
        );
        // A body within serde_json's depth on its own but not beside the
        // frame's level: read raw, for its decoding to say what it says.
        let deep = format!(
            r#"{{"address":"a","body":{}1{}}}"#,
            "[".repeat(127),
            "]".repeat(127)
        );
        let frame = Incoming::parse_with(deep.as_bytes(), &only_a)
            .ok()
            .expect("a frame");
        assert!(frame.value.is_none());
        assert!(JsValue::parse(&frame.body()).is_ok());
        // Malformed JSON is malformed either way.
        assert!(matches!(
            Incoming::parse_with(br#"{"address":"a","body":[1,}"#, &only_a),
            Err(Malformed::Json(_))
        ));
    }

    #[test]
    fn incoming_frames_read_without_a_tree() {
        let text = br#"{"type":"send","address":"a\u0041","body":{"x":[1,2]},"extra":[{}],
                        "headers":{"k":"v","n":5,"b":true,"z":null},"replyAddress":7}"#;
        let frame = Incoming::parse(text).ok().expect("a frame");
        assert_eq!(frame.kind().text().as_deref(), Some("send"));
        assert_eq!(Member::of(frame.address).text().as_deref(), Some("aA"));
        assert!(Member::of(frame.reply_address).text().is_none());
        assert_eq!(frame.body(), r#"{"x":[1,2]}"#);
        let headers = frame.headers().unwrap();
        assert_eq!(
            headers.iter().collect::<Vec<_>>(),
            [("k", "v"), ("n", "5"), ("b", "true")]
        );
        for bad in [
            &br#"{"headers":[]}"#[..],
            br#"{"headers":{"k":[1]}}"#,
            br#"{"headers":"x"}"#,
        ] {
            let frame = Incoming::parse(bad).ok().expect("a frame");
            assert!(frame.headers().is_err());
        }
        assert!(matches!(
            Incoming::parse(b"[1]"),
            Err(Malformed::NotAnObject)
        ));
        assert!(matches!(
            Incoming::parse(b"\"x\""),
            Err(Malformed::NotAnObject)
        ));
        assert!(matches!(Incoming::parse(b"{"), Err(Malformed::Json(_))));
        assert!(matches!(Incoming::parse(b"{} {}"), Err(Malformed::Json(_))));
        let twice = Incoming::parse(br#"{"type":"a","type":"b"}"#)
            .ok()
            .expect("a frame");
        assert_eq!(twice.kind().text().as_deref(), Some("b"));
        assert_eq!(Incoming::default().body(), "null");
        assert!(matches!(
            Incoming::parse(b"{\"a\":\"\xff\"}"),
            Err(Malformed::Json(_))
        ));
    }
}
