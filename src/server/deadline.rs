//! Which read deadline applies to an HTTP/1 connection at each moment: a plain state machine
//! fed with the bytes that arrive and the responses that leave, so the rules are tested without
//! sockets (the I/O wrapper in `conn.rs` applies them).
//!
//! - A connection that has not started a request yet (just accepted) must start and finish its
//!   request head within the **header timeout**: sending nothing, or half a request line, is
//!   cut there.
//! - After a response, a kept-alive connection may sit idle for the **idle timeout** before
//!   its next request starts; from that request's first byte, the head again has the header
//!   timeout.
//! - Once a head is complete the wrapper sets no read deadline: the handler bounds the body
//!   with the **body timeout** (`api::read_body`), and handlers answer quickly.
//! - A write the client does not take (it stopped reading) has the idle timeout too.
//!
//! hyper's own `header_read_timeout` cannot tell the idle wait from the head: its timer runs
//! from the moment the connection waits for a head, so it would cut idle keep-alive connections
//! at the header timeout. The head's end is found by the blank line (`\r\n\r\n`) that ends
//! every HTTP/1 head; a bare `\n\n` (which hyper also accepts) is seen too.

use std::time::Duration;

use tokio::time::Instant;

/// The three bounds; every one is at least a second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timeouts {
    pub(crate) header: Duration,
    pub(crate) idle: Duration,
    pub body: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No byte of the next request yet; `fresh` until the first request started.
    Waiting { since: Instant, fresh: bool },
    /// Reading a head that started at `since`; `tail` is how much of the blank line that ends
    /// it has been seen (see [`advance`]).
    Head { since: Instant, tail: u8 },
    /// The head is read; the request is the handler's until its response leaves.
    Busy,
}

/// The read-deadline state of one connection.
#[derive(Debug, Clone)]
pub(crate) struct ConnClock {
    phase: Phase,
    /// When a write started waiting for the client to take bytes, if one is waiting.
    write_blocked: Option<Instant>,
}

/// Feeds one byte to the end-of-head matcher: `tail` counts the bytes of `\r\n\r\n` seen so
/// far (a `\n\n` also ends a head). 4 means the head is complete.
fn advance(tail: u8, byte: u8) -> u8 {
    match (tail, byte) {
        (0 | 2, b'\r') => tail + 1,
        (1, b'\n') => 2,
        (3 | 2, b'\n') => 4,
        (_, b'\n') => 2,
        (_, b'\r') => 1,
        _ => 0,
    }
}

impl ConnClock {
    /// A connection accepted at `now`.
    pub(crate) fn new(now: Instant) -> ConnClock {
        ConnClock {
            phase: Phase::Waiting {
                since: now,
                fresh: true,
            },
            write_blocked: None,
        }
    }

    /// Bytes arrived at `now`.
    pub(crate) fn on_read(&mut self, bytes: &[u8], now: Instant) {
        for &b in bytes {
            match &mut self.phase {
                // Empty lines before a request line are allowed (RFC 9112 §2.2) and are not
                // the start of a head.
                Phase::Waiting { .. } if b == b'\r' || b == b'\n' => {}
                Phase::Waiting { .. } => {
                    self.phase = Phase::Head {
                        since: now,
                        tail: 0,
                    }
                }
                Phase::Head { tail, .. } => {
                    *tail = advance(*tail, b);
                    if *tail == 4 {
                        self.phase = Phase::Busy;
                    }
                }
                // A body, or a pipelined request behind it: the handler's business.
                Phase::Busy => return,
            }
        }
    }

    /// Bytes of a response were written at `now`. A final response ends the request; an
    /// interim one (`HTTP/1.1 100 Continue`) does not.
    pub(crate) fn on_write(&mut self, bytes: &[u8], now: Instant) {
        self.write_blocked = None;
        let interim = bytes.starts_with(b"HTTP/1.1 1") || bytes.starts_with(b"HTTP/1.0 1");
        if self.phase == Phase::Busy && !bytes.is_empty() && !interim {
            self.phase = Phase::Waiting {
                since: now,
                fresh: false,
            };
        }
    }

    /// A write found the client's receive window full at `now`.
    pub(crate) fn on_write_blocked(&mut self, now: Instant) {
        self.write_blocked.get_or_insert(now);
    }

    /// When a read that is waiting now must give up, if ever.
    pub(crate) fn read_deadline(&self, t: &Timeouts) -> Option<Instant> {
        match self.phase {
            Phase::Waiting { since, fresh: true } => Some(since + t.header),
            Phase::Waiting {
                since,
                fresh: false,
            } => Some(since + t.idle),
            Phase::Head { since, .. } => Some(since + t.header),
            Phase::Busy => None,
        }
    }

    /// When a write that is waiting now must give up, if ever.
    pub(crate) fn write_deadline(&self, t: &Timeouts) -> Option<Instant> {
        self.write_blocked.map(|since| since + t.idle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Timeouts = Timeouts {
        header: Duration::from_secs(10),
        idle: Duration::from_secs(60),
        body: Duration::from_secs(30),
    };

    fn secs(t0: Instant, s: u64) -> Instant {
        t0 + Duration::from_secs(s)
    }

    #[test]
    fn a_fresh_connection_has_the_header_timeout_from_its_start() {
        let t0 = Instant::now();
        let mut c = ConnClock::new(t0);
        assert_eq!(c.read_deadline(&T), Some(secs(t0, 10)));
        // Half a request line later, the head still counts from its first byte.
        c.on_read(b"GET /api/v3/sta", secs(t0, 3));
        assert_eq!(c.read_deadline(&T), Some(secs(t0, 13)));
        c.on_read(b"tus/ HTTP/1.1\r\nHost: x\r\n", secs(t0, 5));
        assert_eq!(c.read_deadline(&T), Some(secs(t0, 13)));
        c.on_read(b"\r\n", secs(t0, 6));
        assert_eq!(c.read_deadline(&T), None, "the head is complete");
    }

    #[test]
    fn after_a_response_the_idle_timeout_runs_until_the_next_request_starts() {
        let t0 = Instant::now();
        let mut c = ConnClock::new(t0);
        c.on_read(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", t0);
        c.on_write(b"HTTP/1.1 200 OK\r\n", secs(t0, 1));
        assert_eq!(c.read_deadline(&T), Some(secs(t0, 61)));
        c.on_read(b"\r\n", secs(t0, 20));
        assert_eq!(c.read_deadline(&T), Some(secs(t0, 61)), "blank lines");
        c.on_read(b"P", secs(t0, 30));
        assert_eq!(c.read_deadline(&T), Some(secs(t0, 40)), "a new head");
    }

    #[test]
    fn a_head_split_anywhere_ends_at_its_blank_line() {
        let head = b"POST /ping/x HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc";
        for split in 0..head.len() {
            let t0 = Instant::now();
            let mut c = ConnClock::new(t0);
            c.on_read(&head[..split], t0);
            c.on_read(&head[split..], t0);
            assert_eq!(c.read_deadline(&T), None, "split at {split}");
        }
        let mut c = ConnClock::new(Instant::now());
        c.on_read(b"GET / HTTP/1.1\nHost: a\n\n", Instant::now());
        assert_eq!(c.read_deadline(&T), None, "bare newlines");
        let mut c = ConnClock::new(Instant::now());
        c.on_read(b"GET / HTTP/1.1\r\nHost: a\r\n", Instant::now());
        assert!(
            c.read_deadline(&T).is_some(),
            "one line break is not the end"
        );
    }

    #[test]
    fn an_interim_response_does_not_end_the_request() {
        let t0 = Instant::now();
        let mut c = ConnClock::new(t0);
        c.on_read(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n", t0);
        c.on_write(b"HTTP/1.1 100 Continue\r\n\r\n", t0);
        assert_eq!(c.read_deadline(&T), None, "the body is still the handler's");
        c.on_write(b"HTTP/1.1 200 OK\r\n", secs(t0, 2));
        assert_eq!(c.read_deadline(&T), Some(secs(t0, 62)));
    }

    #[test]
    fn a_client_that_stops_reading_gets_the_idle_timeout_for_its_writes() {
        let t0 = Instant::now();
        let mut c = ConnClock::new(t0);
        assert_eq!(c.write_deadline(&T), None);
        c.on_write_blocked(secs(t0, 1));
        c.on_write_blocked(secs(t0, 5));
        assert_eq!(
            c.write_deadline(&T),
            Some(secs(t0, 61)),
            "from the first block"
        );
        c.on_write(b"more", secs(t0, 6));
        assert_eq!(c.write_deadline(&T), None);
    }
}
