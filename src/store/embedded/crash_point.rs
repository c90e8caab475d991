//! Crash points: places in the write-ahead log's life where the crash tests (tests/crash.rs) need a
//! `kill -9` that a test cannot time from outside (during a checkpoint, between a checkpoint's
//! commit and the log cut, halfway through a record).
//!
//! `OVERDUE_CRASH_AT=<point>[:<n>]` in the environment makes the process send itself SIGKILL
//! the `n`th time (first by default) it reaches `<point>`. Without the variable a point costs
//! one load of a value read once. It is a test hook, documented in docs/design.md; nothing in
//! normal operation sets it.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where the process can be made to die.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Point {
    /// Half a batch of log records written and synced, the rest never.
    LogAppendTorn,
    /// A checkpoint is due and about to commit: the log holds what the file does not.
    Checkpoint,
    /// A checkpoint committed durably; the log is not cut yet.
    CheckpointCommitted,
    /// One covered segment of the log removed, the others not, the directory not synced.
    LogCut,
}

impl Point {
    fn parse(name: &str) -> Option<Point> {
        Some(match name {
            "log-append-torn" => Point::LogAppendTorn,
            "checkpoint" => Point::Checkpoint,
            "checkpoint-committed" => Point::CheckpointCommitted,
            "log-cut" => Point::LogCut,
            _ => return None,
        })
    }
}

/// The armed point and the how-manieth time it fires.
fn armed() -> Option<(Point, u64)> {
    static ARMED: OnceLock<Option<(Point, u64)>> = OnceLock::new();
    *ARMED.get_or_init(|| {
        let value = std::env::var("OVERDUE_CRASH_AT").ok()?;
        let (name, nth) = match value.split_once(':') {
            Some((name, n)) => (name, n.parse().ok()?),
            None => (value.as_str(), 1),
        };
        let point = Point::parse(name);
        if point.is_none() {
            tracing::warn!("OVERDUE_CRASH_AT={value:?} names no crash point; ignored");
        }
        point.map(|p| (p, nth))
    })
}

/// Whether reaching `point` now is the time to die (counts the visit).
pub(crate) fn fires(point: Point) -> bool {
    static VISITS: AtomicU64 = AtomicU64::new(0);
    match armed() {
        Some((armed, nth)) if armed == point => VISITS.fetch_add(1, Ordering::AcqRel) + 1 == nth,
        _ => false,
    }
}

/// Dies as `kill -9` would: no destructor runs, nothing is flushed.
pub(crate) fn die() -> ! {
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    // SIGKILL cannot be caught; this is not reached.
    std::process::abort()
}

/// Dies here if `point` is armed and its turn has come.
pub(crate) fn reached(point: Point) {
    if fires(point) {
        die();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_point_has_a_name_and_unknown_names_are_none() {
        for (name, point) in [
            ("log-append-torn", Point::LogAppendTorn),
            ("checkpoint", Point::Checkpoint),
            ("checkpoint-committed", Point::CheckpointCommitted),
            ("log-cut", Point::LogCut),
        ] {
            assert_eq!(Point::parse(name), Some(point));
        }
        assert_eq!(Point::parse("checkpoints"), None);
    }
}
