//! The Pinging API: `/ping/...` requests from monitored jobs. Parses the URL and query,
//! keeps the first `ping_body_limit` bytes of the body, and hands the ping to the service,
//! answering only after it is durable (decision 1 for the answer's shape).

use std::net::SocketAddr;

use warp::http::header::{
    ACCESS_CONTROL_ALLOW_ORIGIN, CACHE_CONTROL, EXPIRES, HeaderName, HeaderValue, RETRY_AFTER,
};
use warp::http::{HeaderMap, Method, StatusCode};
use warp::reply::Response;

use crate::api::error::ApiError;
use crate::api::ping_url;
use crate::api::response::text_response;
use crate::api::{App, BodyError, BodyStream, client, read_body};
use crate::model::limits::USER_AGENT_MAX_CHARS;
use crate::model::signal::Target;
use crate::service::pings::PingRequest;
use crate::service::{ServiceError, State};

const TEXT: &str = "text/plain; charset=utf-8";
const PING_BODY_LIMIT: HeaderName = HeaderName::from_static("ping-body-limit");

/// A ping answer with the never-cache headers; successful ones also allow any origin and
/// state the body limit.
fn answer(app: &App, status: StatusCode, body: impl Into<bytes::Bytes>) -> Response {
    let mut resp = text_response(status, TEXT, body);
    let h = resp.headers_mut();
    // Answered at ping rate: header names that need no parsing.
    h.insert(
        CACHE_CONTROL,
        HeaderValue::from_static("max-age=0, no-cache, no-store, must-revalidate, private"),
    );
    if let Some(v) = expires_now() {
        h.insert(EXPIRES, v);
    }
    if status.is_success() {
        h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        h.insert(
            PING_BODY_LIMIT,
            HeaderValue::from(app.service.config().ping_body_limit),
        );
    }
    resp
}

/// The `Expires` value for now (an HTTP date), formatted once per second per thread rather
/// than once per ping.
fn expires_now() -> Option<HeaderValue> {
    thread_local! {
        static CACHE: std::cell::RefCell<(i64, Option<HeaderValue>)> =
            const { std::cell::RefCell::new((i64::MIN, None)) };
    }
    let now = jiff::Timestamp::now();
    CACHE.with_borrow_mut(|(second, value)| {
        if *second != now.as_second() {
            let text = now.strftime("%a, %d %b %Y %H:%M:%S GMT").to_string();
            *value = HeaderValue::from_str(&text).ok();
            *second = now.as_second();
        }
        value.clone()
    })
}

/// The status and `Retry-After` of the one mapping (`api::error`), as plain text.
fn error_answer(app: &App, e: &ServiceError) -> Response {
    let api = ApiError::from(e.clone());
    let body = match e {
        // A `?create=1` slug the API would refuse: the reason alone, without the API's prefix.
        ServiceError::Invalid(reason) => reason.to_string(),
        _ => api.message(),
    };
    let mut r = answer(app, api.status(), body);
    if let Some(seconds) = api.retry_after() {
        r.headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(seconds));
    }
    r
}

/// The one check a slug names (None: none or several), for the per-check rate limit. Read
/// without blocking this worker thread: while the writer holds the state for a batch, the
/// lookup waits on a blocking thread instead.
async fn check_of_slug(app: &App, ping_key: &str, slug: &str) -> Option<uuid::Uuid> {
    fn lookup(s: &State, ping_key: &str, slug: &str) -> Option<uuid::Uuid> {
        let project = s.project_by_ping_key(ping_key)?.uuid;
        match s.checks_by_slug(&project, slug).as_slice() {
            [one] => Some(one.uuid),
            _ => None,
        }
    }
    if let Some(found) = app.service.try_read(|s| lookup(s, ping_key, slug)) {
        return found;
    }
    let (service, ping_key, slug) = (app.service.clone(), ping_key.to_string(), slug.to_string());
    tokio::task::spawn_blocking(move || service.read(|s| lookup(s, &ping_key, &slug)))
        .await
        .ok()
        .flatten()
}

/// Handles `/ping/<rest>`.
pub(crate) async fn handle(
    app: &App,
    method: Method,
    rest: &str,
    query: &str,
    headers: &HeaderMap,
    remote: Option<SocketAddr>,
    body: BodyStream,
) -> Response {
    let Some(route) = ping_url::parse(rest) else {
        return answer(app, StatusCode::NOT_FOUND, "not found");
    };
    if let Target::Slug { slug, .. } = &route.target
        && slug.bytes().any(|b| b.is_ascii_uppercase())
    {
        return answer(app, StatusCode::BAD_REQUEST, "invalid url format");
    }
    let mut rid = None;
    let mut create = false;
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        match k.as_ref() {
            "rid" => rid = Some(v.into_owned()),
            "create" => create = v == "1",
            _ => {}
        }
    }
    // Unknown UUIDs are answered from memory, without a trip through the writer. Not while
    // the writer holds the state: the worker thread would wait for a whole batch, and the
    // writer answers "not found" as well.
    if let Target::Uuid(u) = &route.target
        && app.service.try_read(|s| s.check(u).is_none()) == Some(true)
    {
        return answer(app, StatusCode::NOT_FOUND, "not found");
    }
    let rid = match rid {
        None => None,
        Some(text) => match uuid::Uuid::try_parse(&text) {
            Ok(u) if text.len() == 36 => Some(u),
            _ => return answer(app, StatusCode::BAD_REQUEST, "invalid uuid format"),
        },
    };
    let limit = app.service.config().ping_body_limit;
    let body = match read_body(body, limit, app.config.body_timeout).await {
        Ok((bytes, _)) => bytes,
        Err(BodyError::TimedOut) => {
            return answer(app, StatusCode::REQUEST_TIMEOUT, "request body timeout");
        }
        Err(BodyError::Read) => {
            return answer(app, StatusCode::BAD_REQUEST, "could not read request body");
        }
    };
    if let Some(limiter) = &app.ping_limiter {
        let key = match &route.target {
            Target::Uuid(u) => Some(*u),
            Target::Slug { ping_key, slug } => check_of_slug(app, ping_key, slug).await,
        };
        if let Some(check) = key
            && limiter.check(&check.to_string()).is_err()
        {
            return answer(app, StatusCode::OK, "OK (rate-limited)");
        }
    }
    let (remote_addr, scheme) = client(app.config.trust_proxy, headers, remote);
    let ua = headers
        .get("user-agent")
        .map(|v| {
            String::from_utf8_lossy(v.as_bytes())
                .chars()
                .take(USER_AGENT_MAX_CHARS)
                .collect()
        })
        .unwrap_or_default();
    let request = PingRequest {
        target: route.target,
        create,
        signal: route.signal,
        method: method.as_str().to_string(),
        scheme,
        remote_addr,
        ua,
        rid,
        body,
    };
    match app.service.record_ping(request).await {
        Ok(outcome) if outcome.created => answer(app, StatusCode::CREATED, "Created"),
        Ok(_) => answer(app, StatusCode::OK, "OK"),
        Err(e) => error_answer(app, &e),
    }
}
