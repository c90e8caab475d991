//! What the data file's durable state covers of the write-ahead log ([`wal`](super::wal)), and the
//! checkpoint that makes it cover everything.
//!
//! A commit of pings alone is durable once its journal entries are synced to the log; it does
//! not open the data file at all: its records wait in a queue for the next transaction that
//! does, which puts them in the journal table without a sync. Every durable commit (any other
//! write, or a checkpoint) stores `journal_next`, one past the highest journal entry the file
//! holds, in the meta table: the file then holds every entry below it durably, and the log's
//! segments below it can go. At open, log records numbered from `journal_next` on are put back
//! into the journal table ([`redo`]) and the log starts afresh; the service's start-up replay
//! of the journal then brings memory up to date through the same pure functions that recorded
//! the pings.
//!
//! A checkpoint is due [`CHECKPOINT_EVERY`] after the first commit the log alone holds, or as
//! soon as [`CHECKPOINT_BYTES`] were appended: no timer runs while nothing waits.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use redb::{Database, ReadableDatabase, ReadableTable};

use crate::store::StoreError;
use crate::store::embedded::wal::{Mark, Record, SEGMENT_BYTES, WAL_DIR, Wal};
use crate::store::embedded::{JOURNAL, META};

/// Meta key of the durable mark: every journal entry numbered below it is in the file.
pub(crate) const JOURNAL_NEXT: &str = "journal_next";
/// Longest a commit waits in the log alone before a checkpoint.
pub(crate) const CHECKPOINT_EVERY: Duration = Duration::from_secs(5);
/// Log bytes after which a checkpoint is due at once (a segment's worth: the log stays at
/// one or two segments).
pub(crate) const CHECKPOINT_BYTES: u64 = SEGMENT_BYTES;

/// Commits the log holds that the file does not hold durably yet.
#[derive(Debug, Default)]
struct Pending {
    since: Option<Instant>,
    bytes: u64,
}

/// The write-ahead log and the marks around it; shared by the store and its write transactions.
#[derive(Debug)]
pub(crate) struct PingLog {
    dir: PathBuf,
    wal: Mutex<Wal>,
    /// One past the highest journal sequence number handed to a transaction.
    next_seq: AtomicU64,
    /// `journal_next` as the last durable commit stored it.
    durable_mark: AtomicU64,
    /// One past the highest journal entry a commit put in the file (durable or not).
    file_next: AtomicU64,
    pending: Mutex<Pending>,
    /// Journal records of batches of pings alone, synced to the log and acknowledged, that
    /// no transaction has put in the journal table yet: the next write transaction that
    /// opens the file takes them first ([`PingLog::take_queued`]), in order.
    queued: Mutex<Vec<Record>>,
    /// A checkpoint is committing (on a thread of its own): batches that would need the file
    /// for no good reason (a fold) wait for the next one.
    checkpointing: AtomicBool,
}

fn io_error(dir: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: dir.to_path_buf(),
        source,
    }
}

/// Meta key of the data file's id, which names the log segments that belong to it. A backup
/// gets an id of its own ([`new_file_id`]).
pub(crate) const FILE_ID: &str = "file_id";

/// A fresh data file id.
pub(crate) fn new_file_id() -> u128 {
    uuid::Uuid::new_v4().as_u128()
}

/// The data file's id, given one now if it has none (a file from before the log).
fn file_id(db: &Database) -> Result<u128, StoreError> {
    let txn = db.begin_read()?;
    let stored = txn
        .open_table(META)?
        .get(FILE_ID)?
        .and_then(|v| <[u8; 16]>::try_from(v.value()).ok())
        .map(u128::from_be_bytes);
    drop(txn);
    if let Some(id) = stored {
        return Ok(id);
    }
    let id = new_file_id();
    let txn = db.begin_write()?;
    txn.open_table(META)?
        .insert(FILE_ID, id.to_be_bytes().as_slice())?;
    txn.commit()?;
    Ok(id)
}

/// The durable mark stored in the file (0 when none was ever stored).
fn stored_mark(db: &Database) -> Result<u64, StoreError> {
    let txn = db.begin_read()?;
    let meta = txn.open_table(META)?;
    let value = meta.get(JOURNAL_NEXT)?;
    Ok(value
        .and_then(|v| <[u8; 8]>::try_from(v.value()).ok())
        .map_or(0, u64::from_be_bytes))
}

/// One past the newest entry of the journal table (1 when it is empty).
fn journal_end(db: &Database) -> Result<u64, StoreError> {
    let txn = db.begin_read()?;
    let journal = txn.open_table(JOURNAL)?;
    let last = journal.last()?.map(|(k, _)| k.value());
    Ok(last.map_or(1, |k| k + 1))
}

/// Puts the log's records numbered from the file's durable mark on back into the journal
/// table, in one durable commit, and answers how many. They are the pings of commits that
/// were durable in the log alone when the process stopped.
fn redo(db: &Database, records: Vec<Record>, mark: u64) -> Result<(u64, usize), StoreError> {
    let redo: Vec<Record> = records.into_iter().filter(|(s, _)| *s >= mark).collect();
    if redo.is_empty() {
        return Ok((mark, 0));
    }
    let next = redo
        .iter()
        .map(|(s, _)| s + 1)
        .max()
        .unwrap_or(mark)
        .max(mark);
    let txn = db.begin_write()?;
    {
        let mut journal = txn.open_table(JOURNAL)?;
        for (seq, bytes) in &redo {
            journal.insert(*seq, bytes.as_slice())?;
        }
        txn.open_table(META)?
            .insert(JOURNAL_NEXT, next.to_be_bytes().as_slice())?;
    }
    txn.commit()?;
    Ok((next, redo.len()))
}

impl PingLog {
    /// Opens the log beside the data file `db` lives in (`data_dir`), redoes what only the
    /// log holds, and starts the log afresh.
    pub(crate) fn open(data_dir: &Path, db: &Database) -> Result<PingLog, StoreError> {
        let dir = data_dir.join(WAL_DIR);
        let (wal, records) = Wal::open(&dir, file_id(db)?).map_err(io_error(&dir))?;
        let log = PingLog {
            dir,
            wal: Mutex::new(wal),
            next_seq: AtomicU64::new(0),
            durable_mark: AtomicU64::new(0),
            file_next: AtomicU64::new(0),
            pending: Mutex::new(Pending::default()),
            queued: Mutex::new(Vec::new()),
            checkpointing: AtomicBool::new(false),
        };
        log.recover(db, records)?;
        Ok(log)
    }

    /// After the data file was reopened (an I/O error): reads the log again from disk and
    /// redoes it, as at start.
    pub(crate) fn reopen(&self, db: &Database) -> Result<(), StoreError> {
        let (wal, records) = Wal::open(&self.dir, file_id(db)?).map_err(io_error(&self.dir))?;
        *self.wal.lock().unwrap_or_else(PoisonError::into_inner) = wal;
        self.recover(db, records)
    }

    fn recover(&self, db: &Database, records: Vec<Record>) -> Result<(), StoreError> {
        // A file from before the log has no mark: its journal's own end is one.
        let stored = stored_mark(db)?.max(journal_end(db)?);
        let (mark, count) = redo(db, records, stored)?;
        if count > 0 {
            tracing::info!(
                pings = count,
                "redid the pings that only the write-ahead log held (the service stopped before a \
                 checkpoint)"
            );
        }
        let mut wal = self.wal.lock().unwrap_or_else(PoisonError::into_inner);
        wal.clear().map_err(io_error(&self.dir))?;
        self.next_seq.fetch_max(mark, Ordering::AcqRel);
        self.durable_mark.store(mark, Ordering::Release);
        self.file_next.store(mark, Ordering::Release);
        *self.pending.lock().unwrap_or_else(PoisonError::into_inner) = Pending::default();
        // What waited was in the log, and is in the journal table now.
        self.queued
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        Ok(())
    }

    /// Queues the records of a batch of pings alone, synced to the log, for the next
    /// transaction that opens the file.
    pub(crate) fn queue(&self, records: Vec<Record>) {
        self.queued
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(records);
        self.pending();
    }

    /// Takes every queued record (a write transaction puts them in the journal table).
    pub(crate) fn take_queued(&self) -> Vec<Record> {
        std::mem::take(&mut *self.queued.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Puts records taken by a transaction that did not commit back in front of the queue.
    pub(crate) fn requeue(&self, mut records: Vec<Record>) {
        if records.is_empty() {
            return;
        }
        let mut queued = self.queued.lock().unwrap_or_else(PoisonError::into_inner);
        records.append(&mut queued);
        *queued = records;
    }

    /// Queued records not in the journal table yet.
    pub(crate) fn queued_len(&self) -> usize {
        self.queued
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// One past the highest journal entry a commit put in the file.
    pub(crate) fn file_next(&self) -> u64 {
        self.file_next.load(Ordering::Acquire)
    }

    /// A commit put the journal entries below `next` in the file.
    pub(crate) fn in_file(&self, next: u64) {
        self.file_next.fetch_max(next, Ordering::AcqRel);
    }

    /// Marks a checkpoint as committing (true) or done.
    pub(crate) fn set_checkpointing(&self, on: bool) {
        self.checkpointing.store(on, Ordering::Release);
    }

    pub(crate) fn checkpointing(&self) -> bool {
        self.checkpointing.load(Ordering::Acquire)
    }

    /// Notes a journal sequence number handed to a transaction.
    pub(crate) fn saw(&self, seq: u64) {
        self.next_seq.fetch_max(seq + 1, Ordering::AcqRel);
    }

    /// One past every journal sequence number handed out: never handed out again, even if
    /// the transaction that had it failed.
    pub(crate) fn next_seq(&self) -> u64 {
        self.next_seq.load(Ordering::Acquire)
    }

    pub(crate) fn durable_mark(&self) -> u64 {
        self.durable_mark.load(Ordering::Acquire)
    }

    /// Appends and syncs the journal records of a commit of pings.
    pub(crate) fn append(&self, records: &[(u64, Vec<u8>)]) -> Result<Mark, StoreError> {
        let mut wal = self.wal.lock().unwrap_or_else(PoisonError::into_inner);
        let mark = wal.append(records).map_err(io_error(&self.dir))?;
        let bytes = wal.take_appended();
        drop(wal);
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .bytes += bytes;
        Ok(mark)
    }

    /// Takes back the records appended at `mark`, whose commit failed. If even that fails,
    /// the next start may redo pings whose callers were told they failed; the file is failing
    /// then anyway.
    pub(crate) fn retract(&self, mark: Mark) {
        let mut wal = self.wal.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(e) = wal.retract(mark) {
            tracing::error!("cannot take a failed commit back out of the write-ahead log: {e}");
        }
    }

    /// A commit the log alone makes durable has been made: a checkpoint becomes due.
    pub(crate) fn pending(&self) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        pending.since.get_or_insert_with(Instant::now);
    }

    /// A durable commit stored `mark`: the log's segments below it go, and unless records
    /// were queued meanwhile (by batches that went on during a checkpoint), nothing waits.
    pub(crate) fn covered(&self, mark: u64) {
        self.durable_mark.store(mark, Ordering::Release);
        self.in_file(mark);
        let more = self.queued_len() > 0;
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        *pending = Pending::default();
        if more {
            pending.since = Some(Instant::now());
        }
        drop(pending);
        let mut wal = self.wal.lock().unwrap_or_else(PoisonError::into_inner);
        // Left in place, a segment is only read (and skipped) at the next start.
        if let Err(e) = wal.cut(mark) {
            tracing::warn!("cannot remove old write-ahead log segments: {e}");
        }
    }

    /// A checkpoint failed: the next try is a full interval away (not at once, over and over).
    pub(crate) fn retry_later(&self) {
        *self.pending.lock().unwrap_or_else(PoisonError::into_inner) = Pending {
            since: Some(Instant::now()),
            bytes: 0,
        };
    }

    /// When a checkpoint is due: `None` while every commit is durable in the file.
    pub(crate) fn checkpoint_due(&self) -> Option<Instant> {
        let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let since = pending.since?;
        if pending.bytes >= CHECKPOINT_BYTES {
            return Some(since);
        }
        Some(since + CHECKPOINT_EVERY)
    }

    /// How many segment files the log has.
    #[cfg(test)]
    pub(crate) fn segments(&self) -> usize {
        self.wal
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .segment_count()
    }
}
