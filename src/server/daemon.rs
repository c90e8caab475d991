//! The daemon: everything `overdue serve` runs, owned in one place (the shape of mini-redis's
//! `server.rs`). It takes a validated [`DaemonConfig`], binds the listeners, opens the data
//! directory, creates the default project on first start, starts every background task, serves
//! HTTP until the shutdown future resolves (or the data file gives up), and then stops.
//!
//! Every task it starts is owned by one [`Tasks`] set and stopped cooperatively: each task
//! runs until the stop signal, then ends at its next await point (the delivery worker first
//! waits for its deliveries to let go), and the set waits for all of them. Once it has, only
//! HTTP requests that outlived the shutdown grace can still hold the service; then the service
//! is closed, so every acknowledged write is on disk when the process exits.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::api::{ApiConfig, App};
use crate::email::InboundConfig;
use crate::model::Project;
use crate::model::limits::{RESERVED_FDS, SMTP_MAX_CONNECTIONS};
use crate::server::{Limits, Timeouts, sd_notify};
use crate::service::StoreError;
use crate::service::admin::NewKey;
use crate::service::{Clock, Node, Service, ServiceConfig, ServiceError};

/// Everything the daemon needs, checked before it starts (`cli::serve` builds it from the
/// flags and the environment).
#[derive(Debug, Clone)]
pub(crate) struct DaemonConfig {
    /// Data directory (the data file and the control socket).
    pub(crate) data: PathBuf,
    /// Address of the HTTP listener.
    pub listen: String,
    /// A valid http(s) site root, or None for `http://` + the bound address.
    pub site_root: Option<String>,
    /// The SMTP listener for email pings, with the domain of their addresses.
    pub(crate) email: Option<EmailPings>,
    /// The service's settings; its `site_root` and `listen` are filled in once bound.
    pub(crate) service: ServiceConfig,
    pub(crate) api: ApiConfig,
    /// HTTP connections wanted at once (lowered to fit the open-file limit).
    pub max_connections: usize,
    pub(crate) timeouts: Timeouts,
    /// How long open requests may take to finish at shutdown.
    pub(crate) shutdown_grace: Duration,
}

/// Where email pings are received, and for which domain.
#[derive(Debug, Clone)]
pub(crate) struct EmailPings {
    pub listen: String,
    pub(crate) domain: String,
}

/// Why the daemon could not start, or stopped with a failure.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DaemonError {
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error("cannot listen for SMTP on {addr}: {source}")]
    ListenSmtp {
        addr: String,
        source: std::io::Error,
    },
    /// The data directory cannot be opened (locked, damaged, refused).
    #[error(transparent)]
    Open(#[from] StoreError),
    #[error("cannot create the default project: {0}")]
    FirstStart(ServiceError),
    #[error("cannot create the control socket in {dir}: {source}")]
    ControlSocket {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the delivery of alerts: {0}")]
    Delivery(#[from] crate::notify::transport::TransportError),
    /// Trying the database's lock failed in a way retrying cannot mend (a bug).
    #[error("standing by failed: {0}")]
    Standby(String),
    /// The data file refused writes for longer than the configured bound.
    #[error(
        "stopped because the data file did not take writes for {0}s; see the log above for why \
         (or run `overdue doctor`)"
    )]
    StorageGaveUp(u64),
}

/// A future that resolves when the daemon stops.
pub(crate) type Stop = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

/// The admin socket the command line answers on (the command line owns its protocol; the
/// daemon owns its task): bound in the data directory once the service is open, served until
/// the stop signal, removed at the end.
pub(crate) trait AdminSocket: Send + 'static {
    fn bind(&self, data: &std::path::Path) -> std::io::Result<tokio::net::UnixListener>;
    fn serve(
        &self,
        listener: tokio::net::UnixListener,
        service: Arc<Service>,
        stop: Stop,
    ) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;
    fn remove(&self, data: &std::path::Path);
}

/// The background tasks of a running daemon, and the signal that stops them.
struct Tasks {
    set: JoinSet<()>,
    stop: watch::Sender<bool>,
}

impl Tasks {
    fn new() -> Tasks {
        Tasks {
            set: JoinSet::new(),
            stop: watch::channel(false).0,
        }
    }

    /// The stop signal, for a task that must finish work of its own before it stops.
    fn stop_signal(&self) -> Stop {
        let mut stop = self.stop.subscribe();
        Box::pin(async move {
            // An error means the sender is gone: stopping all the same.
            let _ = stop.wait_for(|stop| *stop).await;
        })
    }

    /// Runs a task that stops by itself once given the stop signal.
    fn spawn_stoppable<F>(&mut self, task: impl FnOnce(Stop) -> F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let stop = self.stop_signal();
        self.set.spawn(task(stop));
    }

    /// Runs `task` until it ends or the stop signal comes; a task that ends by itself early
    /// is a bug worth a log line.
    fn spawn(&mut self, name: &'static str, task: impl Future<Output = ()> + Send + 'static) {
        let stop = self.stop_signal();
        self.set.spawn(async move {
            tokio::select! {
                () = task => tracing::warn!("{name} stopped by itself"),
                () = stop => {}
            }
        });
    }

    /// Signals every task to stop and waits until all have.
    async fn stop(mut self) {
        let _ = self.stop.send(true);
        while let Some(done) = self.set.join_next().await {
            if let Err(e) = done
                && e.is_panic()
            {
                tracing::error!("a background task failed: {e}");
            }
        }
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

/// What a first start prints about the project it created: its keys, shown only this once
/// (an import into an empty data directory prints the same).
pub(crate) fn first_start_keys(
    project: &Project,
    rw: &NewKey,
    ro: &NewKey,
    site_root: &str,
) -> String {
    format!(
        "First start: created project \"{}\". These keys are shown only this once:\n  \
         read-write API key: {}\n  read-only API key:  {}\n  ping key:           {}\n\
         Try: curl -H 'X-Api-Key: {}' {site_root}/api/v3/checks/\n",
        project.name, rw.plaintext, ro.plaintext, project.ping_key, rw.plaintext
    )
}

/// Why the active phase of the daemon ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// The shutdown signal came.
    Stopped,
    /// The data file refused writes for longer than the bound.
    GaveUp,
    /// The database session that held the active node's lock ended: stand by again.
    LostLock,
}

/// Runs the daemon until `shutdown` resolves or the data file gives up on writes.
///
/// On PostgreSQL a node is active only while it holds the database's lock: until it gets it, it
/// stands by (every request answered `503`, the lock tried every second); once it has it, it
/// serves; and if its session ends, it stops serving and stands by again.
pub(crate) async fn run(
    config: DaemonConfig,
    admin: impl AdminSocket,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), DaemonError> {
    let DaemonConfig {
        data,
        listen,
        site_root,
        email,
        mut service,
        api,
        max_connections,
        timeouts,
        shutdown_grace,
    } = config;
    let listener = TcpListener::bind(&listen)
        .await
        .map_err(|source| DaemonError::Listen {
            addr: listen.clone(),
            source,
        })?;
    let addr = listener
        .local_addr()
        .map_err(|source| DaemonError::Listen {
            addr: listen.clone(),
            source,
        })?;
    let mut smtp_listener = match &email {
        Some(e) => Some(bind_smtp(e).await?),
        None => None,
    };
    let (site_root, unusable) = crate::model::site_root::effective(addr, site_root.as_deref());
    if let Some(warning) = unusable {
        tracing::warn!("{warning}");
    }
    service.site_root = Some(site_root.clone());
    service.listen = Some(addr.to_string());
    service.ping_email_domain = email.as_ref().map(|e| e.domain.clone());
    let give_up_secs = service.storage.give_up_after.map_or(0, |d| d.as_secs());
    let limits = Limits {
        max_connections: fit_connections(max_connections, email.is_some()),
        timeouts,
    };
    // One stop signal for every phase.
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    let stopped = move || {
        let mut stop = stop_rx.clone();
        async move {
            let _ = stop.wait_for(|stop| *stop).await;
        }
    };
    let mut phase = Phase {
        listener: &listener,
        smtp: smtp_listener.take(),
        admin: &admin,
        data: &data,
        email: email.as_ref(),
        api,
        site_root: &site_root,
        limits,
        grace: shutdown_grace,
        ready: false,
    };
    // A node that just lost the lock lets a standby take it first.
    let mut lost_lock = false;
    loop {
        let mut node = Node::connect(&data, service.clone(), Clock::System, !lost_lock)?;
        if lost_lock || !node.try_activate()? {
            let location = node.location();
            tracing::info!(
                "another overdue node is active on {location}; standing by: every request is \
                 answered 503 and the lock is tried every second"
            );
            phase.notify_ready();
            let first_try = Duration::from_secs(if lost_lock { 3 } else { 1 });
            let Some(active) = stand_by(node, &listener, limits, first_try, stopped()).await?
            else {
                tracing::info!("stopped");
                return Ok(());
            };
            node = active;
            tracing::info!("took the lock on {location}: this node is the active one");
        }
        let service = Arc::new(node.start()?);
        match serve_active(service, &mut phase, stopped()).await? {
            Ended::LostLock => lost_lock = true,
            Ended::GaveUp => return Err(DaemonError::StorageGaveUp(give_up_secs)),
            Ended::Stopped => {
                tracing::info!("stopped");
                return Ok(());
            }
        }
    }
}

/// What every active phase of the daemon serves with.
struct Phase<'a, A> {
    listener: &'a TcpListener,
    /// The SMTP listener bound at start; a later phase binds it again.
    smtp: Option<TcpListener>,
    admin: &'a A,
    data: &'a PathBuf,
    email: Option<&'a EmailPings>,
    api: ApiConfig,
    site_root: &'a str,
    limits: Limits,
    grace: Duration,
    /// READY=1 has been sent.
    ready: bool,
}

impl<A> Phase<'_, A> {
    /// Tells systemd the service is up, the first time only.
    fn notify_ready(&mut self) {
        if !std::mem::replace(&mut self.ready, true) {
            sd_notify::notify("READY=1");
        }
    }
}

async fn bind_smtp(e: &EmailPings) -> Result<TcpListener, DaemonError> {
    TcpListener::bind(&e.listen)
        .await
        .map_err(|source| DaemonError::ListenSmtp {
            addr: e.listen.clone(),
            source,
        })
}

/// Stands by until this node holds the database's lock (tried every second), answering every
/// request on `listener` with `503`: the node, now active; None if `stopped` came first.
async fn stand_by(
    node: Node,
    listener: &TcpListener,
    limits: Limits,
    first_try: Duration,
    stopped: impl Future<Output = ()> + Send,
) -> Result<Option<Node>, DaemonError> {
    let location = node.location();
    let (done, outcome) = tokio::sync::oneshot::channel();
    let waiter = async move {
        let active = tokio::select! {
            active = wait_for_lock(node, first_try) => Some(active),
            () = stopped => None,
        };
        let _ = done.send(active);
    };
    crate::server::standby(listener, location, limits, waiter).await;
    outcome.await.ok().flatten().transpose()
}

/// Tries the lock after `first_try`, then every second, until this node holds it: the node,
/// now active. A database that does not answer meanwhile is logged (once per different error)
/// and tried again.
async fn wait_for_lock(mut node: Node, first_try: Duration) -> Result<Node, DaemonError> {
    let mut last_error = String::new();
    let mut wait = first_try;
    loop {
        tokio::time::sleep(std::mem::replace(&mut wait, Duration::from_secs(1))).await;
        // The node goes to the blocking thread and comes back with the answer.
        let attempt = tokio::task::spawn_blocking(move || {
            let active = node.try_activate();
            (node, active)
        });
        let (back, active) = attempt
            .await
            .map_err(|e| DaemonError::Standby(e.to_string()))?;
        node = back;
        match active {
            Ok(true) => return Ok(node),
            Ok(false) => {}
            Err(e) => {
                let text = e.to_string();
                if text != last_error {
                    tracing::warn!("standing by; cannot try the lock: {text}");
                    last_error = text;
                }
            }
        }
    }
}

/// Serves as the active node until the shutdown signal, the data file giving up, or the loss
/// of the database's lock; then stops every task and closes the service.
async fn serve_active<A: AdminSocket>(
    service: Arc<Service>,
    phase: &mut Phase<'_, A>,
    stopped: impl Future<Output = ()> + Send + 'static,
) -> Result<Ended, DaemonError> {
    let site_root = phase.site_root;
    if let Some((project, rw, ro)) = service
        .ensure_default_project()
        .await
        .map_err(DaemonError::FirstStart)?
    {
        print!("{}", first_start_keys(&project, &rw, &ro, site_root));
    }

    let mut tasks = Tasks::new();
    let control = phase
        .admin
        .bind(phase.data)
        .map_err(|source| DaemonError::ControlSocket {
            dir: phase.data.clone(),
            source,
        })?;
    let svc = service.clone();
    tasks.spawn_stoppable(|stop| phase.admin.serve(control, svc, stop));
    tasks.spawn(
        "the ping log sweep",
        crate::monitor::prune::run(service.clone()),
    );
    tasks.spawn(
        "the journal folder",
        crate::service::journal::run(service.clone()),
    );
    tasks.spawn(
        "the flip retention sweep",
        crate::monitor::retention::run(service.clone()),
    );
    tasks.spawn(
        "the deadline engine",
        crate::monitor::engine(service.clone()),
    );
    let worker = crate::notify::worker::prepare(service.clone())?;
    tasks.spawn_stoppable(|stop| worker.run(stop));
    if let Some(e) = phase.email {
        let smtp = match phase.smtp.take() {
            Some(listener) => listener,
            None => bind_smtp(e).await?,
        };
        if let Ok(smtp_addr) = smtp.local_addr() {
            tracing::info!("email pings: SMTP on {smtp_addr} for *@{}", e.domain);
        }
        let (svc, config) = (service.clone(), InboundConfig::new(e.domain.clone()));
        tasks.spawn_stoppable(|stop| crate::email::serve(smtp, svc, config, stop));
    }
    if let Ok(addr) = phase.listener.local_addr() {
        tracing::info!(
            "overdue {} listening on http://{addr} (data in {})",
            env!("CARGO_PKG_VERSION"),
            service.storage_location()
        );
    }
    phase.notify_ready();

    let app = Arc::new(App::new(service.clone(), phase.api.clone()));
    let ended = Arc::new(std::sync::Mutex::new(Ended::Stopped));
    let stop = {
        let service = service.clone();
        let ended = ended.clone();
        async move {
            let why = tokio::select! {
                () = stopped => {
                    tracing::info!("shutting down");
                    sd_notify::notify("STOPPING=1");
                    Ended::Stopped
                }
                () = service.storage_health().given_up() => {
                    sd_notify::notify("STOPPING=1");
                    Ended::GaveUp
                }
                () = service.storage_health().lost_lock() => {
                    tracing::warn!("this node lost the database's lock: it stops serving and stands by");
                    Ended::LostLock
                }
            };
            *ended
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = why;
        }
    };
    crate::server::run(phase.listener, app, phase.limits, stop, phase.grace).await;
    tasks.stop().await;
    phase.admin.remove(phase.data);
    if let Ok(service) = Arc::try_unwrap(service) {
        service.close().await;
    } else {
        tracing::warn!(
            "requests that outlived the shutdown grace still hold the service; exiting without \
             waiting for them"
        );
    }
    let ended = *ended
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    Ok(ended)
}
