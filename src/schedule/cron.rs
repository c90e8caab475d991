//! Five-field cron parsing with cronsim 2.7 / Debian cron semantics (§6.2): names, ranges,
//! steps, lists, `L`/`LW` in day-of-month, `<d>L` and `<d>#<n>` in day-of-week, DOM/DOW
//! AND-vs-OR rule and the "impossible day" rejection. Produces a [`CalendarSpec`].

use super::ScheduleError;
use super::civil::{CalendarSpec, DayRule};
use super::text::{parse_digits, py_split};

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
/// Longest possible length of each month (February counts its leap day).
const LONGEST: [u8; 13] = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Minute,
    Hour,
    Day,
    Month,
    Dow,
}

impl Field {
    /// The field's name and position, for messages: a user counting fields finds it.
    fn name(self) -> &'static str {
        match self {
            Field::Minute => "minute (field 1)",
            Field::Hour => "hour (field 2)",
            Field::Day => "day-of-month (field 3)",
            Field::Month => "month (field 4)",
            Field::Dow => "day-of-week (field 5)",
        }
    }

    fn range(self) -> (u8, u8) {
        match self {
            Field::Minute => (0, 59),
            Field::Hour => (0, 23),
            Field::Day => (1, 31),
            Field::Month => (1, 12),
            Field::Dow => (0, 7),
        }
    }

    fn syntax(self, token: &str) -> ScheduleError {
        ScheduleError::syntax(self.name(), token)
    }

    fn out_of_range(self, token: &str) -> ScheduleError {
        ScheduleError::out_of_range(self.name(), token)
    }

    fn digits(self, s: &str) -> Result<u64, ScheduleError> {
        parse_digits(s).ok_or_else(|| self.syntax(s))
    }

    /// A single value: a number in range, or a month/day name where the field allows it.
    fn value(self, s: &str) -> Result<u8, ScheduleError> {
        let names: &[&str] = match self {
            Field::Month => &MONTHS,
            Field::Dow => &DAYS,
            _ => &[],
        };
        if let Some(i) = names.iter().position(|n| *n == s) {
            let base = u8::from(self == Field::Month);
            return Ok(i as u8 + base);
        }
        let v = self.digits(s)?;
        let (lo, hi) = self.range();
        if v < u64::from(lo) || v > u64::from(hi) {
            return Err(self.out_of_range(s));
        }
        Ok(v as u8)
    }
}

/// The parsed content of one field: plain values plus the cron extras.
#[derive(Debug, Default)]
struct Items {
    values: u64,
    last: bool,
    last_weekday: bool,
    /// Day-of-week extras: `<d>L` (bit d) and `<d>#<n>` (index d, bit n).
    dow_last: u8,
    dow_nth: [u8; 8],
}

impl Items {
    fn merge(&mut self, other: &Items) {
        self.values |= other.values;
        self.last |= other.last;
        self.last_weekday |= other.last_weekday;
        self.dow_last |= other.dow_last;
        for (a, b) in self.dow_nth.iter_mut().zip(other.dow_nth) {
            *a |= b;
        }
    }

    fn only_values(&self) -> bool {
        !self.last && !self.last_weekday && self.dow_last == 0 && self.dow_nth == [0; 8]
    }
}

fn range_bits(lo: u8, hi: u8) -> u64 {
    (lo..=hi).fold(0, |acc, v| acc | 1 << v)
}

/// Every `step`-th element of the set, in increasing order, starting with the smallest.
fn every_nth(bits: u64, step: u64) -> u64 {
    let mut out = 0;
    let mut rest = bits;
    let mut i = 0u64;
    while rest != 0 {
        let b = rest.trailing_zeros();
        rest &= rest - 1;
        if i.is_multiple_of(step) {
            out |= 1 << b;
        }
        i += 1;
    }
    out
}

fn parse_field(field: Field, s: &str) -> Result<Items, ScheduleError> {
    let (lo, hi) = field.range();
    if s == "*" {
        return Ok(Items {
            values: range_bits(lo, hi),
            ..Items::default()
        });
    }
    if s.contains(',') {
        let mut all = Items::default();
        for term in s.split(',') {
            all.merge(&parse_field(field, term)?);
        }
        return Ok(all);
    }
    if field == Field::Dow && s.contains('L') {
        let value = s.strip_suffix('L').unwrap_or(s);
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
            return Err(field.syntax(s));
        }
        let d = field.value(value)? % 7;
        return Ok(Items {
            dow_last: 1 << d,
            ..Items::default()
        });
    }
    if field == Field::Dow
        && let Some((term, nth)) = s.split_once('#')
    {
        let n = field.digits(nth)?;
        if !(1..=5).contains(&n) {
            return Err(field.out_of_range(s));
        }
        let d = field.value(term)? % 7;
        let mut items = Items::default();
        items.dow_nth[usize::from(d)] = 1 << n;
        return Ok(items);
    }
    if let Some((term, step)) = s.split_once('/') {
        let step = field.digits(step)?;
        if step == 0 {
            return Err(field.out_of_range(s));
        }
        let items = parse_field(field, term)?;
        if !items.only_values() {
            // `L/2` and `LW/3` keep their plain meaning, as in cronsim.
            return Ok(items);
        }
        let values = if items.values.is_power_of_two() {
            let start = items.values.trailing_zeros() as u8;
            range_bits(start, hi)
        } else {
            items.values
        };
        return Ok(Items {
            values: every_nth(values, step),
            ..Items::default()
        });
    }
    if let Some((a, b)) = s.split_once('-') {
        let start = field.value(a)?;
        let end = field.value(b)?;
        if end < start {
            return Err(field.syntax(s));
        }
        return Ok(Items {
            values: range_bits(start, end),
            ..Items::default()
        });
    }
    if field == Field::Day && s == "LW" {
        return Ok(Items {
            last_weekday: true,
            ..Items::default()
        });
    }
    if field == Field::Day && s == "L" {
        return Ok(Items {
            last: true,
            ..Items::default()
        });
    }
    Ok(Items {
        values: 1 << field.value(s)?,
        ..Items::default()
    })
}

/// Parse a 5-field cron expression into a calendar spec (seconds always 0).
/// Returns the spec and whether both minute and hour are fixed (wall-clock DST handling).
pub(super) fn parse(expr: &str) -> Result<(CalendarSpec, bool), ScheduleError> {
    let upper = expr.to_uppercase();
    let parts = py_split(&upper);
    let [minute, hour, day, month, dow] = parts[..] else {
        return Err(ScheduleError::FieldCount(parts.len()));
    };
    let minutes = parse_field(Field::Minute, minute)?.values;
    let hours = parse_field(Field::Hour, hour)?.values;
    let days = parse_field(Field::Day, day)?;
    let months = parse_field(Field::Month, month)?.values;
    let dows = parse_field(Field::Dow, dow)?;

    if !days.last && !days.last_weekday && days.values != 0 {
        let smallest = days.values.trailing_zeros() as u8;
        let longest = (1..=12u8)
            .filter(|m| months & (1 << m) != 0)
            .map(|m| LONGEST[usize::from(m)])
            .max()
            .unwrap_or(0);
        if smallest > 29 && smallest > longest {
            return Err(ScheduleError::out_of_range(Field::Day.name(), day));
        }
    }

    // 7 is another spelling of Sunday.
    let plain_dow = (dows.values & 0x7f) as u8 | u8::from(dows.values & (1 << 7) != 0);
    let mut dow_nth = [0u8; 7];
    for (w, n) in dows.dow_nth.iter().enumerate() {
        dow_nth[w % 7] |= n;
    }
    let rule = DayRule {
        dom: days.values as u32,
        dom_from_end: u32::from(days.last) << 1,
        dom_last_weekday: days.last_weekday,
        dow: plain_dow,
        dow_last: dows.dow_last,
        dow_nth,
        and: day.starts_with('*') || dow.starts_with('*'),
    };
    let spec = CalendarSpec {
        years: None,
        months: months as u16,
        days: rule,
        hours: hours as u32,
        minutes,
        seconds: 1,
    };
    let fixed_time = !minute.starts_with('*') && !hour.starts_with('*');
    Ok((spec, fixed_time))
}
