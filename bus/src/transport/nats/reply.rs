// Replies over NATS: a request's answer goes to the NATS reply subject of
// the request; a reply that expects an answer (`reply_and_request`) goes
// there as a NATS request of its own. The conversation's logic is the
// cluster's (`cluster::answer`, `cluster::read_answer`); this file only
// carries its frames.

use std::sync::Arc;
use std::time::Duration;

use crate::transport::BoxFuture;
use crate::transport::cluster::{Answered, Answers, Frame};
use crate::transport::nats::connect::Link;
use crate::transport::nats::outbound::{publish_answer, request_failed};
use crate::transport::nats::wire;

impl Answers for Link {
    type To = async_nats::Subject;

    const LIMIT: &'static str = "the NATS server";

    fn max_payload(&self) -> usize {
        self.client.max_payload()
    }

    fn finish(self: &Arc<Self>, to: Self::To, frame: Frame) -> BoxFuture<'static, ()> {
        Box::pin(publish_answer(Arc::clone(self), to, frame))
    }

    fn ask(
        self: &Arc<Self>,
        to: Self::To,
        frame: Frame,
        wait: Duration,
        address: &Arc<str>,
    ) -> BoxFuture<'static, Answered<Self::To>> {
        let link = Arc::clone(self);
        let address = Arc::clone(address);
        Box::pin(async move {
            let request = async_nats::Request::new()
                .headers(wire::headers(&frame))
                .payload(frame.payload)
                .timeout(Some(wait));
            let message = link
                .client
                .send_request(to, request)
                .await
                .map_err(|e| request_failed(e, &address, wait, &link.servers))?;
            Ok((
                wire::frame(message.headers.as_ref(), message.payload),
                message.reply,
            ))
        })
    }
}
