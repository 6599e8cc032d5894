//! A deadline on the server's answer, for a server that stopped answering without closing
//! the connection (a frozen process, `SIGSTOP`, a stuck host whose kernel still acknowledges
//! TCP): neither `statement_timeout` (the server enforces it) nor TCP keepalives (the kernel
//! answers them) end such a wait, and a request would hold its pooled connection forever.
//!
//! The stream counts the PostgreSQL protocol's message frames as they pass: each `Sync` or
//! simple `Query` the client sends (and the startup message) is owed one `ReadyForQuery`.
//! While something is owed and nothing at all passes for longer than the
//! limit, reading fails with `TimedOut`; tokio-postgres then fails the connection, the
//! waiting query gets an error and the pool never hands that connection out again. Bytes
//! that pass either way restart the clock, so a long result that streams (or a client that
//! is still sending) is not cut; an idle connection, or one idle inside a transaction, owes
//! nothing and has no deadline.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// Frame types that are owed a `ReadyForQuery`: the startup message (no type byte, marked
/// here as 0), `Sync` and a simple `Query`.
const OWED_A_REPLY: [u8; 3] = [0, b'S', b'Q'];
const READY_FOR_QUERY: u8 = b'Z';

/// Splits one direction of the protocol into frames and reports each frame's type byte.
/// Every frame is a type byte and a 4-byte length that counts itself, except the client's
/// first (the startup message: the length only).
#[derive(Debug)]
struct Frames {
    untyped_first: bool,
    header: [u8; 5],
    have: usize,
    skip: usize,
}

impl Frames {
    fn new(untyped_first: bool) -> Self {
        Self {
            untyped_first,
            header: [0; 5],
            have: 0,
            skip: 0,
        }
    }

    /// Feeds the next bytes of the direction; calls `frame` with each new frame's type.
    fn feed(&mut self, mut bytes: &[u8], mut frame: impl FnMut(u8)) {
        while !bytes.is_empty() {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len());
                self.skip -= n;
                bytes = &bytes[n..];
                continue;
            }
            let header_len = if self.untyped_first { 4 } else { 5 };
            let n = (header_len - self.have).min(bytes.len());
            self.header[self.have..self.have + n].copy_from_slice(&bytes[..n]);
            self.have += n;
            bytes = &bytes[n..];
            if self.have == header_len {
                let (kind, length) = if self.untyped_first {
                    (0, &self.header[..4])
                } else {
                    (self.header[0], &self.header[1..5])
                };
                let length = u32::from_be_bytes([length[0], length[1], length[2], length[3]]);
                self.skip = (length as usize).saturating_sub(4);
                self.have = 0;
                self.untyped_first = false;
                frame(kind);
            }
        }
    }
}

/// A client connection's stream with a deadline on the server's answers (module doc).
pub struct ReplyDeadline<S> {
    inner: S,
    limit: Duration,
    sent: Frames,
    received: Frames,
    /// `ReadyForQuery` frames owed by the server.
    owed: u64,
    deadline: Pin<Box<Sleep>>,
}

impl<S> ReplyDeadline<S> {
    pub fn new(inner: S, limit: Duration) -> Self {
        Self {
            inner,
            limit,
            sent: Frames::new(true),
            received: Frames::new(false),
            owed: 0,
            deadline: Box::pin(tokio::time::sleep(limit)),
        }
    }

    fn restart_clock(&mut self) {
        let at = Instant::now() + self.limit;
        self.deadline.as_mut().reset(at);
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for ReplyDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let mut answered = 0;
                this.received.feed(&buf.filled()[before..], |kind| {
                    if kind == READY_FOR_QUERY {
                        answered += 1;
                    }
                });
                this.owed = this.owed.saturating_sub(answered);
                if buf.filled().len() > before {
                    this.restart_clock();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending if this.owed > 0 => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "the database server sent nothing for {} ms while a reply was owed",
                        this.limit.as_millis()
                    ),
                ))),
                Poll::Pending => Poll::Pending,
            },
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for ReplyDeadline<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        let written = match Pin::new(&mut this.inner).poll_write(cx, buf) {
            Poll::Ready(Ok(n)) => n,
            other => return other,
        };
        let was_owed = this.owed;
        let mut owed = 0;
        this.sent.feed(&buf[..written], |kind| {
            if OWED_A_REPLY.contains(&kind) {
                owed += 1;
            }
        });
        this.owed += owed;
        if this.owed > 0 && written > 0 {
            // A client still sending (a COPY's data) owes the server nothing to answer yet.
            this.restart_clock();
            if was_owed == 0 {
                // tokio-postgres polls the read side before the write side: register this
                // task with the deadline now, or a server that never answers would never
                // wake it.
                if this.deadline.as_mut().poll(cx).is_ready() {
                    cx.waker().wake_by_ref();
                }
            }
        }
        Poll::Ready(Ok(written))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt, duplex};

    use super::*;

    const LIMIT: Duration = Duration::from_secs(10);

    fn frame(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut f = vec![kind];
        f.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        f.extend_from_slice(body);
        f
    }

    fn startup() -> Vec<u8> {
        let body = b"\0\x03\0\0user\0postgres\0\0";
        let mut f = (body.len() as u32 + 4).to_be_bytes().to_vec();
        f.extend_from_slice(body);
        f
    }

    #[test]
    fn frames_are_found_across_any_split() {
        let mut stream = startup();
        stream.extend(frame(b'P', b"\0SELECT 1\0\0\0"));
        stream.extend(frame(b'S', b""));
        stream.extend(frame(b'Q', b"SELECT 'S'\0"));
        for chunk in 1..stream.len() {
            let mut frames = Frames::new(true);
            let mut kinds = Vec::new();
            for part in stream.chunks(chunk) {
                frames.feed(part, |k| kinds.push(k));
            }
            assert_eq!(kinds, [0, b'P', b'S', b'Q'], "chunks of {chunk}");
        }
    }

    /// A stream past its startup (the startup message answered), and the server's end.
    async fn connected() -> (
        ReplyDeadline<tokio::io::DuplexStream>,
        tokio::io::DuplexStream,
    ) {
        let (client, mut server) = duplex(1024);
        let mut stream = ReplyDeadline::new(client, LIMIT);
        stream.write_all(&startup()).await.unwrap();
        assert_eq!(stream.owed, 1);
        server.write_all(&frame(b'R', &[0; 4])).await.unwrap();
        server.write_all(&frame(b'Z', b"I")).await.unwrap();
        let mut got = [0; 64];
        while stream.owed > 0 {
            assert!(stream.read(&mut got).await.unwrap() > 0);
        }
        (stream, server)
    }

    /// The next read fails with `TimedOut`, exactly [`LIMIT`] from now by the paused clock.
    async fn assert_times_out_after_limit(stream: &mut ReplyDeadline<tokio::io::DuplexStream>) {
        let started = Instant::now();
        let error = stream.read(&mut [0; 64]).await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), LIMIT);
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_that_owes_a_reply_and_sends_nothing_times_out() {
        let (mut stream, _server) = connected().await;
        stream.write_all(&frame(b'S', b"")).await.unwrap();
        // The server's end is still open (`_server`): only the deadline ends the wait.
        assert_times_out_after_limit(&mut stream).await;
    }

    #[tokio::test(start_paused = true)]
    async fn bytes_from_the_server_restart_the_clock() {
        let (mut stream, mut server) = connected().await;
        stream.write_all(&frame(b'Q', b"SELECT 1\0")).await.unwrap();
        tokio::time::sleep(LIMIT - Duration::from_secs(1)).await;
        server.write_all(&frame(b'C', b"SELECT 1\0")).await.unwrap();
        let mut got = [0; 64];
        assert!(stream.read(&mut got).await.unwrap() > 0);
        // Still owed (no ReadyForQuery yet): a full limit from the last bytes, not 1 s.
        assert_times_out_after_limit(&mut stream).await;
    }

    #[tokio::test(start_paused = true)]
    async fn an_answered_connection_owes_nothing_and_has_no_deadline() {
        let (mut stream, mut server) = connected().await;
        stream.write_all(&frame(b'Q', b"SELECT 1\0")).await.unwrap();
        server.write_all(&frame(b'C', b"SELECT 1\0")).await.unwrap();
        server.write_all(&frame(b'Z', b"I")).await.unwrap();
        let mut got = [0; 64];
        while stream.owed > 0 {
            assert!(stream.read(&mut got).await.unwrap() > 0);
        }
        let idle = tokio::time::timeout(LIMIT * 5, stream.read(&mut got)).await;
        assert!(
            idle.is_err(),
            "an idle connection must not time out: {idle:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_message_group_owes_nothing_until_its_sync() {
        let (mut stream, _server) = connected().await;
        stream
            .write_all(&frame(b'P', b"\0SELECT 1\0\0\0"))
            .await
            .unwrap();
        stream.write_all(&frame(b'H', b"")).await.unwrap();
        assert_eq!(stream.owed, 0);
        stream.write_all(&frame(b'S', b"")).await.unwrap();
        assert_eq!(stream.owed, 1);
    }
}
