//! The kernel's view of a local TCP port (`/proc/net/tcp`, IPv4), for tests of connection
//! limits: whether a server has taken a connection or leaves it waiting in its accept queue
//! can be seen there at once, where a client only sees silence.

use std::time::{Duration, Instant};

/// The state of one port's sockets on the server's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortState {
    /// Connections to the port the kernel has completed (taken by the server or not).
    pub established: usize,
    /// Of those, how many wait in the listening socket's accept queue, not yet taken.
    pub queued: usize,
}

impl PortState {
    /// Connections the server has taken (accepted).
    pub fn accepted(&self) -> usize {
        self.established.saturating_sub(self.queued)
    }
}

/// The sockets whose local port is `port`, now.
pub fn port_state(port: u16) -> PortState {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let mut state = PortState {
        established: 0,
        queued: 0,
    };
    for line in table.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(local), Some(st), Some(queues)) = (fields.get(1), fields.get(3), fields.get(4))
        else {
            continue;
        };
        let local_port = local
            .rsplit(':')
            .next()
            .and_then(|p| u16::from_str_radix(p, 16).ok());
        if local_port != Some(port) {
            continue;
        }
        match *st {
            // ESTABLISHED
            "01" => state.established += 1,
            // LISTEN: its receive queue field is the accept queue's length.
            "0A" => {
                let rx = queues.rsplit(':').next().unwrap_or("0");
                state.queued += usize::from_str_radix(rx, 16).unwrap_or(0);
            }
            _ => {}
        }
    }
    state
}

/// Waits until `accept` holds for the port's state and returns it; fails the test with the
/// last state seen after 30 s.
pub async fn wait_for_port(port: u16, what: &str, accept: impl Fn(PortState) -> bool) -> PortState {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let state = port_state(port);
        if accept(state) {
            return state;
        }
        assert!(
            Instant::now() < deadline,
            "port {port}: not {what} within 30 s (last {state:?})"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
