//! `overdue serve`: its flags (each with an `OVERDUE_*` variable), turned into the daemon's
//! validated configuration; logging; the signals that stop it. The daemon itself is
//! [`crate::server::daemon`].

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::api::ApiConfig;
use crate::cli::control;
use crate::cli::datadir::Place;
use crate::model::limits::{
    DEFAULT_API_RATE_LIMIT, DEFAULT_BODY_TIMEOUT_SECS, DEFAULT_DELIVERY_TIMEOUT_SECS,
    DEFAULT_DELIVERY_TRIES, DEFAULT_HEADER_TIMEOUT_SECS, DEFAULT_IDLE_TIMEOUT_SECS,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_PING_BODY_LIMIT, DEFAULT_PING_LOG, DEFAULT_RETRY_BASE_SECS,
    STORAGE_GIVE_UP_SECS,
};
use crate::model::outbox::backoff;
use crate::notify::NotifyConfig;
use crate::server::Timeouts;
use crate::server::daemon::{DaemonConfig, EmailPings};
use crate::service::ServiceConfig;
use crate::service::health::StoragePolicy;

/// Where `serve` listens unless told otherwise (also what `doctor` checks).
pub(crate) const DEFAULT_LISTEN: &str = "127.0.0.1:8000";

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    Text,
    Json,
}

/// Headings of `serve --help` (and sections of overdue-serve(1)).
const NETWORK: &str = "Network";
const PUBLIC_URL: &str = "Public URL";
const LIMITS: &str = "Limits";
const ALERTS: &str = "Alerts";
const EMAIL: &str = "Email";
const STORAGE: &str = "Storage";
const LOGGING: &str = "Logging and metrics";

#[derive(Debug, Clone, Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on. `0.0.0.0:8000` serves the LAN: then set --site-root too.
    #[arg(
        long,
        env = "OVERDUE_LISTEN",
        default_value = DEFAULT_LISTEN,
        value_name = "ADDR",
        help_heading = NETWORK
    )]
    pub listen: String,
    /// Trust X-Forwarded-For and X-Forwarded-Proto (only behind a reverse proxy).
    #[arg(long, env = "OVERDUE_TRUST_PROXY", help_heading = NETWORK)]
    pub trust_proxy: bool,
    /// HTTP connections served at once; more are answered 503 and closed. Lowered to fit the
    /// file limit if needed.
    #[arg(long, env = "OVERDUE_MAX_CONNECTIONS", default_value_t = DEFAULT_MAX_CONNECTIONS, value_name = "N", help_heading = NETWORK)]
    pub max_connections: usize,
    /// Threads that serve HTTP requests [default: one fewer than the CPUs, at least 1]. The
    /// CPU left over is for the writer that makes pings durable: on a small machine giving
    /// every CPU to requests doubles the slowest answers under load and gains nothing.
    #[arg(long, env = "OVERDUE_WORKERS", value_name = "N", value_parser = clap::value_parser!(u16).range(1..), help_heading = NETWORK)]
    pub workers: Option<u16>,
    /// Seconds a request head may take (from a new connection, or from its first byte).
    #[arg(long, env = "OVERDUE_HEADER_TIMEOUT", default_value_t = DEFAULT_HEADER_TIMEOUT_SECS, value_name = "SECS", help_heading = NETWORK)]
    pub(crate) header_timeout: u64,
    /// Seconds a kept-alive connection may wait for its next request.
    #[arg(long, env = "OVERDUE_IDLE_TIMEOUT", default_value_t = DEFAULT_IDLE_TIMEOUT_SECS, value_name = "SECS", help_heading = NETWORK)]
    pub(crate) idle_timeout: u64,
    /// Seconds a request body may take to arrive (408 after).
    #[arg(long, env = "OVERDUE_BODY_TIMEOUT", default_value_t = DEFAULT_BODY_TIMEOUT_SECS, value_name = "SECS", help_heading = NETWORK)]
    pub body_timeout: u64,
    /// Seconds that open requests get to finish at shutdown.
    #[arg(
        long,
        env = "OVERDUE_SHUTDOWN_GRACE",
        default_value_t = 10,
        value_name = "SECS",
        help_heading = NETWORK
    )]
    pub(crate) shutdown_grace: u64,
    /// Public base URL of ping URLs and of links in API answers and alerts, an http:// or
    /// https:// URL [default: http:// + the listen address].
    #[arg(
        long,
        env = "OVERDUE_SITE_ROOT",
        value_name = "URL",
        value_parser = site_root_arg,
        help_heading = PUBLIC_URL
    )]
    pub site_root: Option<String>,
    /// The dashboard at the site root: `on`, or `off` for an API-only install.
    #[arg(
        long,
        env = "OVERDUE_DASHBOARD",
        value_name = "on|off",
        default_value = "on",
        value_parser = on_off,
        help_heading = PUBLIC_URL
    )]
    pub dashboard: bool,
    /// Management API requests per minute per key; 0 turns the limit off.
    #[arg(long, env = "OVERDUE_API_RATE_LIMIT", default_value_t = DEFAULT_API_RATE_LIMIT, value_name = "N", help_heading = LIMITS)]
    pub api_rate_limit: u32,
    /// Pings per minute per check; more are answered `OK (rate-limited)` and not recorded. 0 = off.
    #[arg(
        long,
        env = "OVERDUE_PING_RATE_LIMIT",
        default_value_t = 0,
        value_name = "N",
        help_heading = LIMITS
    )]
    pub ping_rate_limit: u32,
    /// Bytes of each ping body that are stored.
    #[arg(long, env = "OVERDUE_PING_BODY_LIMIT", default_value_t = DEFAULT_PING_BODY_LIMIT, value_name = "N", help_heading = LIMITS)]
    pub ping_body_limit: usize,
    /// Pings kept and listed per check.
    #[arg(long, env = "OVERDUE_PING_LOG", default_value_t = DEFAULT_PING_LOG, value_name = "N", help_heading = LIMITS)]
    pub ping_log: u32,
    /// Let shell channels run their commands (they run code on this machine).
    #[arg(long, env = "OVERDUE_ALLOW_SHELL_CHANNELS", help_heading = ALERTS)]
    pub(crate) allow_shell_channels: bool,
    /// Tries of one alert before it is given up.
    #[arg(long, env = "OVERDUE_DELIVERY_TRIES", default_value_t = DEFAULT_DELIVERY_TRIES, value_name = "N", help_heading = ALERTS)]
    pub(crate) delivery_tries: u32,
    /// Wait before the first retry of an alert, in seconds; each later wait doubles.
    #[arg(long, env = "OVERDUE_RETRY_BASE", default_value_t = DEFAULT_RETRY_BASE_SECS, value_name = "SECS", help_heading = ALERTS)]
    pub(crate) retry_base: u64,
    /// Longest one delivery attempt may take, in seconds.
    #[arg(long, env = "OVERDUE_DELIVERY_TIMEOUT", default_value_t = DEFAULT_DELIVERY_TIMEOUT_SECS, value_name = "SECS", help_heading = ALERTS)]
    pub(crate) delivery_timeout: u64,
    /// Outgoing mail server for email channels: `smtp://host:25` (plain),
    /// `smtp://user:pass@host:587?tls=required` (STARTTLS) or `smtps://user:pass@host:465`.
    #[arg(
        long,
        env = "OVERDUE_SMTP_URL",
        value_name = "URL",
        hide_env_values = true,
        help_heading = EMAIL
    )]
    pub smtp_url: Option<String>,
    /// From address of alert emails.
    #[arg(long, env = "OVERDUE_SMTP_FROM", value_name = "ADDRESS", help_heading = EMAIL)]
    pub smtp_from: Option<String>,
    /// Address of the inbound SMTP listener for email pings (off unless given).
    #[arg(
        long,
        env = "OVERDUE_SMTP_LISTEN",
        value_name = "ADDR",
        requires = "ping_email_domain",
        help_heading = EMAIL
    )]
    pub(crate) smtp_listen: Option<String>,
    /// Domain of email ping addresses (`<uuid>@DOMAIN`, `<ping-key>+<slug>@DOMAIN`).
    #[arg(
        long,
        env = "OVERDUE_PING_EMAIL_DOMAIN",
        value_name = "DOMAIN",
        requires = "smtp_listen",
        help_heading = EMAIL
    )]
    pub ping_email_domain: Option<String>,
    /// Seconds the data file may refuse writes (a full disk, an unwritable file) before the
    /// service gives up and exits non-zero for its supervisor to restart it; 0 = never.
    #[arg(long, env = "OVERDUE_STORAGE_GIVE_UP", default_value_t = STORAGE_GIVE_UP_SECS, value_name = "SECS", help_heading = STORAGE)]
    pub(crate) storage_give_up: u64,
    /// How the log is written to stderr: readable text, or one JSON object per line. The level
    /// comes from OVERDUE_LOG (error, warn, info, debug, trace; default info).
    #[arg(
        long,
        env = "OVERDUE_LOG_FORMAT",
        value_enum,
        value_name = "FORMAT",
        default_value_t = LogFormat::Text,
        help_heading = LOGGING
    )]
    #[allow(
        clippy::doc_markdown,
        reason = "clap prints this as --help text, verbatim"
    )]
    pub(crate) log_format: LogFormat,
    /// Enables GET /metrics (the service's own figures) for `Authorization: Bearer TOKEN`.
    #[arg(long, env = "OVERDUE_METRICS_TOKEN", value_name = "TOKEN", help_heading = LOGGING)]
    pub metrics_token: Option<String>,
}

/// `--site-root`'s check: an http:// or https:// URL with a host (clap exits 2 otherwise).
/// `on`/`off` (and the usual spellings of true and false, as environment files have them).
fn on_off(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        other => Err(format!("{other:?} is neither on nor off")),
    }
}

fn site_root_arg(root: &str) -> Result<String, String> {
    crate::model::site_root::parse(root).map_err(|e| e.to_string())
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("OVERDUE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // A second initialisation (tests calling serve twice) is harmless; ignore it.
    let _ = match format {
        LogFormat::Text => builder
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .try_init(),
        LogFormat::Json => builder.json().with_current_span(false).try_init(),
    };
}

/// Resolves at SIGTERM or SIGINT. The handlers are installed when this is called, not when the
/// future is first polled, so a stop that comes right after READY=1 is already a clean one.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    async move {
        match (term, int) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            (Err(e), _) | (_, Err(e)) => {
                tracing::warn!("cannot listen for SIGTERM and SIGINT: {e}");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
}

impl ServeArgs {
    /// The settings of alert delivery these flags describe (also used by admin commands that
    /// run without a service, so that `channel test` sends as the service would).
    pub(crate) fn notify_config(&self) -> NotifyConfig {
        NotifyConfig {
            smtp_url: self.smtp_url.clone(),
            smtp_from: self.smtp_from.clone(),
            allow_shell: self.allow_shell_channels,
            retry_delays: backoff(Duration::from_secs(self.retry_base), self.delivery_tries),
            timeout: Duration::from_secs(self.delivery_timeout.max(1)),
            dashboard: self.dashboard,
            ..NotifyConfig::default()
        }
    }

    /// How many threads serve requests on a machine with `cpus` CPUs.
    pub(crate) fn worker_threads(&self, cpus: usize) -> usize {
        match self.workers {
            Some(n) => usize::from(n),
            None => cpus.saturating_sub(1).max(1),
        }
    }

    /// The daemon's configuration: the flags, already checked by clap, as the values the
    /// daemon works with.
    pub(crate) fn daemon_config(&self, data: PathBuf) -> DaemonConfig {
        let secs = |s: u64| Duration::from_secs(s.max(1));
        DaemonConfig {
            data,
            listen: self.listen.clone(),
            site_root: self.site_root.clone(),
            email: match (&self.smtp_listen, &self.ping_email_domain) {
                (Some(listen), Some(domain)) => Some(EmailPings {
                    listen: listen.clone(),
                    domain: domain.clone(),
                }),
                _ => None,
            },
            service: ServiceConfig {
                site_root: None,
                ping_body_limit: self.ping_body_limit,
                ping_log: self.ping_log,
                notify: self.notify_config(),
                storage: StoragePolicy {
                    give_up_after: (self.storage_give_up > 0)
                        .then(|| Duration::from_secs(self.storage_give_up)),
                    ..StoragePolicy::default()
                },
                listen: None,
                ping_email_domain: None,
                database: None,
            },
            api: ApiConfig {
                api_rate_limit: self.api_rate_limit,
                trust_proxy: self.trust_proxy,
                ping_rate_limit: self.ping_rate_limit,
                metrics_token: self.metrics_token.clone(),
                body_timeout: secs(self.body_timeout),
                dashboard: self.dashboard,
            },
            max_connections: self.max_connections,
            timeouts: Timeouts {
                header: secs(self.header_timeout),
                idle: secs(self.idle_timeout),
                body: secs(self.body_timeout),
            },
            shutdown_grace: Duration::from_secs(self.shutdown_grace),
        }
    }
}

/// `serve`'s flags as the environment sets them (`OVERDUE_*`, else the defaults): what an admin
/// command without a running service uses for the settings the service would have.
pub(crate) fn from_env() -> Result<ServeArgs, clap::Error> {
    parse(["overdue"])
}

/// `serve`'s flags from `argv` alone (its first item is the program's name).
fn parse<'a>(argv: impl IntoIterator<Item = &'a str>) -> Result<ServeArgs, clap::Error> {
    #[derive(clap::Parser)]
    struct Only {
        #[command(flatten)]
        serve: ServeArgs,
    }
    <Only as clap::Parser>::try_parse_from(argv).map(|o| o.serve)
}

/// Runs the service until SIGTERM or SIGINT (see [`crate::server::daemon`]).
pub(crate) async fn run(place: Place, args: ServeArgs) -> anyhow::Result<()> {
    init_logging(args.log_format);
    let mut config = args.daemon_config(place.dir);
    config.service.database = place.database;
    crate::server::daemon::run(config, control::ControlSocket, shutdown_signal()).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_get_all_cpus_but_one_unless_told() {
        let args = parse(["overdue"]).expect("defaults parse");
        assert_eq!(args.worker_threads(1), 1);
        assert_eq!(args.worker_threads(2), 1);
        assert_eq!(args.worker_threads(4), 3);
        let args = parse(["overdue", "--workers", "4"]).expect("a count parses");
        assert_eq!(args.worker_threads(2), 4);
        assert!(
            parse(["overdue", "--workers", "0"]).is_err(),
            "no thread at all is refused"
        );
    }
}
