//! Serving HTTP/1.1 on a listener we bound ourselves (warp's own bind panics on a taken port),
//! with the limits an unfriendly network needs, and a shutdown that stops accepting, lets
//! in-flight requests finish for a bounded time, and returns.
//!
//! - At most [`Limits::max_connections`] connections at once: past it a new connection gets a
//!   canned `503` and is closed at once, so idle sockets can never take every file descriptor
//!   (the control socket, the SMTP listener and the data file need theirs).
//! - Each connection's socket is a [`conn::TimedStream`]: the header and idle timeouts of
//!   `deadline.rs`; the body timeout is the handlers' (`api::read_body`).
//! - A failing connection is the client's business (a reset, garbage, a timeout): logged at
//!   debug, never at error, so that real errors stand out.
//!
//! Requests reach warp's filter (`web::filter`) with the peer address in their extensions
//! ([`Peer`]), since warp's `addr::remote` only works under warp's own server.
//!
//! A node standing by for the active one (PostgreSQL, issue 19) serves [`standby`] on the same
//! listener: `503` with `Retry-After` to everything, so a reverse proxy goes to the active node.
//!
//! HTTP/1.1 only: every client of the Healthchecks API (curl, scripts, reverse proxies) speaks
//! it, and one protocol keeps one set of limits.

mod conn;
pub(crate) mod daemon;
pub(crate) mod deadline;
pub(crate) mod sd_notify;

use std::borrow::Borrow;
use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, oneshot};
use tower_service::Service as _;
use warp::Filter;
use warp::reply::Response;

use crate::api::{App, Peer};
use crate::web::filter;
pub(crate) use deadline::Timeouts;

/// What the server allows each connection and all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once; more are refused.
    pub max_connections: usize,
    pub(crate) timeouts: Timeouts,
}

impl Default for Limits {
    fn default() -> Self {
        use crate::model::limits::{
            DEFAULT_BODY_TIMEOUT_SECS, DEFAULT_HEADER_TIMEOUT_SECS, DEFAULT_IDLE_TIMEOUT_SECS,
            DEFAULT_MAX_CONNECTIONS,
        };
        Limits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            timeouts: Timeouts {
                header: Duration::from_secs(DEFAULT_HEADER_TIMEOUT_SECS),
                idle: Duration::from_secs(DEFAULT_IDLE_TIMEOUT_SECS),
                body: Duration::from_secs(DEFAULT_BODY_TIMEOUT_SECS),
            },
        }
    }
}

/// What a connection past the limit reads before it is closed.
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
Content-Type: text/plain; charset=utf-8\r\nContent-Length: 34\r\nRetry-After: 1\r\n\
Connection: close\r\n\r\ntoo many connections, retry later\n";

/// Serves the API on `listener` until `shutdown` completes, then waits at most `grace` for
/// open requests. Every acknowledged write is already committed when a response is sent, so
/// nothing is left to flush afterwards.
pub async fn run(
    listener: impl Borrow<TcpListener> + Send,
    app: Arc<App>,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
) {
    let (stopping_tx, stopping_rx) = oneshot::channel::<()>();
    let signal = async move {
        shutdown.await;
        let _ = stopping_tx.send(());
    };
    let deadline = async move {
        // Resolves only once shutdown was asked for and the grace time has passed.
        if stopping_rx.await.is_ok() {
            tokio::time::sleep(grace).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        () = serve(listener.borrow(), filter(app), limits, signal) => {}
        () = deadline => tracing::warn!("requests still open after {grace:?}; closing them"),
    }
}

/// Answers every request on `listener` with `503`, `Retry-After: 1` and `Connection: close`
/// (and says on which database another node is active) until `until` resolves; then lets the
/// open requests finish. The listener stays open for the active node's server.
pub(crate) async fn standby(
    listener: &TcpListener,
    location: String,
    limits: Limits,
    until: impl Future<Output = ()>,
) {
    let location = Arc::new(location);
    let routes = warp::any()
        .map(move || crate::api::standby_response(&location))
        .map(|r: Response| r);
    serve(listener, routes, limits, until).await;
}

/// Accepts until `signal`, then waits for the open connections to finish their requests.
async fn serve<F>(
    listener: &TcpListener,
    routes: F,
    limits: Limits,
    signal: impl Future<Output = ()>,
) where
    F: Filter<Extract = (Response,), Error = Infallible> + Clone + Send + Sync + 'static,
    F::Future: Send,
{
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut accept_errors = AcceptErrors::default();
    tokio::pin!(signal);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    accept_errors.wait(e).await;
                    continue;
                }
            },
            () = &mut signal => break,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            refuse(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = {
            let routes = warp::service(routes.clone());
            hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(Peer(peer));
                let mut routes = routes.clone();
                async move { routes.call(req).await }
            })
        };
        let io = TokioIo::new(conn::TimedStream::new(stream, limits.timeouts));
        let connection = http1::Builder::new()
            .timer(TokioTimer::new())
            .keep_alive(true)
            .serve_connection(io, service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                // Resets, garbage and timeouts: the client's doing, not ours.
                tracing::debug!(%peer, "connection ended: {e}");
            }
            drop(slot);
        });
    }
    graceful.shutdown().await;
}

/// Answers a connection past the limit with a canned 503 (if its buffer takes it at once,
/// which a fresh socket's does) and closes it, without a task or a wait.
fn refuse(stream: TcpStream) {
    let _ = stream.try_write(REFUSAL);
    drop(stream);
    tracing::debug!("refused a connection: every connection slot is taken");
}

/// Accept errors: out of file descriptors (or memory) is logged at most once a minute and
/// waited out briefly instead of spinning; a connection that failed before it was accepted
/// is nobody's concern.
#[derive(Default)]
struct AcceptErrors {
    last_logged: Option<tokio::time::Instant>,
}

impl AcceptErrors {
    async fn wait(&mut self, e: std::io::Error) {
        use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
        if matches!(
            e.kind(),
            ConnectionAborted | ConnectionRefused | ConnectionReset
        ) {
            return;
        }
        let now = tokio::time::Instant::now();
        if self
            .last_logged
            .is_none_or(|t| now.duration_since(t) >= Duration::from_secs(60))
        {
            tracing::warn!(
                "cannot accept connections: {e}; raise the file limit (LimitNOFILE=) or lower \
                 --max-connections"
            );
            self.last_logged = Some(now);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
