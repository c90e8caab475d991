//! Whether the data file takes writes: the writer marks it failing when a write meets an I/O
//! error (a full disk, a file made unwritable) and healthy again once a reopened file has taken
//! a committed write. While it is failing, writes are refused at once with "storage
//! unavailable", `/api/v3/status/` answers 503 with the reason, and past the configured bound
//! the service gives up so that its supervisor restarts it.
//!
//! The reason a person reads is built by [`diagnose`], a plain function of facts about the
//! file and its filesystem ([`FileFacts`], gathered by [`FileFacts::gather`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::Notify;

/// What the service does while writes fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoragePolicy {
    /// Longest wait between two attempts to reopen the file (the first waits
    /// [`crate::model::limits::STORAGE_RETRY_FIRST_MS`], each next one twice as long).
    pub retry_max: Duration,
    /// Give up (the service exits non-zero) when writes have failed this long; `None`: never.
    pub give_up_after: Option<Duration>,
}

impl Default for StoragePolicy {
    fn default() -> Self {
        use crate::model::limits::{STORAGE_GIVE_UP_SECS, STORAGE_RETRY_MAX_SECS};
        StoragePolicy {
            retry_max: Duration::from_secs(STORAGE_RETRY_MAX_SECS),
            give_up_after: Some(Duration::from_secs(STORAGE_GIVE_UP_SECS)),
        }
    }
}

/// One spell of failing writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    /// When the first write failed.
    pub(crate) since: Timestamp,
    /// The error of the latest failed attempt, as the operating system (or redb) put it.
    pub error: String,
    /// What the facts about the file say the cause is, and its fix.
    pub(crate) diagnosis: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "writes to the data file fail since {}: {}; {}",
            jiff::Timestamp::from_second(self.since.as_second()).unwrap_or(self.since),
            self.error,
            self.diagnosis
        )
    }
}

/// The data file's health, shared by the writer (which sets it) and every reader of it.
#[derive(Debug, Default)]
pub struct StorageHealth {
    failing: AtomicBool,
    failure: Mutex<Option<Failure>>,
    gave_up: AtomicBool,
    give_up: Notify,
    standby: AtomicBool,
    stand_by: Notify,
}

impl StorageHealth {
    /// Whether writes fail right now (cheap: the ping path asks before every write).
    pub fn is_failing(&self) -> bool {
        self.failing.load(Ordering::Acquire)
    }

    /// The current failure, if writes fail.
    pub(crate) fn failure(&self) -> Option<Failure> {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Records a failed write or reopen; a spell keeps the time of its first failure. Whether
    /// this started a new spell.
    pub(crate) fn set_failing(&self, error: String, diagnosis: String, now: Timestamp) -> bool {
        let mut slot = self.failure.lock().unwrap_or_else(PoisonError::into_inner);
        let since = slot.as_ref().map_or(now, |f| f.since);
        let started = slot.is_none();
        *slot = Some(Failure {
            since,
            error,
            diagnosis,
        });
        self.failing.store(true, Ordering::Release);
        started
    }

    /// Writes work again; the failure spell (if any) it ended.
    pub(crate) fn set_ok(&self) -> Option<Failure> {
        let mut slot = self.failure.lock().unwrap_or_else(PoisonError::into_inner);
        self.failing.store(false, Ordering::Release);
        slot.take()
    }

    /// Tells whoever waits in [`StorageHealth::given_up`] that the service should stop.
    pub(crate) fn give_up(&self) {
        if !self.gave_up.swap(true, Ordering::AcqRel) {
            // A stored permit: the waiter may start waiting only after this.
            self.give_up.notify_one();
        }
    }

    /// Tells whoever waits in [`StorageHealth::lost_lock`] that another node may be active:
    /// this one must stop serving and stand by.
    pub(crate) fn stand_by(&self) {
        if !self.standby.swap(true, Ordering::AcqRel) {
            self.stand_by.notify_one();
        }
    }

    /// Whether this node has lost the database's lock (it answers nothing but 503 until it
    /// stands by).
    pub fn is_standby(&self) -> bool {
        self.standby.load(Ordering::Acquire)
    }

    /// Resolves once this node has lost the database's lock.
    pub(crate) async fn lost_lock(&self) {
        self.stand_by.notified().await;
    }

    /// Resolves once the writer has given up on the file (see [`StoragePolicy`]).
    pub(crate) async fn given_up(&self) {
        self.give_up.notified().await;
    }
}

/// Facts about the data file and its filesystem that explain most write failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileFacts {
    pub(crate) file: PathBuf,
    /// Bytes available to this user on the file's filesystem (`None`: unknown).
    pub(crate) free_bytes: Option<u64>,
    /// Whether the filesystem is mounted read-only.
    pub(crate) read_only: bool,
    /// `Err(reason)` when this process may not write the file (e.g. an immutable file answers
    /// "Operation not permitted").
    pub(crate) file_writable: Result<(), String>,
    /// `Err(reason)` when this process may not create files in the directory.
    pub(crate) dir_writable: Result<(), String>,
}

impl FileFacts {
    /// Whether the filesystem has too little room to resume writing.
    pub(crate) fn is_full(&self) -> bool {
        self.free_bytes
            .is_some_and(|b| b < crate::model::limits::STORAGE_MIN_FREE_BYTES)
    }

    /// Looks at `file` and the directory and filesystem it is in.
    pub(crate) fn gather(file: &Path) -> FileFacts {
        let dir = file.parent().unwrap_or(Path::new("."));
        let fs = rustix::fs::statvfs(dir).ok();
        let access = |path: &Path| {
            rustix::fs::access(path, rustix::fs::Access::WRITE_OK).map_err(|e| {
                std::io::Error::from_raw_os_error(e.raw_os_error())
                    .to_string()
                    .split(" (os error")
                    .next()
                    .unwrap_or_default()
                    .to_string()
            })
        };
        FileFacts {
            file: file.to_path_buf(),
            free_bytes: fs.as_ref().map(|s| s.f_bavail.saturating_mul(s.f_frsize)),
            read_only: fs
                .as_ref()
                .is_some_and(|s| s.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY)),
            file_writable: access(file),
            dir_writable: access(dir),
        }
    }
}

/// The likely cause of failing writes and what to do, in one sentence.
pub(crate) fn diagnose(f: &FileFacts) -> String {
    let file = f.file.display();
    let dir = f
        .file
        .parent()
        .map_or_else(|| ".".into(), |d| d.display().to_string());
    if f.read_only {
        return format!("the filesystem of {dir} is mounted read-only: remount it read-write");
    }
    if f.is_full() {
        let free = f.free_bytes.unwrap_or(0);
        return format!(
            "the filesystem of {dir} is full ({} KiB free): free some space there; the service \
             resumes by itself",
            free >> 10
        );
    }
    if let Err(why) = &f.file_writable {
        return format!(
            "{file} is not writable ({why}): check its owner and mode (`ls -l`), and whether \
             it was made immutable (`lsattr`; `chattr -i` undoes it); the service resumes by \
             itself"
        );
    }
    if let Err(why) = &f.dir_writable {
        return format!(
            "{dir} is not writable ({why}): check its owner and mode; the service resumes by \
             itself"
        );
    }
    format!(
        "the disk has room and {file} is writable, so look for disk errors in the kernel log \
         (`dmesg`); the service keeps retrying"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> FileFacts {
        FileFacts {
            file: PathBuf::from("/var/lib/overdue/overdue.redb"),
            free_bytes: Some(10 << 30),
            read_only: false,
            file_writable: Ok(()),
            dir_writable: Ok(()),
        }
    }

    #[test]
    fn each_cause_is_named_with_its_fix() {
        let full = FileFacts {
            free_bytes: Some(12 << 10),
            ..facts()
        };
        assert!(diagnose(&full).contains("is full (12 KiB free)"));
        let immutable = FileFacts {
            file_writable: Err("Operation not permitted".into()),
            ..facts()
        };
        let text = diagnose(&immutable);
        assert!(
            text.contains("not writable (Operation not permitted)"),
            "{text}"
        );
        assert!(text.contains("chattr -i"), "{text}");
        let read_only = FileFacts {
            read_only: true,
            ..full.clone()
        };
        assert!(diagnose(&read_only).contains("read-only"));
        let dir = FileFacts {
            dir_writable: Err("Permission denied".into()),
            ..facts()
        };
        assert!(diagnose(&dir).contains("/var/lib/overdue is not writable"));
        assert!(diagnose(&facts()).contains("dmesg"));
    }

    #[test]
    fn a_spell_keeps_its_start_and_ends_once() {
        let health = StorageHealth::default();
        let t1: Timestamp = "2026-11-23T03:30:00Z".parse().expect("ts");
        let t2: Timestamp = "2026-11-23T03:31:00Z".parse().expect("ts");
        assert!(!health.is_failing());
        assert!(health.set_failing("full".into(), "free space".into(), t1));
        assert!(!health.set_failing("still full".into(), "free space".into(), t2));
        let f = health.failure().expect("failing");
        assert_eq!((f.since, f.error.as_str()), (t1, "still full"));
        assert!(health.is_failing());
        assert_eq!(health.set_ok().map(|f| f.since), Some(t1));
        assert!(!health.is_failing() && health.failure().is_none());
        assert_eq!(health.set_ok(), None);
    }

    #[test]
    fn gathered_facts_of_a_writable_temp_file() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").expect("write");
        let f = FileFacts::gather(&file);
        assert_eq!(f.file_writable, Ok(()));
        assert_eq!(f.dir_writable, Ok(()));
        assert!(f.free_bytes.is_some());
        assert!(!f.read_only);
        let missing = FileFacts::gather(&dir.path().join("missing"));
        assert_eq!(
            missing.file_writable,
            Err("No such file or directory".into())
        );
    }
}
