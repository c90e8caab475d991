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
    pub seq: u64,
    pub name: String,
    pub config: ChannelConfig,
    pub created: Timestamp,
    /// Repeat a down alert this often while the check stays down (off when None).
    pub repeat: Option<SignedDuration>,
}

impl Channel {
    /// The `kind` value of the channels API.
    pub fn kind(&self) -> &str {
        self.config.kind()
    }
}

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

    pub fn kind(&self) -> &str {
        match self {
            ChannelConfig::Email { .. } => "email",
            ChannelConfig::Webhook(_) => "webhook",
            ChannelConfig::Other { kind, .. } => kind,
        }
    }

    /// A one-line, secret-free description for `channel ls`: addresses and hosts, never
    /// paths (webhook URLs often carry tokens), tokens or passwords.
    pub fn summary(&self) -> String {
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
pub fn url_host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    host.rsplit('@').next().unwrap_or(host).to_string()
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
