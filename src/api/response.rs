//! Building responses: JSON bodies, plain text, and the CORS headers of the Management API.

use warp::http::StatusCode;
use warp::http::header::{CONTENT_TYPE, HeaderValue};
use warp::reply::Response;

/// A JSON response (compact encoding, key order as built or as serialized).
pub(crate) fn json_response<T: serde::Serialize + ?Sized>(
    status: StatusCode,
    value: &T,
) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    let mut resp = Response::new(body.into());
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

/// A plain-text response with an explicit content type.
pub(crate) fn text_response(
    status: StatusCode,
    content_type: &'static str,
    body: impl Into<bytes::Bytes>,
) -> Response {
    let mut resp = Response::new(body.into().into());
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

/// Adds the CORS headers every Management API response carries (reference §1.3);
/// `methods` is the route's allowed methods including OPTIONS.
pub(crate) fn with_cors(mut resp: Response, methods: &str) -> Response {
    let h = resp.headers_mut();
    h.insert("Access-Control-Allow-Origin", HeaderValue::from_static("*"));
    h.insert(
        "Access-Control-Allow-Headers",
        HeaderValue::from_static("X-Api-Key"),
    );
    if let Ok(v) = HeaderValue::from_str(methods) {
        h.insert("Access-Control-Allow-Methods", v);
    }
    h.insert("Access-Control-Max-Age", HeaderValue::from_static("600"));
    resp
}

/// An empty response with a status.
pub(crate) fn empty(status: StatusCode) -> Response {
    let mut resp = Response::default();
    *resp.status_mut() = status;
    resp
}
