//! Integrations (channels): where alerts go. The channels API exposes `id`, `name` and `kind`;
//! the configuration is kind-specific and has room for every kind to come.

use jiff::Timestamp;
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
}

impl Channel {
    /// The `kind` value of the channels API.
    pub fn kind(&self) -> &str {
        self.config.kind()
    }
}

/// Kind-specific settings. Kinds without dedicated fields yet keep their settings as
/// key/value pairs, so the stored record never needs a new shape to hold them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelConfig {
    Email {
        address: String,
    },
    Webhook {
        url: String,
    },
    Other {
        kind: String,
        settings: Vec<(String, String)>,
    },
}

impl ChannelConfig {
    pub fn kind(&self) -> &str {
        match self {
            ChannelConfig::Email { .. } => "email",
            ChannelConfig::Webhook { .. } => "webhook",
            ChannelConfig::Other { kind, .. } => kind,
        }
    }

    /// The settings as ordered key/value pairs: the shape the data file and the export use,
    /// so a new kind needs no new record shape.
    pub fn to_settings(&self) -> Vec<(String, String)> {
        match self {
            ChannelConfig::Email { address } => vec![("address".to_string(), address.clone())],
            ChannelConfig::Webhook { url } => vec![("url".to_string(), url.clone())],
            ChannelConfig::Other { settings, .. } => settings.clone(),
        }
    }

    /// The inverse of [`ChannelConfig::to_settings`].
    pub fn from_settings(kind: &str, settings: Vec<(String, String)>) -> ChannelConfig {
        let setting = |key: &str| {
            settings
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        match kind {
            "email" => ChannelConfig::Email {
                address: setting("address"),
            },
            "webhook" => ChannelConfig::Webhook {
                url: setting("url"),
            },
            _ => ChannelConfig::Other {
                kind: kind.to_string(),
                settings,
            },
        }
    }

    /// A one-line, secret-free description for `channel ls`.
    pub fn summary(&self) -> String {
        match self {
            ChannelConfig::Email { address } => address.clone(),
            ChannelConfig::Webhook { url } => url.clone(),
            ChannelConfig::Other { settings, .. } => settings
                .iter()
                .map(|(k, _)| k.as_str())
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}
