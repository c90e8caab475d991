//! Alerts waiting to be delivered: one entry per (flip that notifies, assigned channel),
//! written in the same transaction as the flip (reference-behavior §5.3).

use jiff::Timestamp;
use uuid::Uuid;

use crate::model::{Flip, StoredStatus};

/// One alert for one channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEntry {
    /// Order of queueing, unique across the store.
    pub seq: u64,
    pub channel: Uuid,
    pub check: Uuid,
    /// When the flip happened (its computed moment).
    pub flip_created: Timestamp,
    pub old_status: StoredStatus,
    pub new_status: StoredStatus,
    pub reason: String,
    pub queued: Timestamp,
}

impl Flip {
    /// Whether this flip alerts anyone: changes between up and down do, except a check's first
    /// success (new → up) and a paused check's first success (paused → up). Flips into
    /// `paused` and `new` (pause, resume) never do.
    pub fn notifies(&self) -> bool {
        match self.new_status {
            StoredStatus::Down => true,
            StoredStatus::Up => {
                !matches!(self.old_status, StoredStatus::New | StoredStatus::Paused)
            }
            StoredStatus::New | StoredStatus::Paused => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flip(old: StoredStatus, new: StoredStatus) -> Flip {
        Flip {
            check: Uuid::nil(),
            created: Timestamp::UNIX_EPOCH,
            old_status: old,
            new_status: new,
            reason: String::new(),
        }
    }

    #[test]
    fn who_is_alerted() {
        use StoredStatus::*;
        assert!(flip(Up, Down).notifies());
        assert!(flip(New, Down).notifies());
        assert!(flip(Paused, Down).notifies());
        assert!(flip(Down, Up).notifies());
        assert!(!flip(New, Up).notifies());
        assert!(!flip(Paused, Up).notifies());
        assert!(!flip(Up, Paused).notifies());
        assert!(!flip(Paused, New).notifies());
    }
}
