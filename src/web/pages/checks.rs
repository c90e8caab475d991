//! The checks page of a project: every check with its status, schedule, last ping and tags,
//! filtered by tag and text and sorted as asked (the query string, so it works without
//! JavaScript and a link keeps the view), counts per status, and the "new check" form.

use askama::Template;
use jiff::Timestamp;
use uuid::Uuid;
use warp::reply::Response;

use crate::model::spec::parse_spec;
use crate::model::{ApiVersion, Check, Status};
use crate::service::ServiceError;
use crate::web::error::WebError;
use crate::web::forms::{Form, check_object};
use crate::web::pages::{Ctx, Layout, Tab};
use crate::web::response;

/// One row of the table.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    /// Path segment of the check's page: the UUID, or the unique key for read-only sessions.
    pub id: String,
    pub name: String,
    pub slug: String,
    pub tags: Vec<String>,
    pub status: &'static str,
    pub last_ping: Option<Timestamp>,
}

/// How the table is filtered and sorted (from the query string).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct View {
    pub tag: String,
    pub text: String,
    pub sort: String,
}

impl View {
    pub(crate) fn from_form(form: &Form) -> View {
        View {
            tag: form.text("tag").to_string(),
            text: form.text("q").to_string(),
            sort: form.text("sort").to_string(),
        }
    }
}

/// Status counts at the top of the page.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counts {
    pub up: usize,
    pub grace: usize,
    pub down: usize,
    pub paused: usize,
    pub new: usize,
}

/// The rows of `checks` at `now` that `view` keeps, in its order.
pub(crate) fn rows(
    checks: &[&Check],
    now: Timestamp,
    view: &View,
    read_only: bool,
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
        if !text.is_empty()
            && !c.name.to_lowercase().contains(&text)
            && !c.slug.to_lowercase().contains(&text)
            && !c.tags.to_lowercase().contains(&text)
        {
            continue;
        }
        rows.push(Row {
            id: if read_only {
                c.unique_key()
            } else {
                c.uuid.to_string()
            },
            name: c.name.clone(),
            slug: c.slug.clone(),
            tags: c.tag_list().map(str::to_string).collect(),
            status: status.as_str(),
            last_ping: c.last_ping,
        });
    }
    match view.sort.as_str() {
        "name" => rows.sort_by_key(|r| r.name.to_lowercase()),
        "status" => rows.sort_by_key(|r| status_rank(r.status)),
        "last_ping" => rows.sort_by_key(|r| std::cmp::Reverse(r.last_ping)),
        _ => {}
    }
    (rows, counts)
}

/// Worst first: down, late, new, up, paused.
fn status_rank(status: &str) -> u8 {
    match status {
        "down" => 0,
        "grace" => 1,
        "new" => 2,
        "up" | "started" => 3,
        _ => 4,
    }
}

#[derive(Template)]
#[template(path = "checks.html")]
struct ChecksPage {
    layout: Layout,
    project: String,
    rows: Vec<Row>,
    counts: Counts,
    view: View,
    read_only: bool,
    /// The add form's error, and what was typed.
    error: Option<String>,
    typed: Form,
}

fn render(ctx: &Ctx<'_>, project: Uuid, error: Option<String>) -> Result<String, WebError> {
    let grant = ctx.project(&project)?;
    let view = View::from_form(&ctx.form);
    let now = ctx.site.app.service.now();
    let (rows, counts) = ctx.site.app.service.read(|s| {
        let checks: Vec<&Check> = s.checks_of(&project).collect();
        rows(&checks, now, &view, grant.read_only)
    });
    let page = ChecksPage {
        layout: ctx.layout("Checks", Some(project), Tab::Checks),
        project: project.to_string(),
        rows,
        counts,
        view,
        read_only: grant.read_only,
        typed: if error.is_some() {
            ctx.form.clone()
        } else {
            Form::default()
        },
        error,
    };
    Ok(page.render()?)
}

/// GET the page.
pub(crate) fn page(ctx: &Ctx<'_>, project: Uuid) -> Result<Response, WebError> {
    Ok(ctx.html(render(ctx, project, None)?))
}

/// GET the table alone (live updates keep the page's filters, which come in the query).
pub(crate) fn rows_fragment(ctx: &Ctx<'_>, project: Uuid) -> Result<Response, WebError> {
    page(ctx, project)
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
