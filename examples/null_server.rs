//! A do-nothing warp server: the baseline of the ping throughput benchmark
//! (`examples/ping-bench.sh`). Same warp build and tokio runtime as `overdue serve`; every
//! request, whatever its method and path, is answered `200 OK` with body `OK` and
//! `text/plain; charset=utf-8`, as a ping is.
//!
//! ```sh
//! cargo run --release --example null_server -- 127.0.0.1:8001
//! ```

use tokio::net::TcpListener;
use warp::Filter;
use warp::http::StatusCode;
use warp::http::header::{CONTENT_TYPE, HeaderValue};
use warp::reply::Response;

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8001".to_string());
    let listener = match TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("null_server: cannot listen on {addr}: {e}");
            std::process::exit(1);
        }
    };
    match listener.local_addr() {
        Ok(a) => eprintln!("null_server listening on http://{a}"),
        Err(e) => eprintln!("null_server: cannot read the listen address: {e}"),
    }
    let filter = warp::any().map(|| {
        let mut resp = Response::new(bytes::Bytes::from_static(b"OK").into());
        *resp.status_mut() = StatusCode::OK;
        resp.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        resp
    });
    warp::serve(filter).incoming(listener).run().await;
}
