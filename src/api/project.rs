//! Project-wide endpoints: integrations, the badge list, the project's own settings (its
//! quiet window), and the status probe.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};
use warp::http::StatusCode;
use warp::reply::Response;

use crate::api::auth::{authorize, authorize_read, body_object};
use crate::api::error::ApiError;
use crate::api::response::{json_response, text_response};
use crate::api::{App, Request};
use crate::model::badge::project_badge_urls;
use crate::model::json::{channel_json, project_json};
use crate::model::quiet::QuietSpec;
use crate::service::ServiceError;

/// GET channels/ (read-write keys only).
pub(crate) async fn channels(app: &App, req: &Request) -> Result<Response, ApiError> {
    let grant = authorize(app, req, &Map::new()).await?;
    let list: Vec<Value> = app.service.read(|s| {
        s.channels_of(&grant.project)
            .into_iter()
            .map(channel_json)
            .collect()
    });
    Ok(json_response(StatusCode::OK, &json!({ "channels": list })))
}

/// GET badges/: six URLs per tag of the project's checks, and `*` for all checks.
pub(crate) async fn badges(app: &App, req: &Request) -> Result<Response, ApiError> {
    let grant = authorize_read(app, req).await?;
    let (badge_key, tags) = app.service.read(|s| {
        let key = s
            .project(&grant.project)
            .map(|p| p.badge_key.clone())
            .unwrap_or_default();
        let tags: BTreeSet<String> = s
            .checks_of(&grant.project)
            .flat_map(|c| c.tag_list().map(str::to_string).collect::<Vec<_>>())
            .collect();
        (key, tags)
    });
    let secret = app.service.badge_secret();
    let root = app.service.site_root();
    let entry = |tag: &str| {
        let u = project_badge_urls(root, &secret, &badge_key, tag);
        json!({
            "svg": u.svg, "svg3": u.svg3, "json": u.json, "json3": u.json3,
            "shields": u.shields, "shields3": u.shields3,
        })
    };
    let mut map = Map::new();
    for tag in &tags {
        map.insert(tag.clone(), entry(tag));
    }
    map.insert("*".into(), entry("*"));
    Ok(json_response(StatusCode::OK, &json!({ "badges": map })))
}

/// GET project/ (any key) answers the project's settings; POST project/ (read-write key)
/// changes them with the fields it names and answers the result (docs/api-extensions.md).
pub(crate) async fn settings(app: &App, req: &Request) -> Result<Response, ApiError> {
    let grant = if req.method == warp::http::Method::POST {
        let body = body_object(req)?;
        let grant = authorize(app, req, &body).await?;
        let spec = QuietSpec::parse(&body).map_err(ServiceError::from)?;
        app.service.set_project_quiet(grant.project, spec).await?;
        grant
    } else {
        authorize_read(app, req).await?
    };
    let project = app
        .service
        .read(|s| s.project(&grant.project).cloned())
        .ok_or(ApiError::NotFound)?;
    Ok(json_response(StatusCode::OK, &project_json(&project)))
}

/// /api/vN/status/: any method, no key; 200 `OK` while the data file answers a read and
/// takes writes, else 503 with the reason (a supervisor or an uptime monitor notices).
pub(crate) fn status(app: &App) -> Response {
    let unavailable = |why: String| {
        text_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain; charset=utf-8",
            format!("storage unavailable: {why}"),
        )
    };
    if let Some(failure) = app.service.storage_health().failure() {
        return unavailable(failure.to_string());
    }
    match app.service.probe_storage() {
        Ok(()) => text_response(StatusCode::OK, "text/plain; charset=utf-8", "OK"),
        Err(e) => {
            tracing::error!("status probe failed: {e}");
            unavailable(e.to_string())
        }
    }
}
