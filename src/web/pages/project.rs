//! The project page: badges with their URLs, API keys (created here with the plaintext shown
//! once, removed with confirmation), the ping key and the Prometheus URL. A read-only session
//! sees the badges only: the rest are secrets or lead to them.

use askama::Template;
use uuid::Uuid;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::api::project::{BadgeLinks, badge_links};
use crate::service::ServiceError;
use crate::web::error::WebError;
use crate::web::pages::{Ctx, Layout, Tab};
use crate::web::response;
use crate::web::router::ProjectAction;

/// One API key as listed (never the key itself: only its identifier).
#[derive(Debug, Clone)]
pub(crate) struct KeyRow {
    pub(crate) id: String,
    pub(crate) label: String,
    pub(crate) created: String,
    pub(crate) read_only: bool,
}

#[derive(Template)]
#[template(path = "project.html")]
struct ProjectPage {
    layout: Layout,
    project: String,
    name: String,
    read_only: bool,
    /// Tag, URLs, and the image's path under this site (the CSP allows images from here only).
    badges: Vec<(String, BadgeLinks, String)>,
    keys: Vec<KeyRow>,
    ping_key: String,
    site_root: String,
    /// A key just created: its plaintext, shown this once.
    new_key: Option<String>,
    error: Option<String>,
}

fn render(
    ctx: &Ctx<'_>,
    project: Uuid,
    new_key: Option<String>,
    error: Option<String>,
) -> Result<Response, WebError> {
    let grant = ctx.project(&project)?;
    let read_only = grant.read_only;
    let service = &ctx.site.app.service;
    let (name, ping_key, keys) = service.read(|s| {
        let p = s.project(&project);
        let keys = s
            .api_keys_of(&project)
            .into_iter()
            .map(|k| KeyRow {
                id: k.id.clone(),
                label: k.label.clone(),
                created: k.created.strftime("%Y-%m-%d").to_string(),
                read_only: k.read_only,
            })
            .collect();
        (
            p.map(|p| p.name.clone()).unwrap_or_default(),
            p.map(|p| p.ping_key.clone()).unwrap_or_default(),
            keys,
        )
    });
    let page = ProjectPage {
        layout: ctx.layout("Project", Some(project), Tab::Settings),
        project: project.to_string(),
        name,
        read_only,
        badges: badge_links(service, &project)
            .into_iter()
            .map(|(tag, b)| {
                let img = b
                    .svg
                    .strip_prefix(&ctx.site.origin)
                    .unwrap_or(&b.svg)
                    .to_string();
                (tag, b, img)
            })
            .collect(),
        keys: if read_only { Vec::new() } else { keys },
        ping_key: if read_only { String::new() } else { ping_key },
        site_root: service.site_root().to_string(),
        new_key,
        error,
    };
    let status = if page.error.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    Ok(response::html(status, page.render()?, ctx.gzip))
}

/// GET the page.
pub(crate) fn page(ctx: &Ctx<'_>, project: Uuid) -> Result<Response, WebError> {
    render(ctx, project, None, None)
}

/// POST add or remove an API key.
pub(crate) async fn action(
    ctx: &Ctx<'_>,
    project: Uuid,
    action: ProjectAction,
) -> Result<Response, WebError> {
    ctx.writable(&project)?;
    let service = &ctx.site.app.service;
    let name = service
        .read(|s| s.project(&project).map(|p| p.name.clone()))
        .ok_or(WebError::NotFound)?;
    match action {
        ProjectAction::AddKey => {
            let read_only = ctx.form.get("read_only").is_some_and(|v| v == "1");
            let label = ctx.form.text("label");
            match service.add_key(&name, read_only, label).await {
                Ok(new) => render(ctx, project, Some(new.plaintext), None),
                Err(e @ (ServiceError::Admin(_) | ServiceError::BadRequest(_))) => {
                    render(ctx, project, None, Some(e.to_string()))
                }
                Err(e) => Err(e.into()),
            }
        }
        ProjectAction::RemoveKey => {
            service.remove_key(&name, ctx.form.text("key")).await?;
            Ok(response::see_other(
                &ctx.link(&format!("/projects/{project}/settings/")),
            ))
        }
        _ => Err(WebError::NotFound),
    }
}
