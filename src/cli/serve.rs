//! `overdue serve`: binds the listener, opens the data directory, creates the default project
//! on first start, and runs the HTTP server and the control socket until SIGTERM or SIGINT.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use tokio::net::TcpListener;

use crate::api::{ApiConfig, App};
use crate::cli::{control, notify};
use crate::model::limits::{DEFAULT_API_RATE_LIMIT, DEFAULT_PING_BODY_LIMIT, DEFAULT_PING_LOG};
use crate::service::{Clock, Service, ServiceConfig};

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(
        long,
        env = "OVERDUE_LISTEN",
        default_value = "127.0.0.1:8000",
        value_name = "ADDR"
    )]
    pub listen: String,
    /// Public base URL for links in API responses [default: http:// + the listen address].
    #[arg(long, env = "OVERDUE_SITE_ROOT", value_name = "URL")]
    pub site_root: Option<String>,
    /// Management API requests per minute per key; 0 turns the limit off.
    #[arg(long, env = "OVERDUE_API_RATE_LIMIT", default_value_t = DEFAULT_API_RATE_LIMIT, value_name = "N")]
    pub api_rate_limit: u32,
    /// Bytes of each ping body that are stored.
    #[arg(long, env = "OVERDUE_PING_BODY_LIMIT", default_value_t = DEFAULT_PING_BODY_LIMIT, value_name = "N")]
    pub ping_body_limit: usize,
    /// Pings kept and listed per check.
    #[arg(long, env = "OVERDUE_PING_LOG", default_value_t = DEFAULT_PING_LOG, value_name = "N")]
    pub ping_log: u32,
    /// Trust X-Forwarded-For and X-Forwarded-Proto (only behind a reverse proxy).
    #[arg(long, env = "OVERDUE_TRUST_PROXY")]
    pub trust_proxy: bool,
    /// Pings per minute per check; more are answered `OK (rate-limited)` and not recorded. 0 = off.
    #[arg(
        long,
        env = "OVERDUE_PING_RATE_LIMIT",
        default_value_t = 0,
        value_name = "N"
    )]
    pub ping_rate_limit: u32,
    /// Seconds that open requests get to finish at shutdown.
    #[arg(
        long,
        env = "OVERDUE_SHUTDOWN_GRACE",
        default_value_t = 10,
        value_name = "SECS"
    )]
    pub shutdown_grace: u64,
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("OVERDUE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // A second initialisation (tests calling serve twice) is harmless; ignore it.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
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

/// Runs the service until a shutdown signal.
pub async fn run(data: PathBuf, args: ServeArgs) -> anyhow::Result<()> {
    init_logging();
    let listener = TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener
        .local_addr()
        .context("cannot read the listen address")?;
    let site_root = args
        .site_root
        .clone()
        .unwrap_or_else(|| format!("http://{addr}"));
    let config = ServiceConfig {
        site_root: Some(site_root.clone()),
        ping_body_limit: args.ping_body_limit,
        ping_log: args.ping_log,
    };
    let service = Arc::new(Service::open(&data, config, Clock::System)?);
    if let Some((project, rw, ro)) = service.ensure_default_project().await? {
        println!(
            "First start: created project \"{}\". These keys are shown only this once:",
            project.name
        );
        println!("  read-write API key: {}", rw.plaintext);
        println!("  read-only API key:  {}", ro.plaintext);
        println!("  ping key:           {}", project.ping_key);
        println!(
            "Try: curl -H 'X-Api-Key: {}' {site_root}/api/v3/checks/",
            rw.plaintext
        );
    }
    let control_listener = control::bind(&data)
        .with_context(|| format!("cannot create the control socket in {}", data.display()))?;
    let control_task = tokio::spawn(control::serve(control_listener, service.clone()));
    let prune_task = tokio::spawn(crate::ping::prune::run(service.clone()));
    let fold_task = tokio::spawn(crate::service::journal::run(service.clone()));
    let retention_task = tokio::spawn(crate::monitor::retention::run(service.clone()));
    let monitor_task = crate::monitor::start(service.clone());
    tracing::info!(
        "overdue {} listening on http://{addr} (data in {})",
        env!("CARGO_PKG_VERSION"),
        data.display()
    );
    let shutdown = shutdown_signal();
    notify::notify("READY=1");
    let app = Arc::new(App::new(
        service.clone(),
        ApiConfig {
            api_rate_limit: args.api_rate_limit,
            trust_proxy: args.trust_proxy,
            ping_rate_limit: args.ping_rate_limit,
        },
    ));
    crate::server::run(
        listener,
        app,
        async {
            shutdown.await;
            notify::notify("STOPPING=1");
        },
        Duration::from_secs(args.shutdown_grace),
    )
    .await;
    for task in [
        control_task,
        prune_task,
        fold_task,
        retention_task,
        monitor_task,
    ] {
        task.abort();
        let _ = task.await;
    }
    let _ = std::fs::remove_file(control::socket_path(&data));
    match Arc::try_unwrap(service) {
        Ok(service) => service.close().await,
        Err(_) => {
            tracing::warn!("requests still hold the service; exiting without waiting for them")
        }
    }
    tracing::info!("stopped");
    Ok(())
}
