//! Migration from a running Healthchecks instance through its Management API v3: the checks
//! are fetched with `GET /api/v3/checks/` and each becomes a check here with the same UUID,
//! settings, state (status, last ping, ping count, a run in progress) and per-check badge key,
//! so every existing ping URL and check badge only needs its host changed and deadlines go on
//! from where they were.
//!
//! Healthchecks shows check UUIDs only to read-write keys (a read-only key gets `unique_key`,
//! from which the UUID cannot be recovered), so a read-write key is required. Integrations
//! are not copied: the API shows only their names and kinds, not their settings. A check's
//! integrations (`GET /api/v3/channels/`) are named by kind and name, and the service assigns
//! the channels of the same kind and name that the target project has.
//!
//! The API says only whether a run is in progress (`started`), not since when: the start is
//! the newest `start` ping of the check's ping log (`GET /api/v3/checks/<uuid>/pings/`, with
//! its run ID), or the time of the migration when the log no longer holds it.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

/// How long one request to the Healthchecks instance may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Settings copied from a Healthchecks check object, when present (older releases lack some).
const COPIED: &[&str] = &[
    "name",
    "slug",
    "tags",
    "desc",
    "grace",
    "schedule",
    "tz",
    "methods",
    "manual_resume",
    "start_kw",
    "success_kw",
    "failure_kw",
    "filter_subject",
    "filter_body",
    "filter_http_body",
    "filter_default_fail",
    // Overdue's own extensions (docs/api-extensions.md), when the source is an Overdue.
    "fail_threshold",
    "max_duration",
    "min_duration",
    "quiet_schedule",
    "quiet_tz",
    "quiet_duration",
    "parents",
];

/// An integration of the Healthchecks project, as its channels API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignChannel {
    pub id: Uuid,
    pub name: String,
    pub kind: String,
}

/// A check as read from Healthchecks, ready to be created here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForeignCheck {
    pub uuid: Uuid,
    pub name: String,
    /// The stored status it takes: `new`, `up`, `down` or `paused` (`grace` is an up check).
    pub status: String,
    pub n_pings: u64,
    /// RFC 3339.
    pub last_ping: Option<String>,
    /// A run is in progress there.
    pub(crate) started: bool,
    /// When it started (RFC 3339) and its run ID, when the ping log still shows it.
    pub last_start: Option<String>,
    pub last_start_rid: Option<Uuid>,
    /// Whole seconds, as Healthchecks shows it.
    pub(crate) last_duration: Option<i64>,
    /// The per-check badge key from `badge_url`, kept so embedded badges keep working.
    pub badge_key: Option<Uuid>,
    /// Its integrations there; the ones not in the project's channel list are named by id.
    pub channels: Vec<ForeignChannel>,
    /// A Management API create body (validated by the service like any create request).
    pub(crate) settings: Map<String, Value>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum HcError {
    #[error(
        "the checks carry no uuid (the API key is read-only?): Healthchecks shows check UUIDs \
         only to read-write keys, and without them every ping URL would change; use the \
         project's read-write API key"
    )]
    ReadOnlyKey,
    #[error("Healthchecks refused the API key (HTTP {0}); use the project's read-write API key")]
    Refused(u16),
    #[error("Healthchecks answered HTTP {status} to {url}: {body}")]
    Status {
        status: u16,
        url: String,
        body: String,
    },
    #[error("cannot reach {url}: {source}")]
    Transport { url: String, source: reqwest::Error },
    #[error("the answer of {url} is not what Healthchecks answers: {why}")]
    Shape { url: String, why: String },
}

/// The stored status of a check that Healthchecks shows as `status`: `grace` is an up check
/// whose deadline passed, `started` (API v1) a new one with a run in progress.
fn stored_status(status: &str) -> Option<&'static str> {
    Some(match status {
        "new" | "started" => "new",
        "up" | "grace" => "up",
        "down" => "down",
        "paused" => "paused",
        _ => return None,
    })
}

fn timestamp(obj: &Map<String, Value>, field: &str) -> Result<Option<String>, String> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => s
            .parse::<jiff::Timestamp>()
            .map(|t| Some(t.to_string()))
            .map_err(|e| format!("bad {field} {s:?}: {e}")),
        Some(other) => Err(format!("bad {field} {other}")),
    }
}

/// The badge key in a check's `badge_url` (`<site>/b/<states>/<badge-key>.svg`).
pub(crate) fn badge_key(badge_url: &str) -> Option<Uuid> {
    let rest = &badge_url[badge_url.rfind("/b/")? + 3..];
    let (states, file) = rest.split_once('/')?;
    if states.is_empty() || !states.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Uuid::parse_str(file.strip_suffix(".svg")?).ok()
}

/// Maps one check object of `GET /api/v3/checks/` to a check to create; `channels` is the
/// project's channel list, which names its integrations.
pub(crate) fn foreign_check(
    obj: &Map<String, Value>,
    channels: &[ForeignChannel],
) -> Result<ForeignCheck, String> {
    let uuid = match obj.get("uuid").and_then(Value::as_str) {
        Some(u) => Uuid::parse_str(u).map_err(|_| format!("bad uuid {u:?}"))?,
        None => return Err("no uuid".into()),
    };
    let mut settings = Map::new();
    // A null is what an older release says for "not set": leave the default.
    for field in COPIED {
        if let Some(v) = obj.get(*field).filter(|v| !v.is_null()) {
            settings.insert((*field).to_string(), v.clone());
        }
    }
    // A simple check carries `timeout`, a cron check `schedule` and `tz`.
    if !settings.contains_key("schedule")
        && let Some(t) = obj.get("timeout").filter(|v| !v.is_null())
    {
        settings.insert("timeout".into(), t.clone());
    }
    // Releases before the keyword fields only had the subject aliases.
    if !obj.contains_key("success_kw") && !obj.contains_key("failure_kw") {
        for field in ["subject", "subject_fail"] {
            if let Some(v) = obj.get(field) {
                settings.insert(field.to_string(), v.clone());
            }
        }
    }
    let shown = obj.get("status").and_then(Value::as_str).unwrap_or("new");
    let status = stored_status(shown).ok_or_else(|| format!("unknown status {shown:?}"))?;
    let assigned = obj.get("channels").and_then(Value::as_str).unwrap_or("");
    let mut mine = Vec::new();
    for id in assigned.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let id = Uuid::parse_str(id).map_err(|_| format!("bad channel id {id:?}"))?;
        mine.push(match channels.iter().find(|c| c.id == id) {
            Some(c) => c.clone(),
            None => ForeignChannel {
                id,
                name: id.to_string(),
                kind: "unknown".into(),
            },
        });
    }
    Ok(ForeignCheck {
        uuid,
        name: obj
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        status: status.to_string(),
        n_pings: obj.get("n_pings").and_then(Value::as_u64).unwrap_or(0),
        last_ping: timestamp(obj, "last_ping")?,
        started: obj.get("started").and_then(Value::as_bool).unwrap_or(false),
        last_start: None,
        last_start_rid: None,
        last_duration: obj.get("last_duration").and_then(Value::as_i64),
        badge_key: obj
            .get("badge_url")
            .and_then(Value::as_str)
            .and_then(badge_key),
        channels: mine,
        settings,
    })
}

/// `checks` reordered so that each comes after the parents it names among them (Overdue's
/// `parents`; a Healthchecks source has none and keeps its order): a copied check can only
/// name checks that are here already. Otherwise the source's order is kept.
pub(crate) fn parents_first(checks: Vec<ForeignCheck>) -> Vec<ForeignCheck> {
    let parents = |c: &ForeignCheck| -> Vec<Uuid> {
        c.settings
            .get("parents")
            .and_then(Value::as_str)
            .unwrap_or("")
            .split(',')
            .filter_map(|s| Uuid::parse_str(s.trim()).ok())
            .collect()
    };
    let mut waiting = checks;
    let mut out: Vec<ForeignCheck> = Vec::with_capacity(waiting.len());
    let mut placed = std::collections::HashSet::new();
    while !waiting.is_empty() {
        let pending: std::collections::HashSet<Uuid> = waiting.iter().map(|c| c.uuid).collect();
        let (ready, rest): (Vec<_>, Vec<_>) = waiting.into_iter().partition(|c| {
            parents(c)
                .iter()
                .all(|p| placed.contains(p) || !pending.contains(p) || *p == c.uuid)
        });
        if ready.is_empty() {
            // A cycle (never made by Overdue): the rest in the source's order.
            out.extend(rest);
            break;
        }
        placed.extend(ready.iter().map(|c| c.uuid));
        out.extend(ready);
        waiting = rest;
    }
    out
}

/// Parses the body of `GET /api/v3/channels/`.
pub(crate) fn parse_channels(body: &Value, url: &str) -> Result<Vec<ForeignChannel>, HcError> {
    let shape = |why: &str| HcError::Shape {
        url: url.to_string(),
        why: why.to_string(),
    };
    let items = body
        .get("channels")
        .and_then(Value::as_array)
        .ok_or_else(|| shape("no \"channels\" array"))?;
    items
        .iter()
        .map(|item| serde_json::from_value(item.clone()).map_err(|e| shape(&e.to_string())))
        .collect()
}

/// The newest `start` ping in the body of `GET /api/v3/checks/<uuid>/pings/` (newest
/// first): when it came (RFC 3339) and its run ID.
pub(crate) fn newest_start(body: &Value) -> Option<(String, Option<Uuid>)> {
    let start = body
        .get("pings")?
        .as_array()?
        .iter()
        .find(|p| p.get("type").and_then(Value::as_str) == Some("start"))?;
    let date: jiff::Timestamp = start.get("date")?.as_str()?.parse().ok()?;
    let rid = start
        .get("rid")
        .and_then(Value::as_str)
        .and_then(|r| Uuid::parse_str(r).ok());
    Some((date.to_string(), rid))
}

/// Parses the body of `GET /api/v3/checks/`.
pub(crate) fn parse_list(
    body: &Value,
    url: &str,
    channels: &[ForeignChannel],
) -> Result<Vec<ForeignCheck>, HcError> {
    let shape = |why: &str| HcError::Shape {
        url: url.to_string(),
        why: why.to_string(),
    };
    let items = body
        .get("checks")
        .and_then(Value::as_array)
        .ok_or_else(|| shape("no \"checks\" array"))?;
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let obj = item
            .as_object()
            .ok_or_else(|| shape("a check is not an object"))?;
        if !obj.contains_key("uuid") && obj.contains_key("unique_key") {
            return Err(HcError::ReadOnlyKey);
        }
        out.push(foreign_check(obj, channels).map_err(|why| shape(&why))?);
    }
    Ok(out)
}

/// The URL of an API path (`checks/`) of an instance given by its base URL (with or without
/// `/api/v3`).
pub(crate) fn api_url(base: &str, path: &str) -> String {
    let base = base.trim_end_matches('/');
    let base = base.strip_suffix("/api/v3").unwrap_or(base);
    format!("{base}/api/v3/{path}")
}

/// The check-list URL of an instance.
pub(crate) fn checks_url(base: &str) -> String {
    api_url(base, "checks/")
}

/// A client of one Healthchecks project's Management API.
pub(crate) struct Source {
    base: String,
    api_key: String,
    client: reqwest::Client,
}

impl Source {
    pub(crate) fn new(base: &str, api_key: &str) -> Result<Source, HcError> {
        crate::tls::install_provider();
        let client = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .user_agent(concat!("overdue/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|source| HcError::Transport {
                url: base.to_string(),
                source,
            })?;
        Ok(Source {
            base: base.to_string(),
            api_key: api_key.to_string(),
            client,
        })
    }

    async fn get(&self, path: &str) -> Result<(Value, String), HcError> {
        let url = api_url(&self.base, path);
        let transport = |source| HcError::Transport {
            url: url.clone(),
            source,
        };
        let response = self
            .client
            .get(&url)
            .header("X-Api-Key", &self.api_key)
            .send()
            .await
            .map_err(transport)?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(transport)?;
        if status == 401 || status == 403 {
            return Err(HcError::Refused(status));
        }
        if !(200..300).contains(&status) {
            let body: String = text.chars().take(200).collect();
            return Err(HcError::Status { status, url, body });
        }
        let body = serde_json::from_str(&text).map_err(|e| HcError::Shape {
            url: url.clone(),
            why: e.to_string(),
        })?;
        Ok((body, url))
    }

    /// Every integration of the project.
    pub(crate) async fn channels(&self) -> Result<Vec<ForeignChannel>, HcError> {
        let (body, url) = self.get("channels/").await?;
        parse_channels(&body, &url)
    }

    /// Every check of the project the key belongs to, its integrations named from `channels`.
    pub(crate) async fn checks(
        &self,
        channels: &[ForeignChannel],
    ) -> Result<Vec<ForeignCheck>, HcError> {
        let (body, url) = self.get("checks/").await?;
        parse_list(&body, &url, channels)
    }

    /// The newest start in a check's ping log (see [`newest_start`]).
    pub(crate) async fn last_start(
        &self,
        check: Uuid,
    ) -> Result<Option<(String, Option<Uuid>)>, HcError> {
        let (body, _) = self.get(&format!("checks/{check}/pings/")).await?;
        Ok(newest_start(&body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn children_are_copied_after_their_parents_and_otherwise_in_the_sources_order() {
        let check = |n: u128, parents: &str| {
            let obj = json!({"uuid": Uuid::from_u128(n).to_string(), "name": n.to_string(),
                             "parents": parents});
            foreign_check(obj.as_object().expect("object"), &[]).expect("maps")
        };
        let id = |n: u128| Uuid::from_u128(n).to_string();
        // 1 needs 3, 3 needs 4; 2 names a check that is not copied; 5 and 6 name each other.
        let checks = vec![
            check(1, &id(3)),
            check(2, &id(99)),
            check(3, &id(4)),
            check(4, ""),
            check(5, &id(6)),
            check(6, &format!("{},{}", id(5), id(4))),
        ];
        let order: Vec<u128> = parents_first(checks)
            .iter()
            .map(|c| c.uuid.as_u128())
            .collect();
        assert_eq!(order, [2, 4, 3, 1, 5, 6]);
    }

    #[test]
    fn a_cron_check_keeps_its_uuid_schedule_and_settings() {
        let obj = json!({
            "name": "Backups", "slug": "backups", "tags": "prod", "desc": "nightly",
            "grace": 3600, "n_pings": 3, "status": "paused", "started": false,
            "last_ping": null, "next_ping": null, "manual_resume": true, "methods": "POST",
            "subject": "", "subject_fail": "", "start_kw": "", "success_kw": "OK",
            "failure_kw": "", "filter_subject": false, "filter_body": false,
            "filter_http_body": true, "filter_default_fail": false,
            "uuid": "0b3f2d4c-3c6e-4a8e-9a3b-1d2f3e4a5b6c",
            "ping_url": "https://hc.example.org/ping/0b3f2d4c-3c6e-4a8e-9a3b-1d2f3e4a5b6c",
            "channels": "", "schedule": "0 3 * * *", "tz": "Europe/Riga"
        });
        let c = foreign_check(obj.as_object().expect("object"), &[]).expect("maps");
        assert_eq!(c.uuid.to_string(), "0b3f2d4c-3c6e-4a8e-9a3b-1d2f3e4a5b6c");
        assert_eq!((c.status.as_str(), c.n_pings), ("paused", 3));
        assert_eq!(c.settings["schedule"], "0 3 * * *");
        assert_eq!(c.settings["success_kw"], "OK");
        assert!(
            !c.settings.contains_key("subject"),
            "keywords win over aliases"
        );
        assert!(!c.settings.contains_key("n_pings") && !c.settings.contains_key("uuid"));
        let spec = crate::model::spec::parse_spec(&c.settings).expect("a valid create body");
        assert_eq!(spec.tz, Some("Europe/Riga"));
    }

    #[test]
    fn an_overdue_source_carries_its_alerting_rules() {
        let doc = json!({"uuid": "0b3f2d4c-3c6e-4a8e-9a3b-1d2f3e4a5b6c", "name": "x",
            "timeout": 600, "grace": 60, "status": "up", "fail_threshold": 3,
            "max_duration": 900, "min_duration": 10});
        let c = foreign_check(doc.as_object().expect("object"), &[]).expect("maps");
        let spec = crate::model::spec::parse_spec(&c.settings).expect("a valid create body");
        assert_eq!(
            (spec.fail_threshold, spec.max_duration, spec.min_duration),
            (Some(3), Some(900), Some(10))
        );
    }

    #[test]
    fn old_releases_and_read_only_keys() {
        let old = json!({"uuid": "0b3f2d4c-3c6e-4a8e-9a3b-1d2f3e4a5b6c", "name": "x",
            "timeout": 600, "grace": 60, "subject": "DONE", "status": "up"});
        let c = foreign_check(old.as_object().expect("object"), &[]).expect("maps");
        assert_eq!(
            (c.settings["timeout"].clone(), c.settings["subject"].clone()),
            (json!(600), json!("DONE"))
        );
        assert_eq!(c.status, "up");
        let ro = json!({"checks": [{"name": "x", "unique_key": "a".repeat(40)}]});
        assert!(matches!(
            parse_list(&ro, "u", &[]),
            Err(HcError::ReadOnlyKey)
        ));
        assert!(matches!(
            parse_list(&json!({"x": 1}), "u", &[]),
            Err(HcError::Shape { .. })
        ));
        assert_eq!(
            checks_url("https://hc.example.org/"),
            "https://hc.example.org/api/v3/checks/"
        );
        assert_eq!(
            checks_url("http://h:8000/api/v3"),
            "http://h:8000/api/v3/checks/"
        );
    }

    #[test]
    fn state_badge_key_and_integrations_come_along() {
        let ops: Uuid = "5a3f0000-0000-4000-8000-000000000001"
            .parse()
            .expect("uuid");
        let gone: Uuid = "5a3f0000-0000-4000-8000-000000000002"
            .parse()
            .expect("uuid");
        let channels = [ForeignChannel {
            id: ops,
            name: "ops".into(),
            kind: "email".into(),
        }];
        let obj = json!({
            "name": "x", "status": "grace", "n_pings": 41, "started": true,
            "last_ping": "2026-01-01T00:00:00+00:00", "last_duration": 12,
            "badge_url": "https://hc.example.org/b/2/9d0e4c2a-5b1f-4c3d-8e7f-0a1b2c3d4e5f.svg",
            "uuid": "0b3f2d4c-3c6e-4a8e-9a3b-1d2f3e4a5b6c", "channels": format!("{ops},{gone}"),
            "timeout": 600, "grace": 60
        });
        let c = foreign_check(obj.as_object().expect("object"), &channels).expect("maps");
        assert_eq!((c.status.as_str(), c.n_pings, c.started), ("up", 41, true));
        assert_eq!(c.last_ping.as_deref(), Some("2026-01-01T00:00:00Z"));
        assert_eq!(c.last_duration, Some(12));
        assert_eq!(
            c.badge_key.map(|k| k.to_string()).as_deref(),
            Some("9d0e4c2a-5b1f-4c3d-8e7f-0a1b2c3d4e5f")
        );
        assert_eq!(c.channels[0], channels[0]);
        assert_eq!(
            (c.channels[1].id, c.channels[1].kind.as_str()),
            (gone, "unknown")
        );
        assert_eq!(badge_key("https://hc/badge/abc/sig/tag.svg"), None);
        let bad = json!({"uuid": "0b3f2d4c-3c6e-4a8e-9a3b-1d2f3e4a5b6c", "status": "odd"});
        assert!(foreign_check(bad.as_object().expect("object"), &[]).is_err());

        let pings = json!({"pings": [
            {"type": "success", "date": "2026-01-02T00:00:00+00:00", "rid": null},
            {"type": "start", "date": "2026-01-01T23:59:00.5+00:00",
             "rid": "0b3f2d4c-3c6e-4a8e-9a3b-1d2f3e4a5b6d"},
            {"type": "start", "date": "2026-01-01T00:00:00+00:00", "rid": null}
        ]});
        let (at, rid) = newest_start(&pings).expect("a start");
        assert_eq!(at, "2026-01-01T23:59:00.5Z");
        assert_eq!(
            rid.map(|r| r.to_string()).as_deref(),
            Some("0b3f2d4c-3c6e-4a8e-9a3b-1d2f3e4a5b6d")
        );
        assert_eq!(newest_start(&json!({"pings": []})), None);
    }
}
