//! Management API routes: which path is which endpoint, and which methods each allows
//! (reference §1.3-1.4). Trailing slashes are optional everywhere (decision 4), with one
//! exception kept for published clients: [`slash_redirect`].

use uuid::Uuid;

use crate::model::ApiVersion;

/// A check named in a path: by UUID (lowercase canonical form only) or by `unique_key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CheckRef {
    Uuid(Uuid),
    UniqueKey(String),
}

/// One Management API endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    Checks,
    Check(CheckRef),
    Pause(Uuid),
    Resume(Uuid),
    /// Ours (docs/api-extensions.md): snooze a check's alerts.
    Snooze(Uuid),
    /// Ours: snooze every check of the project, or those with given tags, in one call.
    SnoozeMany,
    Pings(Uuid),
    PingBody(Uuid, u64),
    Flips(CheckRef),
    Channels,
    Badges,
    /// Ours: the project's own settings (its quiet window).
    Project,
    Status,
}

impl Route {
    /// Allowed methods, as the `Access-Control-Allow-Methods` header lists them.
    pub(crate) fn methods(&self) -> &'static str {
        match self {
            Route::Checks => "GET, POST, OPTIONS",
            Route::Check(CheckRef::Uuid(_)) => "GET, POST, DELETE, OPTIONS",
            Route::Pause(_) | Route::Resume(_) | Route::Snooze(_) | Route::SnoozeMany => {
                "POST, OPTIONS"
            }
            Route::Status => "GET, HEAD, POST, OPTIONS",
            Route::Project => "GET, POST, OPTIONS",
            _ => "GET, OPTIONS",
        }
    }

    /// Whether `method` runs the endpoint (OPTIONS is answered before this is asked).
    pub(crate) fn allows(&self, method: &str) -> bool {
        match self {
            Route::Status => true,
            _ => self
                .methods()
                .split(", ")
                .any(|m| m == method && m != "OPTIONS"),
        }
    }
}

/// Where to redirect a request that the route does not allow, as the established server
/// does: a published client lists pings and flips with `POST .../pings` and `.../flips` (no
/// slash) and follows the `301` to the slash form with a GET (issue 14.9). Only those two
/// routes, only without the slash; everything else answers 405 as before.
pub(crate) fn slash_redirect(path: &str, route: &Route, method: &str) -> Option<String> {
    let listing = matches!(route, Route::Pings(_) | Route::Flips(_));
    (listing && !path.ends_with('/') && !route.allows(method)).then(|| format!("{path}/"))
}

/// The lowercase canonical UUID form, or None.
pub(crate) fn canonical_uuid(s: &str) -> Option<Uuid> {
    let ok = s.len() == 36
        && s.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
        });
    if ok { Uuid::parse_str(s).ok() } else { None }
}

fn check_ref(s: &str) -> Option<CheckRef> {
    if let Some(u) = canonical_uuid(s) {
        return Some(CheckRef::Uuid(u));
    }
    // The reference's `[A-z0-9]{40}`; only hex ones can ever match a check.
    let key_like = s.len() == 40
        && s.bytes()
            .all(|b| (b'A'..=b'z').contains(&b) || b.is_ascii_digit());
    key_like.then(|| CheckRef::UniqueKey(s.to_string()))
}

/// Parses `/api/v<N>/...`. None for anything that is not a Management API endpoint.
pub(crate) fn parse(path: &str) -> Option<(ApiVersion, Route)> {
    let rest = path.strip_prefix("/api/v")?;
    let (version, rest) = match rest.split_once('/') {
        Some(("1", r)) => (ApiVersion::V1, r),
        Some(("2", r)) => (ApiVersion::V2, r),
        Some(("3", r)) => (ApiVersion::V3, r),
        _ => return None,
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let parts: Vec<&str> = rest.split('/').collect();
    let route = match parts.as_slice() {
        ["checks"] => Route::Checks,
        ["channels"] => Route::Channels,
        ["badges"] => Route::Badges,
        ["project"] => Route::Project,
        ["status"] => Route::Status,
        ["checks", "snooze"] => Route::SnoozeMany,
        ["checks", id] => Route::Check(check_ref(id)?),
        ["checks", id, "flips"] => Route::Flips(check_ref(id)?),
        ["checks", id, action] => {
            let uuid = canonical_uuid(id)?;
            match *action {
                "pause" => Route::Pause(uuid),
                "resume" => Route::Resume(uuid),
                "snooze" => Route::Snooze(uuid),
                "pings" => Route::Pings(uuid),
                _ => return None,
            }
        }
        ["checks", id, "pings", n, "body"] => {
            let uuid = canonical_uuid(id)?;
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Route::PingBody(uuid, n.parse().ok()?)
        }
        _ => return None,
    };
    Some((version, route))
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: &str = "cf204185-012a-4bc0-8efb-5dc6ccf91181";

    #[test]
    fn list_endpoints_with_and_without_slash() {
        for p in ["/api/v3/checks", "/api/v3/checks/"] {
            assert_eq!(parse(p), Some((ApiVersion::V3, Route::Checks)));
        }
        assert_eq!(
            parse("/api/v1/channels/"),
            Some((ApiVersion::V1, Route::Channels))
        );
        assert_eq!(parse("/api/v4/checks/"), None);
    }

    #[test]
    fn check_identifiers() {
        let uuid = Uuid::parse_str(U).expect("uuid");
        assert_eq!(
            parse(&format!("/api/v3/checks/{U}")),
            Some((ApiVersion::V3, Route::Check(CheckRef::Uuid(uuid))))
        );
        assert_eq!(parse(&format!("/api/v3/checks/{}", U.to_uppercase())), None);
        assert_eq!(parse("/api/v3/checks/not-a-uuid"), None);
        let key = "23271726e9a15fc8c0b82d52b9d0bf059fc03344";
        assert_eq!(
            parse(&format!("/api/v3/checks/{key}/flips/")),
            Some((
                ApiVersion::V3,
                Route::Flips(CheckRef::UniqueKey(key.into()))
            ))
        );
        assert_eq!(
            parse(&format!("/api/v3/checks/{U}/pings/12/body")),
            Some((ApiVersion::V3, Route::PingBody(uuid, 12)))
        );
        assert_eq!(parse(&format!("/api/v3/checks/{U}/pings/x/body")), None);
        assert_eq!(parse(&format!("/api/v3/checks/{key}/pause")), None);
        assert_eq!(
            parse(&format!("/api/v3/checks/{U}/snooze")),
            Some((ApiVersion::V3, Route::Snooze(uuid)))
        );
        for p in ["/api/v3/checks/snooze", "/api/v1/checks/snooze/"] {
            assert_eq!(parse(p).map(|(_, r)| r), Some(Route::SnoozeMany));
        }
    }

    #[test]
    fn pings_and_flips_without_slash_redirect_methods_they_do_not_allow() {
        let uuid = Uuid::parse_str(U).expect("uuid");
        for v in ["1", "2", "3"] {
            for tail in ["pings", "flips"] {
                let path = format!("/api/v{v}/checks/{U}/{tail}");
                let (_, route) = parse(&path).expect("route");
                assert_eq!(
                    slash_redirect(&path, &route, "POST"),
                    Some(format!("{path}/"))
                );
                assert_eq!(slash_redirect(&path, &route, "GET"), None);
                let slashed = format!("{path}/");
                assert_eq!(slash_redirect(&slashed, &route, "POST"), None);
            }
        }
        let path = format!("/api/v3/checks/{U}");
        let route = Route::Check(CheckRef::Uuid(uuid));
        assert_eq!(slash_redirect(&path, &route, "PUT"), None);
        assert_eq!(
            slash_redirect("/api/v3/checks", &Route::Checks, "PUT"),
            None
        );
    }

    #[test]
    fn methods_per_route() {
        assert!(Route::Checks.allows("POST"));
        assert!(!Route::Checks.allows("DELETE"));
        assert!(!Route::Check(CheckRef::UniqueKey("x".into())).allows("POST"));
        assert!(Route::Check(CheckRef::Uuid(Uuid::nil())).allows("DELETE"));
        assert!(!Route::Pause(Uuid::nil()).allows("GET"));
        assert!(Route::SnoozeMany.allows("POST") && !Route::SnoozeMany.allows("GET"));
        assert!(Route::Project.allows("GET") && Route::Project.allows("POST"));
        assert_eq!(
            parse("/api/v3/project/").map(|(_, r)| r),
            Some(Route::Project)
        );
        assert!(!Route::Checks.allows("HEAD"));
        assert!(Route::Status.allows("PUT"));
    }
}
