//! Unit tests for OnCalendar: shorthands, weekdays, dates and times, `~`, several lines, per-line
//! zones, DST skips and folds, the year limit, and every parser error.

use super::tests::{at, fires, first, rejected};
use super::*;

#[test]
fn oncalendar_shorthands() {
    let after = "2026-01-15T10:07:33Z";
    assert_eq!(first("minutely", after), "2026-01-15T10:08:00Z");
    assert_eq!(first("HOURLY", after), "2026-01-15T11:00:00Z");
    assert_eq!(first("Daily", after), "2026-01-16T00:00:00Z");
    assert_eq!(first("weekly", after), "2026-01-19T00:00:00Z");
    assert_eq!(first("monthly", after), "2026-02-01T00:00:00Z");
    assert_eq!(first("quarterly", after), "2026-04-01T00:00:00Z");
    assert_eq!(first("semiannually", after), "2026-07-01T00:00:00Z");
    assert_eq!(first("yearly", after), "2027-01-01T00:00:00Z");
    assert_eq!(first("annually", after), "2027-01-01T00:00:00Z");
}

#[test]
fn oncalendar_weekdays() {
    let after = "2026-01-15T10:07:33Z"; // Thursday
    assert_eq!(first("Mon..Fri 09:00", after), "2026-01-16T09:00:00Z");
    assert_eq!(first("Sat-Sun 09:00", after), "2026-01-17T09:00:00Z");
    assert_eq!(
        first("monday,wednesday 09:00", after),
        "2026-01-19T09:00:00Z"
    );
    assert_eq!(first("Mon, 09:00", after), "2026-01-19T09:00:00Z");
    assert_eq!(first("Fri", after), "2026-01-16T00:00:00Z");
    assert_eq!(first("Thu..Fri,Mon 12:00", after), "2026-01-15T12:00:00Z");
}

#[test]
fn oncalendar_dates_and_times() {
    let after = "2026-01-15T10:07:33Z";
    assert_eq!(first("*-*-* *:*:30", after), "2026-01-15T10:08:30Z");
    assert_eq!(first("*-*-* 00/6:00", after), "2026-01-15T12:00:00Z");
    assert_eq!(first("*:0/15", after), "2026-01-15T10:15:00Z");
    assert_eq!(first("*-*-* 8..18:00", after), "2026-01-15T11:00:00Z");
    assert_eq!(first("*-*-* 10:07:33", after), "2026-01-16T10:07:33Z");
    assert_eq!(first("2026-12-25", after), "2026-12-25T00:00:00Z");
    assert_eq!(first("26-12-25 1:2:3", after), "2026-12-25T01:02:03Z");
    assert_eq!(first("12-25", after), "2026-12-25T00:00:00Z");
    assert_eq!(first("*-1/2-1 0:0", after), "2026-03-01T00:00:00Z");
    assert_eq!(first("2027..2029-01-01", after), "2027-01-01T00:00:00Z");
    assert_eq!(first("2026/2-01-01", after), "2028-01-01T00:00:00Z");
    assert_eq!(first("*-01,06-10,20", after), "2026-01-20T00:00:00Z");
    assert_eq!(first("Fri *-*-13 12:00", after), "2026-02-13T12:00:00Z");
    assert_eq!(first("Mon *-*-1..7 12:00", after), "2026-02-02T12:00:00Z");
}

#[test]
fn oncalendar_from_month_end() {
    let after = "2026-01-15T10:07:33Z";
    assert_eq!(first("*-02~01", after), "2026-02-28T00:00:00Z");
    assert_eq!(first("*-02~03", after), "2026-02-26T00:00:00Z");
    assert_eq!(first("*-*~01 00:00", after), "2026-01-31T00:00:00Z");
    assert_eq!(first("*-02~1..2", after), "2026-02-27T00:00:00Z");
    assert_eq!(
        first("*-02~3/2", "2026-02-26T12:00:00Z"),
        "2026-02-28T00:00:00Z"
    );
    assert_eq!(first("Mon *-05~07/1", after), "2026-05-25T00:00:00Z");
    assert!(matches!(
        rejected("*-02~29"),
        ScheduleError::OutOfRange { .. }
    ));
}

#[test]
fn oncalendar_multiple_lines_and_zones() {
    let after = "2026-01-15T10:07:33Z";
    assert_eq!(
        fires("Mon 09:00\nFri 17:00", "UTC", after, 3),
        [
            "2026-01-16T17:00:00Z",
            "2026-01-19T09:00:00Z",
            "2026-01-23T17:00:00Z"
        ]
    );
    assert_eq!(
        fires("daily\ndaily", "UTC", after, 2),
        ["2026-01-16T00:00:00Z", "2026-01-17T00:00:00Z"]
    );
    assert_eq!(
        first("*-*-* 12:00 Asia/Tokyo", after),
        "2026-01-16T03:00:00Z"
    );
    assert_eq!(first("daily Europe/Kiev", after), "2026-01-15T22:00:00Z");
    // A line with a zone keeps it whatever the check's zone.
    assert_eq!(
        fires("12:00 Asia/Tokyo", "America/New_York", after, 1),
        ["2026-01-16T03:00:00Z"]
    );
    // The zone is only recognised after a plain space.
    assert!(Schedule::parse("12:00\tAsia/Tokyo", "UTC").is_err());
}

#[test]
fn oncalendar_dst_skips_and_folds() {
    // Riga spring forward 2024-03-31: 03:30 does not exist and does not fire that day.
    assert_eq!(
        fires("*-*-* 03:30", "Europe/Riga", "2024-03-30T12:00:00Z", 2),
        ["2024-04-01T00:30:00Z", "2024-04-02T00:30:00Z"]
    );
    // Fall back: 03:30 fires once, first occurrence.
    assert_eq!(
        fires("*-*-* 03:30", "Europe/Riga", "2024-10-26T12:00:00Z", 2),
        ["2024-10-27T00:30:00Z", "2024-10-28T01:30:00Z"]
    );
    // Every 15 minutes across the gap: 02:45 EST is followed by 03:00 EDT.
    assert_eq!(
        fires("*:0/15", "America/New_York", "2026-03-08T06:40:00Z", 2),
        ["2026-03-08T06:45:00Z", "2026-03-08T07:00:00Z"]
    );
}

#[test]
fn oncalendar_one_off_and_year_limit() {
    let s = Schedule::parse("2019-01-01", "UTC").expect("valid after 2000");
    assert!(s.next_after(at("2020-01-01T00:00:00Z")).is_none());
    let s = Schedule::parse("*-12-31 23:59:59", "UTC").expect("valid");
    assert_eq!(
        s.next_after(at("2199-12-31T23:59:58Z")),
        Some(at("2199-12-31T23:59:59Z"))
    );
    assert!(s.next_after(at("2199-12-31T23:59:59Z")).is_none());
    // Two-digit years: 0-69 are 20xx, 70-99 are 19xx (and 1970 never fires after 2000).
    assert_eq!(
        first("69-01-01", "2026-01-01T00:00:00Z"),
        "2069-01-01T00:00:00Z"
    );
    assert_eq!(rejected("70-01-01"), ScheduleError::NeverFires);
}

#[test]
fn oncalendar_errors() {
    type Check = fn(&ScheduleError) -> bool;
    let cases: [(&str, Check); 22] = [
        ("", |e| *e == ScheduleError::Empty),
        ("   ", |e| *e == ScheduleError::Empty),
        ("daily\n\nweekly", |e| *e == ScheduleError::Empty),
        ("Mon..Fry 09:00", |e| {
            matches!(e, ScheduleError::Syntax { .. })
        }),
        ("Fri..Mon", |e| matches!(e, ScheduleError::Syntax { .. })),
        ("* 09:00", |e| matches!(e, ScheduleError::Syntax { .. })),
        ("*-13-01", |e| matches!(e, ScheduleError::OutOfRange { .. })),
        ("*-*-32", |e| matches!(e, ScheduleError::OutOfRange { .. })),
        ("*-*-0", |e| matches!(e, ScheduleError::OutOfRange { .. })),
        ("25:00", |e| matches!(e, ScheduleError::OutOfRange { .. })),
        ("*:60", |e| matches!(e, ScheduleError::OutOfRange { .. })),
        ("12:00:61", |e| {
            matches!(e, ScheduleError::OutOfRange { .. })
        }),
        ("*:0/0", |e| matches!(e, ScheduleError::OutOfRange { .. })),
        ("1969-01-01", |e| {
            matches!(e, ScheduleError::OutOfRange { .. })
        }),
        ("2200-01-01", |e| {
            matches!(e, ScheduleError::OutOfRange { .. })
        }),
        ("*-*-* *:*:*:*", |e| {
            matches!(e, ScheduleError::Syntax { .. })
        }),
        ("1-2-3-4", |e| matches!(e, ScheduleError::Syntax { .. })),
        ("12:", |e| matches!(e, ScheduleError::Syntax { .. })),
        ("Mon Tue 09:00", |e| {
            matches!(e, ScheduleError::UnexpectedToken(_))
        }),
        ("Mon 09:00 Mars/Phobos", |e| {
            matches!(e, ScheduleError::UnexpectedToken(_))
        }),
        ("2024-02-30", |e| *e == ScheduleError::NeverFires),
        ("1999-01-01", |e| matches!(e, ScheduleError::NeverFires)),
    ];
    for (expr, ok) in cases {
        let err = rejected(expr);
        assert!(ok(&err), "{expr:?}: {err:?}");
    }
}
