//! The body of a create or update request, validated (reference-behavior §2.1).
//!
//! Validation is strict, field by field in the reference's fixed order, and reports only the
//! first error as `json validation error: <message>`. A validated [`CheckSpec`] carries only
//! what the body named, so updates change nothing else.

use serde_json::{Map, Value};

use crate::model::ApiVersion;
use crate::model::check::{Check, Kind};
use crate::model::events::Events;
use crate::model::limits::{
    DESC_MAX_CHARS, KEYWORDS_MAX_CHARS, MAX_FAIL_THRESHOLD, MAX_PERIOD_SECS, MAX_RUN_BOUND_SECS,
    MIN_PERIOD_SECS, NAME_MAX_CHARS, SCHEDULE_MAX_CHARS, SLUG_MAX_CHARS, TAGS_MAX_CHARS,
};
use crate::model::quiet::QuietSpec;
use crate::model::slug::slugify;
use crate::schedule::{self, Schedule, ScheduleKind};

/// Fields that `unique` may name for an upsert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UniqueField {
    Name,
    Slug,
    Tags,
    Timeout,
    Grace,
}

/// A validated create/update body. `None` means "not in the body".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckSpec {
    pub channels: Option<String>,
    pub desc: Option<String>,
    pub failure_kw: Option<String>,
    pub filter_subject: Option<bool>,
    pub filter_body: Option<bool>,
    pub filter_http_body: Option<bool>,
    pub filter_default_fail: Option<bool>,
    pub grace: Option<i64>,
    pub manual_resume: Option<bool>,
    pub methods: Option<String>,
    pub name: Option<String>,
    /// Verbatim, as sent; known to be a valid cron or OnCalendar expression.
    pub schedule: Option<String>,
    pub slug: Option<String>,
    pub start_kw: Option<String>,
    pub(crate) subject: Option<String>,
    pub(crate) subject_fail: Option<String>,
    pub success_kw: Option<String>,
    pub tags: Option<String>,
    pub timeout: Option<i64>,
    /// Time zone name as given: an allowed name or a legacy alias, which schedules evaluate
    /// as its canonical zone (issue 14.10).
    pub tz: Option<&'static str>,
    pub(crate) unique: Option<Vec<UniqueField>>,
    /// Extensions of issue 17 (docs/api-extensions.md).
    pub fail_threshold: Option<u32>,
    pub max_duration: Option<i64>,
    pub min_duration: Option<i64>,
    /// A quiet window's schedule ("" removes the window), zone and length.
    pub quiet: QuietSpec,
    /// Comma-separated UUIDs of parent checks (resolved by the service, as `channels`).
    pub parents: Option<String>,
    /// The events chosen per channel: (channel identifier as in `channels`, events),
    /// resolved by the service.
    pub channel_events: Option<Vec<(String, Events)>>,
}

/// The first validation error of a body; `Display` gives the message without its prefix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

impl SpecError {
    pub(crate) fn new(field: &str, what: &str) -> SpecError {
        SpecError(format!("{field} {what}"))
    }
}

/// The reference's message for an invalid schedule, and for a cron expression what is wrong
/// with it ("expected 5 fields, got 4", the field that is wrong): clients that match the
/// reference's message exactly send other things than near-cron (`"bogus"` keeps it bare).
pub(crate) fn schedule_message(expr: &str, e: &schedule::ScheduleError) -> String {
    let base = "schedule is not a valid cron or OnCalendar expression";
    if schedule::looks_like_cron(expr) || schedule::detect_kind(expr) == ScheduleKind::Cron {
        format!("{base}: {e}")
    } else {
        base.to_string()
    }
}

pub(crate) fn string(
    body: &Map<String, Value>,
    field: &str,
    max: Option<usize>,
) -> Result<Option<String>, SpecError> {
    match body.get(field) {
        None => Ok(None),
        Some(Value::String(s)) => {
            if max.is_some_and(|max| s.chars().count() > max) {
                return Err(SpecError::new(field, "is too long"));
            }
            Ok(Some(s.clone()))
        }
        Some(_) => Err(SpecError::new(field, "is not a string")),
    }
}

fn boolean(body: &Map<String, Value>, field: &str) -> Result<Option<bool>, SpecError> {
    match body.get(field) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(SpecError::new(field, "is not a boolean")),
    }
}

/// An integer number of seconds within the period limits (see [`integer`]).
fn period(body: &Map<String, Value>, field: &str) -> Result<Option<i64>, SpecError> {
    integer(body, field, MIN_PERIOD_SECS, MAX_PERIOD_SECS)
}

/// An integer within `min..=max`. JSON `true`/`false` count as 1/0 (as in the reference);
/// floats, strings and `null` are not numbers. Integers of any size are reported as too
/// large or too small rather than failing (decision 5).
pub(crate) fn integer(
    body: &Map<String, Value>,
    field: &str,
    min: i64,
    max: i64,
) -> Result<Option<i64>, SpecError> {
    let value = match body.get(field) {
        None => return Ok(None),
        Some(Value::Bool(b)) => i128::from(*b),
        Some(Value::Number(n)) => {
            let text = n.to_string();
            let digits = text.strip_prefix('-').unwrap_or(&text);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(SpecError::new(field, "is not a number"));
            }
            match text.parse::<i128>() {
                Ok(v) => v,
                Err(_) if text.starts_with('-') => i128::MIN,
                Err(_) => i128::MAX,
            }
        }
        Some(_) => return Err(SpecError::new(field, "is not a number")),
    };
    if value < i128::from(min) {
        return Err(SpecError::new(field, "is too small"));
    }
    if value > i128::from(max) {
        return Err(SpecError::new(field, "is too large"));
    }
    // Within the limits above, so it fits.
    Ok(Some(value as i64))
}

fn is_slug(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// The rules for a slug given anywhere a check gets one (the API, `?create=1` pings): at most
/// [`SLUG_MAX_CHARS`] characters of `a-z0-9-_`.
pub(crate) fn check_slug(slug: &str) -> Result<(), SpecError> {
    if slug.chars().count() > SLUG_MAX_CHARS {
        return Err(SpecError::new("slug", "is too long"));
    }
    if !is_slug(slug) {
        return Err(SpecError::new("slug", "does not match pattern"));
    }
    Ok(())
}

/// The rule for a name given anywhere a check gets one: at most [`NAME_MAX_CHARS`] characters.
pub(crate) fn check_name(name: &str) -> Result<(), SpecError> {
    if name.chars().count() > NAME_MAX_CHARS {
        return Err(SpecError::new("name", "is too long"));
    }
    Ok(())
}

/// Validates a create/update body. Unknown members (including `api_key`) are ignored.
pub fn parse_spec(body: &Map<String, Value>) -> Result<CheckSpec, SpecError> {
    let mut spec = CheckSpec {
        channels: string(body, "channels", None)?,
        desc: string(body, "desc", Some(DESC_MAX_CHARS))?,
        failure_kw: string(body, "failure_kw", Some(KEYWORDS_MAX_CHARS))?,
        filter_subject: boolean(body, "filter_subject")?,
        filter_body: boolean(body, "filter_body")?,
        filter_http_body: boolean(body, "filter_http_body")?,
        filter_default_fail: boolean(body, "filter_default_fail")?,
        grace: period(body, "grace")?,
        manual_resume: boolean(body, "manual_resume")?,
        ..CheckSpec::default()
    };
    spec.methods = match body.get("methods") {
        None => None,
        Some(Value::String(m)) if m.is_empty() || m == "POST" => Some(m.clone()),
        Some(_) => return Err(SpecError::new("methods", "has unexpected value")),
    };
    spec.name = string(body, "name", Some(NAME_MAX_CHARS))?;
    spec.schedule = string(body, "schedule", Some(SCHEDULE_MAX_CHARS))?;
    if let Some(expr) = &spec.schedule
        && let Err(e) = schedule::validate(expr)
    {
        return Err(SpecError(schedule_message(expr, &e)));
    }
    spec.slug = string(body, "slug", Some(SLUG_MAX_CHARS))?;
    if let Some(slug) = &spec.slug {
        check_slug(slug)?;
    }
    spec.start_kw = string(body, "start_kw", Some(KEYWORDS_MAX_CHARS))?;
    spec.subject = string(body, "subject", Some(KEYWORDS_MAX_CHARS))?;
    spec.subject_fail = string(body, "subject_fail", Some(KEYWORDS_MAX_CHARS))?;
    spec.success_kw = string(body, "success_kw", Some(KEYWORDS_MAX_CHARS))?;
    spec.tags = string(body, "tags", Some(TAGS_MAX_CHARS))?;
    spec.timeout = period(body, "timeout")?;
    spec.tz = match string(body, "tz", None)? {
        None => None,
        Some(name) => match schedule::tz::accepted(&name) {
            Some(name) => Some(name),
            None => return Err(SpecError::new("tz", "is not a valid timezone")),
        },
    };
    spec.unique = match body.get("unique") {
        None => None,
        Some(Value::Array(items)) => {
            let mut fields = Vec::with_capacity(items.len());
            for item in items {
                let field = match item.as_str() {
                    Some("name") => UniqueField::Name,
                    Some("slug") => UniqueField::Slug,
                    Some("tags") => UniqueField::Tags,
                    Some("timeout") => UniqueField::Timeout,
                    Some("grace") => UniqueField::Grace,
                    _ => return Err(SpecError("an item in 'unique' has unexpected value".into())),
                };
                fields.push(field);
            }
            Some(fields)
        }
        Some(_) => return Err(SpecError::new("unique", "is not an array")),
    };
    spec.fail_threshold =
        integer(body, "fail_threshold", 1, MAX_FAIL_THRESHOLD)?.and_then(|n| u32::try_from(n).ok());
    spec.max_duration = integer(body, "max_duration", 0, MAX_RUN_BOUND_SECS)?;
    spec.min_duration = integer(body, "min_duration", 0, MAX_RUN_BOUND_SECS)?;
    spec.quiet = QuietSpec::parse(body)?;
    spec.parents = string(body, "parents", None)?;
    spec.channel_events = channel_events(body)?;
    Ok(spec)
}

/// `channel_events`: an object from channel identifier to a comma-separated list of events.
fn channel_events(body: &Map<String, Value>) -> Result<Option<Vec<(String, Events)>>, SpecError> {
    let field = "channel_events";
    let items = match body.get(field) {
        None => return Ok(None),
        Some(Value::Object(items)) => items,
        Some(_) => return Err(SpecError::new(field, "is not an object")),
    };
    let mut chosen = Vec::with_capacity(items.len());
    for (channel, events) in items {
        let Value::String(events) = events else {
            return Err(SpecError(format!(
                "{field}: the events of {channel} are not a string"
            )));
        };
        let events =
            Events::parse(events).map_err(|e| SpecError(format!("{field}: {channel}: {e}")))?;
        chosen.push((channel.clone(), events));
    }
    Ok(Some(chosen))
}

/// Applies a validated body to a check, as the reference's `_update` does (§2.2 steps 2-7);
/// channels are resolved and assigned by the caller. On error the check may be half-changed,
/// so callers apply to a copy.
pub(crate) fn apply(
    check: &mut Check,
    spec: &CheckSpec,
    version: ApiVersion,
) -> Result<(), SpecError> {
    if let Some(name) = &spec.name {
        check.name.clone_from(name);
        if version.derives_slug() {
            check.slug = slugify(name);
        }
    }
    if let Some(expr) = spec.schedule.as_ref().filter(|s| !s.is_empty()) {
        check.kind = match schedule::detect_kind(expr) {
            ScheduleKind::Cron => Kind::Cron,
            ScheduleKind::OnCalendar => Kind::OnCalendar,
        };
        check.schedule = std::borrow::Cow::Owned(expr.clone());
    } else if let Some(timeout) = spec.timeout {
        check.kind = Kind::Simple;
        check.timeout = timeout;
    }
    let copy_boxed = |target: &mut Box<str>, source: &Option<String>| {
        if let Some(v) = source {
            *target = v.as_str().into();
        }
    };
    let recompute_filter_subject = spec.subject.is_some() || spec.subject_fail.is_some();
    copy_boxed(&mut check.success_kw, &spec.subject);
    copy_boxed(&mut check.failure_kw, &spec.subject_fail);
    if recompute_filter_subject {
        check.filter_subject = !check.success_kw.is_empty() || !check.failure_kw.is_empty();
    }
    let copy = |target: &mut String, source: &Option<String>| {
        if let Some(v) = source {
            target.clone_from(v);
        }
    };
    copy(&mut check.slug, &spec.slug);
    copy(&mut check.tags, &spec.tags);
    copy(&mut check.desc, &spec.desc);
    copy_boxed(&mut check.methods, &spec.methods);
    if let Some(tz) = spec.tz {
        check.tz = std::borrow::Cow::Borrowed(tz);
    }
    copy_boxed(&mut check.start_kw, &spec.start_kw);
    copy_boxed(&mut check.success_kw, &spec.success_kw);
    copy_boxed(&mut check.failure_kw, &spec.failure_kw);
    let flag = |target: &mut bool, source: Option<bool>| {
        if let Some(v) = source {
            *target = v;
        }
    };
    flag(&mut check.manual_resume, spec.manual_resume);
    flag(&mut check.filter_subject, spec.filter_subject);
    flag(&mut check.filter_body, spec.filter_body);
    flag(&mut check.filter_http_body, spec.filter_http_body);
    flag(&mut check.filter_default_fail, spec.filter_default_fail);
    if let Some(grace) = spec.grace {
        check.grace = grace;
    }
    if let Some(threshold) = spec.fail_threshold {
        check.fail_threshold = threshold;
    }
    if let Some(max) = spec.max_duration {
        check.max_duration = max;
    }
    if let Some(min) = spec.min_duration {
        check.min_duration = min;
    }
    if !spec.quiet.is_empty() {
        check.quiet = spec.quiet.apply(check.quiet.as_deref())?.map(Box::new);
    }
    if check.max_duration > 0 && check.min_duration >= check.max_duration {
        return Err(SpecError(
            "min_duration must be less than max_duration".into(),
        ));
    }
    check.compiled = match check.kind {
        Kind::Simple => None,
        Kind::Cron | Kind::OnCalendar => match Schedule::parse(&check.schedule, &check.tz) {
            Ok(s) => Some(std::sync::Arc::new(s)),
            Err(_) => {
                return Err(SpecError::new(
                    "schedule",
                    "is not a valid cron or OnCalendar expression",
                ));
            }
        },
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<CheckSpec, String> {
        let Value::Object(map) = v else {
            panic!("test body must be an object")
        };
        parse_spec(&map).map_err(|e| e.to_string())
    }

    #[test]
    fn empty_body_is_valid_and_empty() {
        assert_eq!(parse(json!({})), Ok(CheckSpec::default()));
    }

    #[test]
    fn messages_match_the_reference() {
        let cases = [
            (json!({"timeout": 59}), "timeout is too small"),
            (json!({"timeout": 31_536_001}), "timeout is too large"),
            (json!({"grace": 59}), "grace is too small"),
            (json!({"timeout": "3600"}), "timeout is not a number"),
            (json!({"timeout": 3600.5}), "timeout is not a number"),
            (json!({"timeout": 3600.0}), "timeout is not a number"),
            (json!({"timeout": true}), "timeout is too small"),
            (json!({"timeout": null}), "timeout is not a number"),
            (json!({"grace": [60]}), "grace is not a number"),
            (json!({"name": 123}), "name is not a string"),
            (json!({"name": null}), "name is not a string"),
            (json!({"name": "x".repeat(101)}), "name is too long"),
            (json!({"tags": ["a"]}), "tags is not a string"),
            (json!({"desc": 5}), "desc is not a string"),
            (json!({"slug": "Bad!"}), "slug does not match pattern"),
            (json!({"slug": "ümlaut"}), "slug does not match pattern"),
            (json!({"slug": "a".repeat(101)}), "slug is too long"),
            (
                json!({"manual_resume": "yes"}),
                "manual_resume is not a boolean",
            ),
            (
                json!({"manual_resume": 1}),
                "manual_resume is not a boolean",
            ),
            (
                json!({"filter_http_body": "true"}),
                "filter_http_body is not a boolean",
            ),
            (
                json!({"channel_events": "down"}),
                "channel_events is not an object",
            ),
            (
                json!({"channel_events": {"ops": 1}}),
                "channel_events: the events of ops are not a string",
            ),
            (
                json!({"channel_events": {"ops": "down,grace"}}),
                "channel_events: ops: unknown event \"grace\" (use down, up, late or failure)",
            ),
            (json!({"methods": "GET"}), "methods has unexpected value"),
            (json!({"methods": "post"}), "methods has unexpected value"),
            (json!({"methods": null}), "methods has unexpected value"),
            (json!({"schedule": 5}), "schedule is not a string"),
            (
                json!({"schedule": "bogus"}),
                "schedule is not a valid cron or OnCalendar expression",
            ),
            (
                json!({"schedule": ""}),
                "schedule is not a valid cron or OnCalendar expression",
            ),
            (
                json!({"schedule": "1,".repeat(100) + "1 * * * *"}),
                "schedule is too long",
            ),
            (json!({"tz": "Nowhere/City"}), "tz is not a valid timezone"),
            (json!({"tz": ""}), "tz is not a valid timezone"),
            (json!({"channels": 1}), "channels is not a string"),
            (json!({"channels": null}), "channels is not a string"),
            (
                json!({"success_kw": "k".repeat(201)}),
                "success_kw is too long",
            ),
            (json!({"subject": false}), "subject is not a string"),
            (json!({"unique": "name"}), "unique is not an array"),
            (json!({"unique": null}), "unique is not an array"),
            (
                json!({"unique": ["status"]}),
                "an item in 'unique' has unexpected value",
            ),
        ];
        for (body, message) in cases {
            assert_eq!(parse(body.clone()), Err(message.to_string()), "{body}");
        }
    }

    #[test]
    fn alerting_rule_fields_are_validated_like_the_others() {
        let cases = [
            (json!({"fail_threshold": 0}), "fail_threshold is too small"),
            (
                json!({"fail_threshold": 101}),
                "fail_threshold is too large",
            ),
            (
                json!({"fail_threshold": "3"}),
                "fail_threshold is not a number",
            ),
            (json!({"max_duration": -1}), "max_duration is too small"),
            (
                json!({"max_duration": 31_536_001}),
                "max_duration is too large",
            ),
            (
                json!({"min_duration": null}),
                "min_duration is not a number",
            ),
            (json!({"min_duration": 1.5}), "min_duration is not a number"),
        ];
        for (body, message) in cases {
            assert_eq!(parse(body.clone()), Err(message.to_string()), "{body}");
        }
        let spec = parse(json!({"fail_threshold": 3, "max_duration": 5, "min_duration": 0}))
            .expect("valid");
        assert_eq!(
            (spec.fail_threshold, spec.max_duration, spec.min_duration),
            (Some(3), Some(5), Some(0))
        );
    }

    #[test]
    fn min_duration_must_stay_below_a_max_duration() {
        let mut c = Check::new(
            uuid::Uuid::nil(),
            uuid::Uuid::nil(),
            1,
            jiff::Timestamp::UNIX_EPOCH,
            uuid::Uuid::nil(),
        );
        let spec = parse(json!({"max_duration": 600, "min_duration": 60})).expect("valid");
        apply(&mut c, &spec, ApiVersion::V3).expect("60 < 600");
        let spec = parse(json!({"max_duration": 60})).expect("valid");
        let err = apply(&mut c.clone(), &spec, ApiVersion::V3).expect_err("60 is not < 60");
        assert_eq!(err.0, "min_duration must be less than max_duration");
        // Without a max_duration any min_duration goes.
        let spec = parse(json!({"max_duration": 0, "min_duration": 7200})).expect("valid");
        apply(&mut c, &spec, ApiVersion::V3).expect("no upper bound");
    }

    #[test]
    fn a_quiet_window_is_set_changed_field_by_field_and_removed() {
        let mut c = Check::new(
            uuid::Uuid::nil(),
            uuid::Uuid::nil(),
            1,
            jiff::Timestamp::UNIX_EPOCH,
            uuid::Uuid::nil(),
        );
        for (body, message) in [
            (
                json!({"quiet_schedule": "Sundays"}),
                "quiet_schedule is not a valid cron or OnCalendar expression",
            ),
            (
                json!({"quiet_tz": "Mars/Base"}),
                "quiet_tz is not a valid timezone",
            ),
            (json!({"quiet_duration": 0}), "quiet_duration is too small"),
        ] {
            assert_eq!(parse(body.clone()), Err(message.to_string()), "{body}");
        }
        let spec = parse(json!({"quiet_schedule": "Sun 02:00", "quiet_tz": "Europe/Riga"}))
            .expect("valid");
        apply(&mut c, &spec, ApiVersion::V3).expect("applies");
        let q = c.quiet.as_ref().expect("a window");
        assert_eq!(
            (q.tz.as_str(), q.duration),
            ("Europe/Riga", 3600),
            "default length"
        );
        let spec = parse(json!({"quiet_duration": 7200})).expect("valid");
        apply(&mut c, &spec, ApiVersion::V3).expect("applies");
        let q = c.quiet.as_ref().expect("a window");
        assert_eq!(
            (q.schedule.as_str(), q.duration),
            ("Sun 02:00", 7200),
            "the rest kept"
        );
        let spec = parse(json!({"quiet_schedule": ""})).expect("valid");
        apply(&mut c, &spec, ApiVersion::V3).expect("applies");
        assert!(c.quiet.is_none());
    }

    #[test]
    fn huge_integers_are_out_of_range_not_crashes() {
        let body: Value =
            serde_json::from_str(r#"{"timeout": 1000000000000000000000000000000}"#).expect("json");
        assert_eq!(parse(body), Err("timeout is too large".into()));
        let body: Value =
            serde_json::from_str(r#"{"grace": -1000000000000000000000000000000}"#).expect("json");
        assert_eq!(parse(body), Err("grace is too small".into()));
    }

    #[test]
    fn first_error_in_field_order_wins() {
        assert_eq!(
            parse(json!({"timeout": 1, "desc": 5})),
            Err("desc is not a string".into())
        );
        assert_eq!(
            parse(json!({"tz": "x", "channels": 1})),
            Err("channels is not a string".into())
        );
    }

    #[test]
    fn boundaries_are_accepted() {
        let spec = parse(json!({"timeout": 60, "grace": 31_536_000})).expect("valid");
        assert_eq!((spec.timeout, spec.grace), (Some(60), Some(31_536_000)));
    }

    #[test]
    fn valid_values_are_kept() {
        let spec = parse(json!({
            "name": "Backups", "slug": "a-z_0-9", "methods": "POST", "tz": "Europe/Kiev",
            "schedule": "0 3 * * *", "unique": ["name", "grace"], "api_key": "ignored"
        }))
        .expect("valid");
        // Kept as given (a legacy name is evaluated as its canonical zone).
        assert_eq!(spec.tz, Some("Europe/Kiev"));
        assert_eq!(spec.schedule.as_deref(), Some("0 3 * * *"));
        assert_eq!(
            spec.unique,
            Some(vec![UniqueField::Name, UniqueField::Grace])
        );
        assert_eq!(spec.methods.as_deref(), Some("POST"));
    }
}
