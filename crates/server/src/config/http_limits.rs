//! The `HTTP_*` limits: how many connections a service holds and how long a slow client may
//! hold one.

use std::time::Duration;

use super::Env;

/// How much longer than the callers' idle time a stopping server drains: the time between the
/// server writing an answer and its caller reading it, and a busy caller's delay in sending.
pub const STOP_MARGIN: Duration = Duration::from_secs(5);

/// How many connections a service holds and how long a slow client may hold one
/// (`docs/decisions.md`, "Abuse limits"). Applied by [`crate::run`] to actix's server and by
/// the app's body middleware. Each variable, with its default and bounds:
///
/// - `HTTP_MAX_CONNECTIONS` (512; 1 to 100 000): open connections per process, split evenly
///   over the workers (at least one each); past it, new connections wait in the listen
///   backlog;
/// - `HTTP_BACKLOG` (1024; 16 to 65 535): connections the kernel queues while the process
///   accepts none (capped by `net.core.somaxconn`);
/// - `HTTP_HEAD_TIMEOUT_MS` (5000; 100 to 60 000): a new connection's first request head must
///   arrive whole within this, else 408 and close;
/// - `HTTP_BODY_TIMEOUT_MS` (10000; 100 to 120 000): a request body must arrive whole within
///   this from its head, else 408 in the route's envelope and close;
/// - `HTTP_KEEP_ALIVE_SECS` (75; 0 to 3600): an idle keep-alive connection is closed after
///   this (0: no keep-alive);
/// - `HTTP_DISCONNECT_TIMEOUT_MS` (1000; 0 to 30 000): how long a closing connection waits
///   for the client's side of the shutdown;
/// - `HTTP_CALLER_IDLE_SECS` (4; 1 to 60): how long this process's own clients keep an idle
///   connection to another service before they drop it (the callers' side of the stop);
/// - `HTTP_STOP_DRAIN_SECS` (10; 2 to 120): how long a stopping server keeps serving the
///   connections it has open, each answer closing its connection, before it stops
///   ([`crate::stopping`]).
///
/// The server never closes an idle connection a caller may still send on, so the callers'
/// idle time must be shorter than each of the server's ways of closing one:
/// `HTTP_STOP_DRAIN_SECS` by [`STOP_MARGIN`] at least (a caller's idle clock starts when it
/// has read an answer, after the server wrote it), `HTTP_KEEP_ALIVE_SECS` (unless 0), and
/// `HTTP_HEAD_TIMEOUT_MS` (a connection a caller opened and then never used waits for its
/// first request head that long). A start with any of them wrong is refused, and
/// `scripts/check-deploy.sh` checks every Deployment's drain against every caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    pub max_connections: usize,
    pub backlog: u32,
    /// actix's `client_request_timeout`.
    pub head_timeout: Duration,
    /// The body middleware's read deadline (`envelope::body_limits`).
    pub body_timeout: Duration,
    /// actix's `keep_alive`; zero turns keep-alive off.
    pub keep_alive: Duration,
    /// actix's `client_disconnect_timeout`.
    pub disconnect_timeout: Duration,
    /// The pool idle timeout of this process's clients of other services.
    pub caller_idle: Duration,
    /// How long a stopping server serves its open connections before it stops.
    pub stop_drain: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            max_connections: 512,
            backlog: 1024,
            head_timeout: Duration::from_millis(5000),
            body_timeout: Duration::from_millis(10_000),
            keep_alive: Duration::from_secs(75),
            disconnect_timeout: Duration::from_millis(1000),
            caller_idle: telemetry::client::DEFAULT_IDLE,
            stop_drain: Duration::from_secs(10),
        }
    }
}

impl HttpLimits {
    /// `HTTP_MAX_CONNECTIONS`, `HTTP_BACKLOG`, `HTTP_HEAD_TIMEOUT_MS`, `HTTP_BODY_TIMEOUT_MS`,
    /// `HTTP_KEEP_ALIVE_SECS`, `HTTP_DISCONNECT_TIMEOUT_MS`, `HTTP_CALLER_IDLE_SECS`,
    /// `HTTP_STOP_DRAIN_SECS`, with the stop's three checks of the callers' idle time
    /// ([`HttpLimits::stop_problems`]).
    pub fn from_env(env: &mut Env) -> Self {
        let d = Self::default();
        let limits = Self {
            max_connections: env.int_or(
                "HTTP_MAX_CONNECTIONS",
                d.max_connections as u64,
                1..=100_000,
            ) as usize,
            backlog: env.int_or("HTTP_BACKLOG", u64::from(d.backlog), 16..=65_535) as u32,
            head_timeout: env.millis_or("HTTP_HEAD_TIMEOUT_MS", d.head_timeout, 100..=60_000),
            body_timeout: env.millis_or("HTTP_BODY_TIMEOUT_MS", d.body_timeout, 100..=120_000),
            keep_alive: env.secs_or("HTTP_KEEP_ALIVE_SECS", d.keep_alive, 0..=3600),
            disconnect_timeout: env.millis_or(
                "HTTP_DISCONNECT_TIMEOUT_MS",
                d.disconnect_timeout,
                0..=30_000,
            ),
            caller_idle: env.secs_or("HTTP_CALLER_IDLE_SECS", d.caller_idle, 1..=60),
            stop_drain: env.secs_or("HTTP_STOP_DRAIN_SECS", d.stop_drain, 2..=120),
        };
        for problem in limits.stop_problems() {
            env.error(problem);
        }
        limits
    }

    /// What would let a caller send on a connection this server closes: a drain, a keep-alive
    /// or a head timeout no longer than the callers keep an idle connection (the drain by
    /// [`STOP_MARGIN`] more).
    pub fn stop_problems(&self) -> Vec<String> {
        let idle = self.caller_idle.as_secs();
        let mut problems = Vec::new();
        if self.stop_drain < self.caller_idle + STOP_MARGIN {
            problems.push(format!(
                "HTTP_STOP_DRAIN_SECS ({}) must be at least HTTP_CALLER_IDLE_SECS ({idle}) + {} s: \
                 a stopping server would close connections its callers may still send on",
                self.stop_drain.as_secs(),
                STOP_MARGIN.as_secs()
            ));
        }
        if self.head_timeout <= self.caller_idle {
            problems.push(format!(
                "HTTP_HEAD_TIMEOUT_MS ({}) must exceed HTTP_CALLER_IDLE_SECS ({idle}): the server \
                 would close opened, unused connections its callers may still send on",
                self.head_timeout.as_millis()
            ));
        }
        if !self.keep_alive.is_zero() && self.keep_alive <= self.caller_idle {
            problems.push(format!(
                "HTTP_KEEP_ALIVE_SECS ({}) must exceed HTTP_CALLER_IDLE_SECS ({idle}) or be 0: \
                 the server would close idle connections its callers may still send on",
                self.keep_alive.as_secs()
            ));
        }
        problems
    }

    /// actix's limit is per worker: `max_connections` split evenly, at least one each.
    pub fn connections_per_worker(&self, workers: usize) -> usize {
        (self.max_connections / workers.max(1)).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CommonConfig, env};
    use super::*;

    #[test]
    fn http_limits_have_defaults_bounds_and_names() {
        let mut e = env(&[]);
        let common = CommonConfig::from_env(&mut e, "test", 1);
        assert_eq!(common.http, HttpLimits::default());
        assert_eq!(common.http.max_connections, 512);
        assert_eq!(common.http.keep_alive, Duration::from_secs(75));

        let mut e = env(&[
            ("HTTP_MAX_CONNECTIONS", "2"),
            ("HTTP_BACKLOG", "64"),
            ("HTTP_HEAD_TIMEOUT_MS", "1250"),
            ("HTTP_BODY_TIMEOUT_MS", "300"),
            ("HTTP_KEEP_ALIVE_SECS", "0"),
            ("HTTP_DISCONNECT_TIMEOUT_MS", "0"),
            ("HTTP_CALLER_IDLE_SECS", "1"),
            ("HTTP_STOP_DRAIN_SECS", "6"),
        ]);
        let http = HttpLimits::from_env(&mut e);
        assert!(e.finish(()).is_ok());
        assert_eq!(
            http,
            HttpLimits {
                max_connections: 2,
                backlog: 64,
                head_timeout: Duration::from_millis(1250),
                body_timeout: Duration::from_millis(300),
                keep_alive: Duration::ZERO,
                disconnect_timeout: Duration::ZERO,
                caller_idle: Duration::from_secs(1),
                stop_drain: Duration::from_secs(6),
            }
        );

        // No limit can be switched off or made unbounded.
        let mut e = env(&[
            ("HTTP_MAX_CONNECTIONS", "0"),
            ("HTTP_BACKLOG", "1"),
            ("HTTP_HEAD_TIMEOUT_MS", "0"),
            ("HTTP_BODY_TIMEOUT_MS", "1000000"),
            ("HTTP_KEEP_ALIVE_SECS", "-1"),
            ("HTTP_DISCONNECT_TIMEOUT_MS", "x"),
        ]);
        HttpLimits::from_env(&mut e);
        let err = e.finish(()).unwrap_err();
        assert_eq!(err.0.len(), 6, "{err}");
        assert_eq!(
            err.0[0],
            r#"HTTP_MAX_CONNECTIONS="0" is invalid: expected an integer from 1 to 100000"#
        );
    }

    #[test]
    fn a_stop_that_would_close_a_connection_a_caller_may_still_use_is_refused() {
        let mut e = env(&[
            ("HTTP_CALLER_IDLE_SECS", "20"),
            ("HTTP_STOP_DRAIN_SECS", "24"),
            ("HTTP_KEEP_ALIVE_SECS", "15"),
            ("HTTP_HEAD_TIMEOUT_MS", "20000"),
        ]);
        HttpLimits::from_env(&mut e);
        let err = e.finish(()).unwrap_err();
        assert_eq!(
            err.0,
            [
                "HTTP_STOP_DRAIN_SECS (24) must be at least HTTP_CALLER_IDLE_SECS (20) + 5 s: a \
                 stopping server would close connections its callers may still send on",
                "HTTP_HEAD_TIMEOUT_MS (20000) must exceed HTTP_CALLER_IDLE_SECS (20): the server \
                 would close opened, unused connections its callers may still send on",
                "HTTP_KEEP_ALIVE_SECS (15) must exceed HTTP_CALLER_IDLE_SECS (20) or be 0: the \
                 server would close idle connections its callers may still send on",
            ]
        );
        // The margin exactly is enough, and keep-alive off closes nothing idle.
        let mut e = env(&[
            ("HTTP_CALLER_IDLE_SECS", "20"),
            ("HTTP_STOP_DRAIN_SECS", "25"),
            ("HTTP_KEEP_ALIVE_SECS", "0"),
            ("HTTP_HEAD_TIMEOUT_MS", "20001"),
        ]);
        HttpLimits::from_env(&mut e);
        assert!(e.finish(()).is_ok());
    }

    #[test]
    fn connections_are_split_over_the_workers() {
        let limits = |max_connections| HttpLimits {
            max_connections,
            ..HttpLimits::default()
        };
        assert_eq!(limits(512).connections_per_worker(1), 512);
        assert_eq!(limits(512).connections_per_worker(3), 170);
        assert_eq!(limits(2).connections_per_worker(4), 1);
    }
}
