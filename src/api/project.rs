//! Project-wide endpoints: integrations, the badge list, and the status probe.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};
use warp::http::StatusCode;
use warp::reply::Response;

use crate::api::auth::{authorize, authorize_read};
use crate::api::error::ApiError;
use crate::api::response::{json_response, text_response};
use crate::api::{App, Request};
use crate::model::badge::{encode_tag, signature};
use crate::model::json::channel_json;
use crate::service::Service;
use uuid::Uuid;

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

/// The six badge URLs of one tag (or `*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadgeLinks {
    pub(crate) svg: String,
    pub(crate) svg3: String,
    pub(crate) json: String,
    pub(crate) json3: String,
    pub(crate) shields: String,
    pub(crate) shields3: String,
}

/// The badge URLs of a project: one entry per tag of its checks (sorted), then `*` for all
/// checks. The API's `badges/` and the dashboard's project page both list these.
pub(crate) fn badge_links(service: &Service, project: &Uuid) -> Vec<(String, BadgeLinks)> {
    let (badge_key, tags) = service.read(|s| {
        let key = s
            .project(project)
            .map(|p| p.badge_key.clone())
            .unwrap_or_default();
        let tags: BTreeSet<String> = s
            .checks_of(project)
            .flat_map(|c| c.tag_list().map(str::to_string).collect::<Vec<_>>())
            .collect();
        (key, tags)
    });
    let secret = service.badge_secret();
    let root = service.site_root();
    let entry = |tag: &str| {
        let sig = signature(&secret, &badge_key, tag);
        let base = format!("{root}/badge/{badge_key}");
        let (two, three) = if tag == "*" {
            (format!("{base}/{sig}-2"), format!("{base}/{sig}"))
        } else {
            let enc = encode_tag(tag);
            (
                format!("{base}/{sig}-2/{enc}"),
                format!("{base}/{sig}/{enc}"),
            )
        };
        BadgeLinks {
            svg: format!("{two}.svg"),
            svg3: format!("{three}.svg"),
            json: format!("{two}.json"),
            json3: format!("{three}.json"),
            shields: format!("{two}.shields"),
            shields3: format!("{three}.shields"),
        }
    };
    let mut out: Vec<(String, BadgeLinks)> = tags.iter().map(|t| (t.clone(), entry(t))).collect();
    out.push(("*".to_string(), entry("*")));
    out
}

/// GET badges/: six URLs per tag of the project's checks, and `*` for all checks.
pub(crate) async fn badges(app: &App, req: &Request) -> Result<Response, ApiError> {
    let grant = authorize_read(app, req).await?;
    let mut map = Map::new();
    for (tag, b) in badge_links(&app.service, &grant.project) {
        map.insert(
            tag,
            json!({
                "svg": b.svg,
                "svg3": b.svg3,
                "json": b.json,
                "json3": b.json3,
                "shields": b.shields,
                "shields3": b.shields3,
            }),
        );
    }
    Ok(json_response(StatusCode::OK, &json!({ "badges": map })))
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
