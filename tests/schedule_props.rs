//! Property tests: generated cron expressions checked against an independent evaluator written
//! here, OnCalendar fire times checked against `matches_civil`, monotonic fire times, and the
//! parser never panicking on arbitrary or token-soup input.

use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{SignedDuration, Timestamp};
use overdue::schedule::{Schedule, ScheduleKind, tz};
use proptest::prelude::*;

const ZONES: [&str; 8] = [
    "UTC",
    "Europe/Riga",
    "America/New_York",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
    "Europe/Dublin",
    "Asia/Kolkata",
    "America/Sao_Paulo",
];

/// One comma-separated item of a generated cron field, with the values it stands for.
#[derive(Debug, Clone)]
enum Item {
    Star,
    Value(u8),
    Range(u8, u8),
    Step(Box<Item>, u8),
}

impl Item {
    fn render(&self) -> String {
        match self {
            Item::Star => "*".into(),
            Item::Value(v) => v.to_string(),
            Item::Range(a, b) => format!("{a}-{b}"),
            Item::Step(base, s) => format!("{}/{s}", base.render()),
        }
    }

    fn values(&self, lo: u8, hi: u8) -> Vec<u8> {
        match self {
            Item::Star => (lo..=hi).collect(),
            Item::Value(v) => vec![*v],
            Item::Range(a, b) => (*a..=*b).collect(),
            Item::Step(base, s) => {
                // A single start value means "from there to the field maximum" (`a/n`).
                let vals = match base.values(lo, hi)[..] {
                    [v] => (v..=hi).collect(),
                    ref many => many.to_vec(),
                };
                vals.into_iter().step_by(usize::from(*s)).collect()
            }
        }
    }
}

fn item(lo: u8, hi: u8) -> impl Strategy<Value = Item> {
    let simple = prop_oneof![
        Just(Item::Star),
        (lo..=hi).prop_map(Item::Value),
        (lo..=hi, lo..=hi).prop_map(|(a, b)| Item::Range(a.min(b), a.max(b))),
    ];
    (simple, proptest::option::weighted(0.3, 1u8..=12)).prop_map(|(base, step)| match step {
        Some(s) => Item::Step(Box::new(base), s),
        None => base,
    })
}

#[derive(Debug, Clone)]
struct Field {
    items: Vec<Item>,
    lo: u8,
    hi: u8,
}

impl Field {
    fn render(&self) -> String {
        self.items
            .iter()
            .map(Item::render)
            .collect::<Vec<_>>()
            .join(",")
    }

    fn has(&self, v: u8) -> bool {
        self.items
            .iter()
            .any(|i| i.values(self.lo, self.hi).contains(&v))
    }
}

fn field(lo: u8, hi: u8, max_items: usize) -> impl Strategy<Value = Field> {
    proptest::collection::vec(item(lo, hi), 1..=max_items).prop_map(move |items| Field {
        items,
        lo,
        hi,
    })
}

/// Extra day-of-week forms the plain items do not cover.
#[derive(Debug, Clone)]
enum DowExtra {
    None,
    Last(u8),
    Nth(u8, u8),
}

#[derive(Debug, Clone)]
struct Cron {
    minute: Field,
    hour: Field,
    dom: Field,
    dom_last: bool,
    month: Field,
    dow: Field,
    dow_extra: DowExtra,
}

impl Cron {
    fn render(&self) -> String {
        let mut dom = self.dom.render();
        if self.dom_last {
            dom.push_str(",L");
        }
        let mut dow = self.dow.render();
        match self.dow_extra {
            DowExtra::None => {}
            DowExtra::Last(d) => dow.push_str(&format!(",{d}L")),
            DowExtra::Nth(d, n) => dow.push_str(&format!(",{d}#{n}")),
        }
        format!(
            "{} {} {} {} {}",
            self.minute.render(),
            self.hour.render(),
            dom,
            self.month.render(),
            dow
        )
    }

    /// Independent reading of Debian cron rules on a local wall time.
    fn matches(&self, dt: DateTime) -> bool {
        let last = dt.days_in_month() as u8;
        let day = dt.day() as u8;
        let wd = dt.weekday().to_sunday_zero_offset() as u8;
        let dom_ok = self.dom.has(day) || (self.dom_last && day == last);
        let dow_ok = self.dow.has(wd)
            || (wd == 0 && self.dow.has(7))
            || match self.dow_extra {
                DowExtra::None => false,
                DowExtra::Last(d) => d % 7 == wd && day + 7 > last,
                DowExtra::Nth(d, n) => d % 7 == wd && (day - 1) / 7 + 1 == n,
            };
        let rendered = self.render();
        let fields: Vec<&str> = rendered.split(' ').collect();
        let and = fields[2].starts_with('*') || fields[4].starts_with('*');
        let day_ok = if and {
            dom_ok && dow_ok
        } else {
            dom_ok || dow_ok
        };
        dt.second() == 0
            && self.minute.has(dt.minute() as u8)
            && self.hour.has(dt.hour() as u8)
            && self.month.has(dt.month() as u8)
            && day_ok
    }

    fn wall_clock(&self) -> bool {
        let r = self.render();
        let f: Vec<&str> = r.split(' ').collect();
        !f[0].starts_with('*') && !f[1].starts_with('*')
    }
}

fn cron() -> impl Strategy<Value = Cron> {
    let extra = prop_oneof![
        3 => Just(DowExtra::None),
        1 => (0u8..=7).prop_map(DowExtra::Last),
        1 => (0u8..=7, 1u8..=5).prop_map(|(d, n)| DowExtra::Nth(d, n)),
    ];
    (
        field(0, 59, 3),
        field(0, 23, 3),
        field(1, 31, 2),
        any::<bool>(),
        field(1, 12, 2),
        field(0, 7, 2),
        extra,
    )
        .prop_map(
            |(minute, hour, dom, dom_last, month, dow, dow_extra)| Cron {
                minute,
                hour,
                dom,
                dom_last,
                month,
                dow,
                dow_extra,
            },
        )
}

fn instant() -> impl Strategy<Value = Timestamp> {
    // 2000-01-01 .. 2060-01-01, with sub-second noise.
    (946_684_800i64..2_840_140_800, 0i32..1_000_000_000)
        .prop_map(|(s, ns)| Timestamp::new(s, ns).unwrap_or(Timestamp::UNIX_EPOCH))
}

fn in_fold(zone: &TimeZone, t: Timestamp) -> bool {
    matches!(
        zone.to_ambiguous_timestamp(zone.to_datetime(t)).offset(),
        AmbiguousOffset::Fold { .. }
    )
}

fn is_transition(zone: &TimeZone, t: Timestamp) -> bool {
    zone.to_offset(t - SignedDuration::from_secs(1)) != zone.to_offset(t)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn cron_fire_times_match_and_increase(c in cron(), zi in 0..ZONES.len(), after in instant()) {
        let expr = c.render();
        let zone_name = ZONES[zi];
        let Ok(schedule) = Schedule::parse(&expr, zone_name) else {
            // Only expressions whose days can never occur are rejected.
            return Ok(());
        };
        prop_assert_eq!(schedule.kind(), ScheduleKind::Cron);
        let zone = tz::time_zone(zone_name).expect("zone");
        let mut prev = after;
        for i in 0..5 {
            let Some(t) = schedule.next_after(prev) else { break };
            if i > 0 || !(c.wall_clock() && in_fold(&zone, after)) {
                prop_assert!(t > prev, "{expr} in {zone_name}: {t} not after {prev}");
            }
            let local = zone.to_datetime(t);
            let shifted = c.wall_clock() && is_transition(&zone, t);
            prop_assert!(c.matches(local) || shifted, "{expr} in {zone_name}: {t} ({local}) does not match");
            if zone_name == "UTC" && i == 0 {
                // Nothing matching was skipped between `after` and the first fire time.
                let mut m = after.as_second() - after.as_second().rem_euclid(60) + 60;
                let mut checked = 0;
                while m < t.as_second() && checked < 3000 {
                    let dt = TimeZone::UTC.to_datetime(Timestamp::from_second(m).expect("ts"));
                    prop_assert!(!c.matches(dt), "{expr}: skipped {dt} before {t}");
                    m += 60;
                    checked += 1;
                }
            }
            prev = t;
        }
    }

    #[test]
    fn oncalendar_fire_times_match_and_increase(
        wd in proptest::option::of(prop_oneof![Just("Mon..Fri"), Just("Sat,Sun"), Just("Tue"), Just("Mon-Wed,Fri")]),
        date in proptest::option::of(prop_oneof![
            Just("*-*-*"), Just("*-*-01"), Just("*-02~01"), Just("*-*~03"), Just("*-1/2-1..7"),
            Just("2030..2040-*-13"), Just("*-02-29"), Just("*-*-*/5"),
        ]),
        time in proptest::option::of(prop_oneof![
            Just("09:00"), Just("*:0/15"), Just("00/6:00"), Just("8..18:30"), Just("*:*:30"), Just("02:30"),
            Just("01:45:15"), Just("*-*-* 3:0"),
        ]),
        zi in 0..ZONES.len(),
        after in instant(),
    ) {
        let expr = [wd, date, time].into_iter().flatten().collect::<Vec<_>>().join(" ");
        let expr = if expr.is_empty() { "daily".to_string() } else { expr };
        let zone_name = ZONES[zi];
        let Ok(schedule) = Schedule::parse(&expr, zone_name) else { return Ok(()) };
        let zone = tz::time_zone(zone_name).expect("zone");
        let mut prev = after;
        for i in 0..5 {
            let Some(t) = schedule.next_after(prev) else { break };
            if i > 0 || !in_fold(&zone, after) {
                prop_assert!(t > prev, "{expr} in {zone_name}: {t} not after {prev}");
            }
            let local = zone.to_datetime(t);
            prop_assert!(schedule.matches_civil(local), "{expr} in {zone_name}: {t} ({local}) does not match");
            prev = t;
        }
    }

    #[test]
    fn arbitrary_strings_never_panic(s in any::<String>(), zi in 0..ZONES.len()) {
        if let Ok(schedule) = Schedule::parse(&s, ZONES[zi]) {
            let _ = schedule.next_after(Timestamp::UNIX_EPOCH);
        }
        let _ = tz::canonical(&s);
    }

    #[test]
    fn token_soup_never_panics(
        tokens in proptest::collection::vec(prop_oneof![
            Just("*"), Just("/"), Just(","), Just("-"), Just(".."), Just("~"), Just("L"), Just("W"),
            Just("LW"), Just("#"), Just("?"), Just("@"), Just("MON"), Just("fri"), Just("Sunday"), Just("jan"),
            Just("0"), Just("1"), Just("5"), Just("7"), Just("28"), Just("29"), Just("31"), Just("59"),
            Just("60"), Just("70"), Just("1969"), Just("2199"), Just("99999999999999999999"), Just(":"),
            Just(" "), Just(" "), Just("\n"), Just("\t"), Just("Europe/Riga"), Just("Europe/Kiev"),
            Just("daily"), Just("weekly"), Just("é"), Just("\u{1f}"),
        ], 0..24),
        zi in 0..ZONES.len(),
        after in instant(),
    ) {
        let expr: String = tokens.concat();
        if let Ok(schedule) = Schedule::parse(&expr, ZONES[zi]) {
            let mut t = after;
            for _ in 0..3 {
                match schedule.next_after(t) {
                    Some(n) => t = n,
                    None => break,
                }
            }
        }
    }
}

#[test]
fn extreme_instants_do_not_panic() {
    for expr in [
        "* * * * *",
        "0 3 * * *",
        "daily",
        "*-*-* *:*:*",
        "0 0 29 2 MON",
    ] {
        let schedule = Schedule::parse(expr, "Europe/Riga").expect("valid");
        for t in [Timestamp::MIN, Timestamp::MAX, Timestamp::UNIX_EPOCH] {
            let _ = schedule.next_after(t);
        }
    }
}
