//! `overdue schedule EXPR`: the next fire times of a cron or OnCalendar expression, so users
//! can check an expression before they put it on a check (like `systemd-analyze calendar`).

use std::fmt::Write as _;

use clap::Args;
use jiff::Timestamp;

use crate::schedule::{Schedule, tz};

#[derive(Debug, Clone, Args)]
pub(crate) struct ScheduleArgs {
    /// A cron (5 fields) or OnCalendar expression; quote it.
    pub(crate) expr: String,
    /// Time zone to evaluate it in.
    #[arg(long, default_value = "UTC")]
    pub tz: String,
    /// Start after this instant (RFC 3339) instead of now.
    #[arg(long, value_name = "RFC3339")]
    pub(crate) after: Option<String>,
    /// How many fire times to print.
    #[arg(short = 'n', default_value_t = 5)]
    pub(crate) count: usize,
}

/// What to print and the exit code: 0, or 2 for an invalid expression, zone or instant.
pub(crate) fn run(args: &ScheduleArgs, now: Timestamp) -> (String, i32) {
    let Some(zone) = tz::canonical(&args.tz) else {
        return (
            format!("overdue: tz is not a valid timezone: {:?}\n", args.tz),
            2,
        );
    };
    let schedule = match Schedule::parse(&args.expr, zone) {
        Ok(s) => s,
        Err(e) => {
            return (
                format!("overdue: schedule is not a valid cron or OnCalendar expression: {e}\n"),
                2,
            );
        }
    };
    let mut at = match &args.after {
        None => now,
        Some(text) => match text.parse::<Timestamp>() {
            Ok(t) => t,
            Err(e) => {
                return (
                    format!("overdue: --after {text:?} is not an RFC 3339 instant: {e}\n"),
                    2,
                );
            }
        },
    };
    let mut out = String::new();
    for _ in 0..args.count {
        match schedule.next_after(at) {
            Some(next) => {
                let _ = writeln!(out, "{next}");
                at = next;
            }
            None => break,
        }
    }
    (out, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(expr: &str, tz: &str, after: &str, n: usize) -> ScheduleArgs {
        ScheduleArgs {
            expr: expr.into(),
            tz: tz.into(),
            after: Some(after.into()),
            count: n,
        }
    }

    #[test]
    fn prints_utc_fire_times() {
        let (out, code) = run(
            &args("0 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 2),
            Timestamp::UNIX_EPOCH,
        );
        assert_eq!(code, 0);
        // 02:00 does not exist on 2026-03-08 in New York: it fires once, right after the jump.
        assert_eq!(out, "2026-03-08T07:00:00Z\n2026-03-09T06:00:00Z\n");
    }

    #[test]
    fn one_off_dates_stop_early() {
        let (out, code) = run(
            &args("2030-01-01 12:00", "UTC", "2026-01-01T00:00:00Z", 5),
            Timestamp::UNIX_EPOCH,
        );
        assert_eq!((out.as_str(), code), ("2030-01-01T12:00:00Z\n", 0));
    }

    #[test]
    fn invalid_input_exits_2() {
        assert_eq!(
            run(
                &args("61 * * * *", "UTC", "2026-01-01T00:00:00Z", 1),
                Timestamp::UNIX_EPOCH
            )
            .1,
            2
        );
        assert_eq!(
            run(
                &args("* * * * *", "Mars/Base", "2026-01-01T00:00:00Z", 1),
                Timestamp::UNIX_EPOCH
            )
            .1,
            2
        );
        assert_eq!(
            run(
                &args("* * * * *", "UTC", "yesterday", 1),
                Timestamp::UNIX_EPOCH
            )
            .1,
            2
        );
        let (msg, _) = run(
            &args("bogus", "UTC", "2026-01-01T00:00:00Z", 1),
            Timestamp::UNIX_EPOCH,
        );
        assert!(msg.contains("schedule is not a valid cron or OnCalendar expression"));
        // Issue 14.12: a cron expression with four fields says so.
        let (msg, code) = run(
            &args("0 3 * *", "UTC", "2026-01-01T00:00:00Z", 1),
            Timestamp::UNIX_EPOCH,
        );
        assert_eq!(
            (msg.as_str(), code),
            (
                "overdue: schedule is not a valid cron or OnCalendar expression: expected 5 \
                 fields (minute hour day-of-month month day-of-week), got 4\n",
                2
            )
        );
    }
}
