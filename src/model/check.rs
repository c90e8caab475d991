//! A check and the rules that derive its displayed status, `next_ping` and the moment it goes
//! down (reference-behavior §3.5, §3.6, §5.1). This is the one place those rules live.
//!
//! Everything here is a plain function of the check and `now`: no clock, no I/O.

use std::borrow::Cow;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use uuid::Uuid;

use crate::model::events::Events;

use crate::schedule::Schedule;

/// How a check expects its pings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A ping every `timeout` seconds.
    Simple,
    /// A five-field cron expression in `tz`.
    Cron,
    /// A systemd OnCalendar expression in `tz`.
    OnCalendar,
}

/// The status kept in the store. `grace` is never stored: it is derived from the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredStatus {
    New,
    Up,
    Down,
    Paused,
}

impl StoredStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            StoredStatus::New => "new",
            StoredStatus::Up => "up",
            StoredStatus::Down => "down",
            StoredStatus::Paused => "paused",
        }
    }
}

/// The status shown to API clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    New,
    Up,
    Grace,
    Down,
    Paused,
    /// Only in API v1, for a run that started and has not exceeded its grace time.
    Started,
}

impl Status {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::Up => "up",
            Status::Grace => "grace",
            Status::Down => "down",
            Status::Paused => "paused",
            Status::Started => "started",
        }
    }
}

/// One monitored job.
#[derive(Debug, Clone)]
pub struct Check {
    pub uuid: Uuid,
    pub project: Uuid,
    /// Creation order across the whole store; lists are ordered by it.
    pub(crate) seq: u64,
    pub created: Timestamp,
    pub name: String,
    pub slug: String,
    pub tags: String,
    pub desc: String,
    pub kind: Kind,
    /// Seconds; kept when the check turns into a cron check, as the reference does.
    pub timeout: i64,
    pub grace: i64,
    /// Kept verbatim (untrimmed), also while the check is simple. The default and every
    /// canonical zone name are borrowed statics, so most checks allocate nothing for these.
    pub schedule: Cow<'static, str>,
    /// Time zone name as given (an allowed name or a legacy alias, evaluated as its canonical
    /// zone by [`Schedule::parse`](crate::schedule::Schedule::parse)).
    pub tz: Cow<'static, str>,
    /// The parsed `schedule` for cron and OnCalendar checks; `None` for simple checks.
    pub compiled: Option<Arc<Schedule>>,
    pub manual_resume: bool,
    /// `""` or `"POST"`.
    pub methods: Box<str>,
    pub start_kw: Box<str>,
    pub success_kw: Box<str>,
    pub failure_kw: Box<str>,
    pub filter_subject: bool,
    pub filter_body: bool,
    pub filter_http_body: bool,
    pub filter_default_fail: bool,
    pub status: StoredStatus,
    pub n_pings: u64,
    pub last_ping: Option<Timestamp>,
    pub last_start: Option<Timestamp>,
    pub last_start_rid: Option<Uuid>,
    pub(crate) last_duration: Option<SignedDuration>,
    /// Identifies the per-check badge (`/b/2/<badge_key>.svg`); not the check's UUID.
    pub badge_key: Uuid,
    /// Assigned channels, sorted by UUID.
    pub channels: Vec<Uuid>,
    /// The events this check chose for some of its channels, sorted by channel; the others
    /// send their channel's default set (`model::events`).
    pub channel_events: Vec<(Uuid, Events)>,
    /// The grace start of the last time the check was found late (a late notice goes out
    /// once per grace period); a ping that moves the grace start on arms it again.
    pub(crate) late_seen: Option<Timestamp>,
    /// Explicit failures in a row that take the check down (1: the first one does).
    pub fail_threshold: u32,
    /// Failures in a row so far that the threshold held back; a success clears it.
    pub(crate) fails_in_row: u32,
    /// Seconds a started run may take before the check goes down (0: `grace`, as without it).
    pub max_duration: i64,
    /// Seconds a run must at least take; a shorter one counts as a failure (0: off).
    pub min_duration: i64,
    /// Until when the check's alerts are held (status and flips are still recorded).
    pub snoozed_until: Option<Timestamp>,
    /// A recurring quiet window: alerts are held while it is open, as by a snooze.
    pub quiet: Option<Box<QuietWindow>>,
    /// Checks of the same project this one depends on: while one of them is down, this
    /// check's down alerts wait for its recovery. Sorted.
    pub parents: Vec<Uuid>,
    /// The alert that quiet time or a down parent is holding back (`model::snooze`).
    pub(crate) held: Option<Box<HeldAlert>>,
}

/// What quiet time or a down parent held back: receivers were last told `told`; the check has
/// since become `new` at `at` for `reason`. At `until` (the end of the quiet time; `None`:
/// when the parents recover) it is sent once if the two differ in being down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldAlert {
    pub told: StoredStatus,
    pub new: StoredStatus,
    pub at: Timestamp,
    pub reason: String,
    pub until: Option<Timestamp>,
}

/// A window that opens at every fire time of a cron or OnCalendar `schedule` in `tz` and
/// stays open `duration` seconds ("Sundays 02:00-04:00 Europe/Riga": `Sun 02:00`, 7200).
#[derive(Debug, Clone)]
pub struct QuietWindow {
    pub schedule: String,
    pub tz: String,
    pub duration: i64,
    /// `schedule` in `tz`, compiled; `None` only if it no longer parses (it was validated).
    pub compiled: Option<Arc<Schedule>>,
}

/// Two windows are equal when their settings are (the compiled form follows from them).
impl PartialEq for QuietWindow {
    fn eq(&self, other: &Self) -> bool {
        (&self.schedule, &self.tz, self.duration) == (&other.schedule, &other.tz, other.duration)
    }
}

impl Eq for QuietWindow {}

impl QuietWindow {
    /// The window compiled from its settings.
    pub(crate) fn new(schedule: &str, tz: &str, duration: i64) -> QuietWindow {
        QuietWindow {
            schedule: schedule.to_string(),
            tz: tz.to_string(),
            duration,
            compiled: Schedule::parse(schedule, tz).ok().map(Arc::new),
        }
    }
}

impl Check {
    /// A check with the defaults of reference-behavior §2.5.
    pub fn new(uuid: Uuid, project: Uuid, seq: u64, created: Timestamp, badge_key: Uuid) -> Check {
        use crate::model::limits::{
            DEFAULT_GRACE_SECS, DEFAULT_SCHEDULE, DEFAULT_TIMEOUT_SECS, DEFAULT_TZ,
        };
        Check {
            uuid,
            project,
            seq,
            created,
            name: String::new(),
            slug: String::new(),
            tags: String::new(),
            desc: String::new(),
            kind: Kind::Simple,
            timeout: DEFAULT_TIMEOUT_SECS,
            grace: DEFAULT_GRACE_SECS,
            schedule: Cow::Borrowed(DEFAULT_SCHEDULE),
            tz: Cow::Borrowed(DEFAULT_TZ),
            compiled: None,
            manual_resume: false,
            methods: Box::default(),
            start_kw: Box::default(),
            success_kw: Box::default(),
            failure_kw: Box::default(),
            filter_subject: false,
            filter_body: false,
            filter_http_body: false,
            filter_default_fail: false,
            status: StoredStatus::New,
            n_pings: 0,
            last_ping: None,
            last_start: None,
            last_start_rid: None,
            last_duration: None,
            badge_key,
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
        }
    }

    /// Whether the rules of issue 17 are all at their defaults (such a check is stored in the
    /// first record format, which older releases read).
    pub(crate) fn has_default_rules(&self) -> bool {
        self.fail_threshold == 1
            && self.fails_in_row == 0
            && self.max_duration == 0
            && self.min_duration == 0
            && self.snoozed_until.is_none()
            && self.quiet.is_none()
            && self.parents.is_empty()
            && self.held.is_none()
            && self.channel_events.is_empty()
            && self.late_seen.is_none()
    }

    /// Whether an explicit snooze runs at `now` (quiet windows: `model::snooze::is_quiet`).
    pub(crate) fn is_snoozed(&self, now: Timestamp) -> bool {
        self.snoozed_until.is_some_and(|until| now < until)
    }

    /// The next moment the deadline engine must look at the check: when it turns late, when
    /// it goes down, or when the quiet time that holds an alert ends. `None` when nothing is
    /// due.
    pub(crate) fn next_attention(&self) -> Option<Timestamp> {
        let release = self.held.as_ref().and_then(|h| h.until);
        // The schedule is asked once for both moments (every ping recomputes this, and a
        // cron check's next fire time is its costly part); a bounded run needs neither.
        let expected = self
            .bounded_run()
            .is_none()
            .then(|| self.expected_after_last_ping())
            .flatten();
        [
            self.late_from(expected),
            self.alert_after_from(expected),
            release,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// When the check enters its grace period (its status turns `grace`), if it has not been
    /// seen late for that grace period yet: the moment of a late notice. `None` for a check
    /// that is not up, has no grace, or runs under `max_duration`.
    pub(crate) fn late_at(&self) -> Option<Timestamp> {
        self.late_from(self.expected_after_last_ping())
    }

    /// [`Check::late_at`] given [`Check::expected_after_last_ping`].
    fn late_from(&self, expected: Option<Timestamp>) -> Option<Timestamp> {
        if self.status != StoredStatus::Up || self.bounded_run().is_some() {
            return None;
        }
        let at = expected?;
        let down = at.checked_add(self.grace()).ok()?;
        let seen = self.late_seen.is_some_and(|s| s >= at);
        (down > at && !seen).then_some(at)
    }

    /// When a started run goes down: `max_duration` after its start when set, else `grace`.
    fn run_limit(&self) -> SignedDuration {
        if self.max_duration > 0 {
            SignedDuration::from_secs(self.max_duration)
        } else {
            self.grace()
        }
    }

    /// A run in progress whose `max_duration` governs the deadline: while it runs, the
    /// schedule's own deadline waits (a long job that started on time is not late).
    fn bounded_run(&self) -> Option<Timestamp> {
        (self.max_duration > 0 && self.status != StoredStatus::Down)
            .then_some(self.last_start)
            .flatten()
    }

    /// The check's tags: split on spaces, empty items dropped.
    pub(crate) fn tag_list(&self) -> impl Iterator<Item = &str> {
        self.tags.split(' ').filter(|t| !t.is_empty())
    }

    pub(crate) fn has_tag(&self, tag: &str) -> bool {
        self.tag_list().any(|t| t == tag)
    }

    fn grace(&self) -> SignedDuration {
        SignedDuration::from_secs(self.grace)
    }

    /// When the next ping is due, ignoring a running start (§3.5 step 3): only for stored `up`.
    /// `None` means "never" (not up, or a schedule with no further fire time).
    fn expected_after_last_ping(&self) -> Option<Timestamp> {
        if self.status != StoredStatus::Up {
            return None;
        }
        let last_ping = self.last_ping?;
        match self.kind {
            Kind::Simple => last_ping
                .checked_add(SignedDuration::from_secs(self.timeout))
                .ok(),
            Kind::Cron | Kind::OnCalendar => self.compiled.as_ref()?.next_after(last_ping),
        }
    }

    /// `next_ping` of §3.6: when the grace period starts, taking a running start into account.
    pub(crate) fn grace_start(&self) -> Option<Timestamp> {
        self.grace_start_from(self.expected_after_last_ping())
    }

    /// [`Check::grace_start`] given [`Check::expected_after_last_ping`] as `base`.
    fn grace_start_from(&self, base: Option<Timestamp>) -> Option<Timestamp> {
        match self.last_start {
            Some(start) if self.status != StoredStatus::Down => {
                Some(base.map_or(start, |b| b.min(start)))
            }
            _ => base,
        }
    }

    /// The moment the check goes down if nothing else happens (§5.1); `None` when it never does.
    pub fn alert_after(&self) -> Option<Timestamp> {
        self.alert_after_from(self.expected_after_last_ping())
    }

    /// [`Check::alert_after`] given [`Check::expected_after_last_ping`].
    fn alert_after_from(&self, expected: Option<Timestamp>) -> Option<Timestamp> {
        if let Some(start) = self.bounded_run() {
            return start.checked_add(self.run_limit()).ok();
        }
        self.grace_start_from(expected)?
            .checked_add(self.grace())
            .ok()
    }

    /// The displayed status at `now` (§3.5). `v1` selects API v1's `started` status.
    pub fn status_at(&self, now: Timestamp, v1: bool) -> Status {
        if let Some(start) = self.last_start {
            match start.checked_add(self.run_limit()) {
                Ok(end) if now >= end => return Status::Down,
                _ if v1 => return Status::Started,
                _ => {}
            }
        }
        match self.status {
            StoredStatus::New => Status::New,
            StoredStatus::Paused => Status::Paused,
            StoredStatus::Down => Status::Down,
            StoredStatus::Up if self.bounded_run().is_some() => Status::Up,
            StoredStatus::Up => {
                let Some(grace_start) = self.expected_after_last_ping() else {
                    return Status::Up;
                };
                match grace_start.checked_add(self.grace()) {
                    Ok(down_at) if now >= down_at => Status::Down,
                    _ if now >= grace_start => Status::Grace,
                    _ => Status::Up,
                }
            }
        }
    }

    /// `unique_key` of §3.3: hex SHA-1 of the first 16 hex digits of the UUID.
    pub fn unique_key(&self) -> String {
        unique_key(&self.uuid)
    }
}

/// `unique_key` of §3.3 for a check UUID.
pub fn unique_key(uuid: &Uuid) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(40);
    for byte in unique_key_digest(uuid) {
        out.push(HEX[usize::from(byte >> 4)] as char);
        out.push(HEX[usize::from(byte & 0xf)] as char);
    }
    out
}

/// The 20 bytes behind a `unique_key` (what its 40 hex digits spell).
pub(crate) fn unique_key_digest(uuid: &Uuid) -> [u8; 20] {
    use sha1::{Digest, Sha1};
    let simple = uuid.simple().to_string();
    Sha1::digest(&simple.as_bytes()[..16]).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_fits_the_memory_budget_of_a_million_checks() {
        // A million checks must stay under 1 GiB RSS (docs/benchmarks.md, issue 5); the
        // record itself is about half of each check's share. A field that grows it past this
        // belongs in a box of its own (like `quiet` and `held`).
        let size = std::mem::size_of::<Check>();
        assert!(size <= 568, "Check is {size} bytes");
    }

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("test timestamp")
    }

    fn up_check(last_ping: &str) -> Check {
        let mut c = Check::new(
            Uuid::nil(),
            Uuid::nil(),
            1,
            ts("2000-01-01T00:00:00Z"),
            Uuid::nil(),
        );
        c.status = StoredStatus::Up;
        c.last_ping = Some(ts(last_ping));
        c
    }

    #[test]
    fn unique_key_matches_reference_example() {
        let uuid: Uuid = "cf204185-012a-4bc0-8efb-5dc6ccf91181"
            .parse()
            .expect("uuid");
        assert_eq!(
            unique_key(&uuid),
            "23271726e9a15fc8c0b82d52b9d0bf059fc03344"
        );
    }

    #[test]
    fn new_paused_down_show_stored_status() {
        let mut c = up_check("2000-01-01T00:00:00Z");
        let now = ts("2000-01-01T00:00:01Z");
        for (stored, shown) in [
            (StoredStatus::New, Status::New),
            (StoredStatus::Paused, Status::Paused),
            (StoredStatus::Down, Status::Down),
        ] {
            c.status = stored;
            assert_eq!(c.status_at(now, false), shown);
            assert_eq!(c.grace_start(), None);
            assert_eq!(c.alert_after(), None);
        }
    }

    #[test]
    fn simple_check_goes_through_grace_with_inclusive_bounds() {
        let c = up_check("2000-01-01T00:00:00Z");
        assert_eq!(c.status_at(ts("2000-01-01T23:59:59Z"), false), Status::Up);
        assert_eq!(
            c.status_at(ts("2000-01-02T00:00:00Z"), false),
            Status::Grace
        );
        assert_eq!(
            c.status_at(ts("2000-01-02T00:59:59Z"), false),
            Status::Grace
        );
        assert_eq!(c.status_at(ts("2000-01-02T01:00:00Z"), false), Status::Down);
        assert_eq!(c.grace_start(), Some(ts("2000-01-02T00:00:00Z")));
        assert_eq!(c.alert_after(), Some(ts("2000-01-02T01:00:00Z")));
    }

    #[test]
    fn running_start_moves_next_ping_and_can_go_down() {
        let mut c = up_check("2000-01-01T00:00:00Z");
        c.last_start = Some(ts("2000-01-01T05:00:00Z"));
        assert_eq!(c.grace_start(), Some(ts("2000-01-01T05:00:00Z")));
        assert_eq!(c.alert_after(), Some(ts("2000-01-01T06:00:00Z")));
        assert_eq!(
            c.status_at(ts("2000-01-01T05:05:00Z"), true),
            Status::Started
        );
        assert_eq!(c.status_at(ts("2000-01-01T05:05:00Z"), false), Status::Up);
        assert_eq!(c.status_at(ts("2000-01-01T06:00:00Z"), false), Status::Down);
    }

    #[test]
    fn start_on_new_or_paused_check_sets_a_deadline() {
        for stored in [StoredStatus::New, StoredStatus::Paused] {
            let mut c = up_check("2000-01-01T00:00:00Z");
            c.status = stored;
            c.last_start = Some(ts("2000-01-01T00:00:00Z"));
            assert_eq!(c.alert_after(), Some(ts("2000-01-01T01:00:00Z")));
            assert_eq!(c.status_at(ts("2000-01-01T02:00:00Z"), false), Status::Down);
        }
    }

    #[test]
    fn down_check_ignores_running_start_for_next_ping() {
        let mut c = up_check("2000-01-01T00:00:00Z");
        c.status = StoredStatus::Down;
        c.last_start = Some(ts("2000-01-01T00:00:00Z"));
        assert_eq!(c.grace_start(), None);
        assert_eq!(c.alert_after(), None);
    }

    #[test]
    fn max_duration_bounds_a_started_run_instead_of_grace() {
        let mut c = up_check("2000-01-01T00:00:00Z");
        c.max_duration = 3 * 3600;
        // Due at 01-02 00:00 (+1 h grace); the run started on time and may take three hours.
        c.last_start = Some(ts("2000-01-01T23:30:00Z"));
        assert_eq!(c.alert_after(), Some(ts("2000-01-02T02:30:00Z")));
        assert_eq!(c.status_at(ts("2000-01-02T01:30:00Z"), false), Status::Up);
        assert_eq!(
            c.status_at(ts("2000-01-02T01:30:00Z"), true),
            Status::Started
        );
        assert_eq!(c.status_at(ts("2000-01-02T02:30:00Z"), false), Status::Down);
        // Shorter than grace: the run goes down sooner than grace alone would take it.
        c.max_duration = 60;
        assert_eq!(c.alert_after(), Some(ts("2000-01-01T23:31:00Z")));
        assert_eq!(c.status_at(ts("2000-01-01T23:31:00Z"), false), Status::Down);
        // No run in progress: the schedule's deadline as before.
        c.last_start = None;
        assert_eq!(c.alert_after(), Some(ts("2000-01-02T01:00:00Z")));
        assert!(!c.has_default_rules());
    }

    #[test]
    fn tags_split_on_spaces() {
        let mut c = up_check("2000-01-01T00:00:00Z");
        c.tags = " foo  bar ".into();
        assert_eq!(c.tag_list().collect::<Vec<_>>(), ["foo", "bar"]);
        assert!(c.has_tag("bar"));
        assert!(!c.has_tag("ba"));
    }
}
