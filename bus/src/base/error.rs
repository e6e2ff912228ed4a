//! Errors: one type per operation, each with a matchable kind.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

use codecbus_core::AnyBody;

/// The failure of a bus operation: a matchable [`kind`](Error::kind), a
/// message in Vert.x's words, and where one exists the underlying cause
/// ([`source`](StdError::source)).
///
/// Use it through the per-operation aliases [`SendError`],
/// [`PublishError`] and [`RequestError`].
///
/// Where the message was not delivered at all (no handlers, a full queue, a
/// type mismatch, dropped by an interceptor), the error hands the body back:
/// [`into_body`](Error::into_body).
///
/// # Examples
///
/// ```
/// use codecbus_bus::{EventBus, RequestErrorKind};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let bus = EventBus::new();
/// let err = bus.request::<String>("nobody", "ping".to_string()).await.unwrap_err();
/// assert_eq!(err.kind(), RequestErrorKind::NoHandlers);
/// assert_eq!(err.to_string(), "No handlers for address nobody");
/// assert_eq!(err.into_body::<String>().as_deref().map(String::as_str), Some("ping"));
/// # }
/// ```
pub struct Error<K> {
    kind: K,
    inner: Box<ErrorDetails>,
}

struct ErrorDetails {
    message: String,
    address: Option<Arc<str>>,
    failure_code: i32,
    source: Option<Box<dyn StdError + Send + Sync + 'static>>,
    body: Option<AnyBody>,
}

/// A failed [`send`](crate::EventBus::send).
pub type SendError = Error<SendErrorKind>;
/// A failed [`publish`](crate::EventBus::publish).
pub type PublishError = Error<PublishErrorKind>;
/// A failed [`request`](crate::EventBus::request).
pub type RequestError = Error<RequestErrorKind>;
/// A reply ([`Message::reply`](crate::Message::reply)) or failure
/// ([`Message::fail`](crate::Message::fail)) that did not reach a
/// requester.
pub type ReplyError = Error<ReplyErrorKind>;

/// Why a [`send`](crate::EventBus::send) failed. The message was not
/// delivered in every case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SendErrorKind {
    /// No consumer is registered at the address.
    NoHandlers,
    /// The bus was shut down ([`EventBus::shutdown`](crate::EventBus::shutdown))
    /// and no consumer registered since takes the address.
    ShutDown,
    /// Every consumer at the address expects another body type.
    TypeMismatch,
    /// Every consumer's queue that could take the message is full.
    QueueFull,
    /// Every consumer that takes the body type refused the body: it does
    /// not conform to the consumer's spec
    /// (`ConsumerOptions::spec` (feature `json`));
    /// the message lists the violations.
    Invalid,
    /// An outbound interceptor dropped the message.
    Dropped,
    /// The body could not be encoded for a remote transport (never for
    /// local delivery, which does not encode).
    Codec,
    /// The encoded message is larger than the NATS server accepts
    /// (`max_payload`); the message names both sizes.
    PayloadTooLarge,
    /// The cluster transport could not take the message: the NATS
    /// connection is down or closed, the address or a header cannot
    /// travel over NATS, or the NATS server refused a message to the same
    /// subject moments ago for lack of permission (see
    /// [`Metrics::remote_denied`](crate::Metrics::remote_denied)).
    /// [`source`](StdError::source) holds the cause when there is one.
    Transport,
}

/// Why a [`publish`](crate::EventBus::publish) failed. In every case no
/// consumer received the message; a publish that reached some consumers
/// and was refused by others succeeds, with a
/// [`PublishReport`](crate::PublishReport) that counts both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PublishErrorKind {
    /// No consumer is registered at the address.
    NoHandlers,
    /// The bus was shut down and no consumer registered since takes the
    /// address (see [`SendErrorKind::ShutDown`]).
    ShutDown,
    /// No consumer at the address takes this body type.
    TypeMismatch,
    /// Every consumer that takes this body type had a full queue: none
    /// got the message (counted in [`Metrics::refused`](crate::Metrics::refused)).
    QueueFull,
    /// Every consumer that takes this body type refused the body: it does
    /// not conform to their spec (see [`SendErrorKind::Invalid`]). Counted
    /// in [`Metrics::invalid`](crate::Metrics::invalid), once per consumer.
    Invalid,
    /// An outbound interceptor dropped the message.
    Dropped,
    /// The body could not be encoded for a remote transport.
    Codec,
    /// The encoded message is larger than the NATS server accepts
    /// (`max_payload`); the message names both sizes.
    PayloadTooLarge,
    /// The cluster transport could not take the message (see
    /// [`SendErrorKind::Transport`]).
    Transport,
}

/// Why a [`request`](crate::EventBus::request) failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RequestErrorKind {
    /// No consumer is registered at the address (reported at once, not
    /// after the timeout). Vert.x `NO_HANDLERS`.
    NoHandlers,
    /// The bus was shut down and no consumer registered since takes the
    /// address (see [`SendErrorKind::ShutDown`]).
    ShutDown,
    /// No reply came within the timeout. Vert.x `TIMEOUT`.
    Timeout,
    /// The recipient failed: it called [`Message::fail`](crate::Message::fail),
    /// its handler returned an error or panicked, or the message was dropped
    /// without a reply; or every consumer refused the body, which does not
    /// conform to its spec (the message lists the violations, see
    /// `ConsumerOptions::spec` (feature `json`)).
    /// Vert.x `RECIPIENT_FAILURE`;
    /// [`Error::failure_code`] holds the code given to `fail`.
    RecipientFailure,
    /// The consumer expects another body type, or the reply is not of the
    /// type the requester asked for.
    TypeMismatch,
    /// Every consumer's queue that could take the request is full.
    QueueFull,
    /// An outbound interceptor dropped the request.
    Dropped,
    /// A body could not be encoded or decoded by a remote transport, or
    /// the receiving node does not know its codec (the message names it).
    Codec,
    /// The body (the request, or its reply) was written with a shape of
    /// its codec that the reading node cannot read: the nodes learned it
    /// when they met ([`EventBus::shape_report`](crate::EventBus::shape_report)),
    /// and the message names the codec, the field and the rule. Not sent
    /// by nodes built before this kind: there it is a `Codec` error deeper
    /// in the body, or a wrong value.
    ShapeMismatch,
    /// The encoded request is larger than the NATS server accepts
    /// (`max_payload`); the message names both sizes.
    PayloadTooLarge,
    /// The cluster transport could not carry the request or its reply (see
    /// [`SendErrorKind::Transport`]); a request made while the NATS
    /// connection is down fails with this kind at once, as does one the
    /// NATS server refuses because this connection may not publish to the
    /// address's subject (see
    /// [`Metrics::remote_denied`](crate::Metrics::remote_denied)).
    Transport,
}

/// Why a [`Message::reply`](crate::Message::reply),
/// [`reply_with`](crate::Message::reply_with) or
/// [`fail`](crate::Message::fail) did not reach a requester. Ignoring it
/// is often right (Vert.x ignores a reply to a message that expects none);
/// the bus just will not do so silently.
///
/// It is also the handler's own error type when a handler mixes answers
/// and errors of its own: a `String`, a `&str` or a boxed error converts
/// into it ([`Failed`](ReplyErrorKind::Failed)), so `?` and
/// `return m.fail(..)` share one `Result<(), ReplyError>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReplyErrorKind {
    /// The message expects no reply: it came from `send` or `publish`, or
    /// is a reply that ended its conversation.
    NoReplyExpected,
    /// The message was answered already (by `reply` or `fail`).
    AlreadyAnswered,
    /// The requester stopped waiting: its request timed out or it was
    /// cancelled.
    RequesterGone,
    /// An outbound interceptor dropped the reply.
    Dropped,
    /// [`fail`](crate::Message::fail) was given `-1`, the code the wire
    /// (and Vert.x) reserve for "no code": the requester could not tell it
    /// from a failure without one. Nothing was sent; a handler that
    /// returns this error fails the request with its text.
    ReservedCode,
    /// The handler's own error, converted with `?` or `.into()` from a
    /// `String`, a `&str` or a boxed error: returned from the handler, it
    /// fails a pending request with its text
    /// ([`RecipientFailure`](RequestErrorKind::RecipientFailure)), as any
    /// `Err` a handler returns does.
    Failed,
}

/// An error kind's one spelling, for code generic over the kinds.
pub(crate) trait KindName: Copy {
    /// The kind's `as_str`.
    fn name(self) -> &'static str;
}

/// Gives each error kind its one spelling: `as_str` and `Display`.
macro_rules! kind_names {
    ($($kind:ident { $($variant:ident => $name:literal),* $(,)? })*) => {$(
        impl $kind {
            /// The kind's name, spelled the same in span outcomes, metric
            /// labels, the wire's failure header and `Display`: Vert.x's
            /// `ReplyFailure` name where it has one (`NO_HANDLERS`,
            /// `TIMEOUT`, `RECIPIENT_FAILURE`), the same style otherwise.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }

        }

        impl fmt::Display for $kind {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl KindName for $kind {
            fn name(self) -> &'static str {
                self.as_str()
            }
        }
    )*};
}

kind_names! {
    SendErrorKind {
        NoHandlers => "NO_HANDLERS",
        ShutDown => "SHUT_DOWN",
        TypeMismatch => "TYPE_MISMATCH",
        QueueFull => "QUEUE_FULL",
        Invalid => "INVALID",
        Dropped => "DROPPED",
        Codec => "CODEC",
        PayloadTooLarge => "PAYLOAD_TOO_LARGE",
        Transport => "TRANSPORT",
    }
    PublishErrorKind {
        NoHandlers => "NO_HANDLERS",
        ShutDown => "SHUT_DOWN",
        TypeMismatch => "TYPE_MISMATCH",
        QueueFull => "QUEUE_FULL",
        Invalid => "INVALID",
        Dropped => "DROPPED",
        Codec => "CODEC",
        PayloadTooLarge => "PAYLOAD_TOO_LARGE",
        Transport => "TRANSPORT",
    }
    RequestErrorKind {
        NoHandlers => "NO_HANDLERS",
        ShutDown => "SHUT_DOWN",
        Timeout => "TIMEOUT",
        RecipientFailure => "RECIPIENT_FAILURE",
        TypeMismatch => "TYPE_MISMATCH",
        QueueFull => "QUEUE_FULL",
        Dropped => "DROPPED",
        Codec => "CODEC",
        ShapeMismatch => "SHAPE_MISMATCH",
        PayloadTooLarge => "PAYLOAD_TOO_LARGE",
        Transport => "TRANSPORT",
    }
    ReplyErrorKind {
        NoReplyExpected => "NO_REPLY_EXPECTED",
        AlreadyAnswered => "ALREADY_ANSWERED",
        RequesterGone => "REQUESTER_GONE",
        Dropped => "DROPPED",
        ReservedCode => "RESERVED_CODE",
        Failed => "FAILED",
    }
}

impl RequestErrorKind {
    /// Every kind, to read one back from its name.
    const ALL: [Self; 11] = [
        Self::NoHandlers,
        Self::ShutDown,
        Self::Timeout,
        Self::RecipientFailure,
        Self::TypeMismatch,
        Self::QueueFull,
        Self::Dropped,
        Self::Codec,
        Self::ShapeMismatch,
        Self::PayloadTooLarge,
        Self::Transport,
    ];

    /// The kind named `name` ([`as_str`](Self::as_str)'s spelling): what a
    /// failure that crossed the cluster says it was.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

/// Vert.x's `ReplyFailure` (with Vert.x's numbering as discriminants):
/// what the Vert.x bridge says a failure was. Users match on the finer
/// [`RequestErrorKind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(not(feature = "bridge"), allow(dead_code))]
pub(crate) enum ReplyFailure {
    /// `TIMEOUT` (0).
    Timeout = 0,
    /// `NO_HANDLERS` (1).
    NoHandlers = 1,
    /// `RECIPIENT_FAILURE` (2).
    RecipientFailure = 2,
    /// `ERROR` (3): anything else (type mismatch, full queue, codec).
    Error = 3,
}

/// The failure code on the wire of errors that did not come from
/// [`Message::fail`](crate::Message::fail) (Vert.x uses `-1` too);
/// [`RequestError::failure_code`] says `None` for them.
pub(crate) const NO_FAILURE_CODE: i32 = -1;

impl<K: Copy> Error<K> {
    #[cold]
    pub(crate) fn new(kind: K, message: String) -> Self {
        Self {
            kind,
            inner: Box::new(ErrorDetails {
                message,
                address: None,
                failure_code: NO_FAILURE_CODE,
                source: None,
                body: None,
            }),
        }
    }

    pub(crate) fn with_address(mut self, address: Arc<str>) -> Self {
        self.inner.address = Some(address);
        self
    }

    pub(crate) fn with_body(mut self, body: AnyBody) -> Self {
        self.inner.body = Some(body);
        self
    }

    pub(crate) fn with_code(mut self, code: i32) -> Self {
        self.inner.failure_code = code;
        self
    }

    // Used by remote transports (codec and connection causes).
    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    pub(crate) fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.inner.source = Some(Box::new(source));
        self
    }

    /// What went wrong, to match on.
    pub fn kind(&self) -> K {
        self.kind
    }

    /// The message text (the same as `Display`).
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// The address the message was sent to, when known.
    pub fn address(&self) -> Option<&str> {
        self.inner.address.as_deref()
    }

    /// The body that was not delivered, when the message was refused before
    /// reaching any consumer and its type is `T`.
    pub fn into_body<T: Send + Sync + 'static>(self) -> Option<Arc<T>> {
        self.inner.body?.downcast::<T>().ok()
    }

    pub(crate) fn map_kind<L: Copy>(self, f: impl FnOnce(K) -> L) -> Error<L> {
        Error {
            kind: f(self.kind),
            inner: self.inner,
        }
    }
}

impl Error<RequestErrorKind> {
    /// The Vert.x failure type of this error, for the wire and the bridge.
    #[cfg_attr(not(feature = "bridge"), allow(dead_code))]
    pub(crate) fn failure_type(&self) -> ReplyFailure {
        match self.kind {
            RequestErrorKind::Timeout => ReplyFailure::Timeout,
            RequestErrorKind::NoHandlers | RequestErrorKind::ShutDown => ReplyFailure::NoHandlers,
            RequestErrorKind::RecipientFailure => ReplyFailure::RecipientFailure,
            _ => ReplyFailure::Error,
        }
    }

    /// The code given to [`Message::fail`](crate::Message::fail) (by a
    /// handler here or on another node), `None` for every other failure.
    pub fn failure_code(&self) -> Option<i32> {
        (self.inner.failure_code != NO_FAILURE_CODE).then_some(self.inner.failure_code)
    }

    /// The code on the wire: [`failure_code`](Self::failure_code) or
    /// [`NO_FAILURE_CODE`].
    pub(crate) fn wire_failure_code(&self) -> i32 {
        self.inner.failure_code
    }
}

impl<K: fmt::Debug> fmt::Debug for Error<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.kind)
            .field("message", &self.inner.message);
        if self.inner.failure_code != NO_FAILURE_CODE {
            d.field("failure_code", &self.inner.failure_code);
        }
        if let Some(source) = &self.inner.source {
            d.field("source", source);
        }
        d.finish_non_exhaustive()
    }
}

impl<K> fmt::Display for Error<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.message)
    }
}

impl<K: fmt::Debug> StdError for Error<K> {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}

/// A handler's error text as its [`ReplyError`]
/// ([`Failed`](ReplyErrorKind::Failed)).
///
/// # Examples
///
/// ```
/// use codecbus_bus::{EventBus, Message, RequestErrorKind};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let bus = EventBus::new();
/// let _c = bus.consumer("parse", |m: Message<String>| async move {
///     if m.body().is_empty() {
///         return m.fail(400, "empty");
///     }
///     let n: u32 = m.body().parse().map_err(|e| format!("not a number: {e}"))?;
///     m.reply(n * 2)
/// });
/// let err = bus.request::<u32>("parse", "x".to_string()).await.unwrap_err();
/// assert_eq!(err.kind(), RequestErrorKind::RecipientFailure);
/// assert_eq!(err.to_string(), "not a number: invalid digit found in string");
/// let err = bus.request::<u32>("parse", String::new()).await.unwrap_err();
/// assert_eq!((err.failure_code(), err.to_string().as_str()), (Some(400), "empty"));
/// # }
/// ```
impl From<String> for ReplyError {
    #[cold]
    fn from(message: String) -> Self {
        Self::new(ReplyErrorKind::Failed, message)
    }
}

/// A handler's error text as its [`ReplyError`]
/// ([`Failed`](ReplyErrorKind::Failed)).
impl From<&str> for ReplyError {
    #[cold]
    fn from(message: &str) -> Self {
        Self::new(ReplyErrorKind::Failed, message.to_owned())
    }
}

/// A handler's boxed error as its [`ReplyError`]
/// ([`Failed`](ReplyErrorKind::Failed)), with the error's text.
impl From<Box<dyn StdError + Send + Sync + 'static>> for ReplyError {
    #[cold]
    fn from(error: Box<dyn StdError + Send + Sync + 'static>) -> Self {
        Self::new(ReplyErrorKind::Failed, error.to_string())
    }
}

impl From<PublishErrorKind> for SendErrorKind {
    fn from(kind: PublishErrorKind) -> Self {
        match kind {
            PublishErrorKind::NoHandlers => Self::NoHandlers,
            PublishErrorKind::ShutDown => Self::ShutDown,
            PublishErrorKind::TypeMismatch => Self::TypeMismatch,
            PublishErrorKind::QueueFull => Self::QueueFull,
            PublishErrorKind::Invalid => Self::Invalid,
            PublishErrorKind::Dropped => Self::Dropped,
            PublishErrorKind::Codec => Self::Codec,
            PublishErrorKind::PayloadTooLarge => Self::PayloadTooLarge,
            PublishErrorKind::Transport => Self::Transport,
        }
    }
}

impl From<PublishError> for SendError {
    fn from(err: PublishError) -> Self {
        err.map_kind(SendErrorKind::from)
    }
}

/// Why a codec could not be registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RegistryErrorKind {
    /// A codec is already registered under this name.
    NameTaken,
    /// Two different Rust types use one codec name.
    NameConflict,
    /// The Rust type already has a codec under another name.
    TypeTaken,
}

/// A codec registration that was refused.
///
/// # Examples
///
/// ```
/// use codecbus_bus::{EventBus, RegistryErrorKind};
/// use codecbus_core::CodecRegistration;
///
/// let bus = EventBus::new();
/// bus.register_codec(CodecRegistration::of::<Vec<u32>>("numbers")).unwrap();
/// let err = bus.register_codec(CodecRegistration::of::<Vec<u32>>("numbers")).unwrap_err();
/// assert_eq!(err.kind(), RegistryErrorKind::NameTaken);
/// assert_eq!(err.to_string(), "Already a codec registered with name numbers");
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct RegistryError {
    kind: RegistryErrorKind,
    message: String,
}

impl RegistryError {
    #[cold]
    pub(crate) fn new(kind: RegistryErrorKind, message: String) -> Self {
        Self { kind, message }
    }

    /// What went wrong.
    pub fn kind(&self) -> RegistryErrorKind {
        self.kind
    }
}

/// Why a [`flush`](crate::EventBus::flush) did not reach the cluster's
/// server: the bus is closed, or the connection is down (the message says
/// which). Nothing is lost by it: the subscription changes are made when
/// the connection is back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FlushError {
    message: String,
}

impl FlushError {
    #[cold]
    pub(crate) fn new(message: String) -> Self {
        Self { message }
    }
}

/// What a [`shutdown`](crate::EventBus::shutdown) could not finish within
/// its deadline: the messages it discarded unhandled and the consumers it
/// stopped while they were still at work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "shutdown deadline of {deadline:?} passed: {discarded} message(s) discarded unhandled, consumers stopped at {stopped:?}"
)]
pub struct ShutdownError {
    deadline: std::time::Duration,
    discarded: u64,
    stopped: Vec<String>,
}

impl ShutdownError {
    #[cold]
    pub(crate) fn new(deadline: std::time::Duration, discarded: u64, stopped: Vec<String>) -> Self {
        Self {
            deadline,
            discarded,
            stopped,
        }
    }

    /// How many queued messages were discarded without being handled (a
    /// request among them failed at once).
    pub fn discarded(&self) -> u64 {
        self.discarded
    }

    /// The addresses of the consumers stopped at the deadline, each once:
    /// their handler was still running, or their queue not yet empty.
    pub fn stopped(&self) -> &[String] {
        &self.stopped
    }
}

/// Why an [`EventBus`](crate::EventBus) could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BuildErrorKind {
    /// The codec registrations conflict (two types under one name, or one
    /// type under two names); the cause is the [`RegistryError`].
    CodecConflict,
    /// A setting is invalid: a trace sampling share outside 0 to 1, a
    /// subject prefix that is not a NATS subject, a server URL that does
    /// not parse, an unreadable credentials, certificate or key file.
    /// (A NATS builder finished with `build` instead of `connect` is a
    /// compile error, not this.)
    Config,
    /// The NATS server could not be reached or refused the connection
    /// (authentication, TLS); the source is the `async-nats` error.
    Connect,
}

/// A failed [`EventBusBuilder::build`](crate::EventBusBuilder::build) or
/// `connect`.
///
/// `Display` says what failed and why, cause included: the
/// [`RegistryError`] naming the conflicting types, the NATS client's
/// error. [`cause`](BuildError::cause) hands that cause over as a value
/// (to downcast it); [`source`](StdError::source) goes on from the cause's
/// own source, so a report that walks the chain (`anyhow`'s `{:#}`) shows
/// each text once.
///
/// # Examples
///
/// ```
/// use codecbus_bus::{BuildErrorKind, EventBus, RegistryError};
/// use codecbus_core::CodecRegistration;
///
/// let err = EventBus::builder()
///     .codec(CodecRegistration::of::<Vec<u32>>("numbers"))
///     .codec(CodecRegistration::of::<Vec<u64>>("numbers"))
///     .build()
///     .unwrap_err();
/// assert_eq!(err.kind(), BuildErrorKind::CodecConflict);
/// let text = err.to_string();
/// assert!(text.starts_with("cannot build the event bus: the codec registrations conflict: "));
/// assert!(text.contains("\"numbers\"") && text.contains("Vec<u32>") && text.contains("Vec<u64>"));
/// let cause = err.cause().and_then(|c| c.downcast_ref::<RegistryError>()).unwrap();
/// assert!(text.ends_with(&cause.to_string()));
/// ```
pub struct BuildError {
    kind: BuildErrorKind,
    message: String,
    source: Option<Box<dyn StdError + Send + Sync + 'static>>,
}

impl BuildError {
    /// The registrations conflict: the message says so, the
    /// [`RegistryError`] (which names the types and codec names) is the
    /// source, and is not repeated in the message.
    pub(crate) fn codec(source: RegistryError) -> Self {
        Self {
            kind: BuildErrorKind::CodecConflict,
            message: "the codec registrations conflict".to_owned(),
            source: Some(Box::new(source)),
        }
    }

    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    #[cold]
    pub(crate) fn new(
        kind: BuildErrorKind,
        message: String,
        source: Option<Box<dyn StdError + Send + Sync + 'static>>,
    ) -> Self {
        Self {
            kind,
            message,
            source,
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> BuildErrorKind {
        self.kind
    }

    /// The cause of the failure, when there is one: the [`RegistryError`]
    /// of a [`CodecConflict`](BuildErrorKind::CodecConflict), the NATS
    /// client's error of a [`Connect`](BuildErrorKind::Connect). Its text
    /// is part of this error's `Display` already.
    pub fn cause(&self) -> Option<&(dyn StdError + Send + Sync + 'static)> {
        self.source.as_deref()
    }
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuildError")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .field("source", &self.source)
            .finish()
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot build the event bus: {}", self.message)?;
        if let Some(cause) = &self.source {
            write!(f, ": {cause}")?;
        }
        Ok(())
    }
}

impl StdError for BuildError {
    /// The cause's own source: the cause's text is in this error's
    /// `Display` (see [`cause`](BuildError::cause)).
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_deref().and_then(|cause| cause.source())
    }
}

/// The kinds the three delivery operations share, so that a refusal or a
/// transport failure is mapped to the operation's kind in one place.
pub(crate) trait OperationKind: Copy {
    const NO_HANDLERS: Self;
    const SHUT_DOWN: Self;
    const TYPE_MISMATCH: Self;
    const QUEUE_FULL: Self;
    /// A guard refused the body: a kind of its own, or for a request a
    /// recipient failure (Vert.x has no other failure type for it).
    const INVALID: Self;
    const DROPPED: Self;
    // A cluster transport's failures (read with the `nats` feature).
    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    const CODEC: Self;
    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    const PAYLOAD_TOO_LARGE: Self;
    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    const TRANSPORT: Self;
}

macro_rules! operation_kind {
    ($($kind:ident => $invalid:ident),*) => {$(
        impl OperationKind for $kind {
            const NO_HANDLERS: Self = Self::NoHandlers;
            const SHUT_DOWN: Self = Self::ShutDown;
            const TYPE_MISMATCH: Self = Self::TypeMismatch;
            const QUEUE_FULL: Self = Self::QueueFull;
            const INVALID: Self = Self::$invalid;
            const DROPPED: Self = Self::Dropped;
            const CODEC: Self = Self::Codec;
            const PAYLOAD_TOO_LARGE: Self = Self::PayloadTooLarge;
            const TRANSPORT: Self = Self::Transport;
        }
    )*};
}
operation_kind!(SendErrorKind => Invalid, PublishErrorKind => Invalid, RequestErrorKind => RecipientFailure);

/// The text of a caught panic's payload (a `&str` or a `String`, as
/// `panic!` makes them).
#[cold]
pub(crate) fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-text panic payload".to_owned()
    }
}
