//! `overdue check add|ls|show|pause|resume|rm`: a project's checks from the command line.
//!
//! `add` turns its flags into the body the Management API takes and validates it with the
//! API's own code (`model::spec`), so a mistake gets the API's message; a check that names no
//! channels gets the project's default channels. A check is named by UUID, or by slug or name
//! within its project. Statuses are styled with ANSI colours here; the command-line process
//! strips them when its stdout is not a terminal or `NO_COLOR` is set (`cli::finish`).

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};
use clap::{Args, Subcommand};
use jiff::{SignedDuration, Span, SpanRelativeTo, Timestamp};
use serde_json::{Map, Value, json};

use crate::cli::admin::{AdminOutput, pretty};
use crate::model::events::{self, Events};
use crate::model::json::{Urls, check_json, durations, ping_json};
use crate::model::spec::parse_spec;
use crate::model::time::iso_seconds;
use crate::model::{ApiVersion, Check, Kind, Ping, Status};
use crate::service::admin::{check_named, project_or_only};
use crate::service::{Service, ServiceError};

/// Pings `check show` lists, newest first.
const SHOWN_PINGS: usize = 10;

/// The flags of `check add`: the fields of the Management API's create request.
#[derive(Debug, Clone, Default, Args)]
pub struct CheckAddArgs {
    /// May be left out when there is only one project.
    pub project: Option<String>,
    #[arg(long)]
    pub name: Option<String>,
    /// Names the check in ping URLs `/ping/<ping-key>/<slug>` (a-z, 0-9, - and _).
    #[arg(long)]
    pub slug: Option<String>,
    /// Space-separated tags.
    #[arg(long)]
    pub tags: Option<String>,
    #[arg(long)]
    pub desc: Option<String>,
    /// Expected time between pings: seconds or a duration such as 1h or 1d [default: 1d].
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Time after a missed ping before the check is down [default: 1h].
    #[arg(long, value_name = "DURATION")]
    pub grace: Option<String>,
    /// A cron or OnCalendar expression, instead of --timeout.
    #[arg(long, value_name = "EXPR")]
    pub schedule: Option<String>,
    /// Time zone of --schedule [default: UTC].
    #[arg(long)]
    pub tz: Option<String>,
    /// After a failure the check stays down until it is resumed.
    #[arg(long)]
    pub manual_resume: bool,
    /// `POST` to count only POST requests as pings; "" for any method.
    #[arg(long)]
    pub methods: Option<String>,
    /// Channels by name or id, comma-separated; `*` for all, "" for none
    /// [default: the project's default channels, see `channel ls`].
    #[arg(long)]
    pub channels: Option<String>,
    /// A keyword that marks an email ping as a start.
    #[arg(long)]
    pub start_kw: Option<String>,
    /// Keywords that mark an email ping as a success.
    #[arg(long)]
    pub success_kw: Option<String>,
    /// Keywords that mark an email ping as a failure.
    #[arg(long)]
    pub failure_kw: Option<String>,
    /// Look for the keywords in an email's subject.
    #[arg(long)]
    pub filter_subject: bool,
    /// Look for the keywords in an email's body.
    #[arg(long)]
    pub filter_body: bool,
    /// Look for the keywords in an HTTP ping's body.
    #[arg(long)]
    pub filter_http_body: bool,
    /// A ping matching no keyword is a failure (else it is ignored).
    #[arg(long)]
    pub filter_default_fail: bool,
    /// Failures in a row before the check goes down (a success starts the count again)
    /// [default: 1].
    #[arg(long, value_name = "N")]
    pub fail_threshold: Option<String>,
    /// Longest a run may take after its start ping before the check goes down, instead of
    /// --grace: seconds or a duration such as 3h [default: off].
    #[arg(long, value_name = "DURATION")]
    pub max_duration: Option<String>,
    /// Shortest a run may take; a run that ends sooner counts as a failure [default: off].
    #[arg(long, value_name = "DURATION")]
    pub min_duration: Option<String>,
    /// A recurring quiet window, opening at each time of this cron or OnCalendar expression
    /// (`Sun 02:00`): alerts wait until it closes.
    #[arg(long, value_name = "EXPR")]
    pub quiet_schedule: Option<String>,
    /// Time zone of --quiet-schedule [default: UTC].
    #[arg(long, value_name = "TZ")]
    pub quiet_tz: Option<String>,
    /// How long the quiet window stays open [default: 1h].
    #[arg(long, value_name = "DURATION")]
    pub quiet_duration: Option<String>,
    /// Parent checks, comma-separated UUIDs: while one is down, this check's down alerts wait
    /// for its recovery.
    #[arg(long, value_name = "UUIDS")]
    pub parents: Option<String>,
    /// The events one channel sends for this check, e.g. `ops=down,late` (from down, up, late,
    /// failure); repeat for more channels [default: the channel's own, see `channel ls`].
    #[arg(long = "events", value_name = "CHANNEL=EVENTS", value_parser = channel_events_arg)]
    pub channel_events: Vec<String>,
    #[arg(long)]
    pub json: bool,
}

/// Checks the shape of an `--events` value; the service resolves the channel.
fn channel_events_arg(value: &str) -> Result<String, String> {
    let (channel, events) = value
        .split_once('=')
        .ok_or("expected CHANNEL=EVENTS, e.g. ops=down,late")?;
    if channel.is_empty() {
        return Err("the channel is missing before `=`".into());
    }
    Events::parse(events)?;
    Ok(value.to_string())
}

#[derive(Debug, Clone, Subcommand)]
pub enum CheckCmd {
    /// Create a check; without --channels it gets the project's default channels.
    Add(Box<CheckAddArgs>),
    /// List a project's checks.
    Ls {
        /// May be left out when there is only one project.
        project: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Show a check: its settings, ping URLs, status, next expected ping and last pings.
    #[command(allow_missing_positional = true)]
    Show {
        /// May be left out when there is only one project, or when CHECK is a UUID.
        project: Option<String>,
        /// The check's UUID, slug or name.
        check: String,
        #[arg(long)]
        json: bool,
    },
    /// Pause a check: it is not monitored until its next ping (or `resume`).
    #[command(allow_missing_positional = true)]
    Pause {
        /// May be left out when there is only one project, or when CHECK is a UUID.
        project: Option<String>,
        /// The check's UUID, slug or name.
        check: String,
    },
    /// Resume a paused check: it waits for its first ping.
    #[command(allow_missing_positional = true)]
    Resume {
        /// May be left out when there is only one project, or when CHECK is a UUID.
        project: Option<String>,
        /// The check's UUID, slug or name.
        check: String,
    },
    /// Snooze alerts: the check still records pings and status, but alerts wait until the
    /// snooze ends, when one alert tells where it stands if that changed. Names one check,
    /// or every check of the project with --tag or --all.
    Snooze(SnoozeArgs),
    /// Remove a check with its pings and history.
    #[command(allow_missing_positional = true)]
    Rm {
        /// May be left out when there is only one project, or when CHECK is a UUID.
        project: Option<String>,
        /// The check's UUID, slug or name.
        check: String,
    },
}

/// The flags of `check snooze`.
#[derive(Debug, Clone, Default, Args)]
#[command(group(clap::ArgGroup::new("when").required(true).args(["for_", "until", "end"])))]
pub struct SnoozeArgs {
    /// `[PROJECT] CHECK`: the check's UUID, slug or name; with --tag or --all only the project
    /// (which may be left out when there is only one).
    #[arg(value_name = "[PROJECT] CHECK", num_args = 0..=2)]
    pub names: Vec<String>,
    /// For how long: seconds or a duration such as 2h or 1d.
    #[arg(long = "for", value_name = "DURATION")]
    pub for_: Option<String>,
    /// Until when: a timestamp such as 2026-12-01T08:00:00Z.
    #[arg(long, value_name = "TIMESTAMP")]
    pub until: Option<String>,
    /// End the snooze now (a held alert is sent at once).
    #[arg(long)]
    pub end: bool,
    /// Every check of the project with this tag.
    #[arg(long, conflicts_with = "all")]
    pub tag: Option<String>,
    /// Every check of the project.
    #[arg(long)]
    pub all: bool,
}

/// The API body a `check snooze` asks for, validated by the API's own rules.
fn snooze_body(a: &SnoozeArgs) -> Map<String, Value> {
    let mut body = Map::new();
    if a.end {
        body.insert("seconds".into(), json!(0));
    } else if let Some(d) = &a.for_ {
        body.insert("seconds".into(), period(d));
    } else if let Some(t) = &a.until {
        body.insert("until".into(), json!(t));
    }
    body
}

/// Runs `check snooze`.
async fn snooze(service: &Service, a: SnoozeArgs) -> Result<AdminOutput, ServiceError> {
    let now = service.now();
    let until = crate::model::snooze::parse_body(&snooze_body(&a), now)?;
    let checks = if a.all || a.tag.is_some() {
        // The tag's or the project's checks in one transaction, as the API's
        // `POST checks/snooze` does.
        if a.names.len() > 1 {
            return Err(ServiceError::usage(
                "with --tag or --all, name only the project",
            ));
        }
        let p = service.read(|s| project_or_only(s, a.names.first().map(String::as_str)))?;
        service
            .snooze_checks(p.uuid, a.tag.into_iter().collect(), until)
            .await?
    } else {
        let c = service.read(|s| match a.names.as_slice() {
            [check] => Ok(check_named(s, None, check)?),
            [project, check] => Ok(check_named(s, Some(project), check)?),
            _ => Err(ServiceError::usage(
                "name the check to snooze, or use --tag or --all",
            )),
        })?;
        vec![service.snooze_check(c.project, c.uuid, until).await?]
    };
    let mut out = String::new();
    for c in &checks {
        let _ = match c.snoozed_until {
            Some(t) => writeln!(out, "snoozed check {} until {}", label(c), iso_seconds(t)),
            None => writeln!(out, "check {} is not snoozed", label(c)),
        };
    }
    if checks.is_empty() {
        out.push_str("no check matched: nothing snoozed\n");
    }
    Ok(AdminOutput::ok(out))
}

/// A `--timeout`/`--grace` value as the API body carries it: whole seconds, or a duration
/// (`90s`, `1h`, `1d`, `PT1H`) turned into seconds. Anything else goes through unchanged,
/// so the API's own validation gives the message.
pub(crate) fn period(text: &str) -> Value {
    let text = text.trim();
    if let Ok(secs) = text.parse::<i64>() {
        return json!(secs);
    }
    text.parse::<Span>()
        .ok()
        .and_then(|span| span.to_duration(SpanRelativeTo::days_are_24_hours()).ok())
        .map_or_else(|| json!(text), |d| json!(d.as_secs()))
}

/// The create request `check add`'s flags describe.
pub(crate) fn spec_body(a: &CheckAddArgs) -> Map<String, Value> {
    let mut body = Map::new();
    let strings = [
        ("name", &a.name),
        ("slug", &a.slug),
        ("tags", &a.tags),
        ("desc", &a.desc),
        ("schedule", &a.schedule),
        ("tz", &a.tz),
        ("methods", &a.methods),
        ("channels", &a.channels),
        ("start_kw", &a.start_kw),
        ("success_kw", &a.success_kw),
        ("failure_kw", &a.failure_kw),
        ("quiet_schedule", &a.quiet_schedule),
        ("quiet_tz", &a.quiet_tz),
        ("parents", &a.parents),
    ];
    for (field, value) in strings {
        if let Some(v) = value {
            body.insert(field.into(), json!(v));
        }
    }
    let events: Map<String, Value> = a
        .channel_events
        .iter()
        .filter_map(|item| item.split_once('='))
        .map(|(channel, events)| (channel.to_string(), json!(events)))
        .collect();
    if !events.is_empty() {
        body.insert("channel_events".into(), Value::Object(events));
    }
    if let Some(n) = &a.fail_threshold {
        body.insert("fail_threshold".into(), period(n));
    }
    for (field, value) in [
        ("timeout", &a.timeout),
        ("grace", &a.grace),
        ("max_duration", &a.max_duration),
        ("min_duration", &a.min_duration),
        ("quiet_duration", &a.quiet_duration),
    ] {
        if let Some(v) = value {
            body.insert(field.into(), period(v));
        }
    }
    let flags = [
        ("manual_resume", a.manual_resume),
        ("filter_subject", a.filter_subject),
        ("filter_body", a.filter_body),
        ("filter_http_body", a.filter_http_body),
        ("filter_default_fail", a.filter_default_fail),
    ];
    for (field, set) in flags {
        if set {
            body.insert(field.into(), json!(true));
        }
    }
    body
}

/// How a status looks on a terminal.
fn status_style(status: Status) -> Style {
    match status {
        Status::Up => AnsiColor::Green.on_default(),
        Status::Grace => AnsiColor::Yellow.on_default(),
        Status::Down => AnsiColor::Red.on_default().bold(),
        Status::Paused => Style::new().dimmed(),
        Status::New | Status::Started => Style::new(),
    }
}

/// The status word in its style, padded to `width` columns (the padding does not count the
/// escape sequences).
fn painted(status: Status, width: usize) -> String {
    let style = status_style(status);
    format!("{style}{:<width$}{style:#}", status.as_str())
}

fn when(t: Option<Timestamp>) -> String {
    t.map_or_else(|| "-".into(), iso_seconds)
}

/// The `check ls` table: one line per check, statuses styled.
pub(crate) fn list_text(checks: &[Check], now: Timestamp) -> String {
    let mut out = format!(
        "{:<36} {:<8} {:<25} {:<25} {:<20} NAME\n",
        "UUID", "STATUS", "LAST PING", "NEXT EXPECTED", "SLUG"
    );
    for c in checks {
        let last = c.last_ping.map_or_else(|| "never".into(), iso_seconds);
        let _ = writeln!(
            out,
            "{:<36} {} {:<25} {:<25} {:<20} {}",
            c.uuid,
            painted(c.status_at(now, false), 8),
            last,
            when(c.grace_start()),
            c.slug,
            c.name
        );
    }
    out
}

/// What `check show` knows besides the check itself.
pub(crate) struct ShowContext<'a> {
    pub project: &'a str,
    pub ping_key: &'a str,
    /// Names and kinds of the assigned channels.
    pub channels: Vec<(String, String)>,
    pub(crate) urls: Urls<'a>,
    /// Newest first.
    pub(crate) pings: &'a [Ping],
}

pub(crate) fn friendly(secs: i64) -> String {
    format!("{:#}", SignedDuration::from_secs(secs))
}

/// The `check show` text.
/// The alerting rules a check sets, in words.
fn rules_text(c: &Check) -> String {
    let mut rules = Vec::new();
    if c.fail_threshold > 1 {
        rules.push(format!(
            "down after {} failures in a row ({} so far)",
            c.fail_threshold, c.fails_in_row
        ));
    }
    if c.max_duration > 0 {
        rules.push(format!("a run may take {}", friendly(c.max_duration)));
    }
    if c.min_duration > 0 {
        rules.push(format!(
            "a run under {} is a failure",
            friendly(c.min_duration)
        ));
    }
    if let Some(q) = &c.quiet {
        rules.push(format!(
            "quiet for {} from {} ({})",
            friendly(q.duration),
            q.schedule,
            q.tz
        ));
    }
    if !c.parents.is_empty() {
        rules.push(format!(
            "down alerts wait while a parent is down ({} parent{})",
            c.parents.len(),
            if c.parents.len() == 1 { "" } else { "s" }
        ));
    }
    if let Some(until) = c.snoozed_until {
        rules.push(format!("snoozed until {}", iso_seconds(until)));
    }
    rules.join("; ")
}

pub(crate) fn show_text(c: &Check, ctx: &ShowContext<'_>, now: Timestamp) -> String {
    let mut out = String::new();
    let mut line = |label: &str, value: &str| {
        let label = if label.is_empty() {
            String::new()
        } else {
            format!("{label}:")
        };
        let _ = writeln!(out, "{label:<15}{value}");
    };
    line("name", &c.name);
    line("uuid", &c.uuid.to_string());
    line("project", ctx.project);
    line("status", &painted(c.status_at(now, false), 0));
    let period = match c.kind {
        Kind::Simple => format!("every {}", friendly(c.timeout)),
        Kind::Cron | Kind::OnCalendar => format!("{} ({})", c.schedule, c.tz),
    };
    line(
        "schedule",
        &format!("{period}, grace {}", friendly(c.grace)),
    );
    let last = match c.last_ping {
        Some(t) => format!("{} ({} in all)", iso_seconds(t), c.n_pings),
        None => "never".into(),
    };
    line("last ping", &last);
    line("next expected", &when(c.grace_start()));
    line(
        "ping url",
        &format!("{}/ping/{}", ctx.urls.site_root, c.uuid),
    );
    if !c.slug.is_empty() {
        line(
            "",
            &format!("{}/ping/{}/{}", ctx.urls.site_root, ctx.ping_key, c.slug),
        );
    }
    line("slug", &c.slug);
    line("tags", &c.tags);
    line("description", &c.desc);
    let channels = if ctx.channels.is_empty() {
        "none: nobody is alerted when it goes down".to_string()
    } else {
        ctx.channels
            .iter()
            .map(|(name, kind)| format!("{name} ({kind})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    line("channels", &channels);
    let rules = rules_text(c);
    if !rules.is_empty() {
        line("alert rules", &rules);
    }
    line("manual resume", if c.manual_resume { "yes" } else { "no" });
    line(
        "methods",
        if &*c.methods == "POST" {
            "POST only"
        } else {
            "any"
        },
    );
    out.push_str("last pings:\n");
    if ctx.pings.is_empty() {
        out.push_str("  none\n");
    }
    for p in ctx.pings {
        let _ = writeln!(
            out,
            "  #{:<6} {}  {:<7} {:<5} {}",
            p.n,
            iso_seconds(p.created),
            p.kind.as_str(),
            p.method,
            p.remote_addr.as_deref().unwrap_or("")
        );
    }
    out
}

/// "NAME (UUID)", or just the UUID of a check without a name.
fn label(c: &Check) -> String {
    if c.name.is_empty() {
        c.uuid.to_string()
    } else {
        format!("{} ({})", c.name, c.uuid)
    }
}

pub(crate) async fn check(service: &Service, cmd: CheckCmd) -> Result<AdminOutput, ServiceError> {
    let now = service.now();
    let urls = Urls {
        site_root: service.site_root(),
        version: ApiVersion::V3,
    };
    Ok(match cmd {
        CheckCmd::Add(a) => {
            let spec = parse_spec(&spec_body(&a))?;
            let project = service.read(|s| project_or_only(s, a.project.as_deref()))?;
            let (c, _) = service
                .create_check_with_defaults(project.uuid, spec)
                .await?;
            if a.json {
                return Ok(AdminOutput::ok(pretty(&check_json(&c, now, urls, false))));
            }
            let channels = service.read(|s| {
                c.channels
                    .iter()
                    .filter_map(|u| s.channel(u).map(|ch| ch.name.clone()))
                    .collect::<Vec<_>>()
            });
            let channels = if channels.is_empty() {
                "none: nobody is alerted when it goes down (see `overdue channel add`)".into()
            } else {
                channels.join(", ")
            };
            AdminOutput::ok(format!(
                "created check {} in project {}\nping url: {}/ping/{}\nchannels: {channels}\n",
                label(&c),
                project.name,
                urls.site_root,
                c.uuid
            ))
        }
        CheckCmd::Ls { project, json } => {
            let checks = service.read(|s| {
                let p = project_or_only(s, project.as_deref())?;
                Ok::<_, ServiceError>(s.checks_of(&p.uuid).cloned().collect::<Vec<_>>())
            })?;
            if json {
                let list: Vec<Value> = checks
                    .iter()
                    .map(|c| check_json(c, now, urls, false))
                    .collect();
                AdminOutput::ok(pretty(&Value::Array(list)))
            } else {
                AdminOutput::ok(list_text(&checks, now))
            }
        }
        CheckCmd::Show {
            project,
            check,
            json,
        } => {
            let (c, project, channels) = service.read(|s| {
                let c = check_named(s, project.as_deref(), &check)?;
                let p = s
                    .project(&c.project)
                    .cloned()
                    .ok_or(ServiceError::NotFound)?;
                let channels: Vec<(String, String)> = c
                    .channels
                    .iter()
                    .filter_map(|u| s.channel(u))
                    .map(|ch| {
                        let events = events::for_channel(&c.channel_events, ch.uuid, ch.events);
                        let kind = if events == Events::default() {
                            ch.kind().to_string()
                        } else {
                            format!("{}, sends {}", ch.kind(), events.to_text())
                        };
                        (ch.name.clone(), kind)
                    })
                    .collect();
                Ok::<_, ServiceError>((c, p, channels))
            })?;
            let pings = service.pings(c.uuid, SHOWN_PINGS).await?;
            if json {
                let mut doc = check_json(&c, now, urls, false);
                let listed: Vec<Value> = pings
                    .iter()
                    .zip(durations(&pings))
                    .map(|(p, d)| ping_json(p, d, urls))
                    .collect();
                if let Some(m) = doc.as_object_mut() {
                    m.insert("last_pings".into(), Value::Array(listed));
                }
                AdminOutput::ok(pretty(&doc))
            } else {
                let ctx = ShowContext {
                    project: &project.name,
                    ping_key: &project.ping_key,
                    channels,
                    urls,
                    pings: &pings,
                };
                AdminOutput::ok(show_text(&c, &ctx, now))
            }
        }
        CheckCmd::Pause { project, check } => {
            let c = service.read(|s| check_named(s, project.as_deref(), &check))?;
            let c = service.pause_check(c.project, c.uuid).await?;
            let until = if c.manual_resume {
                "`check resume`"
            } else {
                "its next ping or `check resume`"
            };
            AdminOutput::ok(format!(
                "paused check {}: not monitored until {until}\n",
                label(&c)
            ))
        }
        CheckCmd::Resume { project, check } => {
            let c = service.read(|s| check_named(s, project.as_deref(), &check))?;
            let c = service.resume_check(c.project, c.uuid).await?;
            AdminOutput::ok(format!(
                "resumed check {}: it waits for its first ping\n",
                label(&c)
            ))
        }
        CheckCmd::Snooze(a) => snooze(service, a).await?,
        CheckCmd::Rm { project, check } => {
            let c = service.read(|s| check_named(s, project.as_deref(), &check))?;
            let c = service.delete_check(c.project, c.uuid).await?;
            AdminOutput::ok(format!(
                "removed check {} with its pings and history\n",
                label(&c)
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    #[test]
    fn periods_take_seconds_or_durations_and_pass_the_rest_to_the_api() {
        assert_eq!(period("3600"), json!(3600));
        assert_eq!(period("1h"), json!(3600));
        assert_eq!(period("1d"), json!(86400));
        assert_eq!(period("90s"), json!(90));
        assert_eq!(period("PT5M"), json!(300));
        assert_eq!(period("soon"), json!("soon"));
        let a = CheckAddArgs {
            timeout: Some("soon".into()),
            ..Default::default()
        };
        let err = parse_spec(&spec_body(&a)).expect_err("not a number");
        assert_eq!(err.to_string(), "timeout is not a number");
    }

    #[test]
    fn only_the_flags_given_reach_the_body() {
        let a = CheckAddArgs {
            name: Some("db".into()),
            grace: Some("5m".into()),
            manual_resume: true,
            channels: Some(String::new()),
            ..Default::default()
        };
        assert_eq!(
            Value::Object(spec_body(&a)),
            json!({"name": "db", "channels": "", "grace": 300, "manual_resume": true})
        );
    }

    #[test]
    fn rule_flags_take_durations_and_reach_the_body() {
        let a = CheckAddArgs {
            fail_threshold: Some("3".into()),
            max_duration: Some("2h".into()),
            min_duration: Some("90s".into()),
            ..Default::default()
        };
        assert_eq!(
            Value::Object(spec_body(&a)),
            json!({"fail_threshold": 3, "max_duration": 7200, "min_duration": 90})
        );
        let spec = parse_spec(&spec_body(&a)).expect("valid");
        assert_eq!(spec.max_duration, Some(7200));
        let mut c = check(crate::model::StoredStatus::Up);
        c.fail_threshold = 3;
        c.max_duration = 7200;
        c.min_duration = 90;
        assert_eq!(
            rules_text(&c),
            format!(
                "down after 3 failures in a row (0 so far); a run may take {}; a run under {} \
                 is a failure",
                friendly(7200),
                friendly(90)
            )
        );
    }

    fn check(status: crate::model::StoredStatus) -> Check {
        let t: Timestamp = "2026-01-01T00:00:00Z".parse().expect("ts");
        let mut c = Check::new(Uuid::from_u128(1), Uuid::from_u128(2), 1, t, Uuid::nil());
        c.name = "db".into();
        c.status = status;
        c.last_ping = Some(t);
        c
    }

    #[test]
    fn the_list_styles_statuses_and_shows_the_next_expected_ping() {
        let now: Timestamp = "2026-01-01T01:00:00Z".parse().expect("ts");
        let up = check(crate::model::StoredStatus::Up);
        let text = list_text(std::slice::from_ref(&up), now);
        let green = AnsiColor::Green.on_default().render().to_string();
        assert!(text.contains(&format!("{green}up      ")), "{text:?}");
        assert!(text.contains("2026-01-02T00:00:00+00:00"), "next: {text}");
        let plain = anstream::adapter::strip_str(&text).to_string();
        let header = plain.lines().next().expect("header");
        let row = plain.lines().nth(1).expect("row");
        assert_eq!(
            header.find("LAST PING"),
            row.find("2026-01-01T00:00:00+00:00"),
            "columns line up once the styles are stripped:\n{plain}"
        );
        let paused = check(crate::model::StoredStatus::Paused);
        assert!(list_text(&[paused], now).contains(" -  "), "no next ping");
    }
}
