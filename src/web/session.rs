//! The session cookie, the CSRF token derived from it, and the origin rule for forms: pure
//! functions over headers and strings. Where sessions are kept (hashed, in the data file) is
//! the service's business (`service::sessions`).
//!
//! The CSRF token is a keyed digest of the session token: a page can carry it, a script on
//! another site can neither read the `HttpOnly` cookie nor compute it, and nothing more is
//! stored.

use sha2::{Digest, Sha256};
use warp::http::HeaderMap;

/// Name of the session cookie.
pub(crate) const COOKIE: &str = "overdue_session";
/// Name of the CSRF field of every state-changing form.
pub(crate) const CSRF_FIELD: &str = "csrf";

/// The session token the request's cookie carries, if it has the token's shape (64 lowercase
/// hex characters); anything else counts as no session.
pub(crate) fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(warp::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim_matches('"'))
        .filter(|t| t.len() == 64 && t.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .map(str::to_string)
}

/// The `Set-Cookie` value that starts (or renews) a session: `HttpOnly`, `SameSite=Strict`,
/// `Path` the site root's path, `Secure` on https, kept 30 days (the idle limit; the server
/// decides expiry, the browser only forgets).
pub(crate) fn set_cookie(token: &str, base: &str, secure: bool) -> String {
    let path = if base.is_empty() { "/" } else { base };
    let max_age = crate::model::session::SESSION_IDLE.as_secs();
    let secure = if secure { "; Secure" } else { "" };
    format!("{COOKIE}={token}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite=Strict{secure}")
}

/// The `Set-Cookie` value that removes the session cookie.
pub(crate) fn clear_cookie(base: &str, secure: bool) -> String {
    let path = if base.is_empty() { "/" } else { base };
    let secure = if secure { "; Secure" } else { "" };
    format!("{COOKIE}=; Path={path}; Max-Age=0; HttpOnly; SameSite=Strict{secure}")
}

/// The CSRF token of a session.
pub(crate) fn csrf_token(session_token: &str) -> String {
    let digest = Sha256::new()
        .chain_update(b"overdue csrf v1\0")
        .chain_update(session_token.as_bytes())
        .finalize();
    crate::model::hex(&digest[..16])
}

/// Whether `given` is the CSRF token of `session_token`, compared in constant time.
pub(crate) fn csrf_ok(session_token: &str, given: &str) -> bool {
    let want = csrf_token(session_token);
    want.len() == given.len()
        && want
            .bytes()
            .zip(given.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Whether a state-changing request may come from where its `Origin` header says: no header
/// (an older browser, or a client that is not a browser: the CSRF token still guards it), the
/// site root's origin, or the origin of the host the request was sent to (the dashboard opened
/// by another name than the site root's, e.g. an address on the LAN). `Origin: null` and
/// other sites are refused.
pub(crate) fn origin_ok(headers: &HeaderMap, site_origin: &str, scheme: &str) -> bool {
    let Some(origin) = headers.get("origin").and_then(|v| v.to_str().ok()) else {
        return true;
    };
    if origin.eq_ignore_ascii_case(site_origin) {
        return true;
    }
    let host = headers.get("host").and_then(|v| v.to_str().ok());
    host.is_some_and(|host| origin.eq_ignore_ascii_case(&format!("{scheme}://{host}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use warp::http::HeaderValue;

    const T: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).expect("header"));
        }
        h
    }

    #[test]
    fn token_from_cookie_header() {
        let h = headers(&[("cookie", &format!("a=b; {COOKIE}={T}; c=d"))]);
        assert_eq!(cookie_token(&h).as_deref(), Some(T));
        let upper = headers(&[("cookie", &format!("{COOKIE}={}", T.to_uppercase()))]);
        assert_eq!(cookie_token(&upper), None);
        let short = headers(&[("cookie", &format!("{COOKIE}=abc"))]);
        assert_eq!(cookie_token(&short), None);
        assert_eq!(cookie_token(&HeaderMap::new()), None);
    }

    #[test]
    fn cookie_attributes() {
        let c = set_cookie(T, "/overdue", true);
        assert!(c.starts_with(&format!("{COOKIE}={T}; Path=/overdue;")));
        for attr in ["HttpOnly", "SameSite=Strict", "Secure", "Max-Age=2592000"] {
            assert!(c.contains(attr), "{c} lacks {attr}");
        }
        assert!(!set_cookie(T, "", false).contains("Secure"));
        assert!(set_cookie(T, "", false).contains("Path=/;"));
        assert!(clear_cookie("", false).contains("Max-Age=0"));
    }

    #[test]
    fn csrf_token_is_bound_to_the_session() {
        let t = csrf_token(T);
        assert_eq!(t.len(), 32);
        assert!(csrf_ok(T, &t));
        assert!(!csrf_ok(T, ""));
        assert!(!csrf_ok(T, &t[..31]));
        let other = T.replace('0', "1");
        assert!(!csrf_ok(&other, &t));
    }

    #[test]
    fn origins() {
        let site = "https://mon.example.org";
        assert!(origin_ok(&HeaderMap::new(), site, "https"));
        assert!(origin_ok(&headers(&[("origin", site)]), site, "https"));
        let lan = headers(&[
            ("origin", "http://10.0.0.5:8000"),
            ("host", "10.0.0.5:8000"),
        ]);
        assert!(origin_ok(&lan, site, "http"));
        let evil = headers(&[
            ("origin", "https://evil.example"),
            ("host", "mon.example.org"),
        ]);
        assert!(!origin_ok(&evil, site, "https"));
        assert!(!origin_ok(&headers(&[("origin", "null")]), site, "https"));
    }
}
