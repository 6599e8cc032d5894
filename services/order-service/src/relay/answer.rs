//! The point service's answer body, streamed to the app as it arrives, within the relay's
//! deadline: the wait (10 s, 20 s on the pay routes) bounds the whole call, body included,
//! so a point service that stalls half way through a body cannot hold the app's connection
//! and the worker's memory for ever.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use actix_web::body::{BodySize, MessageBody};
use actix_web::web::Bytes;
use hyper::body::{Body, Incoming};
use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep, sleep_until};

#[derive(Debug, thiserror::Error)]
pub enum CutShort {
    #[error("the point service's answer broke off: {0}")]
    Upstream(#[from] hyper::Error),
    #[error("the point service's answer did not end within the relay's wait")]
    Deadline,
}

pin_project! {
    /// The body of a relayed answer: the upstream's bytes, unchanged; its trailers (HTTP/1.1
    /// chunked trailers, which the relay does not forward) are skipped.
    pub struct Streamed {
        #[pin]
        body: Incoming,
        #[pin]
        deadline: Sleep,
    }
}

impl Streamed {
    pub fn new(body: Incoming, deadline: Instant) -> Self {
        Self {
            body,
            deadline: sleep_until(deadline),
        }
    }
}

impl MessageBody for Streamed {
    type Error = CutShort;

    /// The upstream's `Content-Length` when it sent one, so the app gets the same framing.
    fn size(&self) -> BodySize {
        match self.body.size_hint().exact() {
            Some(length) => BodySize::Sized(length),
            None => BodySize::Stream,
        }
    }

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let mut this = self.project();
        loop {
            match this.body.as_mut().poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => return Poll::Ready(Some(Ok(data))),
                    Err(_trailers) => continue,
                },
                Poll::Ready(Some(Err(e))) => {
                    tracing::warn!(upstream = "point-service", error.message = %e, "relayed answer broke off");
                    return Poll::Ready(Some(Err(e.into())));
                }
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => {
                    ready!(this.deadline.as_mut().poll(cx));
                    tracing::warn!(
                        upstream = "point-service",
                        "relayed answer cut at the relay's deadline"
                    );
                    return Poll::Ready(Some(Err(CutShort::Deadline)));
                }
            }
        }
    }
}
