//! The PostgreSQL engine's write transaction: one SQL transaction per writer batch.
//!
//! Writes are collected, not sent one by one: [`PgTxn::commit`] sends `BEGIN`, every
//! statement of the batch and `COMMIT` pipelined on the writer's session, so a batch of a
//! thousand pings costs a few round trips, not a thousand. A read inside the batch (the
//! badge key's owner, a repeat's due time, the next free microsecond of a flip) first sends
//! what was collected, inside the same transaction, so it sees the batch's own writes.
//!
//! The journal keeps the embedded engine's meaning (acknowledged pings that the check's
//! stored record has not caught up with, replayed at start), but each ping is also written to
//! the pings and bodies tables at once: a read needs no fold here, so a fold is nothing.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use uuid::Uuid;

use super::conn::{Conn, Param, big, refs};
use super::store::get;
use crate::model::session::Session;
use crate::model::{ApiKey, Channel, Check, Delivery, Flip, OutboxEntry, Ping, Project, Tries};
use crate::store::records::{
    ApiKeyRecord, ChannelRecord, DeliveryRecord, FlipRecord, JournalRecord, OutboxRecord,
    PingRecord, SessionRecord, TriesRecord, encode, encode_check, encode_project,
};
use crate::store::{DELIVERIES_KEPT, StoreError, keys};

/// One statement waiting for the batch's commit.
struct Op {
    sql: &'static str,
    params: Vec<Param>,
}

/// Consecutive pings of a batch, sent as one statement per table (arrays unnested) instead of
/// one per ping: the ping path's rows, the bulk of every busy batch.
#[derive(Default)]
struct PingRows {
    seqs: Vec<i64>,
    journal: Vec<Vec<u8>>,
    checks: Vec<Uuid>,
    ns: Vec<i64>,
    records: Vec<Vec<u8>>,
    body_checks: Vec<Uuid>,
    body_ns: Vec<i64>,
    bodies: Vec<Vec<u8>>,
}

impl PingRows {
    /// The statements that write the rows.
    fn into_ops(self) -> Vec<Op> {
        let mut ops = vec![
            Op {
                sql: "INSERT INTO overdue_journal (seq, record) \
                      SELECT * FROM unnest($1::bigint[], $2::bytea[]) \
                      ON CONFLICT (seq) DO UPDATE SET record = excluded.record",
                params: vec![Param::I64s(self.seqs), Param::Byteas(self.journal)],
            },
            Op {
                sql: "INSERT INTO overdue_pings (check_id, n, record) \
                      SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::bytea[]) \
                      ON CONFLICT (check_id, n) DO UPDATE SET record = excluded.record",
                params: vec![
                    Param::Uuids(self.checks),
                    Param::I64s(self.ns),
                    Param::Byteas(self.records),
                ],
            },
        ];
        if !self.bodies.is_empty() {
            ops.push(Op {
                sql: "INSERT INTO overdue_ping_bodies (check_id, n, body) \
                      SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::bytea[]) \
                      ON CONFLICT (check_id, n) DO UPDATE SET body = excluded.body",
                params: vec![
                    Param::Uuids(self.body_checks),
                    Param::I64s(self.body_ns),
                    Param::Byteas(self.bodies),
                ],
            });
        }
        ops
    }
}

/// One batch's transaction. Nothing it does is visible or durable before [`PgTxn::commit`].
pub struct PgTxn {
    conn: Arc<Conn>,
    ops: Vec<Op>,
    /// Pings journaled since the last other statement (they go before it).
    pings: Option<PingRows>,
    /// `BEGIN` has been sent.
    begun: bool,
    /// Committed or rolled back.
    ended: bool,
}

impl Drop for PgTxn {
    fn drop(&mut self) {
        if self.begun && !self.ended {
            self.conn.dirty.store(true, Ordering::Release);
        }
    }
}

impl PgTxn {
    pub(super) fn new(conn: Arc<Conn>) -> PgTxn {
        PgTxn {
            conn,
            ops: Vec::new(),
            pings: None,
            begun: false,
            ended: false,
        }
    }

    #[allow(
        clippy::unnecessary_wraps,
        reason = "every write reads as the embedded engine's, which can fail at once"
    )]
    fn push(&mut self, sql: &'static str, params: Vec<Param>) -> Result<(), StoreError> {
        self.close_pings();
        self.ops.push(Op { sql, params });
        Ok(())
    }

    /// Puts the pings collected so far in line as their statements, before whatever follows.
    fn close_pings(&mut self) {
        if let Some(rows) = self.pings.take() {
            self.ops.extend(rows.into_ops());
        }
    }

    /// Sends what was collected (after `BEGIN`, the first time), pipelined.
    fn flush(&mut self) -> Result<(), StoreError> {
        self.close_pings();
        if self.ops.is_empty() {
            return Ok(());
        }
        let ops = std::mem::take(&mut self.ops);
        let begin = !self.begun;
        // From here on the session may be inside a transaction, whatever happens next.
        self.begun = true;
        let conn = &self.conn;
        conn.block(async {
            if begin {
                conn.clean().await?;
                conn.client.batch_execute("BEGIN").await?;
            }
            let mut statements = Vec::with_capacity(ops.len());
            for op in &ops {
                statements.push(conn.statement(op.sql).await?);
            }
            let params: Vec<_> = ops.iter().map(|op| refs(&op.params)).collect();
            let sent = statements
                .iter()
                .zip(&params)
                .map(|(statement, params)| conn.client.execute(statement, params));
            futures_util::future::try_join_all(sent).await?;
            Ok(())
        })
    }

    /// A read inside the transaction: it sees the batch's writes.
    fn read(
        &mut self,
        sql: &'static str,
        params: &[Param],
    ) -> Result<Vec<tokio_postgres::Row>, StoreError> {
        if !self.begun {
            // A read before any write still runs inside the transaction.
            self.push("SELECT 1", Vec::new())?;
        }
        self.flush()?;
        self.conn.query(sql, params)
    }

    pub(crate) fn put_meta(&mut self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.push(
            "INSERT INTO overdue_meta (key, value) VALUES ($1, $2) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            vec![key.into(), value.to_vec().into()],
        )
    }

    pub(crate) fn put_project(&mut self, project: &Project) -> Result<(), StoreError> {
        self.push(
            "INSERT INTO overdue_projects (uuid, record) VALUES ($1, $2) \
             ON CONFLICT (uuid) DO UPDATE SET record = excluded.record",
            vec![project.uuid.into(), encode_project(project)?.into()],
        )
    }

    pub(crate) fn delete_project(&mut self, project: Uuid) -> Result<(), StoreError> {
        self.push(
            "DELETE FROM overdue_projects WHERE uuid = $1",
            vec![project.into()],
        )
    }

    pub(crate) fn put_api_key(&mut self, key: &ApiKey) -> Result<(), StoreError> {
        let id = keys::api_key_id(&key.id)
            .ok_or_else(|| StoreError::Corrupt(format!("bad api key id {:?}", key.id)))?;
        self.push(
            "INSERT INTO overdue_api_keys (id, record) VALUES ($1, $2) \
             ON CONFLICT (id) DO UPDATE SET record = excluded.record",
            vec![id.to_vec().into(), encode(&ApiKeyRecord::from(key))?.into()],
        )
    }

    pub(crate) fn delete_api_key(&mut self, id: &str) -> Result<(), StoreError> {
        match keys::api_key_id(id) {
            Some(id) => self.push(
                "DELETE FROM overdue_api_keys WHERE id = $1",
                vec![id.to_vec().into()],
            ),
            None => Ok(()),
        }
    }

    pub(crate) fn put_session(
        &mut self,
        id: &[u8; 32],
        session: &Session,
    ) -> Result<(), StoreError> {
        self.push(
            "INSERT INTO overdue_sessions (id, record) VALUES ($1, $2) \
             ON CONFLICT (id) DO UPDATE SET record = excluded.record",
            vec![
                id.to_vec().into(),
                encode(&SessionRecord::from(session))?.into(),
            ],
        )
    }

    pub(crate) fn delete_session(&mut self, id: &[u8; 32]) -> Result<(), StoreError> {
        self.push(
            "DELETE FROM overdue_sessions WHERE id = $1",
            vec![id.to_vec().into()],
        )
    }

    pub(crate) fn put_check(
        &mut self,
        check: &Check,
        old_slug: Option<&str>,
    ) -> Result<(), StoreError> {
        self.put_folded_check(check)?;
        if old_slug.is_none() {
            self.push(
                "INSERT INTO overdue_badge_keys (badge_key, check_id) VALUES ($1, $2) \
                 ON CONFLICT (badge_key) DO UPDATE SET check_id = excluded.check_id",
                vec![check.badge_key.into(), check.uuid.into()],
            )?;
        }
        if old_slug != Some(check.slug.as_str()) {
            if let Some(old) = old_slug {
                self.push(
                    "DELETE FROM overdue_slug_index \
                     WHERE project = $1 AND slug = $2 AND check_id = $3",
                    vec![check.project.into(), old.into(), check.uuid.into()],
                )?;
            }
            self.push(
                "INSERT INTO overdue_slug_index (project, slug, check_id) VALUES ($1, $2, $3) \
                 ON CONFLICT DO NOTHING",
                vec![
                    check.project.into(),
                    check.slug.as_str().into(),
                    check.uuid.into(),
                ],
            )?;
        }
        Ok(())
    }

    pub(crate) fn put_folded_check(&mut self, check: &Check) -> Result<(), StoreError> {
        self.push(
            "INSERT INTO overdue_checks (uuid, record) VALUES ($1, $2) \
             ON CONFLICT (uuid) DO UPDATE SET record = excluded.record",
            vec![check.uuid.into(), encode_check(check)?.into()],
        )
    }

    pub(crate) fn check_by_badge_key(&mut self, badge: Uuid) -> Result<Option<Uuid>, StoreError> {
        let rows = self.read(
            "SELECT check_id FROM overdue_badge_keys WHERE badge_key = $1",
            &[badge.into()],
        )?;
        rows.first().map(|row| get(row, 0)).transpose()
    }

    pub(crate) fn delete_check(&mut self, check: &Check) -> Result<(), StoreError> {
        let id = check.uuid;
        self.push(
            "DELETE FROM overdue_checks WHERE uuid = $1",
            vec![id.into()],
        )?;
        self.push(
            "DELETE FROM overdue_badge_keys WHERE badge_key = $1",
            vec![check.badge_key.into()],
        )?;
        self.push(
            "DELETE FROM overdue_slug_index WHERE project = $1 AND slug = $2 AND check_id = $3",
            vec![check.project.into(), check.slug.as_str().into(), id.into()],
        )?;
        for sql in [
            "DELETE FROM overdue_pings WHERE check_id = $1",
            "DELETE FROM overdue_ping_bodies WHERE check_id = $1",
            "DELETE FROM overdue_flips WHERE check_id = $1",
            "DELETE FROM overdue_check_channels WHERE check_id = $1",
        ] {
            self.push(sql, vec![id.into()])?;
        }
        Ok(())
    }

    pub(crate) fn set_links(&mut self, check: Uuid, channels: &[Uuid]) -> Result<(), StoreError> {
        self.push(
            "DELETE FROM overdue_check_channels WHERE check_id = $1",
            vec![check.into()],
        )?;
        for channel in channels {
            self.put_link(check, *channel)?;
        }
        Ok(())
    }

    pub(crate) fn put_link(&mut self, check: Uuid, channel: Uuid) -> Result<(), StoreError> {
        self.push(
            "INSERT INTO overdue_check_channels (check_id, channel) VALUES ($1, $2) \
             ON CONFLICT DO NOTHING",
            vec![check.into(), channel.into()],
        )
    }

    pub(crate) fn delete_link(&mut self, check: Uuid, channel: Uuid) -> Result<(), StoreError> {
        self.push(
            "DELETE FROM overdue_check_channels WHERE check_id = $1 AND channel = $2",
            vec![check.into(), channel.into()],
        )
    }

    pub(crate) fn put_channel(&mut self, channel: &Channel) -> Result<(), StoreError> {
        self.push(
            "INSERT INTO overdue_channels (uuid, record) VALUES ($1, $2) \
             ON CONFLICT (uuid) DO UPDATE SET record = excluded.record",
            vec![
                channel.uuid.into(),
                encode(&ChannelRecord::from(channel))?.into(),
            ],
        )
    }

    pub(crate) fn delete_channel(&mut self, channel: Uuid) -> Result<(), StoreError> {
        self.push(
            "DELETE FROM overdue_channels WHERE uuid = $1",
            vec![channel.into()],
        )?;
        self.push(
            "DELETE FROM overdue_deliveries WHERE channel = $1",
            vec![channel.into()],
        )
    }

    /// Journals a ping and stores it (with its body) as one of the check's pings at once.
    pub(crate) fn put_journal(
        &mut self,
        seq: u64,
        ping: &Ping,
        body: &[u8],
    ) -> Result<(), StoreError> {
        let record = PingRecord::from(ping);
        let ping_bytes = encode(&record)?;
        // The replay at start reads only the ping: the body is in the bodies table.
        let journal = encode(&JournalRecord {
            check: ping.check.as_u128(),
            n: ping.n,
            ping: record,
            body: Vec::new(),
        })?;
        let n = i64::try_from(ping.n).unwrap_or(i64::MAX);
        let rows = self.pings.get_or_insert_default();
        rows.seqs.push(i64::try_from(seq).unwrap_or(i64::MAX));
        rows.journal.push(journal);
        rows.checks.push(ping.check);
        rows.ns.push(n);
        rows.records.push(ping_bytes);
        if !body.is_empty() {
            rows.body_checks.push(ping.check);
            rows.body_ns.push(n);
            rows.bodies.push(body.to_vec());
        }
        Ok(())
    }

    /// Nothing to copy: [`PgTxn::put_journal`] stored the pings already.
    #[allow(
        clippy::unused_self,
        clippy::unnecessary_wraps,
        reason = "one signature for both engines' transactions"
    )]
    pub(crate) fn fold_journal(&mut self, _seqs: &[u64]) -> Result<(), StoreError> {
        Ok(())
    }

    pub(crate) fn delete_journal(&mut self, seqs: &[u64]) -> Result<(), StoreError> {
        let seqs = seqs
            .iter()
            .map(|&s| i64::try_from(s).unwrap_or(i64::MAX))
            .collect();
        self.push(
            "DELETE FROM overdue_journal WHERE seq = ANY($1)",
            vec![Param::I64s(seqs)],
        )
    }

    pub(crate) fn trim_journal(&mut self, below: u64) -> Result<(), StoreError> {
        self.push(
            "DELETE FROM overdue_journal WHERE seq < $1",
            vec![big(below)],
        )
    }

    pub(crate) fn prune_pings(&mut self, check: Uuid, keep_from: u64) -> Result<(), StoreError> {
        self.push(
            "DELETE FROM overdue_pings WHERE check_id = $1 AND n < $2",
            vec![check.into(), big(keep_from)],
        )?;
        self.push(
            "DELETE FROM overdue_ping_bodies WHERE check_id = $1 AND n < $2",
            vec![check.into(), big(keep_from)],
        )
    }

    pub(crate) fn put_flip(&mut self, flip: &Flip) -> Result<(), StoreError> {
        let mut record = FlipRecord::from(flip);
        record.created_us = self.free_microsecond(
            "SELECT at_us FROM overdue_flips WHERE check_id = $1 AND at_us >= $2 \
             ORDER BY at_us LIMIT 64",
            flip.check,
            record.created_us,
        )?;
        self.push(
            "INSERT INTO overdue_flips (check_id, at_us, record) VALUES ($1, $2, $3)",
            vec![
                flip.check.into(),
                record.created_us.into(),
                encode(&record)?.into(),
            ],
        )
    }

    pub(crate) fn put_outbox(&mut self, entry: &OutboxEntry) -> Result<(), StoreError> {
        self.push(
            "INSERT INTO overdue_outbox (seq, record) VALUES ($1, $2) \
             ON CONFLICT (seq) DO UPDATE SET record = excluded.record",
            vec![big(entry.seq), encode(&OutboxRecord::from(entry))?.into()],
        )
    }

    pub(crate) fn delete_outbox(&mut self, seq: u64) -> Result<(), StoreError> {
        self.push("DELETE FROM overdue_outbox WHERE seq = $1", vec![big(seq)])?;
        self.push(
            "DELETE FROM overdue_outbox_tries WHERE seq = $1",
            vec![big(seq)],
        )
    }

    pub(crate) fn put_tries(&mut self, seq: u64, tries: &Tries) -> Result<(), StoreError> {
        self.push(
            "INSERT INTO overdue_outbox_tries (seq, record) VALUES ($1, $2) \
             ON CONFLICT (seq) DO UPDATE SET record = excluded.record",
            vec![big(seq), encode(&TriesRecord::from(tries))?.into()],
        )
    }

    pub(crate) fn put_delivery(&mut self, delivery: &Delivery) -> Result<(), StoreError> {
        let mut record = DeliveryRecord::from(delivery);
        record.at_us = self.free_microsecond(
            "SELECT at_us FROM overdue_deliveries WHERE channel = $1 AND at_us >= $2 \
             ORDER BY at_us LIMIT 64",
            delivery.channel,
            record.at_us,
        )?;
        self.push(
            "INSERT INTO overdue_deliveries (channel, at_us, record) VALUES ($1, $2, $3)",
            vec![
                delivery.channel.into(),
                record.at_us.into(),
                encode(&record)?.into(),
            ],
        )?;
        self.push(
            "DELETE FROM overdue_deliveries WHERE channel = $1 AND at_us < \
             (SELECT at_us FROM overdue_deliveries WHERE channel = $1 \
              ORDER BY at_us DESC OFFSET $2 LIMIT 1)",
            vec![delivery.channel.into(), big(DELIVERIES_KEPT as u64 - 1)],
        )
    }

    pub(crate) fn put_repeat(
        &mut self,
        check: Uuid,
        channel: Uuid,
        due_us: i64,
    ) -> Result<(), StoreError> {
        self.push(
            "INSERT INTO overdue_repeats (check_id, channel, due_us) VALUES ($1, $2, $3) \
             ON CONFLICT (check_id, channel) DO UPDATE SET due_us = excluded.due_us",
            vec![check.into(), channel.into(), due_us.into()],
        )
    }

    pub(crate) fn repeat_due(
        &mut self,
        check: Uuid,
        channel: Uuid,
    ) -> Result<Option<i64>, StoreError> {
        let rows = self.read(
            "SELECT due_us FROM overdue_repeats WHERE check_id = $1 AND channel = $2",
            &[check.into(), channel.into()],
        )?;
        rows.first().map(|row| get(row, 0)).transpose()
    }

    pub(crate) fn delete_repeat(&mut self, check: Uuid, channel: Uuid) -> Result<(), StoreError> {
        self.push(
            "DELETE FROM overdue_repeats WHERE check_id = $1 AND channel = $2",
            vec![check.into(), channel.into()],
        )
    }

    pub(crate) fn prune_flips(&mut self, check: Uuid, before_us: i64) -> Result<(), StoreError> {
        self.push(
            "DELETE FROM overdue_flips WHERE check_id = $1 AND at_us < $2",
            vec![check.into(), before_us.into()],
        )
    }

    /// The first microsecond at or after `us` under which `id` has no row yet (`sql` lists
    /// the taken ones from `us` on, in order): two events of one thing in the same
    /// microsecond both keep a row, as in the embedded engine.
    fn free_microsecond(
        &mut self,
        sql: &'static str,
        id: Uuid,
        mut us: i64,
    ) -> Result<i64, StoreError> {
        loop {
            let rows = self.read(sql, &[id.into(), us.into()])?;
            let full = rows.len() == 64;
            for row in &rows {
                let taken: i64 = get(row, 0)?;
                if taken != us {
                    return Ok(us);
                }
                us += 1;
            }
            if !full {
                return Ok(us);
            }
        }
    }

    /// Sends the batch and commits it; returns once PostgreSQL has answered COMMIT.
    pub(crate) fn commit(mut self) -> Result<(), StoreError> {
        self.flush()?;
        if !self.begun {
            self.ended = true;
            return Ok(());
        }
        let conn = self.conn.clone();
        conn.block(async { conn.client.batch_execute("COMMIT").await })?;
        self.ended = true;
        Ok(())
    }

    /// Drops everything the transaction did.
    pub(crate) fn abort(mut self) -> Result<(), StoreError> {
        self.ops.clear();
        self.pings = None;
        if !self.begun {
            self.ended = true;
            return Ok(());
        }
        let conn = self.conn.clone();
        conn.block(async { conn.client.batch_execute("ROLLBACK").await })?;
        self.ended = true;
        Ok(())
    }
}
