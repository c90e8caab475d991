//! Badge images and data (reference-behavior §7): `/badge/<badge_key>/<sig>[-2][/<tag>].<fmt>`
//! for a project's checks (all, or one tag) and `/b/<states>/<badge_key>.<fmt>` for one check.
//! No API key: the signature (project badges) or the unguessable key (check badges) is the
//! permission. Rendering lives in `model::badge`.

use warp::http::header::{CACHE_CONTROL, HeaderValue};
use warp::http::{Method, StatusCode};
use warp::reply::Response;

use crate::api::App;
use crate::api::error::ApiError;
use crate::api::response::{empty, json_response, text_response, with_cors};
use crate::api::router::canonical_uuid;
use crate::model::badge::{self, States, Summary};
use crate::model::{Check, Status};

const METHODS: &str = "GET, OPTIONS";
/// The label of a badge for all of a project's checks.
pub(crate) const ALL_CHECKS_LABEL: &str = "Overdue";

/// The three formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Svg,
    Json,
    Shields,
}

fn is_word(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// `name.fmt` → (name, format).
fn split_format(last: &str) -> Option<(&str, Format)> {
    let (name, ext) = last.rsplit_once('.')?;
    let format = match ext {
        "svg" => Format::Svg,
        "json" => Format::Json,
        "shields" => Format::Shields,
        _ => return None,
    };
    Some((name, format))
}

/// Decodes `%XX` escapes of a path segment (`+` stays `+`); None for a broken escape or
/// bytes that are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn status(check: &Check, now: jiff::Timestamp) -> Status {
    check.status_at(now, false)
}

fn render(label: &str, summary: &Summary, format: Format) -> Response {
    let mut resp = match format {
        Format::Svg => text_response(
            StatusCode::OK,
            "image/svg+xml",
            badge::svg(label, summary.status),
        ),
        Format::Json => json_response(StatusCode::OK, &badge::json(summary)),
        Format::Shields => json_response(StatusCode::OK, &badge::shields(label, summary)),
    };
    resp.headers_mut().insert(
        CACHE_CONTROL,
        HeaderValue::from_static("max-age=0, no-cache, no-store, must-revalidate, private"),
    );
    resp
}

/// A project badge: `<badge_key>/<sig>.<fmt>` (all checks) or `<badge_key>/<sig>/<tag>.<fmt>`.
fn project_badge(app: &App, rest: &str) -> Option<Response> {
    let parts: Vec<&str> = rest.split('/').collect();
    let (key, sig, tag, format) = match parts.as_slice() {
        [key, last] => {
            let (sig, format) = split_format(last)?;
            (*key, sig, "*".to_string(), format)
        }
        [key, sig, last] => {
            let (raw, format) = split_format(last)?;
            // The API encodes tags twice; the path arrives encoded, so decode twice.
            let once = percent_decode(raw)?;
            let ok = once
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"%~_.-".contains(&b));
            if !ok || once.is_empty() {
                return None;
            }
            (*key, *sig, percent_decode(&once)?, format)
        }
        _ => return None,
    };
    if !is_word(key) || !is_word(sig) || sig.len() < 8 {
        return None;
    }
    let project = app.service.read(|s| {
        s.projects()
            .into_iter()
            .find(|p| p.badge_key == key)
            .map(|p| p.uuid)
    })?;
    if sig.get(..8)? != badge::signature(&app.service.badge_secret(), key, &tag) {
        return None;
    }
    let states = if sig.len() == 10 && sig.ends_with("-2") {
        States::Two
    } else {
        States::Three
    };
    let now = app.service.now();
    let summary = app.service.read(|s| {
        let statuses = s
            .checks_of(&project)
            .filter(|c| tag == "*" || c.has_tag(&tag))
            .map(|c| status(c, now));
        badge::summarize(statuses, states)
    });
    let label = if tag == "*" {
        ALL_CHECKS_LABEL
    } else {
        tag.as_str()
    };
    Some(render(label, &summary, format))
}

/// A check badge: `<states>/<badge_key>.<fmt>`; only `3` shows `late`.
fn check_badge(app: &App, rest: &str) -> Option<Response> {
    let (states, last) = rest.split_once('/')?;
    if states.is_empty() || !states.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let states = if states.trim_start_matches('0') == "3" {
        States::Three
    } else {
        States::Two
    };
    let (key, format) = split_format(last)?;
    let badge_key = canonical_uuid(key)?;
    let uuid = app.service.check_by_badge_key(badge_key).ok()??;
    let now = app.service.now();
    let (label, status) = app.service.read(|s| {
        let c = s.check(&uuid)?;
        let label = if c.name.is_empty() {
            c.uuid.to_string()
        } else {
            c.name.clone()
        };
        Some((label, status(c, now)))
    })?;
    Some(render(&label, &badge::summarize([status], states), format))
}

/// Handles `/badge/<rest>` (`per_check` false) and `/b/<rest>` (`per_check` true).
pub(crate) fn handle(app: &App, method: &Method, rest: &str, per_check: bool) -> Response {
    if method == Method::OPTIONS {
        return with_cors(empty(StatusCode::NO_CONTENT), METHODS);
    }
    if method != Method::GET && method != Method::HEAD {
        return ApiError::MethodNotAllowed.into_response(METHODS);
    }
    let found = if per_check {
        check_badge(app, rest)
    } else {
        project_badge(app, rest)
    };
    match found {
        Some(resp) => with_cors(resp, METHODS),
        None => ApiError::NotFound.into_response(METHODS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_parts() {
        assert_eq!(percent_decode("db%2540dc1").as_deref(), Some("db%40dc1"));
        assert_eq!(percent_decode("db%40dc1").as_deref(), Some("db@dc1"));
        assert_eq!(percent_decode("a+b").as_deref(), Some("a+b"));
        assert_eq!(percent_decode("bad%2"), None);
        assert_eq!(percent_decode("bad%zz"), None);
        assert_eq!(split_format("x.svg"), Some(("x", Format::Svg)));
        assert_eq!(split_format("x.y.shields"), Some(("x.y", Format::Shields)));
        assert_eq!(split_format("x.jsonfoo"), None);
    }
}
