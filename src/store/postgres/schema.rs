//! The database's tables and their versions: the migrations (SQL files in `migrations/`,
//! embedded in the binary) and the one function that brings a database up to date at start.
//!
//! `overdue_schema` holds one row per migration applied. A database whose highest version is
//! above [`SCHEMA_VERSION`] was written by a newer release and is refused. Migrations run in
//! one transaction under a transaction-level advisory lock, so two nodes starting together
//! apply each one once.

use std::sync::atomic::Ordering;

use super::PgError;
use super::conn::Conn;
use crate::store::StoreError;

/// The migrations, in order: version `i + 1` is `MIGRATIONS[i]`.
const MIGRATIONS: &[&str] = &[include_str!("migrations/0001_tables.sql")];

/// The version of the tables this release reads and writes.
pub(crate) const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// The transaction-level advisory lock that migrations run under (the bytes of "overdue" and
/// one more).
const MIGRATION_LOCK: i64 = 0x6f76_6572_6475_65a1;

/// What a database says about its tables and the user, before any migration.
struct Seen {
    /// `overdue_schema` exists.
    exists: bool,
    /// The highest migration applied (0: none).
    found: u32,
    user: String,
    schema: String,
    /// The user may create tables in the schema.
    may_create: bool,
}

/// Creates or upgrades the tables (`create`), or checks that they are there and not newer
/// than this release knows.
pub(super) fn prepare(conn: &Conn, create: bool) -> Result<(), StoreError> {
    conn.block(async {
        conn.clean().await?;
        // Until COMMIT or ROLLBACK below succeeds, the session is inside the transaction.
        conn.dirty.store(true, Ordering::Release);
        conn.client
            .batch_execute(&format!(
                "BEGIN; SELECT pg_advisory_xact_lock({MIGRATION_LOCK})"
            ))
            .await
    })?;
    let outcome = migrate(conn, create);
    let end = if outcome.is_ok() {
        "COMMIT"
    } else {
        "ROLLBACK"
    };
    conn.block(async { conn.client.batch_execute(end).await })?;
    conn.dirty.store(false, Ordering::Release);
    outcome
}

/// Inside [`prepare`]'s transaction: what the database holds, checked against this release
/// and the user's rights, then the migrations it lacks.
fn migrate(conn: &Conn, create: bool) -> Result<(), StoreError> {
    let target = conn.db.target();
    let seen = conn.block(async {
        let row = conn
            .client
            .query_one(
                "SELECT to_regclass('overdue_schema') IS NOT NULL, current_user::text, \
                 coalesce(current_schema()::text, 'public'), \
                 coalesce(has_schema_privilege(current_schema(), 'CREATE'), false)",
                &[],
            )
            .await?;
        let exists: bool = row.try_get(0)?;
        let found = if exists {
            let version = conn
                .client
                .query_one("SELECT coalesce(max(version), 0) FROM overdue_schema", &[])
                .await?;
            version.try_get::<_, i32>(0)?
        } else {
            0
        };
        Ok::<_, tokio_postgres::Error>(Seen {
            exists,
            found: u32::try_from(found).unwrap_or(0),
            user: row.try_get(1)?,
            schema: row.try_get(2)?,
            may_create: row.try_get(3)?,
        })
    })?;
    let found = seen.found;
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerDatabaseSchema {
            target,
            found,
            supported: SCHEMA_VERSION,
        });
    }
    if found == 0 && !create {
        return Err(StoreError::NoTables(target));
    }
    if found < SCHEMA_VERSION && !seen.may_create {
        // Said as what to grant, rather than as the first CREATE TABLE's refusal.
        return Err(StoreError::Pg(PgError::NoPrivilege {
            target,
            user: seen.user,
            schema: seen.schema,
        }));
    }
    if !seen.exists {
        conn.block(async {
            conn.client
                .batch_execute("CREATE TABLE overdue_schema (version integer PRIMARY KEY)")
                .await
        })?;
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let version = i as i32 + 1;
        conn.block(async {
            conn.client.batch_execute(sql).await?;
            conn.client
                .execute(
                    "INSERT INTO overdue_schema (version) VALUES ($1)",
                    &[&version],
                )
                .await
        })?;
        tracing::info!(version, database = %target, "applied a database migration");
    }
    Ok(())
}
