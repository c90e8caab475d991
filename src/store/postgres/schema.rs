//! The database's tables and their versions: the migrations (SQL files in `migrations/`,
//! embedded in the binary) and the one function that brings a database up to date at start.
//!
//! `overdue_schema` holds one row per migration applied. A database whose highest version is
//! above [`SCHEMA_VERSION`] was written by a newer release and is refused. Migrations run in
//! one transaction under a transaction-level advisory lock, so two nodes starting together
//! apply each one once.

use super::conn::Conn;
use crate::store::StoreError;

/// The migrations, in order: version `i + 1` is `MIGRATIONS[i]`.
const MIGRATIONS: &[&str] = &[include_str!("migrations/0001_tables.sql")];

/// The version of the tables this release reads and writes.
pub(crate) const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// The transaction-level advisory lock that migrations run under (the bytes of "overdue" and
/// one more).
const MIGRATION_LOCK: i64 = 0x6f76_6572_6475_65a1;

/// Creates or upgrades the tables (`create`), or checks that they are there and not newer
/// than this release knows.
pub(super) fn prepare(conn: &Conn, create: bool) -> Result<(), StoreError> {
    let target = conn.db.target();
    let found = conn.block(async {
        conn.clean().await?;
        conn.client
            .batch_execute(&format!(
                "BEGIN; SELECT pg_advisory_xact_lock({MIGRATION_LOCK}); \
                 CREATE TABLE IF NOT EXISTS overdue_schema (version integer PRIMARY KEY)"
            ))
            .await?;
        let row = conn
            .client
            .query_one("SELECT coalesce(max(version), 0) FROM overdue_schema", &[])
            .await?;
        row.try_get::<_, i32>(0)
    });
    let found = match found {
        Ok(v) => u32::try_from(v).unwrap_or(0),
        Err(e) => {
            conn.dirty.store(true, std::sync::atomic::Ordering::Release);
            return Err(e);
        }
    };
    let finish = |sql: &'static str| {
        conn.block(async { conn.client.batch_execute(sql).await })
            .inspect_err(|_| conn.dirty.store(true, std::sync::atomic::Ordering::Release))
    };
    if found > SCHEMA_VERSION {
        finish("ROLLBACK")?;
        return Err(StoreError::NewerDatabaseSchema {
            target,
            found,
            supported: SCHEMA_VERSION,
        });
    }
    if found == 0 && !create {
        finish("ROLLBACK")?;
        return Err(StoreError::NoTables(target));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let version = i as i32 + 1;
        let applied = conn.block(async {
            conn.client.batch_execute(sql).await?;
            conn.client
                .execute(
                    "INSERT INTO overdue_schema (version) VALUES ($1)",
                    &[&version],
                )
                .await
        });
        if let Err(e) = applied {
            conn.dirty.store(true, std::sync::atomic::Ordering::Release);
            return Err(e);
        }
        tracing::info!(version, database = %target, "applied a database migration");
    }
    finish("COMMIT")?;
    Ok(())
}
