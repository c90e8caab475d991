//! Next-fire-time benchmarks for typical expressions and for the worst cases the engine has to
//! jump over (leap days, rare weekday/day combinations, sparse OnCalendar dates).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use jiff::Timestamp;
use overdue::schedule::Schedule;

const CASES: [(&str, &str, &str); 11] = [
    ("cron */5 * * * * UTC", "*/5 * * * *", "UTC"),
    ("cron 0 3 * * * Riga", "0 3 * * *", "Europe/Riga"),
    (
        "cron 0 9 * * MON-FRI NY",
        "0 9 * * MON-FRI",
        "America/New_York",
    ),
    ("cron */15 * * * * Riga", "*/15 * * * *", "Europe/Riga"),
    ("oncal Mon..Fri 09:00 Riga", "Mon..Fri 09:00", "Europe/Riga"),
    ("oncal *-*-* 00/6:00 UTC", "*-*-* 00/6:00", "UTC"),
    ("worst cron 0 0 29 2 * UTC", "0 0 29 2 *", "UTC"),
    (
        "worst cron 0 0 29 2 */7 Riga",
        "0 0 29 2 */7",
        "Europe/Riga",
    ),
    (
        "worst cron 0 0 29 2 MON Riga",
        "0 0 29 2 MON",
        "Europe/Riga",
    ),
    (
        "worst cron * * 29 2 */1 Riga (absolute)",
        "* * 29 2 */1",
        "Europe/Riga",
    ),
    (
        "worst oncal Mon *-02-29 NY",
        "Mon *-02-29 12:00",
        "America/New_York",
    ),
];

fn bench(c: &mut Criterion) {
    // 2029-03-01: just after a non-leap February, so the leap-day cases jump the furthest.
    let after: Timestamp = "2029-03-01T00:00:00Z".parse().expect("timestamp");
    for (name, expr, tz) in CASES {
        let schedule = Schedule::parse(expr, tz).expect("valid expression");
        c.bench_function(name, |b| b.iter(|| schedule.next_after(black_box(after))));
    }
    c.bench_function("parse cron 0 9-17/2 * * MON-FRI", |b| {
        b.iter(|| Schedule::parse(black_box("0 9-17/2 * * MON-FRI"), "Europe/Riga"));
    });
    c.bench_function("parse oncal Mon..Fri *-*-1..7 09:00", |b| {
        b.iter(|| Schedule::parse(black_box("Mon..Fri *-*-1..7 09:00"), "Europe/Riga"));
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
