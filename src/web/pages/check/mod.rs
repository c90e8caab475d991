//! The page of one check: its status and since when, its ping URLs with ready-to-paste
//! snippets, the next fire times, the ping log and the flips, and for read-write sessions
//! pause, resume, snooze, delete and the edit form (in `edit`), which the API's own rules
//! validate.
//!
//! Read-only sessions get the same page without anything that carries the check's UUID (ping
//! URLs, snippets, forms): the page is built without them, not merely hidden.
//!
//! Delete is confirmed by a required "yes, delete" checkbox in its form, so the confirmation
//! works without JavaScript (the browser will not send the form unticked) and the server
//! refuses a delete without it.

pub(crate) mod edit;
pub(crate) mod pings;
pub(crate) mod snippets;
pub(crate) mod when;

use askama::Template;
use jiff::Timestamp;
use uuid::Uuid;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::model::json::durations;
use crate::model::{Check, Flip, Kind, Ping, PingKind, Status};
use crate::schedule::tz::allowed_names;
use crate::web::error::WebError;
use crate::web::pages::check::edit::{EditForm, FIRES_SHOWN};
use crate::web::pages::check::pings::{Paging, PingRow};
use crate::web::pages::check::snippets::{PingUrls, ping_urls};
use crate::web::pages::check::when::{Fire, Stamp, next_fires, period_words, wall};
use crate::web::pages::{Ctx, Layout, Tab};
use crate::web::response;
use crate::web::router::{CheckAction, CheckId};
use crate::web::timeline::{self, Span, TimelineInput};

pub(crate) use edit::{edit, preview};
pub(crate) use pings::body as ping_body;

/// A status change as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FlipRow {
    pub at: Stamp,
    pub utc: String,
    pub from: &'static str,
    pub to: &'static str,
    pub reason: String,
}

/// A link of the span switcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpanLink {
    pub value: &'static str,
    pub label: &'static str,
    pub current: bool,
}

#[derive(Template)]
#[template(path = "check.html")]
struct CheckPage {
    layout: Layout,
    /// The path segment of this check (UUID, or unique key for read-only sessions).
    id: String,
    read_only: bool,
    project: String,
    name: String,
    slug: String,
    tags: Vec<String>,
    desc: String,
    status: &'static str,
    status_word: &'static str,
    since: Stamp,
    schedule_words: String,
    /// Ping URLs and snippets: None for read-only sessions.
    urls: Option<PingUrls>,
    /// The next fire times (cron and OnCalendar checks) and the zone they are in.
    fires: Vec<Fire>,
    zone: String,
    /// When the next ping is due and when the check goes down without it.
    expected: Option<Stamp>,
    down_at: Option<Stamp>,
    /// Why no ping is expected, when none is.
    waiting: Option<&'static str>,
    span: &'static str,
    spans: Vec<SpanLink>,
    timeline: String,
    pings: Vec<PingRow>,
    paging: Paging,
    flips: Vec<FlipRow>,
    n_pings: u64,
    /// Until when alerts are snoozed, while they are.
    snoozed_until: Option<Stamp>,
    /// The edit form (read-write only) and its schedule preview.
    form: Option<EditForm>,
    preview_html: String,
    zones: &'static [&'static str],
    error: Option<String>,
}

/// The status in words ("late" for grace, as the checks page counts it).
pub(crate) fn status_word(s: Status) -> &'static str {
    match s {
        Status::New => "new",
        Status::Up => "up",
        Status::Grace => "late",
        Status::Down => "down",
        Status::Paused => "paused",
        Status::Started => "running",
    }
}

/// The schedule in words: "every 1 day, 1 hour grace", "30 2 * * * (Europe/Riga), ...".
pub(crate) fn schedule_words(check: &Check) -> String {
    let grace = period_words(check.grace);
    match check.kind {
        Kind::Simple => format!("every {}, {grace} grace", period_words(check.timeout)),
        Kind::Cron | Kind::OnCalendar => {
            format!("{} ({}), {grace} grace", check.schedule.trim(), check.tz)
        }
    }
}

/// What the check waits for when no ping is expected at a known time.
pub(crate) fn waiting_note(status: Status, expecting: bool) -> Option<&'static str> {
    if expecting {
        return None;
    }
    Some(match status {
        Status::New => "No ping yet: the check starts with its first ping.",
        Status::Paused => "Paused: nothing is expected until it is resumed or pinged.",
        Status::Down => "Down: the next success ping brings it back up.",
        _ => "No further ping is expected: the schedule fires no more.",
    })
}

/// The flips as listed, newest first.
pub(crate) fn flip_rows(flips: &[Flip], now: Timestamp) -> Vec<FlipRow> {
    flips
        .iter()
        .map(|f| FlipRow {
            at: Stamp::new(f.created, now),
            utc: wall(f.created, &jiff::tz::TimeZone::UTC),
            from: f.old_status.as_str(),
            to: f.new_status.as_str(),
            reason: match f.reason.as_str() {
                "fail" => "a failure ping".into(),
                "timeout" => "no ping in time".into(),
                other => other.to_string(),
            },
        })
        .collect()
}

/// The span switcher's links.
pub(crate) fn span_links(current: Span) -> Vec<SpanLink> {
    [
        (Span::Day, "24 h"),
        (Span::Week, "7 d"),
        (Span::Month, "30 d"),
    ]
    .into_iter()
    .map(|(s, label)| SpanLink {
        value: s.as_str(),
        label,
        current: s == current,
    })
    .collect()
}

/// The timeline picture of `check` over `span` from its log (newest first) with its run
/// durations, and its flips: the axis in the check's zone, late periods for a simple check.
pub(crate) fn timeline_svg(
    check: &Check,
    log: &[Ping],
    runs: &[Option<jiff::SignedDuration>],
    flips: &[Flip],
    now: Timestamp,
    span: Span,
) -> String {
    let from = now.checked_sub(span.length()).unwrap_or(now);
    let pings: Vec<(Ping, Option<jiff::SignedDuration>)> = log
        .iter()
        .cloned()
        .zip(runs.iter().copied())
        .take_while(|(p, _)| p.created >= from)
        .collect();
    let late = match check.kind {
        Kind::Simple => {
            let successes: Vec<Timestamp> = log
                .iter()
                .filter(|p| p.kind == PingKind::Success)
                .map(|p| p.created)
                .collect();
            timeline::late_periods(
                &successes,
                jiff::SignedDuration::from_secs(check.timeout),
                jiff::SignedDuration::from_secs(check.grace),
                now,
            )
        }
        Kind::Cron | Kind::OnCalendar => Vec::new(),
    };
    let tz = check
        .compiled
        .as_ref()
        .map_or(jiff::tz::TimeZone::UTC, |s| s.time_zone().clone());
    let input = TimelineInput {
        created: check.created,
        status: check.status,
        flips,
        pings: &pings,
        late: &late,
    };
    timeline::render(&input, now, span, &tz)
}

/// The page's HTML; `error` is the edit form's message (the form then shows what was typed).
async fn render(ctx: &Ctx<'_>, id: &CheckId, error: Option<String>) -> Result<String, WebError> {
    let (uuid, grant) = ctx.check(id)?;
    let read_only = grant.read_only;
    let service = &ctx.site.app.service;
    let (check, ping_key, channels, others) = service
        .read(|s| {
            let check = s.check(&uuid)?.clone();
            let project = s.project(&check.project)?;
            let channels: Vec<crate::model::Channel> =
                s.channels_of(&check.project).into_iter().cloned().collect();
            let others: Vec<(Uuid, String)> = s
                .checks_of(&check.project)
                .filter(|c| c.uuid != check.uuid)
                .map(|c| (c.uuid, c.name.clone()))
                .collect();
            Some((check, project.ping_key.clone(), channels, others))
        })
        .ok_or(WebError::NotFound)?;
    let now = service.now();
    let ping_log = service.config().ping_log;
    let page_no = pings::page_number(ctx.form.text("page"), ping_log);
    // The whole log (bounded by --ping-log) feeds both the picture and the table's page.
    let log = service.pings(uuid, ping_log as usize).await?;
    let runs = durations(&log);
    let (ping_rows, paging) = pings::load(service, uuid, &log, &runs, page_no, now).await?;
    let flips = service.flips(uuid)?;
    let span = Span::parse(ctx.form.text("span"));
    let timeline = timeline_svg(&check, &log, &runs, &flips, now, span);
    let status = check.status_at(now, false);
    let since = Stamp::new(flips.first().map_or(check.created, |f| f.created), now);
    let (fires, zone) = match &check.compiled {
        Some(s) => (next_fires(s, now, FIRES_SHOWN), check.tz.to_string()),
        None => (Vec::new(), String::new()),
    };
    let channel_refs: Vec<&crate::model::Channel> = channels.iter().collect();
    let form = (!read_only).then(|| match &error {
        Some(_) => EditForm::typed(&ctx.form, &channel_refs, &others),
        None => EditForm::of_check(&check, &channel_refs, &others),
    });
    let preview_html = match &form {
        Some(f) if !f.schedule.trim().is_empty() => {
            edit::fires_of(f.schedule.trim(), f.tz.trim(), now).render()?
        }
        _ => String::new(),
    };
    let page = CheckPage {
        layout: ctx.layout(
            if check.name.is_empty() {
                "unnamed"
            } else {
                &check.name
            },
            Some(check.project),
            Tab::Checks,
        ),
        id: if read_only {
            check.unique_key()
        } else {
            uuid.to_string()
        },
        read_only,
        project: check.project.to_string(),
        name: check.name.clone(),
        slug: check.slug.clone(),
        tags: check.tag_list().map(str::to_string).collect(),
        desc: check.desc.clone(),
        status: status.as_str(),
        status_word: status_word(status),
        since,
        schedule_words: schedule_words(&check),
        urls: (!read_only).then(|| ping_urls(&check, service.site_root(), &ping_key)),
        fires,
        zone,
        expected: check.grace_start().map(|t| Stamp::new(t, now)),
        down_at: check.alert_after().map(|t| Stamp::new(t, now)),
        waiting: waiting_note(status, check.grace_start().is_some()),
        span: span.as_str(),
        spans: span_links(span),
        timeline,
        pings: ping_rows,
        paging,
        flips: flip_rows(&flips, now),
        n_pings: check.n_pings,
        snoozed_until: check
            .snoozed_until
            .filter(|_| check.is_snoozed(now))
            .map(|t| Stamp::new(t, now)),
        form,
        preview_html,
        zones: allowed_names(),
        error,
    };
    Ok(page.render()?)
}

/// GET the page.
pub(crate) async fn page(ctx: &Ctx<'_>, id: CheckId) -> Result<Response, WebError> {
    let html = render(ctx, &id, None).await?;
    Ok(response::html(StatusCode::OK, html, ctx.gzip))
}

/// POST pause, resume, snooze or delete (delete only with its "yes, delete" box ticked).
pub(crate) async fn action(
    ctx: &Ctx<'_>,
    uuid: Uuid,
    action: CheckAction,
) -> Result<Response, WebError> {
    let project = ctx.check(&CheckId::Uuid(uuid))?.1.project;
    ctx.writable(&project)?;
    let service = &ctx.site.app.service;
    match action {
        CheckAction::Pause => {
            service.pause_check(project, uuid).await?;
        }
        CheckAction::Resume => {
            service.resume_check(project, uuid).await?;
        }
        CheckAction::Delete => {
            if ctx.form.get("confirm") != Some("yes") {
                return Err(WebError::BadRequest(
                    "Tick \u{201c}yes, delete\u{201d} to delete the check; nothing was deleted."
                        .into(),
                ));
            }
            service.delete_check(project, uuid).await?;
            return Ok(response::see_other(
                &ctx.link(&format!("/projects/{project}/checks/")),
            ));
        }
        CheckAction::Edit => return edit(ctx, uuid).await,
        CheckAction::Snooze => {
            let mut body = serde_json::Map::new();
            let seconds = ctx.form.text("seconds");
            let value = seconds
                .parse::<i64>()
                .map_or_else(|_| serde_json::json!(seconds), |n| serde_json::json!(n));
            body.insert("seconds".into(), value);
            let until = crate::model::snooze::parse_body(&body, service.now())
                .map_err(|e| WebError::BadRequest(e.0))?;
            service.snooze_check(project, uuid, until).await?;
        }
    }
    Ok(response::see_other(&ctx.link(&format!("/checks/{uuid}/"))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StoredStatus;

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("ts")
    }

    #[test]
    fn schedules_and_statuses_in_words() {
        let mut c = Check::new(
            Uuid::nil(),
            Uuid::nil(),
            1,
            ts("2026-01-01T00:00:00Z"),
            Uuid::nil(),
        );
        assert_eq!(schedule_words(&c), "every 1 day, 1 hour grace");
        c.kind = Kind::Cron;
        c.schedule = "30 2 * * *".into();
        c.tz = "Europe/Riga".into();
        c.grace = 300;
        assert_eq!(
            schedule_words(&c),
            "30 2 * * * (Europe/Riga), 5 minutes grace"
        );
        assert_eq!(status_word(Status::Grace), "late");
        assert_eq!(status_word(Status::Down), "down");
        assert_eq!(waiting_note(Status::Up, true), None);
        assert!(waiting_note(Status::Down, false).is_some_and(|n| n.starts_with("Down")));
    }

    #[test]
    fn the_timeline_shows_the_pings_of_its_span() {
        let now = ts("2026-03-31T12:00:00Z");
        let mut c = Check::new(
            Uuid::nil(),
            Uuid::nil(),
            1,
            ts("2026-03-01T00:00:00Z"),
            Uuid::nil(),
        );
        c.status = StoredStatus::Up;
        let ping = |n, kind, at| Ping {
            check: Uuid::nil(),
            n,
            created: ts(at),
            kind,
            scheme: "http".into(),
            remote_addr: None,
            method: "GET".into(),
            ua: String::new(),
            rid: None,
            exit_status: None,
            body_len: 0,
        };
        let log = [
            ping(3, PingKind::Success, "2026-03-31T11:00:00Z"),
            ping(2, PingKind::Start, "2026-03-31T09:00:00Z"),
            ping(1, PingKind::Fail, "2026-03-29T12:00:00Z"),
        ];
        let runs = durations(&log);
        let day = timeline_svg(&c, &log, &runs, &[], now, Span::Day);
        assert!(day.starts_with("<svg class=\"timeline\""));
        assert!(day.contains("tick success") && day.contains("tick start"));
        assert!(!day.contains("tick fail"), "two days ago is outside a day");
        assert!(day.contains("class=\"run"), "the run is drawn");
        let week = timeline_svg(&c, &log, &runs, &[], now, Span::Week);
        assert!(week.contains("tick fail"));
    }

    #[test]
    fn flips_and_spans() {
        let now = ts("2026-03-31T12:00:00Z");
        let flips = [Flip {
            check: Uuid::nil(),
            created: ts("2026-03-31T09:00:00Z"),
            old_status: StoredStatus::Up,
            new_status: StoredStatus::Down,
            reason: "timeout".into(),
        }];
        let rows = flip_rows(&flips, now);
        assert_eq!(rows[0].from, "up");
        assert_eq!(rows[0].to, "down");
        assert_eq!(rows[0].reason, "no ping in time");
        assert_eq!(rows[0].at.words, "3 hours ago");
        assert_eq!(rows[0].utc, "Tue 2026-03-31 09:00 UTC");
        let links = span_links(Span::Month);
        let current: Vec<_> = links
            .iter()
            .filter(|l| l.current)
            .map(|l| l.value)
            .collect();
        assert_eq!(current, ["month"]);
    }
}
