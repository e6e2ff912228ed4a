//! The bounce itself: sequential request/reply round trips against an echo
//! consumer at address `bounce`, shared by `benches/bounce.rs` and
//! `examples/bounce.rs`. Requester and consumer are tasks on one runtime.

#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use codecbus::MessageCodec;
use codecbus::bus::{EventBus, Message, MessageConsumer, Shared};
use codecbus::json::JsValue;
use tokio::sync::{mpsc, oneshot};

use super::payloads::{self, array_len, copied, immutable};

/// The implementations, in the order tables and charts show them.
pub const IMPLS: [&str; 5] = [
    "raw_channel",
    "jsobj",
    "derived_immutable",
    "serde_json_value",
    "derived_copied",
];

type RunFuture<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// One payload bounced by one implementation.
pub struct Case {
    /// The payload name (`obj`, `arr4`, ...).
    pub payload: &'static str,
    /// The implementation name (`jsobj`, ...).
    pub implementation: &'static str,
    /// The MessagePack size of the payload (`None` for `raw_channel`).
    pub encoded_len: Option<usize>,
    runner: Box<dyn Fn(u64) -> RunFuture<'static>>,
    _consumer: Option<MessageConsumer>,
}

impl Case {
    /// Performs `rounds` sequential round trips.
    pub fn run(&self, rounds: u64) -> RunFuture<'static> {
        (self.runner)(rounds)
    }
}

/// An echo consumer and a requester for body type `T`.
fn bus_case<T>(payload: &'static str, implementation: &'static str, body: T) -> Case
where
    T: MessageCodec + Send + Sync + 'static,
{
    let encoded_len = codecbus::to_vec(&body).ok().map(|b| b.len());
    let bus = EventBus::new();
    let consumer = bus.consumer("bounce", |m: Message<T>| async move {
        m.reply(Shared(Arc::clone(m.body_arc())))
    });
    let body = Arc::new(body);
    let runner = move |rounds: u64| -> RunFuture<'static> {
        let bus = bus.clone();
        let body = Arc::clone(&body);
        Box::pin(async move {
            for _ in 0..rounds {
                let back: Message<T> = bus
                    .request("bounce", Shared(Arc::clone(&body)))
                    .await
                    .expect("bounce reply");
                std::hint::black_box(back);
            }
        })
    };
    Case {
        payload,
        implementation,
        encoded_len,
        runner: Box::new(runner),
        _consumer: Some(consumer),
    }
}

/// The floor: a bare tokio mpsc + oneshot round trip carrying an `Arc`.
fn raw_case<T: Send + Sync + 'static>(payload: &'static str, body: T) -> Case {
    let (tx, mut rx) = mpsc::channel::<(Arc<T>, oneshot::Sender<Arc<T>>)>(1000);
    tokio::spawn(async move {
        while let Some((body, reply)) = rx.recv().await {
            let _ = reply.send(body);
        }
    });
    let body = Arc::new(body);
    let runner = move |rounds: u64| -> RunFuture<'static> {
        let tx = tx.clone();
        let body = Arc::clone(&body);
        Box::pin(async move {
            for _ in 0..rounds {
                let (otx, orx) = oneshot::channel();
                tx.send((Arc::clone(&body), otx))
                    .await
                    .expect("floor server");
                std::hint::black_box(orx.await.expect("floor reply"));
            }
        })
    };
    Case {
        payload,
        implementation: "raw_channel",
        encoded_len: None,
        runner: Box::new(runner),
        _consumer: None,
    }
}

/// Builds the case for one payload and implementation; `None` where the
/// combination does not exist (twitter has no derived struct). Must be
/// called inside a tokio runtime.
pub fn case(payload: &'static str, implementation: &'static str) -> Option<Case> {
    let json = || payloads::json_payload(payload);
    let n = array_len(payload);
    let derived = payload != "twitter";
    Some(match implementation {
        "raw_channel" => raw_case(payload, json()?),
        "jsobj" => bus_case(payload, implementation, JsValue::from(json()?)),
        "serde_json_value" => bus_case(payload, implementation, json()?),
        "derived_immutable" if derived => match n {
            None => bus_case(payload, implementation, immutable::customer(0)),
            Some(n) => bus_case(
                payload,
                implementation,
                (0..n).map(immutable::customer).collect::<Vec<_>>(),
            ),
        },
        "derived_copied" if derived => match n {
            None => bus_case(payload, implementation, copied::customer(0)),
            Some(n) => bus_case(
                payload,
                implementation,
                (0..n).map(copied::customer).collect::<Vec<_>>(),
            ),
        },
        _ => return None,
    })
}
