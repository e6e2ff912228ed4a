// Routing: what `send`, `publish` and `request` do with a message. Runs
// the interceptors, picks the remote transport or the local consumers,
// counts, and turns a refusal into the operation's error (kind, message,
// address, the body handed back). A request's reply is awaited by
// `waiting`; the caller turns the reply into its `Message`.

use std::any::{TypeId, type_name};
use std::sync::Arc;

use codecbus_core::{AnyBody, MessageCodec};

use crate::error::{OperationKind, PublishErrorKind, RequestErrorKind};
use crate::error::{PublishError, RequestError, SendError, SendErrorKind};
use crate::headers::Headers;
use crate::interceptor::{self, DeliveryContext, DeliveryKind, InterceptorFn};
use crate::metrics::bump;
use crate::options::DeliveryOptions;
use crate::reply::{self, ReplyEnvelope};
use crate::report::PublishReport;
use crate::state::State;
use crate::transport::Outbound;
use crate::transport::local::{Refusal, Scope, Verdicts};
use crate::waiting;

#[cold]
fn refusal_error<K: OperationKind>(
    refusal: Refusal,
    address: &str,
    actual: &'static str,
    body: AnyBody,
) -> crate::error::Error<K> {
    refusal
        .into_error(address, actual)
        .with_address(Arc::from(address))
        .with_body(body)
}

#[cold]
fn dropped_error<K: OperationKind>(address: &str, body: AnyBody) -> crate::error::Error<K> {
    crate::error::Error::new(
        K::DROPPED,
        format!("Message to address {address} dropped by an outbound interceptor"),
    )
    .with_address(Arc::from(address))
    .with_body(body)
}

fn outbound<T: 'static>(state: &State, address: &str, headers: Headers, body: AnyBody) -> Outbound {
    Outbound {
        address: Arc::from(address),
        type_name: type_name::<T>(),
        headers,
        body,
        codec: state.registry().by_type(TypeId::of::<T>()),
    }
}

/// Runs the outbound interceptors; `false` when the message was dropped
/// (counted).
pub(crate) fn intercept_out<T: 'static>(
    state: &State,
    address: &str,
    headers: &mut Headers,
    kind: DeliveryKind,
) -> bool {
    intercept(
        state,
        &state.interceptors.outbound,
        address,
        headers,
        TypeId::of::<T>(),
        type_name::<T>(),
        kind,
    )
}

/// Runs the inbound interceptors for a consumer of `T`.
pub(crate) fn intercept_in<T: 'static>(
    state: &State,
    address: &str,
    headers: &mut Headers,
    kind: DeliveryKind,
) -> bool {
    intercept(
        state,
        &state.interceptors.inbound,
        address,
        headers,
        TypeId::of::<T>(),
        type_name::<T>(),
        kind,
    )
}

#[inline]
fn intercept(
    state: &State,
    chain: &[InterceptorFn],
    address: &str,
    headers: &mut Headers,
    type_id: TypeId,
    type_name: &'static str,
    kind: DeliveryKind,
) -> bool {
    if chain.is_empty() {
        return true;
    }
    let codec_name = state.registry().name_of(type_id);
    let mut ctx = DeliveryContext {
        address,
        headers,
        codec_name,
        type_name,
        kind,
    };
    let pass = interceptor::run(chain, &mut ctx);
    if !pass {
        bump(&state.counters.dropped, 1);
        tracing::debug!(address, ?kind, "message dropped by an interceptor");
    }
    pass
}

/// Point-to-point local delivery of a typed body.
fn deliver_one<T, K>(
    state: &State,
    address: &str,
    body: Arc<T>,
    headers: Headers,
    kind: DeliveryKind,
    reply: Option<reply::ReplyTx>,
) -> Result<(), crate::error::Error<K>>
where
    T: MessageCodec + Send + Sync + 'static,
    K: OperationKind,
{
    let result = state.local.deliver_one(
        address,
        Scope::All,
        TypeId::of::<T>(),
        Verdicts::new(&*body),
        || T::transform(&body) as AnyBody,
        headers,
        kind,
        reply,
    );
    match result {
        Ok(()) => {
            bump(&state.counters.delivered, 1);
            tracing::debug!(address, ?kind, "delivered");
            Ok(())
        }
        Err(refusal) => {
            bump(refusal.counter(&state.counters), 1);
            tracing::debug!(address, ?kind, "not delivered");
            Err(refusal_error(refusal, address, type_name::<T>(), body))
        }
    }
}

/// `EventBus::send_with`.
pub(crate) async fn send<T>(
    state: &State,
    address: &str,
    body: Arc<T>,
    options: DeliveryOptions,
) -> Result<(), SendError>
where
    T: MessageCodec + Send + Sync + 'static,
{
    let (_, mut headers, local_only) = options.into_parts();
    bump(&state.counters.sent, 1);
    if !intercept_out::<T>(state, address, &mut headers, DeliveryKind::Send) {
        return Err(dropped_error(address, body));
    }
    if let Some(remote) = state.remote_for_one(address, local_only) {
        let out = outbound::<T>(state, address, headers, body);
        return remote.send(out).await;
    }
    deliver_one::<T, SendErrorKind>(state, address, body, headers, DeliveryKind::Send, None)
}

/// `EventBus::publish_with`.
pub(crate) async fn publish<T>(
    state: &State,
    address: &str,
    body: Arc<T>,
    options: DeliveryOptions,
) -> Result<PublishReport, PublishError>
where
    T: MessageCodec + Send + Sync + 'static,
{
    let (_, mut headers, local_only) = options.into_parts();
    bump(&state.counters.published, 1);
    if !intercept_out::<T>(state, address, &mut headers, DeliveryKind::Publish) {
        return Err(dropped_error(address, body));
    }
    let scope = match state.remote(local_only) {
        Some(remote) => {
            // Exported consumers (this node's included) are reached
            // through the cluster, once each; local-only ones here.
            let out = outbound::<T>(
                state,
                address,
                headers.clone(),
                Arc::clone(&body) as AnyBody,
            );
            remote.publish(out).await?;
            Scope::LocalOnly
        }
        None => Scope::All,
    };
    let fan = state.local.deliver_all(
        address,
        scope,
        TypeId::of::<T>(),
        Verdicts::new(&*body),
        || T::transform(&body) as AnyBody,
        &headers,
        None,
    );
    let counters = &state.counters;
    bump(&counters.delivered, fan.delivered as u64);
    bump(&counters.refused, fan.refused as u64);
    bump(&counters.invalid, fan.invalid as u64);
    bump(&counters.type_mismatches, fan.mismatched as u64);
    tracing::debug!(
        address,
        delivered = fan.delivered,
        refused = fan.refused,
        invalid = fan.invalid,
        "published"
    );
    let to_cluster = scope == Scope::LocalOnly;
    if fan.delivered == 0 && !to_cluster {
        let refusal = if fan.refused > 0 {
            Refusal::QueueFull
        } else if let Some(reasons) = fan.invalid_reasons {
            Refusal::Invalid(reasons)
        } else {
            match fan.mismatch_type {
                Some(expected) if fan.address.is_some() => Refusal::TypeMismatch(expected),
                _ => {
                    bump(&counters.no_handlers, 1);
                    Refusal::NoHandlers
                }
            }
        };
        return Err(refusal_error::<PublishErrorKind>(
            refusal,
            address,
            type_name::<T>(),
            body,
        ));
    }
    Ok(PublishReport::new(
        fan.delivered,
        fan.refused,
        fan.invalid,
        to_cluster,
    ))
}

/// `EventBus::request_with`, up to the reply's envelope.
pub(crate) async fn request<T>(
    state: &Arc<State>,
    address: &str,
    body: Arc<T>,
    options: DeliveryOptions,
) -> Result<ReplyEnvelope, RequestError>
where
    T: MessageCodec + Send + Sync + 'static,
{
    let (timeout, mut headers, local_only) = options.into_parts();
    let timeout = timeout.unwrap_or(state.default_timeout);
    let id = bump(&state.counters.sent, 1);
    if !intercept_out::<T>(state, address, &mut headers, DeliveryKind::Request) {
        return Err(dropped_error(address, body));
    }
    if let Some(remote) = state.remote_for_one(address, local_only) {
        let out = outbound::<T>(state, address, headers, body);
        return remote.request(out, timeout, Arc::clone(state) as _).await;
    }
    let (tx, rx) = reply::channel();
    deliver_one::<T, RequestErrorKind>(
        state,
        address,
        body,
        headers,
        DeliveryKind::Request,
        Some(tx),
    )?;
    waiting::await_reply(state, rx, address, timeout, id).await
}
