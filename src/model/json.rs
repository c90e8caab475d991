//! The JSON shapes of the Management API: checks (reference §3.1-3.3, key order included),
//! pings (§2.12, durations of §4.8), flips (§2.14) and channels (§2.15). Plain functions and
//! `Serialize` views of the data and `now`; checks are serialized straight into the body
//! (`CheckObject`, `CheckList`), the smaller shapes are built as `serde_json::Value`s.

use std::fmt;

use jiff::{SignedDuration, Timestamp};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::model::check::QuietWindow;
use crate::model::events::Events;
use crate::model::limits::DEFAULT_TZ;
use crate::model::time::{iso_micros, iso_seconds, iso_seconds_display};
use crate::model::{ApiVersion, Channel, Check, Flip, Kind, Ping, PingKind, Project, StoredStatus};

/// Where the API is served, for the URLs inside responses.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Urls<'a> {
    /// Base URL without a trailing slash.
    pub site_root: &'a str,
    pub(crate) version: ApiVersion,
}

/// The check representation (reference §3.1-3.3, our extensions after them): what
/// `GET checks/`, `GET checks/<uuid>`, the write endpoints and webhooks' `$JSON` show.
/// `read_only` selects the reduced form with `unique_key`. It serializes straight from the
/// check, so that a list of a thousand checks is written into its body without a
/// `serde_json::Value` per field ([`check_json`] is the `Value` form of the same object).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CheckObject<'a> {
    pub(crate) check: &'a Check,
    pub(crate) now: Timestamp,
    pub(crate) urls: Urls<'a>,
    pub(crate) read_only: bool,
}

impl Serialize for CheckObject<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let CheckObject {
            check,
            now,
            urls,
            read_only,
        } = *self;
        let root = urls.site_root;
        let (subject, subject_fail) = if check.filter_subject {
            (&*check.success_kw, &*check.failure_kw)
        } else {
            ("", "")
        };
        let mut m = serializer.serialize_map(None)?;
        m.serialize_entry("name", &check.name)?;
        m.serialize_entry("slug", &check.slug)?;
        m.serialize_entry("tags", &check.tags)?;
        m.serialize_entry("desc", &check.desc)?;
        m.serialize_entry("grace", &check.grace)?;
        m.serialize_entry("n_pings", &check.n_pings)?;
        let status = check.status_at(now, urls.version == ApiVersion::V1);
        m.serialize_entry("status", status.as_str())?;
        m.serialize_entry("started", &check.last_start.is_some())?;
        m.serialize_entry("last_ping", &check.last_ping.map(seconds))?;
        m.serialize_entry("next_ping", &check.grace_start().map(seconds))?;
        m.serialize_entry("manual_resume", &check.manual_resume)?;
        m.serialize_entry("methods", &check.methods)?;
        m.serialize_entry("subject", subject)?;
        m.serialize_entry("subject_fail", subject_fail)?;
        m.serialize_entry("start_kw", &check.start_kw)?;
        m.serialize_entry("success_kw", &check.success_kw)?;
        m.serialize_entry("failure_kw", &check.failure_kw)?;
        m.serialize_entry("filter_subject", &check.filter_subject)?;
        m.serialize_entry("filter_body", &check.filter_body)?;
        m.serialize_entry("filter_http_body", &check.filter_http_body)?;
        m.serialize_entry("filter_default_fail", &check.filter_default_fail)?;
        m.serialize_entry(
            "badge_url",
            &Text(format_args!("{root}/b/2/{}.svg", check.badge_key)),
        )?;
        if let Some(d) = check.last_duration.filter(|d| !d.is_zero()) {
            m.serialize_entry("last_duration", &d.as_secs())?;
        }
        if read_only {
            m.serialize_entry("unique_key", &check.unique_key())?;
        } else {
            let (uuid, version) = (check.uuid, urls.version.number());
            m.serialize_entry("uuid", &Text(uuid))?;
            m.serialize_entry("ping_url", &Text(format_args!("{root}/ping/{uuid}")))?;
            let update_url = format_args!("{root}/api/v{version}/checks/{uuid}");
            m.serialize_entry("update_url", &Text(update_url))?;
            m.serialize_entry("pause_url", &Text(format_args!("{update_url}/pause")))?;
            m.serialize_entry("resume_url", &Text(format_args!("{update_url}/resume")))?;
            m.serialize_entry("channels", &Text(Joined(&check.channels)))?;
        }
        match check.kind {
            Kind::Simple => m.serialize_entry("timeout", &check.timeout)?,
            Kind::Cron | Kind::OnCalendar => {
                m.serialize_entry("schedule", &check.schedule)?;
                m.serialize_entry("tz", &check.tz)?;
            }
        }
        // Our extensions (docs/api-extensions.md) come last, after every key the reference has.
        m.serialize_entry("fail_threshold", &check.fail_threshold)?;
        m.serialize_entry("max_duration", &check.max_duration)?;
        m.serialize_entry("min_duration", &check.min_duration)?;
        let snoozed = check.snoozed_until.filter(|_| check.is_snoozed(now));
        m.serialize_entry("snoozed_until", &snoozed.map(seconds))?;
        quiet_entries(&mut m, check.quiet.as_deref())?;
        // Parent UUIDs are shown to read-write keys only, like the check's own UUID.
        if !read_only {
            m.serialize_entry("parents", &Text(Joined(&check.parents)))?;
            m.serialize_entry("channel_events", &ChannelEvents(&check.channel_events))?;
        }
        m.end()
    }
}

/// [`CheckObject`] as a `serde_json::Value`, for callers that add to it or print it pretty.
pub(crate) fn check_json(check: &Check, now: Timestamp, urls: Urls<'_>, read_only: bool) -> Value {
    to_value(CheckObject {
        check,
        now,
        urls,
        read_only,
    })
}

/// `{"checks": [...]}`: the answer of `GET checks/` and of the snooze of many checks.
pub(crate) struct CheckList<'a> {
    pub(crate) checks: Vec<&'a Check>,
    pub(crate) now: Timestamp,
    pub(crate) urls: Urls<'a>,
    pub(crate) read_only: bool,
}

impl Serialize for CheckList<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Checks<'b>(&'b CheckList<'b>);
        impl Serialize for Checks<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let list = self.0;
                serializer.collect_seq(list.checks.iter().map(|&check| CheckObject {
                    check,
                    now: list.now,
                    urls: list.urls,
                    read_only: list.read_only,
                }))
            }
        }
        let mut m = serializer.serialize_map(Some(1))?;
        m.serialize_entry("checks", &Checks(self))?;
        m.end()
    }
}

/// A value written as a JSON string from its `Display` form: into a body without a `String`
/// of its own (`Serializer::collect_str`).
struct Text<T>(T);

impl<T: fmt::Display> Serialize for Text<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

/// UUIDs joined by commas, as `channels` and `parents` show them.
struct Joined<'a>(&'a [Uuid]);

impl fmt::Display for Joined<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, uuid) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            fmt::Display::fmt(uuid, f)?;
        }
        Ok(())
    }
}

/// `channel_events`: the check's own event choices by channel UUID.
struct ChannelEvents<'a>(&'a [(Uuid, Events)]);

impl Serialize for ChannelEvents<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(c, e)| (Text(c), e.to_text())))
    }
}

/// A timestamp field as [`iso_seconds`] writes it.
fn seconds(t: Timestamp) -> Text<impl fmt::Display> {
    Text(iso_seconds_display(t))
}

/// The `Value` of an object built here. Serializing these into a `Value` cannot fail: every
/// map key is a string and no field refuses its value.
fn to_value(object: impl Serialize) -> Value {
    serde_json::to_value(object).unwrap_or(Value::Null)
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
fn quiet_entries<M: SerializeMap>(m: &mut M, quiet: Option<&QuietWindow>) -> Result<(), M::Error> {
    m.serialize_entry("quiet_schedule", quiet.map_or("", |q| q.schedule.as_str()))?;
    m.serialize_entry("quiet_tz", quiet.map_or(DEFAULT_TZ, |q| q.tz.as_str()))?;
    m.serialize_entry("quiet_duration", &quiet.map_or(0, |q| q.duration))
}

/// A project's settings as `GET /api/v3/project/` shows them (docs/api-extensions.md).
pub(crate) fn project_json(project: &Project) -> Value {
    struct ProjectObject<'a>(&'a Project);
    impl Serialize for ProjectObject<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut m = serializer.serialize_map(None)?;
            m.serialize_entry("name", &self.0.name)?;
            quiet_entries(&mut m, self.0.quiet.as_deref())?;
            m.end()
        }
    }
    to_value(ProjectObject(project))
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

    /// A check that shows every field: text that needs escaping, a cron schedule, a running
    /// start, a duration, channels with their own events, parents, a snooze, a quiet window.
    fn full_check() -> Check {
        use crate::model::events::Events;
        use crate::schedule::Schedule;
        use std::sync::Arc;
        let mut c = Check::new(
            Uuid::from_u128(0x1234),
            Uuid::nil(),
            7,
            ts("2020-01-01T00:00:00Z"),
            Uuid::from_u128(0xbad9e),
        );
        c.name = "nightly \"db\" <b>&\n\t\u{1} \\ / ünï".into();
        c.slug = "nightly-db".into();
        c.tags = "prod db".into();
        c.desc = "line 1\nline 2".into();
        c.kind = Kind::Cron;
        c.schedule = "30 2 * * *".into();
        c.tz = "Europe/Riga".into();
        c.compiled = Some(Arc::new(
            Schedule::parse("30 2 * * *", "Europe/Riga").expect("cron"),
        ));
        c.grace = 3600;
        c.status = StoredStatus::Up;
        c.n_pings = 42;
        c.last_ping = Some(ts("2020-01-02T00:31:05.123456Z"));
        c.last_start = Some(ts("2020-01-02T00:40:00Z"));
        c.last_duration = Some(SignedDuration::from_secs(65));
        c.methods = "POST".into();
        c.success_kw = "ok".into();
        c.failure_kw = "err".into();
        c.filter_subject = true;
        c.channels = vec![Uuid::from_u128(0xa), Uuid::from_u128(0xb)];
        c.channel_events = vec![(
            Uuid::from_u128(0xb),
            Events::parse("down,late").expect("events"),
        )];
        c.parents = vec![Uuid::from_u128(0xc), Uuid::from_u128(0xd)];
        c.fail_threshold = 3;
        c.max_duration = 7200;
        c.min_duration = 10;
        c.snoozed_until = Some(ts("2020-01-03T00:00:00Z"));
        c.quiet = Some(Box::new(QuietWindow {
            schedule: "0 22 * * *".into(),
            tz: "Europe/Riga".into(),
            duration: 28_800,
            compiled: None,
        }));
        c
    }

    /// [`full_check`] as `GET checks/<uuid>` showed it (to a read-write and a read-only key)
    /// when check objects were built as `serde_json::Value` maps: writing them straight into
    /// the body changed no byte.
    const FULL_RW: &str = concat!(
        r#"{"name":"nightly \"db\" <b>&\n\t\u0001 \\ / ünï","slug":"nightly-db","tags":"prod db""#,
        r#","desc":"line 1\nline 2","grace":3600,"n_pings":42,"status":"up","started":true"#,
        r#","last_ping":"2020-01-02T00:31:05+00:00","next_ping":"2020-01-02T00:40:00+00:00""#,
        r#","manual_resume":false,"methods":"POST","subject":"ok","subject_fail":"err""#,
        r#","start_kw":"","success_kw":"ok","failure_kw":"err","filter_subject":true"#,
        r#","filter_body":false,"filter_http_body":false,"filter_default_fail":false"#,
        r#","badge_url":"https://ovd.example/b/2/00000000-0000-0000-0000-0000000bad9e.svg""#,
        r#","last_duration":65,"uuid":"00000000-0000-0000-0000-000000001234""#,
        r#","ping_url":"https://ovd.example/ping/00000000-0000-0000-0000-000000001234""#,
        r#","update_url":"https://ovd.example/api/v3/checks/00000000-0000-0000-0000-000000001234""#,
        r#","pause_url":"https://ovd.example/api/v3/checks/00000000-0000-0000-0000-000000001234/pause""#,
        r#","resume_url":"https://ovd.example/api/v3/checks/00000000-0000-0000-0000-000000001234/resume""#,
        r#","channels":"00000000-0000-0000-0000-00000000000a,00000000-0000-0000-0000-00000000000b""#,
        r#","schedule":"30 2 * * *","tz":"Europe/Riga","fail_threshold":3,"max_duration":7200"#,
        r#","min_duration":10,"snoozed_until":"2020-01-03T00:00:00+00:00""#,
        r#","quiet_schedule":"0 22 * * *","quiet_tz":"Europe/Riga","quiet_duration":28800"#,
        r#","parents":"00000000-0000-0000-0000-00000000000c,00000000-0000-0000-0000-00000000000d""#,
        r#","channel_events":{"00000000-0000-0000-0000-00000000000b":"down,late"}}"#,
    );
    const FULL_RO: &str = concat!(
        r#"{"name":"nightly \"db\" <b>&\n\t\u0001 \\ / ünï","slug":"nightly-db","tags":"prod db""#,
        r#","desc":"line 1\nline 2","grace":3600,"n_pings":42,"status":"up","started":true"#,
        r#","last_ping":"2020-01-02T00:31:05+00:00","next_ping":"2020-01-02T00:40:00+00:00""#,
        r#","manual_resume":false,"methods":"POST","subject":"ok","subject_fail":"err""#,
        r#","start_kw":"","success_kw":"ok","failure_kw":"err","filter_subject":true"#,
        r#","filter_body":false,"filter_http_body":false,"filter_default_fail":false"#,
        r#","badge_url":"https://ovd.example/b/2/00000000-0000-0000-0000-0000000bad9e.svg""#,
        r#","last_duration":65,"unique_key":"b02132081808b493c61e86626ee6c2e29326a662""#,
        r#","schedule":"30 2 * * *","tz":"Europe/Riga","fail_threshold":3,"max_duration":7200"#,
        r#","min_duration":10,"snoozed_until":"2020-01-03T00:00:00+00:00""#,
        r#","quiet_schedule":"0 22 * * *","quiet_tz":"Europe/Riga","quiet_duration":28800}"#,
    );

    fn full_urls(version: ApiVersion) -> Urls<'static> {
        Urls {
            site_root: "https://ovd.example",
            version,
        }
    }

    #[test]
    fn check_object_is_written_byte_for_byte_as_before() {
        let c = full_check();
        let now = ts("2020-01-02T01:00:00Z");
        for (read_only, golden) in [(false, FULL_RW), (true, FULL_RO)] {
            let object = CheckObject {
                check: &c,
                now,
                urls: full_urls(ApiVersion::V3),
                read_only,
            };
            assert_eq!(serde_json::to_string(&object).expect("json"), golden);
            // The `Value` form (the CLI's, webhooks' `$JSON`) is the same object.
            let value = check_json(&c, now, full_urls(ApiVersion::V3), read_only);
            assert_eq!(value.to_string(), golden);
        }
        // API v1: its own URLs, and a running check's status is `started`.
        let v1 = check_json(&c, now, full_urls(ApiVersion::V1), false).to_string();
        let want = FULL_RW
            .replace("/api/v3/", "/api/v1/")
            .replace(r#""status":"up""#, r#""status":"started""#);
        assert_eq!(v1, want);
    }

    #[test]
    fn check_list_wraps_the_objects_in_order() {
        let full = full_check();
        let plain = Check::new(
            Uuid::from_u128(1),
            Uuid::nil(),
            1,
            ts("2020-01-01T00:00:00Z"),
            Uuid::from_u128(2),
        );
        let now = ts("2020-01-02T01:00:00Z");
        let urls = full_urls(ApiVersion::V3);
        for read_only in [false, true] {
            let list = CheckList {
                checks: vec![&full, &plain],
                now,
                urls,
                read_only,
            };
            let want = format!(
                r#"{{"checks":[{},{}]}}"#,
                check_json(&full, now, urls, read_only),
                check_json(&plain, now, urls, read_only)
            );
            assert_eq!(serde_json::to_string(&list).expect("json"), want);
        }
        let empty = CheckList {
            checks: Vec::new(),
            now,
            urls,
            read_only: false,
        };
        assert_eq!(
            serde_json::to_string(&empty).expect("json"),
            r#"{"checks":[]}"#
        );
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
