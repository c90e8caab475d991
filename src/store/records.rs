//! The on-disk shape of every record: bincode 2.0.1 (standard configuration) behind a leading
//! record-version byte. These types are the file format; the model types are free to change.
//!
//! A reader accepts the versions it knows and refuses others with [`StoreError::Corrupt`],
//! so a record written by a newer release is never misread.

use std::borrow::Cow;

use bincode::{Decode, Encode};
use jiff::SignedDuration;
use uuid::Uuid;

use crate::model::events::Events;
use crate::model::limits::DEFAULT_SCHEDULE;
use crate::model::session::Session;
use crate::model::time::{from_micros, to_micros};
use crate::model::{
    ApiKey, Channel, Check, Delivery, Flip, Kind, OutboxEntry, Ping, PingKind, Project,
    StoredStatus, Tries,
};
use crate::store::StoreError;

/// The version byte that leads every record written by this release.
pub(crate) const RECORD_V1: u8 = 1;

fn config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// `RECORD_V1` followed by the bincode encoding of `record`.
pub(crate) fn encode<T: Encode>(record: &T) -> Result<Vec<u8>, StoreError> {
    let mut out = vec![RECORD_V1];
    bincode::encode_into_std_write(record, &mut out, config())
        .map_err(|e| StoreError::Corrupt(format!("cannot encode record: {e}")))?;
    Ok(out)
}

/// Decodes a record written by [`encode`]; `what` names the table for error messages.
pub(crate) fn decode<T: Decode<()>>(bytes: &[u8], what: &str) -> Result<T, StoreError> {
    match bytes.split_first() {
        Some((&RECORD_V1, rest)) => bincode::decode_from_slice(rest, config())
            .map(|(value, _)| value)
            .map_err(|e| StoreError::Corrupt(format!("{what} record does not decode: {e}"))),
        Some((version, _)) => Err(StoreError::Corrupt(format!(
            "{what} record has version {version}, this release reads version {RECORD_V1}"
        ))),
        None => Err(StoreError::Corrupt(format!("{what} record is empty"))),
    }
}

fn status_code(s: StoredStatus) -> u8 {
    match s {
        StoredStatus::New => 0,
        StoredStatus::Up => 1,
        StoredStatus::Down => 2,
        StoredStatus::Paused => 3,
    }
}

fn status_from(code: u8) -> Result<StoredStatus, StoreError> {
    Ok(match code {
        0 => StoredStatus::New,
        1 => StoredStatus::Up,
        2 => StoredStatus::Down,
        3 => StoredStatus::Paused,
        other => return Err(StoreError::Corrupt(format!("unknown status code {other}"))),
    })
}

#[derive(Encode, Decode)]
pub(crate) struct ProjectRecord {
    pub uuid: u128,
    pub(crate) seq: u64,
    pub name: String,
    pub ping_key: String,
    pub badge_key: String,
    pub(crate) created_us: i64,
}

impl From<&Project> for ProjectRecord {
    fn from(p: &Project) -> Self {
        ProjectRecord {
            uuid: p.uuid.as_u128(),
            seq: p.seq,
            name: p.name.clone(),
            ping_key: p.ping_key.clone(),
            badge_key: p.badge_key.clone(),
            created_us: to_micros(p.created),
        }
    }
}

impl From<ProjectRecord> for Project {
    fn from(r: ProjectRecord) -> Self {
        Project {
            uuid: Uuid::from_u128(r.uuid),
            seq: r.seq,
            name: r.name,
            ping_key: r.ping_key,
            badge_key: r.badge_key,
            created: from_micros(r.created_us),
            quiet: None,
        }
    }
}

/// The version byte of a project record that carries a [`ProjectRulesRecord`] after its
/// [`ProjectRecord`]; a project without a quiet window is still written as [`RECORD_V1`], so
/// a data file that uses none stays readable by older releases.
pub(crate) const PROJECT_RECORD_V2: u8 = 2;

/// The alerting rules of a project (issue 17): its quiet window.
#[derive(Encode, Decode)]
pub(crate) struct ProjectRulesRecord {
    pub(crate) quiet: Option<QuietRecord>,
}

/// A project's record: [`RECORD_V1`] and its [`ProjectRecord`] when it has no quiet window,
/// else [`PROJECT_RECORD_V2`], the [`ProjectRecord`] and the [`ProjectRulesRecord`].
pub(crate) fn encode_project(project: &Project) -> Result<Vec<u8>, StoreError> {
    let record = ProjectRecord::from(project);
    let Some(q) = &project.quiet else {
        return encode(&record);
    };
    let rules = ProjectRulesRecord {
        quiet: Some(QuietRecord {
            schedule: q.schedule.clone(),
            tz: q.tz.clone(),
            duration: q.duration,
        }),
    };
    let mut out = vec![PROJECT_RECORD_V2];
    let fail = |e: bincode::error::EncodeError| {
        StoreError::Corrupt(format!("cannot encode project record: {e}"))
    };
    bincode::encode_into_std_write(&record, &mut out, config()).map_err(fail)?;
    bincode::encode_into_std_write(&rules, &mut out, config()).map_err(fail)?;
    Ok(out)
}

/// Reads a project record of either version.
pub(crate) fn decode_project(bytes: &[u8]) -> Result<Project, StoreError> {
    let Some((&PROJECT_RECORD_V2, rest)) = bytes.split_first() else {
        return decode::<ProjectRecord>(bytes, "project").map(Project::from);
    };
    let bad = |e: bincode::error::DecodeError| {
        StoreError::Corrupt(format!("project record does not decode: {e}"))
    };
    let (record, used): (ProjectRecord, usize) =
        bincode::decode_from_slice(rest, config()).map_err(bad)?;
    let (rules, _): (ProjectRulesRecord, usize) =
        bincode::decode_from_slice(&rest[used..], config()).map_err(bad)?;
    let mut project = Project::from(record);
    project.quiet = rules.quiet.map(|q| {
        std::sync::Arc::new(crate::model::check::QuietWindow::new(
            &q.schedule,
            &q.tz,
            q.duration,
        ))
    });
    Ok(project)
}

#[derive(Encode, Decode)]
pub(crate) struct ApiKeyRecord {
    pub id: String,
    pub project: u128,
    pub(crate) read_only: bool,
    pub(crate) label: String,
    pub(crate) hash: String,
    pub(crate) created_us: i64,
}

impl From<&ApiKey> for ApiKeyRecord {
    fn from(k: &ApiKey) -> Self {
        ApiKeyRecord {
            id: k.id.clone(),
            project: k.project.as_u128(),
            read_only: k.read_only,
            label: k.label.clone(),
            hash: k.hash.clone(),
            created_us: to_micros(k.created),
        }
    }
}

impl From<ApiKeyRecord> for ApiKey {
    fn from(r: ApiKeyRecord) -> Self {
        ApiKey {
            id: r.id,
            project: Uuid::from_u128(r.project),
            read_only: r.read_only,
            label: r.label,
            hash: r.hash,
            created: from_micros(r.created_us),
        }
    }
}

/// A dashboard session; its key (SHA-256 of the token) is the only trace of the token.
#[derive(Encode, Decode)]
pub struct SessionRecord {
    /// API key identifiers, in the order they were added.
    pub keys: Vec<String>,
    pub created_us: i64,
    pub last_used_us: i64,
}

impl From<&Session> for SessionRecord {
    fn from(s: &Session) -> Self {
        SessionRecord {
            keys: s.keys.clone(),
            created_us: to_micros(s.created),
            last_used_us: to_micros(s.last_used),
        }
    }
}

impl From<SessionRecord> for Session {
    fn from(r: SessionRecord) -> Self {
        Session {
            keys: r.keys,
            created: from_micros(r.created_us),
            last_used: from_micros(r.last_used_us),
        }
    }
}

#[derive(Encode, Decode)]
pub(crate) struct CheckRecord {
    pub uuid: u128,
    pub project: u128,
    pub(crate) seq: u64,
    pub(crate) created_us: i64,
    pub name: String,
    pub slug: String,
    pub tags: String,
    pub desc: String,
    /// 0 simple, 1 cron, 2 OnCalendar.
    pub kind: u8,
    pub timeout: i64,
    pub grace: i64,
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
    pub status: u8,
    pub n_pings: u64,
    pub(crate) last_ping_us: Option<i64>,
    pub(crate) last_start_us: Option<i64>,
    pub last_start_rid: Option<u128>,
    pub last_duration_us: Option<i64>,
    pub badge_key: u128,
}

impl From<&Check> for CheckRecord {
    fn from(c: &Check) -> Self {
        CheckRecord {
            uuid: c.uuid.as_u128(),
            project: c.project.as_u128(),
            seq: c.seq,
            created_us: to_micros(c.created),
            name: c.name.clone(),
            slug: c.slug.clone(),
            tags: c.tags.clone(),
            desc: c.desc.clone(),
            kind: match c.kind {
                Kind::Simple => 0,
                Kind::Cron => 1,
                Kind::OnCalendar => 2,
            },
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
            status: status_code(c.status),
            n_pings: c.n_pings,
            last_ping_us: c.last_ping.map(to_micros),
            last_start_us: c.last_start.map(to_micros),
            last_start_rid: c.last_start_rid.map(|r| r.as_u128()),
            last_duration_us: c.last_duration.map(|d| d.as_micros() as i64),
            badge_key: c.badge_key.as_u128(),
        }
    }
}

/// The version byte of a check record that carries a [`CheckRulesRecord`] after its
/// [`CheckRecord`]. A check whose rules are all at their defaults is still written as
/// [`RECORD_V1`], so a data file whose checks use no rule stays readable by older releases.
pub(crate) const CHECK_RECORD_V2: u8 = 2;

/// The alerting rules of a check (issue 17) and the state they keep (failures counted, a
/// snooze and the alert it holds).
#[derive(Encode, Decode)]
pub(crate) struct CheckRulesRecord {
    pub(crate) fail_threshold: u32,
    pub(crate) fails_in_row: u32,
    pub(crate) max_duration: i64,
    pub(crate) min_duration: i64,
    pub(crate) snoozed_until_us: Option<i64>,
    pub(crate) quiet: Option<QuietRecord>,
    pub(crate) parents: Vec<u128>,
    pub(crate) held: Option<HeldRecord>,
    /// (channel, `Events::bits`) the check chose, sorted by channel.
    pub(crate) channel_events: Vec<(u128, u8)>,
    pub(crate) late_seen_us: Option<i64>,
}

/// A [`QuietWindow`](crate::model::check::QuietWindow) without its compiled schedule.
#[derive(Encode, Decode)]
pub(crate) struct QuietRecord {
    pub(crate) schedule: String,
    pub(crate) tz: String,
    pub(crate) duration: i64,
}

/// A [`HeldAlert`](crate::model::check::HeldAlert): statuses as in [`CheckRecord`].
#[derive(Encode, Decode)]
pub(crate) struct HeldRecord {
    pub(crate) told: u8,
    pub(crate) new: u8,
    pub(crate) at_us: i64,
    pub(crate) reason: String,
    pub(crate) until_us: Option<i64>,
}

/// A check's record: [`RECORD_V1`] and its [`CheckRecord`] when its rules are the defaults,
/// else [`CHECK_RECORD_V2`], the [`CheckRecord`] and the [`CheckRulesRecord`].
pub(crate) fn encode_check(check: &Check) -> Result<Vec<u8>, StoreError> {
    let record = CheckRecord::from(check);
    if check.has_default_rules() {
        return encode(&record);
    }
    let rules = CheckRulesRecord {
        fail_threshold: check.fail_threshold,
        fails_in_row: check.fails_in_row,
        max_duration: check.max_duration,
        min_duration: check.min_duration,
        snoozed_until_us: check.snoozed_until.map(to_micros),
        quiet: check.quiet.as_ref().map(|q| QuietRecord {
            schedule: q.schedule.clone(),
            tz: q.tz.clone(),
            duration: q.duration,
        }),
        parents: check.parents.iter().map(Uuid::as_u128).collect(),
        channel_events: check
            .channel_events
            .iter()
            .map(|(c, e)| (c.as_u128(), e.bits()))
            .collect(),
        late_seen_us: check.late_seen.map(to_micros),
        held: check.held.as_ref().map(|h| HeldRecord {
            told: status_code(h.told),
            new: status_code(h.new),
            at_us: to_micros(h.at),
            reason: h.reason.clone(),
            until_us: h.until.map(to_micros),
        }),
    };
    let mut out = vec![CHECK_RECORD_V2];
    let fail = |e: bincode::error::EncodeError| {
        StoreError::Corrupt(format!("cannot encode check record: {e}"))
    };
    bincode::encode_into_std_write(&record, &mut out, config()).map_err(fail)?;
    bincode::encode_into_std_write(&rules, &mut out, config()).map_err(fail)?;
    Ok(out)
}

/// Reads a check record of either version (without its compiled schedule and channels).
pub(crate) fn decode_check(bytes: &[u8]) -> Result<Check, StoreError> {
    let Some((&CHECK_RECORD_V2, rest)) = bytes.split_first() else {
        return decode::<CheckRecord>(bytes, "check")?.into_check();
    };
    let bad = |e: bincode::error::DecodeError| {
        StoreError::Corrupt(format!("check record does not decode: {e}"))
    };
    let (record, used): (CheckRecord, usize) =
        bincode::decode_from_slice(rest, config()).map_err(bad)?;
    let (rules, _): (CheckRulesRecord, usize) =
        bincode::decode_from_slice(&rest[used..], config()).map_err(bad)?;
    if rules.fail_threshold == 0 {
        return Err(StoreError::Corrupt(
            "check record has fail_threshold 0".into(),
        ));
    }
    let mut check = record.into_check()?;
    check.fail_threshold = rules.fail_threshold;
    check.fails_in_row = rules.fails_in_row;
    check.max_duration = rules.max_duration;
    check.min_duration = rules.min_duration;
    check.snoozed_until = rules.snoozed_until_us.map(from_micros);
    check.held = match rules.held {
        None => None,
        Some(h) => Some(Box::new(crate::model::check::HeldAlert {
            told: status_from(h.told)?,
            new: status_from(h.new)?,
            at: from_micros(h.at_us),
            reason: h.reason,
            until: h.until_us.map(from_micros),
        })),
    };
    // Compiled here, as the window is read: unlike the check's own schedule it has no
    // other place that compiles it at load.
    check.parents = rules.parents.into_iter().map(Uuid::from_u128).collect();
    check.channel_events = rules
        .channel_events
        .into_iter()
        .map(|(c, e)| (Uuid::from_u128(c), Events::from_bits(e)))
        .collect();
    check.late_seen = rules.late_seen_us.map(from_micros);
    check.quiet = rules.quiet.map(|q| {
        Box::new(crate::model::check::QuietWindow::new(
            &q.schedule,
            &q.tz,
            q.duration,
        ))
    });
    Ok(check)
}

impl CheckRecord {
    /// The model check, without its compiled schedule and channels (the caller adds them),
    /// its rules at their defaults (see [`decode_check`]).
    pub(crate) fn into_check(self) -> Result<Check, StoreError> {
        let kind = match self.kind {
            0 => Kind::Simple,
            1 => Kind::Cron,
            2 => Kind::OnCalendar,
            other => return Err(StoreError::Corrupt(format!("unknown check kind {other}"))),
        };
        Ok(Check {
            uuid: Uuid::from_u128(self.uuid),
            project: Uuid::from_u128(self.project),
            seq: self.seq,
            created: from_micros(self.created_us),
            name: self.name,
            slug: self.slug,
            tags: self.tags,
            desc: self.desc,
            kind,
            timeout: self.timeout,
            grace: self.grace,
            schedule: if self.schedule == DEFAULT_SCHEDULE {
                Cow::Borrowed(DEFAULT_SCHEDULE)
            } else {
                Cow::Owned(self.schedule)
            },
            tz: match crate::schedule::tz::accepted(&self.tz) {
                Some(name) => Cow::Borrowed(name),
                None => Cow::Owned(self.tz),
            },
            compiled: None,
            manual_resume: self.manual_resume,
            methods: self.methods.into_boxed_str(),
            start_kw: self.start_kw.into_boxed_str(),
            success_kw: self.success_kw.into_boxed_str(),
            failure_kw: self.failure_kw.into_boxed_str(),
            filter_subject: self.filter_subject,
            filter_body: self.filter_body,
            filter_http_body: self.filter_http_body,
            filter_default_fail: self.filter_default_fail,
            status: status_from(self.status)?,
            n_pings: self.n_pings,
            last_ping: self.last_ping_us.map(from_micros),
            last_start: self.last_start_us.map(from_micros),
            last_start_rid: self.last_start_rid.map(Uuid::from_u128),
            last_duration: self.last_duration_us.map(SignedDuration::from_micros),
            badge_key: Uuid::from_u128(self.badge_key),
            channels: Vec::new(),
            channel_events: Vec::new(),
            late_seen: None,
            fail_threshold: 1,
            fails_in_row: 0,
            max_duration: 0,
            min_duration: 0,
            snoozed_until: None,
            quiet: None,
            parents: Vec::new(),
            held: None,
        })
    }
}

#[derive(Encode, Decode)]
pub(crate) struct ChannelRecord {
    pub uuid: u128,
    pub project: u128,
    pub(crate) seq: u64,
    pub name: String,
    pub kind: String,
    /// Kind-specific settings as ordered key/value pairs, so new kinds need no new shape.
    pub(crate) settings: Vec<(String, String)>,
    pub(crate) created_us: i64,
}

/// The setting that marks a channel as a default for new checks ([`Channel::default_for_new`]),
/// present only when set. A setting rather than a new field: the record keeps its shape, so
/// files written before the flag existed read as "not a default" and stay version 1.
const DEFAULT_FOR_NEW_KEY: &str = "default_for_new";

impl From<&Channel> for ChannelRecord {
    fn from(c: &Channel) -> Self {
        let mut settings = c.settings();
        if c.default_for_new {
            settings.push((DEFAULT_FOR_NEW_KEY.to_string(), "true".to_string()));
        }
        ChannelRecord {
            uuid: c.uuid.as_u128(),
            project: c.project.as_u128(),
            seq: c.seq,
            name: c.name.clone(),
            kind: c.kind().to_string(),
            settings,
            created_us: to_micros(c.created),
        }
    }
}

impl From<ChannelRecord> for Channel {
    fn from(r: ChannelRecord) -> Self {
        let mut settings = r.settings;
        let default_for_new = settings
            .iter()
            .any(|(k, v)| k == DEFAULT_FOR_NEW_KEY && v == "true");
        settings.retain(|(k, _)| k != DEFAULT_FOR_NEW_KEY);
        let (config, repeat, events) = Channel::from_settings(&r.kind, settings);
        Channel {
            uuid: Uuid::from_u128(r.uuid),
            project: Uuid::from_u128(r.project),
            seq: r.seq,
            name: r.name,
            config,
            created: from_micros(r.created_us),
            repeat,
            default_for_new,
            events,
        }
    }
}

#[derive(Encode, Decode)]
pub(crate) struct PingRecord {
    pub(crate) created_us: i64,
    /// 0 success, 1 start, 2 fail, 3 log, 4 ignored.
    pub kind: u8,
    pub scheme: String,
    pub remote_addr: Option<String>,
    pub method: String,
    pub ua: String,
    pub rid: Option<u128>,
    pub(crate) exit_status: Option<u8>,
    pub(crate) body_len: u32,
}

impl From<&Ping> for PingRecord {
    fn from(p: &Ping) -> Self {
        PingRecord {
            created_us: to_micros(p.created),
            kind: match p.kind {
                PingKind::Success => 0,
                PingKind::Start => 1,
                PingKind::Fail => 2,
                PingKind::Log => 3,
                PingKind::Ignored => 4,
            },
            scheme: p.scheme.clone(),
            remote_addr: p.remote_addr.clone(),
            method: p.method.clone(),
            ua: p.ua.clone(),
            rid: p.rid.map(|r| r.as_u128()),
            exit_status: p.exit_status,
            body_len: p.body_len,
        }
    }
}

impl PingRecord {
    pub(crate) fn into_ping(self, check: Uuid, n: u64) -> Result<Ping, StoreError> {
        let kind = match self.kind {
            0 => PingKind::Success,
            1 => PingKind::Start,
            2 => PingKind::Fail,
            3 => PingKind::Log,
            4 => PingKind::Ignored,
            other => return Err(StoreError::Corrupt(format!("unknown ping kind {other}"))),
        };
        Ok(Ping {
            check,
            n,
            created: from_micros(self.created_us),
            kind,
            scheme: self.scheme,
            remote_addr: self.remote_addr,
            method: self.method,
            ua: self.ua,
            rid: self.rid.map(Uuid::from_u128),
            exit_status: self.exit_status,
            body_len: self.body_len,
        })
    }
}

#[derive(Encode, Decode)]
pub(crate) struct FlipRecord {
    pub(crate) created_us: i64,
    pub old_status: u8,
    pub new_status: u8,
    pub reason: String,
}

impl From<&Flip> for FlipRecord {
    fn from(f: &Flip) -> Self {
        FlipRecord {
            created_us: to_micros(f.created),
            old_status: status_code(f.old_status),
            new_status: status_code(f.new_status),
            reason: f.reason.clone(),
        }
    }
}

impl FlipRecord {
    pub(crate) fn into_flip(self, check: Uuid) -> Result<Flip, StoreError> {
        Ok(Flip {
            check,
            created: from_micros(self.created_us),
            old_status: status_from(self.old_status)?,
            new_status: status_from(self.new_status)?,
            reason: self.reason,
        })
    }
}

#[derive(Encode, Decode)]
pub(crate) struct OutboxRecord {
    pub(crate) channel: u128,
    pub check: u128,
    pub(crate) flip_created_us: i64,
    pub old_status: u8,
    pub new_status: u8,
    pub reason: String,
    pub(crate) queued_us: i64,
}

impl From<&OutboxEntry> for OutboxRecord {
    fn from(e: &OutboxEntry) -> Self {
        OutboxRecord {
            channel: e.channel.as_u128(),
            check: e.check.as_u128(),
            flip_created_us: to_micros(e.flip_created),
            old_status: status_code(e.old_status),
            new_status: status_code(e.new_status),
            reason: e.reason.clone(),
            queued_us: to_micros(e.queued),
        }
    }
}

impl OutboxRecord {
    pub(crate) fn into_entry(self, seq: u64) -> Result<OutboxEntry, StoreError> {
        Ok(OutboxEntry {
            seq,
            channel: Uuid::from_u128(self.channel),
            check: Uuid::from_u128(self.check),
            flip_created: from_micros(self.flip_created_us),
            old_status: status_from(self.old_status)?,
            new_status: status_from(self.new_status)?,
            reason: self.reason,
            queued: from_micros(self.queued_us),
        })
    }
}

/// A ping waiting in the journal: the ping, its check and number, and its body.
/// The ping of an encoded [`JournalRecord`].
pub(crate) fn journal_ping(bytes: &[u8]) -> Result<Ping, StoreError> {
    let r = decode::<JournalRecord>(bytes, "journal")?;
    r.ping.into_ping(Uuid::from_u128(r.check), r.n)
}

#[derive(Encode, Decode)]
pub(crate) struct JournalRecord {
    pub check: u128,
    pub n: u64,
    pub(crate) ping: PingRecord,
    pub body: Vec<u8>,
}

/// One delivery attempt (table `deliveries`).
#[derive(Encode, Decode)]
pub(crate) struct DeliveryRecord {
    pub(crate) outbox_seq: u64,
    pub check: Option<u128>,
    pub(crate) at_us: i64,
    pub(crate) duration_us: i64,
    pub attempt: u32,
    pub code: Option<u16>,
    pub error: String,
    pub(crate) gave_up: bool,
}

impl From<&Delivery> for DeliveryRecord {
    fn from(d: &Delivery) -> Self {
        DeliveryRecord {
            outbox_seq: d.outbox_seq,
            check: d.check.map(|c| c.as_u128()),
            at_us: to_micros(d.at),
            duration_us: d.duration.as_micros().try_into().unwrap_or(i64::MAX),
            attempt: d.attempt,
            code: d.code,
            error: d.error.clone(),
            gave_up: d.gave_up,
        }
    }
}

impl DeliveryRecord {
    pub(crate) fn into_delivery(self, channel: Uuid) -> Delivery {
        Delivery {
            channel,
            outbox_seq: self.outbox_seq,
            check: self.check.map(Uuid::from_u128),
            at: from_micros(self.at_us),
            duration: SignedDuration::from_micros(self.duration_us),
            attempt: self.attempt,
            code: self.code,
            error: self.error,
            gave_up: self.gave_up,
        }
    }
}

/// Retry state of an outbox entry (table `outbox_tries`).
#[derive(Encode, Decode)]
pub(crate) struct TriesRecord {
    pub done: u32,
    pub(crate) next_us: i64,
}

impl From<&Tries> for TriesRecord {
    fn from(t: &Tries) -> Self {
        TriesRecord {
            done: t.done,
            next_us: to_micros(t.next),
        }
    }
}

impl From<TriesRecord> for Tries {
    fn from(r: TriesRecord) -> Self {
        Tries {
            done: r.done,
            next: from_micros(r.next_us),
        }
    }
}
