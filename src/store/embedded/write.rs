//! Write transactions: every change to the file goes through [`FileTxn`], which keeps the
//! derived tables (slug index, badge keys, links) in step with the records it writes.
//!
//! A transaction that adds pings to the journal and changes nothing else is made durable by
//! the write-ahead log instead of a sync of the data file: its journal entries are appended to the
//! log and synced; with pings alone it does not even open the file (the entries are queued for
//! the next transaction that does), and with folds of the journal the file commits without a
//! sync. Every other transaction commits durably, as does a checkpoint, which makes every
//! earlier commit durable too ([`FileTxn::commit`], docs/design.md).

use std::sync::Arc;

use redb::{Durability, ReadableTable};
use uuid::Uuid;

use crate::model::session::Session;
use crate::model::{ApiKey, Channel, Check, Delivery, Flip, OutboxEntry, Ping, Project, Tries};
use crate::store::embedded::crash_point::{self, Point};
use crate::store::embedded::ping_log::{JOURNAL_NEXT, PingLog};
use crate::store::embedded::{
    API_KEYS, BADGE_KEYS, CHANNELS, CHECK_CHANNELS, CHECKS, DELIVERIES, DELIVERIES_KEPT, FLIPS,
    JOURNAL, META, OUTBOX, OUTBOX_TRIES, PING_BODIES, PINGS, PROJECTS, REPEATS, SESSIONS,
    SLUG_INDEX,
};
use crate::store::records::{
    ApiKeyRecord, ChannelRecord, DeliveryRecord, FlipRecord, JournalRecord, OutboxRecord,
    PingRecord, SessionRecord, TriesRecord, decode, encode, encode_project,
};
use crate::store::{StoreError, keys};

/// Queued records after which a batch of pings alone opens the file to put them in.
const APPLY_QUEUED_AT: usize = 2048;

/// One write transaction. Nothing it does is visible or durable before [`FileTxn::commit`].
///
/// The file's own write transaction is opened only when something needs the file: a batch
/// of pings alone never opens it (its records go to the write-ahead log and the queue, see
/// [`FileTxn::commit`]), so it never waits for a checkpoint committing beside it. The first
/// transaction that opens the file puts the queued records in the journal table before
/// anything else.
pub struct FileTxn {
    db: Arc<redb::Database>,
    inner: Option<redb::WriteTransaction>,
    /// Queued records this transaction put in the journal table: back to the queue if it
    /// does not commit.
    taken: Vec<(u64, Vec<u8>)>,
    /// One past the highest journal entry this transaction put in the file.
    file_next: u64,
    /// Journal records of this transaction not inserted yet: they go in together, through
    /// one opened table, before anything reads the journal and at commit.
    journal: Vec<(u64, Vec<u8>)>,
    /// Every journal record of this transaction inserted into the table, for the write-ahead log.
    logged: Vec<(u64, Vec<u8>)>,
    /// Set by every write but the journal's: the commit must then be durable by itself.
    durable: bool,
    /// A checkpoint's transaction ([`FileTxn::force_durable`]).
    checkpoint: bool,
    log: Arc<PingLog>,
}

impl FileTxn {
    pub(super) fn new(db: Arc<redb::Database>, log: Arc<PingLog>) -> FileTxn {
        FileTxn {
            db,
            inner: None,
            taken: Vec::new(),
            file_next: 0,
            journal: Vec::new(),
            logged: Vec::new(),
            durable: false,
            checkpoint: false,
            log,
        }
    }

    /// The file's transaction, opened (and the queued records put in) on first use.
    fn file(&mut self) -> Result<&redb::WriteTransaction, StoreError> {
        if self.inner.is_none() {
            let txn = self.db.begin_write()?;
            // Held before anything can fail, so a failure puts them back (with any taken by
            // an earlier try of this transaction).
            self.taken.extend(self.log.take_queued());
            {
                let mut table = txn.open_table(JOURNAL)?;
                for (seq, bytes) in &self.taken {
                    table.insert(*seq, bytes.as_slice())?;
                    self.file_next = self.file_next.max(seq + 1);
                }
            }
            self.inner = Some(txn);
        }
        self.inner
            .as_ref()
            .ok_or_else(|| StoreError::Corrupt("the write transaction is gone".into()))
    }

    /// Opens the file's transaction now (which puts the queued records in the journal table).
    pub(crate) fn open_file(&mut self) -> Result<(), StoreError> {
        self.file().map(|_| ())
    }

    /// The file's transaction, for a write that the write-ahead log does not cover: the commit is
    /// durable.
    fn tables(&mut self) -> Result<&redb::WriteTransaction, StoreError> {
        self.durable = true;
        self.file()
    }

    /// Makes the commit durable by itself even if it wrote nothing but journal entries (a
    /// checkpoint: it makes every earlier commit durable with it).
    pub(crate) fn force_durable(&mut self) {
        self.durable = true;
        self.checkpoint = true;
    }

    pub(crate) fn put_meta(&mut self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.tables()?.open_table(META)?.insert(key, value)?;
        Ok(())
    }

    pub(crate) fn put_project(&mut self, project: &Project) -> Result<(), StoreError> {
        let bytes = encode_project(project)?;
        self.tables()?
            .open_table(PROJECTS)?
            .insert(project.uuid.as_u128(), bytes.as_slice())?;
        Ok(())
    }

    /// Removes a project record. The caller removes its checks, channels and keys first.
    pub(crate) fn delete_project(&mut self, project: Uuid) -> Result<(), StoreError> {
        self.tables()?
            .open_table(PROJECTS)?
            .remove(project.as_u128())?;
        Ok(())
    }

    pub(crate) fn put_api_key(&mut self, key: &ApiKey) -> Result<(), StoreError> {
        let id = keys::api_key_id(&key.id)
            .ok_or_else(|| StoreError::Corrupt(format!("bad api key id {:?}", key.id)))?;
        let bytes = encode(&ApiKeyRecord::from(key))?;
        self.tables()?
            .open_table(API_KEYS)?
            .insert(id, bytes.as_slice())?;
        Ok(())
    }

    pub(crate) fn delete_api_key(&mut self, id: &str) -> Result<(), StoreError> {
        if let Some(id) = keys::api_key_id(id) {
            self.tables()?.open_table(API_KEYS)?.remove(id)?;
        }
        Ok(())
    }

    /// Writes a dashboard session under its id (SHA-256 of its token).
    pub(crate) fn put_session(
        &mut self,
        id: &[u8; 32],
        session: &Session,
    ) -> Result<(), StoreError> {
        let bytes = encode(&SessionRecord::from(session))?;
        self.tables()?
            .open_table(SESSIONS)?
            .insert(id, bytes.as_slice())?;
        Ok(())
    }

    /// Removes a dashboard session; removing one that is not there is no error.
    pub(crate) fn delete_session(&mut self, id: &[u8; 32]) -> Result<(), StoreError> {
        self.tables()?.open_table(SESSIONS)?.remove(id)?;
        Ok(())
    }

    /// Writes a check record; `old_slug` is the slug it had before (None for a new check),
    /// so the slug index follows (and a new check's badge key is indexed).
    pub(crate) fn put_check(
        &mut self,
        check: &Check,
        old_slug: Option<&str>,
    ) -> Result<(), StoreError> {
        let bytes = crate::store::records::encode_check(check)?;
        self.tables()?
            .open_table(CHECKS)?
            .insert(check.uuid.as_u128(), bytes.as_slice())?;
        if old_slug.is_none() {
            let mut badges = self.tables()?.open_table(BADGE_KEYS)?;
            badges.insert(check.badge_key.as_u128(), check.uuid.as_u128())?;
        }
        if old_slug != Some(check.slug.as_str()) {
            let mut index = self.tables()?.open_multimap_table(SLUG_INDEX)?;
            if let Some(old) = old_slug {
                index.remove(keys::slug_key(check.project, old), check.uuid.as_u128())?;
            }
            index.insert(
                keys::slug_key(check.project, &check.slug),
                check.uuid.as_u128(),
            )?;
        }
        Ok(())
    }

    /// Rewrites a check's record after a fold: it only catches up with the pings the journal
    /// holds (same slug, same badge key), so the write-ahead log covers it like the fold itself.
    pub(crate) fn put_folded_check(&mut self, check: &Check) -> Result<(), StoreError> {
        let bytes = crate::store::records::encode_check(check)?;
        self.file()?
            .open_table(CHECKS)?
            .insert(check.uuid.as_u128(), bytes.as_slice())?;
        Ok(())
    }

    /// The check that owns a per-check badge key, as this transaction sees it.
    pub(crate) fn check_by_badge_key(&mut self, badge: Uuid) -> Result<Option<Uuid>, StoreError> {
        // A read: it does not make the commit durable.
        Ok(self
            .file()?
            .open_table(BADGE_KEYS)?
            .get(badge.as_u128())?
            .map(|v| Uuid::from_u128(v.value())))
    }

    /// Deletes a check with its pings, bodies, flips, links and slug index entry.
    pub(crate) fn delete_check(&mut self, check: &Check) -> Result<(), StoreError> {
        let id = check.uuid;
        self.tables()?.open_table(CHECKS)?.remove(id.as_u128())?;
        self.tables()?
            .open_table(BADGE_KEYS)?
            .remove(check.badge_key.as_u128())?;
        self.tables()?
            .open_multimap_table(SLUG_INDEX)?
            .remove(keys::slug_key(check.project, &check.slug), id.as_u128())?;
        let (lo, hi) = keys::check_range24(id);
        for table in [PINGS, PING_BODIES, FLIPS] {
            self.tables()?
                .open_table(table)?
                .retain_in(lo..=hi, |_, _| false)?;
        }
        let (lo, hi) = keys::check_range32(id);
        self.tables()?
            .open_table(CHECK_CHANNELS)?
            .retain_in(lo..=hi, |_, ()| false)?;
        Ok(())
    }

    /// Replaces a check's channel links with `channels`.
    pub(crate) fn set_links(&mut self, check: Uuid, channels: &[Uuid]) -> Result<(), StoreError> {
        let mut table = self.tables()?.open_table(CHECK_CHANNELS)?;
        let (lo, hi) = keys::check_range32(check);
        table.retain_in(lo..=hi, |_, ()| false)?;
        for channel in channels {
            table.insert(keys::link_key(check, *channel), ())?;
        }
        Ok(())
    }

    /// Adds one link (used when a new channel is assigned to existing checks).
    pub(crate) fn put_link(&mut self, check: Uuid, channel: Uuid) -> Result<(), StoreError> {
        self.tables()?
            .open_table(CHECK_CHANNELS)?
            .insert(keys::link_key(check, channel), ())?;
        Ok(())
    }

    /// Removes one link (used when a channel is deleted).
    pub(crate) fn delete_link(&mut self, check: Uuid, channel: Uuid) -> Result<(), StoreError> {
        self.tables()?
            .open_table(CHECK_CHANNELS)?
            .remove(keys::link_key(check, channel))?;
        Ok(())
    }

    pub(crate) fn put_channel(&mut self, channel: &Channel) -> Result<(), StoreError> {
        let bytes = encode(&ChannelRecord::from(channel))?;
        self.tables()?
            .open_table(CHANNELS)?
            .insert(channel.uuid.as_u128(), bytes.as_slice())?;
        Ok(())
    }

    /// Removes a channel record with its delivery history. The caller removes its links
    /// first; its queued alerts and repeats are dropped by the delivery worker.
    pub(crate) fn delete_channel(&mut self, channel: Uuid) -> Result<(), StoreError> {
        self.tables()?
            .open_table(CHANNELS)?
            .remove(channel.as_u128())?;
        let (lo, hi) = keys::check_range24(channel);
        self.tables()?
            .open_table(DELIVERIES)?
            .retain_in(lo..=hi, |_, _| false)?;
        Ok(())
    }

    /// Records a ping and, when not empty, its body.
    #[cfg(test)]
    pub(crate) fn put_ping(&mut self, ping: &Ping, body: &[u8]) -> Result<(), StoreError> {
        let key = keys::ping_key(ping.check, ping.n);
        let bytes = encode(&PingRecord::from(ping))?;
        self.tables()?
            .open_table(PINGS)?
            .insert(key, bytes.as_slice())?;
        if !body.is_empty() {
            self.tables()?.open_table(PING_BODIES)?.insert(key, body)?;
        }
        Ok(())
    }

    /// Appends a ping to the journal: the hot path writes only here, so a batch of pings to
    /// many checks dirties a page or two instead of two pages per check.
    pub(crate) fn put_journal(
        &mut self,
        seq: u64,
        ping: &Ping,
        body: &[u8],
    ) -> Result<(), StoreError> {
        let record = JournalRecord {
            check: ping.check.as_u128(),
            n: ping.n,
            ping: PingRecord::from(ping),
            body: body.to_vec(),
        };
        self.log.saw(seq);
        self.journal.push((seq, encode(&record)?));
        Ok(())
    }

    fn flush_journal(&mut self) -> Result<(), StoreError> {
        if self.journal.is_empty() {
            return Ok(());
        }
        let records = std::mem::take(&mut self.journal);
        let mut next = self.file_next;
        {
            let mut table = self.file()?.open_table(JOURNAL)?;
            for (seq, bytes) in &records {
                table.insert(*seq, bytes.as_slice())?;
                next = next.max(seq + 1);
            }
        }
        self.file_next = next;
        self.logged.extend(records);
        Ok(())
    }

    /// Copies the journaled pings `seqs` (all of one check) into the pings and bodies tables.
    /// They stay in the journal until [`FileTxn::trim_journal`] passes them; copying one
    /// twice writes the same record again.
    pub(crate) fn fold_journal(&mut self, seqs: &[u64]) -> Result<(), StoreError> {
        self.flush_journal()?;
        let txn = self.file()?;
        let journal = txn.open_table(JOURNAL)?;
        let mut pings = txn.open_table(PINGS)?;
        let mut bodies = txn.open_table(PING_BODIES)?;
        for &seq in seqs {
            let entry = journal
                .get(seq)?
                .ok_or_else(|| StoreError::Corrupt(format!("journal entry {seq} is missing")))?;
            let record = decode::<JournalRecord>(entry.value(), "journal")?;
            let key = keys::ping_key(Uuid::from_u128(record.check), record.n);
            pings.insert(key, encode(&record.ping)?.as_slice())?;
            if !record.body.is_empty() {
                bodies.insert(key, record.body.as_slice())?;
            }
        }
        Ok(())
    }

    /// Removes the journal entries `seqs` (those of a deleted check).
    pub(crate) fn delete_journal(&mut self, seqs: &[u64]) -> Result<(), StoreError> {
        self.flush_journal()?;
        let mut table = self.tables()?.open_table(JOURNAL)?;
        for &seq in seqs {
            table.remove(seq)?;
        }
        Ok(())
    }

    /// Removes every journal entry numbered below `below` (all folded already).
    pub(crate) fn trim_journal(&mut self, below: u64) -> Result<(), StoreError> {
        self.flush_journal()?;
        self.file()?
            .open_table(JOURNAL)?
            .retain_in(..below, |_, _| false)?;
        Ok(())
    }

    /// Deletes the pings (and bodies) of a check numbered below `keep_from`.
    pub(crate) fn prune_pings(&mut self, check: Uuid, keep_from: u64) -> Result<(), StoreError> {
        let lo = keys::ping_key(check, 0);
        let hi = keys::ping_key(check, keep_from);
        for table in [PINGS, PING_BODIES] {
            self.tables()?
                .open_table(table)?
                .retain_in(lo..hi, |_, _| false)?;
        }
        Ok(())
    }

    /// Records a flip. Two flips of one check in the same microsecond keep both: the later
    /// one moves forward to the next free microsecond.
    pub(crate) fn put_flip(&mut self, flip: &Flip) -> Result<(), StoreError> {
        let mut table = self.tables()?.open_table(FLIPS)?;
        let mut record = FlipRecord::from(flip);
        record.created_us = free_microsecond(&table, flip.check, record.created_us)?;
        let bytes = encode(&record)?;
        table.insert(
            keys::flip_key(flip.check, record.created_us),
            bytes.as_slice(),
        )?;
        Ok(())
    }

    /// Queues an alert.
    pub(crate) fn put_outbox(&mut self, entry: &OutboxEntry) -> Result<(), StoreError> {
        let bytes = encode(&OutboxRecord::from(entry))?;
        self.tables()?
            .open_table(OUTBOX)?
            .insert(entry.seq, bytes.as_slice())?;
        Ok(())
    }

    /// Removes a delivered (or given up) alert with its retry state.
    pub(crate) fn delete_outbox(&mut self, seq: u64) -> Result<(), StoreError> {
        self.tables()?.open_table(OUTBOX)?.remove(seq)?;
        self.tables()?.open_table(OUTBOX_TRIES)?.remove(seq)?;
        Ok(())
    }

    /// Records a failed try of an outbox entry and when to try again.
    pub(crate) fn put_tries(&mut self, seq: u64, tries: &Tries) -> Result<(), StoreError> {
        let bytes = encode(&TriesRecord::from(tries))?;
        self.tables()?
            .open_table(OUTBOX_TRIES)?
            .insert(seq, bytes.as_slice())?;
        Ok(())
    }

    /// Records a delivery attempt and keeps only the channel's newest [`DELIVERIES_KEPT`].
    /// Two attempts in the same microsecond keep both (the later moves forward).
    pub(crate) fn put_delivery(&mut self, delivery: &Delivery) -> Result<(), StoreError> {
        let mut table = self.tables()?.open_table(DELIVERIES)?;
        let mut record = DeliveryRecord::from(delivery);
        record.at_us = free_microsecond(&table, delivery.channel, record.at_us)?;
        let bytes = encode(&record)?;
        table.insert(
            keys::flip_key(delivery.channel, record.at_us),
            bytes.as_slice(),
        )?;
        let (lo, hi) = keys::check_range24(delivery.channel);
        let oldest_kept = table
            .range(lo..=hi)?
            .rev()
            .nth(DELIVERIES_KEPT - 1)
            .transpose()?
            .map(|(k, _)| k.value());
        if let Some(oldest) = oldest_kept {
            table.retain_in(lo..oldest, |_, _| false)?;
        }
        Ok(())
    }

    /// Schedules the next repeat alert of (check, channel).
    pub(crate) fn put_repeat(
        &mut self,
        check: Uuid,
        channel: Uuid,
        due_us: i64,
    ) -> Result<(), StoreError> {
        self.tables()?
            .open_table(REPEATS)?
            .insert(keys::link_key(check, channel), due_us)?;
        Ok(())
    }

    /// When the next repeat alert of (check, channel) is due, if one is scheduled.
    pub(crate) fn repeat_due(
        &mut self,
        check: Uuid,
        channel: Uuid,
    ) -> Result<Option<i64>, StoreError> {
        // A read: it does not make the commit durable.
        Ok(self
            .file()?
            .open_table(REPEATS)?
            .get(keys::link_key(check, channel))?
            .map(|v| v.value()))
    }

    pub(crate) fn delete_repeat(&mut self, check: Uuid, channel: Uuid) -> Result<(), StoreError> {
        self.tables()?
            .open_table(REPEATS)?
            .remove(keys::link_key(check, channel))?;
        Ok(())
    }

    /// Deletes the flips of `check` older than `before_us`.
    pub(crate) fn prune_flips(&mut self, check: Uuid, before_us: i64) -> Result<(), StoreError> {
        let lo = keys::flip_key(check, i64::MIN);
        let hi = keys::flip_key(check, before_us);
        self.tables()?
            .open_table(FLIPS)?
            .retain_in(lo..hi, |_, _| false)?;
        Ok(())
    }

    /// Makes the transaction durable and visible, one of three ways:
    ///
    /// - It never opened the file (pings alone): its journal records are appended to the
    ///   write-ahead log and synced, then queued for the next transaction that opens the file.
    /// - It wrote nothing but journal entries and folds: the records are appended to the
    ///   log and synced, and the file commits without a sync.
    /// - Anything else (or a checkpoint) commits the file durably, with the durable mark.
    ///
    /// Until a durable commit (a checkpoint at the latest) the log alone makes the first two
    /// durable; after a crash the next start redoes them from the log.
    pub(crate) fn commit(mut self) -> Result<(), StoreError> {
        // Past a bound the batch puts the queue in the file itself, a bounded amount at a
        // time, rather than leaving it all to the next fold (which would then wait on it).
        let pings_alone = self.inner.is_none() && !self.durable;
        if pings_alone && (self.log.queued_len() < APPLY_QUEUED_AT || self.log.checkpointing()) {
            let records = std::mem::take(&mut self.journal);
            if !records.is_empty() {
                self.log.append(&records)?;
                self.log.queue(records);
            }
            return Ok(());
        }
        self.flush_journal()?;
        // A checkpoint with nothing queued opens the file only now.
        self.file()?;
        let mut inner = self
            .inner
            .take()
            .ok_or_else(|| StoreError::Corrupt("the write transaction is gone".into()))?;
        if self.durable {
            // Every entry below it is in the file now; entries queued meanwhile (during a
            // checkpoint) are numbered above it.
            let mark = self.log.file_next().max(self.file_next);
            let stored = (|| {
                if mark != self.log.durable_mark() {
                    inner
                        .open_table(META)?
                        .insert(JOURNAL_NEXT, mark.to_be_bytes().as_slice())?;
                }
                inner.commit()?;
                Ok::<(), StoreError>(())
            })();
            if let Err(e) = stored {
                self.log.requeue(std::mem::take(&mut self.taken));
                return Err(e);
            }
            self.taken.clear();
            if self.checkpoint {
                crash_point::reached(Point::CheckpointCommitted);
            }
            self.log.covered(mark);
            return Ok(());
        }
        let appended = if self.logged.is_empty() {
            None
        } else {
            match self.log.append(&self.logged) {
                Ok(mark) => Some(mark),
                Err(e) => {
                    self.log.requeue(std::mem::take(&mut self.taken));
                    return Err(e);
                }
            }
        };
        let committed = inner
            .set_durability(Durability::None)
            .map_err(|e| StoreError::Db(e.into()))
            .and_then(|()| inner.commit().map_err(StoreError::from));
        match committed {
            Ok(()) => {
                self.taken.clear();
                self.log.in_file(self.file_next);
                self.log.pending();
                Ok(())
            }
            Err(e) => {
                if let Some(mark) = appended {
                    self.log.retract(mark);
                }
                self.log.requeue(std::mem::take(&mut self.taken));
                Err(e)
            }
        }
    }

    /// Drops everything the transaction did.
    pub(crate) fn abort(mut self) -> Result<(), StoreError> {
        self.log.requeue(std::mem::take(&mut self.taken));
        if let Some(inner) = self.inner.take() {
            inner.abort()?;
        }
        Ok(())
    }
}

impl Drop for FileTxn {
    /// A transaction dropped without commit (a panicking job) gives the queued records it
    /// took back.
    fn drop(&mut self) {
        self.log.requeue(std::mem::take(&mut self.taken));
    }
}

/// The first microsecond at or after `us` under which `id` has no entry yet, in a table keyed
/// by (UUID, time): two events of one thing in the same microsecond both keep a key.
fn free_microsecond(
    table: &redb::Table<[u8; 24], &[u8]>,
    id: Uuid,
    mut us: i64,
) -> Result<i64, StoreError> {
    while table.get(keys::flip_key(id, us))?.is_some() {
        us += 1;
    }
    Ok(us)
}
