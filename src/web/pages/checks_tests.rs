//! The checks table's pure parts: filters, sorts, counts, words and links.

use std::sync::Arc;

use super::*;
use crate::model::StoredStatus;
use crate::schedule::Schedule;

fn ts(s: &str) -> Timestamp {
    s.parse().expect("test timestamp")
}

const NOW: &str = "2026-03-31T12:00:00Z";

fn check(n: u128, name: &str, tags: &str) -> Check {
    let mut c = Check::new(
        Uuid::from_u128(n),
        Uuid::nil(),
        n as u64,
        ts("2026-01-01T00:00:00Z"),
        Uuid::nil(),
    );
    c.name = name.into();
    c.slug = name.to_lowercase().replace(' ', "-");
    c.tags = tags.into();
    c
}

/// Up, pinged `ago` seconds before NOW, with the default period (1 day) and grace (1 hour).
fn pinged(mut c: Check, ago: i64) -> Check {
    c.status = StoredStatus::Up;
    c.last_ping = Some(ts(NOW) - jiff::SignedDuration::from_secs(ago));
    c
}

fn fixture() -> Vec<Check> {
    let mut paused = check(4, "zeta", "prod");
    paused.status = StoredStatus::Paused;
    vec![
        pinged(check(1, "Backup", "prod db"), 60),
        pinged(check(2, "alpha", "dev"), 86_400 + 1800), // late
        check(3, "Mail", ""),                            // new
        paused,
        pinged(check(5, "db dump", "prod"), 86_400 + 7200), // down
    ]
}

fn names(view: &View) -> (Vec<String>, Counts) {
    let checks = fixture();
    let refs: Vec<&Check> = checks.iter().collect();
    let (rows, counts) = rows(&refs, ts(NOW), view, false, &|_| None);
    (rows.into_iter().map(|r| r.name).collect(), counts)
}

fn view(tag: &str, text: &str, sort: &str, status: &str) -> View {
    View {
        tag: tag.into(),
        text: text.into(),
        sort: sort.into(),
        status: status.into(),
    }
}

#[test]
fn counts_cover_every_check_whatever_the_filter() {
    let all = Counts {
        up: 1,
        grace: 1,
        down: 1,
        paused: 1,
        new: 1,
    };
    assert_eq!(names(&View::default()).1, all);
    let (shown, counts) = names(&view("prod", "", "", ""));
    assert_eq!(shown, ["Backup", "zeta", "db dump"]);
    assert_eq!(counts, all);
}

#[test]
fn filters_by_tag_exactly_status_and_text_in_name_slug_or_tags() {
    assert_eq!(
        names(&view("db", "", "", "")).0,
        ["Backup"],
        "tag, not substring"
    );
    assert_eq!(names(&view("", "", "", "grace")).0, ["alpha"]);
    assert_eq!(names(&view("", "", "", "down")).0, ["db dump"]);
    assert_eq!(
        names(&view("", "MAIL", "", "")).0,
        ["Mail"],
        "case-insensitive"
    );
    assert_eq!(names(&view("", "db-d", "", "")).0, ["db dump"], "slug");
    assert_eq!(names(&view("", "dev", "", "")).0, ["alpha"], "tags");
    assert_eq!(names(&view("prod", "b", "", "")).0, ["Backup", "db dump"]);
    assert!(names(&view("nope", "", "", "")).0.is_empty());
}

#[test]
fn sorts_by_name_status_or_last_ping() {
    assert_eq!(
        names(&View::default()).0,
        ["Backup", "alpha", "Mail", "zeta", "db dump"],
        "creation order"
    );
    assert_eq!(
        names(&view("", "", "name", "")).0,
        ["alpha", "Backup", "db dump", "Mail", "zeta"]
    );
    assert_eq!(
        names(&view("", "", "status", "")).0,
        ["db dump", "alpha", "Mail", "Backup", "zeta"]
    );
    assert_eq!(
        names(&view("", "", "last_ping", "")).0,
        ["Backup", "alpha", "db dump", "Mail", "zeta"],
        "newest first, never pinged last"
    );
}

#[test]
fn unknown_sorts_and_statuses_are_ignored() {
    let v = View::from_form(&Form::parse(b"sort=evil&status=x&tag=+a+&q=b"));
    assert_eq!(v, view("a", "b", "", ""));
}

#[test]
fn rows_say_when_and_what_next() {
    let mut checks = fixture();
    checks[0].channels = vec![Uuid::from_u128(9), Uuid::from_u128(10)];
    let refs: Vec<&Check> = checks.iter().collect();
    let name = |u: &Uuid| (*u == Uuid::from_u128(9)).then(|| "ops mail".to_string());
    let (rows, _) = rows(&refs, ts(NOW), &View::default(), false, &name);
    let up = &rows[0];
    assert_eq!(up.id, Uuid::from_u128(1).to_string());
    assert_eq!(up.word(), "up");
    assert_eq!(up.schedule, "every 1 day, 1 hour grace");
    let last = up.last_ping_when.as_ref().expect("pinged");
    assert_eq!(last.words, "1 minute ago");
    assert_eq!(last.iso, "2026-03-31T11:59:00Z");
    assert_eq!(up.next_note, "due");
    assert_eq!(up.next.as_ref().expect("due").words, "in 24 hours");
    assert_eq!(up.channels, ["ops mail"], "a channel gone is left out");
    let late = &rows[1];
    assert_eq!(late.word(), "late");
    assert_eq!(late.next_note, "late, down");
    assert_eq!(late.next.as_ref().expect("down at").words, "in 30 minutes");
    assert_eq!(rows[2].next_note, "after the first ping");
    assert!(rows[2].last_ping_when.is_none());
    assert_eq!(rows[4].word(), "down");
    assert!(rows[4].next.is_none());
}

#[test]
fn read_only_rows_name_checks_by_unique_key() {
    let checks = fixture();
    let refs: Vec<&Check> = checks.iter().collect();
    let (rows, _) = rows(&refs, ts(NOW), &View::default(), true, &|_| None);
    assert_eq!(rows[0].id, checks[0].unique_key());
    assert!(rows.iter().all(|r| !r.id.contains('-')));
}

#[test]
fn cron_schedules_in_words() {
    let mut c = check(1, "nightly", "");
    c.kind = Kind::Cron;
    c.schedule = "30 2 * * *".into();
    c.tz = "Europe/Riga".into();
    c.compiled = Some(Arc::new(
        Schedule::parse("30 2 * * *", "Europe/Riga").expect("cron"),
    ));
    assert_eq!(schedule_words(&c), "30 2 * * * Europe/Riga");
    c.kind = Kind::Simple;
    c.timeout = 300;
    c.grace = 90;
    assert_eq!(schedule_words(&c), "every 5 min, 90 sec grace");
}

#[test]
fn durations_and_relative_times_in_words() {
    assert_eq!(duration_words(3600), "1 hour");
    assert_eq!(duration_words(7200), "2 hours");
    assert_eq!(duration_words(5400), "90 min");
    assert_eq!(duration_words(604_800), "1 week");
    assert_eq!(duration_words(172_800), "2 days");
    assert_eq!(duration_words(1), "1 sec");
    let now = ts(NOW);
    let at = |secs: i64| now + jiff::SignedDuration::from_secs(secs);
    assert_eq!(relative(at(-10), now), "just now");
    assert_eq!(relative(at(20), now), "in under a minute");
    assert_eq!(relative(at(-180), now), "3 minutes ago");
    assert_eq!(relative(at(-3600), now), "1 hour ago");
    assert_eq!(relative(at(5 * 3600), now), "in 5 hours");
    assert_eq!(relative(at(-3 * 86_400), now), "3 days ago");
}

#[test]
fn links_keep_the_rest_of_the_view() {
    let v = view("prod", "a b", "name", "");
    assert_eq!(v.with_tag("x&y"), "?tag=x%26y&q=a+b&sort=name");
    assert_eq!(v.without_tag(), "?q=a+b&sort=name");
    assert_eq!(
        v.toggle_status("down"),
        "?tag=prod&status=down&q=a+b&sort=name"
    );
    let down = view("", "", "", "down");
    assert_eq!(
        down.toggle_status("down"),
        "?",
        "the active count clears its filter"
    );
}

#[test]
fn the_form_keeps_what_was_typed() {
    let typed = Form::parse(b"name=x&kind=cron&schedule=bad&tz=Europe/Riga&grace=60");
    let n = NewCheck::from_form(Some(&typed));
    assert!(n.scheduled);
    assert_eq!((n.schedule.as_str(), n.tz.as_str()), ("bad", "Europe/Riga"));
    let fresh = NewCheck::from_form(None);
    assert!(!fresh.scheduled);
    assert_eq!(fresh.timeout, "86400");
    assert_eq!(fresh.tz, "UTC");
}
