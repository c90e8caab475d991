//! The JSON shapes of the Management API: checks (reference §3.1-3.3, key order included),
//! pings (§2.12, durations of §4.8), flips (§2.14) and channels (§2.15). Plain functions of
//! the data and `now`.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};

use crate::model::check::QuietWindow;
use crate::model::limits::DEFAULT_TZ;
use crate::model::time::{iso_micros, iso_seconds};
use crate::model::{ApiVersion, Channel, Check, Flip, Kind, Ping, PingKind, Project, StoredStatus};

/// Where the API is served, for the URLs inside responses.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Urls<'a> {
    /// Base URL without a trailing slash.
    pub site_root: &'a str,
    pub(crate) version: ApiVersion,
}

impl Urls<'_> {
    pub(crate) fn check_url(&self, check: &Check) -> String {
        format!(
            "{}/api/v{}/checks/{}",
            self.site_root,
            self.version.number(),
            check.uuid
        )
    }
}

/// The check representation. `read_only` selects the reduced form with `unique_key`.
pub(crate) fn check_json(check: &Check, now: Timestamp, urls: Urls<'_>, read_only: bool) -> Value {
    let mut m = Map::new();
    let (subject, subject_fail) = if check.filter_subject {
        (check.success_kw.clone(), check.failure_kw.clone())
    } else {
        (String::new(), String::new())
    };
    m.insert("name".into(), json!(check.name));
    m.insert("slug".into(), json!(check.slug));
    m.insert("tags".into(), json!(check.tags));
    m.insert("desc".into(), json!(check.desc));
    m.insert("grace".into(), json!(check.grace));
    m.insert("n_pings".into(), json!(check.n_pings));
    m.insert(
        "status".into(),
        json!(
            check
                .status_at(now, urls.version == ApiVersion::V1)
                .as_str()
        ),
    );
    m.insert("started".into(), json!(check.last_start.is_some()));
    m.insert("last_ping".into(), json!(check.last_ping.map(iso_seconds)));
    m.insert(
        "next_ping".into(),
        json!(check.grace_start().map(iso_seconds)),
    );
    m.insert("manual_resume".into(), json!(check.manual_resume));
    m.insert("methods".into(), json!(check.methods));
    m.insert("subject".into(), json!(subject));
    m.insert("subject_fail".into(), json!(subject_fail));
    m.insert("start_kw".into(), json!(check.start_kw));
    m.insert("success_kw".into(), json!(check.success_kw));
    m.insert("failure_kw".into(), json!(check.failure_kw));
    m.insert("filter_subject".into(), json!(check.filter_subject));
    m.insert("filter_body".into(), json!(check.filter_body));
    m.insert("filter_http_body".into(), json!(check.filter_http_body));
    m.insert(
        "filter_default_fail".into(),
        json!(check.filter_default_fail),
    );
    m.insert(
        "badge_url".into(),
        json!(format!("{}/b/2/{}.svg", urls.site_root, check.badge_key)),
    );
    if let Some(d) = check.last_duration.filter(|d| !d.is_zero()) {
        m.insert("last_duration".into(), json!(d.as_secs()));
    }
    if read_only {
        m.insert("unique_key".into(), json!(check.unique_key()));
    } else {
        let update_url = urls.check_url(check);
        m.insert("uuid".into(), json!(check.uuid.to_string()));
        m.insert(
            "ping_url".into(),
            json!(format!("{}/ping/{}", urls.site_root, check.uuid)),
        );
        m.insert("update_url".into(), json!(update_url));
        m.insert("pause_url".into(), json!(format!("{update_url}/pause")));
        m.insert("resume_url".into(), json!(format!("{update_url}/resume")));
        let channels: Vec<String> = check
            .channels
            .iter()
            .map(std::string::ToString::to_string)
            .collect();
        m.insert("channels".into(), json!(channels.join(",")));
    }
    match check.kind {
        Kind::Simple => {
            m.insert("timeout".into(), json!(check.timeout));
        }
        Kind::Cron | Kind::OnCalendar => {
            m.insert("schedule".into(), json!(check.schedule));
            m.insert("tz".into(), json!(check.tz));
        }
    }
    // Our extensions (docs/api-extensions.md) come last, after every key the reference has.
    m.insert("fail_threshold".into(), json!(check.fail_threshold));
    m.insert("max_duration".into(), json!(check.max_duration));
    m.insert("min_duration".into(), json!(check.min_duration));
    let snoozed = check.snoozed_until.filter(|_| check.is_snoozed(now));
    m.insert("snoozed_until".into(), json!(snoozed.map(iso_seconds)));
    quiet_fields(&mut m, check.quiet.as_deref());
    // Parent UUIDs are shown to read-write keys only, like the check's own UUID.
    if !read_only {
        let parents: Vec<String> = check
            .parents
            .iter()
            .map(std::string::ToString::to_string)
            .collect();
        m.insert("parents".into(), json!(parents.join(",")));
        let events: Map<String, Value> = check
            .channel_events
            .iter()
            .map(|(c, e)| (c.to_string(), json!(e.to_text())))
            .collect();
        m.insert("channel_events".into(), Value::Object(events));
    }
    Value::Object(m)
}

/// A flip as listed: `up` is 1 only for flips to `up`.
pub(crate) fn flip_json(flip: &Flip) -> Value {
    json!({
        "timestamp": iso_seconds(flip.created),
        "up": i32::from(flip.new_status == StoredStatus::Up),
    })
}

/// A channel as listed.
pub(crate) fn channel_json(channel: &Channel) -> Value {
    json!({"id": channel.uuid.to_string(), "name": channel.name, "kind": channel.kind()})
}

/// How far back a completion ping looks for its start (§4.8).
const DURATION_WINDOW: SignedDuration = SignedDuration::from_hours(72);

/// Durations of completion pings (§4.8), for pings listed newest first. `older` continues the
/// list past its end (pings not listed but still stored), so the oldest listed pings find
/// their starts too. Unlike the reference, no page-wide switch turns durations off.
pub(crate) fn durations(pings: &[Ping]) -> Vec<Option<SignedDuration>> {
    pings
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if !matches!(p.kind, PingKind::Success | PingKind::Fail) || p.n == 1 {
                return None;
            }
            for earlier in &pings[i + 1..] {
                if p.created.duration_since(earlier.created) > DURATION_WINDOW {
                    return None;
                }
                if earlier.rid != p.rid || matches!(earlier.kind, PingKind::Log | PingKind::Ignored)
                {
                    continue;
                }
                return match earlier.kind {
                    PingKind::Start => Some(p.created.duration_since(earlier.created)),
                    _ => None,
                };
            }
            None
        })
        .collect()
}

/// A ping as listed; `body_url` names the request's API version.
pub(crate) fn ping_json(ping: &Ping, duration: Option<SignedDuration>, urls: Urls<'_>) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), json!(ping.kind.as_str()));
    m.insert("date".into(), json!(iso_micros(ping.created)));
    m.insert("n".into(), json!(ping.n));
    m.insert("scheme".into(), json!(ping.scheme));
    m.insert("remote_addr".into(), json!(ping.remote_addr));
    m.insert("method".into(), json!(ping.method));
    m.insert("ua".into(), json!(ping.ua));
    m.insert("rid".into(), json!(ping.rid.map(|r| r.to_string())));
    let body_url = (ping.body_len > 0).then(|| {
        format!(
            "{}/api/v{}/checks/{}/pings/{}/body",
            urls.site_root,
            urls.version.number(),
            ping.check,
            ping.n
        )
    });
    m.insert("body_url".into(), json!(body_url));
    if let Some(d) = duration {
        let secs = (d.as_secs_f64() * 100.0).round() / 100.0;
        m.insert("duration".into(), json!(secs));
    }
    Value::Object(m)
}

/// The three fields that show a quiet window (`""`, `UTC`, `0` when there is none), in the
/// check object and in the project's settings alike.
fn quiet_fields(m: &mut Map<String, Value>, quiet: Option<&QuietWindow>) {
    m.insert(
        "quiet_schedule".into(),
        json!(quiet.map_or("", |q| q.schedule.as_str())),
    );
    m.insert(
        "quiet_tz".into(),
        json!(quiet.map_or(DEFAULT_TZ, |q| q.tz.as_str())),
    );
    m.insert(
        "quiet_duration".into(),
        json!(quiet.map_or(0, |q| q.duration)),
    );
}

/// A project's settings as `GET /api/v3/project/` shows them (docs/api-extensions.md).
pub(crate) fn project_json(project: &Project) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(project.name));
    quiet_fields(&mut m, project.quiet.as_deref());
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("ts")
    }

    fn ping(n: u64, kind: PingKind, at: &str, rid: Option<u128>) -> Ping {
        Ping {
            check: Uuid::nil(),
            n,
            created: ts(at),
            kind,
            scheme: "http".into(),
            remote_addr: None,
            method: "GET".into(),
            ua: String::new(),
            rid: rid.map(Uuid::from_u128),
            exit_status: None,
            body_len: 0,
        }
    }

    #[test]
    fn check_json_has_the_reference_keys_in_order() {
        let c = Check::new(
            Uuid::from_u128(1),
            Uuid::nil(),
            1,
            ts("2020-01-01T00:00:00Z"),
            Uuid::from_u128(2),
        );
        let urls = Urls {
            site_root: "http://x",
            version: ApiVersion::V3,
        };
        let v = check_json(&c, ts("2020-01-01T00:00:00Z"), urls, false);
        let keys: Vec<&str> = v
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys.len(), 38);
        assert_eq!(&keys[..3], ["name", "slug", "tags"]);
        assert_eq!(keys[21], "badge_url");
        assert_eq!(
            &keys[22..28],
            [
                "uuid",
                "ping_url",
                "update_url",
                "pause_url",
                "resume_url",
                "channels"
            ]
        );
        assert_eq!(keys[28], "timeout");
        assert_eq!(
            &keys[29..],
            [
                "fail_threshold",
                "max_duration",
                "min_duration",
                "snoozed_until",
                "quiet_schedule",
                "quiet_tz",
                "quiet_duration",
                "parents",
                "channel_events"
            ]
        );
        let ro = check_json(&c, ts("2020-01-01T00:00:00Z"), urls, true);
        let text = ro.to_string();
        assert!(!text.contains(&c.uuid.to_string()));
        assert!(ro.get("unique_key").is_some());
    }

    #[test]
    fn overlapping_runs_get_their_own_durations() {
        // start(a)@0, start(b)@1m, success(a)@2m, success(b)@6m, listed newest first.
        let pings = vec![
            ping(4, PingKind::Success, "2020-01-01T00:06:00Z", Some(2)),
            ping(3, PingKind::Success, "2020-01-01T00:02:00Z", Some(1)),
            ping(2, PingKind::Start, "2020-01-01T00:01:00Z", Some(2)),
            ping(1, PingKind::Start, "2020-01-01T00:00:00Z", Some(1)),
        ];
        let d = durations(&pings);
        assert_eq!(d[0], Some(SignedDuration::from_secs(300)));
        assert_eq!(d[1], Some(SignedDuration::from_secs(120)));
        assert_eq!(d[2], None);
    }

    #[test]
    fn completion_after_completion_has_no_duration() {
        let pings = vec![
            ping(3, PingKind::Success, "2020-01-01T00:02:00Z", None),
            ping(2, PingKind::Log, "2020-01-01T00:01:30Z", None),
            ping(1, PingKind::Success, "2020-01-01T00:01:00Z", None),
        ];
        assert_eq!(durations(&pings), vec![None, None, None]);
    }
}
