//! Proleptic Gregorian calendar arithmetic on plain integers, the field-by-field "next matching
//! wall-clock time" search shared by cron and OnCalendar, and the day rules both dialects use.
//!
//! The search runs on naive civil time (no zone); `zone.rs` maps the result to instants. Plain
//! integer math keeps the hot path free of allocation and of jiff's checked arithmetic.

/// A naive wall-clock time with whole seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Civil {
    pub(crate) year: i32,
    pub(crate) month: u8,
    pub(crate) day: u8,
    pub(crate) hour: u8,
    pub(crate) minute: u8,
    pub(crate) second: u8,
}

pub(super) fn is_leap(year: i32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

pub(super) fn days_in_month(year: i32, month: u8) -> u8 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm, valid for the whole i32 year range we use).
pub(super) fn days_from_civil(year: i32, month: u8, day: u8) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i32, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = yoe + era * 400 + i64::from(month <= 2);
    // Callers only pass seconds derived from jiff timestamps (|year| <= 9999).
    (year as i32, month, day)
}

/// Day of week with Sunday = 0 (cron numbering).
pub(super) fn weekday(year: i32, month: u8, day: u8) -> u8 {
    // 1970-01-01 was a Thursday (4).
    (days_from_civil(year, month, day) + 4).rem_euclid(7) as u8
}

impl Civil {
    pub(super) fn midnight(year: i32, month: u8, day: u8) -> Civil {
        Civil {
            year,
            month,
            day,
            hour: 0,
            minute: 0,
            second: 0,
        }
    }

    /// Seconds since the Unix epoch if this wall time were UTC.
    pub(super) fn to_secs(self) -> i64 {
        days_from_civil(self.year, self.month, self.day) * 86_400
            + i64::from(self.hour) * 3600
            + i64::from(self.minute) * 60
            + i64::from(self.second)
    }

    pub(super) fn from_secs(secs: i64) -> Civil {
        let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
        let rem = secs.rem_euclid(86_400);
        Civil {
            year,
            month,
            day,
            hour: (rem / 3600) as u8,
            minute: (rem / 60 % 60) as u8,
            second: (rem % 60) as u8,
        }
    }

    fn first_of_next_month(self) -> Civil {
        if self.month >= 12 {
            Civil::midnight(self.year + 1, 1, 1)
        } else {
            Civil::midnight(self.year, self.month + 1, 1)
        }
    }

    fn next_day(self) -> Civil {
        if self.day >= days_in_month(self.year, self.month) {
            self.first_of_next_month()
        } else {
            Civil::midnight(self.year, self.month, self.day + 1)
        }
    }

    fn next_hour(self) -> Civil {
        if self.hour >= 23 {
            self.next_day()
        } else {
            Civil {
                hour: self.hour + 1,
                minute: 0,
                second: 0,
                ..self
            }
        }
    }

    fn next_minute(self) -> Civil {
        if self.minute >= 59 {
            self.next_hour()
        } else {
            Civil {
                minute: self.minute + 1,
                second: 0,
                ..self
            }
        }
    }
}

/// Lowest set bit at position >= `from`, if any.
fn next_bit(mask: u64, from: u8) -> Option<u8> {
    if from >= 64 {
        return None;
    }
    let rest = mask & (u64::MAX << from);
    (rest != 0).then(|| rest.trailing_zeros() as u8)
}

/// Which days of a month match. Cron and OnCalendar both reduce to this: cron uses the `L`,
/// `LW`, `<d>L`, `<d>#<n>` parts and may OR the two halves; OnCalendar uses `~` and always ANDs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DayRule {
    /// Bit d (1..=31): day-of-month d.
    pub(crate) dom: u32,
    /// Bit r (1..=31): the r-th day counted from the month's end (r = 1 is the last day).
    pub(crate) dom_from_end: u32,
    /// Cron `LW`: last Monday-to-Friday day of the month.
    pub(crate) dom_last_weekday: bool,
    /// Bit w (0 = Sunday): every such weekday.
    pub(crate) dow: u8,
    /// Bit w: the last such weekday of the month (cron `<d>L`).
    pub(crate) dow_last: u8,
    /// Index w, bit n (1..=5): the n-th such weekday of the month (cron `<d>#<n>`).
    pub(crate) dow_nth: [u8; 7],
    /// Day-of-month and day-of-week conditions combine with AND (else OR).
    pub(crate) and: bool,
}

impl DayRule {
    /// Bit d set for every matching day d of the month.
    pub(super) fn mask(&self, year: i32, month: u8) -> u32 {
        let last = days_in_month(year, month);
        let valid = (u32::MAX >> (31 - u32::from(last))) & !1; // bits 1..=last
        let mut dom = self.dom & valid;
        let mut rev = self.dom_from_end & valid;
        while rev != 0 {
            let r = rev.trailing_zeros() as u8;
            rev &= rev - 1;
            dom |= 1 << (last + 1 - r);
        }
        let first_wd = weekday(year, month, 1);
        if self.dom_last_weekday {
            let last_wd = (first_wd + last - 1) % 7;
            let d = match last_wd {
                0 => last - 2,
                6 => last - 1,
                _ => last,
            };
            dom |= 1 << d;
        }
        let mut dow = 0u32;
        let wanted =
            self.dow
                | self.dow_last
                | self.dow_nth.iter().enumerate().fold(0u8, |acc, (w, n)| {
                    if *n != 0 { acc | (1 << w) } else { acc }
                });
        for w in 0..7u8 {
            if wanted & (1 << w) == 0 {
                continue;
            }
            let first = 1 + (w + 7 - first_wd) % 7;
            let mut d = first;
            let mut nth = 1u8;
            while d <= last {
                let is_last = d + 7 > last;
                if self.dow & (1 << w) != 0
                    || (is_last && self.dow_last & (1 << w) != 0)
                    || self.dow_nth[usize::from(w)] & (1 << nth) != 0
                {
                    dow |= 1 << d;
                }
                d += 7;
                nth += 1;
            }
        }
        if self.and { dom & dow } else { dom | dow }
    }
}

/// A set of wall-clock times expressed field by field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CalendarSpec {
    /// Bit (y - 1970) for OnCalendar years 1970..=2199; `None` means every year (cron).
    pub(crate) years: Option<[u64; 4]>,
    /// Bits 1..=12.
    pub(crate) months: u16,
    pub(crate) days: DayRule,
    /// Bits 0..=23, 0..=59, 0..=59.
    pub(crate) hours: u32,
    pub(crate) minutes: u64,
    pub(crate) seconds: u64,
}

pub(super) const YEAR_BASE: i32 = 1970;

impl CalendarSpec {
    fn next_year(&self, from: i32) -> Option<i32> {
        let Some(bits) = &self.years else {
            return Some(from);
        };
        let mut idx = from.checked_sub(YEAR_BASE)?.max(0);
        while idx < 256 {
            let word = bits[(idx / 64) as usize];
            if let Some(b) = next_bit(word, (idx % 64) as u8) {
                return Some(YEAR_BASE + (idx / 64) * 64 + i32::from(b));
            }
            idx = (idx / 64 + 1) * 64;
        }
        None
    }

    /// Earliest wall time >= `start` in this set, with a year no greater than `max_year`.
    /// Each step jumps to the next candidate of the first failing field (year, month, day,
    /// hour, minute, second), so long spans cost one iteration per month at most.
    pub(super) fn next_match(&self, start: Civil, max_year: i32) -> Option<Civil> {
        let mut c = start;
        loop {
            if c.year > max_year {
                return None;
            }
            let year = self.next_year(c.year)?;
            if year != c.year {
                c = Civil::midnight(year, 1, 1);
                continue;
            }
            if self.months & (1 << c.month) == 0 {
                c = match next_bit(u64::from(self.months), c.month) {
                    Some(m) => Civil::midnight(c.year, m, 1),
                    None => Civil::midnight(c.year + 1, 1, 1),
                };
                continue;
            }
            let days = u64::from(self.days.mask(c.year, c.month));
            match next_bit(days, c.day) {
                None => {
                    c = c.first_of_next_month();
                    continue;
                }
                Some(d) if d != c.day => c = Civil::midnight(c.year, c.month, d),
                Some(_) => {}
            }
            match next_bit(u64::from(self.hours), c.hour) {
                None => {
                    c = c.next_day();
                    continue;
                }
                Some(h) if h != c.hour => {
                    c = Civil {
                        hour: h,
                        minute: 0,
                        second: 0,
                        ..c
                    }
                }
                Some(_) => {}
            }
            match next_bit(self.minutes, c.minute) {
                None => {
                    c = c.next_hour();
                    continue;
                }
                Some(m) if m != c.minute => {
                    c = Civil {
                        minute: m,
                        second: 0,
                        ..c
                    }
                }
                Some(_) => {}
            }
            match next_bit(self.seconds, c.second) {
                None => {
                    c = c.next_minute();
                    continue;
                }
                Some(s) => c.second = s,
            }
            return Some(c);
        }
    }

    /// Direct membership test, written independently of the search so tests can cross-check.
    pub(super) fn contains(&self, c: Civil) -> bool {
        let year_ok = match &self.years {
            None => true,
            Some(bits) => {
                let idx = c.year - YEAR_BASE;
                (0..256).contains(&idx) && bits[(idx / 64) as usize] & (1 << (idx % 64)) != 0
            }
        };
        year_ok
            && self.months & (1 << c.month) != 0
            && self.days.mask(c.year, c.month) & (1 << c.day) != 0
            && self.hours & (1 << c.hour) != 0
            && self.minutes & (1 << c.minute) != 0
            && self.seconds & (1 << c.second) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_math_round_trips() {
        for secs in [-86_401i64, 0, 951_782_400, 4_107_542_399, 253_402_300_799] {
            assert_eq!(Civil::from_secs(secs).to_secs(), secs);
        }
        assert_eq!(Civil::from_secs(951_782_400), Civil::midnight(2000, 2, 29));
        assert_eq!(weekday(2026, 1, 15), 4);
        assert_eq!(weekday(2000, 1, 1), 6);
        assert_eq!(days_in_month(2100, 2), 28);
        assert_eq!(days_in_month(2000, 2), 29);
    }

    #[test]
    fn next_bit_edges() {
        assert_eq!(next_bit(0b1010, 0), Some(1));
        assert_eq!(next_bit(0b1010, 2), Some(3));
        assert_eq!(next_bit(0b1010, 4), None);
        assert_eq!(next_bit(u64::MAX, 64), None);
    }
}
