//! Runs every line of the shared schedule vectors (cron, OnCalendar, validity) against the
//! engine. The data is read at run time from `tests/vectors/` (a copy of the shared vectors, so
//! the tests need nothing beside the repository; CI checks the copy against `../shared` when it
//! is there).

use std::path::PathBuf;

use jiff::Timestamp;
use overdue::schedule::{Schedule, ScheduleKind, detect_kind};
use serde_json::Value;

fn vectors(name: &str) -> Vec<(usize, String, Value)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}:{}: {e}", i + 1));
            (i + 1, l.to_string(), v)
        })
        .collect()
}

fn ts(v: &Value) -> Timestamp {
    v.as_str()
        .expect("timestamp string")
        .parse()
        .expect("RFC 3339 timestamp")
}

/// Checks one file of `{kind, expr, tz, after, next}` lines; returns the failure messages.
fn check_sequences(name: &str, kind: ScheduleKind) -> (usize, Vec<String>) {
    let lines = vectors(name);
    let mut failures = Vec::new();
    for (no, raw, v) in &lines {
        let expr = v["expr"].as_str().expect("expr");
        let tz = v["tz"].as_str().expect("tz");
        if detect_kind(expr) != kind {
            failures.push(format!(
                "{name}:{no}: detected as {:?}: {raw}",
                detect_kind(expr)
            ));
            continue;
        }
        let schedule = match Schedule::parse(expr, tz) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{name}:{no}: parse error {e}: {raw}"));
                continue;
            }
        };
        let expected: Vec<Timestamp> = v["next"].as_array().expect("next").iter().map(ts).collect();
        let mut got = Vec::new();
        let mut cursor = ts(&v["after"]);
        for _ in 0..expected.len() {
            match schedule.next_after(cursor) {
                Some(t) => {
                    got.push(t);
                    cursor = t;
                }
                None => break,
            }
        }
        let extra = if expected.len() < 6 && got.len() == expected.len() {
            schedule.next_after(cursor)
        } else {
            None
        };
        if got != expected || extra.is_some() {
            failures.push(format!(
                "{name}:{no}: got {got:?}{}\n    line: {raw}",
                extra
                    .map(|t| format!(" then unexpected {t}"))
                    .unwrap_or_default()
            ));
        }
    }
    (lines.len(), failures)
}

fn assert_all(name: &str, kind: ScheduleKind) {
    let (total, failures) = check_sequences(name, kind);
    assert!(total > 0, "{name} is empty");
    assert!(
        failures.is_empty(),
        "{} of {total} {name} vectors failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{name}: {total}/{total} passed");
}

#[test]
fn cron_vectors() {
    assert_all("cron.jsonl", ScheduleKind::Cron);
}

#[test]
fn oncalendar_vectors() {
    assert_all("oncalendar.jsonl", ScheduleKind::OnCalendar);
}

#[test]
fn validity_vectors() {
    let lines = vectors("validity.jsonl");
    let mut failures = Vec::new();
    for (no, raw, v) in &lines {
        let expr = v["expr"].as_str().expect("expr");
        let valid = v["valid"].as_bool().expect("valid");
        let result = Schedule::parse(expr, "UTC");
        if result.is_ok() != valid {
            failures.push(format!("validity.jsonl:{no}: got {result:?}: {raw}"));
        }
        if let Some(kind) = v["kind"].as_str()
            && valid
        {
            let want = if kind == "cron" {
                ScheduleKind::Cron
            } else {
                ScheduleKind::OnCalendar
            };
            assert_eq!(detect_kind(expr), want, "validity.jsonl:{no}");
        }
    }
    assert!(!lines.is_empty());
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        lines.len(),
        failures.join("\n")
    );
    eprintln!("validity.jsonl: {0}/{0} passed", lines.len());
}
