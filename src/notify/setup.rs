//! What a person gives to add a channel, whoever asks (`overdue channel add`'s flags, the
//! dashboard's integrations form): which settings each kind takes (one of another kind is
//! refused), the configuration they describe as the kind's notifier checks it, and the repeat
//! interval. One set of rules, so that the CLI and the dashboard accept and refuse the same
//! input with the same words. Messages name the settings by their CLI flags (`--url`).

use jiff::SignedDuration;

use crate::model::ChannelConfig;
use crate::model::channel::{HookSpec, WebhookConfig};
use crate::model::limits::MIN_REPEAT_SECS;
use crate::notify::{KINDS, NotifyError, notifier};
use crate::service::{AdminError, ServiceError};

/// The settings of a new channel; None (or an empty list) for a setting not given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ChannelFields {
    pub(crate) kind: String,
    pub(crate) value: Option<String>,
    pub(crate) url: Option<String>,
    pub(crate) url_down: Option<String>,
    pub(crate) url_up: Option<String>,
    pub(crate) method: Option<String>,
    pub(crate) body: Option<String>,
    pub(crate) body_down: Option<String>,
    pub(crate) body_up: Option<String>,
    /// `Name: value` each.
    pub(crate) headers: Vec<String>,
    pub(crate) topic: Option<String>,
    pub(crate) priority: Option<String>,
    pub(crate) token: Option<String>,
    pub(crate) chat: Option<String>,
    pub(crate) user: Option<String>,
    pub(crate) room: Option<String>,
    pub(crate) cmd_down: Option<String>,
    pub(crate) cmd_up: Option<String>,
}

/// The kind-specific settings each kind takes, by flag name; every other one is refused.
pub(crate) fn kind_flags(kind: &str) -> &'static [&'static str] {
    match kind {
        "email" => &["value"],
        "webhook" => &[
            "url",
            "url-down",
            "url-up",
            "method",
            "body",
            "body-down",
            "body-up",
            "header",
        ],
        "ntfy" => &["url", "topic", "priority", "token"],
        "gotify" => &["url", "token"],
        "discord" | "slack" | "mattermost" => &["url"],
        "telegram" => &["url", "token", "chat"],
        "pushover" => &["url", "token", "user", "priority"],
        "matrix" => &["url", "token", "room"],
        "shell" => &["cmd-down", "cmd-up"],
        _ => &[],
    }
}

/// Refuses settings that `kind` does not take: they would be stored and never used, and
/// usually mean a typo or the wrong kind. `given` is `(flag, the setting it stands for)`
/// (the CLI's `--token-file` stands for `--token`).
pub(crate) fn check_flags_apply(kind: &str, given: &[(&str, &str)]) -> Result<(), String> {
    if !KINDS.contains(&kind) {
        return Ok(()); // the unknown kind is the message
    }
    let takes = kind_flags(kind);
    let foreign: Vec<String> = given
        .iter()
        .filter(|(_, stands_for)| !takes.contains(stands_for))
        .map(|(flag, _)| format!("--{flag}"))
        .collect();
    if foreign.is_empty() {
        return Ok(());
    }
    let takes: Vec<String> = takes.iter().map(|f| format!("--{f}")).collect();
    Err(format!(
        "--kind {kind} does not take {} (it takes {})",
        foreign.join(", "),
        takes.join(", ")
    ))
}

impl ChannelFields {
    /// The kind-specific settings given, by flag name.
    pub(crate) fn given(&self) -> Vec<&'static str> {
        let set = |v: &Option<String>| v.is_some();
        [
            ("value", set(&self.value)),
            ("url", set(&self.url)),
            ("url-down", set(&self.url_down)),
            ("url-up", set(&self.url_up)),
            ("method", set(&self.method)),
            ("body", set(&self.body)),
            ("body-down", set(&self.body_down)),
            ("body-up", set(&self.body_up)),
            ("header", !self.headers.is_empty()),
            ("topic", set(&self.topic)),
            ("priority", set(&self.priority)),
            ("token", set(&self.token)),
            ("chat", set(&self.chat)),
            ("user", set(&self.user)),
            ("room", set(&self.room)),
            ("cmd-down", set(&self.cmd_down)),
            ("cmd-up", set(&self.cmd_up)),
        ]
        .into_iter()
        .filter(|(_, given)| *given)
        .map(|(flag, _)| flag)
        .collect()
    }

    /// [`check_flags_apply`] for these fields.
    pub(crate) fn check_apply(&self) -> Result<(), String> {
        let given: Vec<(&str, &str)> = self.given().into_iter().map(|f| (f, f)).collect();
        check_flags_apply(&self.kind, &given)
    }
}

fn usage(e: &NotifyError) -> ServiceError {
    AdminError::Usage(e.to_string()).into()
}

/// `Name: value` headers.
fn parse_headers(raw: &[String]) -> Result<Vec<(String, String)>, ServiceError> {
    raw.iter()
        .map(|h| {
            let (k, v) = h
                .split_once(':')
                .ok_or_else(|| AdminError::Usage(format!("--header {h:?} is not `Name: value`")))?;
            let k = k.trim();
            if k.is_empty() || !k.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(AdminError::Usage(format!("--header {h:?}: bad name")));
            }
            Ok((k.to_string(), v.trim().to_string()))
        })
        .collect::<Result<_, AdminError>>()
        .map_err(ServiceError::from)
}

fn webhook_config(a: &ChannelFields) -> Result<WebhookConfig, ServiceError> {
    let headers = parse_headers(&a.headers)?;
    let spec = |url: Option<&String>, body: Option<&String>| -> Option<HookSpec> {
        let url = url.or(a.url.as_ref())?;
        let body = body.or(a.body.as_ref()).map_or("", String::as_str);
        let mut spec = HookSpec::new(url, body);
        if let Some(m) = &a.method {
            spec.method = m.to_uppercase();
        }
        spec.headers.clone_from(&headers);
        Some(spec)
    };
    Ok(WebhookConfig {
        down: spec(a.url_down.as_ref(), a.body_down.as_ref()),
        up: spec(a.url_up.as_ref(), a.body_up.as_ref()),
    })
}

/// The configuration the fields describe, checked by the kind's notifier.
pub(crate) fn config_from_fields(a: &ChannelFields) -> Result<ChannelConfig, ServiceError> {
    let refuse = |m: String| ServiceError::from(AdminError::Usage(m));
    a.check_apply().map_err(refuse)?;
    let config = match a.kind.as_str() {
        "email" => ChannelConfig::Email {
            address: a
                .value
                .clone()
                .ok_or_else(|| refuse("--kind email needs --value ADDRESS".into()))?,
        },
        "webhook" => {
            if a.url.is_none() && a.url_down.is_none() && a.url_up.is_none() {
                return Err(refuse(
                    "--kind webhook needs --url URL (or --url-down/--url-up)".into(),
                ));
            }
            ChannelConfig::Webhook(webhook_config(a)?)
        }
        kind if KINDS.contains(&kind) => {
            let mut settings = Vec::new();
            for (key, value) in [
                ("url", &a.url),
                ("topic", &a.topic),
                ("priority", &a.priority),
                ("token", &a.token),
                ("chat", &a.chat),
                ("user", &a.user),
                ("room", &a.room),
                ("cmd_down", &a.cmd_down),
                ("cmd_up", &a.cmd_up),
            ] {
                if let Some(v) = value {
                    settings.push((key.to_string(), v.clone()));
                }
            }
            ChannelConfig::Other {
                kind: kind.to_string(),
                settings,
            }
        }
        other => {
            return Err(refuse(format!(
                "unknown channel kind {other:?} (known: {})",
                KINDS.join(", ")
            )));
        }
    };
    notifier(&config).map_err(|e| usage(&e))?;
    Ok(config)
}

/// `1h`, `30m`, `1h 30m` or ISO 8601 `PT1H`; at least a minute.
pub(crate) fn parse_repeat(text: &str) -> Result<SignedDuration, ServiceError> {
    let d: SignedDuration = text.parse().map_err(|_| {
        AdminError::Usage(format!(
            "--repeat {text:?} is not a duration such as 1h or 30m"
        ))
    })?;
    if d.as_secs() < MIN_REPEAT_SECS {
        return Err(
            AdminError::Usage(format!("--repeat is at least {MIN_REPEAT_SECS} seconds")).into(),
        );
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(kind: &str) -> ChannelFields {
        ChannelFields {
            kind: kind.into(),
            ..Default::default()
        }
    }

    #[test]
    fn webhook_fields_make_per_direction_templates() {
        let mut a = fields("webhook");
        a.url_down = Some("http://h/down".into());
        a.body = Some("{\"s\": \"$STATUS\"}".into());
        a.headers = vec!["X-Token: abc".into()];
        let ChannelConfig::Webhook(w) = config_from_fields(&a).expect("valid") else {
            panic!("webhook")
        };
        let down = w.down.expect("down");
        assert_eq!(down.method, "POST");
        assert_eq!(down.headers, vec![("X-Token".into(), "abc".into())]);
        assert!(w.up.is_none(), "no --url-up and no --url");
        a.headers = vec!["nocolon".into()];
        assert!(config_from_fields(&a).is_err());
    }

    #[test]
    fn kinds_check_their_required_settings() {
        let err = config_from_fields(&fields("ntfy")).expect_err("needs a topic");
        assert!(err.to_string().contains("--topic"), "{err}");
        let mut t = fields("telegram");
        t.token = Some("1:x".into());
        t.chat = Some("-5".into());
        assert!(config_from_fields(&t).is_ok());
        assert!(config_from_fields(&fields("pigeon")).is_err());
        let err = config_from_fields(&fields("email")).expect_err("needs an address");
        assert_eq!(err.to_string(), "--kind email needs --value ADDRESS");
    }

    #[test]
    fn settings_of_another_kind_are_refused_by_name() {
        let mut a = fields("webhook");
        a.url = Some("http://h/x".into());
        assert!(a.check_apply().is_ok());
        a.topic = Some("t".into());
        a.cmd_down = Some("true".into());
        let err = a.check_apply().expect_err("foreign settings");
        assert!(
            err.starts_with("--kind webhook does not take --topic, --cmd-down (it takes --url"),
            "{err}"
        );
        assert!(config_from_fields(&a).is_err());
        assert_eq!(
            check_flags_apply("email", &[("token-file", "token")]),
            Err("--kind email does not take --token-file (it takes --value)".into())
        );
    }

    #[test]
    fn repeat_durations() {
        assert_eq!(parse_repeat("1h").expect("1h").as_secs(), 3600);
        assert_eq!(parse_repeat("90m").expect("90m").as_secs(), 5400);
        assert!(parse_repeat("10s").is_err(), "too short");
        assert!(parse_repeat("soon").is_err());
    }
}
