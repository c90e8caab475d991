//! Building dashboard responses: HTML pages, redirects after a form, and the security headers
//! every dashboard response carries. Bodies are gzip-compressed when the client accepts it.

use std::io::Write as _;

use warp::http::header::{
    CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, HeaderValue, LOCATION, SET_COOKIE, VARY,
};
use warp::http::{HeaderMap, StatusCode};
use warp::reply::Response;

/// Bodies shorter than this are sent as they are: compressing them saves nothing.
const GZIP_MIN: usize = 1024;

/// The CSP: nothing inline (no `unsafe-inline` for scripts or styles), nothing from elsewhere,
/// never framed.
pub(crate) const CSP: &str = "default-src 'self'; frame-ancestors 'none'; base-uri 'self'; \
                       form-action 'self'";

/// Adds the headers of every dashboard response.
pub(crate) fn secure(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    h.insert("Content-Security-Policy", HeaderValue::from_static(CSP));
    h.insert(
        "X-Content-Type-Options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("Referrer-Policy", HeaderValue::from_static("same-origin"));
    h.insert("X-Frame-Options", HeaderValue::from_static("DENY"));
    resp
}

/// Whether the request's `Accept-Encoding` lists gzip (with a non-zero weight).
pub(crate) fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(warp::http::header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';');
            let name = parts.next().unwrap_or("").trim();
            let zero = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            name.eq_ignore_ascii_case("gzip") && !zero
        })
}

/// A body with its content type, compressed when the client takes gzip and it is worth it.
pub(crate) fn body(
    status: StatusCode,
    content_type: &'static str,
    bytes: Vec<u8>,
    gzip: bool,
) -> Response {
    let (bytes, encoded) = if gzip && bytes.len() >= GZIP_MIN {
        match compress(&bytes) {
            Ok(small) => (small, true),
            Err(_) => (bytes, false),
        }
    } else {
        (bytes, false)
    };
    let mut resp = Response::new(bytes.into());
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(VARY, HeaderValue::from_static("Accept-Encoding, Cookie"));
    if encoded {
        h.insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    secure(resp)
}

fn compress(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut enc = flate2::write::GzEncoder::new(
        Vec::with_capacity(bytes.len() / 4),
        flate2::Compression::fast(),
    );
    enc.write_all(bytes)?;
    enc.finish()
}

/// An HTML page; never cached, since it shows a signed-in person's data.
pub(crate) fn html(status: StatusCode, page: String, gzip: bool) -> Response {
    let mut resp = body(status, "text/html; charset=utf-8", page.into_bytes(), gzip);
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// `303 See Other` to `location` (after a form: the browser follows with a GET).
pub(crate) fn see_other(location: &str) -> Response {
    let mut resp = Response::default();
    *resp.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(v) = HeaderValue::from_str(location) {
        resp.headers_mut().insert(LOCATION, v);
    }
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    secure(resp)
}

/// Adds a `Set-Cookie` header.
pub(crate) fn with_cookie(mut resp: Response, cookie: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(cookie) {
        resp.headers_mut().append(SET_COOKIE, v);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(v: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("accept-encoding", HeaderValue::from_static(v));
        h
    }

    #[test]
    fn gzip_when_accepted() {
        assert!(accepts_gzip(&accept("gzip, deflate, br")));
        assert!(accepts_gzip(&accept("br;q=1.0, GZIP;q=0.5")));
        assert!(!accepts_gzip(&accept("gzip;q=0")));
        assert!(!accepts_gzip(&accept("identity")));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn large_bodies_are_compressed_small_ones_not() {
        let big = body(StatusCode::OK, "text/html", vec![b'a'; 5000], true);
        assert_eq!(big.headers()[CONTENT_ENCODING], "gzip");
        let small = body(StatusCode::OK, "text/html", vec![b'a'; 100], true);
        assert!(small.headers().get(CONTENT_ENCODING).is_none());
        let plain = body(StatusCode::OK, "text/html", vec![b'a'; 5000], false);
        assert!(plain.headers().get(CONTENT_ENCODING).is_none());
    }

    #[test]
    fn every_response_has_the_security_headers() {
        let r = see_other("/x");
        assert_eq!(r.headers()["content-security-policy"], CSP);
        assert!(!CSP.contains("unsafe-inline"));
        assert_eq!(r.headers()["x-content-type-options"], "nosniff");
        assert_eq!(r.headers()["referrer-policy"], "same-origin");
    }
}
