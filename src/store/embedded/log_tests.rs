//! The write-ahead log through the store: a commit of pings alone is durable in the log, not yet in
//! the data file, and comes back at the next open; a checkpoint moves it into the file and
//! cuts the log. A crash is a copy of the directory taken while the store is open: that is
//! what the disk holds after a kill -9 (the page cache survives, memory does not).

use std::path::Path;

use uuid::Uuid;

use super::*;

/// A ping of `check` numbered `n` (the store tests' fixture).
fn ping(check: Uuid, n: u64) -> Ping {
    super::tests::ping(check, n, super::tests::at(1_000 + n as i64), 0)
}

/// The data directory as the disk holds it now, in `to`; without the log when `with_log` is
/// false.
fn copy_dir(from: &Path, to: &Path, with_log: bool) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            if with_log {
                copy_dir(&entry.path(), &target, true);
            }
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

fn journaled(store: &FileStore) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    store
        .for_each_journaled(&mut |seq, ping| out.push((seq, ping.n)))
        .expect("journal");
    out
}

/// A store in `live` holding one project, committed durably: nothing waits in the log.
fn live_store(live: &Path) -> FileStore {
    let store = FileStore::open(live).expect("open");
    let mut txn = store.begin_write().expect("begin");
    txn.put_project(&super::tests::project(1, "ops"))
        .expect("project");
    txn.commit().expect("durable commit");
    store
}

#[test]
fn pings_alone_live_in_the_log_until_a_checkpoint_and_come_back_after_a_crash() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let live = tmp.path().join("live");
    let store = live_store(&live);
    assert_eq!(
        store.checkpoint_due(),
        None,
        "a durable commit leaves nothing to do"
    );

    let check = Uuid::from_u128(0x100);
    for n in 1..=3 {
        let mut txn = store.begin_write().expect("begin");
        txn.put_journal(n, &ping(check, n), b"").expect("journal");
        txn.commit().expect("commit of pings");
    }
    assert!(store.checkpoint_due().is_some(), "the log alone holds them");
    assert_eq!(store.log_segments(), 1);

    // Crash now: the file alone has lost them (so the log is what keeps them) ...
    copy_dir(&live, &tmp.path().join("file-only"), false);
    let file_only = FileStore::open(&tmp.path().join("file-only")).expect("open the file alone");
    assert_eq!(journaled(&file_only), vec![]);
    drop(file_only);
    // ... and with the log, every one comes back, once, and the log starts afresh.
    copy_dir(&live, &tmp.path().join("crashed"), true);
    let crashed = FileStore::open(&tmp.path().join("crashed")).expect("open after the crash");
    assert_eq!(journaled(&crashed), vec![(1, 1), (2, 2), (3, 3)]);
    assert_eq!(crashed.log_segments(), 0);
    assert_eq!(crashed.load().expect("load").next_journal_seq, 4);
    drop(crashed);
    let again = FileStore::open(&tmp.path().join("crashed")).expect("second open");
    assert_eq!(journaled(&again), vec![(1, 1), (2, 2), (3, 3)]);
    drop(again);

    // A checkpoint puts them in the file durably and cuts the log.
    store.checkpoint().expect("checkpoint");
    assert_eq!(store.checkpoint_due(), None);
    // The segment appended to stays for the next pings; its records are covered now.
    assert_eq!(store.log_segments(), 1);
    copy_dir(&live, &tmp.path().join("after-checkpoint"), false);
    let file_only = FileStore::open(&tmp.path().join("after-checkpoint")).expect("open");
    assert_eq!(journaled(&file_only), vec![(1, 1), (2, 2), (3, 3)]);
    // With the log beside it, the covered records are not redone a second time.
    copy_dir(&live, &tmp.path().join("crashed-later"), true);
    let crashed = FileStore::open(&tmp.path().join("crashed-later")).expect("open");
    assert_eq!(journaled(&crashed), vec![(1, 1), (2, 2), (3, 3)]);
}

#[test]
fn a_failed_commit_takes_its_records_back_out_of_the_log() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let live = tmp.path().join("live");
    let store = FileStore::open(&live).expect("open");
    let check = Uuid::from_u128(0x100);
    let mut txn = store.begin_write().expect("begin");
    txn.put_journal(1, &ping(check, 1), b"").expect("journal");
    txn.commit().expect("commit");
    // Aborted: never appended. Only a committed batch is in the log.
    let mut txn = store.begin_write().expect("begin");
    txn.put_journal(2, &ping(check, 2), b"").expect("journal");
    txn.abort().expect("abort");

    copy_dir(&live, &tmp.path().join("crashed"), true);
    let crashed = FileStore::open(&tmp.path().join("crashed")).expect("open");
    assert_eq!(journaled(&crashed), vec![(1, 1)]);
    // The number the aborted transaction had is not handed out again in this process.
    assert!(store.load().expect("load").next_journal_seq >= 3);
}

#[test]
fn a_backup_put_in_place_of_the_file_does_not_take_in_the_old_files_log() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let live = tmp.path().join("live");
    let store = live_store(&live);
    let check = Uuid::from_u128(0x100);
    let ping_alone = |n: u64| {
        let mut txn = store.begin_write().expect("begin");
        txn.put_journal(n, &ping(check, n), b"").expect("journal");
        txn.commit().expect("commit of pings");
    };
    (1..=3).for_each(ping_alone);
    let backup = tmp.path().join("backup.redb");
    store.backup(&backup).expect("backup");
    (4..=5).for_each(ping_alone);

    // The service dies; the backup is restored over the file, the log stays.
    let restored = tmp.path().join("restored");
    copy_dir(&live, &restored, true);
    std::fs::copy(&backup, restored.join("overdue.redb")).expect("restore");
    let store = FileStore::open(&restored).expect("open the restored file");
    assert_eq!(journaled(&store), vec![(1, 1), (2, 2), (3, 3)]);
    assert_eq!(
        store.log_segments(),
        0,
        "the old file's segments are removed"
    );
}
