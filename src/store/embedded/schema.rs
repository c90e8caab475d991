//! Opening the data file: redb's builder and its errors as ours (a second process, a
//! refused permission), and the schema a file must have (every table created, a newer schema
//! version refused).

use std::path::Path;

use redb::{Database, ReadableTable};

use crate::store::embedded::{
    API_KEYS, BADGE_KEYS, CACHE_BYTES, CHANNELS, CHECK_CHANNELS, CHECKS, DELIVERIES, FLIPS,
    JOURNAL, META, OUTBOX, OUTBOX_TRIES, PING_BODIES, PINGS, PROJECTS, REPEATS, SCHEMA_VERSION,
    SESSIONS, SLUG_INDEX,
};
use crate::store::{StoreError, access};

pub(super) fn open_database(dir: &Path, path: &Path) -> Result<Database, StoreError> {
    match Database::builder().set_cache_size(CACHE_BYTES).create(path) {
        Ok(db) => Ok(db),
        Err(redb::DatabaseError::DatabaseAlreadyOpen) => Err(StoreError::Locked(dir.to_path_buf())),
        Err(redb::DatabaseError::Storage(redb::StorageError::Io(source))) => {
            Err(StoreError::Open {
                path: path.to_path_buf(),
                source,
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// A permission refusal while opening, as the error that says whose the path is and what to
/// do; other errors as they are.
pub(super) fn explain_refusal(e: StoreError) -> StoreError {
    let denied = match &e {
        StoreError::Io { path, source } | StoreError::Open { path, source } => {
            access::AccessDenied::from_io(path, source)
        }
        _ => None,
    };
    match denied {
        Some(d) => StoreError::Denied(Box::new(d)),
        None => e,
    }
}

/// Creates the tables a new file lacks; refuses a file of a newer schema.
pub(super) fn prepare_schema(db: &Database, path: &Path) -> Result<(), StoreError> {
    let txn = db.begin_write()?;
    {
        let mut meta = txn.open_table(META)?;
        let found = meta.get("schema_version")?.map(|v| {
            let bytes: [u8; 4] = v.value().try_into().unwrap_or([0xff; 4]);
            u32::from_be_bytes(bytes)
        });
        match found {
            Some(found) if found > SCHEMA_VERSION => {
                return Err(StoreError::NewerSchema {
                    path: path.to_path_buf(),
                    found,
                    supported: SCHEMA_VERSION,
                });
            }
            Some(_) => {}
            None => {
                meta.insert("schema_version", SCHEMA_VERSION.to_be_bytes().as_slice())?;
            }
        }
        // Create every table so that read transactions never meet a missing one.
        txn.open_table(PROJECTS)?;
        txn.open_table(API_KEYS)?;
        txn.open_table(CHECKS)?;
        txn.open_multimap_table(SLUG_INDEX)?;
        txn.open_table(PINGS)?;
        txn.open_table(PING_BODIES)?;
        txn.open_table(FLIPS)?;
        txn.open_table(CHANNELS)?;
        txn.open_table(CHECK_CHANNELS)?;
        txn.open_table(OUTBOX)?;
        txn.open_table(JOURNAL)?;
        txn.open_table(BADGE_KEYS)?;
        txn.open_table(OUTBOX_TRIES)?;
        txn.open_table(DELIVERIES)?;
        txn.open_table(REPEATS)?;
        txn.open_table(SESSIONS)?;
    }
    txn.commit()?;
    Ok(())
}
