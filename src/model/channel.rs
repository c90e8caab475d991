//! Integrations (channels): where alerts go. The channels API exposes `id`, `name` and `kind`;
//! the configuration is kind-specific. Email and webhook have typed settings; every other kind
//! keeps its settings as key/value pairs that its notifier (`src/notify/<kind>.rs`) parses, so
//! the stored record never needs a new shape for a new kind.

use jiff::{SignedDuration, Timestamp};
use uuid::Uuid;

use crate::model::events::Events;

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
    /// The events the channel sends for checks that did not choose their own (`down,up`
    /// unless set: `model::events`).
    pub events: Events,
}

impl Channel {
    /// The `kind` value of the channels API.
    pub(crate) fn kind(&self) -> &str {
        self.config.kind()
    }

    /// Every setting of the channel as key/value pairs, the repeat interval and a chosen set
    /// of events included.
    pub(crate) fn settings(&self) -> Vec<(String, String)> {
        let mut settings = self.config.to_settings();
        if let Some(repeat) = self.repeat {
            settings.push((REPEAT_KEY.to_string(), repeat.as_secs().to_string()));
        }
        if self.events != Events::default() {
            settings.push((EVENTS_KEY.to_string(), self.events.to_text()));
        }
        settings
    }

    /// The inverse of [`Channel::settings`]: the configuration, the repeat interval and the
    /// events.
    pub(crate) fn from_settings(
        kind: &str,
        settings: Vec<(String, String)>,
    ) -> (ChannelConfig, Option<SignedDuration>, Events) {
        let repeat = settings
            .iter()
            .find(|(k, _)| k == REPEAT_KEY)
            .and_then(|(_, v)| v.parse::<i64>().ok())
            .map(SignedDuration::from_secs);
        let events = settings
            .iter()
            .find(|(k, _)| k == EVENTS_KEY)
            .and_then(|(_, v)| Events::parse(v).ok())
            .unwrap_or_default();
        let settings = settings
            .into_iter()
            .filter(|(k, _)| k != REPEAT_KEY && k != EVENTS_KEY)
            .collect();
        (ChannelConfig::from_settings(kind, settings), repeat, events)
    }
}

/// The settings key that holds a channel's repeat interval (seconds), for every kind.
const REPEAT_KEY: &str = "repeat";

/// The settings key that holds the events a channel sends, when not `down,up`.
const EVENTS_KEY: &str = "events";

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

    /// A one-line, secret-free description for `channel ls` and the dashboard: an email
    /// address, the hosts of URLs (never their paths, which often carry tokens, nor their
    /// credentials), and for other kinds only the names of their settings, never the values
    /// (tokens, topics, commands).
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
            ChannelConfig::Other { kind, settings } => {
                let host = settings
                    .iter()
                    .find(|(k, v)| k == "url" && !v.is_empty())
                    .map(|(_, v)| v.as_str())
                    .or_else(|| default_server(kind))
                    .map(url_host);
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

/// Public servers of the kinds that have one: the notifier calls it when the `url` setting is
/// empty, and a summary names its host.
pub(crate) const NTFY_SERVER: &str = "https://ntfy.sh";
pub(crate) const TELEGRAM_SERVER: &str = "https://api.telegram.org";
pub(crate) const PUSHOVER_SERVER: &str = "https://api.pushover.net";
pub(crate) const MATRIX_SERVER: &str = "https://matrix.org";

/// The server a kind calls when its `url` setting is empty, if it has one.
pub(crate) fn default_server(kind: &str) -> Option<&'static str> {
    match kind {
        "ntfy" => Some(NTFY_SERVER),
        "telegram" => Some(TELEGRAM_SERVER),
        "pushover" => Some(PUSHOVER_SERVER),
        "matrix" => Some(MATRIX_SERVER),
        _ => None,
    }
}

/// The host (and port, when not the scheme's default) of a URL: enough to recognise it
/// without showing the user name, password, path, query or fragment, any of which may hold a
/// secret. Something that does not parse as a URL shows as `(not a URL)`, never as itself.
pub(crate) fn url_host(url: &str) -> String {
    let Ok(parsed) = ::url::Url::parse(url) else {
        return "(not a URL)".to_string();
    };
    match (parsed.host_str(), parsed.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_string(),
        (None, _) => "(not a URL)".to_string(),
    }
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

    fn other(kind: &str, settings: &[(&str, &str)]) -> ChannelConfig {
        ChannelConfig::Other {
            kind: kind.into(),
            settings: settings
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect(),
        }
    }

    /// No value of `settings` other than the expected host shows in the summary.
    fn hides_values(c: &ChannelConfig, secrets: &[&str]) {
        let s = c.summary();
        for secret in secrets {
            assert!(!s.contains(secret), "{s:?} shows {secret:?}");
        }
    }

    #[test]
    fn url_hosts_drop_credentials_paths_and_queries() {
        assert_eq!(
            url_host("https://user:pw@hooks.example.org/secret/token?x=1"),
            "hooks.example.org"
        );
        assert_eq!(url_host("http://127.0.0.1:9000/x"), "127.0.0.1:9000");
        assert_eq!(url_host("https://h.example:443/x"), "h.example");
        assert_eq!(url_host("http://[::1]:8080/t"), "[::1]:8080");
        // A password with a slash or a question mark: the authority ends early, and still no
        // part of it shows.
        assert_eq!(url_host("https://u:p/w@h.example/"), "(not a URL)");
        assert_eq!(url_host("https://a@b@h.example/x?q=c@d"), "h.example");
        assert_eq!(url_host("hooks.example/secret"), "(not a URL)");
        assert_eq!(url_host(""), "(not a URL)");
    }

    #[test]
    fn email_shows_its_address() {
        let c = ChannelConfig::Email {
            address: "ops@example.org".into(),
        };
        assert_eq!(c.summary(), "ops@example.org");
    }

    #[test]
    fn webhook_shows_its_hosts_once() {
        assert_eq!(
            ChannelConfig::webhook("https://h.example/t0k3n?sig=abc").summary(),
            "h.example"
        );
        let mut two = WebhookConfig {
            down: Some(HookSpec::new("https://u:pw@down.example/k1", "")),
            up: Some(HookSpec::new(
                "https://up.example/k2",
                "{\"token\": \"b0dy\"}",
            )),
        };
        if let Some(down) = two.down.as_mut() {
            down.headers = vec![("Authorization".into(), "Bearer h3ad3r".into())];
        }
        let c = ChannelConfig::Webhook(two);
        assert_eq!(c.summary(), "down.example,up.example");
        hides_values(&c, &["k1", "k2", "pw", "b0dy", "h3ad3r", "Bearer"]);
        let only_down = ChannelConfig::Webhook(WebhookConfig {
            down: Some(HookSpec::new("http://d.example/x", "")),
            up: None,
        });
        assert_eq!(only_down.summary(), "d.example");
    }

    #[test]
    fn other_kinds_show_a_host_and_setting_names_never_values() {
        let ntfy = other(
            "ntfy",
            &[
                ("url", "https://ntfy.sh"),
                ("topic", "s3cret-topic"),
                ("token", "tk_secret"),
            ],
        );
        assert_eq!(ntfy.summary(), "ntfy.sh (topic,token)");
        hides_values(&ntfy, &["s3cret-topic", "tk_secret"]);
        let own = other(
            "ntfy",
            &[("url", "https://push.example:8443/"), ("topic", "t")],
        );
        assert_eq!(own.summary(), "push.example:8443 (topic)");
        let public = other("ntfy", &[("topic", "t")]);
        assert_eq!(public.summary(), "ntfy.sh (topic)", "the public server");
        let cases = [
            (
                other(
                    "gotify",
                    &[("url", "https://go.example/"), ("token", "Ag0t")],
                ),
                "go.example (token)",
                &["Ag0t"][..],
            ),
            (
                other(
                    "discord",
                    &[("url", "https://discord.com/api/webhooks/1/d1sc")],
                ),
                "discord.com",
                &["d1sc", "webhooks"][..],
            ),
            (
                other(
                    "slack",
                    &[("url", "https://hooks.slack.com/services/T/B/s1ack")],
                ),
                "hooks.slack.com",
                &["s1ack"][..],
            ),
            (
                other("mattermost", &[("url", "https://mm.example/hooks/m4tt")]),
                "mm.example",
                &["m4tt"][..],
            ),
            (
                other("telegram", &[("token", "123:t3l"), ("chat", "-1001")]),
                "api.telegram.org (token,chat)",
                &["t3l", "-1001"][..],
            ),
            (
                other(
                    "pushover",
                    &[("token", "apptok"), ("user", "us3rkey"), ("priority", "1")],
                ),
                "api.pushover.net (token,user,priority)",
                &["apptok", "us3rkey"][..],
            ),
            (
                other(
                    "matrix",
                    &[
                        ("url", "https://matrix.example"),
                        ("token", "syt_x"),
                        ("room", "!r00m:example"),
                    ],
                ),
                "matrix.example (token,room)",
                &["syt_x", "r00m"][..],
            ),
            (
                other("shell", &[("cmd_down", "curl -u admin:pw https://x")]),
                "cmd_down",
                &["admin", "pw", "curl"][..],
            ),
        ];
        for (config, summary, secrets) in cases {
            assert_eq!(config.summary(), summary, "{}", config.kind());
            hides_values(&config, secrets);
        }
    }

    #[test]
    fn default_webhook_method_follows_the_body() {
        assert_eq!(HookSpec::new("http://x", "").method, "GET");
        assert_eq!(HookSpec::new("http://x", "{}").method, "POST");
    }
}
