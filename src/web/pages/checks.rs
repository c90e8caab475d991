//! The checks page of a project: every check with its status, schedule, last ping, next
//! expected time, tags and integrations, filtered by tag, status and text and sorted as asked
//! (the query string, so it works without JavaScript and a link keeps the view), counts per
//! status, the rows alone as a fragment for live updates, and the "new check" form.

use askama::Template;
use jiff::Timestamp;
use uuid::Uuid;
use warp::reply::Response;

use crate::model::limits::{DEFAULT_GRACE_SECS, DEFAULT_TIMEOUT_SECS, DEFAULT_TZ};
use crate::model::spec::parse_spec;
use crate::model::{ApiVersion, Check, Kind, Status};
use crate::service::ServiceError;
use crate::web::error::WebError;
use crate::web::forms::{Form, check_object};
use crate::web::pages::{Ctx, Layout, Tab};
use crate::web::response;

/// A moment as the table shows it: words, and the exact instant for `<time datetime>` (the
/// script puts it in the visitor's zone on hover).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct When {
    pub iso: String,
    pub words: String,
}

impl When {
    fn new(t: Timestamp, now: Timestamp) -> When {
        When {
            iso: iso(t),
            words: relative(t, now),
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    /// Path segment of the check's page: the UUID, or the unique key for read-only sessions.
    pub id: String,
    pub name: String,
    pub slug: String,
    pub tags: Vec<String>,
    pub status: Status,
    /// "every 1 day, 1 hour grace" or "30 2 * * * Europe/Riga".
    pub schedule: String,
    pub last_ping: Option<Timestamp>,
    pub last_ping_when: Option<When>,
    /// What the next expected moment is ("due", "down"), and when.
    pub next_note: &'static str,
    pub next: Option<When>,
    /// Names of the channels the check alerts.
    pub channels: Vec<String>,
}

impl Row {
    /// The status in a word (the counts say "late" for grace, so the rows do too).
    pub(crate) fn word(&self) -> &'static str {
        status_word(self.status)
    }

    /// The status's class suffix (`st-up`, ...).
    pub(crate) fn class(&self) -> &'static str {
        self.status.as_str()
    }
}

/// The word for a status.
pub(crate) fn status_word(status: Status) -> &'static str {
    match status {
        Status::Grace => "late",
        Status::Started => "up",
        s => s.as_str(),
    }
}

/// The sort orders the page offers: query value and label.
pub(crate) const SORTS: &[(&str, &str)] = &[
    ("", "Creation"),
    ("name", "Name"),
    ("status", "Status (worst first)"),
    ("last_ping", "Last ping (newest first)"),
];

/// How the table is filtered and sorted (from the query string).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct View {
    pub tag: String,
    pub text: String,
    /// One of [`SORTS`]' values.
    pub sort: String,
    /// `""` or a status as the API names it (`up`, `grace`, `down`, `paused`, `new`).
    pub status: String,
}

impl View {
    pub(crate) fn from_form(form: &Form) -> View {
        let sort = form.text("sort");
        let status = form.text("status");
        View {
            tag: form.text("tag").to_string(),
            text: form.text("q").to_string(),
            sort: if SORTS.iter().any(|(v, _)| *v == sort) {
                sort.to_string()
            } else {
                String::new()
            },
            status: if matches!(status, "up" | "grace" | "down" | "paused" | "new") {
                status.to_string()
            } else {
                String::new()
            },
        }
    }

    /// The query string (with its `?`, or `?` alone) of this view changed by `edit`.
    fn query(&self, edit: impl FnOnce(&mut View)) -> String {
        let mut v = self.clone();
        edit(&mut v);
        let mut q = form_urlencoded::Serializer::for_suffix(String::from("?"), 1);
        for (name, value) in [
            ("tag", &v.tag),
            ("status", &v.status),
            ("q", &v.text),
            ("sort", &v.sort),
        ] {
            if !value.is_empty() {
                q.append_pair(name, value);
            }
        }
        q.finish()
    }

    /// A link to this view filtered by `tag` instead (the row's tag links).
    pub(crate) fn with_tag(&self, tag: &str) -> String {
        self.query(|v| tag.clone_into(&mut v.tag))
    }

    /// A link to this view without its tag filter.
    pub(crate) fn without_tag(&self) -> String {
        self.query(|v| v.tag.clear())
    }

    /// A link to this view showing only `status`, or every status when it already does.
    pub(crate) fn toggle_status(&self, status: &str) -> String {
        self.query(|v| {
            if v.status == status {
                v.status.clear();
            } else {
                status.clone_into(&mut v.status);
            }
        })
    }
}

/// Status counts at the top of the page (of every check of the project, not only the shown).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub up: usize,
    pub grace: usize,
    pub down: usize,
    pub paused: usize,
    pub new: usize,
}

impl Counts {
    /// Each status with its count: query value, word, count.
    pub(crate) fn each(&self) -> [(&'static str, &'static str, usize); 5] {
        [
            ("down", "down", self.down),
            ("grace", "late", self.grace),
            ("up", "up", self.up),
            ("new", "new", self.new),
            ("paused", "paused", self.paused),
        ]
    }
}

/// The rows of `checks` at `now` that `view` keeps, in its order, and the counts of all of
/// them. `channel_name` names an assigned channel (None: gone, left out).
pub(crate) fn rows(
    checks: &[&Check],
    now: Timestamp,
    view: &View,
    read_only: bool,
    channel_name: &dyn Fn(&Uuid) -> Option<String>,
) -> (Vec<Row>, Counts) {
    let mut counts = Counts::default();
    let text = view.text.to_lowercase();
    let mut rows: Vec<Row> = Vec::new();
    for c in checks {
        let status = c.status_at(now, false);
        match status {
            Status::Up | Status::Started => counts.up += 1,
            Status::Grace => counts.grace += 1,
            Status::Down => counts.down += 1,
            Status::Paused => counts.paused += 1,
            Status::New => counts.new += 1,
        }
        if !view.tag.is_empty() && !c.has_tag(&view.tag) {
            continue;
        }
        if !view.status.is_empty() && view.status != status_class(status) {
            continue;
        }
        if !text.is_empty()
            && !contains_lower(&c.name, &text)
            && !contains_lower(&c.slug, &text)
            && !contains_lower(&c.tags, &text)
        {
            continue;
        }
        let (next_note, next) = next_expected(c, status, now);
        rows.push(Row {
            id: if read_only {
                c.unique_key()
            } else {
                c.uuid.to_string()
            },
            name: c.name.clone(),
            slug: c.slug.clone(),
            tags: c.tag_list().map(str::to_string).collect(),
            status,
            schedule: schedule_words(c),
            last_ping: c.last_ping,
            last_ping_when: c.last_ping.map(|t| When::new(t, now)),
            next_note,
            next: next.map(|t| When::new(t, now)),
            channels: c.channels.iter().filter_map(channel_name).collect(),
        });
    }
    match view.sort.as_str() {
        "name" => rows.sort_by_cached_key(|r| r.name.to_lowercase()),
        "status" => rows.sort_by_key(|r| status_rank(r.status)),
        "last_ping" => rows.sort_by_key(|r| std::cmp::Reverse(r.last_ping)),
        _ => {}
    }
    (rows, counts)
}

/// The status as the status filter names it (`started` counts as up).
fn status_class(status: Status) -> &'static str {
    match status {
        Status::Started => "up",
        s => s.as_str(),
    }
}

/// Whether `haystack` lowercased contains `needle` (already lowercase), without allocating
/// for the ASCII names most checks have.
fn contains_lower(haystack: &str, needle: &str) -> bool {
    if haystack.is_ascii() && needle.is_ascii() {
        let (h, n) = (haystack.as_bytes(), needle.as_bytes());
        return n.len() <= h.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n));
    }
    haystack.to_lowercase().contains(needle)
}

/// What the table says about the next expected ping: a note and a moment. Up: when it is due
/// (or, while a run is going, when the run must have ended); late: when it goes down.
fn next_expected(c: &Check, status: Status, now: Timestamp) -> (&'static str, Option<Timestamp>) {
    match status {
        Status::Up | Status::Started => match c.grace_start() {
            Some(t) if t > now => ("due", Some(t)),
            Some(_) => ("running, must end", c.alert_after()),
            None => ("no further fire time", None),
        },
        Status::Grace => ("late, down", c.alert_after()),
        Status::New => ("after the first ping", None),
        Status::Paused => ("paused", None),
        Status::Down => ("down: waits for a ping", None),
    }
}

/// Worst first: down, late, new, up, paused.
fn status_rank(status: Status) -> u8 {
    match status {
        Status::Down => 0,
        Status::Grace => 1,
        Status::New => 2,
        Status::Up | Status::Started => 3,
        Status::Paused => 4,
    }
}

/// A check's schedule in words: "every 1 day, 1 hour grace", "30 2 * * * Europe/Riga".
fn schedule_words(c: &Check) -> String {
    match c.kind {
        Kind::Simple => format!(
            "every {}, {} grace",
            duration_words(c.timeout),
            duration_words(c.grace)
        ),
        Kind::Cron | Kind::OnCalendar => format!("{} {}", c.schedule.trim(), c.tz),
    }
}

/// A period in its largest whole unit: "1 day", "2 hours", "5 min", "90 sec".
fn duration_words(secs: i64) -> String {
    let (n, one, many) = match secs {
        s if s > 0 && s % 604_800 == 0 => (s / 604_800, "week", "weeks"),
        s if s > 0 && s % 86_400 == 0 => (s / 86_400, "day", "days"),
        s if s > 0 && s % 3600 == 0 => (s / 3600, "hour", "hours"),
        s if s > 0 && s % 60 == 0 => (s / 60, "min", "min"),
        s => (s, "sec", "sec"),
    };
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `t` relative to `now`: "just now", "3 minutes ago", "in 2 hours".
fn relative(t: Timestamp, now: Timestamp) -> String {
    let secs = now.as_second() - t.as_second();
    let abs = secs.unsigned_abs();
    if abs < 45 {
        return if secs >= 0 {
            "just now"
        } else {
            "in under a minute"
        }
        .to_string();
    }
    let (n, unit) = match abs {
        a if a < 3570 => (a.div_ceil(60).clamp(1, 59), "minute"),
        a if a < 48 * 3600 => ((a + 1800) / 3600, "hour"),
        a => ((a + 43_200) / 86_400, "day"),
    };
    let s = if n == 1 { "" } else { "s" };
    if secs >= 0 {
        format!("{n} {unit}{s} ago")
    } else {
        format!("in {n} {unit}{s}")
    }
}

/// `2026-03-31T00:30:00Z`.
fn iso(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The new-check form's fields: what was typed, or the API's defaults.
#[derive(Debug, Clone)]
pub(crate) struct NewCheck {
    pub name: String,
    pub slug: String,
    pub tags: String,
    /// A cron or OnCalendar schedule rather than a period.
    pub scheduled: bool,
    pub timeout: String,
    pub grace: String,
    pub schedule: String,
    pub tz: String,
}

impl NewCheck {
    fn from_form(typed: Option<&Form>) -> NewCheck {
        let Some(f) = typed else {
            return NewCheck {
                name: String::new(),
                slug: String::new(),
                tags: String::new(),
                scheduled: false,
                timeout: DEFAULT_TIMEOUT_SECS.to_string(),
                grace: DEFAULT_GRACE_SECS.to_string(),
                schedule: String::new(),
                tz: DEFAULT_TZ.to_string(),
            };
        };
        let text = |name: &str| f.text(name).to_string();
        NewCheck {
            name: text("name"),
            slug: text("slug"),
            tags: text("tags"),
            scheduled: f.get("kind") == Some("cron"),
            timeout: text("timeout"),
            grace: text("grace"),
            schedule: text("schedule"),
            tz: text("tz"),
        }
    }
}

/// The live part of the page: the counts and the rows. One template (`check_rows.html`,
/// `check_counts.html`) makes them for the page and for the fragment.
#[derive(Template)]
#[template(path = "check_fragment.html")]
struct Fragment {
    base: String,
    rows: Vec<Row>,
    counts: Counts,
    view: View,
}

#[derive(Template)]
#[template(path = "checks.html")]
struct ChecksPage {
    layout: Layout,
    base: String,
    project: String,
    rows: Vec<Row>,
    counts: Counts,
    view: View,
    sorts: &'static [(&'static str, &'static str)],
    /// Every tag of the project, for the tag filter.
    all_tags: Vec<String>,
    read_only: bool,
    /// The add form's error, and its fields.
    error: Option<String>,
    new: NewCheck,
    zones: &'static [&'static str],
}

/// The rows, counts and every tag of `project` for `view`.
fn table(
    ctx: &Ctx<'_>,
    project: Uuid,
    view: &View,
    read_only: bool,
) -> (Vec<Row>, Counts, Vec<String>) {
    let now = ctx.site.app.service.now();
    ctx.site.app.service.read(|s| {
        let checks: Vec<&Check> = s.checks_of(&project).collect();
        let name = |u: &Uuid| {
            s.channel(u).map(|ch| {
                if ch.name.is_empty() {
                    ch.kind().to_string()
                } else {
                    ch.name.clone()
                }
            })
        };
        let (rows, counts) = rows(&checks, now, view, read_only, &name);
        let mut tags: Vec<String> = checks
            .iter()
            .flat_map(|c| c.tag_list())
            .map(str::to_string)
            .collect();
        tags.sort_unstable();
        tags.dedup();
        (rows, counts, tags)
    })
}

fn render(ctx: &Ctx<'_>, project: Uuid, error: Option<String>) -> Result<String, WebError> {
    let grant = ctx.project(&project)?;
    let view = View::from_form(&ctx.form);
    let (rows, counts, all_tags) = table(ctx, project, &view, grant.read_only);
    let new = NewCheck::from_form(error.is_some().then_some(&ctx.form));
    let page = ChecksPage {
        layout: ctx.layout("Checks", Some(project), Tab::Checks),
        base: ctx.site.base.clone(),
        project: project.to_string(),
        rows,
        counts,
        view,
        sorts: SORTS,
        all_tags,
        read_only: grant.read_only,
        error,
        new,
        zones: crate::schedule::tz::allowed_names(),
    };
    Ok(page.render()?)
}

/// GET the page.
pub(crate) fn page(ctx: &Ctx<'_>, project: Uuid) -> Result<Response, WebError> {
    Ok(ctx.html(render(ctx, project, None)?))
}

/// GET the counts and rows alone, for the page's live updates (the page's filters come in
/// the query, as for the page).
pub(crate) fn rows_fragment(ctx: &Ctx<'_>, project: Uuid) -> Result<Response, WebError> {
    let grant = ctx.project(&project)?;
    let view = View::from_form(&ctx.form);
    let (rows, counts, _) = table(ctx, project, &view, grant.read_only);
    let fragment = Fragment {
        base: ctx.site.base.clone(),
        rows,
        counts,
        view,
    };
    Ok(ctx.html(fragment.render()?))
}

/// POST a new check from the form: validated by the API's rules; on a mistake the page comes
/// back with the message and what was typed.
pub(crate) async fn add(ctx: &Ctx<'_>, project: Uuid) -> Result<Response, WebError> {
    ctx.writable(&project)?;
    let obj = check_object(&ctx.form);
    let spec = match parse_spec(&obj) {
        Ok(spec) => spec,
        Err(e) => return invalid(ctx, project, ServiceError::from(e).to_string()),
    };
    match ctx
        .site
        .app
        .service
        .create_check(project, spec, ApiVersion::V3)
        .await
    {
        Ok((check, _)) => Ok(response::see_other(
            &ctx.link(&format!("/checks/{}/", check.uuid)),
        )),
        Err(
            e @ (ServiceError::Invalid(_) | ServiceError::BadRequest(_) | ServiceError::InvalidUrl),
        ) => invalid(ctx, project, e.to_string()),
        Err(e) => Err(e.into()),
    }
}

fn invalid(ctx: &Ctx<'_>, project: Uuid, message: String) -> Result<Response, WebError> {
    let page = render(ctx, project, Some(message))?;
    Ok(response::html(
        warp::http::StatusCode::BAD_REQUEST,
        page,
        ctx.gzip,
    ))
}

#[cfg(test)]
#[path = "checks_tests.rs"]
mod tests;
