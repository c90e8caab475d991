//! The flags of `overdue channel add` and the channel they describe: which flags each kind
//! takes (a flag of another kind is refused), the configuration the kind's notifier checks,
//! the repeat interval, and secrets read from a file or an environment variable by the
//! command-line process itself ([`ChannelAddArgs::resolve_secrets`]).

use clap::Args;
use jiff::SignedDuration;

use crate::model::ChannelConfig;
use crate::model::channel::{HookSpec, WebhookConfig};
use crate::model::limits::MIN_REPEAT_SECS;
use crate::notify::{KINDS, NotifyError, notifier};
use crate::service::{AdminError, ServiceError};

#[derive(Debug, Clone, Default, Args)]
pub struct ChannelAddArgs {
    /// May be left out when there is only one project.
    pub project: Option<String>,
    /// Kind: email, webhook, ntfy, gotify, discord, slack, telegram, pushover, matrix,
    /// mattermost or shell.
    #[arg(long)]
    pub kind: String,
    /// Name of the integration (checks can name it in `channels`).
    #[arg(long)]
    pub name: String,
    /// Email address (email).
    #[arg(long, visible_alias = "address")]
    pub value: Option<String>,
    /// Webhook URL for both directions (webhook); webhook URL (discord, slack, mattermost);
    /// server base URL (ntfy, gotify, telegram, pushover, matrix).
    #[arg(long)]
    pub url: Option<String>,
    /// Webhook URL when the check goes down (webhook).
    #[arg(long)]
    pub url_down: Option<String>,
    /// Webhook URL when the check recovers (webhook).
    #[arg(long)]
    pub url_up: Option<String>,
    /// GET, POST or PUT [default: POST with a body, else GET] (webhook).
    #[arg(long)]
    pub method: Option<String>,
    /// Request body for both directions, with $NAME-style placeholders (webhook).
    #[arg(long)]
    pub body: Option<String>,
    #[arg(long)]
    pub body_down: Option<String>,
    #[arg(long)]
    pub body_up: Option<String>,
    /// A request header `Name: value`, repeatable (webhook).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Topic (ntfy).
    #[arg(long)]
    pub topic: Option<String>,
    /// Priority (ntfy 1-5, pushover -2..1).
    #[arg(long, allow_hyphen_values = true)]
    pub priority: Option<String>,
    /// Access token, app token or bot token (ntfy, gotify, telegram, pushover, matrix).
    /// Prefer --token-file or --token-env: command lines are visible to other users.
    #[arg(long)]
    pub token: Option<String>,
    /// Read the token from this file (trailing newline removed).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<String>,
    /// Read the token from this environment variable.
    #[arg(long, value_name = "VAR")]
    pub token_env: Option<String>,
    /// Chat id or @channel (telegram).
    #[arg(long, allow_hyphen_values = true)]
    pub chat: Option<String>,
    /// User or group key (pushover).
    #[arg(long)]
    pub user: Option<String>,
    /// Room id `!id:server` or alias `#name:server` (matrix).
    #[arg(long)]
    pub room: Option<String>,
    /// Command run with `sh -c` when a check goes down (shell).
    #[arg(long)]
    pub cmd_down: Option<String>,
    /// Command run when a check recovers (shell).
    #[arg(long)]
    pub cmd_up: Option<String>,
    /// Repeat the down alert this often while the check stays down, e.g. `1h` (off by default).
    #[arg(long, value_name = "DURATION")]
    pub repeat: Option<String>,
    /// Do not assign the channel to the project's existing checks.
    #[arg(long)]
    pub no_assign: bool,
    /// Do not give the channel to checks created later (`check add` without --channels).
    #[arg(long)]
    pub no_default: bool,
    #[arg(long)]
    pub json: bool,
}

/// The kind-specific flags each kind takes; every other kind-specific flag is refused.
fn kind_flags(kind: &str) -> &'static [&'static str] {
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

impl ChannelAddArgs {
    /// The kind-specific flags given, as `(flag, the kind flag it stands for)`.
    fn given_kind_flags(&self) -> Vec<(&'static str, &'static str)> {
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
            ("token-file", set(&self.token_file)),
            ("token-env", set(&self.token_env)),
            ("chat", set(&self.chat)),
            ("user", set(&self.user)),
            ("room", set(&self.room)),
            ("cmd-down", set(&self.cmd_down)),
            ("cmd-up", set(&self.cmd_up)),
        ]
        .into_iter()
        .filter(|(_, given)| *given)
        .map(|(flag, _)| {
            let stands_for = match flag {
                "token-file" | "token-env" => "token",
                other => other,
            };
            (flag, stands_for)
        })
        .collect()
    }

    /// Refuses kind-specific flags that `--kind` does not take: they would be stored and
    /// never used, and usually mean a typo or the wrong kind.
    pub(crate) fn check_flags_apply(&self) -> Result<(), String> {
        if !KINDS.contains(&self.kind.as_str()) {
            return Ok(()); // the unknown kind is the message
        }
        let takes = kind_flags(&self.kind);
        let foreign: Vec<String> = self
            .given_kind_flags()
            .into_iter()
            .filter(|(_, stands_for)| !takes.contains(stands_for))
            .map(|(flag, _)| format!("--{flag}"))
            .collect();
        if foreign.is_empty() {
            return Ok(());
        }
        let takes: Vec<String> = takes.iter().map(|f| format!("--{f}")).collect();
        Err(format!(
            "--kind {} does not take {} (it takes {})",
            self.kind,
            foreign.join(", "),
            takes.join(", ")
        ))
    }

    /// Reads `--token-file`/`--token-env` in the calling process (its files and environment,
    /// not the service's), so the token travels only inside the command.
    pub(crate) fn resolve_secrets(&mut self) -> Result<(), String> {
        self.check_flags_apply()?;
        let sources = [
            self.token.is_some(),
            self.token_file.is_some(),
            self.token_env.is_some(),
        ];
        if sources.iter().filter(|s| **s).count() > 1 {
            return Err("give only one of --token, --token-file and --token-env".into());
        }
        if let Some(path) = self.token_file.take() {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read --token-file {path}: {e}"))?;
            self.token = Some(text.trim_end_matches(['\r', '\n']).to_string());
        }
        if let Some(var) = self.token_env.take() {
            let value = std::env::var(&var)
                .map_err(|_| format!("--token-env {var}: the variable is not set"))?;
            self.token = Some(value);
        }
        Ok(())
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

fn webhook_config(a: &ChannelAddArgs) -> Result<WebhookConfig, ServiceError> {
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

/// The configuration the flags describe, checked by the kind's notifier.
pub(crate) fn config_from_args(a: &ChannelAddArgs) -> Result<ChannelConfig, ServiceError> {
    let refuse = |m: String| ServiceError::from(AdminError::Usage(m));
    a.check_flags_apply().map_err(refuse)?;
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

    fn args(kind: &str) -> ChannelAddArgs {
        ChannelAddArgs {
            project: Some("p".into()),
            kind: kind.into(),
            name: "n".into(),
            ..Default::default()
        }
    }

    #[test]
    fn webhook_flags_make_per_direction_templates() {
        let mut a = args("webhook");
        a.url_down = Some("http://h/down".into());
        a.body = Some("{\"s\": \"$STATUS\"}".into());
        a.headers = vec!["X-Token: abc".into()];
        let ChannelConfig::Webhook(w) = config_from_args(&a).expect("valid") else {
            panic!("webhook")
        };
        let down = w.down.expect("down");
        assert_eq!(down.method, "POST");
        assert_eq!(down.headers, vec![("X-Token".into(), "abc".into())]);
        assert!(w.up.is_none(), "no --url-up and no --url");
        a.headers = vec!["nocolon".into()];
        assert!(config_from_args(&a).is_err());
    }

    #[test]
    fn kinds_check_their_required_flags() {
        let err = config_from_args(&args("ntfy")).expect_err("needs a topic");
        assert!(err.to_string().contains("--topic"), "{err}");
        let mut t = args("telegram");
        t.token = Some("1:x".into());
        t.chat = Some("-5".into());
        assert!(config_from_args(&t).is_ok());
        assert!(config_from_args(&args("pigeon")).is_err());
    }

    #[test]
    fn flags_of_another_kind_are_refused_by_name() {
        let mut a = args("webhook");
        a.url = Some("http://h/x".into());
        assert!(a.check_flags_apply().is_ok());
        a.topic = Some("t".into());
        a.cmd_down = Some("true".into());
        let err = a.check_flags_apply().expect_err("foreign flags");
        assert!(
            err.starts_with("--kind webhook does not take --topic, --cmd-down (it takes --url"),
            "{err}"
        );
        assert!(
            config_from_args(&a).is_err(),
            "refused where it is stored, too"
        );
        let mut n = args("ntfy");
        n.topic = Some("t".into());
        n.token_env = Some("VAR".into());
        assert!(
            n.check_flags_apply().is_ok(),
            "--token-env stands for --token"
        );
        let mut e = args("email");
        e.value = Some("a@b.c".into());
        e.token_file = Some("/x".into());
        let err = e.resolve_secrets().expect_err("before reading the file");
        assert_eq!(
            err,
            "--kind email does not take --token-file (it takes --value)"
        );
    }

    #[test]
    fn repeat_durations() {
        assert_eq!(parse_repeat("1h").expect("1h").as_secs(), 3600);
        assert_eq!(parse_repeat("90m").expect("90m").as_secs(), 5400);
        assert!(parse_repeat("10s").is_err(), "too short");
        assert!(parse_repeat("soon").is_err());
    }

    #[test]
    fn secrets_from_a_file_or_the_environment() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("tok");
        std::fs::write(&path, "s3cret\n").expect("write");
        let mut a = args("gotify");
        a.token_file = Some(path.display().to_string());
        a.resolve_secrets().expect("file");
        assert_eq!(a.token.as_deref(), Some("s3cret"));
        assert!(a.token_file.is_none());
        let mut b = args("gotify");
        b.token_env = Some("OVERDUE_TEST_SURELY_UNSET_VAR".into());
        assert!(b.resolve_secrets().is_err());
        let mut c = args("gotify");
        c.token = Some("x".into());
        c.token_env = Some("PATH".into());
        assert!(c.resolve_secrets().is_err(), "two sources");
    }
}
