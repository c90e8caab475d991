//! systemd OnCalendar parsing with the semantics of the `oncalendar` 1.1 library used by
//! Healthchecks (§6.3): `[weekdays] [date] [time] [timezone]` per line, shorthands, lists,
//! `..` ranges, `/` steps, `~` days from the month's end, 2-digit years. Produces one
//! [`CalendarSpec`] per line, plus the line's own time zone when it names one.

use jiff::tz::TimeZone;

use super::ScheduleError;
use super::civil::{CalendarSpec, DayRule, YEAR_BASE};
use super::text::{is_py_space, parse_digits, py_split, py_strip};
use super::tz;

/// One line of an OnCalendar schedule.
#[derive(Debug, Clone)]
pub(super) struct Line {
    pub(crate) spec: CalendarSpec,
    /// Trailing zone of the line, overriding the check's zone.
    pub tz: Option<TimeZone>,
}

const SHORTHANDS: [(&str, &str); 9] = [
    ("minutely", "*-*-* *:*:00"),
    ("hourly", "*-*-* *:00:00"),
    ("daily", "*-*-* 00:00:00"),
    ("monthly", "*-*-01 00:00:00"),
    ("weekly", "Mon *-*-* 00:00:00"),
    ("yearly", "*-01-01 00:00:00"),
    ("annually", "*-01-01 00:00:00"),
    ("quarterly", "*-01,04,07,10-01 00:00:00"),
    ("semiannually", "*-01,07-01 00:00:00"),
];
const WEEKDAYS: [&str; 7] = [
    "MONDAY",
    "TUESDAY",
    "WEDNESDAY",
    "THURSDAY",
    "FRIDAY",
    "SATURDAY",
    "SUNDAY",
];
/// Values from the last year on are never produced (systemd and the reference stop at 2200).
pub(super) const LAST_YEAR: i32 = 2199;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Dow,
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Dow => "weekday",
            Field::Year => "year",
            Field::Month => "month",
            Field::Day => "day",
            Field::Hour => "hour",
            Field::Minute => "minute",
            Field::Second => "second",
        }
    }

    fn range(self) -> (i32, i32) {
        match self {
            Field::Dow => (0, 6),
            Field::Year => (YEAR_BASE, LAST_YEAR),
            Field::Month => (1, 12),
            Field::Day => (1, 31),
            Field::Hour => (0, 23),
            Field::Minute | Field::Second => (0, 59),
        }
    }

    fn syntax(self, token: &str) -> ScheduleError {
        ScheduleError::syntax(self.name(), token)
    }

    fn digits(self, s: &str) -> Result<u64, ScheduleError> {
        parse_digits(s).ok_or_else(|| self.syntax(s))
    }

    /// A single value: weekday name (Monday = 0), or digits (years: 0-69 -> 20xx, 70-99 -> 19xx).
    fn value(self, s: &str) -> Result<i32, ScheduleError> {
        if self == Field::Dow {
            let upper = s.to_uppercase();
            return WEEKDAYS
                .iter()
                .position(|w| *w == upper || w[..3] == upper)
                .map(|i| i as i32)
                .ok_or_else(|| self.syntax(s));
        }
        let mut v = self.digits(s)?;
        if self == Field::Year && v < 70 {
            v += 2000;
        }
        if self == Field::Year && v < 100 {
            v += 1900;
        }
        let (lo, hi) = self.range();
        match i32::try_from(v) {
            Ok(v) if (lo..=hi).contains(&v) => Ok(v),
            _ => Err(ScheduleError::out_of_range(self.name(), s)),
        }
    }

    /// The set of values a component denotes; negative values are `~` days from the month end.
    fn parse(self, s: &str, reverse: bool) -> Result<Vec<i32>, ScheduleError> {
        let (lo, hi) = self.range();
        if s == "*" && self != Field::Dow {
            return Ok((lo..=hi).collect());
        }
        if self == Field::Dow && s.ends_with(',') {
            return self.parse(s.trim_end_matches(','), false);
        }
        if self == Field::Dow && s.contains('-') {
            return self.parse(&s.replace('-', ".."), false);
        }
        if self == Field::Day && s.starts_with('~') {
            return self.parse(s.trim_start_matches('~'), true);
        }
        if s.contains(',') {
            let mut all = Vec::new();
            for term in s.split(',') {
                all.extend(self.parse(term, reverse)?);
            }
            return Ok(all);
        }
        if self != Field::Dow
            && let Some((term, step)) = s.split_once('/')
        {
            let step = self.digits(step)?;
            if step == 0 {
                return Err(ScheduleError::out_of_range(self.name(), s));
            }
            let step = usize::try_from(step).unwrap_or(usize::MAX);
            let mut items = self.parse(term, reverse)?;
            items.sort_unstable();
            items.dedup();
            if let [start] = items[..] {
                let end = if reverse { 0 } else { hi };
                return Ok((start..=end).step_by(step).collect());
            }
            return Ok(items.into_iter().step_by(step).collect());
        }
        if let Some((a, b)) = s.split_once("..") {
            let start = self.value(a)?;
            let end = self.value(b)?;
            if end < start {
                return Err(self.syntax(s));
            }
            return Ok(if reverse {
                (-end..=-start).collect()
            } else {
                (start..=end).collect()
            });
        }
        let v = self.value(s)?;
        if reverse {
            // systemd rejects `~` day values above 28.
            if v > 28 {
                return Err(ScheduleError::out_of_range(self.name(), s));
            }
            return Ok(vec![-v]);
        }
        Ok(vec![v])
    }
}

fn bits64(values: &[i32]) -> u64 {
    values
        .iter()
        .filter(|v| (0..64).contains(*v))
        .fold(0, |acc, v| acc | 1 << v)
}

/// Bit (y - 1970) for each year; callers only pass years within 1970..=2199.
fn year_bits(years: impl IntoIterator<Item = i32>) -> [u64; 4] {
    let mut bits = [0u64; 4];
    for idx in years
        .into_iter()
        .map(|y| y - YEAR_BASE)
        .filter(|i| (0..256).contains(i))
    {
        bits[(idx / 64) as usize] |= 1 << (idx % 64);
    }
    bits
}

fn parse_time(token: &str) -> Result<(u32, u64, u64), ScheduleError> {
    let parts: Vec<&str> = token.split(':').collect();
    let (h, m, s) = match parts[..] {
        [h, m] => (h, m, "0"),
        [h, m, s] => (h, m, s),
        _ => return Err(ScheduleError::syntax("time", token)),
    };
    Ok((
        bits64(&Field::Hour.parse(h, false)?) as u32,
        bits64(&Field::Minute.parse(m, false)?),
        bits64(&Field::Second.parse(s, false)?),
    ))
}

fn parse_date(token: &str) -> Result<([u64; 4], u16, u32, u32), ScheduleError> {
    let parts: Vec<&str> = token.split('-').collect();
    let (y, m, d) = match parts[..] {
        [m, d] => ("*", m, d),
        [y, m, d] => (y, m, d),
        _ => return Err(ScheduleError::syntax("date", token)),
    };
    let years = year_bits(Field::Year.parse(y, false)?);
    let months = bits64(&Field::Month.parse(m, false)?) as u16;
    let (mut fwd, mut rev) = (0u32, 0u32);
    for v in Field::Day.parse(d, false)? {
        if v > 0 {
            fwd |= 1 << v;
        } else if (1..=31).contains(&-v) {
            rev |= 1 << -v;
        }
    }
    Ok((years, months, fwd, rev))
}

/// Parse one line without its trailing zone.
fn parse_spec(expr: &str) -> Result<CalendarSpec, ScheduleError> {
    let lower = expr.to_lowercase();
    let expr = SHORTHANDS
        .iter()
        .find(|(k, _)| *k == lower)
        .map_or(expr, |(_, v)| v);
    let replaced = expr.replace('~', "-~");
    let mut parts = py_split(&replaced);
    if parts.is_empty() {
        return Err(ScheduleError::Empty);
    }
    let (hours, minutes, seconds) = match parts.last() {
        Some(t) if t.contains(':') => {
            let t = parts.pop().unwrap_or_default();
            parse_time(t)?
        }
        _ => (1, 1, 1),
    };
    let (years, months, dom, dom_from_end) = match parts.last() {
        Some(t) if t.contains('-') && t.starts_with(|c: char| c.is_ascii_digit() || c == '*') => {
            let t = parts.pop().unwrap_or_default();
            parse_date(t)?
        }
        _ => (year_bits(YEAR_BASE..=LAST_YEAR), 0x1ffe, !1, 0),
    };
    let dow = match parts.first() {
        Some(t) => {
            let mut bits = 0u8;
            for v in Field::Dow.parse(t, false)? {
                // Monday = 0 here; the day rule counts from Sunday = 0.
                bits |= 1 << ((v + 1) % 7);
            }
            bits
        }
        None => 0x7f,
    };
    if parts.len() > 1 {
        return Err(ScheduleError::UnexpectedToken(super::text::excerpt(
            parts[1],
        )));
    }
    Ok(CalendarSpec {
        years: Some(years),
        months,
        days: DayRule {
            dom,
            dom_from_end,
            dom_last_weekday: false,
            dow,
            dow_last: 0,
            dow_nth: [0; 7],
            and: true,
        },
        hours,
        minutes,
        seconds,
    })
}

fn parse_line(line: &str) -> Result<Line, ScheduleError> {
    let line = py_strip(line);
    // The reference only looks for a zone when the line contains a plain space.
    if line.contains(' ')
        && let Some(pos) = line.rfind(is_py_space)
    {
        let (head, name) = (&line[..pos], &line[pos..]);
        let name = name.trim_start_matches(is_py_space);
        let starts_like_value = name.starts_with(|c: char| c.is_ascii_digit() || c == '*');
        if !starts_like_value && let Some(zone) = tz::canonical(name).and_then(tz::time_zone) {
            return Ok(Line {
                spec: parse_spec(py_strip(head))?,
                tz: Some(zone),
            });
        }
    }
    Ok(Line {
        spec: parse_spec(line)?,
        tz: None,
    })
}

/// Parse a (possibly multi-line) OnCalendar schedule.
pub(super) fn parse(expr: &str) -> Result<Vec<Line>, ScheduleError> {
    py_strip(expr).split('\n').map(parse_line).collect()
}
