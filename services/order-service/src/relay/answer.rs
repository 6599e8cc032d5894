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

use super::connections::Connection;

#[derive(Debug, thiserror::Error)]
pub enum CutShort {
    #[error("the point service's answer broke off: {0}")]
    Upstream(#[from] hyper::Error),
    #[error("the point service's answer did not end within the relay's wait")]
    Deadline,
}

pin_project! {
    /// The body of a relayed answer: the upstream's bytes, unchanged; its trailers (HTTP/1.1
    /// chunked trailers, which the relay does not forward) are skipped. The connection it
    /// came on goes back to the worker's idle ones when it has been read whole, and closes
    /// if it is dropped before (the app went away, the answer broke off).
    pub struct Streamed {
        #[pin]
        body: Incoming,
        connection: Option<Connection>,
        deadline: Instant,
        // Made only when the body has to be waited for: most answers come whole with their
        // head, and a timer costs a runtime handle and a registration.
        timer: Option<Pin<Box<Sleep>>>,
    }
}

impl Streamed {
    pub fn new(body: Incoming, connection: Connection, deadline: Instant) -> Self {
        let mut connection = Some(connection);
        // No body to read (a `Content-Length: 0`): actix may never poll for one.
        if body.is_end_stream() {
            give_back(&mut connection);
        }
        Self {
            body,
            connection,
            deadline,
            timer: None,
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
                    Ok(data) => {
                        // The last of a `Content-Length` body: the connection can go back
                        // before the app has it, so the app's next request finds it idle.
                        if this.body.is_end_stream() {
                            give_back(this.connection);
                        }
                        return Poll::Ready(Some(Ok(data)));
                    }
                    Err(_trailers) => continue,
                },
                Poll::Ready(Some(Err(e))) => {
                    tracing::warn!(upstream = "point-service", error.message = %e, "relayed answer broke off");
                    return Poll::Ready(Some(Err(e.into())));
                }
                Poll::Ready(None) => {
                    give_back(this.connection);
                    return Poll::Ready(None);
                }
                Poll::Pending => {
                    let deadline = *this.deadline;
                    let timer = this
                        .timer
                        .get_or_insert_with(|| Box::pin(sleep_until(deadline)));
                    ready!(timer.as_mut().poll(cx));
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

fn give_back(connection: &mut Option<Connection>) {
    if let Some(connection) = connection.take() {
        connection.give_back();
    }
}
