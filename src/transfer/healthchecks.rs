//! Migration from a running Healthchecks instance through its Management API v3: the checks
//! are fetched with `GET /api/v3/checks/` and each becomes a check here with the same UUID, so
//! every existing ping URL only needs its host changed.
//!
//! Healthchecks shows check UUIDs only to read-write keys (a read-only key gets `unique_key`,
//! from which the UUID cannot be recovered), so a read-write key is required. Integrations
//! are not copied: the API shows only their names and kinds, not their settings.

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
];

/// A check as read from Healthchecks, ready to be created here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForeignCheck {
    pub uuid: Uuid,
    pub name: String,
    /// Paused there: created paused here, so it does not alert before pings arrive.
    pub paused: bool,
    /// A Management API create body (validated by the service like any create request).
    pub settings: Map<String, Value>,
}

#[derive(Debug, thiserror::Error)]
pub enum HcError {
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
    #[error("the answer of {url} is not a Healthchecks check list: {why}")]
    Shape { url: String, why: String },
}

/// Maps one check object of `GET /api/v3/checks/` to a check to create.
pub fn foreign_check(obj: &Map<String, Value>) -> Result<ForeignCheck, String> {
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
    Ok(ForeignCheck {
        uuid,
        name: obj
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        paused: obj.get("status").and_then(Value::as_str) == Some("paused"),
        settings,
    })
}

/// Parses the body of `GET /api/v3/checks/`.
pub fn parse_list(body: &Value, url: &str) -> Result<Vec<ForeignCheck>, HcError> {
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
        out.push(foreign_check(obj).map_err(|why| shape(&why))?);
    }
    Ok(out)
}

/// The check-list URL of an instance given by its base URL (with or without `/api/v3`).
pub fn checks_url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    let base = base.strip_suffix("/api/v3").unwrap_or(base);
    format!("{base}/api/v3/checks/")
}

/// Fetches every check of the project the key belongs to.
pub async fn fetch_checks(base: &str, api_key: &str) -> Result<Vec<ForeignCheck>, HcError> {
    crate::tls::install_provider();
    let url = checks_url(base);
    let transport = |source| HcError::Transport {
        url: url.clone(),
        source,
    };
    let client = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .user_agent(concat!("overdue/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(transport)?;
    let response = client
        .get(&url)
        .header("X-Api-Key", api_key)
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
    let body: Value = serde_json::from_str(&text).map_err(|e| HcError::Shape {
        url: url.clone(),
        why: e.to_string(),
    })?;
    parse_list(&body, &url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        let c = foreign_check(obj.as_object().expect("object")).expect("maps");
        assert_eq!(c.uuid.to_string(), "0b3f2d4c-3c6e-4a8e-9a3b-1d2f3e4a5b6c");
        assert!(c.paused);
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
    fn old_releases_and_read_only_keys() {
        let old = json!({"uuid": "0b3f2d4c-3c6e-4a8e-9a3b-1d2f3e4a5b6c", "name": "x",
            "timeout": 600, "grace": 60, "subject": "DONE", "status": "up"});
        let c = foreign_check(old.as_object().expect("object")).expect("maps");
        assert_eq!(
            (c.settings["timeout"].clone(), c.settings["subject"].clone()),
            (json!(600), json!("DONE"))
        );
        assert!(!c.paused);
        let ro = json!({"checks": [{"name": "x", "unique_key": "a".repeat(40)}]});
        assert!(matches!(parse_list(&ro, "u"), Err(HcError::ReadOnlyKey)));
        assert!(matches!(
            parse_list(&json!({"x": 1}), "u"),
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
}
