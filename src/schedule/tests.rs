//! Unit tests for the schedule module: kind detection, time zone handling, every cron parser
//! feature and error, and the cron DST policies. OnCalendar cases are in `oncalendar_tests.rs`;
//! vectors and properties live in the crate's `tests/`.

use jiff::Timestamp;

use super::*;

pub(super) fn at(s: &str) -> Timestamp {
    s.parse().expect("test timestamp")
}

/// The first `n` fire times after `after`, as RFC 3339 strings.
pub(super) fn fires(expr: &str, tz: &str, after: &str, n: usize) -> Vec<String> {
    let schedule = Schedule::parse(expr, tz).unwrap_or_else(|e| panic!("{expr:?}: {e}"));
    let mut out = Vec::new();
    let mut t = at(after);
    for _ in 0..n {
        let Some(next) = schedule.next_after(t) else {
            break;
        };
        out.push(next.to_string());
        t = next;
    }
    out
}

pub(super) fn first(expr: &str, after: &str) -> String {
    fires(expr, "UTC", after, 1).pop().unwrap_or_default()
}

pub(super) fn rejected(expr: &str) -> ScheduleError {
    match Schedule::parse(expr, "UTC") {
        Ok(_) => panic!("{expr:?} should be rejected"),
        Err(e) => e,
    }
}

#[test]
fn detects_kind() {
    assert_eq!(detect_kind("* * * * *"), ScheduleKind::Cron);
    assert_eq!(detect_kind("0\t0 1 1 *\n"), ScheduleKind::Cron);
    assert_eq!(detect_kind("  0 0 1 1 *  "), ScheduleKind::Cron);
    assert_eq!(detect_kind("* * * * * *"), ScheduleKind::OnCalendar);
    assert_eq!(detect_kind("* * * *"), ScheduleKind::OnCalendar);
    assert_eq!(detect_kind("0 0\n1 1 *"), ScheduleKind::OnCalendar);
    assert_eq!(detect_kind(""), ScheduleKind::OnCalendar);
    assert_eq!(detect_kind("daily"), ScheduleKind::OnCalendar);
    assert_eq!(validate("0 0 1 1 *\n"), Ok(ScheduleKind::Cron));
    assert_eq!(validate("Mon 09:00"), Ok(ScheduleKind::OnCalendar));
}

#[test]
fn rejects_unknown_time_zone() {
    assert!(matches!(
        Schedule::parse("* * * * *", "Mars/Base"),
        Err(ScheduleError::UnknownTimeZone(_))
    ));
    assert!(matches!(
        Schedule::parse("* * * * *", ""),
        Err(ScheduleError::UnknownTimeZone(_))
    ));
    assert!(Schedule::parse("* * * * *", "Europe/Kiev").is_ok());
}

#[test]
fn cron_basic_fields() {
    assert_eq!(
        first("* * * * *", "2026-01-15T10:07:33Z"),
        "2026-01-15T10:08:00Z"
    );
    assert_eq!(
        first("*/5 * * * *", "2026-01-15T10:07:33Z"),
        "2026-01-15T10:10:00Z"
    );
    assert_eq!(
        first("7/20 * * * *", "2026-01-15T10:48:00Z"),
        "2026-01-15T11:07:00Z"
    );
    assert_eq!(
        first("10-20/5 * * * *", "2026-01-15T10:16:00Z"),
        "2026-01-15T10:20:00Z"
    );
    assert_eq!(
        first("0 0,12 * * *", "2026-01-15T10:07:33Z"),
        "2026-01-15T12:00:00Z"
    );
    assert_eq!(
        first("0 12 * jul *", "2026-01-15T10:07:33Z"),
        "2026-07-01T12:00:00Z"
    );
    assert_eq!(
        first("0 0 1 FEB-mar *", "2026-03-15T00:00:00Z"),
        "2027-02-01T00:00:00Z"
    );
    assert_eq!(
        first("0 0 1,*/10 * *", "2026-01-02T00:00:00Z"),
        "2026-01-11T00:00:00Z"
    );
}

#[test]
fn cron_exact_fire_time_expects_the_next() {
    assert_eq!(
        first("0 * * * *", "2000-01-01T00:00:00Z"),
        "2000-01-01T01:00:00Z"
    );
    assert_eq!(
        first("0 * * * *", "2000-01-01T00:59:59.999Z"),
        "2000-01-01T01:00:00Z"
    );
}

#[test]
fn cron_day_of_week() {
    // 2026-01-15 is a Thursday.
    assert_eq!(
        first("0 0 * * 0", "2026-01-15T00:00:00Z"),
        "2026-01-18T00:00:00Z"
    );
    assert_eq!(
        first("0 0 * * 7", "2026-01-15T00:00:00Z"),
        "2026-01-18T00:00:00Z"
    );
    assert_eq!(
        first("0 0 * * sun", "2026-01-15T00:00:00Z"),
        "2026-01-18T00:00:00Z"
    );
    assert_eq!(
        first("0 0 * * MON-FRI", "2026-01-16T00:00:00Z"),
        "2026-01-19T00:00:00Z"
    );
    assert_eq!(
        first("0 0 * * 5-7", "2026-01-13T00:00:00Z"),
        "2026-01-16T00:00:00Z"
    );
    assert_eq!(
        first("0 0 * * */2", "2026-01-15T00:00:00Z"),
        "2026-01-17T00:00:00Z"
    );
}

#[test]
fn cron_last_and_nth() {
    assert_eq!(
        first("0 0 L * *", "2026-02-01T00:00:00Z"),
        "2026-02-28T00:00:00Z"
    );
    assert_eq!(
        first("0 0 L 2 *", "2027-03-01T00:00:00Z"),
        "2028-02-29T00:00:00Z"
    );
    assert_eq!(
        first("0 0 L/3 * *", "2026-02-01T00:00:00Z"),
        "2026-02-28T00:00:00Z"
    );
    // May 2026 ends on a Sunday: last weekday is Friday the 29th.
    assert_eq!(
        first("0 0 LW * *", "2026-05-01T00:00:00Z"),
        "2026-05-29T00:00:00Z"
    );
    assert_eq!(
        first("0 0 LW * *", "2026-01-01T00:00:00Z"),
        "2026-01-30T00:00:00Z"
    );
    assert_eq!(
        first("0 0 * * 5L", "2026-01-01T00:00:00Z"),
        "2026-01-30T00:00:00Z"
    );
    assert_eq!(
        first("0 0 * * 0L", "2026-01-01T00:00:00Z"),
        "2026-01-25T00:00:00Z"
    );
    assert_eq!(
        first("0 0 * * 7L", "2026-01-01T00:00:00Z"),
        "2026-01-25T00:00:00Z"
    );
    assert_eq!(
        first("0 0 * * FRI#3", "2026-01-01T00:00:00Z"),
        "2026-01-16T00:00:00Z"
    );
    assert_eq!(
        first("0 0 * * 1#5", "2026-01-01T00:00:00Z"),
        "2026-03-30T00:00:00Z"
    );
    assert_eq!(
        first("0 0 * * mon#1,fri#2", "2026-01-01T00:00:00Z"),
        "2026-01-05T00:00:00Z"
    );
}

#[test]
fn cron_dom_dow_and_or() {
    // Neither starts with '*': OR.
    assert_eq!(
        first("0 0 1 * MON", "2026-01-01T00:00:00Z"),
        "2026-01-05T00:00:00Z"
    );
    assert_eq!(
        first("0 0 13 * 5", "2026-01-01T00:00:00Z"),
        "2026-01-02T00:00:00Z"
    );
    // One starts with '*': AND.
    assert_eq!(
        first("0 0 */2 * MON", "2026-01-01T00:00:00Z"),
        "2026-01-05T00:00:00Z"
    );
    assert_eq!(
        first("0 0 */2 * MON", "2026-01-05T00:00:00Z"),
        "2026-01-19T00:00:00Z"
    );
    assert_eq!(
        first("0 0 1-7 * */7", "2026-01-01T00:00:00Z"),
        "2026-01-04T00:00:00Z"
    );
}

#[test]
fn cron_rare_dates() {
    assert_eq!(
        first("0 0 29 2 *", "2026-01-01T00:00:00Z"),
        "2028-02-29T00:00:00Z"
    );
    assert_eq!(
        first("0 0 29 2 *", "2096-03-01T00:00:00Z"),
        "2104-02-29T00:00:00Z"
    );
    // AND: a Monday 29 February (OR would be every Monday).
    assert_eq!(
        first("0 0 29 2 */1", "2026-01-01T00:00:00Z"),
        "2028-02-29T00:00:00Z"
    );
    // OR, but still within February: 29 February or any Monday of February.
    assert_eq!(
        first("0 0 29 2 MON", "2026-01-01T00:00:00Z"),
        "2026-02-02T00:00:00Z"
    );
    assert_eq!(
        first("0 0 * 2 MON#5", "2026-01-01T00:00:00Z"),
        "2044-02-29T00:00:00Z"
    );
    assert_eq!(
        first("0 0 31 * *", "2026-02-01T00:00:00Z"),
        "2026-03-31T00:00:00Z"
    );
}

#[test]
fn cron_horizon_is_fifty_years() {
    let s = Schedule::parse("0 0 * 2 MON#5", "UTC").expect("valid");
    // After 2044 the next Monday 29 February is in 2072: within 50 years.
    assert_eq!(
        s.next_after(at("2044-03-01T00:00:00Z")),
        Some(at("2072-02-29T00:00:00Z"))
    );
    assert!(s.next_after(at("9990-01-01T00:00:00Z")).is_none());
}

#[test]
fn cron_syntax_errors() {
    for expr in [
        "a b c d e",
        "1-2-3 * * * *",
        "5-1 * * * *",
        "-1 * * * *",
        "0 0 L-3 * *",
        "0 0 * * L",
        "0 0 15W * *",
        "0 0 ? * *",
        "@daily",
        "0 0 * * FRIL",
        "0 0 * * L5",
        "0 0 * JAN-DECX *",
        "1,,2 * * * *",
        "*/ * * * *",
        "+1 * * * *",
        "0 0 * * 1#",
        "0 0 * * 1-5#2",
        "0 0 * * MON/2/3",
        "0 0 LW-2 * *",
        "0 0 * * 5L/2",
    ] {
        let err = rejected(expr);
        assert!(
            matches!(
                err,
                ScheduleError::Syntax { .. } | ScheduleError::OutOfRange { .. }
            ),
            "{expr:?}: {err:?}"
        );
    }
}

#[test]
fn cron_range_errors() {
    for expr in [
        "60 * * * *",
        "* 24 * * *",
        "* * 32 * *",
        "* * 0 * *",
        "* * * 13 *",
        "* * * 0 *",
        "* * * * 8",
        "*/0 * * * *",
        "0 0 * * MON#6",
        "0 0 * * 1#0",
        "0 0 * * 8L",
        "99999999999999999999999 * * * *",
    ] {
        assert!(
            matches!(rejected(expr), ScheduleError::OutOfRange { .. }),
            "{expr:?}"
        );
    }
}

#[test]
fn cron_impossible_days() {
    assert!(matches!(
        rejected("0 0 30 2 *"),
        ScheduleError::OutOfRange { .. }
    ));
    assert!(matches!(
        rejected("0 0 31 2 *"),
        ScheduleError::OutOfRange { .. }
    ));
    assert!(matches!(
        rejected("0 0 31 4,6 *"),
        ScheduleError::OutOfRange { .. }
    ));
    assert!(matches!(
        rejected("0 0 31 2 MON"),
        ScheduleError::OutOfRange { .. }
    ));
    assert!(Schedule::parse("0 0 30 4 *", "UTC").is_ok());
    assert!(Schedule::parse("0 0 30,L 2 *", "UTC").is_ok());
    assert!(Schedule::parse("0 0 29 2 *", "UTC").is_ok());
}

#[test]
fn what_looks_like_cron() {
    for expr in [
        "0 3 * *",
        "* * * * * *",
        "*/5 9-17 * * MON-FRI 2026",
        "0 0 L * ?",
        "0 3 * * 5L",
    ] {
        assert!(looks_like_cron(expr), "{expr}");
    }
    for expr in [
        "bogus",
        "this is not a schedule",
        "Mon *-*-* 08:00",
        "daily",
        "2020-01-01",
        "0 3\n* * *",
        "Mon..Fri *-*-* 03:00",
    ] {
        assert!(!looks_like_cron(expr), "{expr}");
    }
}

#[test]
fn cron_field_count_is_exact() {
    assert_eq!(rejected("* * * * * *"), ScheduleError::FieldCount(6));
    assert_eq!(rejected("0 3 * *"), ScheduleError::FieldCount(4));
    assert_eq!(
        rejected("0 3 * *").to_string(),
        "expected 5 fields (minute hour day-of-month month day-of-week), got 4"
    );
    assert_eq!(
        rejected("0 3 * * 8").to_string(),
        "day-of-week (field 5) out of range: \"8\""
    );
    assert_eq!(
        rejected("? 3 * * *").to_string(),
        "invalid minute (field 1): \"?\""
    );
    // Not cron-like: OnCalendar's own message.
    assert!(matches!(
        rejected("Mon 25:00"),
        ScheduleError::OutOfRange { .. }
    ));
    assert_eq!(
        cron::parse("* * * *").err(),
        Some(ScheduleError::FieldCount(4))
    );
}

#[test]
fn cron_fixed_time_dst_riga() {
    // Spring forward 2024-03-31 03:00 -> 04:00 EEST: 03:30 fires once at 04:00 local.
    assert_eq!(
        fires("30 3 * * *", "Europe/Riga", "2024-03-30T12:00:00Z", 2),
        ["2024-03-31T01:00:00Z", "2024-04-01T00:30:00Z"]
    );
    // Fall back 2024-10-27 04:00 -> 03:00: 03:30 fires once, first occurrence (EEST).
    assert_eq!(
        fires("30 3 * * *", "Europe/Riga", "2024-10-26T12:00:00Z", 2),
        ["2024-10-27T00:30:00Z", "2024-10-28T01:30:00Z"]
    );
}

#[test]
fn cron_fixed_time_in_repeated_hour_mirrors_reference() {
    // New York falls back 2026-11-01 02:00 EDT -> 01:00 EST. Ping at 01:30 EST (06:30Z);
    // the reference resolves 01:45 to its first occurrence (05:45Z), before the ping.
    assert_eq!(
        fires("45 1 * * *", "America/New_York", "2026-11-01T06:30:00Z", 2),
        ["2026-11-01T05:45:00Z", "2026-11-02T06:45:00Z"]
    );
}

#[test]
fn cron_absolute_time_dst() {
    // Hourly jobs fire every real hour, both passes of the repeated hour included.
    assert_eq!(
        fires("0 * * * *", "America/New_York", "2026-11-01T04:30:00Z", 3),
        [
            "2026-11-01T05:00:00Z",
            "2026-11-01T06:00:00Z",
            "2026-11-01T07:00:00Z"
        ]
    );
    // Spring forward: 02:00 does not exist, 01:00 EST is followed by 03:00 EDT.
    assert_eq!(
        fires("0 * * * *", "America/New_York", "2026-03-08T05:30:00Z", 2),
        ["2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z"]
    );
    // `* 2 * * *` never runs on the spring-forward day: 02:xx is skipped entirely.
    assert_eq!(
        fires("* 2 * * *", "America/New_York", "2026-03-08T06:59:00Z", 1),
        ["2026-03-09T06:00:00Z"]
    );
    // Lord Howe shifts by 30 minutes: 01:00 +11 is followed by 02:00 +10:30, 90 minutes later.
    assert_eq!(
        fires(
            "0 * * * *",
            "Australia/Lord_Howe",
            "2026-04-04T13:30:00Z",
            2
        ),
        ["2026-04-04T14:00:00Z", "2026-04-04T15:30:00Z"]
    );
}

#[test]
fn matches_civil_agrees_with_fields() {
    let s = Schedule::parse("0 9-17/2 * * MON-FRI", "UTC").expect("valid");
    let dt = |y, m, d, h, mi| jiff::civil::date(y, m, d).at(h, mi, 0, 0);
    assert!(s.matches_civil(dt(2026, 1, 15, 11, 0)));
    assert!(!s.matches_civil(dt(2026, 1, 15, 10, 0)));
    assert!(!s.matches_civil(dt(2026, 1, 17, 11, 0)));
    let s = Schedule::parse("*-02~01 12:00", "UTC").expect("valid");
    assert!(s.matches_civil(dt(2028, 2, 29, 12, 0)));
    assert!(!s.matches_civil(dt(2028, 2, 28, 12, 0)));
}

#[test]
fn schedule_is_send_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Schedule>();
    assert_send_sync::<ScheduleError>();
}
