//! Alerts waiting to be delivered: one entry per (flip that notifies, assigned channel),
//! written in the same transaction as the flip (reference-behavior §5.3); the record of each
//! delivery attempt; and the pure rules of retrying (backoff) and channel health.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use uuid::Uuid;

use crate::model::events::Event;
use crate::model::limits::{
    DEFAULT_DELIVERY_TIMEOUT_SECS, DEFAULT_DELIVERY_TRIES, DEFAULT_RETRY_BASE_SECS,
    DELIVERIES_IN_FLIGHT,
};
use crate::model::{Flip, StoredStatus};

/// One alert for one channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEntry {
    /// Order of queueing, unique across the store.
    pub(crate) seq: u64,
    pub(crate) channel: Uuid,
    pub check: Uuid,
    /// When the flip happened (its computed moment).
    pub(crate) flip_created: Timestamp,
    pub old_status: StoredStatus,
    pub new_status: StoredStatus,
    pub reason: String,
    pub(crate) queued: Timestamp,
}

/// Reason of an outbox entry queued by a channel's repeat interval, not by a flip.
pub(crate) const REPEAT_REASON: &str = "repeat";

impl OutboxEntry {
    /// What the entry tells: a `late` or `failure` notice (queued with that reason, the
    /// status unchanged), else the flip's new status (a repeat is a down alert).
    pub(crate) fn event(&self) -> Event {
        match self.reason.as_str() {
            r if r == Event::Late.as_str() => Event::Late,
            r if r == Event::Failure.as_str() => Event::Failure,
            _ if self.new_status == StoredStatus::Up => Event::Up,
            _ => Event::Down,
        }
    }
}

/// Where an entry stands in its retries: attempts made and when the next one is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tries {
    pub done: u32,
    pub(crate) next: Timestamp,
}

/// The outcome of one delivery attempt, kept durably.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub(crate) channel: Uuid,
    /// The outbox entry it was for; 0 for `channel test`.
    pub(crate) outbox_seq: u64,
    pub check: Option<Uuid>,
    pub(crate) at: Timestamp,
    pub(crate) duration: SignedDuration,
    /// 1 for the first try.
    pub attempt: u32,
    /// HTTP status code, or SMTP reply code, or exit status, when there was one.
    pub code: Option<u16>,
    /// "" on success.
    pub error: String,
    /// The last try of an entry that failed: it is dropped from the outbox.
    pub(crate) gave_up: bool,
}

impl Delivery {
    pub(crate) fn ok(&self) -> bool {
        self.error.is_empty()
    }
}

/// When to try again after `done` failed tries, the last at `last`; None when the tries are
/// spent. `delays[i]` is the wait after failure i + 1, so `delays.len() + 1` tries in all.
pub(crate) fn retry_at(done: u32, last: Timestamp, delays: &[Duration]) -> Option<Timestamp> {
    let delay = delays.get(usize::try_from(done).ok()?.checked_sub(1)?)?;
    let delay = SignedDuration::try_from(*delay).ok()?;
    last.checked_add(delay).ok()
}

/// The default retry schedule: exponential from `base`, `tries - 1` delays (with 2 min and 5
/// tries: 2, 4, 8 and 16 minutes, 30 minutes in all).
pub fn backoff(base: Duration, tries: u32) -> Vec<Duration> {
    (0..tries.saturating_sub(1))
        .map(|i| base.saturating_mul(1 << i.min(20)))
        .collect()
}

/// How a channel is doing, from its recent deliveries (newest first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Health {
    /// Failed attempts since the last success.
    pub(crate) failing: usize,
    pub(crate) last: Option<Delivery>,
}

pub(crate) fn health(recent: &[Delivery]) -> Health {
    Health {
        failing: recent.iter().take_while(|d| !d.ok()).count(),
        last: recent.first().cloned(),
    }
}

impl Flip {
    /// Whether this flip alerts anyone: changes between up and down do, except a check's first
    /// success (new → up) and a paused check's first success (paused → up). Flips into
    /// `paused` and `new` (pause, resume) never do.
    pub(crate) fn notifies(&self) -> bool {
        match self.new_status {
            StoredStatus::Down => true,
            StoredStatus::Up => {
                !matches!(self.old_status, StoredStatus::New | StoredStatus::Paused)
            }
            StoredStatus::New | StoredStatus::Paused => false,
        }
    }
}

/// How alerts are delivered; server-wide (serve's flags and variables). Plain settings, kept
/// by the service and read by the delivery worker.
#[derive(Debug, Clone)]
pub struct NotifyConfig {
    /// `smtp://`, `smtps://` or `smtp://...?tls=required`, with optional `user:pass@`.
    pub smtp_url: Option<String>,
    /// The From address of alert emails.
    pub smtp_from: Option<String>,
    /// Whether shell channels may run their commands.
    pub allow_shell: bool,
    /// Waits between tries; `retry_delays.len() + 1` tries in all.
    pub retry_delays: Vec<Duration>,
    /// Longest one attempt may take (connect, send, answer).
    pub timeout: Duration,
    /// Deliveries running at once.
    pub in_flight: usize,
    /// The dashboard is served: alerts link to the check's page there (else to the API).
    pub dashboard: bool,
}

/// Where an alert about a check links: its dashboard page when the dashboard is on (a person
/// opens it in a browser), else the Management API URL of the check, as before the dashboard.
pub fn check_link(site_root: &str, check: &uuid::Uuid, dashboard: bool) -> String {
    if dashboard {
        format!("{site_root}/checks/{check}/")
    } else {
        format!("{site_root}/api/v3/checks/{check}")
    }
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            smtp_url: None,
            smtp_from: None,
            allow_shell: false,
            retry_delays: backoff(
                Duration::from_secs(DEFAULT_RETRY_BASE_SECS),
                DEFAULT_DELIVERY_TRIES,
            ),
            timeout: Duration::from_secs(DEFAULT_DELIVERY_TIMEOUT_SECS),
            in_flight: DELIVERIES_IN_FLIGHT,
            dashboard: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_tells_its_event_by_reason_then_by_status() {
        let entry = |new_status, reason: &str| OutboxEntry {
            seq: 1,
            channel: Uuid::nil(),
            check: Uuid::nil(),
            flip_created: Timestamp::UNIX_EPOCH,
            old_status: StoredStatus::Up,
            new_status,
            reason: reason.into(),
            queued: Timestamp::UNIX_EPOCH,
        };
        assert_eq!(entry(StoredStatus::Up, "late").event(), Event::Late);
        assert_eq!(entry(StoredStatus::Up, "failure").event(), Event::Failure);
        assert_eq!(entry(StoredStatus::Up, "").event(), Event::Up);
        assert_eq!(entry(StoredStatus::Down, "fail").event(), Event::Down);
        assert_eq!(
            entry(StoredStatus::Down, REPEAT_REASON).event(),
            Event::Down
        );
    }

    #[test]
    fn alerts_link_to_the_dashboard_when_it_is_on() {
        let u = uuid::Uuid::nil();
        assert_eq!(
            check_link("https://mon.example/x", &u, true),
            format!("https://mon.example/x/checks/{u}/")
        );
        assert_eq!(
            check_link("https://mon.example", &u, false),
            format!("https://mon.example/api/v3/checks/{u}")
        );
    }

    #[test]
    fn retries_back_off_exponentially_then_stop() {
        let delays = backoff(Duration::from_secs(120), 5);
        assert_eq!(
            delays.iter().map(|d| d.as_secs() / 60).collect::<Vec<_>>(),
            vec![2, 4, 8, 16]
        );
        let t0 = Timestamp::UNIX_EPOCH;
        assert_eq!(
            retry_at(0, t0, &delays),
            None,
            "no try yet: nothing to retry"
        );
        assert_eq!(
            retry_at(1, t0, &delays),
            Some(t0 + SignedDuration::from_mins(2))
        );
        assert_eq!(
            retry_at(4, t0, &delays),
            Some(t0 + SignedDuration::from_mins(16))
        );
        assert_eq!(retry_at(5, t0, &delays), None, "five tries spent");
    }

    #[test]
    fn health_counts_failures_since_the_last_success() {
        let d = |error: &str| Delivery {
            channel: Uuid::nil(),
            outbox_seq: 1,
            check: None,
            at: Timestamp::UNIX_EPOCH,
            duration: SignedDuration::ZERO,
            attempt: 1,
            code: None,
            error: error.into(),
            gave_up: false,
        };
        let h = health(&[d("boom"), d("boom"), d(""), d("boom")]);
        assert_eq!(h.failing, 2);
        assert_eq!(health(&[d(""), d("x")]).failing, 0);
        assert_eq!(health(&[]).last, None);
    }

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
