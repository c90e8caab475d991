//! What `doctor` asks a running service ([`AdminCommand::Settings`]): the settings it runs
//! with, which may differ from the flags and environment of the shell `doctor` runs in, and
//! the facts about its data that decide whether an alert reaches anyone. Without a service,
//! `doctor` fills the settings from its own flags and asks the data file for the facts.
//!
//! [`AdminCommand::Settings`]: crate::cli::admin::AdminCommand::Settings

use serde::{Deserialize, Serialize};

use crate::cli::admin::count;
use crate::cli::doctor::Finding;
use crate::model::ChannelConfig;
use crate::model::site_root;
use crate::service::Service;
use crate::service::checks::count_checks_without_channels;

/// The effective settings of a service and the alerting facts of its data.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Settings {
    /// Where the service listens; `None` when no service runs (an admin command opened the
    /// file).
    pub listen: Option<String>,
    /// The public base URL of ping URLs and links.
    pub site_root: String,
    /// The outgoing mail server, its password replaced by `***`.
    pub smtp_url: Option<String>,
    pub smtp_from: Option<String>,
    /// The domain of email pings, when the SMTP listener is on.
    pub ping_email_domain: Option<String>,
    /// Checks with no channel: nobody hears when they go down.
    pub(crate) checks_without_channels: usize,
    /// Email channels (of every project).
    pub(crate) email_channels: usize,
}

/// `smtp://user:***@host:587`: the URL without its password, for showing.
pub(crate) fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        Ok(_) => url.to_string(),
        // Unparsable: it may still hold a password, so only the scheme is shown.
        Err(_) => format!(
            "{}://(not a valid URL)",
            url.split("://").next().unwrap_or("?")
        ),
    }
}

/// The service's settings and facts.
pub(crate) fn gather(service: &Service) -> Settings {
    let config = service.config();
    let (checks_without_channels, email_channels) = service.read(|s| {
        let email = s
            .projects()
            .into_iter()
            .flat_map(|p| s.channels_of(&p.uuid))
            .filter(|c| matches!(c.config, ChannelConfig::Email { .. }))
            .count();
        (count_checks_without_channels(s), email)
    });
    Settings {
        listen: config.listen.clone(),
        site_root: service.site_root().to_string(),
        smtp_url: config.notify.smtp_url.as_deref().map(redact),
        smtp_from: config.notify.smtp_from.clone(),
        ping_email_domain: config.ping_email_domain.clone(),
        checks_without_channels,
        email_channels,
    }
}

/// Whether links built from the site root can be opened.
pub(crate) fn judge_site_root(root: &str) -> Finding {
    match site_root::parse(root) {
        Err(e) => Finding::Problem(format!(
            "{e}; ping URLs and alert links are built from it (--site-root, OVERDUE_SITE_ROOT)"
        )),
        Ok(_) if site_root::names_no_host(root) => Finding::Problem(format!(
            "the site root is {root}: ping URLs and alert links name an address no client can \
             open; set --site-root (OVERDUE_SITE_ROOT) to the URL clients use, e.g. \
             http://monitor.lan:8000"
        )),
        Ok(root) => Finding::Ok(format!("ping URLs and links start with {root}")),
    }
}

/// Whether alerts can reach anyone: checks without channels, email channels without a mail
/// server or with the fallback sender.
pub(crate) fn judge_alerts(s: &Settings) -> Vec<Finding> {
    let mut out = Vec::new();
    if s.checks_without_channels > 0 {
        out.push(Finding::Warning(format!(
            "{} without integrations: nobody is alerted when one goes down; `overdue check ls` \
             lists them and `overdue channel add` assigns a new channel to every check",
            count(s.checks_without_channels, "check")
        )));
    }
    if s.email_channels > 0 {
        match (&s.smtp_url, &s.smtp_from) {
            (None, _) => out.push(Finding::Problem(format!(
                "{} but no SMTP server: their alerts fail; start the service with --smtp-url \
                 (OVERDUE_SMTP_URL) and --smtp-from (OVERDUE_SMTP_FROM)",
                count(s.email_channels, "email channel")
            ))),
            (Some(_), None) => out.push(Finding::Warning(
                "email alerts are sent from overdue@localhost, which many mail servers refuse; \
                 set --smtp-from (OVERDUE_SMTP_FROM) to an address of your domain"
                    .into(),
            )),
            (Some(_), Some(_)) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(
            redact("smtp://alerts:s3cret@mail.example.org:587?tls=required"),
            "smtp://alerts:***@mail.example.org:587?tls=required"
        );
        assert_eq!(redact("smtp://mail:25"), "smtp://mail:25");
        assert_eq!(redact("smtps://u:p@[bad"), "smtps://(not a valid URL)");
    }

    #[test]
    fn site_roots_clients_cannot_open_are_problems() {
        for bad in [
            "http://0.0.0.0:8000",
            "http://[::]:8000",
            "monitor.lan:8000",
        ] {
            assert!(matches!(judge_site_root(bad), Finding::Problem(_)), "{bad}");
        }
        assert!(matches!(
            judge_site_root("https://hc.example.org/"),
            Finding::Ok(_)
        ));
    }

    #[test]
    fn silent_checks_warn_and_email_without_smtp_is_a_problem() {
        assert!(judge_alerts(&Settings::default()).is_empty());
        let silent = Settings {
            checks_without_channels: 1,
            ..Settings::default()
        };
        let found = judge_alerts(&silent);
        assert!(
            matches!(&found[..], [Finding::Warning(w)] if w.starts_with("1 check without")),
            "{found:?}"
        );
        let mail = Settings {
            email_channels: 2,
            ..Settings::default()
        };
        let found = judge_alerts(&mail);
        assert!(
            matches!(&found[..], [Finding::Problem(p)] if p.starts_with("2 email channels but no SMTP")),
            "{found:?}"
        );
        let no_from = Settings {
            smtp_url: Some("smtp://mail:25".into()),
            ..mail.clone()
        };
        assert!(matches!(&judge_alerts(&no_from)[..], [Finding::Warning(_)]));
        let complete = Settings {
            smtp_from: Some("hc@example.org".into()),
            ..no_from
        };
        assert!(judge_alerts(&complete).is_empty());
    }
}
