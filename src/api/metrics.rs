//! Prometheus endpoints. `/projects/<uuid>/metrics/<read-only-key>` (Healthchecks' URL, for
//! the dashboards its users already have) and `/projects/<uuid>/metrics/` with
//! `Authorization: Bearer <key>` expose a project's checks (`model::metrics`). The key in the
//! URL must be the project's read-only key, as in Healthchecks: URLs end up in logs, and a
//! logged read-write key would allow changes. The header form takes either key.
//!
//! `/metrics` exposes the service's own figures (`service::metrics`) to the operator who
//! started `serve --metrics-token TOKEN`; without the flag it does not exist (404).

use sha2::{Digest, Sha256};
use warp::http::header::{HeaderValue, WWW_AUTHENTICATE};
use warp::http::{HeaderMap, Method, StatusCode};
use warp::reply::Response;

use crate::api::App;
use crate::api::error::ApiError;
use crate::api::response::{text_response, with_cors};
use crate::api::router::canonical_uuid;
use crate::model::limits::API_KEY_LEN;
use crate::model::metrics::project_exposition;
use crate::service::auth::Verdict;
use crate::service::metrics::render;

const METHODS: &str = "GET, OPTIONS";
/// The Prometheus text format's content type.
const EXPOSITION: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The key of `Authorization: Bearer <key>`, if the header has that form.
fn bearer(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("authorization")?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_string())
}

/// Handles `/projects/<rest>`.
pub(crate) async fn project(
    app: &App,
    method: &Method,
    rest: &str,
    headers: &HeaderMap,
    client: Option<String>,
) -> Response {
    let parts: Vec<&str> = rest.split('/').collect();
    let (project, url_key) = match parts.as_slice() {
        [uuid, "metrics"] | [uuid, "metrics", ""] => (canonical_uuid(uuid), None),
        [uuid, "metrics", key] => (canonical_uuid(uuid), Some(*key)),
        _ => (None, None),
    };
    let Some(project) = project else {
        return ApiError::NotFound.into_response(METHODS);
    };
    if *method == Method::OPTIONS {
        return with_cors(crate::api::response::empty(StatusCode::NO_CONTENT), METHODS);
    }
    if *method != Method::GET {
        return ApiError::MethodNotAllowed.into_response(METHODS);
    }
    let (key, url_form) = match (url_key, bearer(headers)) {
        (Some(key), _) => (key.to_string(), true),
        (None, Some(key)) => (key, false),
        (None, None) => return ApiError::Unauthorized("missing api key").into_response(METHODS),
    };
    if key.chars().count() != API_KEY_LEN {
        return ApiError::BadRequest("wrong api key length".into()).into_response(METHODS);
    }
    let grant = match app
        .service
        .authenticate(&key, true, client.as_deref())
        .await
    {
        Verdict::Granted(g) if g.project == project && (g.read_only || !url_form) => g,
        Verdict::Throttled { retry_after } => {
            return ApiError::RateLimited {
                retry_after: retry_after.as_secs().max(1),
            }
            .into_response(METHODS);
        }
        _ => return ApiError::Forbidden.into_response(METHODS),
    };
    if let Err(e) = app.limiter.check(&grant.key_id) {
        return e.into_response(METHODS);
    }
    let now = app.service.now();
    let body = app.service.read(|s| {
        let checks: Vec<_> = s.checks_of(&project).collect();
        project_exposition(&checks, now)
    });
    with_cors(text_response(StatusCode::OK, EXPOSITION, body), METHODS)
}

/// Handles `/metrics`.
pub(crate) fn service(app: &App, method: &Method, headers: &HeaderMap) -> Response {
    let Some(token) = &app.config.metrics_token else {
        return ApiError::NotFound.into_response(METHODS);
    };
    if *method != Method::GET {
        return ApiError::MethodNotAllowed.into_response(METHODS);
    }
    // Digests compared, so the time taken says nothing about how much of the token matched.
    let presented = bearer(headers).unwrap_or_default();
    if Sha256::digest(presented.as_bytes()) != Sha256::digest(token.as_bytes()) {
        let mut resp =
            ApiError::Unauthorized("wrong or missing metrics token").into_response(METHODS);
        resp.headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return resp;
    }
    let outbox = match app.service.outbox_len() {
        Ok(n) => n,
        Err(e) => return ApiError::from(e).into_response(METHODS),
    };
    let failing = app.service.storage_health().is_failing();
    let snapshot = app.service.metrics().snapshot(outbox, failing);
    text_response(StatusCode::OK, EXPOSITION, render(&snapshot))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), None);
        h.insert("authorization", HeaderValue::from_static("Bearer abc"));
        assert_eq!(bearer(&h).as_deref(), Some("abc"));
        h.insert("authorization", HeaderValue::from_static("bearer  abc "));
        assert_eq!(bearer(&h).as_deref(), Some("abc"));
        h.insert("authorization", HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer(&h), None);
    }
}
