//! The page of one check: its status, URLs, schedule, recent pings and flips, and (for
//! read-write sessions) pause, resume, delete and the edit form, which the API's own rules
//! validate.

use askama::Template;
use uuid::Uuid;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::model::json::durations;
use crate::model::spec::parse_spec;
use crate::model::{ApiVersion, Check, Flip, Ping};
use crate::service::ServiceError;
use crate::web::error::WebError;
use crate::web::forms::check_object;
use crate::web::pages::{Ctx, Layout, Tab};
use crate::web::response;
use crate::web::router::{CheckAction, CheckId};

/// Pings listed on the page.
pub(crate) const PINGS_SHOWN: usize = 100;

/// One line of the ping log.
#[derive(Debug, Clone)]
pub(crate) struct PingRow {
    pub n: u64,
    pub created: String,
    pub kind: &'static str,
    pub method: String,
    pub ua: String,
    pub duration: Option<String>,
    pub body_len: u32,
}

#[derive(Template)]
#[template(path = "check.html")]
struct CheckPage {
    layout: Layout,
    /// The path segment of this check (UUID, or unique key for read-only sessions).
    id: String,
    read_only: bool,
    check: Check,
    status: &'static str,
    ping_url: String,
    pings: Vec<PingRow>,
    flips: Vec<Flip>,
    error: Option<String>,
}

fn ping_rows(pings: &[Ping]) -> Vec<PingRow> {
    let durations = durations(pings);
    pings
        .iter()
        .zip(durations)
        .map(|(p, d)| PingRow {
            n: p.n,
            created: p.created.to_string(),
            kind: p.kind.as_str(),
            method: p.method.clone(),
            ua: p.ua.clone(),
            duration: d.map(|d| format!("{} s", d.as_secs())),
            body_len: p.body_len,
        })
        .collect()
}

async fn render(
    ctx: &Ctx<'_>,
    id: &CheckId,
    error: Option<String>,
) -> Result<(StatusCode, String), WebError> {
    let (uuid, grant) = ctx.check(id)?;
    let read_only = grant.read_only;
    let service = &ctx.site.app.service;
    let check = service
        .read(|s| s.check(&uuid).cloned())
        .ok_or(WebError::NotFound)?;
    let pings = service.pings(uuid, PINGS_SHOWN).await?;
    let mut flips = service.flips(uuid)?;
    flips.reverse();
    let now = service.now();
    let status = check.status_at(now, false).as_str();
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
        ping_url: format!("{}/ping/{}", service.site_root(), uuid),
        status,
        pings: ping_rows(&pings),
        flips,
        check,
        error: error.clone(),
    };
    let code = if error.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    Ok((code, page.render()?))
}

/// GET the page.
pub(crate) async fn page(ctx: &Ctx<'_>, id: CheckId) -> Result<Response, WebError> {
    let (code, html) = render(ctx, &id, None).await?;
    Ok(response::html(code, html, ctx.gzip))
}

/// POST pause, resume or delete.
pub(crate) async fn action(
    ctx: &Ctx<'_>,
    uuid: Uuid,
    action: CheckAction,
) -> Result<Response, WebError> {
    let (_, grant) = ctx.check(&CheckId::Uuid(uuid))?;
    let project = grant.project;
    ctx.writable(&project)?;
    let service = &ctx.site.app.service;
    let back = ctx.link(&format!("/checks/{uuid}/"));
    match action {
        CheckAction::Pause => {
            service.pause_check(project, uuid).await?;
        }
        CheckAction::Resume => {
            service.resume_check(project, uuid).await?;
        }
        CheckAction::Delete => {
            service.delete_check(project, uuid).await?;
            return Ok(response::see_other(
                &ctx.link(&format!("/projects/{project}/checks/")),
            ));
        }
        CheckAction::Edit => return edit(ctx, uuid).await,
    }
    Ok(response::see_other(&back))
}

/// POST the edit form: every field the API takes, validated by the API's rules.
pub(crate) async fn edit(ctx: &Ctx<'_>, uuid: Uuid) -> Result<Response, WebError> {
    let (_, grant) = ctx.check(&CheckId::Uuid(uuid))?;
    let project = grant.project;
    ctx.writable(&project)?;
    let obj = check_object(&ctx.form);
    let result = match parse_spec(&obj) {
        Ok(spec) => {
            ctx.site
                .app
                .service
                .update_check(project, uuid, spec, ApiVersion::V3)
                .await
        }
        Err(e) => Err(ServiceError::from(e)),
    };
    match result {
        Ok(_) => Ok(response::see_other(&ctx.link(&format!("/checks/{uuid}/")))),
        Err(
            e @ (ServiceError::Invalid(_) | ServiceError::BadRequest(_) | ServiceError::InvalidUrl),
        ) => {
            let (code, html) = render(ctx, &CheckId::Uuid(uuid), Some(e.to_string())).await?;
            Ok(response::html(code, html, ctx.gzip))
        }
        Err(e) => Err(e.into()),
    }
}

/// GET a ping's whole body, as plain text (never rendered as HTML).
pub(crate) async fn ping_body(ctx: &Ctx<'_>, id: CheckId, n: u64) -> Result<Response, WebError> {
    let (uuid, _) = ctx.check(&id)?;
    let body = ctx
        .site
        .app
        .service
        .ping_body(uuid, n)
        .await?
        .ok_or(WebError::NotFound)?;
    let mut resp = response::body(StatusCode::OK, "text/plain; charset=utf-8", body, ctx.gzip);
    resp.headers_mut().insert(
        warp::http::header::CACHE_CONTROL,
        warp::http::HeaderValue::from_static("no-store"),
    );
    Ok(resp)
}

/// GET the next fire times of the schedule in the query (`schedule`, `tz`), as a fragment
/// for the edit form's preview.
pub(crate) fn preview(ctx: &Ctx<'_>, uuid: Uuid) -> Result<Response, WebError> {
    ctx.check(&CheckId::Uuid(uuid))?;
    let mut obj = serde_json::Map::new();
    obj.insert("schedule".into(), ctx.form.text("schedule").into());
    obj.insert("tz".into(), ctx.form.text("tz").into());
    let text = match parse_spec(&obj) {
        Ok(_) => "valid".to_string(),
        Err(e) => e.to_string(),
    };
    Ok(response::body(
        StatusCode::OK,
        "text/plain; charset=utf-8",
        text.into_bytes(),
        false,
    ))
}
