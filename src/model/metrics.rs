//! A project's checks in the Prometheus text format that Healthchecks' users already scrape
//! (`/projects/<uuid>/metrics/<key>`): the same metric names, HELP texts, label names and
//! order as Healthchecks' own endpoint. The status of each check is `Check::status_at`.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use jiff::Timestamp;

use crate::model::{Check, Status};

/// A label value with `\`, `"` and newlines escaped (exposition format rules).
fn esc(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A per-check gauge's value from the check's status (and the check itself).
type Gauge = fn(Status, &Check) -> bool;

fn flag(b: bool) -> u8 {
    u8::from(b)
}

/// The exposition for `checks` (in creation order) at `now`.
pub(crate) fn project_exposition(checks: &[&Check], now: Timestamp) -> String {
    let rows: Vec<(String, Status, &Check)> = checks
        .iter()
        .map(|c| {
            let labels = format!(
                "{{name=\"{}\", tags=\"{}\", unique_key=\"{}\"}}",
                esc(&c.name),
                esc(&c.tags),
                c.unique_key()
            );
            (labels, c.status_at(now, false), *c)
        })
        .collect();
    let mut out = String::new();
    let per_check: [(&str, &str, Gauge); 4] = [
        ("up", "Whether the check is currently up", |s, _| {
            s != Status::Down
        }),
        (
            "started",
            "Whether the check is currently started",
            |_, c| c.last_start.is_some(),
        ),
        (
            "grace",
            "Whether the check is currently in the grace period",
            |s, _| s == Status::Grace,
        ),
        ("paused", "Whether the check is currently paused", |s, _| {
            s == Status::Paused
        }),
    ];
    for (metric, help, value) in per_check {
        let _ = writeln!(
            out,
            "# HELP hc_check_{metric} {help} (1 for yes, 0 for no)."
        );
        let _ = writeln!(out, "# TYPE hc_check_{metric} gauge");
        for (labels, status, check) in &rows {
            let _ = writeln!(
                out,
                "hc_check_{metric}{labels} {}",
                flag(value(*status, check))
            );
        }
        out.push('\n');
    }
    let mut all_tags = BTreeSet::new();
    let mut down_tags = BTreeSet::new();
    let mut down = 0;
    for (_, status, check) in &rows {
        all_tags.extend(check.tag_list());
        if *status == Status::Down {
            down += 1;
            down_tags.extend(check.tag_list());
        }
    }
    out.push_str(
        "# HELP hc_tag_up Whether all checks with this tag are up (1 for yes, 0 for no).\n",
    );
    out.push_str("# TYPE hc_tag_up gauge\n");
    for tag in &all_tags {
        let _ = writeln!(
            out,
            "hc_tag_up{{tag=\"{}\"}} {}",
            esc(tag),
            flag(!down_tags.contains(tag))
        );
    }
    out.push('\n');
    out.push_str("# HELP hc_checks_total The total number of checks.\n");
    out.push_str("# TYPE hc_checks_total gauge\n");
    let _ = writeln!(out, "hc_checks_total {}\n", rows.len());
    out.push_str("# HELP hc_checks_down_total The number of checks currently down.\n");
    out.push_str("# TYPE hc_checks_down_total gauge\n");
    let _ = writeln!(out, "hc_checks_down_total {down}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StoredStatus;
    use jiff::SignedDuration;
    use uuid::Uuid;

    fn check(n: u128, name: &str, tags: &str) -> Check {
        let mut c = Check::new(
            Uuid::from_u128(n),
            Uuid::nil(),
            n as u64,
            Timestamp::UNIX_EPOCH,
            Uuid::nil(),
        );
        c.name = name.into();
        c.tags = tags.into();
        c
    }

    #[test]
    fn statuses_become_gauges() {
        let now = Timestamp::from_second(1_000_000).unwrap();
        let new = check(1, "Alice Was Here", "foo");
        let mut grace = check(2, "in grace", "foo bar");
        grace.status = StoredStatus::Up;
        grace.timeout = 60;
        grace.grace = 600;
        grace.last_ping = Some(now - SignedDuration::from_secs(120));
        let mut down = check(3, "down", "bar");
        down.status = StoredStatus::Down;
        let mut paused = check(4, "paused", "");
        paused.status = StoredStatus::Paused;
        paused.last_start = Some(now);
        let text = project_exposition(&[&new, &grace, &down, &paused], now);
        let key = |c: &Check| c.unique_key();
        for line in [
            format!(
                "hc_check_up{{name=\"Alice Was Here\", tags=\"foo\", unique_key=\"{}\"}} 1",
                key(&new)
            ),
            format!(
                "hc_check_started{{name=\"Alice Was Here\", tags=\"foo\", unique_key=\"{}\"}} 0",
                key(&new)
            ),
            format!(
                "hc_check_grace{{name=\"in grace\", tags=\"foo bar\", unique_key=\"{}\"}} 1",
                key(&grace)
            ),
            format!(
                "hc_check_up{{name=\"in grace\", tags=\"foo bar\", unique_key=\"{}\"}} 1",
                key(&grace)
            ),
            format!(
                "hc_check_up{{name=\"down\", tags=\"bar\", unique_key=\"{}\"}} 0",
                key(&down)
            ),
            format!(
                "hc_check_paused{{name=\"paused\", tags=\"\", unique_key=\"{}\"}} 1",
                key(&paused)
            ),
            format!(
                "hc_check_started{{name=\"paused\", tags=\"\", unique_key=\"{}\"}} 1",
                key(&paused)
            ),
            "hc_tag_up{tag=\"bar\"} 0".into(),
            "hc_tag_up{tag=\"foo\"} 1".into(),
            "hc_checks_total 4".into(),
            "hc_checks_down_total 1".into(),
            "# HELP hc_check_grace Whether the check is currently in the grace period (1 for yes, 0 for no).".into(),
            "# TYPE hc_checks_down_total gauge".into(),
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
        // Tags in sorted order, after the per-check metrics.
        let bar = text.find("hc_tag_up{tag=\"bar\"}").unwrap();
        let foo = text.find("hc_tag_up{tag=\"foo\"}").unwrap();
        assert!(text.find("hc_check_paused{").unwrap() < bar && bar < foo);
    }

    #[test]
    fn label_values_are_escaped() {
        let c = check(1, "Line 1\nLine \"2\"", "A\\C");
        let text = project_exposition(&[&c], Timestamp::UNIX_EPOCH);
        assert!(text.contains("name=\"Line 1\\nLine \\\"2\\\"\""), "{text}");
        assert!(text.contains("tags=\"A\\\\C\""), "{text}");
        assert!(text.contains("hc_tag_up{tag=\"A\\\\C\"} 1"), "{text}");
    }

    #[test]
    fn an_empty_project() {
        let text = project_exposition(&[], Timestamp::UNIX_EPOCH);
        assert!(text.contains("hc_checks_total 0\n"));
        assert!(text.ends_with("hc_checks_down_total 0\n"));
    }
}
