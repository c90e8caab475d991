//! The flags of `overdue channel add` and the channel they describe, by the rules of
//! `notify::setup` (which the dashboard's form follows too), and secrets read from a file or an
//! environment variable by the command-line process itself
//! ([`ChannelAddArgs::resolve_secrets`]).

use clap::Args;

use crate::model::ChannelConfig;
use crate::notify::setup::{ChannelFields, check_flags_apply, config_from_fields};
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
    /// The events it sends, comma-separated from down, up, late (a check entered its grace
    /// period) and failure (a failure below a check's --fail-threshold) [default: down,up].
    /// A check may choose its own with `check edit --events`.
    #[arg(long, value_name = "EVENTS")]
    pub events: Option<String>,
    /// Do not assign the channel to the project's existing checks.
    #[arg(long)]
    pub no_assign: bool,
    /// Do not give the channel to checks created later (`check add` without --channels).
    #[arg(long)]
    pub no_default: bool,
    #[arg(long)]
    pub json: bool,
}

impl ChannelAddArgs {
    /// The kind and kind-specific settings the flags give (the token as given by `--token`,
    /// or by a file or variable once [`ChannelAddArgs::resolve_secrets`] has read it).
    pub(crate) fn fields(&self) -> ChannelFields {
        ChannelFields {
            kind: self.kind.clone(),
            value: self.value.clone(),
            url: self.url.clone(),
            url_down: self.url_down.clone(),
            url_up: self.url_up.clone(),
            method: self.method.clone(),
            body: self.body.clone(),
            body_down: self.body_down.clone(),
            body_up: self.body_up.clone(),
            headers: self.headers.clone(),
            topic: self.topic.clone(),
            priority: self.priority.clone(),
            token: self.token.clone(),
            chat: self.chat.clone(),
            user: self.user.clone(),
            room: self.room.clone(),
            cmd_down: self.cmd_down.clone(),
            cmd_up: self.cmd_up.clone(),
        }
    }

    /// Refuses kind-specific flags that `--kind` does not take, `--token-file` and
    /// `--token-env` included (they stand for `--token`).
    pub(crate) fn check_flags_apply(&self) -> Result<(), String> {
        let mut given: Vec<(&str, &str)> =
            self.fields().given().into_iter().map(|f| (f, f)).collect();
        if self.token_file.is_some() {
            given.push(("token-file", "token"));
        }
        if self.token_env.is_some() {
            given.push(("token-env", "token"));
        }
        check_flags_apply(&self.kind, &given)
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

/// The configuration the flags describe, checked by the kind's notifier (the dashboard's
/// form goes through the same [`config_from_fields`]).
pub(crate) fn config_from_args(a: &ChannelAddArgs) -> Result<ChannelConfig, ServiceError> {
    a.check_flags_apply()
        .map_err(|m| ServiceError::from(AdminError::Usage(m)))?;
    config_from_fields(&a.fields())
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
