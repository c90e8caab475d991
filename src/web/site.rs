//! What every dashboard page needs to know about where it is served: the API's [`App`], the
//! path prefix of the site root, whether cookies must be `Secure`, and the origin that forms
//! may be posted from.

use std::sync::{Arc, Mutex};

use crate::api::App;
use crate::model::limits::FAILURES_PER_CLIENT;
use crate::model::ratelimit::Windows;

/// The dashboard's view of the server.
pub(crate) struct Site {
    pub app: Arc<App>,
    /// `--dashboard on` (the default).
    pub enabled: bool,
    /// The site root's path without a trailing slash: `""` or e.g. `/overdue`. Every link,
    /// form action and asset URL starts with it.
    pub base: String,
    /// The site root is `https://`: the session cookie gets `Secure`.
    pub secure: bool,
    /// `scheme://host[:port]` of the site root: a form posted from there is ours.
    pub origin: String,
    /// Failed sign-ins per client address (the service throttles per key identifier too, but
    /// a made-up key has no identifier to count against).
    pub failures: Mutex<Windows>,
}

impl Site {
    pub(crate) fn new(app: Arc<App>) -> Site {
        let (base, secure, origin) = parts(app.service.site_root());
        Site {
            enabled: app.config.dashboard,
            base,
            secure,
            origin,
            failures: Mutex::new(Windows::new(FAILURES_PER_CLIENT)),
            app,
        }
    }

    /// `path` (starting with `/`) under the site root, for links and redirects.
    pub(crate) fn link(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// The path prefix, whether it is https, and the origin of a site root (already validated by
/// `model::site_root::parse`; anything unparsable is served at `/` over http).
pub(crate) fn parts(site_root: &str) -> (String, bool, String) {
    let Ok(url) = url::Url::parse(site_root) else {
        return (String::new(), false, String::new());
    };
    let base = url.path().trim_end_matches('/').to_string();
    let secure = url.scheme() == "https";
    let origin = url.origin().ascii_serialization();
    (base, secure, origin)
}

/// The rest of `path` under the prefix `base` (`/overdue/x` → `/x`, `/overdue` → `/`), or
/// None when it is not under it (or there is no prefix).
pub(crate) fn strip_prefix<'a>(path: &'a str, base: &str) -> Option<&'a str> {
    if base.is_empty() {
        return None;
    }
    let rest = path.strip_prefix(base)?;
    match rest {
        "" => Some("/"),
        r if r.starts_with('/') => Some(r),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_root_parts() {
        assert_eq!(
            parts("http://127.0.0.1:8000"),
            (String::new(), false, "http://127.0.0.1:8000".into())
        );
        assert_eq!(
            parts("https://example.org/overdue/"),
            ("/overdue".into(), true, "https://example.org".into())
        );
        assert_eq!(
            parts("https://Example.org:443/a/b"),
            ("/a/b".into(), true, "https://example.org".into())
        );
    }

    #[test]
    fn prefix_is_stripped_only_at_a_segment_boundary() {
        assert_eq!(
            strip_prefix("/overdue/checks/", "/overdue"),
            Some("/checks/")
        );
        assert_eq!(strip_prefix("/overdue", "/overdue"), Some("/"));
        assert_eq!(strip_prefix("/overduex/", "/overdue"), None);
        assert_eq!(strip_prefix("/api/v3/checks/", "/overdue"), None);
        assert_eq!(strip_prefix("/x", ""), None);
    }
}
