// Reply waiting: awaits the reply to a request (local, or a further turn
// of a conversation) with its timeout, and turns a failure, a dropped
// message or the timeout into the requester's error (recorded by the
// caller, where the request or turn ends).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use crate::base::error::{RequestError, RequestErrorKind};
use crate::base::reply::{Outcome, ReplyEnvelope, ReplyRx};

/// Awaits the reply to a request: the reply's envelope, which the caller
/// turns into its `Message`.
pub(crate) async fn await_reply(
    rx: ReplyRx,
    address: &str,
    timeout: Duration,
) -> Result<ReplyEnvelope, RequestError> {
    let mut rx = rx;
    // Why: arming a tokio timer (and keeping it in the wheel while the
    // runtime parks) costs about as much as a whole local round trip.
    // Most local replies arrive within one scheduling round, so the
    // first time there is no reply the requester only reschedules
    // itself behind the consumer; the timer is armed when that was not
    // enough. The timeout thus counts from then, a scheduling round
    // (microseconds) after the send.
    let mut yielded = false;
    let early = std::future::poll_fn(|cx| {
        if let Poll::Ready(outcome) = Pin::new(&mut rx).poll(cx) {
            return Poll::Ready(Some(outcome));
        }
        if yielded {
            return Poll::Ready(None);
        }
        yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await;
    let outcome = match early {
        Some(outcome) => Ok(outcome),
        None => tokio::time::timeout(timeout, &mut rx).await,
    };
    drop(rx);
    match outcome {
        Ok(Some(Outcome::Reply(env))) => Ok(env),
        Ok(Some(Outcome::Failure(failure))) => {
            Err(RequestError::new(failure.kind, failure.message)
                .with_code(failure.code)
                .with_address(Arc::from(address)))
        }
        Ok(None) => Err(RequestError::new(
            RequestErrorKind::RecipientFailure,
            format!(
                "No reply: the consumer at address {address} dropped the message without replying"
            ),
        )
        .with_address(Arc::from(address))),
        Err(_) => {
            tracing::debug!(address, ?timeout, "request timed out");
            Err(RequestError::new(
                RequestErrorKind::Timeout,
                format!(
                    "Timed out after waiting {}(ms) for a reply. address: {address}",
                    timeout.as_millis()
                ),
            )
            .with_address(Arc::from(address)))
        }
    }
}
