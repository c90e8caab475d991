//! Schedule engine: kind detection (§6.1), parsing and validation of cron (§6.2) and OnCalendar
//! (§6.3) expressions, and the next fire time in a check's time zone (§6.4). The public API of
//! this module is what the rest of the product uses; the sibling files are private.

mod civil;
mod cron;
mod oncalendar;
mod text;
pub mod tz;
mod tz_names;
mod zone;

use jiff::Timestamp;
use jiff::tz::TimeZone;

use self::civil::{CalendarSpec, Civil};
use self::zone::GapPolicy;

/// Which dialect an expression is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScheduleKind {
    Cron,
    OnCalendar,
}

/// §6.1: the trimmed expression has no newline and splits (any whitespace) into exactly 5
/// tokens -> cron; anything else -> OnCalendar.
pub fn detect_kind(expr: &str) -> ScheduleKind {
    if !text::py_strip(expr).contains('\n') && text::py_split(expr).len() == 5 {
        ScheduleKind::Cron
    } else {
        ScheduleKind::OnCalendar
    }
}

/// Whether `expr` reads as a cron expression with the wrong number of fields or a wrong field:
/// one line of 3 to 7 fields, each made of cron's characters (digits, `* , / - ? #`) and words
/// of at most three letters (`MON`, `JAN`, `L`, `LW`). Such an expression is detected as
/// OnCalendar by the §6.1 rule (not 5 fields), and OnCalendar's complaint ("invalid weekday")
/// would be about a dialect the user did not write; its errors are worth showing in full.
pub(crate) fn looks_like_cron(expr: &str) -> bool {
    let expr = text::py_strip(expr);
    let fields = text::py_split(expr);
    let word_ok = |w: &str| w.is_empty() || w.len() <= 3;
    !expr.contains('\n')
        && (3..=7).contains(&fields.len())
        && fields.iter().all(|f| {
            f.chars()
                .all(|c| c.is_ascii_alphanumeric() || "*,/-?#".contains(c))
                && f.split(|c: char| !c.is_ascii_alphabetic()).all(word_ok)
        })
}

/// Why an expression or time zone was rejected.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ScheduleError {
    #[error("empty schedule expression")]
    Empty,
    #[error("expected 5 fields (minute hour day-of-month month day-of-week), got {0}")]
    FieldCount(usize),
    #[error("invalid {field}: {token:?}")]
    Syntax { field: &'static str, token: String },
    #[error("{field} out of range: {token:?}")]
    OutOfRange { field: &'static str, token: String },
    #[error("unexpected token {0:?}")]
    UnexpectedToken(String),
    #[error("schedule never fires")]
    NeverFires,
    #[error("unknown time zone {0:?}")]
    UnknownTimeZone(String),
}

impl ScheduleError {
    fn syntax(field: &'static str, token: &str) -> Self {
        ScheduleError::Syntax {
            field,
            token: text::excerpt(token),
        }
    }

    fn out_of_range(field: &'static str, token: &str) -> Self {
        ScheduleError::OutOfRange {
            field,
            token: text::excerpt(token),
        }
    }
}

/// Cron gives up when nothing matches within this many years (cronsim behaviour).
const CRON_YEARS: i32 = 50;
/// 2000-01-01T00:00:00Z: a schedule is valid only if it fires after this instant (reference).
const VALIDATION_START: i64 = 946_684_800;

#[derive(Debug, Clone)]
enum Rules {
    Cron {
        spec: CalendarSpec,
        /// Minute and hour both fixed: iterate on wall-clock time (Debian cron DST rules).
        wall_clock: bool,
    },
    OnCalendar(Vec<oncalendar::Line>),
}

/// A parsed, validated schedule bound to a time zone.
#[derive(Debug, Clone)]
pub struct Schedule {
    rules: Rules,
    tz: TimeZone,
}

impl Schedule {
    /// Parse and validate (§6.1-§6.3) `expr` to be evaluated in time zone `tz`, a canonical
    /// name as returned by [`tz::canonical`] (legacy aliases are accepted too). Validation of
    /// the expression is independent of `tz`: at least one occurrence after 2000-01-01, cron
    /// evaluated naively, OnCalendar in UTC.
    pub fn parse(expr: &str, tz: &str) -> Result<Schedule, ScheduleError> {
        let zone = tz::canonical(tz)
            .and_then(tz::time_zone)
            .ok_or_else(|| ScheduleError::UnknownTimeZone(text::excerpt(tz)))?;
        let rules = match detect_kind(expr) {
            ScheduleKind::Cron => {
                let (spec, wall_clock) = cron::parse(expr)?;
                Rules::Cron { spec, wall_clock }
            }
            ScheduleKind::OnCalendar => match oncalendar::parse(expr) {
                Ok(rules) => Rules::OnCalendar(rules),
                Err(_) if looks_like_cron(expr) => {
                    return Err(ScheduleError::FieldCount(text::py_split(expr).len()));
                }
                Err(e) => return Err(e),
            },
        };
        let validator = Schedule {
            rules,
            tz: TimeZone::UTC,
        };
        let start =
            Timestamp::from_second(VALIDATION_START).map_err(|_| ScheduleError::NeverFires)?;
        if validator.next_after(start).is_none() {
            return Err(ScheduleError::NeverFires);
        }
        Ok(Schedule {
            rules: validator.rules,
            tz: zone,
        })
    }

    /// The dialect the expression was detected as (§6.1).
    pub fn kind(&self) -> ScheduleKind {
        match self.rules {
            Rules::Cron { .. } => ScheduleKind::Cron,
            Rules::OnCalendar(_) => ScheduleKind::OnCalendar,
        }
    }

    /// Next fire time after `after`: its sub-second part is dropped, then the search starts at
    /// +1 s, so a ping exactly on a fire time expects the next one. `None` when there is no
    /// further fire time (OnCalendar dates in the past, year 2200, or cron's 50-year horizon).
    ///
    /// As in the reference, wall-clock iteration resolves an ambiguous local time to its first
    /// occurrence; when `after` lies in the second pass of a repeated hour, the result can
    /// therefore be that earlier first occurrence.
    pub fn next_after(&self, after: Timestamp) -> Option<Timestamp> {
        match &self.rules {
            Rules::Cron { spec, wall_clock } => {
                if *wall_clock {
                    let wall = zone::start_wall(&self.tz, after, 60, true)?;
                    let max_year = Civil::from_secs(wall).year.saturating_add(CRON_YEARS);
                    zone::next_wall_clock(spec, &self.tz, wall, max_year, GapPolicy::ShiftForward)
                } else {
                    let start = zone::start_absolute(&self.tz, after)?;
                    let local = start.checked_add(zone::offset_secs(&self.tz, start)?)?;
                    let max_year = Civil::from_secs(local).year.saturating_add(CRON_YEARS);
                    zone::next_absolute(spec, &self.tz, start, max_year)
                }
            }
            Rules::OnCalendar(lines) => lines
                .iter()
                .filter_map(|line| {
                    let tz = line.tz.as_ref().unwrap_or(&self.tz);
                    let wall = zone::start_wall(tz, after, 1, false)?;
                    zone::next_wall_clock(
                        &line.spec,
                        tz,
                        wall,
                        oncalendar::LAST_YEAR,
                        GapPolicy::Skip,
                    )
                })
                .min(),
        }
    }

    /// Whether the local wall time `dt` (seconds included) belongs to the expression, ignoring
    /// time zones. Intended for tests that cross-check [`Schedule::next_after`].
    pub fn matches_civil(&self, dt: jiff::civil::DateTime) -> bool {
        let c = Civil {
            year: i32::from(dt.year()),
            month: dt.month() as u8,
            day: dt.day() as u8,
            hour: dt.hour() as u8,
            minute: dt.minute() as u8,
            second: dt.second() as u8,
        };
        match &self.rules {
            Rules::Cron { spec, .. } => spec.contains(c),
            Rules::OnCalendar(lines) => lines.iter().any(|l| l.spec.contains(c)),
        }
    }
}

/// Parse and validate with the UTC zone; returns the detected kind.
pub(crate) fn validate(expr: &str) -> Result<ScheduleKind, ScheduleError> {
    Schedule::parse(expr, "UTC").map(|s| s.kind())
}

#[cfg(test)]
mod oncalendar_tests;
#[cfg(test)]
mod tests;
