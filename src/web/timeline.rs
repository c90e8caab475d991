//! The timeline picture of a check: a server-rendered SVG of the last day, week or month.
//! One row of status bands (up, late, down, paused, new) from the flips, one tick per ping
//! coloured by kind, and one bar per finished run whose height is its duration, with runs
//! over twice the window's median marked slow: the picture that shows "it ran every night but
//! Tuesday, and took twice as long on Friday".
//!
//! Pure: plain data and `now` in, markup out. Colours come from CSS classes (`band up`,
//! `tick fail`, `run slow`, in `assets/timeline.css`), so both themes style it and the CSP
//! needs no inline style. Nothing from users is printed; times and counts only.

use std::fmt::Write as _;

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

use crate::model::{Flip, Ping, PingKind, StoredStatus};

/// Width of the drawing in SVG units.
const W: f64 = 1000.0;
const BAND_Y: f64 = 4.0;
const BAND_H: f64 = 18.0;
const TICK_Y: f64 = 28.0;
const TICK_H: f64 = 16.0;
const RUN_BASE: f64 = 92.0;
const RUN_MAX_H: f64 = 40.0;
const AXIS_Y: f64 = 108.0;
const H: f64 = 112.0;

/// The window shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Span {
    Day,
    Week,
    Month,
}

impl Span {
    /// `day`, `week` or `month` (anything else: a day).
    pub(crate) fn parse(s: &str) -> Span {
        match s {
            "week" => Span::Week,
            "month" => Span::Month,
            _ => Span::Day,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Span::Day => "day",
            Span::Week => "week",
            Span::Month => "month",
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Span::Day => "24 hours",
            Span::Week => "7 days",
            Span::Month => "30 days",
        }
    }

    pub(crate) fn length(self) -> SignedDuration {
        SignedDuration::from_hours(match self {
            Span::Day => 24,
            Span::Week => 24 * 7,
            Span::Month => 24 * 30,
        })
    }
}

/// What the picture is drawn from.
#[derive(Debug, Clone)]
pub(crate) struct TimelineInput<'a> {
    /// When the check was created: nothing is drawn before it.
    pub created: Timestamp,
    /// The stored status now (the band from the last flip to now).
    pub status: StoredStatus,
    /// The check's status changes, in any order.
    pub flips: &'a [Flip],
    /// Its pings, in any order, with the run duration of each (None: not a finished run).
    pub pings: &'a [(Ping, Option<SignedDuration>)],
    /// Periods the check was late (past its deadline, inside its grace time).
    pub late: &'a [(Timestamp, Timestamp)],
}

/// The status bands over `[from, to]`: (start, end, status), in time order.
pub(crate) fn bands(
    input: &TimelineInput<'_>,
    from: Timestamp,
    to: Timestamp,
) -> Vec<(Timestamp, Timestamp, StoredStatus)> {
    let mut flips: Vec<&Flip> = input.flips.iter().collect();
    flips.sort_by_key(|f| f.created);
    let start = from.max(input.created);
    if start >= to {
        return Vec::new();
    }
    // The status at `start`: that of the last flip before it, or the first flip's old one.
    let mut current = match flips.iter().rev().find(|f| f.created <= start) {
        Some(f) => f.new_status,
        None => flips.first().map_or(input.status, |f| f.old_status),
    };
    let mut out = Vec::new();
    let mut at = start;
    for f in flips.iter().filter(|f| f.created > start && f.created < to) {
        if f.created > at {
            out.push((at, f.created, current));
        }
        at = f.created;
        current = f.new_status;
    }
    out.push((at, to, current));
    out
}

/// The late periods of a simple check with `timeout` and `grace`, from its pings' times
/// (any order) up to `now`: after each ping, from its deadline to the next ping, the end of
/// grace, or now, whichever comes first.
pub(crate) fn late_periods(
    pings: &[Timestamp],
    timeout: SignedDuration,
    grace: SignedDuration,
    now: Timestamp,
) -> Vec<(Timestamp, Timestamp)> {
    let mut times = pings.to_vec();
    times.sort();
    let mut out = Vec::new();
    for (i, t) in times.iter().enumerate() {
        let Ok(deadline) = t.checked_add(timeout) else {
            continue;
        };
        let Ok(down) = deadline.checked_add(grace) else {
            continue;
        };
        let next = times.get(i + 1).copied().unwrap_or(now);
        let end = next.min(down).min(now);
        if end > deadline {
            out.push((deadline, end));
        }
    }
    out
}

fn x_of(t: Timestamp, from: Timestamp, span: SignedDuration) -> f64 {
    let secs = t.duration_since(from).as_secs_f64();
    (secs / span.as_secs_f64() * W).clamp(0.0, W)
}

fn hm(t: Timestamp, tz: &TimeZone) -> String {
    t.to_zoned(tz.clone())
        .strftime("%Y-%m-%d %H:%M")
        .to_string()
}

fn words(d: SignedDuration) -> String {
    let s = d.as_secs().max(0);
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// Which kind a merged tick shows: the most telling of its pings.
fn rank(kind: PingKind) -> u8 {
    match kind {
        PingKind::Fail => 4,
        PingKind::Success => 3,
        PingKind::Start => 2,
        PingKind::Log => 1,
        PingKind::Ignored => 0,
    }
}

/// The picture at `now` over `span`, with axis labels in `tz`.
pub(crate) fn render(
    input: &TimelineInput<'_>,
    now: Timestamp,
    span: Span,
    tz: &TimeZone,
) -> String {
    let len = span.length();
    let from = now.checked_sub(len).unwrap_or(now);
    let mut svg = String::with_capacity(8 * 1024);
    let bands = bands(input, from, now);

    // Ticks: pings in the window, merged per SVG unit.
    let mut ticks: Vec<(i64, PingKind, usize, Timestamp)> = Vec::new();
    let mut in_window: Vec<&(Ping, Option<SignedDuration>)> = input
        .pings
        .iter()
        .filter(|(p, _)| p.created >= from && p.created <= now)
        .collect();
    in_window.sort_by_key(|(p, _)| p.created);
    let mut fails = 0usize;
    for (p, _) in &in_window {
        if p.kind == PingKind::Fail {
            fails += 1;
        }
        #[allow(clippy::cast_possible_truncation)]
        let x = x_of(p.created, from, len).round() as i64;
        match ticks.last_mut() {
            Some(last) if last.0 == x => {
                last.2 += 1;
                if rank(p.kind) > rank(last.1) {
                    last.1 = p.kind;
                }
            }
            _ => ticks.push((x, p.kind, 1, p.created)),
        }
    }
    // Runs: durations in the window; slow = over twice the median.
    let runs: Vec<(Timestamp, SignedDuration, PingKind)> = in_window
        .iter()
        .filter_map(|(p, d)| d.map(|d| (p.created, d, p.kind)))
        .collect();
    let mut sorted: Vec<i64> = runs
        .iter()
        .map(|r| i64::try_from(r.1.as_millis()).unwrap_or(i64::MAX))
        .collect();
    sorted.sort_unstable();
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0);
    let longest = sorted.last().copied().unwrap_or(0).max(1);
    let down: SignedDuration = bands
        .iter()
        .filter(|b| b.2 == StoredStatus::Down)
        .map(|b| b.1.duration_since(b.0))
        .sum();
    let label = format!(
        "{}: {} pings, {} failures, down for {}",
        span.label(),
        in_window.len(),
        fails,
        words(down)
    );
    let _ = write!(
        svg,
        r#"<svg class="timeline" viewBox="0 0 {W} {H}" preserveAspectRatio="none" role="img" aria-label="{label}" xmlns="http://www.w3.org/2000/svg"><title>{label}</title>"#
    );
    let _ = write!(
        svg,
        r#"<rect class="track" x="0" y="{BAND_Y}" width="{W}" height="{BAND_H}"/>"#
    );
    for (a, b, status) in &bands {
        let x = x_of(*a, from, len);
        let w = (x_of(*b, from, len) - x).max(0.5);
        let _ = write!(
            svg,
            r#"<rect class="band {}" x="{x:.1}" y="{BAND_Y}" width="{w:.1}" height="{BAND_H}"><title>{} {} – {}</title></rect>"#,
            status.as_str(),
            status.as_str(),
            hm(*a, tz),
            hm(*b, tz)
        );
    }
    for (a, b) in input.late {
        let (a, b) = ((*a).max(from), (*b).min(now));
        if b <= a {
            continue;
        }
        let x = x_of(a, from, len);
        let w = (x_of(b, from, len) - x).max(0.5);
        let _ = write!(
            svg,
            r#"<rect class="band late" x="{x:.1}" y="{BAND_Y}" width="{w:.1}" height="{BAND_H}"><title>late {} – {}</title></rect>"#,
            hm(a, tz),
            hm(b, tz)
        );
    }
    for (x, kind, count, at) in &ticks {
        let what = if *count > 1 {
            format!("{count} pings from {}", hm(*at, tz))
        } else {
            format!("{} ping {}", kind.as_str(), hm(*at, tz))
        };
        let _ = write!(
            svg,
            r#"<rect class="tick {}" x="{:.1}" y="{TICK_Y}" width="3" height="{TICK_H}"><title>{what}</title></rect>"#,
            kind.as_str(),
            (*x as f64 - 1.5).clamp(0.0, W - 3.0),
        );
    }
    let _ = write!(
        svg,
        r#"<line class="axis" x1="0" y1="{RUN_BASE}" x2="{W}" y2="{RUN_BASE}"/>"#
    );
    #[allow(clippy::cast_precision_loss)]
    for (at, d, kind) in &runs {
        let ms = i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        let h = (ms as f64 / longest as f64 * RUN_MAX_H).max(2.0);
        let slow = median > 0 && ms > 2 * median;
        // A failed run is shown as failed even when it was also slow: the failure is the news.
        let class = match (slow, *kind == PingKind::Fail) {
            (_, true) => "run failed",
            (true, false) => "run slow",
            (false, false) => "run",
        };
        let x = (x_of(*at, from, len) - 2.0).clamp(0.0, W - 4.0);
        let _ = write!(
            svg,
            r#"<rect class="{class}" x="{x:.1}" y="{:.1}" width="4" height="{h:.1}"><title>run of {} ending {}{}</title></rect>"#,
            RUN_BASE - h,
            words(*d),
            hm(*at, tz),
            if slow { ", over twice the usual" } else { "" }
        );
    }
    for (x, text) in axis(from, now, span, tz) {
        let anchor = if x < 20.0 {
            "start"
        } else if x > W - 20.0 {
            "end"
        } else {
            "middle"
        };
        let _ = write!(
            svg,
            r#"<line class="grid" x1="{x:.1}" y1="0" x2="{x:.1}" y2="{RUN_BASE}"/><text class="label" x="{x:.1}" y="{AXIS_Y}" text-anchor="{anchor}">{text}</text>"#
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Axis labels: every 3 hours for a day, every day for a week, every 5 days for a month, at
/// local midnights and round hours in `tz`.
pub(crate) fn axis(
    from: Timestamp,
    to: Timestamp,
    span: Span,
    tz: &TimeZone,
) -> Vec<(f64, String)> {
    let len = span.length();
    let (step_hours, format) = match span {
        Span::Day => (3, "%H:%M"),
        Span::Week => (24, "%a %-d"),
        Span::Month => (24 * 5, "%b %-d"),
    };
    let start = from.to_zoned(tz.clone());
    let Ok(mut at) = start.start_of_day() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for _ in 0..64 {
        if at.timestamp() > to {
            break;
        }
        if at.timestamp() > from {
            let x = x_of(at.timestamp(), from, len);
            out.push((x, at.strftime(format).to_string()));
        }
        let Ok(next) = at.checked_add(jiff::Span::new().hours(step_hours)) else {
            break;
        };
        at = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    fn flip(at: &str, old: StoredStatus, new: StoredStatus) -> Flip {
        Flip {
            check: Uuid::nil(),
            created: ts(at),
            old_status: old,
            new_status: new,
            reason: String::new(),
        }
    }

    fn ping(n: u64, at: &str, kind: PingKind) -> Ping {
        Ping {
            check: Uuid::nil(),
            n,
            created: ts(at),
            kind,
            scheme: "http".into(),
            remote_addr: None,
            method: "GET".into(),
            ua: String::new(),
            rid: None,
            exit_status: None,
            body_len: 0,
        }
    }

    use StoredStatus::{Down, New, Paused, Up};

    #[test]
    fn bands_follow_the_flips_and_clip_to_the_window() {
        let flips = [
            flip("2026-11-20T00:00:00Z", New, Up),
            flip("2026-11-24T10:00:00Z", Up, Down),
            flip("2026-11-24T12:00:00Z", Down, Up),
        ];
        let input = TimelineInput {
            created: ts("2026-11-19T00:00:00Z"),
            status: Up,
            flips: &flips,
            pings: &[],
            late: &[],
        };
        let b = bands(
            &input,
            ts("2026-11-24T00:00:00Z"),
            ts("2026-11-25T00:00:00Z"),
        );
        assert_eq!(
            b.iter().map(|x| x.2).collect::<Vec<_>>(),
            vec![Up, Down, Up],
            "up from before the window, down 10-12, up again"
        );
        assert_eq!(b[0].0, ts("2026-11-24T00:00:00Z"));
        assert_eq!(b[1].1.duration_since(b[1].0), SignedDuration::from_hours(2));
    }

    #[test]
    fn new_before_the_first_flip_and_nothing_before_creation() {
        let flips = [flip("2026-11-24T18:00:00Z", New, Paused)];
        let input = TimelineInput {
            created: ts("2026-11-24T06:00:00Z"),
            status: Paused,
            flips: &flips,
            pings: &[],
            late: &[],
        };
        let b = bands(
            &input,
            ts("2026-11-24T00:00:00Z"),
            ts("2026-11-25T00:00:00Z"),
        );
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].0, b[0].2), (ts("2026-11-24T06:00:00Z"), New));
        assert_eq!(b[1].2, Paused);
    }

    #[test]
    fn late_is_from_the_deadline_to_the_next_ping_or_the_end_of_grace() {
        let h = SignedDuration::from_hours;
        let pings = [
            ts("2026-11-24T00:00:00Z"),
            ts("2026-11-24T01:30:00Z"),
            ts("2026-11-24T02:00:00Z"),
        ];
        let late = late_periods(&pings, h(1), h(1), ts("2026-11-24T06:00:00Z"));
        assert_eq!(
            late,
            vec![
                (ts("2026-11-24T01:00:00Z"), ts("2026-11-24T01:30:00Z")),
                (ts("2026-11-24T03:00:00Z"), ts("2026-11-24T04:00:00Z")),
            ]
        );
    }

    #[test]
    fn ticks_runs_and_a_slow_run() {
        let now = ts("2026-11-25T00:00:00Z");
        let mut pings = Vec::new();
        for (i, day) in (18..=24).enumerate() {
            let minutes = if day == 22 { 30 } else { 10 };
            let n = 2 * i as u64;
            pings.push((
                ping(n + 1, &format!("2026-11-{day}T02:00:00Z"), PingKind::Start),
                None,
            ));
            pings.push((
                ping(
                    n + 2,
                    &format!("2026-11-{day}T02:{minutes}:00Z"),
                    PingKind::Success,
                ),
                Some(SignedDuration::from_mins(minutes)),
            ));
        }
        let input = TimelineInput {
            created: ts("2026-11-01T00:00:00Z"),
            status: Up,
            flips: &[],
            pings: &pings,
            late: &[],
        };
        let svg = render(&input, now, Span::Week, &TimeZone::UTC);
        assert_eq!(svg.matches(r#"class="tick "#).count(), 14);
        assert_eq!(svg.matches(r#"class="run"#).count(), 7);
        assert_eq!(svg.matches(r#"class="run slow""#).count(), 1);
        assert!(svg.contains(r#"role="img""#));
        assert!(svg.contains("7 days: 14 pings, 0 failures"));
        // The slow run failing: shown as failed, the failure is the news.
        let mut failing = pings.clone();
        failing[9].0.kind = PingKind::Fail;
        let input = TimelineInput {
            pings: &failing,
            ..input
        };
        let svg = render(&input, now, Span::Week, &TimeZone::UTC);
        assert_eq!(svg.matches(r#"class="run slow""#).count(), 0);
        assert_eq!(svg.matches(r#"class="run failed""#).count(), 1);
        assert!(
            !svg.contains("style="),
            "no inline style: the CSP forbids it"
        );
    }

    #[test]
    fn dense_pings_merge_into_one_tick() {
        let now = ts("2026-11-25T00:00:00Z");
        let pings: Vec<_> = (0..600)
            .map(|i| {
                let t = now.checked_sub(SignedDuration::from_secs(i)).expect("time");
                let mut p = ping(i as u64 + 1, "2026-11-24T00:00:00Z", PingKind::Success);
                p.created = t;
                (p, None)
            })
            .collect();
        let input = TimelineInput {
            created: ts("2026-11-01T00:00:00Z"),
            status: Up,
            flips: &[],
            pings: &pings,
            late: &[],
        };
        let svg = render(&input, now, Span::Month, &TimeZone::UTC);
        let ticks = svg.matches(r#"class="tick "#).count();
        assert!(ticks <= 2, "{ticks} ticks for ten minutes of a month");
        assert!(svg.contains("pings from"));
    }

    #[test]
    fn axis_labels_per_span() {
        let now = ts("2026-11-25T00:00:00Z");
        let from = |s: Span| now.checked_sub(s.length()).expect("from");
        let tz = TimeZone::get("Europe/Riga").expect("zone");
        let day = axis(from(Span::Day), now, Span::Day, &tz);
        assert_eq!(day.len(), 8, "{day:?}");
        assert!(day.iter().all(|(_, t)| t.ends_with(":00")));
        let week = axis(from(Span::Week), now, Span::Week, &tz);
        assert_eq!(week.len(), 7, "{week:?}");
        let month = axis(from(Span::Month), now, Span::Month, &tz);
        assert!((5..=7).contains(&month.len()), "{month:?}");
        assert_eq!(Span::parse("week"), Span::Week);
        assert_eq!(Span::parse("nonsense"), Span::Day);
    }
}
