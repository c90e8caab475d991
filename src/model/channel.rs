//! Integrations (channels): where alerts go. The channels API exposes `id`, `name` and `kind`;
//! the configuration is kind-specific. Email and webhook have typed settings; every other kind
//! keeps its settings as key/value pairs that its notifier (`src/notify/<kind>.rs`) parses, so
//! the stored record never needs a new shape for a new kind.

use jiff::{SignedDuration, Timestamp};
use uuid::Uuid;

/// One integration of a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    pub uuid: Uuid,
    pub project: Uuid,
    pub(crate) seq: u64,
    pub name: String,
    pub(crate) config: ChannelConfig,
    pub created: Timestamp,
    /// Repeat a down alert this often while the check stays down (off when None).
    pub repeat: Option<SignedDuration>,
    /// Checks created by people (the CLI's `check add`, later the dashboard) get this channel
    /// unless they name their channels. The Management API ignores it: there a create
    /// without `channels` assigns none (the Healthchecks contract).
    pub(crate) default_for_new: bool,
}

impl Channel {
    /// The `kind` value of the channels API.
    pub(crate) fn kind(&self) -> &str {
        self.config.kind()
    }

    /// Every setting of the channel as key/value pairs, the repeat interval included.
    pub(crate) fn settings(&self) -> Vec<(String, String)> {
        let mut settings = self.config.to_settings();
        if let Some(repeat) = self.repeat {
            settings.push((REPEAT_KEY.to_string(), repeat.as_secs().to_string()));
        }
        settings
    }

    /// The inverse of [`Channel::settings`]: the configuration and the repeat interval.
    pub(crate) fn from_settings(
        kind: &str,
        settings: Vec<(String, String)>,
    ) -> (ChannelConfig, Option<SignedDuration>) {
        let repeat = settings
            .iter()
            .find(|(k, _)| k == REPEAT_KEY)
            .and_then(|(_, v)| v.parse::<i64>().ok())
            .map(SignedDuration::from_secs);
        let settings = settings
            .into_iter()
            .filter(|(k, _)| k != REPEAT_KEY)
            .collect();
        (ChannelConfig::from_settings(kind, settings), repeat)
    }
}

/// The settings key that holds a channel's repeat interval (seconds), for every kind.
const REPEAT_KEY: &str = "repeat";

/// Kind-specific settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelConfig {
    Email {
        address: String,
    },
    Webhook(WebhookConfig),
    Other {
        kind: String,
        settings: Vec<(String, String)>,
    },
}

/// A webhook: one request template per direction (reference-behavior §8.2). A direction
/// without a template is a no-op for that channel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookConfig {
    pub down: Option<HookSpec>,
    pub up: Option<HookSpec>,
}

/// The request one direction of a webhook makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSpec {
    /// `GET`, `POST` or `PUT`.
    pub method: String,
    pub url: String,
    /// Sent only for POST and PUT.
    pub body: String,
    pub headers: Vec<(String, String)>,
}

impl HookSpec {
    /// A request to `url` with the default method: POST when there is a body, else GET.
    pub fn new(url: &str, body: &str) -> HookSpec {
        HookSpec {
            method: if body.is_empty() { "GET" } else { "POST" }.to_string(),
            url: url.to_string(),
            body: body.to_string(),
            headers: Vec::new(),
        }
    }
}

impl ChannelConfig {
    /// A webhook that calls `url` (GET) for both directions.
    pub fn webhook(url: &str) -> ChannelConfig {
        ChannelConfig::Webhook(WebhookConfig {
            down: Some(HookSpec::new(url, "")),
            up: Some(HookSpec::new(url, "")),
        })
    }

    pub(crate) fn kind(&self) -> &str {
        match self {
            ChannelConfig::Email { .. } => "email",
            ChannelConfig::Webhook(_) => "webhook",
            ChannelConfig::Other { kind, .. } => kind,
        }
    }

    /// The settings as ordered key/value pairs: the shape the data file and the export use,
    /// so a new kind needs no new record shape. A webhook keeps each direction as
    /// `down_*`/`up_*` settings, its headers as a JSON object.
    pub(crate) fn to_settings(&self) -> Vec<(String, String)> {
        match self {
            ChannelConfig::Email { address } => vec![("address".to_string(), address.clone())],
            ChannelConfig::Webhook(w) => webhook_settings(w),
            ChannelConfig::Other { settings, .. } => settings.clone(),
        }
    }

    /// The inverse of [`ChannelConfig::to_settings`].
    pub(crate) fn from_settings(kind: &str, settings: Vec<(String, String)>) -> ChannelConfig {
        match kind {
            "email" => ChannelConfig::Email {
                address: settings
                    .iter()
                    .find(|(k, _)| k == "address")
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default(),
            },
            "webhook" => ChannelConfig::Webhook(webhook_config(&settings)),
            _ => ChannelConfig::Other {
                kind: kind.to_string(),
                settings,
            },
        }
    }

    /// A one-line, secret-free description for `channel ls`: addresses and hosts, never
    /// paths (webhook URLs often carry tokens), tokens or passwords.
    pub(crate) fn summary(&self) -> String {
        match self {
            ChannelConfig::Email { address } => address.clone(),
            ChannelConfig::Webhook(w) => {
                let mut hosts: Vec<String> = [&w.down, &w.up]
                    .into_iter()
                    .flatten()
                    .map(|h| url_host(&h.url))
                    .collect();
                hosts.dedup();
                hosts.join(",")
            }
            ChannelConfig::Other { settings, .. } => {
                let host = settings
                    .iter()
                    .find(|(k, _)| k == "url")
                    .map(|(_, v)| url_host(v));
                let names = settings
                    .iter()
                    .filter(|(k, _)| k != "url")
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>()
                    .join(",");
                match host {
                    Some(h) if names.is_empty() => h,
                    Some(h) => format!("{h} ({names})"),
                    None => names,
                }
            }
        }
    }
}

/// The host of a URL, enough to recognise it without printing secrets in its path.
pub(crate) fn url_host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    host.rsplit('@').next().unwrap_or(host).to_string()
}

/// A webhook's two directions as `down_*`/`up_*` settings; headers as a JSON object.
fn webhook_settings(w: &WebhookConfig) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (dir, spec) in [("down", &w.down), ("up", &w.up)] {
        let Some(spec) = spec else { continue };
        let headers: serde_json::Map<String, serde_json::Value> = spec
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect();
        out.push((format!("{dir}_method"), spec.method.clone()));
        out.push((format!("{dir}_url"), spec.url.clone()));
        out.push((format!("{dir}_body"), spec.body.clone()));
        out.push((
            format!("{dir}_headers"),
            serde_json::Value::Object(headers).to_string(),
        ));
    }
    out
}

/// The inverse of [`webhook_settings`]. A record from before per-direction templates holds
/// only `url`: both directions call it with GET.
fn webhook_config(settings: &[(String, String)]) -> WebhookConfig {
    let get = |key: &str| {
        settings
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    if let Some(url) = get("url") {
        return WebhookConfig {
            down: Some(HookSpec::new(url, "")),
            up: Some(HookSpec::new(url, "")),
        };
    }
    let spec = |dir: &str| -> Option<HookSpec> {
        let url = get(&format!("{dir}_url"))?;
        let headers = get(&format!("{dir}_headers"))
            .and_then(|h| {
                serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(h).ok()
            })
            .map(|m| {
                m.into_iter()
                    .map(|(k, v)| (k, v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        Some(HookSpec {
            method: get(&format!("{dir}_method")).unwrap_or("GET").to_string(),
            url: url.to_string(),
            body: get(&format!("{dir}_body")).unwrap_or("").to_string(),
            headers,
        })
    };
    WebhookConfig {
        down: spec("down"),
        up: spec("up"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_hide_paths_credentials_and_secrets() {
        assert_eq!(
            url_host("https://user:pw@hooks.example.org/secret/token?x=1"),
            "hooks.example.org"
        );
        assert_eq!(url_host("http://127.0.0.1:9000/x"), "127.0.0.1:9000");
        let ntfy = ChannelConfig::Other {
            kind: "ntfy".into(),
            settings: vec![
                ("url".into(), "https://ntfy.sh".into()),
                ("topic".into(), "alerts".into()),
                ("token".into(), "tk_secret".into()),
            ],
        };
        assert_eq!(ntfy.summary(), "ntfy.sh (topic,token)");
        assert!(!ntfy.summary().contains("tk_secret"));
        assert_eq!(
            ChannelConfig::webhook("https://h.example/t0k3n").summary(),
            "h.example"
        );
    }

    #[test]
    fn default_webhook_method_follows_the_body() {
        assert_eq!(HookSpec::new("http://x", "").method, "GET");
        assert_eq!(HookSpec::new("http://x", "{}").method, "POST");
    }
}
