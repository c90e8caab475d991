//! Pings (one recorded request to a ping URL) and flips (a change of stored status), and the
//! status machine that turns them into each other: every change of a check's stored status
//! (a ping, a deadline passing, pause and resume) goes through [`change`] here, so none is
//! made without its flip.

use jiff::Timestamp;
use uuid::Uuid;

use crate::model::check::{Check, Status, StoredStatus};

/// What a ping did, after classification (reference-behavior §4.3-4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PingKind {
    Success,
    Start,
    Fail,
    Log,
    /// Recorded but without effect (wrong method, no keyword matched, `manual_resume`).
    Ignored,
}

impl PingKind {
    /// The `type` of the pings API.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PingKind::Success => "success",
            PingKind::Start => "start",
            PingKind::Fail => "fail",
            PingKind::Log => "log",
            PingKind::Ignored => "ign",
        }
    }
}

/// One recorded ping. The body is kept apart (see the store) so lists stay cheap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ping {
    pub check: Uuid,
    /// Sequence number within the check, from 1, shared by all kinds.
    pub n: u64,
    pub created: Timestamp,
    pub kind: PingKind,
    pub scheme: String,
    pub remote_addr: Option<String>,
    pub method: String,
    pub ua: String,
    pub rid: Option<Uuid>,
    pub(crate) exit_status: Option<u8>,
    /// Bytes of body stored (0 = none).
    pub(crate) body_len: u32,
}

/// A change of a check's stored status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flip {
    pub check: Uuid,
    pub created: Timestamp,
    pub old_status: StoredStatus,
    pub new_status: StoredStatus,
    /// `""`, `"fail"` or `"timeout"`.
    pub reason: String,
}

/// Applies a classified ping to its check (reference-behavior §4.4) and numbers it.
/// Returns the kind recorded, the ping's `n` and the flip it causes, if any. `kind` must
/// already account for the URL, the method and keyword filters; here a paused check with
/// `manual_resume` turns it into [`PingKind::Ignored`] (that rule beats every other), and a
/// success that ends a run shorter than `min_duration` into [`PingKind::Fail`]. Recording the
/// returned kind again on the state before gives the same state: the journal replays it so.
///
/// A failure below `fail_threshold` failures in a row is counted, not obeyed: it is a ping
/// for the deadline (a new or paused check goes up) but does not take the check down.
pub(crate) fn record(
    check: &mut Check,
    kind: PingKind,
    rid: Option<Uuid>,
    now: Timestamp,
) -> (PingKind, u64, Option<Flip>) {
    let mut kind = if check.status == StoredStatus::Paused && check.manual_resume {
        PingKind::Ignored
    } else {
        kind
    };
    let mut flip = None;
    match kind {
        PingKind::Start => {
            check.last_start = Some(now);
            check.last_start_rid = rid;
        }
        PingKind::Success | PingKind::Fail => {
            check.last_ping = Some(now);
            check.last_duration = None;
            // A new grace period: the next lateness is news again.
            check.late_seen = None;
            if let Some(start) = check.last_start {
                if check.last_start_rid == rid {
                    check.last_duration = Some(now.duration_since(start));
                    check.last_start = None;
                    check.last_start_rid = None;
                } else if kind == PingKind::Fail || rid.is_none() {
                    check.last_start = None;
                    check.last_start_rid = None;
                }
            }
            if kind == PingKind::Success && ran_too_short(check) {
                kind = PingKind::Fail;
            }
            let new_status = if kind == PingKind::Success {
                check.fails_in_row = 0;
                StoredStatus::Up
            } else if check.status == StoredStatus::Down {
                StoredStatus::Down
            } else {
                check.fails_in_row = check.fails_in_row.saturating_add(1);
                if check.fails_in_row >= check.fail_threshold {
                    StoredStatus::Down
                } else {
                    StoredStatus::Up
                }
            };
            if new_status != check.status {
                let reason = if new_status == StoredStatus::Down {
                    "fail"
                } else {
                    ""
                };
                flip = Some(change(check, new_status, now, reason));
            }
        }
        PingKind::Log | PingKind::Ignored => {}
    }
    check.n_pings += 1;
    (kind, check.n_pings, flip)
}

/// Whether the run that just ended took less than `min_duration`.
fn ran_too_short(check: &Check) -> bool {
    check.min_duration > 0
        && check
            .last_duration
            .is_some_and(|d| d < jiff::SignedDuration::from_secs(check.min_duration))
}

/// Moves `check` to `new_status` and answers the flip that records the change, stamped `at`
/// with `reason` (`""`, `"fail"` or `"timeout"`).
fn change(check: &mut Check, new_status: StoredStatus, at: Timestamp, reason: &str) -> Flip {
    let flip = Flip {
        check: check.uuid,
        created: at,
        old_status: check.status,
        new_status,
        reason: reason.into(),
    };
    check.status = new_status;
    flip
}

/// Takes a check down whose deadline has passed at `now` (reference-behavior §5.2): the flip is
/// stamped with the moment the check became due, not `now`. None when the check is down
/// already or not overdue after all (pinged, rescheduled or paused meanwhile).
pub(crate) fn time_out(check: &mut Check, now: Timestamp) -> Option<Flip> {
    if check.status == StoredStatus::Down || check.status_at(now, false) != Status::Down {
        return None;
    }
    let at = check.alert_after()?;
    check.late_seen = None;
    Some(change(check, StoredStatus::Down, at, "timeout"))
}

/// Marks `check` seen late if its grace period has begun at `now` and it is not down yet:
/// answers the grace start, the moment of its one late notice for this grace period. None
/// when it is not late, or was already seen late (`Check::late_at`).
pub(crate) fn turn_late(check: &mut Check, now: Timestamp) -> Option<Timestamp> {
    let at = check.late_at()?;
    if check.status_at(now, false) != Status::Grace {
        return None;
    }
    check.late_seen = Some(at);
    Some(at)
}

/// Whether a ping of `kind` just recorded on `check` was a failure that `fail_threshold`
/// kept from taking it down (a `failure` event).
pub(crate) fn failure_held_back(check: &Check, kind: PingKind) -> bool {
    kind == PingKind::Fail && check.status == StoredStatus::Up
}

/// Pause or resume: the new stored status with its flip (silent: no reason); a running start
/// is dropped.
pub(crate) fn set_status(check: &mut Check, status: StoredStatus, now: Timestamp) -> Flip {
    check.last_start = None;
    check.last_start_rid = None;
    check.fails_in_row = 0;
    check.late_seen = None;
    change(check, status, now, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("ts")
    }

    fn check() -> Check {
        Check::new(
            Uuid::from_u128(1),
            Uuid::nil(),
            1,
            ts("2020-01-01T00:00:00Z"),
            Uuid::nil(),
        )
    }

    #[test]
    fn success_on_new_check_goes_up_with_a_flip() {
        let mut c = check();
        let (kind, n, flip) = record(&mut c, PingKind::Success, None, ts("2020-01-01T00:01:00Z"));
        assert_eq!((kind, n), (PingKind::Success, 1));
        let flip = flip.expect("new -> up flips");
        assert_eq!(
            (flip.old_status, flip.new_status),
            (StoredStatus::New, StoredStatus::Up)
        );
        assert_eq!(c.last_ping, Some(ts("2020-01-01T00:01:00Z")));
        let (_, n, flip) = record(&mut c, PingKind::Success, None, ts("2020-01-01T00:02:00Z"));
        assert_eq!(n, 2);
        assert!(flip.is_none(), "up -> up is no flip");
    }

    #[test]
    fn a_check_is_seen_late_once_per_grace_period() {
        let mut c = check();
        c.timeout = 60;
        c.grace = 60;
        record(&mut c, PingKind::Success, None, ts("2020-01-01T00:00:00Z"));
        let grace = ts("2020-01-01T00:01:00Z");
        assert_eq!(
            c.next_attention(),
            Some(grace),
            "the engine wakes at the grace start"
        );
        assert_eq!(
            turn_late(&mut c, ts("2020-01-01T00:00:59Z")),
            None,
            "not yet"
        );
        assert_eq!(turn_late(&mut c, grace), Some(grace));
        assert_eq!(turn_late(&mut c, ts("2020-01-01T00:01:30Z")), None, "once");
        assert_eq!(
            c.next_attention(),
            Some(ts("2020-01-01T00:02:00Z")),
            "then down"
        );
        record(&mut c, PingKind::Success, None, ts("2020-01-01T00:01:30Z"));
        let next = ts("2020-01-01T00:02:30Z");
        assert_eq!(c.next_attention(), Some(next), "a ping arms it again");
        assert_eq!(turn_late(&mut c, next), Some(next));
        assert!(time_out(&mut c, ts("2020-01-01T00:03:30Z")).is_some());
        assert_eq!(
            turn_late(&mut c, ts("2020-01-01T00:03:31Z")),
            None,
            "down is not late"
        );
    }

    #[test]
    fn no_grace_or_a_bounded_run_has_no_late_moment() {
        let mut c = check();
        c.timeout = 60;
        c.grace = 0;
        record(&mut c, PingKind::Success, None, ts("2020-01-01T00:00:00Z"));
        assert_eq!(c.late_at(), None);
        c.grace = 60;
        c.max_duration = 30;
        record(&mut c, PingKind::Start, None, ts("2020-01-01T00:00:10Z"));
        assert_eq!(c.late_at(), None, "max_duration governs the run");
    }

    #[test]
    fn a_failure_the_threshold_holds_back_is_told_apart() {
        let mut c = check();
        c.fail_threshold = 2;
        let (kind, _, _) = record(&mut c, PingKind::Fail, None, ts("2020-01-01T00:00:00Z"));
        assert!(failure_held_back(&c, kind));
        let (kind, _, flip) = record(&mut c, PingKind::Fail, None, ts("2020-01-01T00:00:01Z"));
        assert!(
            flip.is_some() && !failure_held_back(&c, kind),
            "the second goes down"
        );
        let (kind, _, _) = record(&mut c, PingKind::Success, None, ts("2020-01-01T00:00:02Z"));
        assert!(!failure_held_back(&c, kind));
    }

    #[test]
    fn a_passed_deadline_flips_down_stamped_when_it_passed() {
        let mut c = check();
        c.timeout = 60;
        c.grace = 60;
        record(&mut c, PingKind::Success, None, ts("2020-01-01T00:00:00Z"));
        assert!(
            time_out(&mut c, ts("2020-01-01T00:01:59Z")).is_none(),
            "in grace"
        );
        let flip = time_out(&mut c, ts("2020-01-01T00:05:00Z")).expect("overdue");
        assert_eq!(flip.created, ts("2020-01-01T00:02:00Z"));
        assert_eq!(
            (flip.old_status, flip.new_status, flip.reason.as_str()),
            (StoredStatus::Up, StoredStatus::Down, "timeout")
        );
        assert_eq!(c.status, StoredStatus::Down);
        assert!(
            time_out(&mut c, ts("2020-01-01T00:06:00Z")).is_none(),
            "down already"
        );
    }

    #[test]
    fn pause_drops_a_running_start_and_flips_silently() {
        let mut c = check();
        record(&mut c, PingKind::Success, None, ts("2020-01-01T00:00:00Z"));
        record(&mut c, PingKind::Start, None, ts("2020-01-01T00:00:10Z"));
        let flip = set_status(&mut c, StoredStatus::Paused, ts("2020-01-01T00:00:20Z"));
        assert_eq!(
            (flip.old_status, flip.new_status, flip.reason.as_str()),
            (StoredStatus::Up, StoredStatus::Paused, "")
        );
        assert_eq!(flip.created, ts("2020-01-01T00:00:20Z"));
        assert_eq!((c.status, c.last_start), (StoredStatus::Paused, None));
        assert!(
            time_out(&mut c, ts("2021-01-01T00:00:00Z")).is_none(),
            "paused"
        );
    }

    #[test]
    fn fail_goes_down_with_reason() {
        let mut c = check();
        let (_, _, flip) = record(&mut c, PingKind::Fail, None, ts("2020-01-01T00:01:00Z"));
        let flip = flip.expect("flip");
        assert_eq!(
            (flip.new_status, flip.reason.as_str()),
            (StoredStatus::Down, "fail")
        );
        assert_eq!(c.status, StoredStatus::Down);
        let (_, _, again) = record(&mut c, PingKind::Fail, None, ts("2020-01-01T00:02:00Z"));
        assert!(again.is_none(), "down -> down is no flip");
    }

    #[test]
    fn start_then_matching_success_measures_duration() {
        let mut c = check();
        let rid = Some(Uuid::from_u128(9));
        record(&mut c, PingKind::Start, rid, ts("2020-01-01T00:00:00Z"));
        assert_eq!(c.status, StoredStatus::New);
        assert!(c.last_ping.is_none());
        record(
            &mut c,
            PingKind::Success,
            Some(Uuid::from_u128(8)),
            ts("2020-01-01T00:00:05Z"),
        );
        assert!(
            c.last_start.is_some(),
            "another run's success keeps the start"
        );
        assert!(c.last_duration.is_none());
        record(&mut c, PingKind::Success, rid, ts("2020-01-01T00:00:10Z"));
        assert_eq!(c.last_duration, Some(jiff::SignedDuration::from_secs(10)));
        assert!(c.last_start.is_none());
    }

    #[test]
    fn success_without_rid_or_fail_clears_a_foreign_start() {
        let mut c = check();
        record(
            &mut c,
            PingKind::Start,
            Some(Uuid::from_u128(9)),
            ts("2020-01-01T00:00:00Z"),
        );
        record(&mut c, PingKind::Success, None, ts("2020-01-01T00:00:05Z"));
        assert!(c.last_start.is_none() && c.last_duration.is_none());
        record(
            &mut c,
            PingKind::Start,
            Some(Uuid::from_u128(9)),
            ts("2020-01-01T00:00:06Z"),
        );
        record(
            &mut c,
            PingKind::Fail,
            Some(Uuid::from_u128(7)),
            ts("2020-01-01T00:00:07Z"),
        );
        assert!(c.last_start.is_none() && c.last_duration.is_none());
    }

    #[test]
    fn log_and_ignored_only_count() {
        let mut c = check();
        for kind in [PingKind::Log, PingKind::Ignored] {
            let (k, _, flip) = record(&mut c, kind, None, ts("2020-01-01T00:00:00Z"));
            assert_eq!(k, kind);
            assert!(flip.is_none());
        }
        assert_eq!(c.n_pings, 2);
        assert_eq!(c.status, StoredStatus::New);
        assert!(c.last_ping.is_none());
    }

    #[test]
    fn a_threshold_holds_failures_back_until_enough_come_in_a_row() {
        let mut c = check();
        c.fail_threshold = 3;
        let at = |m: u32| ts(&format!("2020-01-01T00:{m:02}:00Z"));
        let (kind, _, flip) = record(&mut c, PingKind::Fail, None, at(1));
        assert_eq!(kind, PingKind::Fail, "recorded as the failure it is");
        let flip = flip.expect("a held failure is still a ping: new -> up");
        assert_eq!(
            (flip.new_status, flip.reason.as_str()),
            (StoredStatus::Up, "")
        );
        assert_eq!((c.fails_in_row, c.last_ping), (1, Some(at(1))));
        assert!(record(&mut c, PingKind::Fail, None, at(2)).2.is_none());
        // A success in between starts the count again.
        record(&mut c, PingKind::Success, None, at(3));
        assert_eq!(c.fails_in_row, 0);
        for m in 4..6 {
            assert!(record(&mut c, PingKind::Fail, None, at(m)).2.is_none());
        }
        let flip = record(&mut c, PingKind::Fail, None, at(6))
            .2
            .expect("third in a row");
        assert_eq!(
            (flip.new_status, flip.reason.as_str()),
            (StoredStatus::Down, "fail")
        );
        assert!(record(&mut c, PingKind::Fail, None, at(7)).2.is_none());
        let flip = record(&mut c, PingKind::Success, None, at(8))
            .2
            .expect("recovery");
        assert_eq!(flip.new_status, StoredStatus::Up);
        assert_eq!(c.fails_in_row, 0);
    }

    #[test]
    fn a_run_shorter_than_min_duration_is_a_failure() {
        let mut c = check();
        c.min_duration = 60;
        let rid = Some(Uuid::from_u128(3));
        record(&mut c, PingKind::Start, rid, ts("2020-01-01T00:00:00Z"));
        let (kind, _, flip) = record(&mut c, PingKind::Success, rid, ts("2020-01-01T00:00:02Z"));
        assert_eq!(kind, PingKind::Fail);
        assert_eq!(
            flip.map(|f| (f.new_status, f.reason)),
            Some((StoredStatus::Down, "fail".to_string()))
        );
        assert_eq!(c.last_duration, Some(jiff::SignedDuration::from_secs(2)));
        // Long enough: a success; a success that ends no run is not measured.
        record(&mut c, PingKind::Start, rid, ts("2020-01-01T01:00:00Z"));
        let (kind, _, _) = record(&mut c, PingKind::Success, rid, ts("2020-01-01T01:01:00Z"));
        assert_eq!((kind, c.status), (PingKind::Success, StoredStatus::Up));
        let (kind, _, _) = record(&mut c, PingKind::Success, None, ts("2020-01-01T02:00:00Z"));
        assert_eq!(kind, PingKind::Success);
    }

    #[test]
    fn replaying_the_recorded_kind_gives_the_same_state() {
        let mut live = check();
        live.min_duration = 10;
        live.fail_threshold = 2;
        let mut replayed = live.clone();
        let rid = Some(Uuid::from_u128(5));
        let steps = [
            (PingKind::Start, rid, "2020-01-01T00:00:00Z"),
            (PingKind::Success, rid, "2020-01-01T00:00:01Z"),
            (PingKind::Fail, None, "2020-01-01T00:01:00Z"),
            (PingKind::Success, None, "2020-01-01T00:02:00Z"),
        ];
        for (kind, rid, at) in steps {
            let (recorded, _, flip) = record(&mut live, kind, rid, ts(at));
            let (again, _, flip_again) = record(&mut replayed, recorded, rid, ts(at));
            assert_eq!((recorded, flip), (again, flip_again));
            assert_eq!(
                (live.status, live.fails_in_row, live.last_duration),
                (
                    replayed.status,
                    replayed.fails_in_row,
                    replayed.last_duration
                )
            );
        }
    }

    #[test]
    fn manual_resume_ignores_everything_while_paused() {
        let mut c = check();
        c.status = StoredStatus::Paused;
        c.manual_resume = true;
        let (k, _, flip) = record(&mut c, PingKind::Fail, None, ts("2020-01-01T00:00:00Z"));
        assert_eq!(k, PingKind::Ignored);
        assert!(flip.is_none());
        assert_eq!(c.status, StoredStatus::Paused);
        c.manual_resume = false;
        let (_, _, flip) = record(&mut c, PingKind::Success, None, ts("2020-01-01T00:00:01Z"));
        assert_eq!(flip.map(|f| f.old_status), Some(StoredStatus::Paused));
    }
}
