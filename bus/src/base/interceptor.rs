//! Outbound and inbound interceptors.

use std::sync::Arc;

use crate::base::headers::Headers;

/// How a message travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeliveryKind {
    /// Point-to-point, no reply expected.
    Send,
    /// To every consumer.
    Publish,
    /// Point-to-point, a reply expected.
    Request,
    /// A reply to a request.
    Reply,
}

/// What an interceptor decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Let the message through (to the next interceptor, then delivery).
    Continue,
    /// Drop the message. An outbound drop fails the operation with a
    /// `Dropped` kind; an inbound drop discards the message before the
    /// handler sees it (a request then fails with `RecipientFailure`, no
    /// reply). Both count in [`Metrics::dropped`](crate::Metrics::dropped).
    Drop,
}

/// What an interceptor sees of a message: its address, headers (which it
/// may change), codec name and Rust type. The body itself stays opaque, and
/// is never encoded for an interceptor.
///
/// # Examples
///
/// ```
/// use codecbus_bus::{DeliveryContext, EventBus, Verdict};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let bus = EventBus::builder()
///     .outbound_interceptor(|ctx: &mut DeliveryContext<'_>| {
///         let codec = ctx.codec_name().unwrap_or("?");
///         ctx.headers_mut().insert("x-codec", codec);
///         if ctx.address().starts_with("secret.") { Verdict::Drop } else { Verdict::Continue }
///     })
///     .build()
///     .unwrap();
/// let _c = bus.consumer("hello", |m: codecbus_bus::Message<String>| async move {
///     assert_eq!(m.headers().get("x-codec"), Some("string"));
/// });
/// bus.send("hello", "world".to_string()).await.unwrap();
/// let _s = bus.consumer("secret.x", |_m: codecbus_bus::Message<String>| async {});
/// assert!(bus.send("secret.x", "nope".to_string()).await.is_err());
/// # }
/// ```
#[derive(Debug)]
pub struct DeliveryContext<'a> {
    pub(crate) address: &'a str,
    pub(crate) headers: &'a mut Headers,
    pub(crate) codec_name: Option<&'static str>,
    pub(crate) type_name: &'static str,
    pub(crate) kind: DeliveryKind,
}

impl DeliveryContext<'_> {
    /// The address the message is sent to.
    pub fn address(&self) -> &str {
        self.address
    }

    /// The message headers.
    pub fn headers(&self) -> &Headers {
        self.headers
    }

    /// The message headers, to add or remove entries (for example a trace
    /// context). Inbound, changes are seen by this consumer only.
    pub fn headers_mut(&mut self) -> &mut Headers {
        self.headers
    }

    /// The codec name of the body type in the bus registry, or `None` for a
    /// type without a registration (such types travel locally only).
    pub fn codec_name(&self) -> Option<&'static str> {
        self.codec_name
    }

    /// The body's Rust type name.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// Send, publish, request or reply.
    pub fn kind(&self) -> DeliveryKind {
        self.kind
    }
}

pub(crate) type InterceptorFn = Arc<dyn Fn(&mut DeliveryContext<'_>) -> Verdict + Send + Sync>;

#[derive(Default, Clone)]
pub(crate) struct Interceptors {
    pub(crate) outbound: Vec<InterceptorFn>,
    pub(crate) inbound: Vec<InterceptorFn>,
}

/// Runs `chain`; `false` when one of them dropped the message.
pub(crate) fn run(chain: &[InterceptorFn], ctx: &mut DeliveryContext<'_>) -> bool {
    chain.iter().all(|f| f(ctx) == Verdict::Continue)
}
