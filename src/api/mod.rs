//! The HTTP surface of the APIs: [`handle`] routes a request (which `web::filter` hands over
//! when it is not a dashboard page)
//! to the Pinging API (`/ping/...`, in [`ping`]), the Management API
//! (`/api/v1|v2|v3/...`), badges, the Prometheus endpoints (`metrics`), or answers 404. Handlers are plain async
//! functions over [`Request`]; errors become responses only in [`error`].

pub(crate) mod auth;
pub(crate) mod badges;
pub(crate) mod checks;
pub(crate) mod error;
pub(crate) mod history;
pub(crate) mod metrics;
pub(crate) mod ping;
pub(crate) mod ping_url;
pub(crate) mod project;
pub(crate) mod ratelimit;
pub(crate) mod response;
pub(crate) mod router;

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use warp::http::{HeaderMap, Method, StatusCode};
use warp::reply::Response;

use crate::model::limits::{DEFAULT_API_RATE_LIMIT, MAX_API_BODY_BYTES};
use crate::service::Service;
use error::ApiError;
use response::{empty, with_cors};
use router::Route;

/// The peer address of a request's connection, put in the request's extensions by the server
/// (`crate::server`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer(pub SocketAddr);

/// HTTP-level settings.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// Management API requests per minute per key; 0 = no limit.
    pub api_rate_limit: u32,
    /// Take the client address and scheme from `X-Forwarded-For`/`X-Forwarded-Proto`.
    pub trust_proxy: bool,
    /// Pings per minute per check; 0 = no limit (decision 8).
    pub ping_rate_limit: u32,
    /// Bearer token of `GET /metrics`; `None`: the endpoint does not exist.
    pub metrics_token: Option<String>,
    /// Longest time a request body may take to arrive (408 after).
    pub body_timeout: std::time::Duration,
    /// Serve the dashboard (`web`) at the site root; off for API-only installs.
    pub dashboard: bool,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig {
            api_rate_limit: DEFAULT_API_RATE_LIMIT,
            trust_proxy: false,
            ping_rate_limit: 0,
            metrics_token: None,
            body_timeout: std::time::Duration::from_secs(
                crate::model::limits::DEFAULT_BODY_TIMEOUT_SECS,
            ),
            dashboard: true,
        }
    }
}

/// What every handler can reach.
pub struct App {
    pub(crate) service: Arc<Service>,
    pub(crate) limiter: ratelimit::RateLimiter,
    /// Per-check ping limit, when configured.
    pub(crate) ping_limiter: Option<ratelimit::RateLimiter>,
    pub(crate) config: ApiConfig,
}

impl App {
    pub fn new(service: Arc<Service>, config: ApiConfig) -> App {
        let ping_limiter = (config.ping_rate_limit > 0)
            .then(|| ratelimit::RateLimiter::new(config.ping_rate_limit));
        App {
            service,
            ping_limiter,
            limiter: ratelimit::RateLimiter::new(config.api_rate_limit),
            config,
        }
    }
}

/// The request body as warp streams it.
pub(crate) type BodyStream = Pin<Box<dyn Stream<Item = Result<Bytes, warp::Error>> + Send>>;

/// One request, with its body read (up to the route's limit).
#[derive(Debug)]
pub(crate) struct Request {
    pub method: Method,
    pub(crate) query: String,
    pub headers: HeaderMap,
    pub(crate) remote: Option<SocketAddr>,
    pub body: Bytes,
}

impl Request {
    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    }

    /// The client's address (see [`client`]).
    pub(crate) fn client_addr(&self, trust_proxy: bool) -> Option<String> {
        client(trust_proxy, &self.headers, self.remote).0
    }

    /// Query parameters in order, percent-decoded.
    pub(crate) fn query_pairs(&self) -> Vec<(String, String)> {
        form_urlencoded::parse(self.query.as_bytes())
            .into_owned()
            .collect()
    }
}

/// The client's address and scheme: from the proxy headers only when they are trusted.
pub(crate) fn client(
    trust_proxy: bool,
    headers: &HeaderMap,
    remote: Option<SocketAddr>,
) -> (Option<String>, String) {
    let header = |name: &str| {
        headers
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    let socket = remote.map(|a| a.ip().to_string());
    if !trust_proxy {
        return (socket, "http".into());
    }
    let addr = match header("x-forwarded-for") {
        Some(list) => {
            let first = list.split(',').next().unwrap_or("").to_string();
            Some(strip_port(&first))
        }
        None => socket,
    };
    (
        addr,
        header("x-forwarded-proto").unwrap_or_else(|| "http".into()),
    )
}

/// `1.2.3.4:5678` → `1.2.3.4`; anything else unchanged (reference §4.3 step 3).
fn strip_port(addr: &str) -> String {
    if addr.parse::<std::net::IpAddr>().is_ok() {
        return addr.to_string();
    }
    match addr.rsplit_once(':') {
        Some((ip, _)) if ip.split('.').count() == 4 && ip.parse::<std::net::Ipv4Addr>().is_ok() => {
            ip.to_string()
        }
        _ => addr.to_string(),
    }
}

/// Why a body could not be read.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// The connection failed (the client went away, or sent a broken chunked body).
    Read,
    /// The body did not arrive within the body timeout.
    TimedOut,
}

/// Reads at most `limit` bytes of a body, all of it within `timeout`. Returns the bytes kept
/// and whether more arrived; the rest is read and dropped, never kept in memory.
pub(crate) async fn read_body(
    mut stream: BodyStream,
    limit: usize,
    timeout: std::time::Duration,
) -> Result<(Bytes, bool), BodyError> {
    let read = async {
        let mut kept = BytesMut::new();
        let mut overflow = false;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|_| BodyError::Read)?;
            let room = limit.saturating_sub(kept.len());
            if chunk.len() > room {
                overflow = true;
            }
            kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        Ok((kept.freeze(), overflow))
    };
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or(Err(BodyError::TimedOut))
}

/// A `301` to `path` with the request's query string, and an empty body.
fn redirect(path: &str, query: &str) -> Response {
    let to = if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
    };
    let mut resp = empty(StatusCode::MOVED_PERMANENTLY);
    if let Ok(v) = warp::http::HeaderValue::from_str(&to) {
        resp.headers_mut().insert(warp::http::header::LOCATION, v);
    }
    resp
}

/// What a node that stands by answers to every request (PostgreSQL, issue 19): `503` with
/// `Retry-After: 1`, so a reverse proxy tries the active node, and `Connection: close`, so the
/// client's next request finds whichever node serves by then.
pub(crate) fn standby_response(location: &str) -> Response {
    let mut resp = response::text_response(
        StatusCode::SERVICE_UNAVAILABLE,
        "text/plain; charset=utf-8",
        format!("standby: another overdue node is active on {location}; retry there\n"),
    );
    let headers = resp.headers_mut();
    headers.insert(
        warp::http::header::RETRY_AFTER,
        warp::http::HeaderValue::from_static("1"),
    );
    headers.insert(
        warp::http::header::CONNECTION,
        warp::http::HeaderValue::from_static("close"),
    );
    resp
}

/// The 404 of every path nobody serves.
pub fn not_found() -> Response {
    ApiError::NotFound.into_response("OPTIONS")
}

/// Dispatches one request.
pub(crate) async fn handle(
    app: Arc<App>,
    method: Method,
    path: String,
    query: String,
    headers: HeaderMap,
    remote: Option<SocketAddr>,
    body: BodyStream,
) -> Response {
    if let Some(rest) = path.strip_prefix("/ping/") {
        return crate::api::ping::handle(&app, method, rest, &query, &headers, remote, body).await;
    }
    if let Some(rest) = path.strip_prefix("/badge/") {
        return badges::handle(&app, &method, rest, false);
    }
    if let Some(rest) = path.strip_prefix("/b/") {
        return badges::handle(&app, &method, rest, true);
    }
    if let Some(rest) = path.strip_prefix("/projects/") {
        let addr = client(app.config.trust_proxy, &headers, remote).0;
        return metrics::project(&app, &method, rest, &headers, addr).await;
    }
    if path == "/metrics" {
        return metrics::service(&app, &method, &headers);
    }
    let Some((version, route)) = router::parse(&path) else {
        return not_found();
    };
    let methods = route.methods();
    if route == Route::Status {
        return project::status(&app);
    }
    if method == Method::OPTIONS {
        return with_cors(empty(StatusCode::NO_CONTENT), methods);
    }
    if let Some(to) = router::slash_redirect(&path, &route, method.as_str()) {
        return with_cors(redirect(&to, &query), methods);
    }
    if !route.allows(method.as_str()) {
        return ApiError::MethodNotAllowed.into_response(methods);
    }
    let body = match read_body(body, MAX_API_BODY_BYTES, app.config.body_timeout).await {
        Ok((_, true)) => return ApiError::PayloadTooLarge.into_response(methods),
        Ok((bytes, false)) => bytes,
        Err(BodyError::TimedOut) => return ApiError::BodyTimeout.into_response(methods),
        Err(BodyError::Read) => {
            return ApiError::BadRequest("could not read request body".into())
                .into_response(methods);
        }
    };
    let req = Request {
        method,
        query,
        headers,
        remote,
        body,
    };
    let result = match route {
        Route::Checks if req.method == Method::GET => checks::list(&app, &req, version).await,
        Route::Checks => checks::create(&app, &req, version).await,
        Route::Check(r) if req.method == Method::GET => checks::get(&app, &req, version, r).await,
        Route::Check(router::CheckRef::Uuid(u)) if req.method == Method::POST => {
            checks::update(&app, &req, version, u).await
        }
        Route::Check(router::CheckRef::Uuid(u)) => checks::delete(&app, &req, version, u).await,
        Route::Check(router::CheckRef::UniqueKey(_)) => Err(ApiError::MethodNotAllowed),
        Route::Pause(u) => checks::pause_or_resume(&app, &req, version, u, false).await,
        Route::Resume(u) => checks::pause_or_resume(&app, &req, version, u, true).await,
        Route::Snooze(u) => checks::snooze(&app, &req, version, u).await,
        Route::SnoozeMany => checks::snooze_many(&app, &req, version).await,
        Route::Pings(u) => history::pings(&app, &req, version, u).await,
        Route::PingBody(u, n) => history::ping_body(&app, &req, u, n).await,
        Route::Flips(r) => history::flips(&app, &req, r).await,
        Route::Channels => project::channels(&app, &req).await,
        Route::Badges => project::badges(&app, &req).await,
        Route::Project => project::settings(&app, &req).await,
        // Answered above, before methods and bodies; here for exhaustiveness only.
        Route::Status => Ok(project::status(&app)),
    };
    match result {
        Ok(resp) => with_cors(resp, methods),
        Err(e) => e.into_response(methods),
    }
}

#[cfg(test)]
mod tests {
    use super::strip_port;

    #[test]
    fn forwarded_addresses_like_the_reference() {
        assert_eq!(strip_port("1.1.1.1"), "1.1.1.1");
        assert_eq!(strip_port("2001::1"), "2001::1");
        assert_eq!(strip_port("1.1.1.1:1234"), "1.1.1.1");
        assert_eq!(strip_port("::ffff:1.1.1.1"), "::ffff:1.1.1.1");
        assert_eq!(strip_port("garbage"), "garbage");
    }
}
