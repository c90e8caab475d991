//! Integrations: turning a queued alert into a message and delivering it. Each channel kind
//! is one file implementing [`Notifier`]: a pure function from the channel's settings and a
//! [`Message`] to an [`Outgoing`] (an HTTP request, an email or a command), unit-tested
//! without I/O. `transport.rs` performs an `Outgoing` (reqwest, lettre, a child process);
//! `worker.rs` reads the durable outbox, delivers, retries and records every attempt.

pub(crate) mod discord;
pub(crate) mod email;
pub(crate) mod gotify;
pub(crate) mod matrix;
pub(crate) mod mattermost;
pub(crate) mod message;
pub(crate) mod ntfy;
pub(crate) mod pushover;
pub(crate) mod shell;
pub(crate) mod slack;
pub(crate) mod telegram;
pub(crate) mod transport;
pub(crate) mod webhook;
pub mod worker;

use crate::model::ChannelConfig;
pub use crate::model::outbox::NotifyConfig;
pub use message::Message;
pub(crate) use transport::Transports;

/// Every kind `channel add` accepts.
pub const KINDS: &[&str] = &[
    "email",
    "webhook",
    "ntfy",
    "gotify",
    "discord",
    "slack",
    "telegram",
    "pushover",
    "matrix",
    "mattermost",
    "shell",
];

/// Why a channel's settings cannot make a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NotifyError {
    #[error("{kind} channel: {message}")]
    Config { kind: String, message: String },
    /// The channel has nothing to send for this event (e.g. a webhook without an up URL).
    #[error("nothing to send for this event")]
    Skip,
}

impl NotifyError {
    pub(crate) fn config(kind: &str, message: impl Into<String>) -> NotifyError {
        NotifyError::Config {
            kind: kind.to_string(),
            message: message.into(),
        }
    }
}

/// An HTTP request to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HttpRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    /// Only these statuses count as delivered (the webhook's list, §8.2); else any 2xx.
    pub(crate) accept: Option<&'static [u16]>,
}

impl HttpRequest {
    /// A POST of `value` as JSON.
    pub(crate) fn json(url: String, value: &serde_json::Value) -> HttpRequest {
        HttpRequest {
            method: "POST".into(),
            url,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: Some(value.to_string().into_bytes()),
            accept: None,
        }
    }
}

/// An email to send through the server-wide SMTP settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Email {
    pub(crate) to: String,
    pub(crate) subject: String,
    pub(crate) text: String,
    /// The left part of the `Message-ID` (the transport adds `@` and the sender's domain):
    /// the same for every retry of one alert, different for every alert.
    pub(crate) id_left: String,
}

/// A command to run with `sh -c`, values in its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Command {
    pub(crate) command: String,
    pub(crate) env: Vec<(String, String)>,
}

/// What one notification amounts to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outgoing {
    Http(HttpRequest),
    Email(Email),
    Command(Command),
}

/// One channel kind.
pub(crate) trait Notifier {
    /// What to send for `msg`: pure, no I/O.
    fn prepare(&self, msg: &Message) -> Result<Outgoing, NotifyError>;
}

/// The notifier of a channel's configuration, with its settings checked.
pub(crate) fn notifier(
    config: &ChannelConfig,
) -> Result<Box<dyn Notifier + Send + Sync>, NotifyError> {
    Ok(match config {
        ChannelConfig::Email { address } => Box::new(email::EmailNotifier::new(address)?),
        ChannelConfig::Webhook(w) => Box::new(webhook::Webhook::new(w)?),
        ChannelConfig::Other { kind, settings } => {
            let s = Settings(settings);
            match kind.as_str() {
                "ntfy" => Box::new(ntfy::Ntfy::new(&s)?),
                "gotify" => Box::new(gotify::Gotify::new(&s)?),
                "discord" => Box::new(discord::Discord::new(&s)?),
                "slack" => Box::new(slack::Slack::new(&s)?),
                "telegram" => Box::new(telegram::Telegram::new(&s)?),
                "pushover" => Box::new(pushover::Pushover::new(&s)?),
                "matrix" => Box::new(matrix::Matrix::new(&s)?),
                "mattermost" => Box::new(mattermost::Mattermost::new(&s)?),
                "shell" => Box::new(shell::Shell::new(&s)?),
                other => {
                    return Err(NotifyError::config(
                        other,
                        format!("unknown kind (known: {})", KINDS.join(", ")),
                    ));
                }
            }
        }
    })
}

/// Read access to an `Other` channel's key/value settings.
pub(crate) struct Settings<'a>(pub &'a [(String, String)]);

impl Settings<'_> {
    /// A setting, "" when absent.
    pub(crate) fn get(&self, key: &str) -> &str {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    }

    /// A setting that must be present and not empty.
    pub(crate) fn required(&self, kind: &str, key: &str) -> Result<String, NotifyError> {
        match self.get(key) {
            "" => Err(NotifyError::config(kind, format!("needs --{key}"))),
            v => Ok(v.to_string()),
        }
    }

    /// The base URL (`url` setting) or the kind's public default, without a trailing slash.
    pub(crate) fn base_url(&self, kind: &str, default: &str) -> Result<String, NotifyError> {
        let url = match self.get("url") {
            "" => default,
            v => v,
        };
        check_http_url(kind, url)?;
        Ok(url.trim_end_matches('/').to_string())
    }
}

/// An http(s) URL, or a configuration error naming the kind.
pub(crate) fn check_http_url(kind: &str, url: &str) -> Result<(), NotifyError> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(NotifyError::config(
            kind,
            format!("{url:?} is not an http:// or https:// URL"),
        ))
    }
}
