//! The ping URLs of a check and the ready-to-paste snippets that call them: a crontab line,
//! the exit-status form and a start/success pair tied by a run id. Plain functions of the
//! check and the site root; only read-write sessions ever get them (they carry the UUID).

use crate::model::{Check, Kind};

/// The curl options of every snippet: fail on HTTP errors, quiet, a 10 s limit, retries.
const CURL: &str = "curl -fsS -m 10 --retry 5 -o /dev/null";

/// One snippet: its element id (for the copy button), its title and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snippet {
    pub id: &'static str,
    pub title: &'static str,
    pub text: String,
}

/// A check's ping URLs and snippets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PingUrls {
    /// `<site_root>/ping/<uuid>`.
    pub uuid_url: String,
    /// `<site_root>/ping/<ping_key>/<slug>` when the check has a slug.
    pub slug_url: Option<String>,
    pub snippets: Vec<Snippet>,
}

/// The URLs and snippets of `check` under `site_root` (no trailing slash), with the project's
/// `ping_key`.
pub(crate) fn ping_urls(check: &Check, site_root: &str, ping_key: &str) -> PingUrls {
    let uuid_url = format!("{site_root}/ping/{}", check.uuid);
    let slug_url = (!check.slug.is_empty() && !ping_key.is_empty())
        .then(|| format!("{site_root}/ping/{ping_key}/{}", check.slug));
    let url = &uuid_url;
    let when = crontab_fields(check);
    let snippets = vec![
        Snippet {
            id: "snippet-cron",
            title: "Crontab line",
            text: format!("{when} /path/to/job && {CURL} {url}"),
        },
        Snippet {
            id: "snippet-exit",
            title: "Report the exit status (0 = success, anything else = failure)",
            text: format!("{when} /path/to/job; {CURL} {url}/$?"),
        },
        Snippet {
            id: "snippet-rid",
            title: "Start and finish of a run (measures its duration)",
            text: format!(
                "RID=$(uuidgen)\n{CURL} \"{url}/start?rid=$RID\"\n/path/to/job\n\
                 {CURL} \"{url}/$??rid=$RID\""
            ),
        },
    ];
    PingUrls {
        uuid_url,
        slug_url,
        snippets,
    }
}

/// The five time fields of a crontab line for the check: its own expression for a cron check,
/// the nearest crontab period for a simple check, and the `m h * * *` placeholder when none
/// fits (OnCalendar, or a period crontab cannot say).
pub(crate) fn crontab_fields(check: &Check) -> String {
    match check.kind {
        Kind::Cron => check.schedule.trim().to_string(),
        Kind::OnCalendar => "m h * * *".into(),
        Kind::Simple => period_fields(check.timeout).unwrap_or_else(|| "m h * * *".into()),
    }
}

/// Crontab fields that fire every `secs` seconds, when crontab can say it exactly.
fn period_fields(secs: i64) -> Option<String> {
    let minutes = secs / 60;
    if secs % 60 != 0 || minutes < 1 {
        return None;
    }
    Some(match minutes {
        1 => "* * * * *".into(),
        m if m < 60 && 60 % m == 0 => format!("*/{m} * * * *"),
        60 => "0 * * * *".into(),
        m if m % 60 == 0 && m < 1440 && 24 % (m / 60) == 0 => format!("0 */{} * * *", m / 60),
        1440 => "0 0 * * *".into(),
        10080 => "0 0 * * 1".into(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn check(kind: Kind, timeout: i64, schedule: &'static str, slug: &str) -> Check {
        let mut c = Check::new(
            Uuid::from_u128(7),
            Uuid::nil(),
            1,
            jiff::Timestamp::UNIX_EPOCH,
            Uuid::nil(),
        );
        c.kind = kind;
        c.timeout = timeout;
        c.schedule = schedule.into();
        c.slug = slug.into();
        c
    }

    #[test]
    fn urls_by_uuid_and_by_slug() {
        let c = check(Kind::Simple, 3600, "* * * * *", "db-backup");
        let u = ping_urls(&c, "https://x.example/o", "KEY");
        assert_eq!(
            u.uuid_url,
            "https://x.example/o/ping/00000000-0000-0000-0000-000000000007"
        );
        assert_eq!(
            u.slug_url.as_deref(),
            Some("https://x.example/o/ping/KEY/db-backup")
        );
        let no_slug = check(Kind::Simple, 3600, "* * * * *", "");
        assert_eq!(ping_urls(&no_slug, "http://h", "KEY").slug_url, None);
    }

    #[test]
    fn snippets_are_ready_to_paste() {
        let c = check(Kind::Cron, 0, "30 2 * * *", "");
        let u = ping_urls(&c, "http://h", "k");
        let url = &u.uuid_url;
        assert_eq!(
            u.snippets[0].text,
            format!("30 2 * * * /path/to/job && curl -fsS -m 10 --retry 5 -o /dev/null {url}")
        );
        assert!(u.snippets[1].text.ends_with(&format!("{url}/$?")));
        assert!(u.snippets[1].text.contains("/path/to/job; curl"));
        let rid = &u.snippets[2].text;
        assert!(rid.starts_with("RID=$(uuidgen)\n"));
        assert!(rid.contains(&format!("\"{url}/start?rid=$RID\"")));
        assert!(rid.ends_with(&format!("\"{url}/$??rid=$RID\"")));
        let ids: Vec<_> = u.snippets.iter().map(|s| s.id).collect();
        assert_eq!(ids, ["snippet-cron", "snippet-exit", "snippet-rid"]);
    }

    #[test]
    fn crontab_fields_from_the_period() {
        let f = |t| crontab_fields(&check(Kind::Simple, t, "", ""));
        assert_eq!(f(60), "* * * * *");
        assert_eq!(f(300), "*/5 * * * *");
        assert_eq!(f(3600), "0 * * * *");
        assert_eq!(f(6 * 3600), "0 */6 * * *");
        assert_eq!(f(86_400), "0 0 * * *");
        assert_eq!(f(7 * 86_400), "0 0 * * 1");
        assert_eq!(f(7 * 60), "m h * * *");
        assert_eq!(f(90), "m h * * *");
        assert_eq!(f(5 * 3600), "m h * * *");
        let oc = check(Kind::OnCalendar, 0, "daily", "");
        assert_eq!(crontab_fields(&oc), "m h * * *");
    }
}
