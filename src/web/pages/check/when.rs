//! Times as the check page shows them: relative words ("5 minutes ago", "in 3 hours"), the
//! exact instant for `<time datetime>`, a wall time in a zone, and durations in words. Plain
//! functions of the times and `now`.
//!
//! Stand-ins until the dashboard's shared `web::words` lands; they keep its shape.

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

use crate::schedule::Schedule;

/// A moment as a page shows it: words, and the exact instant for the `datetime` attribute
/// (the browser puts it in the visitor's zone on hover).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub iso: String,
    pub words: String,
}

impl Stamp {
    pub(crate) fn new(t: Timestamp, now: Timestamp) -> Stamp {
        Stamp {
            iso: iso(t),
            words: relative(t, now),
        }
    }
}

/// `2026-03-31T00:30:00Z`.
pub(crate) fn iso(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `Tue 2026-03-31 02:30 EEST`: a wall time in `tz`.
pub(crate) fn wall(t: Timestamp, tz: &TimeZone) -> String {
    t.to_zoned(tz.clone())
        .strftime("%a %Y-%m-%d %H:%M %Z")
        .to_string()
}

/// `t` relative to `now`: "just now", "5 minutes ago", "in 3 hours".
pub(crate) fn relative(t: Timestamp, now: Timestamp) -> String {
    let d = now.duration_since(t);
    let secs = d.as_secs();
    if secs.abs() < 45 {
        return "just now".into();
    }
    let words = amount(secs.unsigned_abs());
    if secs > 0 {
        format!("{words} ago")
    } else {
        format!("in {words}")
    }
}

/// A span in its largest whole unit, rounded: "1 minute", "5 hours", "2 days".
fn amount(secs: u64) -> String {
    let minutes = (secs + 30) / 60;
    let hours = (secs + 1800) / 3600;
    let (n, unit) = if minutes < 60 {
        (minutes.max(1), "minute")
    } else if hours < 24 {
        (hours, "hour")
    } else {
        ((secs + 43_200) / 86_400, "day")
    };
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

/// A run's duration: "0.42 s", "12 s", "3 min 5 s", "2 h 10 min", "1 d 3 h".
pub(crate) fn duration_words(d: SignedDuration) -> String {
    let ms = d.as_millis().max(0);
    if ms < 10 {
        return "under 0.01 s".into();
    }
    if ms < 10_000 && ms % 1000 != 0 {
        return format!("{:.2} s", ms as f64 / 1000.0);
    }
    let s = d.as_secs().max(0);
    match s {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => pair(s / 60, "min", s % 60, "s"),
        s if s < 86_400 => pair(s / 3600, "h", s % 3600 / 60, "min"),
        s => pair(s / 86_400, "d", s % 86_400 / 3600, "h"),
    }
}

fn pair(a: i64, ua: &str, b: i64, ub: &str) -> String {
    if b == 0 {
        format!("{a} {ua}")
    } else {
        format!("{a} {ua} {b} {ub}")
    }
}

/// A period in words, for a simple check's schedule: "1 day", "90 minutes", "1 hour".
pub(crate) fn period_words(secs: i64) -> String {
    let plural = |n: i64, unit: &str| {
        if n == 1 {
            format!("1 {unit}")
        } else {
            format!("{n} {unit}s")
        }
    };
    match secs {
        s if s % 86_400 == 0 && s > 0 => plural(s / 86_400, "day"),
        s if s % 3600 == 0 && s > 0 => plural(s / 3600, "hour"),
        s if s % 60 == 0 && s > 0 => plural(s / 60, "minute"),
        s => plural(s, "second"),
    }
}

/// One fire time of a schedule: in the schedule's zone and in UTC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fire {
    pub iso: String,
    pub local: String,
    pub utc: String,
}

/// The next `n` fire times of `schedule` after `now`.
pub(crate) fn next_fires(schedule: &Schedule, now: Timestamp, n: usize) -> Vec<Fire> {
    let mut fires = Vec::with_capacity(n);
    let mut after = now;
    while fires.len() < n {
        let Some(t) = schedule.next_after(after) else {
            break;
        };
        fires.push(Fire {
            iso: iso(t),
            local: wall(t, schedule.time_zone()),
            utc: wall(t, &TimeZone::UTC),
        });
        after = t;
    }
    fires
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("ts")
    }

    #[test]
    fn relative_words() {
        let now = ts("2026-03-31T12:00:00Z");
        assert_eq!(relative(ts("2026-03-31T11:59:50Z"), now), "just now");
        assert_eq!(relative(ts("2026-03-31T11:59:00Z"), now), "1 minute ago");
        assert_eq!(relative(ts("2026-03-31T07:00:00Z"), now), "5 hours ago");
        assert_eq!(relative(ts("2026-03-29T12:00:00Z"), now), "2 days ago");
        assert_eq!(relative(ts("2026-03-31T15:00:00Z"), now), "in 3 hours");
        assert_eq!(relative(ts("2026-03-31T12:59:59Z"), now), "in 1 hour");
        assert_eq!(relative(ts("2026-04-01T11:59:00Z"), now), "in 1 day");
    }

    #[test]
    fn exact_times() {
        let t = ts("2026-03-31T00:30:00Z");
        assert_eq!(iso(t), "2026-03-31T00:30:00Z");
        let riga = jiff::tz::db().get("Europe/Riga").expect("zone");
        assert_eq!(wall(t, &riga), "Tue 2026-03-31 03:30 EEST");
        assert_eq!(wall(t, &TimeZone::UTC), "Tue 2026-03-31 00:30 UTC");
    }

    #[test]
    fn five_fires_in_the_zone_and_in_utc() {
        let s = Schedule::parse("30 2 * * *", "Europe/Riga").expect("schedule");
        let fires = next_fires(&s, ts("2026-03-27T12:00:00Z"), 5);
        assert_eq!(fires.len(), 5);
        assert_eq!(fires[0].local, "Sat 2026-03-28 02:30 EET");
        assert_eq!(fires[0].utc, "Sat 2026-03-28 00:30 UTC");
        assert_eq!(fires[0].iso, "2026-03-28T00:30:00Z");
        // Summer time starts on the 29th (after 02:30): from then on 02:30 is 23:30 UTC.
        assert_eq!(fires[2].local, "Mon 2026-03-30 02:30 EEST");
        assert_eq!(fires[2].utc, "Sun 2026-03-29 23:30 UTC");
        let once = Schedule::parse("2020-01-01 00:00", "UTC").expect("oncalendar");
        assert!(next_fires(&once, ts("2026-01-01T00:00:00Z"), 5).is_empty());
    }

    #[test]
    fn durations_and_periods() {
        assert_eq!(duration_words(SignedDuration::from_millis(420)), "0.42 s");
        assert_eq!(
            duration_words(SignedDuration::from_millis(3)),
            "under 0.01 s"
        );
        assert_eq!(duration_words(SignedDuration::from_secs(12)), "12 s");
        assert_eq!(duration_words(SignedDuration::from_secs(185)), "3 min 5 s");
        assert_eq!(duration_words(SignedDuration::from_secs(7200)), "2 h");
        assert_eq!(duration_words(SignedDuration::from_secs(97_200)), "1 d 3 h");
        assert_eq!(period_words(86_400), "1 day");
        assert_eq!(period_words(5400), "90 minutes");
        assert_eq!(period_words(3600), "1 hour");
        assert_eq!(period_words(61), "61 seconds");
    }
}
