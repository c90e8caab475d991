//! The embedded engine: one redb file that holds everything (projects, API keys, checks,
//! pings, flips, channels and their links) with its write-ahead log beside it. This is the
//! only module that imports redb; the tables, their key encodings and the invariants are
//! written down in docs/design.md.
//!
//! Writes go through [`FileTxn`] (in `write.rs`), which keeps the derived tables (slug index,
//! badge keys, links) in step with the records; reads of pings and flips open their own read
//! transactions.

mod backup;
mod crash_point;
mod ping_log;
mod schema;
mod wal;
mod write;

use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use redb::{
    Database, MultimapTableDefinition, ReadableDatabase, ReadableTable, ReadableTableMetadata,
    TableDefinition,
};
use uuid::Uuid;

use crate::model::session::Session;
use crate::model::{Check, Delivery, Flip, OutboxEntry, Ping, Tries};
use crate::store::records::{
    self, ApiKeyRecord, ChannelRecord, DeliveryRecord, FlipRecord, OutboxRecord, PingRecord,
    SessionRecord, TriesRecord, decode,
};
use crate::store::{Snapshot, StoreError, keys};
use crash_point::Point;
use ping_log::PingLog;
use schema::{explain_refusal, open_database, prepare_schema};

/// Version of the set of tables and record shapes. A file with a higher number was written
/// by a newer release and is refused.
pub(crate) const SCHEMA_VERSION: u32 = 1;
/// redb's page cache. Hot state lives in the service's own memory, so the cache only serves
/// pings, flips and writes; redb's default (1 GiB) would make a small service look large.
pub(crate) const CACHE_BYTES: usize = 32 << 20;
/// Name of the database file inside the data directory.
pub(crate) const DB_FILE: &str = "overdue.redb";

pub(crate) const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
pub(crate) const PROJECTS: TableDefinition<u128, &[u8]> = TableDefinition::new("projects");
pub(crate) const API_KEYS: TableDefinition<[u8; 12], &[u8]> = TableDefinition::new("api_keys");
pub(crate) const CHECKS: TableDefinition<u128, &[u8]> = TableDefinition::new("checks");
pub(crate) const SLUG_INDEX: MultimapTableDefinition<[u8; 32], u128> =
    MultimapTableDefinition::new("slug_index");
pub(crate) const PINGS: TableDefinition<[u8; 24], &[u8]> = TableDefinition::new("pings");
pub(crate) const PING_BODIES: TableDefinition<[u8; 24], &[u8]> =
    TableDefinition::new("ping_bodies");
pub(crate) const FLIPS: TableDefinition<[u8; 24], &[u8]> = TableDefinition::new("flips");
pub(crate) const CHANNELS: TableDefinition<u128, &[u8]> = TableDefinition::new("channels");
pub(crate) const CHECK_CHANNELS: TableDefinition<[u8; 32], ()> =
    TableDefinition::new("check_channels");
pub(crate) const OUTBOX: TableDefinition<u64, &[u8]> = TableDefinition::new("outbox");
pub(crate) const JOURNAL: TableDefinition<u64, &[u8]> = TableDefinition::new("ping_journal");
pub(crate) const BADGE_KEYS: TableDefinition<u128, u128> = TableDefinition::new("badge_keys");
pub(crate) const OUTBOX_TRIES: TableDefinition<u64, &[u8]> = TableDefinition::new("outbox_tries");
pub(crate) const DELIVERIES: TableDefinition<[u8; 24], &[u8]> = TableDefinition::new("deliveries");
pub(crate) const REPEATS: TableDefinition<[u8; 32], i64> = TableDefinition::new("repeats");
/// Dashboard sessions by SHA-256 of their token. Left out of backups (see `backup.rs`).
pub(crate) const SESSIONS: TableDefinition<[u8; 32], &[u8]> = TableDefinition::new("sessions");

impl From<redb::TransactionError> for StoreError {
    fn from(e: redb::TransactionError) -> Self {
        StoreError::Db(e.into())
    }
}

impl From<redb::TableError> for StoreError {
    fn from(e: redb::TableError) -> Self {
        StoreError::Db(e.into())
    }
}

impl From<redb::StorageError> for StoreError {
    fn from(e: redb::StorageError) -> Self {
        StoreError::Db(e.into())
    }
}

impl From<redb::CommitError> for StoreError {
    fn from(e: redb::CommitError) -> Self {
        StoreError::Db(e.into())
    }
}

impl From<redb::DatabaseError> for StoreError {
    fn from(e: redb::DatabaseError) -> Self {
        StoreError::Db(e.into())
    }
}

/// The open data file.
///
/// The database sits behind a lock so that [`FileStore::reopen`] can replace it after an I/O
/// error (redb refuses every later operation until then). Each operation clones the handle and
/// lets go of the lock at once, so nothing waits on it but a reopen.
pub(crate) struct FileStore {
    db: RwLock<Option<Arc<Database>>>,
    path: PathBuf,
    /// The write-ahead log beside the file (see `ping_log`).
    log: Arc<PingLog>,
}

impl std::fmt::Debug for FileStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Lowers the calling thread's scheduling priority (nice 10): for the store's background
/// work (a checkpoint, the next write-ahead log segment), which on a small machine would otherwise
/// take the CPU from the threads that answer pings. Linux applies nice per thread.
pub(crate) fn background_priority() {
    let tid = rustix::thread::gettid();
    if let Err(e) = rustix::process::setpriority_process(Some(tid), 10) {
        tracing::debug!("cannot lower a background thread's priority: {e}");
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl FileStore {
    /// Opens (creating if needed) the data file in `dir`. The directory is created with mode
    /// 0700 and the file with 0600; the process then holds redb's exclusive lock on it.
    pub(crate) fn open(dir: &Path) -> Result<FileStore, StoreError> {
        FileStore::open_with(dir, true).map_err(explain_refusal)
    }

    /// Opens the data file in `dir`, creating nothing: a directory without one is
    /// [`StoreError::NoDataFile`]. Admin commands use this, so one run in the wrong directory
    /// does not leave an empty database there.
    pub(crate) fn open_existing(dir: &Path) -> Result<FileStore, StoreError> {
        FileStore::open_with(dir, false).map_err(explain_refusal)
    }

    fn open_with(dir: &Path, create: bool) -> Result<FileStore, StoreError> {
        if create && !dir.exists() {
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(io_err(dir))?;
        }
        let path = dir.join(DB_FILE);
        match std::fs::metadata(&path) {
            // redb would take an empty file for a new one and write a fresh database into it:
            // every key, check and channel would be gone without a word.
            Ok(meta) if meta.len() == 0 => return Err(StoreError::EmptyFile(path)),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create => {
                return Err(StoreError::NoDataFile(dir.to_path_buf()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Created with its final mode, then at once filled in by redb below.
                OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&path)
                    .map_err(io_err(&path))?;
            }
            Err(e) => return Err(io_err(&path)(e)),
        }
        std::fs::set_permissions(&path, Permissions::from_mode(0o600)).map_err(io_err(&path))?;
        let db = open_database(dir, &path)?;
        prepare_schema(&db, &path)?;
        let log = PingLog::open(dir, &db)?;
        Ok(FileStore {
            db: RwLock::new(Some(Arc::new(db))),
            path,
            log: Arc::new(log),
        })
    }

    /// Closes the database and opens the file again: after an I/O error redb answers every
    /// call with "previous I/O error" until this is done, and opening runs redb's recovery from
    /// the last commit. Fails (and stays closed) while the cause is still there, or while a
    /// reader still holds the old handle (its file lock); the caller retries later.
    pub(crate) fn reopen(&self) -> Result<(), StoreError> {
        let mut slot = self.db.write().unwrap_or_else(PoisonError::into_inner);
        // Dropping the last handle closes the file and releases redb's lock on it.
        slot.take();
        let dir = self.path.parent().unwrap_or(Path::new("."));
        if std::fs::metadata(&self.path).is_ok_and(|m| m.len() == 0) {
            return Err(StoreError::EmptyFile(self.path.clone()));
        }
        let db = open_database(dir, &self.path)?;
        // What only the log held was lost from the file with the failed handle.
        self.log.reopen(&db)?;
        *slot = Some(Arc::new(db));
        Ok(())
    }

    /// The current database handle.
    fn db(&self) -> Result<Arc<Database>, StoreError> {
        self.db
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or(StoreError::Closed)
    }

    /// Path of the data file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Reads every project, key, check (with its channel links) and channel.
    #[cfg(test)]
    pub(crate) fn load(&self) -> Result<Snapshot, StoreError> {
        Snapshot::with_checks(|on_check| self.load_streaming(on_check))
    }

    /// Reads every project, key, check (with its channel links) and channel, handing each
    /// check to `on_check` as it is read.
    pub(crate) fn load_streaming(
        &self,
        on_check: &mut dyn FnMut(Check),
    ) -> Result<Snapshot, StoreError> {
        self.apply_queued()?;
        let txn = self.db()?.begin_read()?;
        let mut snap = Snapshot::default();
        for entry in txn.open_table(PROJECTS)?.iter()? {
            let (_, v) = entry?;
            snap.projects.push(records::decode_project(v.value())?);
        }
        for entry in txn.open_table(API_KEYS)?.iter()? {
            let (_, v) = entry?;
            snap.api_keys
                .push(decode::<ApiKeyRecord>(v.value(), "api key")?.into());
        }
        for entry in txn.open_table(CHANNELS)?.iter()? {
            let (_, v) = entry?;
            snap.channels
                .push(decode::<ChannelRecord>(v.value(), "channel")?.into());
        }
        snap.next_outbox_seq = match txn.open_table(OUTBOX)?.last()? {
            Some((k, _)) => k.value() + 1,
            None => 1,
        };
        // Never below a number handed out before (a failed commit's, or one trimmed away):
        // the write-ahead log's records are told apart by it.
        snap.next_journal_seq = match txn.open_table(JOURNAL)?.last()? {
            Some((k, _)) => k.value() + 1,
            None => 1,
        }
        .max(self.log.next_seq());
        snap.sessions = read_sessions(&txn)?;
        let links = txn.open_table(CHECK_CHANNELS)?;
        let mut link_iter = links.iter()?.peekable();
        // Both tables are ordered by check UUID, so links are merged in one pass.
        for entry in txn.open_table(CHECKS)?.iter()? {
            let (_, v) = entry?;
            let mut check = records::decode_check(v.value())?;
            while let Some(Ok((k, _))) = link_iter.peek() {
                let key = k.value();
                let owner = Uuid::from_slice(&key[..16]).unwrap_or_default();
                match owner.cmp(&check.uuid) {
                    std::cmp::Ordering::Less => {}
                    std::cmp::Ordering::Equal => check.channels.push(keys::link_channel(&key)),
                    std::cmp::Ordering::Greater => break,
                }
                link_iter.next();
            }
            if let Some(Err(_)) = link_iter.peek()
                && let Some(Err(e)) = link_iter.next()
            {
                return Err(e.into());
            }
            check.channels.sort();
            on_check(check);
        }
        Ok(snap)
    }

    /// When the commits that only the write-ahead log holds are due to be made durable in the file
    /// ([`FileStore::checkpoint`]); `None` while there are none.
    pub(crate) fn checkpoint_due(&self) -> Option<std::time::Instant> {
        self.log.checkpoint_due()
    }

    /// Makes every commit durable in the file (one durable commit) and cuts the write-ahead log
    /// behind it.
    pub(crate) fn checkpoint(&self) -> Result<(), StoreError> {
        crash_point::reached(Point::Checkpoint);
        self.log.set_checkpointing(true);
        let done = self.begin_write().and_then(|mut txn| {
            txn.force_durable();
            txn.commit()
        });
        self.log.set_checkpointing(false);
        if done.is_err() {
            self.log.retry_later();
        }
        done
    }

    /// Whether a checkpoint is committing right now (a write that opens the file waits for
    /// it; one that can wait, like a fold, should).
    pub(crate) fn checkpointing(&self) -> bool {
        self.log.checkpointing()
    }

    /// Puts the queued records of acknowledged pings in the journal table (without a sync:
    /// the log holds them), so that reads of the file see every acknowledged ping.
    fn apply_queued(&self) -> Result<(), StoreError> {
        if self.log.queued_len() == 0 {
            return Ok(());
        }
        let mut txn = self.begin_write()?;
        txn.open_file()?;
        txn.commit()
    }

    /// How many segment files the write-ahead log has.
    #[cfg(test)]
    pub(crate) fn log_segments(&self) -> usize {
        self.log.segments()
    }

    /// Starts the write transaction of one batch. Blocks while another is open.
    pub(crate) fn begin_write(&self) -> Result<FileTxn, StoreError> {
        Ok(FileTxn::new(self.db()?, self.log.clone()))
    }

    /// The newest `limit` pings of a check, newest first.
    pub(crate) fn pings(&self, check: Uuid, limit: usize) -> Result<Vec<Ping>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_table(PINGS)?;
        let (lo, hi) = keys::check_range24(check);
        let mut out = Vec::new();
        for entry in table.range(lo..=hi)?.rev().take(limit) {
            let (k, v) = entry?;
            let n = keys::ping_n(&k.value());
            out.push(decode::<PingRecord>(v.value(), "ping")?.into_ping(check, n)?);
        }
        Ok(out)
    }

    /// The stored body of ping `n`, if it exists and is not empty.
    pub(crate) fn ping_body(&self, check: Uuid, n: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_table(PING_BODIES)?;
        Ok(table
            .get(keys::ping_key(check, n))?
            .map(|v| v.value().to_vec())
            .filter(|b| !b.is_empty()))
    }

    /// Every stored flip of a check, newest first.
    pub(crate) fn flips(&self, check: Uuid) -> Result<Vec<Flip>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_table(FLIPS)?;
        let (lo, hi) = keys::check_range24(check);
        let mut out = Vec::new();
        for entry in table.range(lo..=hi)?.rev() {
            let (_, v) = entry?;
            out.push(decode::<FlipRecord>(v.value(), "flip")?.into_flip(check)?);
        }
        Ok(out)
    }

    /// Checks of a (project, slug) according to the slug index.
    #[cfg(test)]
    pub(crate) fn checks_by_slug(
        &self,
        project: Uuid,
        slug: &str,
    ) -> Result<Vec<Uuid>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_multimap_table(SLUG_INDEX)?;
        let mut out = Vec::new();
        for v in table.get(keys::slug_key(project, slug))? {
            out.push(Uuid::from_u128(v?.value()));
        }
        Ok(out)
    }

    /// Every queued alert, oldest first.
    pub(crate) fn outbox(&self) -> Result<Vec<OutboxEntry>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let mut out = Vec::new();
        for entry in txn.open_table(OUTBOX)?.iter()? {
            let (k, v) = entry?;
            out.push(decode::<OutboxRecord>(v.value(), "outbox")?.into_entry(k.value())?);
        }
        Ok(out)
    }

    /// How many alerts wait in the outbox.
    pub(crate) fn outbox_len(&self) -> Result<u64, StoreError> {
        let txn = self.db()?.begin_read()?;
        Ok(txn.open_table(OUTBOX)?.len()?)
    }

    /// Every queued alert with its retry state (None before the first try), oldest first.
    pub(crate) fn outbox_pending(&self) -> Result<Vec<(OutboxEntry, Option<Tries>)>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let tries = txn.open_table(OUTBOX_TRIES)?;
        let mut out = Vec::new();
        for entry in txn.open_table(OUTBOX)?.iter()? {
            let (k, v) = entry?;
            let seq = k.value();
            let e = decode::<OutboxRecord>(v.value(), "outbox")?.into_entry(seq)?;
            let t = match tries.get(seq)? {
                Some(t) => Some(decode::<TriesRecord>(t.value(), "outbox tries")?.into()),
                None => None,
            };
            out.push((e, t));
        }
        Ok(out)
    }

    /// The newest `limit` delivery attempts to a channel, newest first.
    pub(crate) fn deliveries(
        &self,
        channel: Uuid,
        limit: usize,
    ) -> Result<Vec<Delivery>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_table(DELIVERIES)?;
        let (lo, hi) = keys::check_range24(channel);
        let mut out = Vec::new();
        for entry in table.range(lo..=hi)?.rev().take(limit) {
            let (_, v) = entry?;
            out.push(decode::<DeliveryRecord>(v.value(), "delivery")?.into_delivery(channel));
        }
        Ok(out)
    }

    /// Every pending repeat alert: (check, channel, due time in µs).
    pub(crate) fn repeats(&self) -> Result<Vec<(Uuid, Uuid, i64)>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let mut out = Vec::new();
        for entry in txn.open_table(REPEATS)?.iter()? {
            let (k, v) = entry?;
            let key = k.value();
            let check = Uuid::from_slice(&key[..16]).unwrap_or_default();
            out.push((check, keys::link_channel(&key), v.value()));
        }
        Ok(out)
    }

    /// Calls `f` with every journal entry's sequence number and ping, oldest first (replayed
    /// at start). Streams: bodies are not kept.
    pub(crate) fn for_each_journaled(
        &self,
        f: &mut dyn FnMut(u64, Ping),
    ) -> Result<(), StoreError> {
        let txn = self.db()?.begin_read()?;
        for entry in txn.open_table(JOURNAL)?.iter()? {
            let (k, v) = entry?;
            f(k.value(), records::journal_ping(v.value())?);
        }
        Ok(())
    }

    /// How many entries the journal holds (folded or not).
    pub(crate) fn journal_len(&self) -> Result<u64, StoreError> {
        let txn = self.db()?.begin_read()?;
        Ok(txn.open_table(JOURNAL)?.len()? + self.log.queued_len() as u64)
    }

    /// The check whose per-check badge key is `badge` (kept on disk, not in memory: badges
    /// are rare next to pings, and a million checks need every byte of memory).
    pub(crate) fn check_by_badge_key(&self, badge: Uuid) -> Result<Option<Uuid>, StoreError> {
        let txn = self.db()?.begin_read()?;
        Ok(txn
            .open_table(BADGE_KEYS)?
            .get(badge.as_u128())?
            .map(|v| Uuid::from_u128(v.value())))
    }

    /// How many checks the file holds.
    pub(crate) fn check_count(&self) -> Result<u64, StoreError> {
        let txn = self.db()?.begin_read()?;
        Ok(txn.open_table(CHECKS)?.len()?)
    }

    /// A cheap read that proves the file answers (for `/api/v3/status/`).
    pub(crate) fn health_check(&self) -> Result<u64, StoreError> {
        let txn = self.db()?.begin_read()?;
        Ok(txn.open_table(PROJECTS)?.len()?)
    }

    /// A value from the meta table.
    pub(crate) fn meta(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self.db()?.begin_read()?;
        Ok(txn.open_table(META)?.get(key)?.map(|v| v.value().to_vec()))
    }
}

/// Every stored session. A file written before sessions existed has no table, which means no
/// sessions: opening creates every table, so this only guards a file that skipped that step.
pub(crate) fn read_sessions(
    txn: &redb::ReadTransaction,
) -> Result<Vec<([u8; 32], Session)>, StoreError> {
    let table = match txn.open_table(SESSIONS) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut out = Vec::new();
    for entry in table.iter()? {
        let (k, v) = entry?;
        out.push((
            k.value(),
            decode::<SessionRecord>(v.value(), "session")?.into(),
        ));
    }
    Ok(out)
}

pub(crate) use crate::store::DELIVERIES_KEPT;
pub(crate) use backup::BackupReport;
pub(crate) use write::FileTxn;

#[cfg(test)]
mod log_tests;
#[cfg(test)]
mod tests;
