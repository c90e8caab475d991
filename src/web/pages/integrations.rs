//! The integrations page of a project: its channels, and adding, removing and testing them.

use askama::Template;
use uuid::Uuid;
use warp::reply::Response;

use crate::web::error::WebError;
use crate::web::pages::{Ctx, Layout, Tab};
use crate::web::router::ProjectAction;

/// One channel as listed.
#[derive(Debug, Clone)]
pub(crate) struct ChannelRow {
    pub kind: String,
    pub name: String,
}

#[derive(Template)]
#[template(path = "integrations.html")]
struct IntegrationsPage {
    layout: Layout,
    channels: Vec<ChannelRow>,
}

/// GET the page.
pub(crate) async fn page(ctx: &Ctx<'_>, project: Uuid) -> Result<Response, WebError> {
    ctx.project(&project)?;
    let channels = ctx.site.app.service.read(|s| {
        s.channels_of(&project)
            .into_iter()
            .map(|c| ChannelRow {
                kind: c.kind().to_string(),
                name: c.name.clone(),
            })
            .collect()
    });
    let page = IntegrationsPage {
        layout: ctx.layout("Integrations", Some(project), Tab::Integrations),
        channels,
    };
    Ok(ctx.html(page.render()?))
}

/// POST add, remove or test a channel.
pub(crate) async fn action(
    ctx: &Ctx<'_>,
    project: Uuid,
    _action: ProjectAction,
) -> Result<Response, WebError> {
    ctx.writable(&project)?;
    Err(WebError::NotFound)
}
