//! The bounce itself: sequential request/reply round trips against an echo
//! consumer at address `bounce`, shared by `benches/bounce.rs` and
//! `benches/bounce-example/bounce.rs` (`cargo run --release --example
//! bounce`). Requester and consumer are tasks on one runtime.
//!
//! Next to the bus: the floor (`raw_channel`, a bare tokio mpsc + oneshot
//! round trip), what no bus can beat (`direct_call`, the echo handler called
//! and awaited in place), and the request/reply of the actor libraries a
//! user would pick instead (`kameo_ask`, `ractor_call`, `actix_send`), each
//! carrying the same `Arc` body to an echo that replies with the `Arc` it
//! got.

#![allow(dead_code)]

use std::future::Future;
use std::hint::black_box;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use codecbus::MessageType;
use codecbus::bus::{EventBus, Message, Shared};
use codecbus::json::JsValue;
use tokio::runtime::Runtime;
use tokio::sync::{mpsc, oneshot};

use super::payloads::{self, array_len, copied, immutable};

/// The implementations, in the order tables and charts show them: the two
/// references, the actor libraries, then the bus's own.
pub const IMPLS: [&str; 9] = [
    "direct_call",
    "raw_channel",
    "kameo_ask",
    "ractor_call",
    "actix_send",
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
    /// The MessagePack size of the payload (`None` where nothing is encoded
    /// on the way: the references and the actor libraries).
    pub encoded_len: Option<usize>,
    runner: Box<dyn Fn(u64) -> RunFuture<'static>>,
    /// What keeps the echo alive (a consumer, an actor) while the case is.
    _echo: Option<Box<dyn std::any::Any>>,
    /// The runtime the case runs on when it is not the caller's: actix's.
    system: Option<actix_rt::SystemRunner>,
}

impl Case {
    /// Performs `rounds` sequential round trips; run it with
    /// [`Case::block_on`].
    pub fn run(&self, rounds: u64) -> RunFuture<'static> {
        (self.runner)(rounds)
    }

    /// Runs `f` (a future awaiting [`Case::run`]) to completion on the
    /// runtime this case runs on: `rt`, the one it was built in, except for
    /// actix, whose actors run on an actix-rt system of their own.
    pub fn block_on<F: Future>(&self, rt: &Runtime, f: F) -> F::Output {
        match &self.system {
            Some(system) => system.block_on(f),
            None => rt.block_on(f),
        }
    }
}

/// An echo consumer and a requester for body type `T`.
fn bus_case<T>(payload: &'static str, implementation: &'static str, body: T) -> Case
where
    T: MessageType + Send + Sync + 'static,
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
        _echo: Some(Box::new(consumer)),
        system: None,
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
        _echo: None,
        system: None,
    }
}

/// The echo handler of `direct_call`: takes the body's `Arc`, returns it.
async fn echo<T>(body: Arc<T>) -> Arc<T> {
    body
}

/// What no bus can beat: the echo handler called and awaited in place, with
/// the same `Arc` body (cloned per round, as a request clones it). The body
/// going in and the one coming back pass through `black_box`, so the call
/// cannot be optimized away.
fn direct_case<T: Send + Sync + 'static>(payload: &'static str, body: T) -> Case {
    let body = Arc::new(body);
    let runner = move |rounds: u64| -> RunFuture<'static> {
        let body = Arc::clone(&body);
        Box::pin(async move {
            for _ in 0..rounds {
                let back = echo(black_box(Arc::clone(&body))).await;
                black_box(back);
            }
        })
    };
    Case {
        payload,
        implementation: "direct_call",
        encoded_len: None,
        runner: Box::new(runner),
        _echo: None,
        system: None,
    }
}

/// The kameo echo actor: replies to an `Arc<T>` with it.
struct KameoEcho<T>(PhantomData<fn() -> T>);

impl<T: Send + Sync + 'static> kameo::Actor for KameoEcho<T> {
    type Args = Self;
    type Error = kameo::error::Infallible;

    async fn on_start(
        args: Self,
        _: kameo::actor::ActorRef<Self>,
    ) -> Result<Self, kameo::error::Infallible> {
        Ok(args)
    }
}

impl<T: Send + Sync + 'static> kameo::message::Message<Arc<T>> for KameoEcho<T> {
    type Reply = Arc<T>;

    async fn handle(
        &mut self,
        body: Arc<T>,
        _: &mut kameo::message::Context<Self, Arc<T>>,
    ) -> Arc<T> {
        body
    }
}

/// kameo: `ActorRef::ask` to an echo actor spawned on the caller's runtime
/// (its default bounded mailbox, no reply timeout).
fn kameo_case<T: Send + Sync + 'static>(payload: &'static str, body: T) -> Case {
    use kameo::actor::Spawn;
    let actor = KameoEcho::<T>::spawn(KameoEcho(PhantomData));
    let body = Arc::new(body);
    // The runner's reference keeps the actor alive.
    let runner = move |rounds: u64| -> RunFuture<'static> {
        let actor = actor.clone();
        let body = Arc::clone(&body);
        Box::pin(async move {
            for _ in 0..rounds {
                let back = actor.ask(Arc::clone(&body)).await.expect("kameo reply");
                black_box(back);
            }
        })
    };
    Case {
        payload,
        implementation: "kameo_ask",
        encoded_len: None,
        runner: Box::new(runner),
        _echo: None,
        system: None,
    }
}

/// The ractor echo actor's one message: the body and the port to reply on.
struct RactorBounce<T>(Arc<T>, ractor::RpcReplyPort<Arc<T>>);

/// The ractor echo actor: replies with the `Arc` it got.
struct RactorEcho<T>(PhantomData<fn() -> T>);

impl<T: Send + Sync + 'static> ractor::Actor for RactorEcho<T> {
    type Msg = RactorBounce<T>;
    type State = ();
    type Arguments = ();

    async fn pre_start(
        &self,
        _: ractor::ActorRef<Self::Msg>,
        _: (),
    ) -> Result<(), ractor::ActorProcessingErr> {
        Ok(())
    }

    async fn handle(
        &self,
        _: ractor::ActorRef<Self::Msg>,
        RactorBounce(body, reply): Self::Msg,
        _: &mut (),
    ) -> Result<(), ractor::ActorProcessingErr> {
        // The caller waits for this reply; it cannot be gone.
        let _ = reply.send(body);
        Ok(())
    }
}

/// Stops a ractor actor when the case is dropped (a ractor actor lives
/// until stopped, not until its last reference goes).
struct StopOnDrop<T: Send + Sync + 'static>(ractor::ActorRef<RactorBounce<T>>);

impl<T: Send + Sync + 'static> Drop for StopOnDrop<T> {
    fn drop(&mut self) {
        self.0.stop(None);
    }
}

/// ractor: `ActorRef::call` (what `call_t!` expands to, here without a
/// timeout, like the other libraries' requests) to an echo actor spawned on
/// the caller's runtime.
fn ractor_case<T: Send + Sync + 'static>(rt: &Runtime, payload: &'static str, body: T) -> Case {
    let (actor, _) = rt
        .block_on(ractor::Actor::spawn(None, RactorEcho::<T>(PhantomData), ()))
        .expect("ractor echo actor");
    let body = Arc::new(body);
    let runner = {
        let actor = actor.clone();
        move |rounds: u64| -> RunFuture<'static> {
            let actor = actor.clone();
            let body = Arc::clone(&body);
            Box::pin(async move {
                for _ in 0..rounds {
                    let reply = actor
                        .call(|port| RactorBounce(Arc::clone(&body), port), None)
                        .await
                        .expect("ractor send");
                    match reply {
                        ractor::rpc::CallResult::Success(back) => {
                            black_box(back);
                        }
                        _ => panic!("ractor reply"),
                    }
                }
            })
        }
    };
    Case {
        payload,
        implementation: "ractor_call",
        encoded_len: None,
        runner: Box::new(runner),
        _echo: Some(Box::new(StopOnDrop(actor))),
        system: None,
    }
}

/// The actix echo actor's one message: the body.
struct ActixBounce<T>(Arc<T>);

impl<T: Send + Sync + 'static> actix::Message for ActixBounce<T> {
    type Result = Arc<T>;
}

/// The actix echo actor: replies with the `Arc` it got.
struct ActixEcho<T>(PhantomData<fn() -> T>);

impl<T: Send + Sync + 'static> actix::Actor for ActixEcho<T> {
    type Context = actix::Context<Self>;
}

impl<T: Send + Sync + 'static> actix::Handler<ActixBounce<T>> for ActixEcho<T> {
    type Result = actix::MessageResult<ActixBounce<T>>;

    fn handle(&mut self, msg: ActixBounce<T>, _: &mut Self::Context) -> Self::Result {
        actix::MessageResult(msg.0)
    }
}

/// actix: `Addr::send` to an echo actor. actix actors run only inside an
/// actix system, so this case runs on actix-rt's runtime instead of the
/// caller's: a tokio current-thread runtime too (with a `LocalSet`, where
/// actix spawns its actors), built for the case; [`Case::block_on`] runs
/// the rounds on it. Same process, same thread as the other cases.
fn actix_case<T: Send + Sync + 'static>(payload: &'static str, body: T) -> Case {
    use actix::Actor as _;
    let system = actix_rt::System::new();
    let addr = system.block_on(async { ActixEcho::<T>(PhantomData).start() });
    let body = Arc::new(body);
    // The runner's address keeps the actor alive.
    let runner = move |rounds: u64| -> RunFuture<'static> {
        let addr = addr.clone();
        let body = Arc::clone(&body);
        Box::pin(async move {
            for _ in 0..rounds {
                let back = addr
                    .send(ActixBounce(Arc::clone(&body)))
                    .await
                    .expect("actix reply");
                black_box(back);
            }
        })
    };
    Case {
        payload,
        implementation: "actix_send",
        encoded_len: None,
        runner: Box::new(runner),
        _echo: None,
        system: Some(system),
    }
}

/// Builds the case for one payload and implementation; `None` where the
/// combination does not exist (twitter has no derived struct). Must be
/// called inside `rt`'s context (`Runtime::enter`), outside its `block_on`.
pub fn case(rt: &Runtime, payload: &'static str, implementation: &'static str) -> Option<Case> {
    let json = || payloads::json_payload(payload);
    let n = array_len(payload);
    let derived = payload != "twitter";
    Some(match implementation {
        "direct_call" => direct_case(payload, json()?),
        "raw_channel" => raw_case(payload, json()?),
        "kameo_ask" => kameo_case(payload, json()?),
        "ractor_call" => ractor_case(rt, payload, json()?),
        "actix_send" => actix_case(payload, json()?),
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
