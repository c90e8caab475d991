//! Held alerts: quiet time (a snooze until a moment, a recurring quiet window) and down
//! parents. While quiet, a check records pings, status and flips as always but its alerts
//! are held; while one of its parents is down, its down alerts are held. When the quiet time
//! ends and no parent is down, one alert says where the check stands if that differs from
//! what its receivers were last told. A project's quiet window holds every check of the
//! project as the check's own would. Plain functions of the check, `now` and what the
//! caller looked up around it ([`Around`]: the project's window, whether a parent is down).

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value};

use crate::model::check::{Check, HeldAlert, QuietWindow, StoredStatus};
use crate::model::limits::MAX_PERIOD_SECS;
use crate::model::ping::Flip;
use crate::model::spec::SpecError;

/// The end of a snooze a request body asks for: `{"seconds": N}` (0 ends the snooze, at most
/// a year) or `{"until": "<RFC 3339 timestamp>"}` (a moment not after `now` ends it).
/// `None` ends the snooze.
pub(crate) fn parse_body(
    body: &Map<String, Value>,
    now: Timestamp,
) -> Result<Option<Timestamp>, SpecError> {
    let bad = |m: &str| SpecError(m.to_string());
    match (body.get("seconds"), body.get("until")) {
        (Some(_), Some(_)) => Err(bad("give seconds or until, not both")),
        (None, None) => Err(bad("seconds or until is required")),
        (Some(seconds), None) => {
            let Some(secs) = seconds
                .as_i64()
                .filter(|_| seconds.is_i64() || seconds.is_u64())
            else {
                return Err(bad(if seconds.is_f64() {
                    "seconds is not a whole number"
                } else if seconds.is_u64() {
                    "seconds is too large"
                } else {
                    "seconds is not a number"
                }));
            };
            if secs < 0 {
                return Err(bad("seconds is too small"));
            }
            if secs > MAX_PERIOD_SECS {
                return Err(bad("seconds is too large"));
            }
            Ok((secs > 0).then(|| now + SignedDuration::from_secs(secs)))
        }
        (None, Some(until)) => {
            let until = until
                .as_str()
                .and_then(|t| t.parse::<Timestamp>().ok())
                .ok_or_else(|| bad("until is not a timestamp (2026-01-02T03:04:05Z)"))?;
            if until.duration_since(now) > SignedDuration::from_secs(MAX_PERIOD_SECS) {
                return Err(bad("until is too far ahead (a year at most)"));
            }
            Ok(Some(until).filter(|u| *u > now))
        }
    }
}

/// What holds a check's alerts besides its own settings, looked up by the caller.
#[derive(Debug, Clone, Default)]
pub(crate) struct Around {
    /// The quiet window of the check's project, if it has one.
    pub(crate) project_quiet: Option<Arc<QuietWindow>>,
    /// Whether one of the check's parents is down.
    pub(crate) parent_down: bool,
}

/// The end of the quiet window `quiet` open at `t`, if one is: the window that opened at the
/// first fire time after `t - duration` covers `t` when that fire time is not after `t`.
fn window_end(quiet: &QuietWindow, t: Timestamp) -> Option<Timestamp> {
    let length = SignedDuration::from_secs(quiet.duration);
    let opened = quiet
        .compiled
        .as_ref()?
        .next_after(t.checked_sub(length).ok()?)?;
    (opened <= t)
        .then(|| opened.checked_add(length).ok())
        .flatten()
}

/// The end of the later of the check's and its project's quiet windows open at `t`.
fn windows_end(check: &Check, around: &Around, t: Timestamp) -> Option<Timestamp> {
    let own = check.quiet.as_deref().and_then(|q| window_end(q, t));
    let project = around
        .project_quiet
        .as_deref()
        .and_then(|q| window_end(q, t));
    own.max(project)
}

/// Whether the check's alerts are held at `now`: snoozed, or in its own or its project's
/// quiet window.
pub(crate) fn is_quiet(check: &Check, around: &Around, now: Timestamp) -> bool {
    check.is_snoozed(now) || windows_end(check, around, now).is_some()
}

/// The first moment from `t` on that is not quiet, when `t` is (a snooze and windows that
/// overlap or follow each other count as one quiet time).
fn quiet_end(check: &Check, around: &Around, t: Timestamp) -> Option<Timestamp> {
    let mut end = None;
    let mut at = t;
    // Bounded: windows end after they open, so each step moves forward; 64 chained quiet
    // periods are far more than any sensible settings make.
    for _ in 0..64 {
        let snooze = check.snoozed_until.filter(|u| at < *u);
        match snooze.max(windows_end(check, around, at)) {
            Some(next) => {
                end = Some(next);
                at = next;
            }
            None => break,
        }
    }
    end
}

/// Whether `flip`'s alert is held rather than sent: a notifying flip of a quiet check, a
/// down flip while a parent is down, or any notifying flip while an alert is held already
/// (it joins that one, so receivers never hear a recovery of a fall they were not told of).
pub(crate) fn holds(check: &Check, flip: &Flip, now: Timestamp, around: &Around) -> bool {
    flip.notifies()
        && (is_quiet(check, around, now)
            || check.held.is_some()
            || (around.parent_down && flip.new_status == StoredStatus::Down))
}

/// Keeps `flip`'s alert back: what receivers were told stays that of the first held alert,
/// the state becomes the flip's; it waits for the end of the quiet time, else for the
/// parents (`until` None), else for the engine to send it at once.
pub(crate) fn hold(check: &mut Check, flip: &Flip, now: Timestamp, around: &Around) {
    let told = check.held.as_ref().map_or(flip.old_status, |h| h.told);
    let until = quiet_end(check, around, now).or((!around.parent_down).then_some(now));
    check.held = Some(Box::new(HeldAlert {
        told,
        new: flip.new_status,
        at: flip.created,
        reason: flip.reason.clone(),
        until,
    }));
}

/// Snoozes the check until `until`, or ends its snooze (`None`, or a moment not after
/// `now`). An alert held meanwhile is then due when nothing holds it any more (see
/// [`release`]).
pub(crate) fn snooze(
    check: &mut Check,
    until: Option<Timestamp>,
    now: Timestamp,
    around: &Around,
) -> Option<HeldAlert> {
    check.snoozed_until = until.filter(|u| *u > now);
    release(check, now, around)
}

/// When what held an alert may have ended (the quiet time, a parent's fall): clears a snooze
/// that is over and answers the held alert to send, if the check's state (down or not)
/// differs from what its receivers were last told. While the check is still quiet or a
/// parent still down, the alert waits on, for the new end of the quiet time or the parents.
pub(crate) fn release(check: &mut Check, now: Timestamp, around: &Around) -> Option<HeldAlert> {
    if !check.is_snoozed(now) {
        check.snoozed_until = None;
    }
    let quiet = quiet_end(check, around, now);
    if quiet.is_some() || around.parent_down {
        if let Some(held) = check.held.as_mut() {
            held.until = quiet;
        }
        return None;
    }
    let held = check.held.take()?;
    let down = |s: StoredStatus| s == StoredStatus::Down;
    (down(held.told) != down(held.new)).then_some(*held)
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    /// Nothing around the check holds it.
    const ALONE: Around = Around {
        project_quiet: None,
        parent_down: false,
    };
    /// One of the check's parents is down.
    const PARENT_DOWN: Around = Around {
        project_quiet: None,
        parent_down: true,
    };

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("ts")
    }

    fn flip(old: StoredStatus, new: StoredStatus, at: &str) -> Flip {
        Flip {
            check: Uuid::nil(),
            created: ts(at),
            old_status: old,
            new_status: new,
            reason: if new == StoredStatus::Down {
                "timeout"
            } else {
                ""
            }
            .into(),
        }
    }

    fn snoozed() -> Check {
        let mut c = Check::new(
            Uuid::nil(),
            Uuid::nil(),
            1,
            ts("2026-01-01T00:00:00Z"),
            Uuid::nil(),
        );
        c.status = StoredStatus::Up;
        snooze(
            &mut c,
            Some(ts("2026-01-01T02:00:00Z")),
            ts("2026-01-01T00:00:00Z"),
            &ALONE,
        );
        c
    }

    #[test]
    fn snooze_bodies() {
        use serde_json::json;
        let now = ts("2026-01-01T00:00:00Z");
        let parse = |v: Value| {
            let Value::Object(m) = v else {
                panic!("object")
            };
            parse_body(&m, now).map_err(|e| e.0)
        };
        assert_eq!(
            parse(json!({"seconds": 3600})),
            Ok(Some(ts("2026-01-01T01:00:00Z")))
        );
        assert_eq!(parse(json!({"seconds": 0})), Ok(None));
        assert_eq!(
            parse(json!({"until": "2026-01-02T00:00:00+02:00"})),
            Ok(Some(ts("2026-01-01T22:00:00Z")))
        );
        assert_eq!(parse(json!({"until": "2025-12-31T00:00:00Z"})), Ok(None));
        for (body, message) in [
            (json!({}), "seconds or until is required"),
            (
                json!({"seconds": 1, "until": "x"}),
                "give seconds or until, not both",
            ),
            (json!({"seconds": "60"}), "seconds is not a number"),
            (json!({"seconds": 1.5}), "seconds is not a whole number"),
            (json!({"seconds": u64::MAX}), "seconds is too large"),
            (json!({"seconds": -1}), "seconds is too small"),
            (json!({"seconds": 31_536_001}), "seconds is too large"),
            (json!({"seconds": 1e30}), "seconds is not a whole number"),
            (
                json!({"until": "tomorrow"}),
                "until is not a timestamp (2026-01-02T03:04:05Z)",
            ),
            (
                json!({"until": "2030-01-01T00:00:00Z"}),
                "until is too far ahead (a year at most)",
            ),
        ] {
            assert_eq!(parse(body.clone()), Err(message.to_string()), "{body}");
        }
    }

    fn windowed(expr: &str, tz: &str, secs: i64) -> Check {
        let mut c = Check::new(
            Uuid::nil(),
            Uuid::nil(),
            1,
            ts("2026-01-01T00:00:00Z"),
            Uuid::nil(),
        );
        c.status = StoredStatus::Up;
        c.quiet = Some(Box::new(crate::model::check::QuietWindow::new(
            expr, tz, secs,
        )));
        c
    }

    #[test]
    fn a_weekly_window_in_a_zone_is_quiet_only_inside_and_ends_on_time() {
        // Sundays 02:00-04:00 in Riga (UTC+2 in winter): 2026-01-04 is a Sunday.
        let c = windowed("Sun 02:00", "Europe/Riga", 7200);
        assert!(
            !is_quiet(&c, &ALONE, ts("2026-01-03T23:59:59Z")),
            "01:59:59 local"
        );
        assert!(
            is_quiet(&c, &ALONE, ts("2026-01-04T00:00:00Z")),
            "02:00 local opens it"
        );
        assert!(is_quiet(&c, &ALONE, ts("2026-01-04T01:59:59Z")));
        assert!(
            !is_quiet(&c, &ALONE, ts("2026-01-04T02:00:00Z")),
            "04:00 local closes it"
        );
        assert!(
            !is_quiet(&c, &ALONE, ts("2026-01-07T00:30:00Z")),
            "a Wednesday"
        );
        assert_eq!(
            quiet_end(&c, &ALONE, ts("2026-01-04T01:00:00Z")),
            Some(ts("2026-01-04T02:00:00Z"))
        );
        assert_eq!(quiet_end(&c, &ALONE, ts("2026-01-04T03:00:00Z")), None);
    }

    #[test]
    fn a_window_across_the_dst_change_keeps_its_length() {
        // Riga moves to summer time on 2026-03-29 at 03:00 (UTC+2 -> UTC+3): a window that
        // opens at 02:00 local that Sunday (00:00 UTC) lasts two real hours.
        let c = windowed("Sun 02:00", "Europe/Riga", 7200);
        assert!(is_quiet(&c, &ALONE, ts("2026-03-29T00:00:00Z")));
        assert!(is_quiet(&c, &ALONE, ts("2026-03-29T01:59:59Z")));
        assert!(!is_quiet(&c, &ALONE, ts("2026-03-29T02:00:00Z")));
        // The next Sunday opens at 02:00 summer time, 23:00 UTC the day before.
        assert!(!is_quiet(&c, &ALONE, ts("2026-04-04T22:59:59Z")));
        assert!(is_quiet(&c, &ALONE, ts("2026-04-04T23:00:00Z")));
    }

    #[test]
    fn an_alert_held_in_a_window_waits_for_its_end_and_a_snooze_that_follows() {
        let mut c = windowed("0 2 * * *", "UTC", 3600);
        let down = flip(StoredStatus::Up, StoredStatus::Down, "2026-01-05T02:30:00Z");
        assert!(holds(&c, &down, ts("2026-01-05T02:30:00Z"), &ALONE));
        hold(&mut c, &down, ts("2026-01-05T02:30:00Z"), &ALONE);
        assert_eq!(c.next_attention(), Some(ts("2026-01-05T03:00:00Z")));
        // A snooze from 02:45 to 04:00 joins the window: the held alert waits for both.
        assert_eq!(
            snooze(
                &mut c,
                Some(ts("2026-01-05T04:00:00Z")),
                ts("2026-01-05T02:45:00Z"),
                &ALONE
            ),
            None
        );
        assert_eq!(c.next_attention(), Some(ts("2026-01-05T04:00:00Z")));
        assert_eq!(
            release(&mut c, ts("2026-01-05T03:00:00Z"), &ALONE),
            None,
            "still snoozed"
        );
        assert_eq!(c.next_attention(), Some(ts("2026-01-05T04:00:00Z")));
        // The service was stopped over the end: at start, once.
        let sent = release(&mut c, ts("2026-01-05T09:00:00Z"), &ALONE).expect("still down");
        assert_eq!(sent.new, StoredStatus::Down);
        assert_eq!(release(&mut c, ts("2026-01-05T09:00:01Z"), &ALONE), None);
        assert_eq!(c.next_attention(), None);
    }

    #[test]
    fn a_down_parent_holds_down_alerts_until_it_recovers() {
        let mut c = windowed("0 3 1 1 *", "UTC", 60);
        c.quiet = None;
        let now = ts("2026-01-05T10:00:00Z");
        let down = flip(StoredStatus::Up, StoredStatus::Down, "2026-01-05T10:00:00Z");
        assert!(!holds(&c, &down, now, &ALONE), "no parent down: sent");
        assert!(holds(&c, &down, now, &PARENT_DOWN));
        hold(&mut c, &down, now, &PARENT_DOWN);
        assert_eq!(
            c.next_attention(),
            c.alert_after(),
            "no deadline: the parent's flip"
        );
        assert_eq!(
            release(&mut c, now, &PARENT_DOWN),
            None,
            "the parent is still down"
        );
        // Its own recovery while the parent is down joins the held alert.
        let up = flip(StoredStatus::Down, StoredStatus::Up, "2026-01-05T10:05:00Z");
        assert!(holds(&c, &up, now, &PARENT_DOWN));
        let mut recovered = c.clone();
        hold(&mut recovered, &up, now, &PARENT_DOWN);
        assert_eq!(release(&mut recovered, now, &ALONE), None, "told up, is up");
        // Still down when the parent recovers: one alert then.
        let sent = release(&mut c, ts("2026-01-05T11:00:00Z"), &ALONE).expect("still down");
        assert_eq!(
            (sent.told, sent.new),
            (StoredStatus::Up, StoredStatus::Down)
        );
        assert!(c.held.is_none());
        // An up flip with nothing held is not held by a down parent.
        assert!(!holds(&c, &up, now, &PARENT_DOWN));
    }

    #[test]
    fn a_check_still_down_at_the_end_alerts_once() {
        let mut c = snoozed();
        let down = flip(StoredStatus::Up, StoredStatus::Down, "2026-01-01T01:00:00Z");
        assert!(holds(&c, &down, ts("2026-01-01T01:00:00Z"), &ALONE));
        hold(&mut c, &down, ts("2026-01-01T01:00:00Z"), &ALONE);
        assert_eq!(c.next_attention(), Some(ts("2026-01-01T02:00:00Z")));
        assert_eq!(
            release(&mut c, ts("2026-01-01T01:59:59Z"), &ALONE),
            None,
            "not yet"
        );
        let sent = release(&mut c, ts("2026-01-01T02:00:00Z"), &ALONE).expect("still down");
        assert_eq!(
            (sent.told, sent.new, sent.at, sent.reason.as_str()),
            (
                StoredStatus::Up,
                StoredStatus::Down,
                ts("2026-01-01T01:00:00Z"),
                "timeout"
            )
        );
        assert_eq!((c.snoozed_until, c.held.as_ref()), (None, None));
        assert_eq!(
            release(&mut c, ts("2026-01-01T03:00:00Z"), &ALONE),
            None,
            "once"
        );
        assert!(c.has_default_rules());
    }

    #[test]
    fn a_check_that_recovered_meanwhile_sends_nothing() {
        let mut c = snoozed();
        hold(
            &mut c,
            &flip(StoredStatus::Up, StoredStatus::Down, "2026-01-01T00:10:00Z"),
            ts("2026-01-01T00:10:00Z"),
            &ALONE,
        );
        hold(
            &mut c,
            &flip(StoredStatus::Down, StoredStatus::Up, "2026-01-01T00:20:00Z"),
            ts("2026-01-01T00:20:00Z"),
            &ALONE,
        );
        assert_eq!(release(&mut c, ts("2026-01-01T02:00:00Z"), &ALONE), None);
    }

    #[test]
    fn a_recovery_of_a_check_that_was_down_before_the_snooze_is_told() {
        let mut c = snoozed();
        c.status = StoredStatus::Down;
        hold(
            &mut c,
            &flip(StoredStatus::Down, StoredStatus::Up, "2026-01-01T00:30:00Z"),
            ts("2026-01-01T00:30:00Z"),
            &ALONE,
        );
        let sent = release(&mut c, ts("2026-01-01T02:00:00Z"), &ALONE).expect("told down, now up");
        assert_eq!(sent.new, StoredStatus::Up);
    }

    #[test]
    fn ending_a_snooze_early_releases_at_once_and_no_alert_is_held_without_one() {
        let mut c = snoozed();
        let up = flip(StoredStatus::New, StoredStatus::Up, "2026-01-01T00:05:00Z");
        assert!(
            !holds(&c, &up, ts("2026-01-01T00:05:00Z"), &ALONE),
            "new -> up never notifies"
        );
        assert_eq!(
            c.next_attention(),
            None,
            "nothing held: no wake-up for the snooze"
        );
        hold(
            &mut c,
            &flip(StoredStatus::Up, StoredStatus::Down, "2026-01-01T00:10:00Z"),
            ts("2026-01-01T00:10:00Z"),
            &ALONE,
        );
        let sent = snooze(&mut c, None, ts("2026-01-01T00:15:00Z"), &ALONE).expect("released");
        assert_eq!(sent.new, StoredStatus::Down);
        let after = flip(StoredStatus::Down, StoredStatus::Up, "2026-01-01T00:20:00Z");
        assert!(
            !holds(&c, &after, ts("2026-01-01T00:20:00Z"), &ALONE),
            "no longer snoozed"
        );
        // A moment in the past ends a snooze too.
        let mut c = snoozed();
        assert_eq!(
            snooze(
                &mut c,
                Some(ts("2025-01-01T00:00:00Z")),
                ts("2026-01-01T00:00:00Z"),
                &ALONE
            ),
            None
        );
        assert_eq!(c.snoozed_until, None);
    }

    /// A project whose window opens on Sundays at 02:00 in Riga for two hours.
    fn project_window() -> Around {
        Around {
            project_quiet: Some(Arc::new(QuietWindow::new("Sun 02:00", "Europe/Riga", 7200))),
            parent_down: false,
        }
    }

    #[test]
    fn a_projects_window_holds_a_check_without_one_of_its_own() {
        let around = project_window();
        let mut c = windowed("0 0 1 1 *", "UTC", 60);
        c.quiet = None;
        // Sunday 2026-01-04, 02:30 in Riga (UTC+2).
        let at = ts("2026-01-04T00:30:00Z");
        assert!(is_quiet(&c, &around, at) && !is_quiet(&c, &ALONE, at));
        let down = flip(StoredStatus::Up, StoredStatus::Down, "2026-01-04T00:30:00Z");
        assert!(holds(&c, &down, at, &around));
        hold(&mut c, &down, at, &around);
        assert_eq!(c.next_attention(), Some(ts("2026-01-04T02:00:00Z")));
        assert_eq!(release(&mut c, ts("2026-01-04T01:59:59Z"), &around), None);
        let sent = release(&mut c, ts("2026-01-04T02:00:00Z"), &around).expect("still down");
        assert_eq!(
            (sent.told, sent.new),
            (StoredStatus::Up, StoredStatus::Down)
        );
        // Outside the window a flip goes out at once.
        let later = flip(StoredStatus::Down, StoredStatus::Up, "2026-01-05T10:00:00Z");
        assert!(!holds(&c, &later, ts("2026-01-05T10:00:00Z"), &around));
    }

    #[test]
    fn a_checks_window_and_its_projects_that_follow_each_other_are_one_quiet_time() {
        // The check's own window, Sundays 01:00-02:30 Riga time, runs into the project's
        // 02:00-04:00: an alert held at 01:15 waits until 04:00.
        let around = project_window();
        let mut c = windowed("Sun 01:00", "Europe/Riga", 5400);
        let at = ts("2026-01-03T23:15:00Z");
        let down = flip(StoredStatus::Up, StoredStatus::Down, "2026-01-03T23:15:00Z");
        hold(&mut c, &down, at, &around);
        assert_eq!(c.next_attention(), Some(ts("2026-01-04T02:00:00Z")));
        // Without the project's window it would have ended with the check's own.
        assert_eq!(quiet_end(&c, &ALONE, at), Some(ts("2026-01-04T00:30:00Z")));
        assert_eq!(release(&mut c, ts("2026-01-04T00:30:00Z"), &around), None);
        assert!(release(&mut c, ts("2026-01-04T02:00:00Z"), &around).is_some());
    }
}
