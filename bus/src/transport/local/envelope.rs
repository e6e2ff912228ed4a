// What a consumer's queue carries.

use std::sync::Arc;

use codecbus_core::AnyBody;

use crate::base::headers::Headers;
use crate::base::interceptor::DeliveryKind;
use crate::base::reply::Completion;
use crate::telemetry::spans::SpanSlot;

/// One message on its way to one consumer.
pub(crate) struct Envelope {
    pub(crate) address: Arc<str>,
    pub(crate) headers: Headers,
    /// Already this consumer's own body (transformed).
    pub(crate) body: AnyBody,
    pub(crate) kind: DeliveryKind,
    /// What awaits the message: nothing, its requester, or the transport
    /// that acknowledges it.
    pub(crate) completion: Completion,
    /// The delivery's span (traces on).
    pub(crate) span: SpanSlot,
}
