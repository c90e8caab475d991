//! The project page: badges, API keys and the ping key.

use askama::Template;
use uuid::Uuid;
use warp::reply::Response;

use crate::web::error::WebError;
use crate::web::pages::{Ctx, Layout, Tab};
use crate::web::router::ProjectAction;

/// One API key as listed (never the key itself: only its identifier).
#[derive(Debug, Clone)]
pub(crate) struct KeyRow {
    pub id: String,
    pub label: String,
    pub read_only: bool,
}

#[derive(Template)]
#[template(path = "project.html")]
struct ProjectPage {
    layout: Layout,
    name: String,
    keys: Vec<KeyRow>,
}

/// GET the page.
pub(crate) fn page(ctx: &Ctx<'_>, project: Uuid) -> Result<Response, WebError> {
    ctx.project(&project)?;
    let (name, keys) = ctx.site.app.service.read(|s| {
        let name = s
            .project(&project)
            .map(|p| p.name.clone())
            .unwrap_or_default();
        let keys = s
            .api_keys_of(&project)
            .into_iter()
            .map(|k| KeyRow {
                id: k.id.clone(),
                label: k.label.clone(),
                read_only: k.read_only,
            })
            .collect();
        (name, keys)
    });
    let page = ProjectPage {
        layout: ctx.layout("Project", Some(project), Tab::Settings),
        name,
        keys,
    };
    Ok(ctx.html(page.render()?))
}

/// POST add or remove an API key.
pub(crate) async fn action(
    ctx: &Ctx<'_>,
    project: Uuid,
    _action: ProjectAction,
) -> Result<Response, WebError> {
    ctx.writable(&project)?;
    Err(WebError::NotFound)
}
