//! Consistent copies of the data file. A redb read transaction is a snapshot of the last
//! commit, so copying every table under one read transaction gives a file that is exactly the
//! data as it was acknowledged at that moment, while the writer keeps committing beside it.
//!
//! The copy is written to `FILE.tmp`, synced, and renamed over `FILE`, so a crash never leaves
//! a half-written backup under the final name. The result is an ordinary data file: put it in
//! a data directory as `overdue.redb` and serve it.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use redb::{
    Database, Key, MultimapTableDefinition, MultimapTableHandle, ReadTransaction, ReadableDatabase,
    ReadableMultimapTable, ReadableTable, TableDefinition, TableHandle, Value, WriteTransaction,
};

use crate::store::StoreError;
use crate::store::embedded::ping_log::{FILE_ID, new_file_id};
use crate::store::embedded::{
    API_KEYS, BADGE_KEYS, CHANNELS, CHECK_CHANNELS, CHECKS, DELIVERIES, FLIPS, FileStore, JOURNAL,
    META, OUTBOX, OUTBOX_TRIES, PING_BODIES, PINGS, PROJECTS, REPEATS, SESSIONS, SLUG_INDEX,
};

/// What a backup holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BackupReport {
    pub(crate) path: PathBuf,
    pub(crate) bytes: u64,
    pub checks: u64,
    /// Pings in the ping log plus pings still in the journal.
    pub(crate) pings: u64,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Backup {
        path: path.to_path_buf(),
        source,
    }
}

fn copy_table<K: Key + 'static, V: Value + 'static>(
    from: &ReadTransaction,
    to: &WriteTransaction,
    def: TableDefinition<K, V>,
    copied: &mut BTreeSet<String>,
) -> Result<u64, StoreError> {
    let source = from.open_table(def)?;
    let mut target = to.open_table(def)?;
    let mut rows = 0;
    for entry in source.iter()? {
        let (k, v) = entry?;
        target.insert(k.value(), v.value())?;
        rows += 1;
    }
    copied.insert(def.name().to_string());
    Ok(rows)
}

fn copy_multimap<K: Key + 'static, V: Key + 'static>(
    from: &ReadTransaction,
    to: &WriteTransaction,
    def: MultimapTableDefinition<K, V>,
    copied: &mut BTreeSet<String>,
) -> Result<(), StoreError> {
    let source = from.open_multimap_table(def)?;
    let mut target = to.open_multimap_table(def)?;
    for entry in source.iter()? {
        let (k, values) = entry?;
        for v in values {
            target.insert(k.value(), v?.value())?;
        }
    }
    copied.insert(def.name().to_string());
    Ok(())
}

/// Copies every table of the snapshot `from` into `to` but the sessions; refuses a file holding
/// a table this release does not know (it would be silently left out of the backup).
///
/// Sessions stay behind on purpose: a backup is a copy to keep or to hand on, and a signed-in
/// browser should not come back to life wherever it is restored (a restore signs everyone out).
fn copy_all(from: &ReadTransaction, to: &WriteTransaction) -> Result<(u64, u64), StoreError> {
    let mut copied = BTreeSet::new();
    let c = &mut copied;
    copy_table(from, to, META, c)?;
    copy_table(from, to, PROJECTS, c)?;
    copy_table(from, to, API_KEYS, c)?;
    let checks = copy_table(from, to, CHECKS, c)?;
    copy_multimap(from, to, SLUG_INDEX, c)?;
    let mut pings = copy_table(from, to, PINGS, c)?;
    copy_table(from, to, PING_BODIES, c)?;
    copy_table(from, to, FLIPS, c)?;
    copy_table(from, to, CHANNELS, c)?;
    copy_table(from, to, CHECK_CHANNELS, c)?;
    copy_table(from, to, OUTBOX, c)?;
    copy_table(from, to, OUTBOX_TRIES, c)?;
    copy_table(from, to, DELIVERIES, c)?;
    copy_table(from, to, REPEATS, c)?;
    pings += copy_table(from, to, JOURNAL, c)?;
    copy_table(from, to, BADGE_KEYS, c)?;
    c.insert(SESSIONS.name().to_string());
    let names: Vec<String> = from
        .list_tables()?
        .map(|t| t.name().to_string())
        .chain(from.list_multimap_tables()?.map(|t| t.name().to_string()))
        .collect();
    if let Some(unknown) = names.iter().find(|n| !copied.contains(*n)) {
        return Err(StoreError::Corrupt(format!(
            "the data file holds a table this release does not know ({unknown}); \
             back it up with the release that wrote it"
        )));
    }
    Ok((checks, pings))
}

fn sync_dir(path: &Path) -> Result<(), StoreError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
}

impl FileStore {
    /// Writes a consistent copy of the file to `dest` (via `dest.tmp`, synced, then renamed).
    /// Safe while the service writes: the copy is one read transaction's snapshot.
    pub(crate) fn backup(&self, dest: &Path) -> Result<BackupReport, StoreError> {
        let canonical = |p: &Path| std::fs::canonicalize(p).ok();
        if dest.exists() && canonical(dest) == canonical(self.path()) {
            return Err(StoreError::Backup {
                path: dest.to_path_buf(),
                source: std::io::Error::other("it is the live data file"),
            });
        }
        let mut tmp = dest.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        match std::fs::remove_file(&tmp) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&tmp)(e)),
        }
        // Created empty with its final mode first, so the copy is never readable by others.
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io(&tmp))?;
        let result = (|| {
            // Acknowledged pings still queued go into the file first: the copy is read from it.
            self.apply_queued()?;
            let copy = Database::builder().create(&tmp)?;
            let snapshot = self.db()?.begin_read()?;
            let txn = copy.begin_write()?;
            let counts = copy_all(&snapshot, &txn)?;
            // The copy is a data file of its own: put back in place of this one, it must not
            // take in this file's write-ahead log.
            txn.open_table(META)?
                .insert(FILE_ID, new_file_id().to_be_bytes().as_slice())?;
            txn.commit()?;
            drop(copy);
            File::open(&tmp)
                .and_then(|f| f.sync_all())
                .map_err(io(&tmp))?;
            Ok::<_, StoreError>(counts)
        })();
        let (checks, pings) = match result {
            Ok(counts) => counts,
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(e);
            }
        };
        std::fs::rename(&tmp, dest).map_err(io(dest))?;
        sync_dir(dest)?;
        let bytes = std::fs::metadata(dest).map_err(io(dest))?.len();
        Ok(BackupReport {
            path: dest.to_path_buf(),
            bytes,
            checks,
            pings,
        })
    }
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;
    use uuid::Uuid;

    use crate::model::{Check, PingKind, Project};
    use crate::store::embedded::FileStore;

    fn ping(check: Uuid, n: u64) -> crate::model::Ping {
        crate::model::Ping {
            check,
            n,
            created: Timestamp::UNIX_EPOCH,
            kind: PingKind::Success,
            scheme: "http".into(),
            remote_addr: None,
            method: "GET".into(),
            ua: String::new(),
            rid: None,
            exit_status: None,
            body_len: 4,
        }
    }

    #[test]
    fn a_backup_opens_as_a_data_file_with_the_same_records_and_journal() {
        let tmp = tempfile::tempdir().expect("tmp");
        let store = FileStore::open(&tmp.path().join("live")).expect("open");
        let project = Project {
            uuid: Uuid::from_u128(1),
            seq: 1,
            name: "p".into(),
            ping_key: "k".repeat(22),
            badge_key: "b".into(),
            created: Timestamp::UNIX_EPOCH,
            quiet: None,
        };
        let check = Check::new(
            Uuid::from_u128(2),
            project.uuid,
            2,
            Timestamp::UNIX_EPOCH,
            Uuid::from_u128(3),
        );
        let mut txn = store.begin_write().expect("txn");
        txn.put_project(&project).expect("project");
        txn.put_check(&check, None).expect("check");
        txn.put_ping(&ping(check.uuid, 1), b"body").expect("ping");
        txn.put_journal(1, &ping(check.uuid, 2), b"")
            .expect("journal");
        let session = crate::model::session::Session::new(Timestamp::UNIX_EPOCH);
        txn.put_session(&[7; 32], &session).expect("session");
        txn.commit().expect("commit");
        assert_eq!(store.load().expect("load").sessions.len(), 1);

        let dest = tmp.path().join("copy.redb");
        let report = store.backup(&dest).expect("backup");
        assert_eq!((report.checks, report.pings), (1, 2));
        // Writes after the snapshot are not in it.
        let mut txn = store.begin_write().expect("txn");
        txn.put_ping(&ping(check.uuid, 3), b"").expect("ping");
        txn.commit().expect("commit");

        let restored_dir = tmp.path().join("restored");
        std::fs::create_dir(&restored_dir).expect("mkdir");
        std::fs::rename(&dest, restored_dir.join(crate::store::embedded::DB_FILE)).expect("move");
        let restored = FileStore::open(&restored_dir).expect("the backup opens");
        let snap = restored.load().expect("load");
        assert_eq!(snap.projects, vec![project]);
        // A restore signs everyone out.
        assert!(snap.sessions.is_empty());
        assert_eq!(snap.checks[0].badge_key, check.badge_key);
        assert_eq!(restored.pings(check.uuid, 10).expect("pings").len(), 1);
        assert_eq!(
            restored.ping_body(check.uuid, 1).expect("body"),
            Some(b"body".to_vec())
        );
        assert_eq!(restored.journal_len().expect("journal"), 1);
        assert_eq!(
            restored.check_by_badge_key(check.badge_key).expect("badge"),
            Some(check.uuid)
        );
        assert_eq!(restored.meta("badge_secret").expect("meta"), None);
        assert!(restored.meta("schema_version").expect("meta").is_some());
    }

    #[test]
    fn a_backup_never_replaces_the_live_file() {
        let tmp = tempfile::tempdir().expect("tmp");
        let store = FileStore::open(tmp.path()).expect("open");
        let live = tmp.path().join(".").join(crate::store::embedded::DB_FILE);
        assert!(store.backup(&live).is_err());
        let missing_dir = tmp.path().join("no/such/dir/copy.redb");
        assert!(store.backup(&missing_dir).is_err());
    }
}
