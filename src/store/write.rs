//! Write transactions: every change to the file goes through [`WriteTxn`], which keeps the
//! derived tables (slug index, badge keys, links) in step with the records it writes.

use redb::ReadableTable;
use uuid::Uuid;

use crate::model::{ApiKey, Channel, Check, Flip, OutboxEntry, Ping, Project};
use crate::store::records::{
    ApiKeyRecord, ChannelRecord, CheckRecord, FlipRecord, JournalRecord, OutboxRecord, PingRecord,
    ProjectRecord, encode,
};
use crate::store::{
    API_KEYS, BADGE_KEYS, CHANNELS, CHECK_CHANNELS, CHECKS, FLIPS, JOURNAL, JournaledPing, META,
    OUTBOX, PING_BODIES, PINGS, PROJECTS, SLUG_INDEX, StoreError, journal_entry, keys,
};

/// One write transaction. Nothing it does is visible or durable before [`WriteTxn::commit`].
pub struct WriteTxn {
    pub(super) txn: redb::WriteTransaction,
}

impl WriteTxn {
    pub fn put_meta(&mut self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.txn.open_table(META)?.insert(key, value)?;
        Ok(())
    }

    pub fn put_project(&mut self, project: &Project) -> Result<(), StoreError> {
        let bytes = encode(&ProjectRecord::from(project))?;
        self.txn
            .open_table(PROJECTS)?
            .insert(project.uuid.as_u128(), bytes.as_slice())?;
        Ok(())
    }

    /// Removes a project record. The caller removes its checks, channels and keys first.
    pub fn delete_project(&mut self, project: Uuid) -> Result<(), StoreError> {
        self.txn.open_table(PROJECTS)?.remove(project.as_u128())?;
        Ok(())
    }

    pub fn put_api_key(&mut self, key: &ApiKey) -> Result<(), StoreError> {
        let id = keys::api_key_id(&key.id)
            .ok_or_else(|| StoreError::Corrupt(format!("bad api key id {:?}", key.id)))?;
        let bytes = encode(&ApiKeyRecord::from(key))?;
        self.txn
            .open_table(API_KEYS)?
            .insert(id, bytes.as_slice())?;
        Ok(())
    }

    pub fn delete_api_key(&mut self, id: &str) -> Result<(), StoreError> {
        if let Some(id) = keys::api_key_id(id) {
            self.txn.open_table(API_KEYS)?.remove(id)?;
        }
        Ok(())
    }

    /// Writes a check record; `old_slug` is the slug it had before (None for a new check),
    /// so the slug index follows (and a new check's badge key is indexed).
    pub fn put_check(&mut self, check: &Check, old_slug: Option<&str>) -> Result<(), StoreError> {
        let bytes = encode(&CheckRecord::from(check))?;
        self.txn
            .open_table(CHECKS)?
            .insert(check.uuid.as_u128(), bytes.as_slice())?;
        if old_slug.is_none() {
            let mut badges = self.txn.open_table(BADGE_KEYS)?;
            badges.insert(check.badge_key.as_u128(), check.uuid.as_u128())?;
        }
        if old_slug != Some(check.slug.as_str()) {
            let mut index = self.txn.open_multimap_table(SLUG_INDEX)?;
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

    /// The check that owns a per-check badge key, as this transaction sees it.
    pub fn check_by_badge_key(&mut self, badge: Uuid) -> Result<Option<Uuid>, StoreError> {
        Ok(self
            .txn
            .open_table(BADGE_KEYS)?
            .get(badge.as_u128())?
            .map(|v| Uuid::from_u128(v.value())))
    }

    /// Deletes a check with its pings, bodies, flips, links and slug index entry.
    pub fn delete_check(&mut self, check: &Check) -> Result<(), StoreError> {
        let id = check.uuid;
        self.txn.open_table(CHECKS)?.remove(id.as_u128())?;
        self.txn
            .open_table(BADGE_KEYS)?
            .remove(check.badge_key.as_u128())?;
        self.txn
            .open_multimap_table(SLUG_INDEX)?
            .remove(keys::slug_key(check.project, &check.slug), id.as_u128())?;
        let (lo, hi) = keys::check_range24(id);
        for table in [PINGS, PING_BODIES, FLIPS] {
            self.txn
                .open_table(table)?
                .retain_in(lo..=hi, |_, _| false)?;
        }
        let (lo, hi) = keys::check_range32(id);
        self.txn
            .open_table(CHECK_CHANNELS)?
            .retain_in(lo..=hi, |_, _| false)?;
        Ok(())
    }

    /// Replaces a check's channel links with `channels`.
    pub fn set_links(&mut self, check: Uuid, channels: &[Uuid]) -> Result<(), StoreError> {
        let mut table = self.txn.open_table(CHECK_CHANNELS)?;
        let (lo, hi) = keys::check_range32(check);
        table.retain_in(lo..=hi, |_, _| false)?;
        for channel in channels {
            table.insert(keys::link_key(check, *channel), ())?;
        }
        Ok(())
    }

    /// Removes one link (used when a channel is deleted).
    pub fn delete_link(&mut self, check: Uuid, channel: Uuid) -> Result<(), StoreError> {
        self.txn
            .open_table(CHECK_CHANNELS)?
            .remove(keys::link_key(check, channel))?;
        Ok(())
    }

    pub fn put_channel(&mut self, channel: &Channel) -> Result<(), StoreError> {
        let bytes = encode(&ChannelRecord::from(channel))?;
        self.txn
            .open_table(CHANNELS)?
            .insert(channel.uuid.as_u128(), bytes.as_slice())?;
        Ok(())
    }

    /// Removes a channel record. The caller removes its links first.
    pub fn delete_channel(&mut self, channel: Uuid) -> Result<(), StoreError> {
        self.txn.open_table(CHANNELS)?.remove(channel.as_u128())?;
        Ok(())
    }

    /// Records a ping and, when not empty, its body.
    pub fn put_ping(&mut self, ping: &Ping, body: &[u8]) -> Result<(), StoreError> {
        let key = keys::ping_key(ping.check, ping.n);
        let bytes = encode(&PingRecord::from(ping))?;
        self.txn.open_table(PINGS)?.insert(key, bytes.as_slice())?;
        if !body.is_empty() {
            self.txn.open_table(PING_BODIES)?.insert(key, body)?;
        }
        Ok(())
    }

    /// Appends a ping to the journal: the hot path writes only here, so a batch of pings to
    /// many checks dirties a page or two instead of two pages per check.
    pub fn put_journal(&mut self, seq: u64, ping: &Ping, body: &[u8]) -> Result<(), StoreError> {
        let record = JournalRecord {
            check: ping.check.as_u128(),
            n: ping.n,
            ping: PingRecord::from(ping),
            body: body.to_vec(),
        };
        let bytes = encode(&record)?;
        self.txn
            .open_table(JOURNAL)?
            .insert(seq, bytes.as_slice())?;
        Ok(())
    }

    /// Removes and returns the `limit` oldest journaled pings (including those written by this
    /// transaction), oldest first.
    pub fn take_journal(&mut self, limit: usize) -> Result<Vec<JournaledPing>, StoreError> {
        let mut table = self.txn.open_table(JOURNAL)?;
        let mut out = Vec::new();
        let mut last = None;
        for entry in table.iter()?.take(limit) {
            let (k, v) = entry?;
            out.push(journal_entry(v.value())?);
            last = Some(k.value());
        }
        // Read first, then delete exactly the range that was read.
        if let Some(last) = last {
            table.retain_in(..=last, |_, _| false)?;
        }
        Ok(out)
    }

    /// Deletes the pings (and bodies) of a check numbered below `keep_from`.
    pub fn prune_pings(&mut self, check: Uuid, keep_from: u64) -> Result<(), StoreError> {
        let lo = keys::ping_key(check, 0);
        let hi = keys::ping_key(check, keep_from);
        for table in [PINGS, PING_BODIES] {
            self.txn
                .open_table(table)?
                .retain_in(lo..hi, |_, _| false)?;
        }
        Ok(())
    }

    /// Records a flip. Two flips of one check in the same microsecond keep both: the later
    /// one moves forward to the next free microsecond.
    pub fn put_flip(&mut self, flip: &Flip) -> Result<(), StoreError> {
        let mut table = self.txn.open_table(FLIPS)?;
        let mut record = FlipRecord::from(flip);
        while table
            .get(keys::flip_key(flip.check, record.created_us))?
            .is_some()
        {
            record.created_us += 1;
        }
        let bytes = encode(&record)?;
        table.insert(
            keys::flip_key(flip.check, record.created_us),
            bytes.as_slice(),
        )?;
        Ok(())
    }

    /// Queues an alert.
    pub fn put_outbox(&mut self, entry: &OutboxEntry) -> Result<(), StoreError> {
        let bytes = encode(&OutboxRecord::from(entry))?;
        self.txn
            .open_table(OUTBOX)?
            .insert(entry.seq, bytes.as_slice())?;
        Ok(())
    }

    /// Deletes the flips of `check` older than `before_us`.
    pub fn prune_flips(&mut self, check: Uuid, before_us: i64) -> Result<(), StoreError> {
        let lo = keys::flip_key(check, i64::MIN);
        let hi = keys::flip_key(check, before_us);
        self.txn
            .open_table(FLIPS)?
            .retain_in(lo..hi, |_, _| false)?;
        Ok(())
    }

    /// Makes the transaction durable (fsync) and visible.
    pub fn commit(self) -> Result<(), StoreError> {
        self.txn.commit()?;
        Ok(())
    }

    /// Drops everything the transaction did.
    pub fn abort(self) -> Result<(), StoreError> {
        self.txn.abort()?;
        Ok(())
    }
}
