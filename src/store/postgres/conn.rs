//! One session with the database as the store's synchronous code uses it.
//!
//! The store is called from synchronous code (the writer's blocking thread, the start-up
//! load, handlers that read history), so each call waits here for its future. The
//! connection's socket is driven by the store's own small runtime (see `store.rs`), never by
//! the caller's: the caller only waits on the client's answer (`futures_executor`), so a
//! call works the same from a blocking thread, a tokio worker or plain `main`. Every wait is
//! bounded; a session that does not answer in time is taken for lost ([`PgError::Lost`]).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use bytes::BytesMut;
use tokio::runtime::Handle;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use tokio_postgres::{Client, Statement};
use uuid::Uuid;

use super::{Database, PgError};
use crate::model::limits::DATABASE_QUERY_TIMEOUT_SECS;
use crate::store::StoreError;

/// How long one statement or one batch may take.
pub(super) const QUERY_TIMEOUT: Duration = Duration::from_secs(DATABASE_QUERY_TIMEOUT_SECS);

/// One open session.
pub(crate) struct Conn {
    pub(super) client: Client,
    handle: Handle,
    pub(super) db: Database,
    /// Statements prepared on this session, by their text.
    statements: Mutex<HashMap<&'static str, Statement>>,
    /// A transaction was left open (a batch dropped without commit or abort): the next one
    /// rolls it back first.
    pub(super) dirty: AtomicBool,
    /// Turns true when the session ends.
    ended: tokio::sync::watch::Receiver<bool>,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("target", &self.db.target())
            .finish_non_exhaustive()
    }
}

impl Conn {
    /// Opens a session whose connection task runs on `handle`'s runtime.
    pub(super) fn open(db: &Database, handle: &Handle) -> Result<Conn, PgError> {
        let _runtime = handle.enter();
        let (client, ended) = futures_executor::block_on(async {
            let (client, ended) = db.connect_watched().await?;
            // The server notices a node that vanished (a machine gone, a cut cable) within
            // seconds instead of hours, and so frees its lock for a standby. A ping is
            // acknowledged after COMMIT, which must then be on disk, whatever the server's
            // default for synchronous_commit.
            client
                .batch_execute(
                    "SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2; \
                     SET tcp_keepalives_count = 3; SET synchronous_commit = on",
                )
                .await
                .map_err(|e| db.explain(&e))?;
            Ok::<_, PgError>((client, ended))
        })?;
        Ok(Conn {
            ended,
            client,
            handle: handle.clone(),
            db: db.clone(),
            statements: Mutex::new(HashMap::new()),
            dirty: AtomicBool::new(false),
        })
    }

    /// Whether the session has ended (its connection task is gone).
    pub(super) fn is_closed(&self) -> bool {
        self.client.is_closed() || *self.ended.borrow()
    }

    /// Resolves when the session ends. Needs no runtime of the caller's: no timer, only the
    /// connection task's signal.
    pub(super) fn ended(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut ended = self.ended.clone();
        async move {
            // An error means the sender is gone: the connection task has ended too.
            let _ = ended.wait_for(|ended| *ended).await;
        }
    }

    /// Waits for `f` at most [`QUERY_TIMEOUT`].
    pub(super) fn block<T>(
        &self,
        f: impl Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, StoreError> {
        self.block_for(QUERY_TIMEOUT, f)
    }

    /// Waits for `f` at most `limit`; a session that does not answer by then is lost.
    pub(super) fn block_for<T>(
        &self,
        limit: Duration,
        f: impl Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, StoreError> {
        // The timer is the store's runtime's: the caller may have none.
        let _runtime = self.handle.enter();
        match futures_executor::block_on(tokio::time::timeout(limit, f)) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(StoreError::Pg(self.db.explain(&e))),
            Err(_) => Err(StoreError::Pg(PgError::Lost {
                target: self.db.target(),
                reason: format!("no answer within {limit:?}"),
            })),
        }
    }

    /// The prepared statement for `sql`, prepared on first use.
    pub(super) async fn statement(
        &self,
        sql: &'static str,
    ) -> Result<Statement, tokio_postgres::Error> {
        let cached = self
            .statements
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(sql)
            .cloned();
        if let Some(statement) = cached {
            return Ok(statement);
        }
        let statement = self.client.prepare(sql).await?;
        self.statements
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(sql, statement.clone());
        Ok(statement)
    }

    /// Runs one query and answers its rows.
    pub(super) fn query(
        &self,
        sql: &'static str,
        params: &[Param],
    ) -> Result<Vec<tokio_postgres::Row>, StoreError> {
        self.block(async {
            let statement = self.statement(sql).await?;
            self.client.query(&statement, &refs(params)).await
        })
    }

    /// Like [`Conn::query`], outside any transaction: one left open by a failed batch is rolled
    /// back first (the start-up read and a reload after a failed batch use the writer's session).
    pub(super) fn query_alone(
        &self,
        sql: &'static str,
        params: &[Param],
    ) -> Result<Vec<tokio_postgres::Row>, StoreError> {
        self.block(async {
            self.clean().await?;
            let statement = self.statement(sql).await?;
            self.client.query(&statement, &refs(params)).await
        })
    }

    /// Runs `sql` outside any transaction (like [`Conn::query_alone`]) and hands each row to
    /// `on_row` as it arrives, all within `limit`: rows are never all held at once. The first
    /// error `on_row` answers ends the stream and is the result.
    pub(super) fn stream(
        &self,
        limit: Duration,
        sql: &'static str,
        on_row: &mut dyn FnMut(&tokio_postgres::Row) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut failed = None;
        self.block_for(limit, async {
            self.clean().await?;
            let statement = self.statement(sql).await?;
            let rows = self
                .client
                .query_raw(&statement, std::iter::empty::<Param>())
                .await?;
            futures_util::pin_mut!(rows);
            while let Some(row) = futures_util::TryStreamExt::try_next(&mut rows).await? {
                if let Err(e) = on_row(&row) {
                    failed = Some(e);
                    break;
                }
            }
            Ok(())
        })?;
        failed.map_or(Ok(()), Err)
    }

    /// Ends a transaction that was left open, if one was.
    pub(super) async fn clean(&self) -> Result<(), tokio_postgres::Error> {
        if self.dirty.swap(false, Ordering::AcqRel) {
            self.client.batch_execute("ROLLBACK").await?;
        }
        Ok(())
    }
}

/// A statement's parameter, owned, so a batch's statements can wait until its commit.
#[derive(Debug, Clone)]
pub(crate) enum Param {
    Bytes(Vec<u8>),
    I64(i64),
    Uuid(Uuid),
    Text(String),
    I64s(Vec<i64>),
    Uuids(Vec<Uuid>),
    Byteas(Vec<Vec<u8>>),
}

impl From<Vec<u8>> for Param {
    fn from(v: Vec<u8>) -> Param {
        Param::Bytes(v)
    }
}

impl From<i64> for Param {
    fn from(v: i64) -> Param {
        Param::I64(v)
    }
}

impl From<Uuid> for Param {
    fn from(v: Uuid) -> Param {
        Param::Uuid(v)
    }
}

impl From<&str> for Param {
    fn from(v: &str) -> Param {
        Param::Text(v.to_string())
    }
}

/// A `u64` sequence number or ping number as PostgreSQL's `bigint`. They start at 1 and
/// grow by one, so they never reach 2⁶³.
pub(super) fn big(v: u64) -> Param {
    Param::I64(i64::try_from(v).unwrap_or(i64::MAX))
}

impl ToSql for Param {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Param::Bytes(v) => v.to_sql_checked(ty, out),
            Param::I64(v) => v.to_sql_checked(ty, out),
            Param::Uuid(v) => v.to_sql_checked(ty, out),
            Param::Text(v) => v.to_sql_checked(ty, out),
            Param::I64s(v) => v.to_sql_checked(ty, out),
            Param::Uuids(v) => v.to_sql_checked(ty, out),
            Param::Byteas(v) => v.to_sql_checked(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <Vec<u8>>::accepts(ty)
            || i64::accepts(ty)
            || Uuid::accepts(ty)
            || String::accepts(ty)
            || <Vec<i64>>::accepts(ty)
            || <Vec<Uuid>>::accepts(ty)
            || <Vec<Vec<u8>>>::accepts(ty)
    }

    to_sql_checked!();
}

/// `params` as tokio-postgres takes them.
pub(super) fn refs(params: &[Param]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}
