//! The content of a notification (reference-behavior §8.3), as plain data and pure functions:
//! the subject `DOWN | <name>`, the reason, the last ping and a link to the check. Every kind
//! builds its request from these, so all channels say the same thing.

use std::fmt::Write as _;

use jiff::{SignedDuration, Timestamp};
use uuid::Uuid;

use crate::model::PingKind;
pub(crate) use crate::model::events::Event;
use crate::model::time::iso_seconds;

/// What a message tells: an alert of one of the events a channel can be sent (down, up,
/// late: the check entered its grace time, failure: one its `fail_threshold` swallowed), or
/// the test of `overdue channel test`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Notice {
    Alert(Event),
    Test,
}

impl From<Event> for Notice {
    fn from(event: Event) -> Notice {
        Notice::Alert(event)
    }
}

/// The last ping at or before the flip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LastPing {
    pub(crate) at: Timestamp,
    pub kind: PingKind,
    pub(crate) exit_status: Option<u8>,
    pub remote_addr: Option<String>,
    /// Lossy UTF-8 of the stored body.
    pub body: String,
}

/// One notification, everything a kind may show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Stable per alert (retries reuse it), so receivers that deduplicate can.
    pub id: String,
    pub(crate) notice: Notice,
    /// Queued by the channel's repeat interval while the check stays down.
    pub repeat: bool,
    /// The flip's reason: `fail`, `timeout` or "".
    pub reason: String,
    /// When the status changed.
    pub(crate) at: Timestamp,
    /// When the message is rendered (for "3 minutes ago").
    pub now: Timestamp,
    pub(crate) site_name: String,
    /// Where the check can be seen.
    pub(crate) link: String,
    pub project: String,
    pub check: Uuid,
    pub name: String,
    pub slug: String,
    pub tags: String,
    pub desc: String,
    /// `Period: 1 day` or `Schedule: ... / Time zone: ...` lines.
    pub schedule: Vec<String>,
    pub n_pings: u64,
    pub(crate) check_created: Timestamp,
    pub(crate) last_ping: Option<LastPing>,
    /// The check's v3 JSON (webhook `$JSON`).
    pub(crate) check_json: String,
}

impl Message {
    /// `down`, `up`, `late`, `failure` or `test`.
    pub(crate) fn status(&self) -> &'static str {
        match self.notice {
            Notice::Alert(event) => event.as_str(),
            Notice::Test => "test",
        }
    }

    /// The check's name, or its UUID when it has none.
    pub(crate) fn display_name(&self) -> String {
        if self.name.is_empty() {
            self.check.to_string()
        } else {
            self.name.clone()
        }
    }

    /// `DOWN | Backups` (§8.3).
    pub(crate) fn subject(&self) -> String {
        match self.notice {
            Notice::Test => format!("TEST | {}", self.site_name),
            Notice::Alert(_) => {
                format!("{} | {}", self.status().to_uppercase(), self.display_name())
            }
        }
    }

    /// `received a failure signal` etc., without the final period; None for recoveries.
    pub(crate) fn reason_text(&self) -> Option<&'static str> {
        match self.notice {
            Notice::Alert(Event::Late) => {
                return Some("success signal did not arrive on time, grace time began");
            }
            Notice::Alert(Event::Failure) => {
                return Some("received a failure signal, fewer in a row than its threshold");
            }
            Notice::Alert(Event::Up) | Notice::Test => return None,
            Notice::Alert(Event::Down) => {}
        }
        Some(match self.reason.as_str() {
            "timeout" => "success signal did not arrive on time, grace time passed",
            "fail" => "received a failure signal",
            _ => "the check went down",
        })
    }

    /// The first line: `The check "Backups" has gone down.`
    pub(crate) fn headline(&self) -> String {
        match self.notice {
            Notice::Test => format!(
                "This is a test notification from {}. If you can read it, alerts reach you here.",
                self.site_name
            ),
            _ if self.repeat => format!(
                "Reminder: the check \"{}\" is still down.",
                self.display_name()
            ),
            Notice::Alert(Event::Late) => format!(
                "The check \"{}\" is late: its grace time has begun.",
                self.display_name()
            ),
            Notice::Alert(Event::Failure) => format!(
                "The check \"{}\" reported a failure; it stays up until its threshold is reached.",
                self.display_name()
            ),
            Notice::Alert(_) => format!(
                "The check \"{}\" has gone {}.",
                self.display_name(),
                self.status()
            ),
        }
    }

    /// `2 minutes ago, from 10.0.0.1 (Failure)`-style summary of the last ping.
    pub(crate) fn last_ping_line(&self) -> String {
        match &self.last_ping {
            None => "never".to_string(),
            Some(p) => {
                let mut s = format!(
                    "{} ({})",
                    iso_seconds(p.at),
                    ago(self.now.duration_since(p.at))
                );
                if let Some(addr) = &p.remote_addr {
                    let _ = write!(s, ", from {addr}");
                }
                s
            }
        }
    }

    /// A few lines for chat services: headline, reason, last ping, link.
    pub(crate) fn short_text(&self) -> String {
        let mut out = self.headline();
        if self.notice == Notice::Test {
            return out;
        }
        if let Some(reason) = self.reason_text() {
            let _ = write!(out, "\nReason: {reason}.");
        }
        let _ = write!(out, "\nLast ping: {}", self.last_ping_line());
        let _ = write!(out, "\n{}", self.link);
        out
    }

    /// The plain-text email body of §8.3.
    pub(crate) fn long_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.headline());
        if self.notice == Notice::Test {
            let _ = writeln!(out, "\nRegards,\n{}", self.site_name);
            return out;
        }
        if let Some(reason) = self.reason_text() {
            let _ = writeln!(out, "Reason: {reason}.");
        }
        let _ = writeln!(out, "\nView on {}:\n{}", self.site_name, self.link);
        if !self.desc.is_empty() {
            let _ = writeln!(out, "\n{}", self.desc);
        }
        let _ = writeln!(out, "\nDetails:");
        let _ = writeln!(out, "Project: {}", self.project);
        if !self.tags.is_empty() {
            let _ = writeln!(out, "Tags: {}", self.tags);
        }
        for line in &self.schedule {
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(
            out,
            "Total pings: {} (since {})",
            self.n_pings,
            self.check_created.strftime("%Y-%m-%d")
        );
        let _ = writeln!(out, "Last ping: {}", self.last_ping_line());
        if let Some(p) = &self.last_ping {
            let _ = writeln!(out, "Last ping type: {}", ping_type(p));
        }
        let _ = writeln!(
            out,
            "Status changed to {} at: {}",
            self.status(),
            self.at.strftime("%a, %d %b %Y %H:%M:%S +0000")
        );
        if let Some(p) = self.last_ping.as_ref().filter(|p| !p.body.is_empty()) {
            let _ = writeln!(out, "\nLast ping body:\n{}", tail_chars(&p.body, 10_000));
        }
        let _ = writeln!(out, "\nRegards,\n{}", self.site_name);
        out
    }
}

/// `Success`, `Failure`, `Exit status 3`, ... (§8.3 `Last ping type`).
pub(crate) fn ping_type(p: &LastPing) -> String {
    match (p.kind, p.exit_status) {
        (PingKind::Success | PingKind::Fail, Some(code)) => format!("Exit status {code}"),
        (PingKind::Success, None) => "Success".into(),
        (PingKind::Fail, None) => "Failure".into(),
        (PingKind::Start, _) => "Start".into(),
        (PingKind::Log, _) => "Log".into(),
        (PingKind::Ignored, _) => "Ignored".into(),
    }
}

/// `just now`, `5 minutes ago`, `3 hours ago`, `2 days ago`.
pub(crate) fn ago(d: SignedDuration) -> String {
    let secs = d.as_secs().max(0);
    let (n, unit) = match secs {
        0..60 => return "just now".into(),
        60..3600 => (secs / 60, "minute"),
        3600..86_400 => (secs / 3600, "hour"),
        _ => (secs / 86_400, "day"),
    };
    format!("{n} {unit}{} ago", if n == 1 { "" } else { "s" })
}

/// The last `n` characters of `s`.
fn tail_chars(s: &str, n: usize) -> &str {
    let count = s.chars().count();
    if count <= n {
        return s;
    }
    let skip = s.char_indices().nth(count - n).map_or(0, |(i, _)| i);
    &s[skip..]
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A message of `notice` (an alert of a failure when down) for a check named "Backups",
    /// for the kinds' tests.
    pub(crate) fn sample(notice: impl Into<Notice>) -> Message {
        let notice = notice.into();
        let at: Timestamp = "2026-03-31T00:32:00Z".parse().expect("ts");
        Message {
            id: "42".into(),
            notice,
            repeat: false,
            reason: if notice == Notice::Alert(Event::Down) {
                "fail"
            } else {
                ""
            }
            .into(),
            at,
            now: at + SignedDuration::from_mins(5),
            site_name: "overdue".into(),
            link: "https://mon.example/api/v3/checks/0193a3b4-0000-4000-8000-000000000001".into(),
            project: "default".into(),
            check: "0193a3b4-0000-4000-8000-000000000001"
                .parse()
                .expect("uuid"),
            name: "Backups".into(),
            slug: "backups".into(),
            tags: "prod db".into(),
            desc: "Nightly dump".into(),
            schedule: vec!["Period: 1 day".into()],
            n_pings: 12,
            check_created: "2026-01-02T03:04:05Z".parse().expect("ts"),
            last_ping: Some(LastPing {
                at: at - SignedDuration::from_mins(2),
                kind: PingKind::Fail,
                exit_status: Some(3),
                remote_addr: Some("10.0.0.7".into()),
                body: "disk full".into(),
            }),
            check_json: r#"{"name":"Backups"}"#.into(),
        }
    }

    #[test]
    fn late_and_failure_notices_say_what_happened_and_that_the_check_is_not_down() {
        let late = sample(Event::Late);
        assert_eq!(late.subject(), "LATE | Backups");
        assert_eq!(
            late.headline(),
            "The check \"Backups\" is late: its grace time has begun."
        );
        assert!(
            late.reason_text()
                .is_some_and(|r| r.contains("grace time began"))
        );
        let failure = sample(Event::Failure);
        assert_eq!(failure.subject(), "FAILURE | Backups");
        assert!(failure.headline().contains("stays up until its threshold"));
    }

    #[test]
    fn subject_and_reason_follow_the_reference() {
        let down = sample(Event::Down);
        assert_eq!(down.subject(), "DOWN | Backups");
        assert_eq!(sample(Event::Up).subject(), "UP | Backups");
        assert_eq!(down.reason_text(), Some("received a failure signal"));
        let mut timeout = sample(Event::Down);
        timeout.reason = "timeout".into();
        assert_eq!(
            timeout.reason_text(),
            Some("success signal did not arrive on time, grace time passed")
        );
        assert_eq!(sample(Event::Up).reason_text(), None);
        let mut unnamed = sample(Event::Down);
        unnamed.name.clear();
        assert_eq!(
            unnamed.subject(),
            "DOWN | 0193a3b4-0000-4000-8000-000000000001"
        );
    }

    #[test]
    fn email_body_has_the_reference_lines_in_order() {
        let text = sample(Event::Down).long_text();
        let order = [
            "The check \"Backups\" has gone down.",
            "Reason: received a failure signal.",
            "View on overdue:",
            "https://mon.example/api/v3/checks/",
            "Nightly dump",
            "Project: default",
            "Tags: prod db",
            "Period: 1 day",
            "Total pings: 12 (since 2026-01-02)",
            "Last ping: 2026-03-31T00:30:00+00:00 (7 minutes ago), from 10.0.0.7",
            "Last ping type: Exit status 3",
            "Status changed to down at: Tue, 31 Mar 2026 00:32:00 +0000",
            "Last ping body:\ndisk full",
            "Regards,\noverdue",
        ];
        let mut from = 0;
        for line in order {
            let at = text[from..]
                .find(line)
                .unwrap_or_else(|| panic!("{line:?} missing or out of order in\n{text}"));
            from += at + line.len();
        }
    }

    #[test]
    fn relative_times() {
        assert_eq!(ago(SignedDuration::from_secs(5)), "just now");
        assert_eq!(ago(SignedDuration::from_secs(60)), "1 minute ago");
        assert_eq!(ago(SignedDuration::from_hours(5)), "5 hours ago");
        assert_eq!(ago(SignedDuration::from_hours(49)), "2 days ago");
        assert_eq!(tail_chars("héllo", 3), "llo");
    }

    #[test]
    fn repeats_and_tests_say_so() {
        let mut m = sample(Event::Down);
        m.repeat = true;
        assert!(
            m.headline()
                .starts_with("Reminder: the check \"Backups\" is still down")
        );
        let t = sample(Notice::Test);
        assert_eq!(t.subject(), "TEST | overdue");
        assert!(t.short_text().contains("test notification"));
    }
}
