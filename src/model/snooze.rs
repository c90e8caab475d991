//! Snoozing a check: while snoozed it records pings, status and flips as always but its
//! alerts are held; when the snooze ends, one alert says where the check stands if that
//! differs from what its receivers were last told. Plain functions of the check and `now`.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value};

use crate::model::check::{Check, HeldAlert, StoredStatus};
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
                return Err(bad(if seconds.is_number() {
                    "seconds is out of range"
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

/// Whether `flip`'s alert is held rather than sent: a notifying flip of a snoozed check.
pub(crate) fn holds(check: &Check, flip: &Flip, now: Timestamp) -> bool {
    flip.notifies() && check.is_snoozed(now)
}

/// Keeps `flip`'s alert back: what receivers were told stays that of the first held alert,
/// the state becomes the flip's.
pub(crate) fn hold(check: &mut Check, flip: &Flip) {
    let told = check.held.as_ref().map_or(flip.old_status, |h| h.told);
    check.held = Some(HeldAlert {
        told,
        new: flip.new_status,
        at: flip.created,
        reason: flip.reason.clone(),
    });
}

/// Snoozes the check until `until`, or ends its snooze (`None`, or a moment not after
/// `now`). Ending it releases what it held: see [`release`].
pub(crate) fn snooze(
    check: &mut Check,
    until: Option<Timestamp>,
    now: Timestamp,
) -> Option<HeldAlert> {
    if let Some(until) = until.filter(|u| *u > now) {
        check.snoozed_until = Some(until);
        return None;
    }
    check.snoozed_until = None;
    release(check, now)
}

/// At or after the snooze's end: clears the snooze and answers the alert to send, if the
/// check's state (down or not) differs from what its receivers were last told. `None` while
/// still snoozed.
pub(crate) fn release(check: &mut Check, now: Timestamp) -> Option<HeldAlert> {
    if check.is_snoozed(now) {
        return None;
    }
    check.snoozed_until = None;
    let held = check.held.take()?;
    let down = |s: StoredStatus| s == StoredStatus::Down;
    (down(held.told) != down(held.new)).then_some(held)
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

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
            (json!({"seconds": 1.5}), "seconds is out of range"),
            (json!({"seconds": -1}), "seconds is too small"),
            (json!({"seconds": 31_536_001}), "seconds is too large"),
            (json!({"seconds": 1e30}), "seconds is out of range"),
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

    #[test]
    fn a_check_still_down_at_the_end_alerts_once() {
        let mut c = snoozed();
        let down = flip(StoredStatus::Up, StoredStatus::Down, "2026-01-01T01:00:00Z");
        assert!(holds(&c, &down, ts("2026-01-01T01:00:00Z")));
        hold(&mut c, &down);
        assert_eq!(c.next_attention(), Some(ts("2026-01-01T02:00:00Z")));
        assert_eq!(release(&mut c, ts("2026-01-01T01:59:59Z")), None, "not yet");
        let sent = release(&mut c, ts("2026-01-01T02:00:00Z")).expect("still down");
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
        assert_eq!(release(&mut c, ts("2026-01-01T03:00:00Z")), None, "once");
        assert!(c.has_default_rules());
    }

    #[test]
    fn a_check_that_recovered_meanwhile_sends_nothing() {
        let mut c = snoozed();
        hold(
            &mut c,
            &flip(StoredStatus::Up, StoredStatus::Down, "2026-01-01T00:10:00Z"),
        );
        hold(
            &mut c,
            &flip(StoredStatus::Down, StoredStatus::Up, "2026-01-01T00:20:00Z"),
        );
        assert_eq!(release(&mut c, ts("2026-01-01T02:00:00Z")), None);
    }

    #[test]
    fn a_recovery_of_a_check_that_was_down_before_the_snooze_is_told() {
        let mut c = snoozed();
        c.status = StoredStatus::Down;
        hold(
            &mut c,
            &flip(StoredStatus::Down, StoredStatus::Up, "2026-01-01T00:30:00Z"),
        );
        let sent = release(&mut c, ts("2026-01-01T02:00:00Z")).expect("told down, now up");
        assert_eq!(sent.new, StoredStatus::Up);
    }

    #[test]
    fn ending_a_snooze_early_releases_at_once_and_no_alert_is_held_without_one() {
        let mut c = snoozed();
        let up = flip(StoredStatus::New, StoredStatus::Up, "2026-01-01T00:05:00Z");
        assert!(
            !holds(&c, &up, ts("2026-01-01T00:05:00Z")),
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
        );
        let sent = snooze(&mut c, None, ts("2026-01-01T00:15:00Z")).expect("released");
        assert_eq!(sent.new, StoredStatus::Down);
        let after = flip(StoredStatus::Down, StoredStatus::Up, "2026-01-01T00:20:00Z");
        assert!(
            !holds(&c, &after, ts("2026-01-01T00:20:00Z")),
            "no longer snoozed"
        );
        // A moment in the past ends a snooze too.
        let mut c = snoozed();
        assert_eq!(
            snooze(
                &mut c,
                Some(ts("2025-01-01T00:00:00Z")),
                ts("2026-01-01T00:00:00Z")
            ),
            None
        );
        assert_eq!(c.snoozed_until, None);
    }
}
