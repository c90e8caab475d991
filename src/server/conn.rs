//! The socket of one HTTP connection, wrapped so that a read or a write that waits past the
//! deadline [`ConnClock`] gives fails with `TimedOut`; hyper then closes the connection.
//! Deadlines only matter while an operation waits: a connection that keeps moving is never
//! cut by them.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use crate::server::deadline::{ConnClock, Timeouts};

/// A TCP stream with the read and write deadlines of `deadline.rs`.
pub(super) struct TimedStream {
    inner: TcpStream,
    clock: ConnClock,
    timeouts: Timeouts,
    /// One timer, re-armed to whichever deadline a waiting operation has.
    timer: Pin<Box<Sleep>>,
}

impl TimedStream {
    pub(super) fn new(inner: TcpStream, timeouts: Timeouts) -> TimedStream {
        let now = Instant::now();
        TimedStream {
            inner,
            clock: ConnClock::new(now),
            timeouts,
            timer: Box::pin(tokio::time::sleep_until(now + timeouts.idle)),
        }
    }

    /// Ready(TimedOut) when `deadline` has passed, else arms the timer to wake `cx` then.
    fn expired(&mut self, deadline: Option<Instant>, cx: &mut Context<'_>) -> bool {
        let Some(deadline) = deadline else {
            return false;
        };
        if self.timer.deadline() != deadline {
            self.timer.as_mut().reset(deadline);
        }
        self.timer.as_mut().poll(cx).is_ready()
    }
}

impl TimedStream {
    /// A write the client's window did not take: pending until the write deadline passes.
    fn write_blocked(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        self.clock.on_write_blocked(Instant::now());
        let deadline = self.clock.write_deadline(&self.timeouts);
        if self.expired(deadline, cx) {
            Poll::Ready(Err(timed_out("writing the response")))
        } else {
            Poll::Pending
        }
    }
}

fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, format!("{what} timed out"))
}

impl AsyncRead for TimedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                this.clock.on_read(&buf.filled()[before..], Instant::now());
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                let deadline = this.clock.read_deadline(&this.timeouts);
                if this.expired(deadline, cx) {
                    Poll::Ready(Err(timed_out("reading the request")))
                } else {
                    Poll::Pending
                }
            }
        }
    }
}

impl AsyncWrite for TimedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write(cx, data) {
            Poll::Ready(Ok(n)) => {
                this.clock.on_write(&data[..n], Instant::now());
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => this.write_blocked(cx),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write_vectored(cx, bufs) {
            Poll::Ready(Ok(n)) => {
                // What matters is whether a final response started: its first slice says.
                let first = bufs
                    .iter()
                    .find(|b| !b.is_empty())
                    .map_or(&[][..], |b| &b[..]);
                let written = &first[..n.min(first.len())];
                this.clock.on_write(written, Instant::now());
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => this.write_blocked(cx),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
