//! The running service's core: the store, the in-memory state, the single writer, the clock
//! and API key verification, and the operations that the HTTP API and the admin CLI share.
//!
//! Reads are answered from memory (pings and flips from read transactions); every change goes
//! through the writer and is acknowledged only once committed.

pub(crate) mod admin;
pub mod auth;
pub(crate) mod checks;
pub(crate) mod clock;
mod deliveries;
pub(crate) mod error;
pub(crate) mod flips;
pub mod health;
pub(crate) mod journal;
#[cfg(test)]
mod journal_tests;
pub(crate) mod metrics;
pub(crate) mod migrate;
pub mod pings;
pub(crate) mod reads;
pub(crate) mod sessions;
#[cfg(test)]
mod sessions_tests;
pub(crate) mod state;
pub(crate) mod transfer;
pub(crate) mod writer;

use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};

use jiff::Timestamp;

use crate::model::limits::{DEFAULT_PING_BODY_LIMIT, DEFAULT_PING_LOG};
pub(crate) use crate::store::DB_FILE;
use crate::store::Store;
pub use crate::store::StoreError;
/// Why the data directory cannot be opened, and the data file's name: what callers of
/// [`Service::open`] need to say about the store, without knowing the store.
pub use crate::store::access::AccessDenied;
pub use crate::store::postgres::{Database, NodeSeen, PgError, Probe};
pub use clock::Clock;
pub use error::{AdminError, ServiceError};
pub use state::State;
pub use writer::WriteCtx;
pub(crate) use writer::Writer;

/// Settings the service needs (the HTTP server has its own).
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Public base URL, without a trailing slash, for URLs in API responses. `None` reuses
    /// the one the last `serve` used (kept in the file), so admin output matches the service's.
    pub site_root: Option<String>,
    /// Bytes of a ping body that are stored.
    pub ping_body_limit: usize,
    /// Pings kept and listed per check.
    pub ping_log: u32,
    /// How alerts are delivered (SMTP, shell permission, retries, timeouts).
    pub notify: crate::model::outbox::NotifyConfig,
    /// What the writer does while the data file does not take writes.
    pub storage: health::StoragePolicy,
    /// The address `serve` listens on and the domain of email pings: the service does not use
    /// them, but reports them to `doctor`. `None` when an admin command opened the file.
    pub listen: Option<String>,
    pub ping_email_domain: Option<String>,
    /// PostgreSQL instead of the data file in the data directory (which then holds only the
    /// control socket).
    pub database: Option<Database>,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        ServiceConfig {
            site_root: None,
            ping_body_limit: DEFAULT_PING_BODY_LIMIT,
            ping_log: DEFAULT_PING_LOG,
            notify: crate::model::outbox::NotifyConfig::default(),
            storage: health::StoragePolicy::default(),
            listen: None,
            ping_email_domain: None,
            database: None,
        }
    }
}

/// The open service: shared by the HTTP server, the control socket and the admin CLI.
pub struct Service {
    store: Arc<Store>,
    state: Arc<RwLock<State>>,
    writer: Writer,
    writer_task: tokio::task::JoinHandle<()>,
    /// Filled in when the monitor starts; the writer reports deadline changes to it.
    deadlines: writer::DeadlineSink,
    /// Signalled after each commit that queued alerts; the delivery worker waits on it.
    alerts: Arc<tokio::sync::Notify>,
    clock: Clock,
    auth: auth::KeyCache,
    metrics: Arc<metrics::Metrics>,
    health: Arc<health::StorageHealth>,
    config: ServiceConfig,
    /// Signs badge URLs; generated at first start and kept in the file. Replaced only when
    /// an import into an empty file adopts the secret of the file it came from.
    badge_secret: RwLock<Arc<[u8]>>,
    site_root: String,
}

/// Site root used when none was ever configured.
pub(crate) const DEFAULT_SITE_ROOT: &str = "http://127.0.0.1:8000";

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("store", &self.store)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// A random secret kept in the meta table under `name`, created on first use.
fn load_or_create_secret(store: &Store, name: &str) -> Result<Vec<u8>, StoreError> {
    if let Some(secret) = store.meta(name)? {
        return Ok(secret);
    }
    let mut secret = vec![0u8; 32];
    getrandom::fill(&mut secret).map_err(|e| StoreError::Io {
        path: store.location().into(),
        source: std::io::Error::other(format!("no random numbers: {e}")),
    })?;
    let mut txn = store.begin_write()?;
    txn.put_meta(name, &secret)?;
    txn.commit()?;
    Ok(secret)
}

/// Connects to the database, refusing a data directory that holds a data file.
fn connect(data_dir: &Path, db: &Database, create: bool) -> Result<Store, StoreError> {
    refuse_both(data_dir, db)?;
    Store::connect(db, create)
}

/// Refuses a database named beside a data directory that holds a data file: its checks would
/// be left behind without a word while the service ran on the database.
fn refuse_both(data_dir: &Path, db: &Database) -> Result<(), StoreError> {
    let file = data_dir.join(DB_FILE);
    if file.exists() {
        return Err(StoreError::BothEngines {
            file,
            database: db.target(),
        });
    }
    Ok(())
}

/// Storage opened for a node that may have to wait before it serves: on PostgreSQL until it
/// holds the active node's lock ([`Node::try_activate`]), on the data file at once (its lock
/// was taken when it was opened).
#[derive(Debug)]
pub struct Node {
    store: Store,
    config: ServiceConfig,
    clock: Clock,
}

impl Node {
    /// Opens the data directory, or connects to the database of `config.database` without
    /// taking its lock. With `reach`, a database that cannot be reached is an error now (at
    /// start); without it (a node that lost its lock) [`Node::try_activate`] keeps trying.
    pub fn connect(
        data_dir: &Path,
        config: ServiceConfig,
        clock: Clock,
        reach: bool,
    ) -> Result<Node, StoreError> {
        let store = match &config.database {
            Some(db) => {
                refuse_both(data_dir, db)?;
                Store::standby(db, reach)?
            }
            None => Store::open(data_dir)?,
        };
        Ok(Node {
            store,
            config,
            clock,
        })
    }

    /// Whether this node is the active one now: it takes the database's lock if no other node
    /// holds it (then creating or upgrading the tables). Cheap enough to call every second.
    pub fn try_activate(&self) -> Result<bool, StoreError> {
        self.store.try_activate(true)
    }

    /// Where the data lives: the data file's path, or the database's `host:port/dbname`.
    pub fn location(&self) -> String {
        self.store.location()
    }

    /// Loads the state and starts the writer: the node serves. Call only once
    /// [`Node::try_activate`] said so.
    pub fn start(self) -> Result<Service, StoreError> {
        Service::start(self.store, self.config, self.clock)
    }
}

impl Service {
    /// Opens the data directory (or the database of `config.database`), loads the state and
    /// starts the writer (on the current tokio runtime).
    pub fn open(
        data_dir: &Path,
        config: ServiceConfig,
        clock: Clock,
    ) -> Result<Service, StoreError> {
        let store = match &config.database {
            Some(db) => connect(data_dir, db, true)?,
            None => Store::open(data_dir)?,
        };
        Service::start(store, config, clock)
    }

    /// Like [`Service::open`], but a directory without a data file (a database without
    /// Overdue's tables) is an error ([`StoreError::NoDataFile`], [`StoreError::NoTables`])
    /// instead of a new, empty one.
    pub(crate) fn open_existing(
        data_dir: &Path,
        config: ServiceConfig,
        clock: Clock,
    ) -> Result<Service, StoreError> {
        let store = match &config.database {
            Some(db) => connect(data_dir, db, false)?,
            None => Store::open_existing(data_dir)?,
        };
        Service::start(store, config, clock)
    }

    fn start(store: Store, config: ServiceConfig, clock: Clock) -> Result<Service, StoreError> {
        let store = Arc::new(store);
        let badge_secret = load_or_create_secret(&store, "badge_secret")?;
        let site_root = match &config.site_root {
            Some(root) => {
                let root = root.trim_end_matches('/').to_string();
                if store.meta("site_root")?.as_deref() != Some(root.as_bytes()) {
                    let mut txn = store.begin_write()?;
                    txn.put_meta("site_root", root.as_bytes())?;
                    txn.commit()?;
                }
                root
            }
            None => store
                .meta("site_root")?
                .and_then(|b| String::from_utf8(b).ok())
                .unwrap_or_else(|| DEFAULT_SITE_ROOT.to_string()),
        };
        let started = std::time::Instant::now();
        let mut state = State::load(&store)?;
        state.drop_expired_sessions(clock.now());
        let silent = checks::count_checks_without_channels(&state);
        tracing::info!(
            checks = state.check_count(),
            without_integrations = silent,
            "loaded the data file in {} ms",
            started.elapsed().as_millis()
        );
        if silent > 0 {
            tracing::warn!(
                checks = silent,
                "some checks have no integrations: nobody is alerted when they go down \
                 (`overdue check show` lists a check's channels; a channel added with \
                 `overdue channel add` is assigned to every check of its project)"
            );
        }
        let state = Arc::new(RwLock::new(state));
        let deadlines = writer::DeadlineSink::default();
        let metrics = Arc::new(metrics::Metrics::default());
        let alerts = Arc::new(tokio::sync::Notify::new());
        let health = Arc::new(health::StorageHealth::default());
        let (writer, writer_task) = Writer::start(
            store.clone(),
            state.clone(),
            writer::WriterParts {
                clock: clock.clone(),
                deadlines: deadlines.clone(),
                metrics: metrics.clone(),
                alerts: alerts.clone(),
                health: health.clone(),
                policy: config.storage,
            },
        );
        Ok(Service {
            store,
            state,
            writer,
            writer_task,
            deadlines,
            alerts,
            clock,
            auth: auth::KeyCache::new(),
            metrics,
            health,
            config,
            badge_secret: RwLock::new(badge_secret.into()),
            site_root,
        })
    }

    /// Stops the writer after its queue is done and closes the data file cleanly.
    pub async fn close(self) {
        // Not needed for safety (start-up replays the journal), but it leaves a tidy file.
        // Storage that fails (a node that lost the database's lock) takes no fold.
        if !self.health.is_failing()
            && let Err(e) = self.fold_journal().await
        {
            tracing::warn!("could not fold the ping journal at shutdown: {e}");
        }
        let Service {
            writer,
            writer_task,
            store,
            state,
            ..
        } = self;
        drop(writer);
        if writer_task.await.is_err() {
            tracing::error!("the writer task failed");
        }
        drop(state);
        drop(store);
    }

    /// Where the monitor receives deadline changes; see `monitor::start`.
    pub(crate) fn deadline_sink(&self) -> &writer::DeadlineSink {
        &self.deadlines
    }

    /// Signalled after every commit that queued alerts (see `notify::worker`).
    pub(crate) fn alerts_signal(&self) -> &Arc<tokio::sync::Notify> {
        &self.alerts
    }

    /// Public base URL without a trailing slash.
    pub(crate) fn site_root(&self) -> &str {
        &self.site_root
    }

    /// The secret that signs badge URLs.
    pub(crate) fn badge_secret(&self) -> Arc<[u8]> {
        self.badge_secret
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the badge secret in memory; the caller has committed it to the file.
    pub(crate) fn set_badge_secret(&self, secret: &[u8]) {
        *self
            .badge_secret
            .write()
            .unwrap_or_else(PoisonError::into_inner) = secret.into();
    }

    /// Whether the data file takes writes (see [`health`]).
    pub fn storage_health(&self) -> &health::StorageHealth {
        &self.health
    }

    /// The service's own counters (`GET /metrics`).
    pub fn metrics(&self) -> &metrics::Metrics {
        &self.metrics
    }

    pub(crate) fn config(&self) -> &ServiceConfig {
        &self.config
    }

    /// Where the data lives: the data file's path, or the database's `host:port/dbname`.
    pub(crate) fn storage_location(&self) -> String {
        self.store.location()
    }

    /// The data file. Only the service reads it: see [`reads`] for what others may read.
    fn store(&self) -> &Store {
        &self.store
    }

    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Runs `f` on the current state under a read lock. Keep `f` short: the writer waits.
    pub fn read<R>(&self, f: impl FnOnce(&State) -> R) -> R {
        let guard = self.state.read().unwrap_or_else(PoisonError::into_inner);
        f(&guard)
    }

    /// Like [`Service::read`], but None at once while the writer holds the state (a batch
    /// being applied) instead of blocking the caller's thread until it lets go.
    pub(crate) fn try_read<R>(&self, f: impl FnOnce(&State) -> R) -> Option<R> {
        match self.state.try_read() {
            Ok(guard) => Some(f(&guard)),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(f(&e.into_inner())),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Runs `f` on the writer thread and waits for its commit.
    pub async fn write<T, F>(&self, f: F) -> Result<T, ServiceError>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> Result<T, ServiceError> + Send + 'static,
    {
        self.writer.submit(f).await
    }

    /// Like [`Service::write`] but answers [`ServiceError::Busy`] when the writer's queue is full.
    pub(crate) async fn try_write<T, F>(&self, f: F) -> Result<T, ServiceError>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> Result<T, ServiceError> + Send + 'static,
    {
        self.writer.try_submit(f).await
    }
}
