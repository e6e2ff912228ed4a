// Routing: what `send`, `publish` and `request` do with a message. Runs
// the interceptors, picks the remote transport or the local consumers,
// counts, and turns a refusal into the operation's error (kind, message,
// address, the body handed back). A request's reply is awaited by
// `waiting`; the caller turns the reply into its `Message`.
//
// Each operation is generic over an `Observer`: `Quiet` (metrics and
// traces off, or filtered out) compiles to the operation without either;
// `Observed` carries the address's metric handles and the operation's
// span. `observation` tells the caller (`EventBus`) which one to run; the
// observed operation is boxed there, so its larger future stays out of
// every caller's.

use std::any::{TypeId, type_name};
use std::future::Future;
use std::sync::Arc;

use codecbus_core::{AnyBody, MessageCodec};
use tracing::{Instrument, Span};

use crate::base::error::{KindName, OperationKind, PublishErrorKind, RequestErrorKind};
use crate::base::error::{PublishError, RequestError, SendError, SendErrorKind};
use crate::base::headers::Headers;
use crate::base::interceptor::{self, DeliveryContext, DeliveryKind, InterceptorFn};
use crate::base::options::DeliveryOptions;
use crate::base::reply::{self, Completion, ReplyEnvelope};
use crate::base::report::PublishReport;
use crate::engine::state::State;
use crate::engine::waiting;
use crate::telemetry::record::{Event, record, record_in};
use crate::telemetry::{Chain, Decision, Probe, Side, spans};
use crate::transport::Outbound;
use crate::transport::local::{Refusal, Scope, Verdicts};

#[cold]
fn refusal_error<K: OperationKind>(
    state: &State,
    refusal: Refusal,
    address: &str,
    actual: &'static str,
    body: AnyBody,
) -> crate::base::error::Error<K> {
    // After a shutdown, nobody at the address is what the shutdown did.
    let refusal = match refusal {
        Refusal::NoHandlers if state.is_shut_down() => Refusal::ShutDown,
        other => other,
    };
    refusal
        .into_error(address, actual)
        .with_address(Arc::from(address))
        .with_body(body)
}

#[cold]
fn dropped_error<K: OperationKind>(
    address: &str,
    body: AnyBody,
    dropped: Intercepted,
) -> crate::base::error::Error<K> {
    crate::base::error::Error::new(
        K::DROPPED,
        dropped.text(&format!(
            "Message to address {address} dropped by an outbound interceptor"
        )),
    )
    .with_address(Arc::from(address))
    .with_body(body)
}

fn outbound<'o, T: 'static>(
    state: &State,
    observer: impl Observer<'o>,
    address: &str,
    headers: Headers,
    body: AnyBody,
) -> Outbound {
    let codec = state.registry().by_type(TypeId::of::<T>());
    let shape = codec.as_ref().and_then(|c| state.peers.tag(c.name()));
    Outbound {
        address: Arc::from(address),
        type_name: type_name::<T>(),
        headers,
        body,
        codec,
        probe: observer.probe().cloned(),
        traced: observer.span().is_some(),
        shape,
    }
}

/// What an operation reports beyond the bus counters. The default,
/// [`Quiet`], reports nothing and compiles to nothing: with metrics and
/// traces off an operation runs the same code as without them.
/// [`Observed`] holds the address's metric handles and the operation's
/// span.
pub(crate) trait Observer<'a>: Copy {
    fn probe(self) -> Option<&'a Arc<Probe>>;
    /// The operation's span (its trace sampled).
    fn span(self) -> Option<&'a Span>;
    /// The span whose context the message carries: the operation's, or,
    /// untraced, the unsampled span around it.
    fn context(self) -> Option<&'a Span>;
}

/// Reports nothing (metrics and traces off).
#[derive(Clone, Copy)]
pub(crate) struct Quiet;

impl<'a> Observer<'a> for Quiet {
    #[inline(always)]
    fn probe(self) -> Option<&'a Arc<Probe>> {
        None
    }

    #[inline(always)]
    fn span(self) -> Option<&'a Span> {
        None
    }

    #[inline(always)]
    fn context(self) -> Option<&'a Span> {
        None
    }
}

/// The metric handles and span of an observed operation, or the
/// unsampled span whose context it carries.
#[derive(Clone, Copy)]
struct Observed<'a> {
    probe: Option<&'a Arc<Probe>>,
    span: Option<&'a Span>,
    carry: Option<&'a Span>,
}

impl<'a> Observed<'a> {
    fn new(observation: &'a Observation, span: Option<&'a Span>) -> Self {
        Self {
            probe: observation.probe.as_ref(),
            span,
            carry: observation.carry.as_ref(),
        }
    }
}

impl<'a> Observer<'a> for Observed<'a> {
    fn probe(self) -> Option<&'a Arc<Probe>> {
        self.probe
    }

    fn span(self) -> Option<&'a Span> {
        self.span
    }

    fn context(self) -> Option<&'a Span> {
        self.span.or(self.carry)
    }
}

/// What an operation at an address is to report, when metrics or traces
/// are on: `None` means quiet. The caller then runs the quiet operation
/// (`send`, `publish`, `request` with [`Quiet`]) or the observed one,
/// boxed so that its larger future stays out of every caller's.
#[inline]
pub(crate) fn observation(state: &State, address: &str) -> Option<Observation> {
    if state.telemetry.quiet() {
        return None;
    }
    let probe = state.telemetry.probe(address);
    let (traced, carry) = match state.telemetry.trace_operation() {
        Decision::Trace => (true, None),
        Decision::Skip => (false, None),
        // Inside an unsampled trace: spans as well, children of it and so
        // unsampled, so that the consumer's handler runs in that trace and
        // what it replies or sends carries the context on (as a message
        // from the cluster with an unsampled context does).
        Decision::Carry(span) => (true, Some(span)),
    };
    if probe.is_none() && !traced && carry.is_none() {
        return None;
    }
    Some(Observation {
        probe,
        traced,
        carry,
    })
}

/// See [`observation`].
pub(crate) struct Observation {
    probe: Option<Arc<Probe>>,
    /// Whether the operation gets a span (its trace sampled).
    traced: bool,
    /// Untraced, the unsampled span around it whose context the message
    /// carries on.
    carry: Option<Span>,
}

/// The codec name of `T` for a span (its Rust type when unregistered).
#[cold]
fn codec_name<T: 'static>(state: &State) -> &'static str {
    state
        .registry()
        .name_of(TypeId::of::<T>())
        .unwrap_or_else(type_name::<T>)
}

/// A message an interceptor dropped (counted), or that one panicked on.
#[derive(Debug)]
pub(crate) struct Intercepted {
    /// The panic's text, when an interceptor panicked.
    pub(crate) panic: Option<String>,
}

impl Intercepted {
    /// `said`, and the panic's text when there is one.
    #[cold]
    pub(crate) fn text(&self, said: &str) -> String {
        match &self.panic {
            None => said.to_owned(),
            Some(panic) => format!("{said}, which panicked: {panic}"),
        }
    }
}

/// Runs the outbound interceptors; `Err` when the message was dropped
/// (counted).
pub(crate) fn intercept_out<T: 'static>(
    state: &State,
    address: &str,
    headers: &mut Headers,
    kind: DeliveryKind,
) -> Result<(), Intercepted> {
    intercept(
        state,
        Chain::Outbound,
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
) -> Result<(), Intercepted> {
    intercept(
        state,
        Chain::Inbound,
        &state.interceptors.inbound,
        address,
        headers,
        TypeId::of::<T>(),
        type_name::<T>(),
        kind,
    )
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn intercept(
    state: &State,
    which: Chain,
    chain: &[InterceptorFn],
    address: &str,
    headers: &mut Headers,
    type_id: TypeId,
    type_name: &'static str,
    kind: DeliveryKind,
) -> Result<(), Intercepted> {
    // No interceptor: one test, not a call with eight arguments.
    if chain.is_empty() {
        return Ok(());
    }
    run_chain(
        state, which, chain, address, headers, type_id, type_name, kind,
    )
}

#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn run_chain(
    state: &State,
    which: Chain,
    chain: &[InterceptorFn],
    address: &str,
    headers: &mut Headers,
    type_id: TypeId,
    type_name: &'static str,
    kind: DeliveryKind,
) -> Result<(), Intercepted> {
    let codec_name = state.registry().name_of(type_id);
    let mut ctx = DeliveryContext {
        address,
        headers,
        codec_name,
        type_name,
        kind,
    };
    // A panicking interceptor drops the message, on either side, rather
    // than unwinding into the sender's task or the consumer's.
    let outcome = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        interceptor::run(chain, &mut ctx)
    })) {
        Ok(true) => return Ok(()),
        Ok(false) => Intercepted { panic: None },
        Err(panic) => {
            let panic = crate::base::error::panic_text(&*panic);
            tracing::error!(
                address,
                ?kind,
                panic,
                "an {} interceptor panicked: the message is dropped",
                match which {
                    Chain::Outbound => "outbound",
                    Chain::Inbound => "inbound",
                }
            );
            Intercepted { panic: Some(panic) }
        }
    };
    let probe = state.telemetry.probe(address);
    record(&state.counters, probe.as_deref(), Event::Dropped(which));
    tracing::debug!(address, ?kind, "message dropped by an interceptor");
    Err(outcome)
}

/// Point-to-point local delivery of a typed body.
fn deliver_one<'o, T, K>(
    state: &State,
    observer: impl Observer<'o>,
    address: &str,
    body: Arc<T>,
    headers: Headers,
    kind: DeliveryKind,
    completion: Completion,
) -> Result<(), crate::base::error::Error<K>>
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
        completion,
        observer.span().is_some(),
    );
    let probe = observer.probe().map(|p| &**p);
    record(&state.counters, probe, Event::Received(Side::Local));
    match result {
        Ok(_) => {
            record(&state.counters, probe, Event::Delivered(1));
            tracing::debug!(address, ?kind, "delivered");
            Ok(())
        }
        Err(refusal) => {
            refusal.count(&state.counters, probe);
            tracing::debug!(address, ?kind, "not delivered");
            Err(refusal_error(
                state,
                refusal,
                address,
                type_name::<T>(),
                body,
            ))
        }
    }
}

/// Awaits `operation`, in `span` if there is one, and records its end
/// there.
async fn in_span<R, K: KindName>(
    state: &State,
    span: Option<&Span>,
    operation: impl Future<Output = Result<R, crate::base::error::Error<K>>>,
) -> Result<R, crate::base::error::Error<K>> {
    let Some(span) = span else {
        return operation.await;
    };
    let result = operation.instrument(span.clone()).await;
    record_in(&state.counters, None, Some(span), Event::ended(&result));
    result
}

/// `send` with metrics or traces on: in the `send` span, if traced.
#[inline(never)]
pub(crate) async fn observed_send<T>(
    state: &State,
    observation: Observation,
    address: &str,
    body: Arc<T>,
    options: DeliveryOptions,
) -> Result<(), SendError>
where
    T: MessageCodec + Send + Sync + 'static,
{
    let span = observation
        .traced
        .then(|| spans::send(address, codec_name::<T>(state)));
    let observer = Observed::new(&observation, span.as_ref());
    in_span(
        state,
        span.as_ref(),
        send(state, observer, address, body, options),
    )
    .await
}

/// Spends one unit of the task's cooperative budget (yielding first when
/// it is spent), as a tokio channel operation does: a send, publish or
/// request can complete in its first poll (a full queue refuses at once,
/// an inline run answers at once), and a loop of them must still let the
/// other tasks of its thread run.
#[inline]
async fn cooperate() {
    tokio::task::coop::consume_budget().await;
}

/// `EventBus::send_with`.
pub(crate) async fn send<'o, T>(
    state: &State,
    observer: impl Observer<'o>,
    address: &str,
    body: Arc<T>,
    options: DeliveryOptions,
) -> Result<(), SendError>
where
    T: MessageCodec + Send + Sync + 'static,
{
    cooperate().await;
    let (_, mut headers, local_only) = options.into_parts();
    record(&state.counters, observer.probe().map(|p| &**p), Event::Sent);
    if let Err(dropped) = intercept_out::<T>(state, address, &mut headers, DeliveryKind::Send) {
        return Err(dropped_error(address, body, dropped));
    }
    if let Some(span) = observer.context() {
        spans::inject(span, &mut headers);
    }
    if let Some(remote) = state.remote_for_one(address, local_only) {
        let out = outbound::<T>(state, observer, address, headers, body);
        return remote.send(out).await;
    }
    deliver_one::<T, SendErrorKind>(
        state,
        observer,
        address,
        body,
        headers,
        DeliveryKind::Send,
        Completion::None,
    )
}

/// `publish` with metrics or traces on: in the `publish` span, if traced.
#[inline(never)]
pub(crate) async fn observed_publish<T>(
    state: &State,
    observation: Observation,
    address: &str,
    body: Arc<T>,
    options: DeliveryOptions,
) -> Result<PublishReport, PublishError>
where
    T: MessageCodec + Send + Sync + 'static,
{
    let span = observation
        .traced
        .then(|| spans::publish(address, codec_name::<T>(state)));
    let observer = Observed::new(&observation, span.as_ref());
    in_span(
        state,
        span.as_ref(),
        publish(state, observer, address, body, options),
    )
    .await
}

/// `EventBus::publish_with`.
pub(crate) async fn publish<'o, T>(
    state: &State,
    observer: impl Observer<'o>,
    address: &str,
    body: Arc<T>,
    options: DeliveryOptions,
) -> Result<PublishReport, PublishError>
where
    T: MessageCodec + Send + Sync + 'static,
{
    cooperate().await;
    let (_, mut headers, local_only) = options.into_parts();
    let probe = observer.probe().map(|p| &**p);
    record(&state.counters, probe, Event::Published);
    if let Err(dropped) = intercept_out::<T>(state, address, &mut headers, DeliveryKind::Publish) {
        return Err(dropped_error(address, body, dropped));
    }
    if let Some(span) = observer.context() {
        spans::inject(span, &mut headers);
    }
    let scope = match state.remote(local_only) {
        Some(remote) => {
            // Exported consumers (this node's included) are reached
            // through the cluster, once each; local-only ones here.
            let out = outbound::<T>(
                state,
                observer,
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
        observer.span().is_some(),
    );
    let counters = &state.counters;
    let to_cluster = scope == Scope::LocalOnly;
    if !to_cluster || fan.address.is_some() {
        record(counters, probe, Event::Received(Side::Local));
    }
    fan.count(counters, probe);
    tracing::debug!(
        address,
        delivered = fan.delivered,
        refused = fan.refused,
        invalid = fan.invalid,
        "published"
    );
    if fan.delivered == 0 && !to_cluster {
        let refusal = if fan.refused > 0 {
            Refusal::QueueFull
        } else if let Some(reasons) = fan.invalid_reasons {
            Refusal::Invalid(reasons)
        } else {
            match fan.mismatch_type {
                Some(expected) if fan.address.is_some() => Refusal::TypeMismatch(expected),
                _ => {
                    Refusal::NoHandlers.count(counters, probe);
                    Refusal::NoHandlers
                }
            }
        };
        return Err(refusal_error::<PublishErrorKind>(
            state,
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

/// `request` with metrics or traces on: in the `request` span, if
/// traced; a request that fails counts as a reply failure of its kind, one
/// that is answered records its round trip.
#[inline(never)]
pub(crate) async fn observed_request<T>(
    state: &Arc<State>,
    observation: Observation,
    address: &str,
    body: Arc<T>,
    options: DeliveryOptions,
) -> Result<ReplyEnvelope, RequestError>
where
    T: MessageCodec + Send + Sync + 'static,
{
    let start = observation.probe.as_ref().and_then(|p| p.start());
    let span = observation
        .traced
        .then(|| spans::request(address, codec_name::<T>(state)));
    let observer = Observed::new(&observation, span.as_ref());
    let result = in_span(
        state,
        span.as_ref(),
        request(state, observer, address, body, options),
    )
    .await;
    if let (Some(probe), Some(start), Ok(_)) = (&observation.probe, start, &result) {
        probe.request_time(start.seconds());
    }
    result
}

/// `EventBus::request_with`, up to the reply's envelope; a request that
/// fails is recorded as a reply failure of its kind, here, whatever the
/// transport.
pub(crate) async fn request<'o, T>(
    state: &Arc<State>,
    observer: impl Observer<'o>,
    address: &str,
    body: Arc<T>,
    options: DeliveryOptions,
) -> Result<ReplyEnvelope, RequestError>
where
    T: MessageCodec + Send + Sync + 'static,
{
    let result = request_once(state, observer, address, body, options).await;
    if let Err(err) = &result {
        let probe = observer.probe().map(|p| &**p);
        record(&state.counters, probe, Event::ReplyFailed(err.kind()));
    }
    result
}

async fn request_once<'o, T>(
    state: &Arc<State>,
    observer: impl Observer<'o>,
    address: &str,
    body: Arc<T>,
    options: DeliveryOptions,
) -> Result<ReplyEnvelope, RequestError>
where
    T: MessageCodec + Send + Sync + 'static,
{
    cooperate().await;
    let (timeout, mut headers, local_only) = options.into_parts();
    let timeout = timeout.unwrap_or(state.default_timeout);
    record(&state.counters, observer.probe().map(|p| &**p), Event::Sent);
    if let Err(dropped) = intercept_out::<T>(state, address, &mut headers, DeliveryKind::Request) {
        return Err(dropped_error(address, body, dropped));
    }
    if let Some(span) = observer.context() {
        spans::inject(span, &mut headers);
    }
    if let Some(remote) = state.remote_for_one(address, local_only) {
        let out = outbound::<T>(state, observer, address, headers, body);
        return remote.request(out, timeout, Arc::clone(state) as _).await;
    }
    let (tx, rx) = reply::channel();
    deliver_one::<T, RequestErrorKind>(
        state,
        observer,
        address,
        body,
        headers,
        DeliveryKind::Request,
        Completion::Reply(tx),
    )?;
    waiting::await_reply(rx, address, timeout).await
}
