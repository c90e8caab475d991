//! The PostgreSQL engine's store: its two sessions, its start (tables and the active node's
//! lock), and its reads.
//!
//! Two sessions: the writer's, which holds the session-level advisory lock that makes this
//! node the active one and through which every batch commits (a node whose session ended has
//! lost the lock with it and can commit nothing more), and one for reads, which are
//! pipelined on it. Both connections run on a runtime of the store's own (one thread), so a
//! caller's runtime, stopping or paused in a test, never holds them up.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use tokio::runtime::Runtime;
use uuid::Uuid;

use super::conn::{Conn, Param, big};
use super::schema;
use super::txn::PgTxn;
use super::{Database, PgError};
use crate::model::limits::DATABASE_LOAD_TIMEOUT_SECS;
use crate::model::{Check, Delivery, Flip, OutboxEntry, Ping, Tries};
use crate::store::records::{
    self, ApiKeyRecord, ChannelRecord, DeliveryRecord, FlipRecord, OutboxRecord, PingRecord,
    SessionRecord, TriesRecord, decode,
};
use crate::store::{Snapshot, StoreError};

/// The session-level advisory lock the active node holds (the bytes of "overdue" and 1).
pub(crate) const ACTIVE_LOCK: i64 = 0x6f76_6572_6475_6501;
/// How long a store that closes waits for the server to let go of its lock.
const UNLOCK_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a command that opens the database itself waits for the lock: a node or command
/// that has just stopped may still hold it for a moment.
const OPEN_PATIENCE: Duration = Duration::from_secs(3);

/// The open database.
pub(crate) struct PgStore {
    db: Database,
    /// Drives both connections; `None` only while dropping.
    runtime: Option<Runtime>,
    writer: RwLock<Option<Arc<Conn>>>,
    reader: RwLock<Option<Arc<Conn>>>,
    /// The writer's session holds [`ACTIVE_LOCK`].
    locked: AtomicBool,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("target", &self.db.target())
            .finish_non_exhaustive()
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        // The lock is let go of before the store is gone: the server would free it only once
        // it noticed the closed socket, a moment later, and a restart in that moment would
        // find it taken.
        let writer = self
            .writer
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(conn) = writer
            && *self.locked.get_mut()
            && !conn.is_closed()
        {
            let unlocked = conn.block_for(UNLOCK_TIMEOUT, async {
                conn.clean().await?;
                conn.client
                    .execute("SELECT pg_advisory_unlock($1)", &[&ACTIVE_LOCK])
                    .await
            });
            if let Err(e) = unlocked {
                tracing::debug!("could not let go of the database's lock at close: {e}");
            }
        }
        // Dropping a runtime blocks, which tokio forbids inside another runtime's task.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl PgStore {
    /// Connects, takes the active node's lock, and creates or upgrades the tables (`create`),
    /// or refuses a database without them. Another node holding the lock is
    /// [`PgError::Standby`].
    pub(crate) fn open(db: &Database, create: bool) -> Result<PgStore, StoreError> {
        let store = PgStore::connect(db, true)?;
        let deadline = std::time::Instant::now() + OPEN_PATIENCE;
        loop {
            if store.try_activate(create)? {
                return Ok(store);
            }
            if std::time::Instant::now() >= deadline {
                return Err(StoreError::Pg(PgError::Standby {
                    target: db.target(),
                }));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A store that does not hold the lock yet: [`PgStore::try_activate`] takes it. With
    /// `reach`, a database that cannot be reached (or refuses us) is an error now; without it
    /// (a node that lost its lock) the first try of the lock says so.
    pub(crate) fn connect(db: &Database, reach: bool) -> Result<PgStore, StoreError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("postgres")
            .enable_all()
            .build()
            .map_err(|e| {
                StoreError::Pg(PgError::Server {
                    target: db.target(),
                    reason: format!("cannot start the database runtime: {e}"),
                })
            })?;
        let store = PgStore {
            db: db.clone(),
            writer: RwLock::new(None),
            reader: RwLock::new(None),
            locked: AtomicBool::new(false),
            runtime: Some(runtime),
        };
        // A database that cannot be reached, or refuses us, is a mistake to say at start.
        if reach {
            store.writer_session()?;
        }
        Ok(store)
    }

    /// Takes the active node's lock if no other node holds it: then prepares the tables
    /// (creating or upgrading them when `create`) and opens the session for reads. Whether this
    /// node is the active one now. Cheap to call every second while another node is.
    pub(crate) fn try_activate(&self, create: bool) -> Result<bool, StoreError> {
        let conn = self.writer_session()?;
        if self.locked.load(Ordering::Acquire) {
            return Ok(true);
        }
        let locked = conn.block(async {
            let row = conn
                .client
                .query_one("SELECT pg_try_advisory_lock($1)", &[&ACTIVE_LOCK])
                .await?;
            row.try_get::<_, bool>(0)
        })?;
        if !locked {
            return Ok(false);
        }
        let prepared = schema::prepare(&conn, create).and_then(|()| self.reconnect_reader());
        if let Err(e) = prepared {
            // Let go of the lock with the session: a node that cannot serve must not hold it.
            self.writer
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            return Err(e);
        }
        self.locked.store(true, Ordering::Release);
        Ok(true)
    }

    /// Resolves when the session holding the lock ends (at once if this node holds none).
    pub(crate) fn lock_lost(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let conn = self.writer().ok();
        async move {
            if let Some(conn) = conn {
                conn.ended().await;
            }
        }
    }

    /// The writer's session, opened afresh when there is none or it ended (and with it the
    /// lock, if this node held it).
    fn writer_session(&self) -> Result<Arc<Conn>, StoreError> {
        let mut writer = self.writer.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(conn) = writer.as_ref()
            && !conn.is_closed()
        {
            return Ok(conn.clone());
        }
        writer.take();
        self.locked.store(false, Ordering::Release);
        let conn = Arc::new(Conn::open(&self.db, self.handle()?)?);
        *writer = Some(conn.clone());
        Ok(conn)
    }

    /// `host:port/dbname`, for messages.
    pub(crate) fn target(&self) -> String {
        self.db.target()
    }

    fn handle(&self) -> Result<&tokio::runtime::Handle, StoreError> {
        self.runtime
            .as_ref()
            .map(Runtime::handle)
            .ok_or(StoreError::Closed)
    }

    /// Makes the store usable again: the lock taken again on a fresh session. Fails with
    /// [`PgError::Standby`] while another node holds it.
    pub(crate) fn reopen(&self) -> Result<(), StoreError> {
        if self.try_activate(false)? {
            Ok(())
        } else {
            Err(StoreError::Pg(PgError::Standby {
                target: self.db.target(),
            }))
        }
    }

    fn reconnect_reader(&self) -> Result<Arc<Conn>, StoreError> {
        let conn = Arc::new(Conn::open(&self.db, self.handle()?)?);
        *self.reader.write().unwrap_or_else(PoisonError::into_inner) = Some(conn.clone());
        Ok(conn)
    }

    /// The writer's session, while this node holds the lock on it.
    fn writer(&self) -> Result<Arc<Conn>, StoreError> {
        if !self.locked.load(Ordering::Acquire) {
            return Err(StoreError::Pg(PgError::Standby {
                target: self.db.target(),
            }));
        }
        self.writer
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or(StoreError::Closed)
    }

    /// The session for reads, opened again if it ended (the writer's may be fine).
    fn reader(&self) -> Result<Arc<Conn>, StoreError> {
        let current = self
            .reader
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match current {
            Some(conn) if !conn.is_closed() => Ok(conn),
            _ => self.reconnect_reader(),
        }
    }

    fn query(
        &self,
        sql: &'static str,
        params: &[Param],
    ) -> Result<Vec<tokio_postgres::Row>, StoreError> {
        self.reader()?.query(sql, params)
    }

    /// Starts the write transaction of one batch. Only the writer begins them (one at a time).
    pub(crate) fn begin_write(&self) -> Result<PgTxn, StoreError> {
        Ok(PgTxn::new(self.writer()?))
    }

    /// Reads everything the service keeps in memory, through the writer's session (which no
    /// batch uses while the writer loads).
    pub(crate) fn load_streaming(
        &self,
        on_check: &mut dyn FnMut(Check),
    ) -> Result<Snapshot, StoreError> {
        let conn = self.writer()?;
        let mut snap = Snapshot::default();
        for row in conn.query_alone("SELECT record FROM overdue_projects ORDER BY uuid", &[])? {
            snap.projects
                .push(records::decode_project(&get::<Vec<u8>>(&row, 0)?)?);
        }
        for row in conn.query_alone("SELECT record FROM overdue_api_keys ORDER BY id", &[])? {
            snap.api_keys
                .push(decode::<ApiKeyRecord>(&get::<Vec<u8>>(&row, 0)?, "api key")?.into());
        }
        for row in conn.query_alone("SELECT record FROM overdue_channels ORDER BY uuid", &[])? {
            snap.channels
                .push(decode::<ChannelRecord>(&get::<Vec<u8>>(&row, 0)?, "channel")?.into());
        }
        snap.next_outbox_seq = next_seq(&conn, "SELECT max(seq) FROM overdue_outbox")?;
        snap.next_journal_seq = next_seq(&conn, "SELECT max(seq) FROM overdue_journal")?;
        for row in conn.query_alone("SELECT id, record FROM overdue_sessions", &[])? {
            let id: Vec<u8> = get(&row, 0)?;
            let id: [u8; 32] = id
                .try_into()
                .map_err(|_| StoreError::Corrupt("a session id is not 32 bytes".into()))?;
            snap.sessions.push((
                id,
                decode::<SessionRecord>(&get::<Vec<u8>>(&row, 1)?, "session")?.into(),
            ));
        }
        // One pass over the checks with their links, streamed: a million checks are never
        // held as rows and as checks at once.
        conn.stream(
            Duration::from_secs(DATABASE_LOAD_TIMEOUT_SECS),
            "SELECT c.record, coalesce(array_agg(l.channel ORDER BY l.channel) \
             FILTER (WHERE l.channel IS NOT NULL), '{}') \
             FROM overdue_checks c LEFT JOIN overdue_check_channels l \
             ON l.check_id = c.uuid GROUP BY c.uuid ORDER BY c.uuid",
            &mut |row| {
                let mut check = records::decode_check(&get::<Vec<u8>>(row, 0)?)?;
                check.channels = get(row, 1)?;
                on_check(check);
                Ok(())
            },
        )?;
        Ok(snap)
    }

    /// The newest `limit` pings of a check, newest first.
    pub(crate) fn pings(&self, check: Uuid, limit: usize) -> Result<Vec<Ping>, StoreError> {
        let rows = self.query(
            "SELECT n, record FROM overdue_pings WHERE check_id = $1 ORDER BY n DESC LIMIT $2",
            &[check.into(), big(limit as u64)],
        )?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let n = u64::try_from(get::<i64>(&row, 0)?).unwrap_or(0);
            let record = decode::<PingRecord>(&get::<Vec<u8>>(&row, 1)?, "ping")?;
            out.push(record.into_ping(check, n)?);
        }
        Ok(out)
    }

    /// The stored body of ping `n`, if it exists and is not empty.
    pub(crate) fn ping_body(&self, check: Uuid, n: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let rows = self.query(
            "SELECT body FROM overdue_ping_bodies WHERE check_id = $1 AND n = $2",
            &[check.into(), big(n)],
        )?;
        match rows.first() {
            Some(row) => Ok(Some(get::<Vec<u8>>(row, 0)?).filter(|b| !b.is_empty())),
            None => Ok(None),
        }
    }

    /// Every stored flip of a check, newest first.
    pub(crate) fn flips(&self, check: Uuid) -> Result<Vec<Flip>, StoreError> {
        let rows = self.query(
            "SELECT record FROM overdue_flips WHERE check_id = $1 ORDER BY at_us DESC",
            &[check.into()],
        )?;
        rows.iter()
            .map(|row| decode::<FlipRecord>(&get::<Vec<u8>>(row, 0)?, "flip")?.into_flip(check))
            .collect()
    }

    /// Every queued alert, oldest first.
    pub(crate) fn outbox(&self) -> Result<Vec<OutboxEntry>, StoreError> {
        let rows = self.query("SELECT seq, record FROM overdue_outbox ORDER BY seq", &[])?;
        rows.iter()
            .map(|row| {
                let seq = u64::try_from(get::<i64>(row, 0)?).unwrap_or(0);
                decode::<OutboxRecord>(&get::<Vec<u8>>(row, 1)?, "outbox")?.into_entry(seq)
            })
            .collect()
    }

    /// How many alerts wait in the outbox.
    pub(crate) fn outbox_len(&self) -> Result<u64, StoreError> {
        self.count("SELECT count(*) FROM overdue_outbox")
    }

    /// Every queued alert with its retry state, oldest first.
    pub(crate) fn outbox_pending(&self) -> Result<Vec<(OutboxEntry, Option<Tries>)>, StoreError> {
        let rows = self.query(
            "SELECT o.seq, o.record, t.record FROM overdue_outbox o \
             LEFT JOIN overdue_outbox_tries t ON t.seq = o.seq ORDER BY o.seq",
            &[],
        )?;
        rows.iter()
            .map(|row| {
                let seq = u64::try_from(get::<i64>(row, 0)?).unwrap_or(0);
                let entry =
                    decode::<OutboxRecord>(&get::<Vec<u8>>(row, 1)?, "outbox")?.into_entry(seq)?;
                let tries = match get::<Option<Vec<u8>>>(row, 2)? {
                    Some(bytes) => Some(decode::<TriesRecord>(&bytes, "outbox tries")?.into()),
                    None => None,
                };
                Ok((entry, tries))
            })
            .collect()
    }

    /// The newest `limit` delivery attempts to a channel, newest first.
    pub(crate) fn deliveries(
        &self,
        channel: Uuid,
        limit: usize,
    ) -> Result<Vec<Delivery>, StoreError> {
        let rows = self.query(
            "SELECT record FROM overdue_deliveries WHERE channel = $1 \
             ORDER BY at_us DESC LIMIT $2",
            &[channel.into(), big(limit as u64)],
        )?;
        rows.iter()
            .map(|row| {
                Ok(
                    decode::<DeliveryRecord>(&get::<Vec<u8>>(row, 0)?, "delivery")?
                        .into_delivery(channel),
                )
            })
            .collect()
    }

    /// Every pending repeat alert: (check, channel, due time in µs).
    pub(crate) fn repeats(&self) -> Result<Vec<(Uuid, Uuid, i64)>, StoreError> {
        let rows = self.query(
            "SELECT check_id, channel, due_us FROM overdue_repeats ORDER BY check_id, channel",
            &[],
        )?;
        rows.iter()
            .map(|row| Ok((get(row, 0)?, get(row, 1)?, get(row, 2)?)))
            .collect()
    }

    /// Calls `f` with every journal entry's sequence number and ping, oldest first.
    pub(crate) fn for_each_journaled(
        &self,
        f: &mut dyn FnMut(u64, Ping),
    ) -> Result<(), StoreError> {
        self.writer()?.stream(
            Duration::from_secs(DATABASE_LOAD_TIMEOUT_SECS),
            "SELECT seq, record FROM overdue_journal ORDER BY seq",
            &mut |row| {
                let seq = u64::try_from(get::<i64>(row, 0)?).unwrap_or(0);
                f(seq, records::journal_ping(&get::<Vec<u8>>(row, 1)?)?);
                Ok(())
            },
        )
    }

    /// How many entries the journal holds.
    pub(crate) fn journal_len(&self) -> Result<u64, StoreError> {
        self.count("SELECT count(*) FROM overdue_journal")
    }

    /// The check whose per-check badge key is `badge`.
    pub(crate) fn check_by_badge_key(&self, badge: Uuid) -> Result<Option<Uuid>, StoreError> {
        let rows = self.query(
            "SELECT check_id FROM overdue_badge_keys WHERE badge_key = $1",
            &[badge.into()],
        )?;
        rows.first().map(|row| get(row, 0)).transpose()
    }

    /// How many checks are stored.
    pub(crate) fn check_count(&self) -> Result<u64, StoreError> {
        self.count("SELECT count(*) FROM overdue_checks")
    }

    /// A cheap read that proves the database answers.
    pub(crate) fn health_check(&self) -> Result<u64, StoreError> {
        self.count("SELECT count(*) FROM overdue_projects")
    }

    /// A value from the meta table.
    pub(crate) fn meta(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let rows = self.query(
            "SELECT value FROM overdue_meta WHERE key = $1",
            &[key.into()],
        )?;
        rows.first().map(|row| get(row, 0)).transpose()
    }

    fn count(&self, sql: &'static str) -> Result<u64, StoreError> {
        let rows = self.query(sql, &[])?;
        let n: i64 = match rows.first() {
            Some(row) => get(row, 0)?,
            None => 0,
        };
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

/// One past the highest number `sql` (a `max(seq)`) finds, 1 in an empty table.
fn next_seq(conn: &Conn, sql: &'static str) -> Result<u64, StoreError> {
    let rows = conn.query_alone(sql, &[])?;
    let max: Option<i64> = match rows.first() {
        Some(row) => get(row, 0)?,
        None => None,
    };
    Ok(max.map_or(1, |m| u64::try_from(m).unwrap_or(0) + 1))
}

/// Column `i` of a row; a column of another type is a damaged table, not a panic.
pub(super) fn get<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a tokio_postgres::Row,
    i: usize,
) -> Result<T, StoreError> {
    row.try_get(i).map_err(|e| StoreError::from_row(&e))
}

impl StoreError {
    /// A row that does not read as the columns the tables have.
    fn from_row(e: &tokio_postgres::Error) -> StoreError {
        StoreError::Corrupt(format!("a database row does not read: {e}"))
    }
}
