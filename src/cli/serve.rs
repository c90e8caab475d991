//! `overdue serve`: binds the listener, opens the data directory, creates the default project
//! on first start, and runs the HTTP server and the control socket until SIGTERM or SIGINT.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use tokio::net::TcpListener;

use crate::api::{ApiConfig, App};
use crate::cli::{control, sd_notify};
use crate::email::InboundConfig;
use crate::model::Project;
use crate::model::limits::{
    DEFAULT_API_RATE_LIMIT, DEFAULT_BODY_TIMEOUT_SECS, DEFAULT_DELIVERY_TIMEOUT_SECS,
    DEFAULT_DELIVERY_TRIES, DEFAULT_HEADER_TIMEOUT_SECS, DEFAULT_IDLE_TIMEOUT_SECS,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_PING_BODY_LIMIT, DEFAULT_PING_LOG, DEFAULT_RETRY_BASE_SECS,
    RESERVED_FDS, SMTP_MAX_CONNECTIONS, STORAGE_GIVE_UP_SECS,
};
use crate::model::outbox::backoff;
use crate::notify::NotifyConfig;
use crate::server::{Limits, Timeouts};
use crate::service::admin::NewKey;
use crate::service::health::StoragePolicy;
use crate::service::{Clock, Service, ServiceConfig};

/// Where `serve` listens unless told otherwise (also what `doctor` checks).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8000";

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
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
pub struct ServeArgs {
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
    /// Seconds a request head may take (from a new connection, or from its first byte).
    #[arg(long, env = "OVERDUE_HEADER_TIMEOUT", default_value_t = DEFAULT_HEADER_TIMEOUT_SECS, value_name = "SECS", help_heading = NETWORK)]
    pub header_timeout: u64,
    /// Seconds a kept-alive connection may wait for its next request.
    #[arg(long, env = "OVERDUE_IDLE_TIMEOUT", default_value_t = DEFAULT_IDLE_TIMEOUT_SECS, value_name = "SECS", help_heading = NETWORK)]
    pub idle_timeout: u64,
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
    pub shutdown_grace: u64,
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
    pub allow_shell_channels: bool,
    /// Tries of one alert before it is given up.
    #[arg(long, env = "OVERDUE_DELIVERY_TRIES", default_value_t = DEFAULT_DELIVERY_TRIES, value_name = "N", help_heading = ALERTS)]
    pub delivery_tries: u32,
    /// Wait before the first retry of an alert, in seconds; each later wait doubles.
    #[arg(long, env = "OVERDUE_RETRY_BASE", default_value_t = DEFAULT_RETRY_BASE_SECS, value_name = "SECS", help_heading = ALERTS)]
    pub retry_base: u64,
    /// Longest one delivery attempt may take, in seconds.
    #[arg(long, env = "OVERDUE_DELIVERY_TIMEOUT", default_value_t = DEFAULT_DELIVERY_TIMEOUT_SECS, value_name = "SECS", help_heading = ALERTS)]
    pub delivery_timeout: u64,
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
    pub smtp_listen: Option<String>,
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
    pub storage_give_up: u64,
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
    pub log_format: LogFormat,
    /// Enables GET /metrics (the service's own figures) for `Authorization: Bearer TOKEN`.
    #[arg(long, env = "OVERDUE_METRICS_TOKEN", value_name = "TOKEN", help_heading = LOGGING)]
    pub metrics_token: Option<String>,
}

/// `--site-root`'s check: an http:// or https:// URL with a host (clap exits 2 otherwise).
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
        tracing::info!("shutting down");
    }
}

/// Raises the soft limit on open files to the hard one (as Go and most servers do) and fits
/// `wanted` HTTP connections under it, beside the SMTP listener's and a reserve; the
/// connection limit to use.
fn fit_connections(wanted: usize, smtp: bool) -> usize {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if let (Some(current), Some(hard)) = (limit.current, limit.maximum)
        && current < hard
    {
        limit.current = Some(hard);
        if let Err(e) = setrlimit(Resource::Nofile, limit) {
            tracing::debug!("cannot raise the open-file limit to {hard}: {e}");
        }
    }
    let Some(files) = getrlimit(Resource::Nofile).current else {
        return wanted.max(1);
    };
    let reserve = RESERVED_FDS + if smtp { SMTP_MAX_CONNECTIONS as u64 } else { 0 };
    let room = usize::try_from(files.saturating_sub(reserve)).unwrap_or(usize::MAX);
    if wanted > room {
        let fitted = room.max(16);
        tracing::warn!(
            "the open-file limit is {files}: serving at most {fitted} HTTP connections instead \
             of {wanted} (raise LimitNOFILE= or `ulimit -n`)"
        );
        return fitted;
    }
    wanted.max(1)
}

/// The connection limits from the flags.
fn limits(args: &ServeArgs) -> Limits {
    let secs = |s: u64| Duration::from_secs(s.max(1));
    Limits {
        max_connections: fit_connections(args.max_connections, args.smtp_listen.is_some()),
        timeouts: Timeouts {
            header: secs(args.header_timeout),
            idle: secs(args.idle_timeout),
            body: secs(args.body_timeout),
        },
    }
}

/// What a first start prints about the project it created: its keys, shown only this once
/// (an import into an empty data directory prints the same).
pub fn first_start_keys(project: &Project, rw: &NewKey, ro: &NewKey, site_root: &str) -> String {
    format!(
        "First start: created project \"{}\". These keys are shown only this once:\n  \
         read-write API key: {}\n  read-only API key:  {}\n  ping key:           {}\n\
         Try: curl -H 'X-Api-Key: {}' {site_root}/api/v3/checks/\n",
        project.name, rw.plaintext, ro.plaintext, project.ping_key, rw.plaintext
    )
}

/// Runs the service until a shutdown signal.
pub async fn run(data: PathBuf, args: ServeArgs) -> anyhow::Result<()> {
    init_logging(args.log_format);
    let listener = TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener
        .local_addr()
        .context("cannot read the listen address")?;
    let smtp_listener = match &args.smtp_listen {
        Some(smtp) => Some(
            TcpListener::bind(smtp)
                .await
                .with_context(|| format!("cannot listen for SMTP on {smtp}"))?,
        ),
        None => None,
    };
    let (site_root, unusable) = crate::model::site_root::effective(addr, args.site_root.as_deref());
    if let Some(warning) = unusable {
        tracing::warn!("{warning}");
    }
    let config = ServiceConfig {
        site_root: Some(site_root.clone()),
        ping_body_limit: args.ping_body_limit,
        ping_log: args.ping_log,
        notify: NotifyConfig {
            smtp_url: args.smtp_url.clone(),
            smtp_from: args.smtp_from.clone(),
            allow_shell: args.allow_shell_channels,
            retry_delays: backoff(Duration::from_secs(args.retry_base), args.delivery_tries),
            timeout: Duration::from_secs(args.delivery_timeout.max(1)),
            ..NotifyConfig::default()
        },
        storage: StoragePolicy {
            give_up_after: (args.storage_give_up > 0)
                .then(|| Duration::from_secs(args.storage_give_up)),
            ..StoragePolicy::default()
        },
        listen: Some(addr.to_string()),
        ping_email_domain: args.ping_email_domain.clone(),
    };
    let service = Arc::new(Service::open(&data, config, Clock::System)?);
    if let Some((project, rw, ro)) = service.ensure_default_project().await? {
        print!("{}", first_start_keys(&project, &rw, &ro, &site_root));
    }
    let control_listener = control::bind(&data)
        .with_context(|| format!("cannot create the control socket in {}", data.display()))?;
    let control_task = tokio::spawn(control::serve(control_listener, service.clone()));
    let prune_task = tokio::spawn(crate::monitor::prune::run(service.clone()));
    let fold_task = tokio::spawn(crate::service::journal::run(service.clone()));
    let retention_task = tokio::spawn(crate::monitor::retention::run(service.clone()));
    let monitor_task = crate::monitor::start(service.clone());
    let delivery_task = crate::notify::worker::start(service.clone())
        .context("cannot start the delivery of alerts")?;
    let mut tasks = vec![
        control_task,
        prune_task,
        fold_task,
        retention_task,
        monitor_task,
        delivery_task,
    ];
    if let (Some(smtp), Some(domain)) = (smtp_listener, &args.ping_email_domain) {
        if let Ok(smtp_addr) = smtp.local_addr() {
            tracing::info!("email pings: SMTP on {smtp_addr} for *@{domain}");
        }
        tasks.push(tokio::spawn(crate::email::serve(
            smtp,
            service.clone(),
            InboundConfig::new(domain.clone()),
        )));
    }
    tracing::info!(
        "overdue {} listening on http://{addr} (data in {})",
        env!("CARGO_PKG_VERSION"),
        data.display()
    );
    let shutdown = shutdown_signal();
    sd_notify::notify("READY=1");
    let app = Arc::new(App::new(
        service.clone(),
        ApiConfig {
            api_rate_limit: args.api_rate_limit,
            trust_proxy: args.trust_proxy,
            ping_rate_limit: args.ping_rate_limit,
            metrics_token: args.metrics_token.clone(),
            body_timeout: Duration::from_secs(args.body_timeout.max(1)),
        },
    ));
    let limits = limits(&args);
    let gave_up = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop = {
        let service = service.clone();
        let gave_up = gave_up.clone();
        async move {
            tokio::select! {
                () = shutdown => {}
                () = service.storage_health().given_up() => {
                    gave_up.store(true, std::sync::atomic::Ordering::Release);
                }
            }
            sd_notify::notify("STOPPING=1");
        }
    };
    crate::server::run(
        listener,
        app,
        limits,
        stop,
        Duration::from_secs(args.shutdown_grace),
    )
    .await;
    for task in tasks {
        task.abort();
        let _ = task.await;
    }
    let _ = std::fs::remove_file(control::socket_path(&data));
    // Aborted deliveries let go of the service at their next poll.
    for _ in 0..100 {
        if Arc::strong_count(&service) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    match Arc::try_unwrap(service) {
        Ok(service) => service.close().await,
        Err(_) => {
            tracing::warn!("requests still hold the service; exiting without waiting for them")
        }
    }
    if gave_up.load(std::sync::atomic::Ordering::Acquire) {
        anyhow::bail!(
            "stopped because the data file did not take writes for {}s; see the log above for \
             why (or run `overdue doctor`)",
            args.storage_give_up
        );
    }
    tracing::info!("stopped");
    Ok(())
}
