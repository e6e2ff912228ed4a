// The transport: `NatsTransport`, the bus's `RemoteTransport`. Starts the
// control task, and implements send, publish and request (awaiting the
// NATS reply) over the connection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use crate::base::error::{PublishError, RequestError, RequestErrorKind, SendError};
use crate::base::reply::ReplyEnvelope;
use crate::transport::cluster;
use crate::transport::nats::connect::Connected;
use crate::transport::nats::control::{Control, control_loop};
use crate::transport::nats::link::Link;
use crate::transport::nats::link::{Prepared, Route, request_failed};
use crate::transport::nats::shapes;
use crate::transport::{BoxFuture, Node, Outbound, RemoteCounts, RemoteTransport};

pub(crate) struct NatsTransport {
    shared: Arc<Link>,
    control: mpsc::UnboundedSender<Control>,
    /// The bus, for the shapes' exchange (`joined`).
    inner: Weak<dyn Node>,
    /// This node's name among its peers.
    id: String,
    /// Dropped with the transport: the shapes' exchange stops, and with
    /// it its hold on the connection.
    stop: tokio::sync::watch::Sender<()>,
    /// Set by the shapes' exchange once this node's announcement left.
    announced: tokio::sync::watch::Sender<bool>,
}

impl NatsTransport {
    /// Starts the control task for the bus behind `inner`.
    pub(crate) fn start(connected: Connected, inner: Weak<dyn Node>) -> Self {
        let Connected {
            client,
            prefix,
            servers,
            closed,
            counts,
            refusals,
            #[cfg(feature = "jetstream")]
            durables,
            writing,
            name,
        } = connected;
        let shared = Arc::new(Link {
            client,
            prefix,
            servers,
            closing: AtomicBool::new(false),
            counts,
            refusals,
            #[cfg(feature = "jetstream")]
            durables,
            writing,
        });
        let (control, rx) = mpsc::unbounded_channel();
        tokio::spawn(control_loop(
            Arc::clone(&shared),
            Weak::clone(&inner),
            rx,
            closed,
        ));
        Self {
            shared,
            control,
            inner,
            id: shapes::node_id(name.as_deref()),
            stop: tokio::sync::watch::Sender::new(()),
            announced: tokio::sync::watch::Sender::new(false),
        }
    }
}

impl RemoteTransport for NatsTransport {
    fn send(&self, out: Outbound) -> BoxFuture<'_, Result<(), SendError>> {
        #[cfg(feature = "jetstream")]
        if let Some(d) = self.shared.durable(&out.address) {
            return Box::pin(async move { self.shared.store(&d, out, false).await });
        }
        Box::pin(self.shared.fire(out, false))
    }

    fn publish(&self, out: Outbound) -> BoxFuture<'_, Result<(), PublishError>> {
        #[cfg(feature = "jetstream")]
        if let Some(d) = self.shared.durable(&out.address) {
            return Box::pin(async move { self.shared.store(&d, out, true).await });
        }
        Box::pin(self.shared.fire(out, true))
    }

    fn request(
        &self,
        out: Outbound,
        timeout: Duration,
        inner: Arc<dyn Node>,
    ) -> BoxFuture<'_, Result<ReplyEnvelope, RequestError>> {
        Box::pin(async move {
            let s = &self.shared;
            let address = Arc::clone(&out.address);
            let Prepared {
                subject,
                headers,
                body,
            } = match s.prepare(&out, Route::Send) {
                Ok(prepared) => prepared,
                Err(refuse) => return Err(refuse.into_error::<RequestErrorKind>(out)),
            };
            let request = async_nats::Request::new()
                .headers(headers)
                .payload(body)
                .timeout(Some(timeout));
            // The server drops a publish it refuses and tells only with an
            // asynchronous error: without this, the request would wait for
            // its timeout.
            let refused = s.refusals.refused(&subject);
            let answered = tokio::select! {
                answered = s.client.send_request(subject.clone(), request) => answered,
                () = refused => {
                    return Err(s
                        .permission_refused(RequestErrorKind::Transport, &address, &subject)
                        .with_address(address)
                        .with_body(out.body));
                }
            };
            let reply = match answered {
                Ok(reply) => reply,
                Err(e) => {
                    let err = request_failed(e, &address, timeout, &s.servers);
                    cluster::count_unanswered(&inner, &out, err.kind());
                    let err = err.with_address(address);
                    // The body comes back when it surely reached nobody.
                    return Err(match err.kind() {
                        RequestErrorKind::NoHandlers | RequestErrorKind::PayloadTooLarge => {
                            err.with_body(out.body)
                        }
                        _ => err,
                    });
                }
            };
            // A failure the answering node reported is counted there, but
            // for a recipient failure, which the requester counts (as in
            // process).
            let frame = s.arrived(reply.headers.as_ref(), reply.payload);
            cluster::read_answer(&self.shared, &inner, &address, frame, reply.reply)
        })
    }

    fn consumer_added(&self, address: &Arc<str>) {
        let _ = self.control.send(Control::Sync(Arc::clone(address)));
    }

    fn consumer_removed(&self, address: &Arc<str>) {
        let _ = self.control.send(Control::Sync(Arc::clone(address)));
    }

    fn flush(&self) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            let (tx, rx) = oneshot::channel();
            self.control
                .send(Control::Flush(tx))
                .map_err(|_| "the bus is closed".to_owned())?;
            rx.await.map_err(|_| "the bus is closed".to_owned())?
        })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            shapes::leave(&self.shared, &self.id).await;
            let (tx, rx) = oneshot::channel();
            if self.control.send(Control::Close(tx)).is_ok() {
                let _ = rx.await;
            }
        })
    }

    fn counts(&self) -> RemoteCounts {
        let counts = &self.shared.counts;
        RemoteCounts {
            dropped: counts.dropped.load(Ordering::Relaxed),
            disconnects: counts.disconnects.load(Ordering::Relaxed),
            denied: counts.denied.load(Ordering::Relaxed),
        }
    }

    fn joined(&self) {
        tokio::spawn(shapes::exchange(
            Arc::clone(&self.shared),
            Weak::clone(&self.inner),
            self.id.clone(),
            self.stop.subscribe(),
            self.announced.clone(),
        ));
    }

    fn announced(&self) -> BoxFuture<'_, ()> {
        let mut announced = self.announced.subscribe();
        Box::pin(async move {
            // Bounded: a server that does not answer does not hold the
            // connect up (the exchange goes on in the background).
            let _ = tokio::time::timeout(Duration::from_secs(2), announced.wait_for(|&done| done))
                .await;
        })
    }
}
