//! Storage behind one boundary: [`Store`] and [`WriteTxn`] are the only way the service
//! reads and writes what outlives the process, and each is one enum over the two engines, the
//! embedded redb file ([`embedded`], the default) and PostgreSQL ([`postgres`]). The service
//! never knows which one it runs on; the few things only one engine has (the file's
//! checkpoints and write-ahead log, a reconnect to the database) are answered by the other as
//! "nothing to do".
//!
//! Both engines store the same records, encoded once by [`records`]; what differs is the
//! keys (redb's fixed-width byte keys in [`keys`], SQL columns in PostgreSQL) and how a
//! transaction is made durable. docs/design.md lists the tables of both and the invariants they
//! share.

pub(crate) mod access;
pub(crate) mod embedded;
pub(crate) mod keys;
pub(crate) mod postgres;
pub(crate) mod records;

use std::path::{Path, PathBuf};

use uuid::Uuid;

use crate::model::session::Session;
use crate::model::{ApiKey, Channel, Check, Delivery, Flip, OutboxEntry, Ping, Project, Tries};
pub(crate) use embedded::{BackupReport, DB_FILE, background_priority};
use embedded::{FileStore, FileTxn};
use postgres::{PgError, PgStore, PgTxn};

/// Delivery attempts kept per channel (the newest), for `channel ls` and the log of failures.
pub(crate) const DELIVERIES_KEPT: usize = 50;

/// What can go wrong below the service.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "the data directory {0} is in use by another overdue process (is the service running?)"
    )]
    Locked(PathBuf),
    #[error(
        "{path} has schema version {found}, newer than this release understands ({supported}); \
         upgrade overdue or restore a backup made by this release"
    )]
    NewerSchema {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error("cannot prepare the data directory {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open {path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The operating system refused access to the directory, the file or the socket: who
    /// owns it and what to do. Not a wrapped source, so a printed error chain says it once.
    #[error("{0}")]
    Denied(Box<access::AccessDenied>),
    /// A command that must not create a data file found none.
    #[error("{} holds no data file ({DB_FILE})", .0.display())]
    NoDataFile(PathBuf),
    #[error("cannot write the backup {path}: {source}")]
    Backup {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{0} is empty (0 bytes): it was cut short (a crash while it was written, a failed \
         restore, or `> {file}`), and opening it would start a new, empty database with new \
         keys. Restore a backup (`cp BACKUP {0}`, with the service stopped), or remove the \
         file to start afresh",
        file = DB_FILE
    )]
    EmptyFile(PathBuf),
    #[error("the data file is damaged: {0}")]
    Corrupt(String),
    /// The file is closed while the service reopens it after an I/O error.
    #[error("the data file is closed after an I/O error and is being reopened")]
    Closed,
    #[error("storage error: {0}")]
    Db(#[from] redb::Error),
    /// The PostgreSQL engine: its connection, its sign-in, or what its server said.
    #[error(transparent)]
    Pg(#[from] PgError),
    #[error(
        "the database {target} has schema version {found}, newer than this release understands \
         ({supported}); upgrade overdue"
    )]
    NewerDatabaseSchema {
        target: String,
        found: u32,
        supported: u32,
    },
    /// A command that must not create tables found none.
    #[error(
        "the database {0} holds no Overdue tables; start `overdue serve --database` on it once, \
         or move an install in with `overdue import --database`"
    )]
    NoTables(String),
    /// A data file and a database were both named.
    #[error(
        "{} holds a data file, and --database names {database}: the service runs on one or \
         the other. To move the data file's checks into the database, stop the service and run \
         `overdue export --output FILE` then `overdue --database URL import FILE`; or give \
         --data a directory without a data file",
        file.display()
    )]
    BothEngines { file: PathBuf, database: String },
    /// What one engine does and the other cannot.
    #[error("{0}")]
    Unsupported(&'static str),
}

impl StoreError {
    /// Whether this is the file (or the disk under it) failing rather than its contents or a
    /// bug: a full disk, a file that became unwritable, a read error. After such an error redb
    /// refuses every operation until the database is reopened ([`FileStore::reopen`]).
    pub(crate) fn is_io(&self) -> bool {
        match self {
            StoreError::Closed
            | StoreError::Io { .. }
            | StoreError::Open { .. }
            | StoreError::Denied(_) => true,
            StoreError::Db(e) => matches!(
                e,
                redb::Error::Io(_) | redb::Error::PreviousIo | redb::Error::DatabaseClosed
            ),
            StoreError::Pg(e) => e.is_connection(),
            _ => false,
        }
    }
}

/// Everything the service keeps in memory, as read at start.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    pub(crate) projects: Vec<Project>,
    pub api_keys: Vec<ApiKey>,
    /// With their `channels` filled in from the links table; `compiled` is left to the caller.
    /// Only [`Store::load`] fills it: the service streams the checks instead.
    #[cfg(test)]
    pub checks: Vec<Check>,
    pub channels: Vec<Channel>,
    /// The sequence number the next outbox entry gets.
    pub(crate) next_outbox_seq: u64,
    /// The sequence number the next journal entry gets.
    pub(crate) next_journal_seq: u64,
    /// Dashboard sessions by [`crate::model::session::session_id`], expired ones included.
    pub(crate) sessions: Vec<([u8; 32], Session)>,
}

#[cfg(test)]
impl Snapshot {
    /// What `load_streaming` reads, with the checks it streams collected in `checks`.
    pub(crate) fn with_checks(
        load_streaming: impl FnOnce(&mut dyn FnMut(Check)) -> Result<Snapshot, StoreError>,
    ) -> Result<Snapshot, StoreError> {
        let mut checks = Vec::new();
        let mut snap = load_streaming(&mut |c| checks.push(c))?;
        snap.checks = checks;
        Ok(snap)
    }
}

/// The open storage, one engine or the other.
#[derive(Debug)]
pub(crate) enum Store {
    File(FileStore),
    Postgres(Box<PgStore>),
}

/// One write transaction (one batch of the writer): nothing it does is visible or durable
/// before [`WriteTxn::commit`].
#[allow(
    clippy::large_enum_variant,
    reason = "one per batch, on the writer's stack: boxing would allocate for nothing"
)]
pub enum WriteTxn {
    File(FileTxn),
    Postgres(PgTxn),
}

/// The same call on whichever engine `$value` holds.
macro_rules! on_engine {
    ($value:expr, $ty:ident, $s:ident => $body:expr) => {
        match $value {
            $ty::File($s) => $body,
            $ty::Postgres($s) => $body,
        }
    };
}

impl Store {
    /// Opens (creating if needed) the data file in `dir`.
    pub(crate) fn open(dir: &Path) -> Result<Store, StoreError> {
        FileStore::open(dir).map(Store::File)
    }

    /// Opens the data file in `dir`, creating nothing ([`StoreError::NoDataFile`]).
    pub(crate) fn open_existing(dir: &Path) -> Result<Store, StoreError> {
        FileStore::open_existing(dir).map(Store::File)
    }

    /// Connects to the database, creating or upgrading its tables (`create`), or refusing a
    /// database without them ([`StoreError::NoTables`]).
    pub(crate) fn connect(db: &postgres::Database, create: bool) -> Result<Store, StoreError> {
        PgStore::open(db, create).map(|s| Store::Postgres(Box::new(s)))
    }

    /// Connects to the database without taking the active node's lock
    /// ([`Store::try_activate`] takes it): a node that may have to stand by. With `reach`, a
    /// database that cannot be reached is an error now rather than at the first try.
    pub(crate) fn standby(db: &postgres::Database, reach: bool) -> Result<Store, StoreError> {
        PgStore::connect(db, reach).map(|s| Store::Postgres(Box::new(s)))
    }

    /// Whether this node may write now: always on the data file (its lock was taken at
    /// open); on PostgreSQL once it holds the active node's lock, which this tries to take,
    /// preparing the tables (creating them when `create`) when it gets it.
    pub(crate) fn try_activate(&self, create: bool) -> Result<bool, StoreError> {
        match self {
            Store::File(_) => Ok(true),
            Store::Postgres(s) => s.try_activate(create),
        }
    }

    /// Resolves when the session holding the active node's lock ends; never on the data file.
    pub(crate) fn lock_lost(&self) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> {
        match self {
            Store::File(_) => Box::pin(std::future::pending()),
            Store::Postgres(s) => Box::pin(s.lock_lost()),
        }
    }

    /// Where the data lives, for messages: the file's path or the database's `host:port/db`.
    pub(crate) fn location(&self) -> String {
        match self {
            Store::File(s) => s.path().display().to_string(),
            Store::Postgres(s) => s.target(),
        }
    }

    /// Whether other nodes may run on this storage (PostgreSQL): then a failed session means
    /// this node may have lost the active node's lock, and it must stop writing rather than
    /// reconnect.
    pub(crate) fn is_shared(&self) -> bool {
        matches!(self, Store::Postgres(_))
    }

    /// The data file, when the data is in one (its disk is what a failure diagnosis looks at).
    pub(crate) fn file(&self) -> Option<&Path> {
        match self {
            Store::File(s) => Some(s.path()),
            Store::Postgres(_) => None,
        }
    }

    /// Makes the storage usable again after an I/O error: the file reopened, or the database
    /// connected again.
    pub(crate) fn reopen(&self) -> Result<(), StoreError> {
        on_engine!(self, Store, s => s.reopen())
    }

    /// One committed write that proves the storage takes writes again (after a reopen).
    pub(crate) fn probe_write(&self, now_us: i64) -> Result<(), StoreError> {
        let mut txn = self.begin_write()?;
        txn.put_meta("last_write_probe", &now_us.to_be_bytes())?;
        txn.commit()
    }

    /// Reads every project, key, check (with its channel links) and channel.
    #[cfg(test)]
    pub(crate) fn load(&self) -> Result<Snapshot, StoreError> {
        Snapshot::with_checks(|on_check| self.load_streaming(on_check))
    }

    /// Reads everything the service keeps in memory, handing each check to `on_check` as it
    /// is read, so a million checks are never held twice.
    pub(crate) fn load_streaming(
        &self,
        on_check: &mut dyn FnMut(Check),
    ) -> Result<Snapshot, StoreError> {
        on_engine!(self, Store, s => s.load_streaming(on_check))
    }

    /// When the commits that only the file's write-ahead log holds are due to be made durable
    /// in the file ([`Store::checkpoint`]); always `None` on PostgreSQL, where a commit is
    /// durable by itself.
    pub(crate) fn checkpoint_due(&self) -> Option<std::time::Instant> {
        match self {
            Store::File(s) => s.checkpoint_due(),
            Store::Postgres(_) => None,
        }
    }

    /// Makes every commit durable in the file and cuts the write-ahead log behind it.
    pub(crate) fn checkpoint(&self) -> Result<(), StoreError> {
        match self {
            Store::File(s) => s.checkpoint(),
            Store::Postgres(_) => Ok(()),
        }
    }

    /// Whether a checkpoint is committing right now.
    pub(crate) fn checkpointing(&self) -> bool {
        match self {
            Store::File(s) => s.checkpointing(),
            Store::Postgres(_) => false,
        }
    }

    /// Starts the write transaction of one batch. Blocks while another is open.
    pub(crate) fn begin_write(&self) -> Result<WriteTxn, StoreError> {
        Ok(match self {
            Store::File(s) => WriteTxn::File(s.begin_write()?),
            Store::Postgres(s) => WriteTxn::Postgres(s.begin_write()?),
        })
    }

    /// The newest `limit` pings of a check, newest first.
    pub(crate) fn pings(&self, check: Uuid, limit: usize) -> Result<Vec<Ping>, StoreError> {
        on_engine!(self, Store, s => s.pings(check, limit))
    }

    /// The stored body of ping `n`, if it exists and is not empty.
    pub(crate) fn ping_body(&self, check: Uuid, n: u64) -> Result<Option<Vec<u8>>, StoreError> {
        on_engine!(self, Store, s => s.ping_body(check, n))
    }

    /// Every stored flip of a check, newest first.
    pub(crate) fn flips(&self, check: Uuid) -> Result<Vec<Flip>, StoreError> {
        on_engine!(self, Store, s => s.flips(check))
    }

    /// Every queued alert, oldest first.
    pub(crate) fn outbox(&self) -> Result<Vec<OutboxEntry>, StoreError> {
        on_engine!(self, Store, s => s.outbox())
    }

    /// How many alerts wait in the outbox.
    pub(crate) fn outbox_len(&self) -> Result<u64, StoreError> {
        on_engine!(self, Store, s => s.outbox_len())
    }

    /// Every queued alert with its retry state (None before the first try), oldest first.
    pub(crate) fn outbox_pending(&self) -> Result<Vec<(OutboxEntry, Option<Tries>)>, StoreError> {
        on_engine!(self, Store, s => s.outbox_pending())
    }

    /// The newest `limit` delivery attempts to a channel, newest first.
    pub(crate) fn deliveries(
        &self,
        channel: Uuid,
        limit: usize,
    ) -> Result<Vec<Delivery>, StoreError> {
        on_engine!(self, Store, s => s.deliveries(channel, limit))
    }

    /// Every pending repeat alert: (check, channel, due time in µs).
    pub(crate) fn repeats(&self) -> Result<Vec<(Uuid, Uuid, i64)>, StoreError> {
        on_engine!(self, Store, s => s.repeats())
    }

    /// Calls `f` with every journal entry's sequence number and ping, oldest first (replayed
    /// at start). Streams: bodies are not kept.
    pub(crate) fn for_each_journaled(
        &self,
        f: &mut dyn FnMut(u64, Ping),
    ) -> Result<(), StoreError> {
        on_engine!(self, Store, s => s.for_each_journaled(f))
    }

    /// How many entries the journal holds (folded or not).
    pub(crate) fn journal_len(&self) -> Result<u64, StoreError> {
        on_engine!(self, Store, s => s.journal_len())
    }

    /// The check whose per-check badge key is `badge` (kept in storage, not in memory).
    pub(crate) fn check_by_badge_key(&self, badge: Uuid) -> Result<Option<Uuid>, StoreError> {
        on_engine!(self, Store, s => s.check_by_badge_key(badge))
    }

    /// How many checks are stored.
    pub(crate) fn check_count(&self) -> Result<u64, StoreError> {
        on_engine!(self, Store, s => s.check_count())
    }

    /// A cheap read that proves the storage answers (for `/api/v3/status/`).
    pub(crate) fn health_check(&self) -> Result<(), StoreError> {
        on_engine!(self, Store, s => s.health_check().map(|_| ()))
    }

    /// A value from the meta table.
    pub(crate) fn meta(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        on_engine!(self, Store, s => s.meta(key))
    }

    /// Copies the data file to `dest` while it stays in use. PostgreSQL has its own tools.
    pub(crate) fn backup(&self, dest: &Path) -> Result<BackupReport, StoreError> {
        match self {
            Store::File(s) => s.backup(dest),
            Store::Postgres(_) => Err(StoreError::Unsupported(
                "`overdue backup` copies the embedded data file; back up PostgreSQL with \
                 pg_dump, or take a portable copy with `overdue export`",
            )),
        }
    }
}

impl WriteTxn {
    pub(crate) fn put_meta(&mut self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.put_meta(key, value))
    }

    pub(crate) fn put_project(&mut self, project: &Project) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.put_project(project))
    }

    /// Removes a project record. The caller removes its checks, channels and keys first.
    pub(crate) fn delete_project(&mut self, project: Uuid) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.delete_project(project))
    }

    pub(crate) fn put_api_key(&mut self, key: &ApiKey) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.put_api_key(key))
    }

    pub(crate) fn delete_api_key(&mut self, id: &str) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.delete_api_key(id))
    }

    /// Writes a dashboard session under its id (SHA-256 of its token).
    pub(crate) fn put_session(
        &mut self,
        id: &[u8; 32],
        session: &Session,
    ) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.put_session(id, session))
    }

    /// Removes a dashboard session; removing one that is not there is no error.
    pub(crate) fn delete_session(&mut self, id: &[u8; 32]) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.delete_session(id))
    }

    /// Writes a check record; `old_slug` is the slug it had before (None for a new check),
    /// so the slug index follows (and a new check's badge key is indexed).
    pub fn put_check(&mut self, check: &Check, old_slug: Option<&str>) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.put_check(check, old_slug))
    }

    /// Rewrites a check's record after a fold (same slug, same badge key).
    pub(crate) fn put_folded_check(&mut self, check: &Check) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.put_folded_check(check))
    }

    /// The check that owns a per-check badge key, as this transaction sees it.
    pub(crate) fn check_by_badge_key(&mut self, badge: Uuid) -> Result<Option<Uuid>, StoreError> {
        on_engine!(self, WriteTxn, t => t.check_by_badge_key(badge))
    }

    /// Deletes a check with its pings, bodies, flips, links and slug index entry.
    pub(crate) fn delete_check(&mut self, check: &Check) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.delete_check(check))
    }

    /// Replaces a check's channel links with `channels`.
    pub(crate) fn set_links(&mut self, check: Uuid, channels: &[Uuid]) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.set_links(check, channels))
    }

    /// Adds one link (used when a new channel is assigned to existing checks).
    pub(crate) fn put_link(&mut self, check: Uuid, channel: Uuid) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.put_link(check, channel))
    }

    /// Removes one link (used when a channel is deleted).
    pub(crate) fn delete_link(&mut self, check: Uuid, channel: Uuid) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.delete_link(check, channel))
    }

    pub(crate) fn put_channel(&mut self, channel: &Channel) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.put_channel(channel))
    }

    /// Removes a channel record with its delivery history.
    pub(crate) fn delete_channel(&mut self, channel: Uuid) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.delete_channel(channel))
    }

    /// Appends a ping to the journal (the hot path; see `service::journal`).
    pub(crate) fn put_journal(
        &mut self,
        seq: u64,
        ping: &Ping,
        body: &[u8],
    ) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.put_journal(seq, ping, body))
    }

    /// Makes the journaled pings `seqs` (all of one check) readable as the check's pings.
    pub(crate) fn fold_journal(&mut self, seqs: &[u64]) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.fold_journal(seqs))
    }

    /// Removes the journal entries `seqs` (those of a deleted check).
    pub(crate) fn delete_journal(&mut self, seqs: &[u64]) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.delete_journal(seqs))
    }

    /// Removes every journal entry numbered below `below` (all folded already).
    pub(crate) fn trim_journal(&mut self, below: u64) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.trim_journal(below))
    }

    /// Deletes the pings (and bodies) of a check numbered below `keep_from`.
    pub(crate) fn prune_pings(&mut self, check: Uuid, keep_from: u64) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.prune_pings(check, keep_from))
    }

    /// Records a flip. Two flips of one check in the same microsecond keep both: the later
    /// one moves forward to the next free microsecond.
    pub(crate) fn put_flip(&mut self, flip: &Flip) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.put_flip(flip))
    }

    /// Queues an alert.
    pub(crate) fn put_outbox(&mut self, entry: &OutboxEntry) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.put_outbox(entry))
    }

    /// Removes a delivered (or given up) alert with its retry state.
    pub(crate) fn delete_outbox(&mut self, seq: u64) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.delete_outbox(seq))
    }

    /// Records a failed try of an outbox entry and when to try again.
    pub(crate) fn put_tries(&mut self, seq: u64, tries: &Tries) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.put_tries(seq, tries))
    }

    /// Records a delivery attempt and keeps only the channel's newest [`DELIVERIES_KEPT`].
    pub(crate) fn put_delivery(&mut self, delivery: &Delivery) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.put_delivery(delivery))
    }

    /// Schedules the next repeat alert of (check, channel).
    pub(crate) fn put_repeat(
        &mut self,
        check: Uuid,
        channel: Uuid,
        due_us: i64,
    ) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.put_repeat(check, channel, due_us))
    }

    /// When the next repeat alert of (check, channel) is due, if one is scheduled.
    pub(crate) fn repeat_due(
        &mut self,
        check: Uuid,
        channel: Uuid,
    ) -> Result<Option<i64>, StoreError> {
        on_engine!(self, WriteTxn, t => t.repeat_due(check, channel))
    }

    pub(crate) fn delete_repeat(&mut self, check: Uuid, channel: Uuid) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.delete_repeat(check, channel))
    }

    /// Deletes the flips of `check` older than `before_us`.
    pub(crate) fn prune_flips(&mut self, check: Uuid, before_us: i64) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.prune_flips(check, before_us))
    }

    /// Makes the transaction durable and visible. On PostgreSQL this returns once COMMIT has.
    pub(crate) fn commit(self) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.commit())
    }

    /// Drops everything the transaction did.
    pub(crate) fn abort(self) -> Result<(), StoreError> {
        on_engine!(self, WriteTxn, t => t.abort())
    }
}
