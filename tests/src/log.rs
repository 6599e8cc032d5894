//! What a child process writes on its stdout and stderr, line by line, as the harness reads
//! it, and waits on it: for a line to appear ([`Log::wait_for`]), for one more of a kind
//! ([`Log::wait_for_more`]), and for every line written so far to have been read
//! ([`Log::written`]), so that a test that finds no line of some kind has looked at all of
//! them, not at the ones the harness happened to have read.
//!
//! A line the process wrote before the test saw an answer is already in the pipe, but the
//! harness reads the pipe on a task of its own, which runs when it gets its turn: on a loaded
//! machine that may be well after. So nothing here sleeps a fixed time and then looks.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader, ReadBuf};
use tokio::sync::Notify;

/// How long a wait on a log line may take before the test fails: far above what a line
/// takes to arrive, even on a loaded two-core machine.
pub const LOG_WAIT: Duration = Duration::from_secs(30);

/// The lines of one process, both streams, in the order read.
#[derive(Clone)]
pub struct Log {
    name: &'static str,
    lines: Arc<Mutex<Vec<String>>>,
    pipes: Arc<Mutex<Vec<Arc<Pipe>>>>,
}

/// One stream's reader, as seen by [`Log::written`]: `asked` counts the requests to drain
/// it, `drained` is the last request answered (the pipe was found empty after it was made).
#[derive(Default)]
struct Pipe {
    asked: AtomicU64,
    drained: AtomicU64,
    wake: Notify,
}

/// The stream, noting each time it is found empty (a read that would wait), or at its end.
struct Watched<R> {
    inner: R,
    pipe: Arc<Pipe>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        // Read before the pipe is: a request made after this read waits for the next one.
        let asked = self.pipe.asked.load(Ordering::SeqCst);
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &poll {
            Poll::Pending => {
                self.pipe.drained.fetch_max(asked, Ordering::SeqCst);
            }
            Poll::Ready(Ok(())) if buf.filled().len() == before => {
                self.pipe.drained.store(u64::MAX, Ordering::SeqCst);
            }
            Poll::Ready(Err(_)) => {
                self.pipe.drained.store(u64::MAX, Ordering::SeqCst);
            }
            Poll::Ready(Ok(())) => {}
        }
        poll
    }
}

impl Log {
    /// An empty log of the process `name`; [`Log::read`] feeds it.
    pub fn new(name: &'static str) -> Log {
        Log {
            name,
            lines: Arc::default(),
            pipes: Arc::default(),
        }
    }

    /// Reads `stream` into this log, line by line, on a task of its own, until it ends.
    pub fn read(&self, stream: impl AsyncRead + Unpin + Send + 'static) {
        let pipe = Arc::new(Pipe::default());
        self.pipes.lock().unwrap().push(pipe.clone());
        let sink = self.lines.clone();
        let mut lines = BufReader::new(Watched {
            inner: stream,
            pipe: pipe.clone(),
        })
        .lines();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    // `next_line` is cancel safe: a line half read stays in its buffer.
                    line = lines.next_line() => match line {
                        Ok(Some(line)) => sink.lock().unwrap().push(line),
                        Ok(None) | Err(_) => break,
                    },
                    // Asked to drain it: read on, which finds the pipe empty or not.
                    () = pipe.wake.notified() => {}
                }
            }
            pipe.drained.store(u64::MAX, Ordering::SeqCst);
        });
    }

    /// Every line read so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// The lines read so far of which `matches` holds.
    pub fn matching(&self, matches: impl Fn(&str) -> bool) -> Vec<String> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .filter(|line| matches(line))
            .cloned()
            .collect()
    }

    /// Waits until more than `seen` lines match `matches` (`seen`: how many matched before
    /// the action that writes the next one) and returns them all, the newest last. Fails the
    /// test, with the log, after [`LOG_WAIT`].
    pub async fn wait_for_more(
        &self,
        seen: usize,
        what: &str,
        matches: impl Fn(&str) -> bool,
    ) -> Vec<String> {
        let deadline = Instant::now() + LOG_WAIT;
        loop {
            let found = self.matching(&matches);
            if found.len() > seen {
                return found;
            }
            assert!(
                Instant::now() < deadline,
                "{}: no new line {what} within {LOG_WAIT:?} ({seen} before); log:\n{}",
                self.name,
                self.lines().join("\n")
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits for a line of which `matches` holds and returns the first such line.
    pub async fn wait_for(&self, what: &str, matches: impl Fn(&str) -> bool) -> String {
        self.wait_for_more(0, what, matches)
            .await
            .into_iter()
            .next()
            .unwrap()
    }

    /// The lines whose JSON `message` is `message`, waited for until there is one.
    pub async fn wait_for_message(&self, message: &str) -> Vec<serde_json::Value> {
        self.wait_for(&format!("saying {message:?}"), |line| {
            has_message(line, message)
        })
        .await;
        self.lines()
            .iter()
            .filter(|line| has_message(line, message))
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// Every line the process wrote before this call: waits until the harness has read each
    /// stream up to where it was when called (or to its end), then returns the log.
    pub async fn written(&self) -> Vec<String> {
        let pipes = self.pipes.lock().unwrap().clone();
        let deadline = Instant::now() + LOG_WAIT;
        for pipe in pipes {
            let request = pipe.asked.fetch_add(1, Ordering::SeqCst) + 1;
            pipe.wake.notify_one();
            while pipe.drained.load(Ordering::SeqCst) < request {
                assert!(
                    Instant::now() < deadline,
                    "{}: its output was not read within {LOG_WAIT:?}",
                    self.name
                );
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        self.lines()
    }
}

/// Whether `line` is a JSON log line whose `message` is `message`.
pub fn has_message(line: &str, message: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line).is_ok_and(|line| line["message"] == message)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process that writes many lines on both streams, then says so in a file and waits:
    /// once the file is there every line is in the pipes, and `written` returns them all,
    /// however far behind the reading tasks were.
    #[tokio::test]
    async fn written_holds_every_line_written_before_the_call() {
        let done = std::env::temp_dir().join(format!("log-test-{}", uuid::Uuid::new_v4()));
        let script = format!(
            "for i in $(seq 1 3000); do echo out$i; echo err$i >&2; done; touch {}; sleep 30",
            done.display()
        );
        let mut child = tokio::process::Command::new("sh")
            .args(["-c", &script])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let log = Log::new("sh");
        log.read(child.stdout.take().unwrap());
        log.read(child.stderr.take().unwrap());
        // Waited for without letting the reading tasks run (a blocking wait on a
        // current-thread runtime): the lines pile up in the pipes meanwhile.
        let deadline = Instant::now() + LOG_WAIT;
        while !done.exists() {
            assert!(Instant::now() < deadline, "the script did not finish");
            std::thread::sleep(Duration::from_millis(10));
        }
        let lines = log.written().await;
        let _ = std::fs::remove_file(&done);
        for stream in ["out", "err"] {
            let got = lines.iter().filter(|l| l.starts_with(stream)).count();
            assert_eq!(got, 3000, "{stream}: {got} lines of 3000");
        }
        assert_eq!(child.try_wait().unwrap(), None, "the process still runs");
    }
}
