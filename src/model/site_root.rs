//! The public base URL (`--site-root`): ping URLs, badge links and the links in alerts are
//! built from it, so it must be a URL that clients and the people alerted can open. The rules
//! here are pure; `serve` applies them at start and `doctor` to a running service.

use std::net::{IpAddr, SocketAddr};

/// Why a site root cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SiteRootError {
    #[error(
        "the site root {0:?} does not start with http:// or https://; give the URL clients use, \
         e.g. https://overdue.example.org"
    )]
    NoScheme(String),
    #[error(
        "the site root {0:?} has no host; give the URL clients use, e.g. \
         https://overdue.example.org"
    )]
    NoHost(String),
}

/// A site root as given, without trailing slashes, if it is an `http://` or `https://` URL
/// with a host. What follows the host (a port, a path prefix) is kept as written.
pub(crate) fn parse(root: &str) -> Result<String, SiteRootError> {
    let root = root.trim();
    let lower = root.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return Err(SiteRootError::NoScheme(root.to_string()));
    }
    // The URL standard skips extra slashes after `http:`, so `http:///x` would name host `x`.
    let after_scheme = &root[root.find("://").map_or(0, |i| i + 3)..];
    let parsed = url::Url::parse(root).map_err(|_| SiteRootError::NoHost(root.to_string()))?;
    if after_scheme.starts_with('/') || parsed.host_str().is_none_or(str::is_empty) {
        return Err(SiteRootError::NoHost(root.to_string()));
    }
    Ok(root.trim_end_matches('/').to_string())
}

/// Whether the site root's host is the unspecified address (`0.0.0.0`, `[::]`): a listener may
/// bind it, but no client can open a URL that names it.
pub(crate) fn names_no_host(root: &str) -> bool {
    match url::Url::parse(root)
        .ok()
        .and_then(|u| u.host().map(|h| h.to_owned()))
    {
        Some(url::Host::Ipv4(ip)) => ip.is_unspecified(),
        Some(url::Host::Ipv6(ip)) => ip.is_unspecified(),
        _ => false,
    }
}

/// Why the site root `serve` uses will give clients links they cannot open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SiteRootWarning {
    /// Listening on every address without `--site-root`: the default site root names
    /// `0.0.0.0` or `[::]`.
    ListensEverywhere { listen: SocketAddr },
    /// A site root given with `0.0.0.0` or `[::]` as its host.
    UnspecifiedHost { root: String },
}

impl std::fmt::Display for SiteRootWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SiteRootWarning::ListensEverywhere { listen } => write!(
                f,
                "listening on {listen} without --site-root: ping URLs, badge links and alert \
                 links will name http://{listen}, which no client can open; set --site-root \
                 (OVERDUE_SITE_ROOT) to the URL clients use, e.g. http://monitor.lan:{}",
                listen.port()
            ),
            SiteRootWarning::UnspecifiedHost { root } => write!(
                f,
                "the site root {root} names no host a client can open (0.0.0.0 and [::] only \
                 mean \"every address\" to a listener); set --site-root (OVERDUE_SITE_ROOT) to \
                 the URL clients use, e.g. http://monitor.lan:8000"
            ),
        }
    }
}

/// The site root for a service listening on `listen`: the configured one (already checked
/// by [`parse`]), else `http://` and the listen address; and a warning when clients cannot
/// open it.
pub(crate) fn effective(
    listen: SocketAddr,
    configured: Option<&str>,
) -> (String, Option<SiteRootWarning>) {
    if let Some(root) = configured {
        let warning = names_no_host(root).then(|| SiteRootWarning::UnspecifiedHost {
            root: root.to_string(),
        });
        (root.trim_end_matches('/').to_string(), warning)
    } else {
        let warning =
            is_unspecified(listen.ip()).then_some(SiteRootWarning::ListensEverywhere { listen });
        (format!("http://{listen}"), warning)
    }
}

fn is_unspecified(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_unspecified(),
        IpAddr::V6(v6) => {
            v6.is_unspecified() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_unspecified())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_root_needs_http_or_https_and_a_host() {
        assert_eq!(
            parse("https://overdue.example.org/").as_deref(),
            Ok("https://overdue.example.org")
        );
        assert_eq!(
            parse("http://10.0.0.5:8000/hc//").as_deref(),
            Ok("http://10.0.0.5:8000/hc")
        );
        assert_eq!(parse("HTTP://Host:8000").as_deref(), Ok("HTTP://Host:8000"));
        assert_eq!(
            parse("http://[::1]:8000").as_deref(),
            Ok("http://[::1]:8000")
        );
        for bad in [
            "overdue.example.org",
            "localhost:8000",
            "ftp://host",
            "//host",
            "",
        ] {
            assert!(
                matches!(parse(bad), Err(SiteRootError::NoScheme(_))),
                "{bad:?}: {:?}",
                parse(bad)
            );
        }
        for bad in ["http://", "https:///path", "http://:8000"] {
            assert!(
                matches!(parse(bad), Err(SiteRootError::NoHost(_))),
                "{bad:?}: {:?}",
                parse(bad)
            );
        }
        let message = parse("example.org").expect_err("no scheme").to_string();
        assert!(message.contains("http:// or https://"), "{message}");
    }

    #[test]
    fn the_unspecified_address_names_no_host() {
        assert!(names_no_host("http://0.0.0.0:8000"));
        assert!(names_no_host("http://[::]:8000/"));
        assert!(!names_no_host("http://127.0.0.1:8000"));
        assert!(!names_no_host("https://overdue.example.org"));
        assert!(!names_no_host("not a url"));
    }

    #[test]
    fn listening_everywhere_without_a_site_root_warns() {
        let everywhere: SocketAddr = "0.0.0.0:8000".parse().expect("addr");
        let (root, warning) = effective(everywhere, None);
        assert_eq!(root, "http://0.0.0.0:8000");
        let warning = warning.expect("a warning").to_string();
        assert!(warning.contains("--site-root"), "{warning}");
        let v6: SocketAddr = "[::]:8000".parse().expect("addr");
        assert!(effective(v6, None).1.is_some());

        let (root, warning) = effective(everywhere, Some("https://hc.example.org/"));
        assert_eq!((root.as_str(), warning), ("https://hc.example.org", None));

        let local: SocketAddr = "127.0.0.1:8000".parse().expect("addr");
        assert_eq!(
            effective(local, None),
            ("http://127.0.0.1:8000".into(), None)
        );
        let (_, warning) = effective(local, Some("http://0.0.0.0:8000"));
        assert!(matches!(
            warning,
            Some(SiteRootWarning::UnspecifiedHost { .. })
        ));
    }
}
