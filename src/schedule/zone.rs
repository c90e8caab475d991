//! Turning wall-clock matches into instants in a time zone, with the two DST policies of the
//! reference: iteration on local wall-clock time (fixed-time cron jobs, all OnCalendar lines)
//! and iteration on absolute time (cron jobs whose minute or hour starts with `*`).

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, TimeZone};

use super::civil::{CalendarSpec, Civil};

/// What to do with a matching wall time that a spring-forward transition skips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum GapPolicy {
    /// Cron: fire once at the first existing whole minute after the gap.
    ShiftForward,
    /// OnCalendar: that time does not happen; look for the next match.
    Skip,
}

/// Whole seconds of `ts`, rounding toward the past (sub-second parts are dropped).
fn floor_secs(ts: Timestamp) -> i64 {
    let s = ts.as_second();
    if ts.subsec_nanosecond() < 0 { s - 1 } else { s }
}

pub(super) fn offset_secs(tz: &TimeZone, secs: i64) -> Option<i64> {
    let ts = Timestamp::from_second(secs).ok()?;
    Some(i64::from(tz.to_offset(ts).seconds()))
}

fn to_jiff(c: Civil) -> Option<DateTime> {
    DateTime::new(
        i16::try_from(c.year).ok()?,
        c.month as i8,
        c.day as i8,
        c.hour as i8,
        c.minute as i8,
        c.second as i8,
        0,
    )
    .ok()
}

/// First transition strictly after `secs`.
fn next_transition(tz: &TimeZone, secs: i64) -> Option<i64> {
    let ts = Timestamp::from_second(secs).ok()?;
    tz.following(ts).next().map(|t| t.timestamp().as_second())
}

/// Local wall clock of `after` (whole seconds) plus `step` seconds, optionally truncated to
/// the minute first: the reference's starting point.
pub(super) fn start_wall(
    tz: &TimeZone,
    after: Timestamp,
    step: i64,
    to_minute: bool,
) -> Option<i64> {
    let secs = floor_secs(after);
    let mut wall = secs.checked_add(offset_secs(tz, secs)?)?;
    if to_minute {
        wall -= wall.rem_euclid(60);
    }
    wall.checked_add(step)
}

/// The instant of the next whole local minute after `after`: the absolute-time starting point.
pub(super) fn start_absolute(tz: &TimeZone, after: Timestamp) -> Option<i64> {
    let secs = floor_secs(after);
    let off = offset_secs(tz, secs)?;
    let wall = secs.checked_add(off)?;
    (wall - wall.rem_euclid(60) - off).checked_add(60)
}

/// Next match at or after the local wall time `wall`, iterating on wall-clock time.
/// Ambiguous wall times resolve to their first occurrence, which can precede `after` when
/// `after` lies in the repeated hour: the reference behaves the same way.
pub(super) fn next_wall_clock(
    spec: &CalendarSpec,
    tz: &TimeZone,
    wall: i64,
    max_year: i32,
    gap: GapPolicy,
) -> Option<Timestamp> {
    let mut c = Civil::from_secs(wall);
    loop {
        let m = spec.next_match(c, max_year)?;
        let secs = m.to_secs();
        let result = match tz.to_ambiguous_timestamp(to_jiff(m)?).offset() {
            AmbiguousOffset::Unambiguous { offset } => secs - i64::from(offset.seconds()),
            AmbiguousOffset::Fold { before, .. } => secs - i64::from(before.seconds()),
            AmbiguousOffset::Gap { before, after } => {
                let after = i64::from(after.seconds());
                // The transition lies in (secs - after, secs - before]; its instant is where
                // the wall clock resumes.
                let transition =
                    next_transition(tz, secs - after).unwrap_or(secs - i64::from(before.seconds()));
                let resume = transition + after;
                match gap {
                    GapPolicy::ShiftForward => {
                        let minute = resume + (60 - resume.rem_euclid(60)) % 60;
                        minute - after
                    }
                    GapPolicy::Skip => {
                        // Guarantee progress even if the zone data were inconsistent.
                        c = Civil::from_secs(resume.max(secs + 1));
                        continue;
                    }
                }
            }
        };
        return Timestamp::from_second(result).ok();
    }
}

/// Next instant at or after `start` (Unix seconds) whose local wall time matches, iterating
/// on absolute time: every real instant counts once, so repeated hours fire twice and
/// skipped hours not at all.
pub(super) fn next_absolute(
    spec: &CalendarSpec,
    tz: &TimeZone,
    start: i64,
    max_year: i32,
) -> Option<Timestamp> {
    let mut t = start;
    // Between transitions the offset is constant, so the wall clock is monotonic there.
    // A search from a later wall time can reuse an earlier answer it cannot precede.
    let mut memo: Option<(i64, i64)> = None;
    loop {
        let off = offset_secs(tz, t)?;
        let wall = t + off;
        let found = match memo {
            Some((from, hit)) if from <= wall && wall <= hit => hit,
            _ => {
                let hit = spec.next_match(Civil::from_secs(wall), max_year)?.to_secs();
                memo = Some((wall, hit));
                hit
            }
        };
        let candidate = found - off;
        match next_transition(tz, t) {
            Some(tr) if candidate >= tr => t = tr,
            _ => return Timestamp::from_second(candidate).ok(),
        }
    }
}
