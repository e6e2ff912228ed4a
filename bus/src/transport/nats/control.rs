// The control task: owns the readers and processes, in order, the
// subscription changes (`Sync`), flushes and the close (drain).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};

use crate::transport::Node;
use crate::transport::nats::link::Link;
use crate::transport::nats::readers::{ReaderHandle, Stop, subscribe};

pub(super) enum Control {
    /// Reconcile the subscription of an address with the local table.
    Sync(Arc<str>),
    Flush(oneshot::Sender<Result<(), String>>),
    Close(oneshot::Sender<()>),
}

pub(super) async fn control_loop(
    shared: Arc<Link>,
    inner: Weak<dyn Node>,
    mut rx: mpsc::UnboundedReceiver<Control>,
    mut closed: watch::Receiver<bool>,
) {
    let mut readers: HashMap<Arc<str>, ReaderHandle> = HashMap::new();
    #[cfg(feature = "jetstream")]
    let mut durable: HashMap<Arc<str>, crate::transport::nats::durable::DurableReaders> =
        HashMap::new();
    while let Some(command) = rx.recv().await {
        match command {
            Control::Sync(address) => {
                if shared.closing.load(Ordering::Acquire) {
                    continue;
                }
                let Some(bus) = inner.upgrade() else { break };
                let want = bus.local().has_exported(&address);
                drop(bus);
                match (want, readers.contains_key(&address)) {
                    (true, false) => match subscribe(&shared, &inner, &address).await {
                        Ok(reader) => {
                            #[cfg(feature = "jetstream")]
                            if let Some(d) =
                                crate::transport::nats::durable::start(&shared, &inner, &address)
                                    .await
                            {
                                durable.insert(Arc::clone(&address), d);
                            }
                            readers.insert(address, reader);
                        }
                        Err(e) => tracing::warn!(
                            address = &*address,
                            error = %e,
                            "cannot subscribe on NATS; remote messages will not reach this node's consumers of this address"
                        ),
                    },
                    (false, true) => {
                        #[cfg(feature = "jetstream")]
                        if let Some(d) = durable.remove(&address) {
                            d.stop().await;
                        }
                        if let Some(reader) = readers.remove(&address) {
                            let (ack, acked) = oneshot::channel();
                            if reader.stop.send(Stop::Unsubscribe(ack)).is_ok() {
                                let _ = acked.await;
                            }
                            tracing::debug!(address = &*address, "unsubscribed from NATS");
                        }
                    }
                    _ => {}
                }
            }
            Control::Flush(done) => {
                let _ = done.send(round_trip(&shared).await);
            }
            Control::Close(done) => {
                shared.closing.store(true, Ordering::Release);
                let drain_timeout = inner
                    .upgrade()
                    .map_or(crate::base::options::DEFAULT_TIMEOUT, |bus| {
                        bus.default_timeout()
                    });
                #[cfg(feature = "jetstream")]
                futures_util::future::join_all(durable.drain().map(|(_, d)| d.stop())).await;
                let mut tasks = Vec::with_capacity(readers.len());
                for (_, reader) in readers.drain() {
                    let _ = reader.stop.send(Stop::Drain);
                    tasks.push(reader.task);
                }
                let all = futures_util::future::join_all(tasks);
                if tokio::time::timeout(drain_timeout, all).await.is_err() {
                    tracing::warn!(
                        "NATS drain: in-flight requests still unanswered after {drain_timeout:?}; closing anyway"
                    );
                }
                let _ = tokio::time::timeout(Duration::from_secs(5), shared.client.flush()).await;
                if shared.client.drain().await.is_ok() {
                    let _ =
                        tokio::time::timeout(Duration::from_secs(5), closed.wait_for(|c| *c)).await;
                }
                let _ = done.send(());
                break;
            }
        }
    }
    // Closed, or the bus is gone: readers unsubscribe and finish.
    #[cfg(feature = "jetstream")]
    for (_, d) in durable {
        tokio::spawn(d.stop());
    }
    for (_, reader) in readers {
        let (ack, _) = oneshot::channel();
        let _ = reader.stop.send(Stop::Unsubscribe(ack));
    }
}

/// Waits until the server has processed everything this connection sent
/// so far. A flush only writes the socket, and the server may still handle
/// another connection's message before our SUBs; a request to a subject
/// nobody listens on is answered by the server itself ("no responders")
/// after everything sent before it, so its answer is the proof.
async fn round_trip(shared: &Link) -> Result<(), String> {
    use async_nats::client::RequestErrorKind as Nats;
    let probe = shared.client.new_inbox();
    let request = async_nats::Request::new().timeout(Some(Duration::from_secs(5)));
    match shared.client.send_request(probe, request).await {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == Nats::NoResponders => Ok(()),
        Err(e) => Err(format!(
            "the NATS server at {} did not answer a flush: {e}",
            shared.servers
        )),
    }
}
