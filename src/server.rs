//! Serving HTTP on a listener we bound ourselves (warp's own bind panics on a taken port),
//! with a shutdown that stops accepting, lets in-flight requests finish for a bounded time,
//! and returns.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::api::{App, filter};

/// How long in-flight requests may take to finish after shutdown is asked for.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serves the API on `listener` until `shutdown` completes, then waits at most `grace` for
/// open requests. Every acknowledged write is already committed when a response is sent, so
/// nothing is left to flush afterwards.
pub async fn run(
    listener: TcpListener,
    app: Arc<App>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
) {
    let (stopping_tx, stopping_rx) = oneshot::channel::<()>();
    let signal = async move {
        shutdown.await;
        let _ = stopping_tx.send(());
    };
    let server = warp::serve(filter(app))
        .incoming(listener)
        .graceful(signal)
        .run();
    let deadline = async move {
        // Resolves only once shutdown was asked for and the grace time has passed.
        if stopping_rx.await.is_ok() {
            tokio::time::sleep(grace).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        () = server => {}
        () = deadline => tracing::warn!("requests still open after {grace:?}; closing them"),
    }
}
