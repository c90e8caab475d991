//! `overdue channel add|ls|rm|test`: integrations of a project. Kind-specific flags become the
//! channel's settings; secrets can come from a file or an environment variable, read by the
//! command-line process itself ([`ChannelAddArgs::resolve_secrets`]), and are never printed.

use std::fmt::Write as _;

use clap::{Args, Subcommand};
use jiff::SignedDuration;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::cli::admin::{AdminOutput, pretty};
use crate::model::channel::{HookSpec, WebhookConfig};
use crate::model::limits::MIN_REPEAT_SECS;
use crate::model::outbox::health;
use crate::model::time::iso_seconds;
use crate::model::{Channel, ChannelConfig};
use crate::notify::{KINDS, NotifyError, Transports, notifier};
use crate::service::admin::{channel_named, project_named};
use crate::service::{Service, ServiceError};

/// Recent deliveries read for the health column of `channel ls`.
const HEALTH_WINDOW: usize = 20;

#[derive(Debug, Clone, Default, Args, Serialize, Deserialize)]
pub struct ChannelAddArgs {
    pub project: String,
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
    #[arg(long)]
    pub json: bool,
}

impl ChannelAddArgs {
    /// Reads `--token-file`/`--token-env` in the calling process (its files and environment,
    /// not the service's), so the token travels only inside the command.
    pub fn resolve_secrets(&mut self) -> Result<(), String> {
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

#[derive(Debug, Clone, Subcommand, Serialize, Deserialize)]
pub enum ChannelCmd {
    /// Add an integration to a project.
    Add(Box<ChannelAddArgs>),
    /// List a project's integrations and how their deliveries go.
    Ls {
        project: String,
        #[arg(long)]
        json: bool,
    },
    /// Remove an integration (by id or name) and unassign it from every check.
    Rm {
        project: String,
        #[arg(value_name = "ID-OR-NAME")]
        ident: String,
    },
    /// Send a test notification through an integration and print the outcome.
    Test {
        project: String,
        #[arg(value_name = "ID-OR-NAME")]
        ident: String,
    },
}

fn usage(e: NotifyError) -> ServiceError {
    ServiceError::Usage(e.to_string())
}

/// `Name: value` headers.
fn parse_headers(raw: &[String]) -> Result<Vec<(String, String)>, ServiceError> {
    raw.iter()
        .map(|h| {
            let (k, v) = h.split_once(':').ok_or_else(|| {
                ServiceError::Usage(format!("--header {h:?} is not `Name: value`"))
            })?;
            let k = k.trim();
            if k.is_empty() || !k.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(ServiceError::Usage(format!("--header {h:?}: bad name")));
            }
            Ok((k.to_string(), v.trim().to_string()))
        })
        .collect()
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
        spec.headers = headers.clone();
        Some(spec)
    };
    Ok(WebhookConfig {
        down: spec(a.url_down.as_ref(), a.body_down.as_ref()),
        up: spec(a.url_up.as_ref(), a.body_up.as_ref()),
    })
}

/// The configuration the flags describe, checked by the kind's notifier.
pub fn config_from_args(a: &ChannelAddArgs) -> Result<ChannelConfig, ServiceError> {
    use ServiceError::Usage;
    let config = match a.kind.as_str() {
        "email" => ChannelConfig::Email {
            address: a
                .value
                .clone()
                .ok_or_else(|| Usage("--kind email needs --value ADDRESS".into()))?,
        },
        "webhook" => {
            if a.url.is_none() && a.url_down.is_none() && a.url_up.is_none() {
                return Err(Usage(
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
            return Err(Usage(format!(
                "unknown channel kind {other:?} (known: {})",
                KINDS.join(", ")
            )));
        }
    };
    notifier(&config).map_err(usage)?;
    Ok(config)
}

/// `1h`, `30m`, `1h 30m` or ISO 8601 `PT1H`; at least a minute.
pub fn parse_repeat(text: &str) -> Result<SignedDuration, ServiceError> {
    let d: SignedDuration = text.parse().map_err(|_| {
        ServiceError::Usage(format!(
            "--repeat {text:?} is not a duration such as 1h or 30m"
        ))
    })?;
    if d.as_secs() < MIN_REPEAT_SECS {
        return Err(ServiceError::Usage(format!(
            "--repeat is at least {MIN_REPEAT_SECS} seconds"
        )));
    }
    Ok(d)
}

fn health_json(service: &Service, c: &Channel) -> Result<(usize, Value), ServiceError> {
    let recent = service.store().deliveries(c.uuid, HEALTH_WINDOW)?;
    let h = health(&recent);
    let last = h.last.map_or(Value::Null, |d| {
        json!({
            "at": iso_seconds(d.at),
            "ok": d.ok(),
            "code": d.code,
            "error": d.error,
            "duration_ms": d.duration.as_millis(),
        })
    });
    Ok((h.failing, last))
}

/// `ok`, `never used`, or `FAILING x3: <error>`.
fn health_text(failing: usize, last: &Value) -> String {
    if last.is_null() {
        "never used".into()
    } else if failing == 0 {
        format!("ok {}", last["at"].as_str().unwrap_or(""))
    } else {
        format!(
            "FAILING x{failing}: {}",
            last["error"].as_str().unwrap_or("")
        )
    }
}

pub async fn channel(service: &Service, cmd: ChannelCmd) -> Result<AdminOutput, ServiceError> {
    Ok(match cmd {
        ChannelCmd::Add(a) => {
            let config = config_from_args(&a)?;
            let repeat = a.repeat.as_deref().map(parse_repeat).transpose()?;
            let c = service
                .add_channel_repeating(&a.project, &a.name, config, repeat)
                .await?;
            if a.json {
                AdminOutput::ok(pretty(
                    &json!({"id": c.uuid.to_string(), "name": c.name, "kind": c.kind()}),
                ))
            } else {
                AdminOutput::ok(format!(
                    "added {} channel {} ({})\n",
                    c.kind(),
                    c.name,
                    c.uuid
                ))
            }
        }
        ChannelCmd::Ls { project, json } => {
            let channels = service.read(|s| {
                let p = project_named(s, &project)?;
                Ok::<_, ServiceError>(
                    s.channels_of(&p.uuid)
                        .into_iter()
                        .cloned()
                        .collect::<Vec<_>>(),
                )
            })?;
            let mut rows = Vec::new();
            for c in channels {
                let (failing, last) = health_json(service, &c)?;
                rows.push((c, failing, last));
            }
            if json {
                let list: Vec<Value> = rows
                    .iter()
                    .map(|(c, failing, last)| {
                        json!({
                            "id": c.uuid.to_string(), "name": c.name, "kind": c.kind(),
                            "target": c.config.summary(),
                            "repeat_secs": c.repeat.map(|r| r.as_secs()),
                            "failing": failing, "last_delivery": last,
                        })
                    })
                    .collect();
                AdminOutput::ok(pretty(&Value::Array(list)))
            } else {
                let mut out = format!(
                    "{:<36} {:<10} {:<20} {:<30} DELIVERY\n",
                    "ID", "KIND", "NAME", "TARGET"
                );
                for (c, failing, last) in rows {
                    let _ = writeln!(
                        out,
                        "{:<36} {:<10} {:<20} {:<30} {}",
                        c.uuid,
                        c.kind(),
                        c.name,
                        c.config.summary(),
                        health_text(failing, &last)
                    );
                }
                AdminOutput::ok(out)
            }
        }
        ChannelCmd::Rm { project, ident } => {
            let c = service.remove_channel(&project, &ident).await?;
            AdminOutput::ok(format!("removed channel {} ({})\n", c.name, c.uuid))
        }
        ChannelCmd::Test { project, ident } => {
            let c = service.read(|s| channel_named(s, &project, &ident))?;
            let transports = Transports::new(&service.config().notify)
                .map_err(|e| ServiceError::Usage(e.to_string()))?;
            let d = crate::notify::worker::send_test(service, &transports, &c).await?;
            let ms = d.duration.as_millis();
            let code = d.code.map(|c| format!(", code {c}")).unwrap_or_default();
            if d.ok() {
                AdminOutput::ok(format!(
                    "test notification to {} ({}) delivered in {ms} ms{code}\n",
                    c.name,
                    c.kind()
                ))
            } else {
                AdminOutput::error(format!(
                    "test notification to {} ({}) failed after {ms} ms{code}: {}",
                    c.name,
                    c.kind(),
                    d.error
                ))
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(kind: &str) -> ChannelAddArgs {
        ChannelAddArgs {
            project: "p".into(),
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
