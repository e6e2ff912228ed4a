// A message between nodes as a frame: the wire's names, what a frame
// holds and how large a NATS server counts it, and the frames of what
// leaves this node (a message, a reply).

use std::any::Any;
use std::borrow::Cow;
use std::cell::Cell;
use std::sync::Arc;

use bytes::Bytes;
use codecbus_core::{AnyBody, CodecRegistration, Writer};

use crate::base::error::{NO_FAILURE_CODE, RequestErrorKind};
use crate::base::headers::Headers;
use crate::base::reply::ReplyEnvelope;
use crate::telemetry::spans;
use crate::transport::cluster::compress;
use crate::transport::{Node, Outbound};

/// The version of the wire contract a node writes (the guide's wire
/// chapter, `book/src/wire.md`): how a message names its codec, and the
/// version it states in the bus's headers. A node reads both
/// versions whatever it writes, so nodes of either setting (and peers in
/// other languages of either version) talk to each other; what it writes
/// is [`NatsOptions::wire_version`](crate::NatsOptions::wire_version).
///
/// More versions may be added in a minor release: match with a wildcard
/// arm.
#[cfg_attr(not(feature = "nats"), allow(unreachable_pub))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum WireVersion {
    /// Version 1, the header form: the body is plain MessagePack, its
    /// codec named in the header `Codecbus-Codec: 1 {codec name}`; a
    /// failure reply's header is `Codecbus-Failure: 1 {KIND} {code}`.
    /// Version 1 has no compressed form: a node writing it sends every
    /// body plain, whatever
    /// [`compress_above`](crate::NatsOptions::compress_above) says. For a
    /// deployment with readers of version 1 only: peers written from
    /// version 1 of the contract, or, during a rolling deploy, nodes of a
    /// build from before version 2.
    V1,
    /// Version 2, the prefix form (the default): the payload names its
    /// codec before the body, `0xC1`, the byte `0x02`, the codec name as
    /// a MessagePack str, then the body (or its LZ4 form), so a message
    /// without user headers carries no header at all; a failure reply's
    /// header is `Codecbus-Failure: 2 {KIND} {code}`.
    #[default]
    V2,
}

impl WireVersion {
    /// The version's number, as the wire states it (the second byte of
    /// the codec prefix, the first token of a bus header): 1 or 2.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[cfg(feature = "nats")]
    /// # {
    /// use codecbus_bus::WireVersion;
    ///
    /// assert_eq!(WireVersion::default().number(), 2);
    /// assert_eq!(WireVersion::V1.number(), 1);
    /// # }
    /// ```
    #[must_use]
    #[cfg_attr(not(feature = "nats"), allow(unreachable_pub))]
    pub const fn number(self) -> u8 {
        match self {
            Self::V1 => 1,
            Self::V2 => 2,
        }
    }

    /// [`number`](Self::number) as the text of a header.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::V1 => "1",
            Self::V2 => "2",
        }
    }

    /// Whether this version names the codec in the payload's prefix
    /// (version 2) rather than in the `Codecbus-Codec` header (version 1).
    pub(crate) const fn prefixed(self) -> bool {
        match self {
            Self::V1 => false,
            Self::V2 => true,
        }
    }

    /// The version whose number is `number`, if a node reads it.
    pub(crate) const fn of_number(number: u8) -> Option<Self> {
        match number {
            1 => Some(Self::V1),
            2 => Some(Self::V2),
            _ => None,
        }
    }
}

/// How this node writes what leaves it, the same for messages, replies
/// and failures: in which [`WireVersion`], and above which size a body
/// is compressed (version 2 only).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Writing {
    pub(crate) version: WireVersion,
    /// Bodies over this many bytes leave compressed (`None`: never).
    pub(crate) compress_above: Option<usize>,
}

/// The first byte of a payload that names its codec: `0xC1`, the one byte
/// MessagePack never uses, so no MessagePack body starts with it. The
/// payload is then `0xC1`, the wire version as a positive fixint, the
/// codec name as a MessagePack str, and the body.
///
/// Why in the payload rather than a header: `async-nats` parses every
/// header of every message into a map of allocated strings on both sides,
/// which cost more than the bus's whole routing; a message without user
/// headers travels with none.
pub(crate) const CODEC_MARK: u8 = 0xC1;

/// Header names of the bus; every name starting with [`RESERVED`]
/// (ASCII case-insensitive) belongs to the bus.
pub(crate) const RESERVED: &str = "Codecbus-";
/// `{version} {codec name}`: how a peer in another language may name the
/// codec of a body instead of the payload's prefix ([`CODEC_MARK`]).
pub(crate) const H_CODEC: &str = "Codecbus-Codec";
/// `{version} {FAILURE_KIND} {code}` on a failure reply (the body is the
/// UTF-8 message).
pub(crate) const H_FAILURE: &str = "Codecbus-Failure";
/// `{fingerprint}` (16 hex digits) on a message whose codec's shape some
/// peer cannot read: the shape it was written with, so that such a peer
/// refuses it with a `SHAPE_MISMATCH` (`cluster::shapes`).
pub(crate) const H_SHAPE: &str = "Codecbus-Shape";

/// Whether `name` is one of the bus's own header names.
pub(crate) fn is_reserved(name: &str) -> bool {
    name.get(..RESERVED.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(RESERVED))
}

/// What the bus reads from the headers of an incoming message.
#[derive(Default)]
pub(crate) struct Inbound {
    /// The wire version naming the codec: the payload's prefix's, else
    /// the `Codecbus-Codec` header's. Only that header's: the version of a
    /// `Codecbus-Failure` header is not read, so a message carrying both
    /// decodes by its codec header whatever order the client's header map
    /// iterates in.
    ///
    /// Borrowed in a frame this node makes (its names are static), owned
    /// in one parsed from the wire: a message leaving pays no allocation
    /// for them.
    pub(crate) version: Option<Cow<'static, str>>,
    pub(crate) codec: Option<Cow<'static, str>>,
    /// Whether the payload's codec prefix names the codec (version 1 or
    /// 2), rather than a `Codecbus-Codec` header (the header form, which
    /// is version 1 only).
    pub(crate) prefixed: bool,
    /// Where the body starts in the payload: after the codec prefix, when
    /// the payload has one.
    pub(crate) body_at: usize,
    /// In a frame made here whose body leaves compressed: the payload's
    /// size uncompressed, which must fit the limit too.
    pub(crate) inflated: Option<usize>,
    /// Why the payload cannot be read although it names its codec (a
    /// compressed body that does not decompress, or declares more than
    /// the limit).
    pub(crate) unreadable: Option<String>,
    pub(crate) failure: Option<Cow<'static, str>>,
    pub(crate) failure_code: Option<i32>,
    /// The fingerprint of the shape the body was written with, when its
    /// writer knows a peer that cannot read it (`Codecbus-Shape`).
    pub(crate) shape: Option<u64>,
    pub(crate) user: Headers,
}

/// One message between nodes: what its headers say, and its payload (the
/// codec prefix and the encoded value, or a failure's text).
pub(crate) struct Frame {
    pub(crate) head: Inbound,
    pub(crate) payload: Bytes,
}

impl Frame {
    /// A value encoded by [`encode`] with the codec `codec`, with the
    /// user's headers. In version 1 the codec is named by a header when
    /// the frame leaves ([`Frame::codec_header`]), in version 2 by the
    /// payload's prefix.
    pub(crate) fn encoded(
        codec: &'static str,
        user: Headers,
        encoded: Encoded,
        shape: Option<u64>,
    ) -> Self {
        Self {
            head: Inbound {
                version: Some(Cow::Borrowed(encoded.version.as_str())),
                codec: Some(Cow::Borrowed(codec)),
                prefixed: encoded.version.prefixed(),
                body_at: encoded.body_at,
                inflated: encoded.inflated,
                shape,
                user,
                ..Inbound::default()
            },
            payload: encoded.payload,
        }
    }

    /// A frame from the wire: its headers, read, and its payload, whose
    /// codec prefix, if it has one, names the codec (unless a
    /// `Codecbus-Codec` header already does). A compressed body is
    /// decompressed here, when it declares at most `limit` bytes.
    pub(crate) fn arrived(mut head: Inbound, mut payload: Bytes, limit: usize) -> Self {
        if head.codec.is_none()
            && head.failure.is_none()
            && let Some((version, codec, body_at)) = read_prefix(&payload)
        {
            head.version = Some(version);
            head.codec = codec.map(Cow::Owned);
            head.prefixed = true;
            head.body_at = body_at;
            if payload.get(body_at) == Some(&compress::COMPRESSED) {
                match compress::decompress(&payload[body_at + 1..], limit) {
                    Ok(body) => {
                        payload = Bytes::from(body);
                        head.body_at = 0;
                    }
                    Err(why) => head.unreadable = Some(why),
                }
            }
        }
        Self { head, payload }
    }

    /// The frame as the node receiving it sees it: only what its headers
    /// and payload carry, the codec read back from the payload's prefix
    /// (a compressed body decompressed within `limit`) or from the codec
    /// header a version 1 frame carries, as a frame that crossed NATS.
    pub(crate) fn received(self, limit: usize) -> Self {
        let header = self.codec_header().is_some();
        let Inbound {
            version,
            codec,
            failure,
            failure_code,
            shape,
            user,
            ..
        } = self.head;
        let mut head = Inbound {
            failure,
            failure_code,
            shape,
            user,
            ..Inbound::default()
        };
        if header {
            (head.version, head.codec) = (version, codec);
        }
        Self::arrived(head, self.payload, limit)
    }

    /// The version and codec name of the `Codecbus-Codec` header this
    /// frame carries when it leaves: a body made in version 1 (the header
    /// form), whose payload names no codec.
    pub(crate) fn codec_header(&self) -> Option<(&str, &str)> {
        match (&self.head.version, &self.head.codec) {
            (Some(version), Some(codec)) if !self.head.prefixed && self.head.failure.is_none() => {
                Some((version, codec))
            }
            _ => None,
        }
    }

    /// The body: the encoded value, or a failure's text.
    pub(crate) fn body(&self) -> &[u8] {
        self.payload.get(self.head.body_at..).unwrap_or_default()
    }

    /// The body as a slice of the payload's buffer (a reference count, not
    /// a copy), for decoding that shares it.
    pub(crate) fn body_bytes(&self) -> Bytes {
        if self.head.body_at <= self.payload.len() {
            self.payload.slice(self.head.body_at..)
        } else {
            Bytes::new()
        }
    }

    /// A failure answering a request.
    pub(crate) fn failure(kind: RequestErrorKind, code: i32, message: String) -> Self {
        Self {
            head: Inbound {
                failure: Some(Cow::Borrowed(kind.as_str())),
                failure_code: Some(code),
                ..Inbound::default()
            },
            payload: Bytes::from(message),
        }
    }

    /// Its size as a NATS server counts it against `max_payload`, written
    /// in `version`: the header block ("NATS/1.0\r\n", "name: value\r\n"
    /// each, "\r\n") and the body.
    pub(crate) fn wire_len(&self, version: WireVersion) -> usize {
        let mut len = 0;
        let mut header = |name: &str, value_len: usize| len += name.len() + 2 + value_len + 2;
        if let (Some(kind), Some(code)) = (&self.head.failure, self.head.failure_code) {
            header(
                H_FAILURE,
                version.as_str().len() + 1 + kind.len() + 1 + code.to_string().len(),
            );
        }
        if let Some((version, codec)) = self.codec_header() {
            header(H_CODEC, version.len() + 1 + codec.len());
        }
        if self.head.shape.is_some() {
            header(H_SHAPE, 16);
        }
        for (name, value) in self.head.user.iter() {
            header(name, value.len());
        }
        // No header, no header block: the message goes as a plain PUB.
        let block = if len == 0 { 0 } else { 12 + len };
        block + self.payload.len()
    }
}

/// Checks that `user` headers can travel between nodes: names of
/// printable ASCII without `:` outside the bus's reserved prefix, values
/// without CR or LF and without whitespace at either end (what a NATS
/// header block can carry: a NATS client reading the block trims the
/// whitespace around a value, so a value of `"  spaced  "` would arrive as
/// `"spaced"`). Every cluster transport refuses the same headers.
pub(crate) fn check_user_headers(user: &Headers) -> Result<(), String> {
    for (name, value) in user.iter() {
        if is_reserved(name) {
            return Err(format!(
                "header `{name}` uses the prefix `{RESERVED}`, which the bus reserves for its wire contract"
            ));
        }
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
            return Err(format!(
                "header name {name:?} cannot travel over NATS (printable ASCII without `:` only)"
            ));
        }
        if value.bytes().any(|b| b == b'\r' || b == b'\n') {
            return Err(format!(
                "the value of header `{name}` cannot travel over NATS (no CR or LF)"
            ));
        }
        // `char::is_whitespace`, as `async-nats` trims a value it reads.
        if value.starts_with(char::is_whitespace) || value.ends_with(char::is_whitespace) {
            return Err(format!(
                "the value of header `{name}` cannot travel over NATS (no whitespace at its start or end: NATS clients trim it)"
            ));
        }
    }
    Ok(())
}

/// Checks that the codec name `name` can travel in the `Codecbus-Codec`
/// header, as version 1 names it: no CR or LF, no whitespace at its end
/// (a NATS client trims the value it reads). Version 2 carries any name
/// in the payload.
fn check_codec_header(name: &str) -> Result<(), String> {
    if name.bytes().any(|b| b == b'\r' || b == b'\n') || name.ends_with(char::is_whitespace) {
        return Err(format!(
            "codec name {name:?} cannot travel in a NATS header, as wire version 1 names it (no CR or LF, no whitespace at its end): write version 2 (NatsOptions::wire_version), or rename the codec"
        ));
    }
    Ok(())
}

/// Why an outbound message did not leave.
pub(crate) enum Refuse {
    Codec(String),
    TooLarge(String),
    Transport(String),
}

impl Refuse {
    /// The operation's error for `out`, which did not leave: its address,
    /// and its body handed back.
    pub(crate) fn into_error<K: crate::base::error::OperationKind>(
        self,
        out: Outbound,
    ) -> crate::base::error::Error<K> {
        let (kind, message) = match self {
            Self::Codec(m) => (K::CODEC, m),
            Self::TooLarge(m) => (K::PAYLOAD_TOO_LARGE, m),
            Self::Transport(m) => (K::TRANSPORT, m),
        };
        crate::base::error::Error::new(kind, message)
            .with_address(out.address)
            .with_body(out.body)
    }
}

/// The frame of an outbound message: its codec (refused without one), its
/// user headers (refused when they cannot travel) and its encoded body,
/// written as `writing` says (the wire version, compression). The
/// transport checks the size and sends it.
pub(crate) fn frame(out: &Outbound, writing: Writing) -> Result<Frame, Refuse> {
    let Some(codec) = out.codec else {
        return Err(Refuse::Codec(format!(
            "`{}` has no codec registered, so it cannot leave the process (derive MessageCodec on a non-generic type, or register one with EventBus::register_codec); to address {}",
            out.type_name, out.address
        )));
    };
    check_user_headers(&out.headers)
        .and_then(|()| {
            if writing.version.prefixed() {
                Ok(())
            } else {
                check_codec_header(codec.name())
            }
        })
        .map_err(|e| Refuse::Transport(format!("message to address {}: {e}", out.address)))?;
    let encoded = encode(&codec, &out.body, writing).map_err(|e| {
        Refuse::Codec(format!(
            "cannot encode a `{}` body (codec {:?}) for address {}: {e}",
            codec.type_name(),
            codec.name(),
            out.address
        ))
    })?;
    if let Some(probe) = &out.probe {
        probe.bytes_written(encoded.body_len());
    }
    if out.traced {
        spans::body_size(encoded.body_len());
    }
    Ok(Frame::encoded(
        codec.name(),
        out.headers.clone(),
        encoded,
        out.shape,
    ))
}

/// The error for `frame`, a message or a reply, when it is larger than
/// `max`, the `max_payload` of `limit` (who sets it, named in the
/// message).
pub(crate) fn too_large(
    what: &str,
    address: &str,
    frame: &Frame,
    max: usize,
    limit: &str,
) -> Option<String> {
    // A body's frame states its own version; the one given here would
    // only be a failure's.
    let total = frame.wire_len(WireVersion::default());
    if total > max {
        let body = frame.body().len();
        return Some(format!(
            "{what} to address {address} is {total} bytes ({body} of body, {} of codec name and headers), over {limit}'s max_payload of {max} bytes",
            total - body
        ));
    }
    // A compressed body must fit uncompressed too: that is what the
    // receiving node allows it to inflate to.
    let inflated = frame.head.inflated?;
    (inflated > max).then(|| {
        format!(
            "{what} to address {address} is {total} bytes compressed but {inflated} bytes of payload uncompressed, over {limit}'s max_payload of {max} bytes (which applies to the uncompressed body too)"
        )
    })
}

/// Encoding buffers up to this capacity are kept for the next message on
/// the same thread; a larger one leaves with its message.
const KEEP_SCRATCH: usize = 64 * 1024;

thread_local! {
    /// The encoding buffer of this thread, empty between two messages.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// A payload made by [`encode`]: in version 2, the codec prefix, then the
/// body (or its compressed form); in version 1, the body alone.
pub(crate) struct Encoded {
    version: WireVersion,
    payload: Bytes,
    body_at: usize,
    /// The encoded value's size, without the prefix, uncompressed.
    body_len: usize,
    /// The payload's size uncompressed, when it is compressed.
    inflated: Option<usize>,
}

impl Encoded {
    /// The encoded value's size, without the prefix, uncompressed.
    fn body_len(&self) -> usize {
        self.body_len
    }

    fn plain(version: WireVersion, payload: Bytes, body_at: usize) -> Self {
        Self {
            version,
            body_len: payload.len() - body_at,
            payload,
            body_at,
            inflated: None,
        }
    }
}

/// Encodes `body` with `codec` as `writing` says: in version 2 after the
/// codec prefix ([`CODEC_MARK`], the version byte, the name), a body over
/// `compress_above` bytes compressed (when that makes the payload
/// smaller); in version 1 the body alone, never compressed (the codec is
/// named by a header, [`Frame::codec_header`]). Into a buffer of exactly
/// their size.
///
/// The encoder writes into a buffer reused from message to message and the
/// result is copied out in one allocation of the final size, instead of
/// growing a fresh vector from empty (an allocation and seven
/// reallocations for a body of 1 KiB, each one possibly copying what was
/// written so far). A body larger than
/// [`KEEP_SCRATCH`] takes the buffer along instead of being copied.
pub(crate) fn encode(
    codec: &CodecRegistration,
    body: &AnyBody,
    writing: Writing,
) -> Result<Encoded, codecbus_core::EncodeError> {
    let version = writing.version;
    // Version 1 names the codec in a header and has no compressed form.
    let prefixed = version.prefixed();
    let compress_above = writing.compress_above.filter(|_| prefixed);
    let mut buf = SCRATCH.take();
    buf.clear();
    if prefixed {
        buf.extend_from_slice(&[CODEC_MARK, version.number()]);
    }
    let mut w = Writer::from_vec(buf);
    let named = if prefixed {
        w.write_str(codec.name())
    } else {
        Ok(())
    };
    let result = named.and_then(|()| {
        let body_at = w.len();
        codec.encode(&**body, &mut w).map(|()| body_at)
    });
    let buf = w.into_vec();
    let compressed = match (&result, compress_above) {
        (Ok(body_at), Some(above)) if buf.len() - body_at > above => {
            compress::compress(&buf, *body_at).map(|payload| Encoded {
                version,
                body_len: buf.len() - body_at,
                inflated: Some(buf.len()),
                payload: Bytes::from(payload),
                body_at: *body_at,
            })
        }
        _ => None,
    };
    if let Some(compressed) = compressed {
        if buf.capacity() <= KEEP_SCRATCH {
            SCRATCH.set(buf);
        }
        return Ok(compressed);
    }
    if buf.capacity() > KEEP_SCRATCH {
        return result.map(|body_at| Encoded::plain(version, Bytes::from(buf), body_at));
    }
    let encoded =
        result.map(|body_at| Encoded::plain(version, Bytes::copy_from_slice(&buf), body_at));
    SCRATCH.set(buf);
    encoded
}

/// Reads the codec prefix at the start of `payload`, if it has one: the
/// wire version (as text), the codec name (`None` when it is not a UTF-8
/// MessagePack str) and where the body starts. Versions 1 and 2 write
/// the same prefix (but for the version byte); a prefix of another
/// version is returned with no name: the version alone says why the
/// message can't be read.
pub(crate) fn read_prefix(payload: &[u8]) -> Option<(Cow<'static, str>, Option<String>, usize)> {
    let [CODEC_MARK, version, ..] = *payload else {
        return None;
    };
    let version = match WireVersion::of_number(version) {
        Some(known) => Cow::Borrowed(known.as_str()),
        None => return Some((Cow::Owned(version.to_string()), None, payload.len())),
    };
    let mut r = codecbus_core::Reader::new(&payload[2..]);
    match r.read_str() {
        Ok(name) => Some((version, Some(name.to_owned()), 2 + r.position())),
        Err(_) => Some((version, None, payload.len())),
    }
}

/// What a node reads from a payload that arrived without headers: see
/// [`read_payload`].
#[cfg(any(fuzzing, test))]
#[cfg_attr(not(fuzzing), allow(unreachable_pub))]
#[doc(hidden)]
#[derive(Debug)]
pub struct PayloadRead {
    /// The wire version of the codec prefix; `None` without a prefix.
    pub version: Option<String>,
    /// The codec the prefix names; `None` without a prefix, with another
    /// version, or when no MessagePack str follows the version.
    pub codec: Option<String>,
    /// The body, decompressed when it came compressed; why it cannot be
    /// read otherwise (a compressed body declaring more than the limit,
    /// or whose block does not decompress to the size it declares).
    pub body: Result<Vec<u8>, String>,
}

/// Reads `payload` as a node reads a message without headers: the codec
/// prefix, then the body or its compressed form, decompressed when it
/// declares at most `limit` bytes (nothing larger is allocated). For the
/// fuzz targets (`fuzz/`); not part of the API.
#[cfg(any(fuzzing, test))]
#[cfg_attr(not(fuzzing), allow(unreachable_pub))]
#[doc(hidden)]
pub fn read_payload(payload: &[u8], limit: usize) -> PayloadRead {
    let frame = Frame::arrived(Inbound::default(), Bytes::copy_from_slice(payload), limit);
    let body = match frame.head.unreadable {
        Some(why) => Err(why),
        None => Ok(frame.body().to_vec()),
    };
    PayloadRead {
        version: frame.head.version.map(Cow::into_owned),
        codec: frame.head.codec.map(Cow::into_owned),
        body,
    }
}

/// The payload a node writes for `body` with `codec` in the default wire
/// version: the codec prefix, then the body, compressed when it is over
/// `compress_above` bytes and that makes the payload smaller. For the
/// fuzz targets (`fuzz/`); not part of the API.
///
/// # Errors
///
/// When the codec cannot encode `body` (it is not the codec's type, or
/// the codec refuses the value).
#[cfg(any(fuzzing, test))]
#[cfg_attr(not(fuzzing), allow(unreachable_pub))]
#[doc(hidden)]
pub fn write_payload(
    codec: &CodecRegistration,
    body: &AnyBody,
    compress_above: Option<usize>,
) -> Result<Vec<u8>, codecbus_core::EncodeError> {
    let writing = Writing {
        compress_above,
        ..Writing::default()
    };
    encode(codec, body, writing).map(|encoded| Vec::from(encoded.payload))
}

/// The frame answering a request with the reply `env`: its body encoded
/// with its type's codec, its headers checked; or the failure to send in
/// its place (the kind and text).
pub(crate) fn reply_frame(
    inner: &Arc<dyn Node>,
    address: &str,
    env: &ReplyEnvelope,
    writing: Writing,
) -> Result<Frame, (RequestErrorKind, String)> {
    let type_id = Any::type_id(&*env.body);
    let Some(codec) = inner.codec_by_type(type_id) else {
        return Err((
            RequestErrorKind::Codec,
            format!(
                "Reply from address {address}: `{}` has no codec registered on the replying node, so it cannot leave the process",
                env.type_name
            ),
        ));
    };
    let encoded = encode(&codec, &env.body, writing).map_err(|e| {
        (
            RequestErrorKind::Codec,
            format!(
                "Reply from address {address}: cannot encode with codec {:?}: {e}",
                codec.name()
            ),
        )
    })?;
    check_user_headers(&env.headers)
        .and_then(|()| {
            if writing.version.prefixed() {
                Ok(())
            } else {
                check_codec_header(codec.name())
            }
        })
        .map_err(|e| {
            (
                RequestErrorKind::Transport,
                format!("Reply from address {address}: {e}"),
            )
        })?;
    let shape = inner.peers().tag(codec.name());
    Ok(Frame::encoded(
        codec.name(),
        env.headers.clone(),
        encoded,
        shape,
    ))
}

/// The frame answering a request whose consumer dropped it unanswered.
pub(crate) fn no_reply_frame(address: &str) -> Frame {
    Frame::failure(
        RequestErrorKind::RecipientFailure,
        NO_FAILURE_CODE,
        format!("No reply: the consumer at address {address} dropped the message without replying"),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use codecbus_core::{AnyBody, CodecRegistration};

    use super::{read_payload, write_payload};

    const STRING: CodecRegistration = CodecRegistration::of::<String>("string");

    fn written(value: &str, above: usize) -> Vec<u8> {
        let body: AnyBody = Arc::new(value.to_string());
        write_payload(&STRING, &body, Some(above)).unwrap()
    }

    #[test]
    fn a_compressed_payload_reads_back_within_its_size_and_not_under_it() {
        let value = "abc".repeat(200);
        let body = codecbus_core::to_vec(&value).unwrap();
        let payload = written(&value, 64);
        assert_eq!(&payload[..10], b"\xc1\x02\xa6string\xc1");
        assert!(payload.len() < body.len());

        let read = read_payload(&payload, body.len());
        assert_eq!(read.version.as_deref(), Some("2"));
        assert_eq!(read.codec.as_deref(), Some("string"));
        assert_eq!(read.body.as_deref(), Ok(body.as_slice()));
        let why = read_payload(&payload, body.len() - 1).body.unwrap_err();
        assert!(why.contains("over the limit"), "{why}");
    }

    #[test]
    fn a_plain_payload_and_one_without_a_prefix_are_read_as_they_are() {
        let payload = written("xyz", 64);
        assert_eq!(payload, b"\xc1\x02\xa6string\xa3xyz");
        assert_eq!(
            read_payload(&payload, 0).body.as_deref(),
            Ok(&b"\xa3xyz"[..])
        );
        let bare = read_payload(b"\xa3xyz", 0);
        assert_eq!((bare.version, bare.codec), (None, None));
        assert_eq!(bare.body.as_deref(), Ok(&b"\xa3xyz"[..]));
    }
}
