//! The export format: one JSON document that `overdue export` writes and `overdue import`
//! reads. It is versioned (`format` + `version`) and independent of the data file's records,
//! so either can change without breaking the other.
//!
//! A dump holds projects with their API keys (argon2id hashes, so keys keep working), channels
//! with their settings, and checks with their UUIDs, every setting, their channel assignment,
//! badge key and state (status, ping count, last ping and start, last duration). It does not
//! hold ping logs, ping bodies or flips. It also holds the secret that signs project badge
//! URLs. Treat a dump like the data file: it is enough to take over every key and badge.
//!
//! Importing validates every check exactly as the Management API validates a create request.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::model::events::Events;
use crate::model::spec::{apply, parse_spec};
use crate::model::{ApiKey, ApiVersion, Channel, Check, Kind, Project, StoredStatus};

/// The `format` member of every dump.
pub(crate) const FORMAT: &str = "overdue-export";
/// The `version` this release writes and reads.
pub(crate) const VERSION: u32 = 1;

/// Why a dump cannot be read or applied; the message names the object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct DumpError(pub String);

/// A whole dump in one value; the importer and exporter stream instead (`dump_stream`), so
/// only the tests build one.
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Dump {
    pub(crate) format: String,
    pub(crate) version: u32,
    pub(crate) exported_at: String,
    /// Hex of the secret that signs project badge URLs.
    pub(crate) badge_secret: String,
    pub(crate) projects: Vec<DumpProject>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DumpProject {
    pub uuid: Uuid,
    pub name: String,
    pub ping_key: String,
    pub badge_key: String,
    pub created: String,
    /// The project's quiet window, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet: Option<DumpQuiet>,
    pub api_keys: Vec<DumpKey>,
    pub channels: Vec<DumpChannel>,
    /// In creation order; an import keeps that order.
    pub checks: Vec<DumpCheck>,
}

/// A project's quiet window: a cron or OnCalendar schedule, its zone, its length in seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DumpQuiet {
    pub schedule: String,
    pub tz: String,
    pub duration: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DumpKey {
    /// `hcw_`/`hcr_` and the next 8 characters, as `key ls` shows.
    pub id: String,
    pub(crate) read_only: bool,
    pub(crate) label: String,
    /// The argon2id PHC string.
    pub(crate) hash: String,
    pub created: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DumpChannel {
    pub uuid: Uuid,
    pub name: String,
    pub kind: String,
    /// Kind-specific settings as ordered `[key, value]` pairs.
    pub(crate) settings: Vec<(String, String)>,
    pub created: String,
    /// Checks created by the CLI get it unless they name their channels; absent in exports
    /// written before the flag existed (then false).
    #[serde(default)]
    pub(crate) default_for_new: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DumpCheck {
    pub uuid: Uuid,
    pub created: String,
    pub name: String,
    pub slug: String,
    pub tags: String,
    pub desc: String,
    /// `simple`, `cron` or `oncalendar`.
    pub kind: String,
    pub timeout: i64,
    pub grace: i64,
    /// Kept also for simple checks (a check that was cron once keeps its last schedule).
    pub schedule: String,
    pub tz: String,
    pub manual_resume: bool,
    pub methods: String,
    pub start_kw: String,
    pub success_kw: String,
    pub failure_kw: String,
    pub filter_subject: bool,
    pub filter_body: bool,
    pub filter_http_body: bool,
    pub filter_default_fail: bool,
    pub badge_key: Uuid,
    /// UUIDs of assigned channels; each must be a channel of the same project.
    pub channels: Vec<Uuid>,
    /// Stored status: `new`, `up`, `down` or `paused` (grace is derived, never stored).
    pub status: String,
    pub n_pings: u64,
    pub last_ping: Option<String>,
    pub last_start: Option<String>,
    pub last_start_rid: Option<Uuid>,
    pub last_duration_us: Option<i64>,
    /// The alerting rules (issue 17); absent from exports made before them.
    #[serde(default = "one")]
    pub fail_threshold: u32,
    #[serde(default)]
    pub fails_in_row: u32,
    #[serde(default)]
    pub max_duration: i64,
    #[serde(default)]
    pub min_duration: i64,
    #[serde(default)]
    pub snoozed_until: Option<String>,
    /// A quiet window: its schedule (`""`: none), zone and length in seconds.
    #[serde(default)]
    pub quiet_schedule: String,
    #[serde(default = "utc")]
    pub quiet_tz: String,
    #[serde(default)]
    pub quiet_duration: i64,
    /// Parent checks (of the same project: an export is consistent).
    #[serde(default)]
    pub parents: Vec<Uuid>,
    /// An alert that quiet time or a down parent holds.
    #[serde(default)]
    pub held: Option<DumpHeld>,
    /// The events the check chose for some of its channels (`down,late`).
    #[serde(default)]
    pub channel_events: BTreeMap<Uuid, String>,
    /// The grace start of the lateness already noticed.
    #[serde(default)]
    pub late_seen: Option<String>,
}

/// A held alert as dumped (statuses as in [`DumpCheck::status`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DumpHeld {
    pub told: String,
    pub new: String,
    pub at: String,
    pub reason: String,
    /// The end of the quiet time it waits for; none when it waits for the parents.
    pub until: Option<String>,
}

fn utc() -> String {
    crate::model::limits::DEFAULT_TZ.to_string()
}

fn one() -> u32 {
    1
}

/// The model objects of one dumped project, validated; `seq` fields are 0 (the importer
/// numbers them in the dump's order).
#[derive(Debug, Clone)]
pub(crate) struct ProjectParts {
    pub project: Project,
    pub(crate) keys: Vec<ApiKey>,
    pub channels: Vec<Channel>,
    /// Empty on import: the stream delivers a project's checks after it, on their own.
    #[cfg_attr(not(test), allow(dead_code))]
    pub checks: Vec<Check>,
}

fn ts(t: Timestamp) -> String {
    // Display keeps every significant fractional digit, so parsing gives the same instant.
    t.to_string()
}

fn parse_ts(s: &str, what: &str) -> Result<Timestamp, DumpError> {
    s.parse()
        .map_err(|e| DumpError(format!("{what}: bad timestamp {s:?}: {e}")))
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Simple => "simple",
        Kind::Cron => "cron",
        Kind::OnCalendar => "oncalendar",
    }
}

fn status_from(s: &str) -> Option<StoredStatus> {
    [
        StoredStatus::New,
        StoredStatus::Up,
        StoredStatus::Down,
        StoredStatus::Paused,
    ]
    .into_iter()
    .find(|st| st.as_str() == s)
}

pub(crate) use crate::model::hex;

pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
impl Dump {
    /// Parses a whole dump, refusing other formats and versions with a message that says so
    /// (the same reader as the import's, collecting every piece).
    pub(crate) fn parse(text: &str) -> Result<Dump, DumpError> {
        use crate::transfer::dump_stream::{Piece, ReadError, read_dump};
        let mut dump = Dump {
            format: FORMAT.to_string(),
            version: VERSION,
            exported_at: String::new(),
            badge_secret: String::new(),
            projects: Vec::new(),
        };
        read_dump(text.as_bytes(), usize::MAX, |piece| {
            match piece {
                Piece::Begin {
                    exported_at,
                    badge_secret,
                } => {
                    dump.exported_at = exported_at;
                    dump.badge_secret = badge_secret;
                }
                Piece::Project(p) => dump.projects.push(*p),
                Piece::Checks(checks) => {
                    if let Some(p) = dump.projects.last_mut() {
                        p.checks.extend(checks);
                    }
                }
            }
            Ok::<(), std::convert::Infallible>(())
        })
        .map_err(|e| match e {
            ReadError::Dump(e) => e,
            ReadError::Stopped(never) => match never {},
        })?;
        Ok(dump)
    }

    /// Pretty JSON with a final newline.
    pub(crate) fn to_json(&self) -> String {
        let mut out = serde_json::to_string_pretty(self).unwrap_or_default();
        out.push('\n');
        out
    }

    /// The badge secret, if the member holds one.
    pub(crate) fn secret(&self) -> Result<Vec<u8>, DumpError> {
        secret_bytes(&self.badge_secret)
    }
}

/// The bytes of a dump's `badge_secret` member.
pub(crate) fn secret_bytes(hex: &str) -> Result<Vec<u8>, DumpError> {
    unhex(hex)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| DumpError("the export's badge_secret is not hex".into()))
}

/// One project as dumped.
pub(crate) fn dump_project(
    project: &Project,
    keys: &[&ApiKey],
    channels: &[&Channel],
    checks: &[&Check],
) -> DumpProject {
    DumpProject {
        uuid: project.uuid,
        name: project.name.clone(),
        ping_key: project.ping_key.clone(),
        badge_key: project.badge_key.clone(),
        created: ts(project.created),
        quiet: project.quiet.as_ref().map(|q| DumpQuiet {
            schedule: q.schedule.clone(),
            tz: q.tz.clone(),
            duration: q.duration,
        }),
        api_keys: keys
            .iter()
            .map(|k| DumpKey {
                id: k.id.clone(),
                read_only: k.read_only,
                label: k.label.clone(),
                hash: k.hash.clone(),
                created: ts(k.created),
            })
            .collect(),
        channels: channels
            .iter()
            .map(|c| DumpChannel {
                uuid: c.uuid,
                name: c.name.clone(),
                kind: c.kind().to_string(),
                settings: c.settings(),
                created: ts(c.created),
                default_for_new: c.default_for_new,
            })
            .collect(),
        checks: checks.iter().map(|c| dump_check(c)).collect(),
    }
}

/// One check as dumped.
pub(crate) fn dump_check(c: &Check) -> DumpCheck {
    DumpCheck {
        uuid: c.uuid,
        created: ts(c.created),
        name: c.name.clone(),
        slug: c.slug.clone(),
        tags: c.tags.clone(),
        desc: c.desc.clone(),
        kind: kind_name(c.kind).to_string(),
        timeout: c.timeout,
        grace: c.grace,
        schedule: c.schedule.to_string(),
        tz: c.tz.to_string(),
        manual_resume: c.manual_resume,
        methods: c.methods.to_string(),
        start_kw: c.start_kw.to_string(),
        success_kw: c.success_kw.to_string(),
        failure_kw: c.failure_kw.to_string(),
        filter_subject: c.filter_subject,
        filter_body: c.filter_body,
        filter_http_body: c.filter_http_body,
        filter_default_fail: c.filter_default_fail,
        badge_key: c.badge_key,
        channels: c.channels.clone(),
        status: c.status.as_str().to_string(),
        n_pings: c.n_pings,
        last_ping: c.last_ping.map(ts),
        last_start: c.last_start.map(ts),
        last_start_rid: c.last_start_rid,
        last_duration_us: c.last_duration.map(|d| d.as_micros() as i64),
        fail_threshold: c.fail_threshold,
        fails_in_row: c.fails_in_row,
        max_duration: c.max_duration,
        min_duration: c.min_duration,
        snoozed_until: c.snoozed_until.map(ts),
        quiet_schedule: c
            .quiet
            .as_ref()
            .map(|q| q.schedule.clone())
            .unwrap_or_default(),
        quiet_tz: c.quiet.as_ref().map_or_else(utc, |q| q.tz.clone()),
        quiet_duration: c.quiet.as_ref().map_or(0, |q| q.duration),
        parents: c.parents.clone(),
        held: c.held.as_ref().map(|h| DumpHeld {
            told: h.told.as_str().to_string(),
            new: h.new.as_str().to_string(),
            at: ts(h.at),
            reason: h.reason.clone(),
            until: h.until.map(ts),
        }),
        channel_events: c
            .channel_events
            .iter()
            .map(|(ch, e)| (*ch, e.to_text()))
            .collect(),
        late_seen: c.late_seen.map(ts),
    }
}

impl DumpProject {
    /// The project's model objects, each validated; the first problem is the error.
    pub(crate) fn to_model(&self) -> Result<ProjectParts, DumpError> {
        let what = format!("project {:?}", self.name);
        if self.name.trim().is_empty() {
            return Err(DumpError(format!("{what}: a project needs a name")));
        }
        let project = Project {
            uuid: self.uuid,
            seq: 0,
            name: self.name.clone(),
            ping_key: self.ping_key.clone(),
            badge_key: self.badge_key.clone(),
            created: parse_ts(&self.created, &what)?,
            quiet: match &self.quiet {
                Some(q) => crate::model::quiet::window_of(&q.schedule, &q.tz, q.duration)
                    .map_err(|e| DumpError(format!("{what}: {e}")))?
                    .map(std::sync::Arc::new),
                None => None,
            },
        };
        let mut keys = Vec::with_capacity(self.api_keys.len());
        for k in &self.api_keys {
            let shape_ok = k.id.len() == crate::model::limits::API_KEY_ID_LEN
                && (k.id.starts_with("hcw_") || k.id.starts_with("hcr_"))
                && k.read_only == k.id.starts_with("hcr_")
                && k.hash.starts_with("$argon2id$");
            if !shape_ok {
                return Err(DumpError(format!(
                    "{what}: API key {:?} is malformed",
                    k.id
                )));
            }
            keys.push(ApiKey {
                id: k.id.clone(),
                project: self.uuid,
                read_only: k.read_only,
                label: k.label.clone(),
                hash: k.hash.clone(),
                created: parse_ts(&k.created, &what)?,
            });
        }
        let mut channels = Vec::with_capacity(self.channels.len());
        for c in &self.channels {
            let (config, repeat, events) = Channel::from_settings(&c.kind, c.settings.clone());
            channels.push(Channel {
                uuid: c.uuid,
                project: self.uuid,
                seq: 0,
                name: c.name.clone(),
                config,
                created: parse_ts(&c.created, &what)?,
                repeat,
                default_for_new: c.default_for_new,
                events,
            });
        }
        let channel_ids: Vec<Uuid> = channels.iter().map(|c| c.uuid).collect();
        let mut checks = Vec::with_capacity(self.checks.len());
        for c in &self.checks {
            checks.push(c.to_model(&self.name, self.uuid, &channel_ids)?);
        }
        Ok(ProjectParts {
            project,
            keys,
            channels,
            checks,
        })
    }
}

impl DumpCheck {
    /// The check of project `project_name` (`project` by UUID), validated as the Management
    /// API validates a create request; every assigned channel must be one of `channels`.
    pub(crate) fn to_model(
        &self,
        project_name: &str,
        project: Uuid,
        channels: &[Uuid],
    ) -> Result<Check, DumpError> {
        let what = format!("project {project_name:?}, check {}", self.uuid);
        let check =
            check_from_dump(self, project).map_err(|e| DumpError(format!("{what}: {e}")))?;
        if let Some(missing) = check.channels.iter().find(|ch| !channels.contains(ch)) {
            return Err(DumpError(format!(
                "{what}: assigned channel {missing} is not a channel of the project"
            )));
        }
        Ok(check)
    }
}

/// Builds a check from its dump, validating the settings as the Management API does.
fn check_from_dump(d: &DumpCheck, project: Uuid) -> Result<Check, DumpError> {
    let bad = |e: crate::model::spec::SpecError| DumpError(e.to_string());
    let mut check = Check::new(
        d.uuid,
        project,
        0,
        parse_ts(&d.created, "created")?,
        d.badge_key,
    );
    let settings = json!({
        "name": d.name, "slug": d.slug, "tags": d.tags, "desc": d.desc,
        "timeout": d.timeout, "grace": d.grace, "tz": d.tz, "methods": d.methods,
        "manual_resume": d.manual_resume, "start_kw": d.start_kw, "success_kw": d.success_kw,
        "failure_kw": d.failure_kw, "filter_subject": d.filter_subject,
        "filter_body": d.filter_body, "filter_http_body": d.filter_http_body,
        "filter_default_fail": d.filter_default_fail, "fail_threshold": d.fail_threshold,
        "max_duration": d.max_duration, "min_duration": d.min_duration,
        "quiet_schedule": d.quiet_schedule, "quiet_tz": d.quiet_tz,
    });
    let mut settings = settings.as_object().cloned().unwrap_or_default();
    if !d.quiet_schedule.is_empty() {
        settings.insert("quiet_duration".into(), json!(d.quiet_duration));
    }
    apply(
        &mut check,
        &parse_spec(&settings).map_err(bad)?,
        ApiVersion::V3,
    )
    .map_err(bad)?;
    // The schedule goes second: a cron check keeps its timeout, as the file does.
    let mut schedule = Map::new();
    schedule.insert("schedule".into(), Value::String(d.schedule.clone()));
    let spec = parse_spec(&schedule).map_err(bad)?;
    if d.kind == kind_name(Kind::Simple) {
        check.schedule = std::borrow::Cow::Owned(d.schedule.clone());
    } else {
        apply(&mut check, &spec, ApiVersion::V3).map_err(bad)?;
        if kind_name(check.kind) != d.kind {
            return Err(DumpError(format!(
                "kind {:?} does not match its schedule {:?}",
                d.kind, d.schedule
            )));
        }
    }
    check.status = status_from(&d.status)
        .ok_or_else(|| DumpError(format!("unknown status {:?}", d.status)))?;
    check.n_pings = d.n_pings;
    check.last_ping = d
        .last_ping
        .as_deref()
        .map(|t| parse_ts(t, "last_ping"))
        .transpose()?;
    check.last_start = d
        .last_start
        .as_deref()
        .map(|t| parse_ts(t, "last_start"))
        .transpose()?;
    check.last_start_rid = d.last_start_rid;
    check.last_duration = d.last_duration_us.map(SignedDuration::from_micros);
    check.fails_in_row = d.fails_in_row;
    let mut channel_events = Vec::with_capacity(d.channel_events.len());
    for (channel, events) in &d.channel_events {
        if !d.channels.contains(channel) {
            return Err(DumpError(format!(
                "channel_events names {channel}, which is not one of the check's channels"
            )));
        }
        let events =
            Events::parse(events).map_err(|e| DumpError(format!("channel_events: {e}")))?;
        channel_events.push((*channel, events));
    }
    check.channel_events = channel_events;
    check.late_seen = d
        .late_seen
        .as_deref()
        .map(|t| parse_ts(t, "late_seen"))
        .transpose()?;
    if d.parents.contains(&d.uuid) {
        return Err(DumpError("a check cannot be its own parent".into()));
    }
    let mut parents = d.parents.clone();
    parents.sort();
    parents.dedup();
    check.parents = parents;
    check.snoozed_until = d
        .snoozed_until
        .as_deref()
        .map(|t| parse_ts(t, "snoozed_until"))
        .transpose()?;
    check.held = match &d.held {
        None => None,
        Some(h) => {
            let status =
                |s: &str| status_from(s).ok_or_else(|| DumpError(format!("unknown status {s:?}")));
            Some(Box::new(crate::model::check::HeldAlert {
                told: status(&h.told)?,
                new: status(&h.new)?,
                at: parse_ts(&h.at, "held.at")?,
                reason: h.reason.clone(),
                until: h
                    .until
                    .as_deref()
                    .map(|t| parse_ts(t, "held.until"))
                    .transpose()?,
            }))
        }
    };
    let mut channels = d.channels.clone();
    channels.sort();
    channels.dedup();
    check.channels = channels;
    Ok(check)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ChannelConfig;

    fn sample_check() -> Check {
        let t: Timestamp = "2026-01-02T03:04:05.123456Z".parse().expect("ts");
        let mut c = Check::new(
            Uuid::from_u128(10),
            Uuid::from_u128(1),
            7,
            t,
            Uuid::from_u128(11),
        );
        c.name = "Backups".into();
        c.slug = "backups".into();
        c.tags = "prod nightly".into();
        c.timeout = 7200;
        c.grace = 120;
        c.tz = "Europe/Riga".into();
        c.kind = Kind::Cron;
        c.schedule = "30 2 * * *".into();
        c.success_kw = "OK".into();
        c.filter_http_body = true;
        c.status = StoredStatus::Up;
        c.n_pings = 42;
        c.last_ping = Some(t);
        c.last_duration = Some(SignedDuration::from_micros(1_500_000));
        c.channels = vec![Uuid::from_u128(20)];
        c.fail_threshold = 3;
        c.fails_in_row = 2;
        c.max_duration = 5400;
        c.min_duration = 30;
        c.snoozed_until = Some(t);
        c.parents = vec![Uuid::from_u128(99)];
        c.channel_events = vec![(
            Uuid::from_u128(20),
            crate::model::events::Events::parse("late,failure").expect("events"),
        )];
        c.quiet = Some(Box::new(crate::model::check::QuietWindow::new(
            "Sun 02:00",
            "Europe/Riga",
            7200,
        )));
        c.held = Some(Box::new(crate::model::check::HeldAlert {
            told: StoredStatus::Up,
            new: StoredStatus::Down,
            at: t,
            reason: "fail".into(),
            until: Some(t),
        }));
        c
    }

    fn sample_project() -> (Project, Channel) {
        let t: Timestamp = "2026-01-01T00:00:00Z".parse().expect("ts");
        let p = Project {
            uuid: Uuid::from_u128(1),
            seq: 1,
            name: "default".into(),
            ping_key: "k".repeat(22),
            badge_key: Uuid::from_u128(5).to_string(),
            created: t,
            quiet: None,
        };
        let ch = Channel {
            uuid: Uuid::from_u128(20),
            project: p.uuid,
            seq: 2,
            name: "ops".into(),
            config: ChannelConfig::webhook("http://127.0.0.1:9/x"),
            created: t,
            repeat: Some(jiff::SignedDuration::from_secs(3600)),
            default_for_new: true,
            events: crate::model::events::Events::parse("down,late").expect("events"),
        };
        (p, ch)
    }

    #[test]
    fn a_dumped_project_comes_back_equal() {
        let (p, ch) = sample_project();
        let c = sample_check();
        let dumped = dump_project(&p, &[], &[&ch], &[&c]);
        let dump = Dump {
            format: FORMAT.into(),
            version: VERSION,
            exported_at: "2026-01-03T00:00:00Z".into(),
            badge_secret: hex(&[1, 2, 255]),
            projects: vec![dumped],
        };
        let back = Dump::parse(&dump.to_json()).expect("parses");
        assert_eq!(back, dump);
        assert_eq!(back.secret().expect("hex"), vec![1, 2, 255]);
        let parts = back.projects[0].to_model().expect("valid");
        let got = &parts.checks[0];
        assert_eq!(format!("{:?}", got.kind), "Cron");
        assert!(got.compiled.is_some());
        for (a, b) in [
            (got.name.as_str(), c.name.as_str()),
            (got.slug.as_str(), c.slug.as_str()),
            (got.tags.as_str(), c.tags.as_str()),
            (&*got.success_kw, &*c.success_kw),
        ] {
            assert_eq!(a, b);
        }
        assert_eq!(
            (got.timeout, got.grace, &*got.tz, &*got.schedule),
            (7200, 120, "Europe/Riga", "30 2 * * *")
        );
        assert_eq!((got.status, got.n_pings), (StoredStatus::Up, 42));
        assert_eq!(
            (
                got.fail_threshold,
                got.fails_in_row,
                got.max_duration,
                got.min_duration
            ),
            (3, 2, 5400, 30)
        );
        assert_eq!((got.snoozed_until, &got.held), (c.snoozed_until, &c.held));
        assert_eq!(got.parents, c.parents);
        assert_eq!(got.channel_events, c.channel_events);
        let q = got.quiet.as_ref().expect("quiet window");
        assert_eq!(
            (q.schedule.as_str(), q.tz.as_str(), q.duration),
            ("Sun 02:00", "Europe/Riga", 7200)
        );
        assert_eq!(
            (got.last_ping, got.last_duration, got.created),
            (c.last_ping, c.last_duration, c.created)
        );
        assert_eq!((got.badge_key, &got.channels), (c.badge_key, &c.channels));
        assert!(got.filter_http_body);
        assert_eq!(parts.channels[0].config, ch.config);
        assert!(parts.channels[0].default_for_new);
        assert_eq!(parts.channels[0].events, ch.events);
        assert_eq!(parts.project.ping_key, p.ping_key);
    }

    #[test]
    fn invalid_settings_and_foreign_channels_are_refused() {
        let (p, ch) = sample_project();
        let mut c = sample_check();
        c.schedule = "not a schedule".into();
        let dumped = dump_project(&p, &[], &[&ch], &[&c]);
        let err = dumped.to_model().expect_err("bad schedule");
        assert!(err.0.contains("schedule"), "{err}");

        let c = sample_check();
        let dumped = dump_project(&p, &[], &[], &[&c]);
        let err = dumped.to_model().expect_err("unknown channel");
        assert!(err.0.contains("not a channel of the project"), "{err}");

        let mut c = sample_check();
        c.grace = 5;
        let err = dump_project(&p, &[], &[&ch], &[&c])
            .to_model()
            .expect_err("grace too small");
        assert!(err.0.contains("grace"), "{err}");
    }

    #[test]
    fn an_export_from_before_default_channels_imports_them_as_not_default() {
        let (p, ch) = sample_project();
        let mut doc = serde_json::to_value(dump_project(&p, &[], &[&ch], &[])).expect("json");
        let channel = doc["channels"][0].as_object_mut().expect("channel");
        assert_eq!(channel.remove("default_for_new"), Some(Value::Bool(true)));
        let old: DumpProject = serde_json::from_value(doc).expect("still reads");
        assert!(!old.to_model().expect("valid").channels[0].default_for_new);
    }

    #[test]
    fn an_export_from_before_the_alerting_rules_imports_checks_with_the_defaults() {
        let (p, ch) = sample_project();
        let c = sample_check();
        let mut doc = serde_json::to_value(dump_project(&p, &[], &[&ch], &[&c])).expect("json");
        let check = doc["checks"][0].as_object_mut().expect("check");
        for field in [
            "fail_threshold",
            "fails_in_row",
            "max_duration",
            "min_duration",
            "snoozed_until",
            "quiet_schedule",
            "quiet_tz",
            "quiet_duration",
            "parents",
            "held",
            "channel_events",
            "late_seen",
        ] {
            assert!(check.remove(field).is_some(), "{field} is exported");
        }
        let old: DumpProject = serde_json::from_value(doc).expect("still reads");
        let got = &old.to_model().expect("valid").checks[0];
        assert!(got.has_default_rules());
    }

    #[test]
    fn other_formats_and_versions_are_refused_plainly() {
        let err = Dump::parse(r#"{"checks": []}"#).expect_err("not ours");
        assert!(err.0.contains("not an overdue export"), "{err}");
        let err =
            Dump::parse(&format!(r#"{{"format": "{FORMAT}", "version": 99}}"#)).expect_err("newer");
        assert!(err.0.contains("version 99"), "{err}");
        assert_eq!(unhex("0aff"), Some(vec![10, 255]));
        assert_eq!(unhex("0g"), None);
    }
}
