//! Serving one dashboard page: the method rules, the form body, who is asking (the session),
//! the origin and CSRF checks of every POST, and the layout every page shares. The pages
//! themselves are in the submodules, one per screen.

pub(crate) mod check;
pub(crate) mod checks;
pub(crate) mod integrations;
pub(crate) mod project;

use std::net::SocketAddr;

use uuid::Uuid;
use warp::http::{HeaderMap, Method};
use warp::reply::Response;

use crate::api::{BodyError, BodyStream, read_body};
use crate::model::Status;
use crate::service::auth::Grant;
use crate::web::error::WebError;
use crate::web::forms::Form;
use crate::web::router::{CheckAction, CheckId, Page, ProjectAction};
use crate::web::session::{CSRF_FIELD, cookie_token, csrf_ok, csrf_token, origin_ok};
use crate::web::{Site, assets, response, signin};

/// Largest form body taken (the edit form with every field filled is a few KiB).
pub(crate) const MAX_FORM_BYTES: usize = 64 * 1024;

/// A request as the pages see it (the body is read by [`serve`]).
#[derive(Debug)]
pub(crate) struct Incoming {
    pub method: Method,
    pub query: String,
    pub headers: HeaderMap,
    pub remote: Option<SocketAddr>,
}

/// A signed-in visitor: the session's token and the keys it holds that still exist.
#[derive(Debug, Clone)]
pub(crate) struct Visitor {
    pub token: String,
    pub csrf: String,
    pub grants: Vec<Grant>,
}

impl Visitor {
    /// The grant for `project`, if the session holds a key of it.
    pub(crate) fn grant(&self, project: &Uuid) -> Option<&Grant> {
        self.grants.iter().find(|g| g.project == *project)
    }
}

/// Everything a page handler gets.
pub(crate) struct Ctx<'a> {
    pub site: &'a Site,
    pub req: &'a Incoming,
    pub visitor: Option<Visitor>,
    /// The POST body's fields, or the query string's for GET.
    pub form: Form,
    pub gzip: bool,
}

impl Ctx<'_> {
    /// The visitor's grant for `project`: 404 when the session has no key of it (a project
    /// the visitor cannot see does not exist for them).
    pub(crate) fn project(&self, project: &Uuid) -> Result<&Grant, WebError> {
        self.visitor
            .as_ref()
            .and_then(|v| v.grant(project))
            .ok_or(WebError::NotFound)
    }

    /// As [`Ctx::project`], for changes: 403 when the key is read-only.
    pub(crate) fn writable(&self, project: &Uuid) -> Result<&Grant, WebError> {
        let grant = self.project(project)?;
        if grant.read_only {
            return Err(WebError::Forbidden(
                "Your key for this project is read-only: it can look, not change.",
            ));
        }
        Ok(grant)
    }

    /// The check a path names, if the visitor holds a key of its project, with that grant. By
    /// UUID in any of the session's projects; by `unique_key` in each of them in turn.
    pub(crate) fn check(&self, id: &CheckId) -> Result<(Uuid, &Grant), WebError> {
        let visitor = self.visitor.as_ref().ok_or(WebError::NotFound)?;
        let found = self.site.app.service.read(|s| match id {
            CheckId::Uuid(u) => s.check(u).map(|c| (c.uuid, c.project)),
            CheckId::UniqueKey(k) => visitor
                .grants
                .iter()
                .find_map(|g| s.check_by_unique_key(&g.project, k))
                .map(|c| (c.uuid, c.project)),
        });
        let (uuid, project) = found.ok_or(WebError::NotFound)?;
        Ok((uuid, self.project(&project)?))
    }

    /// `path` under the site root.
    pub(crate) fn link(&self, path: &str) -> String {
        self.site.link(path)
    }

    /// An HTML page.
    pub(crate) fn html(&self, page: String) -> Response {
        response::html(warp::http::StatusCode::OK, page, self.gzip)
    }

    /// The layout of a page titled `title`, in `project` (its tabs and switcher) when given.
    pub(crate) fn layout(&self, title: &str, project: Option<Uuid>, tab: Tab) -> Layout {
        let service = &self.site.app.service;
        let now = service.now();
        let grants = self.visitor.as_ref().map_or(&[][..], |v| &v.grants[..]);
        let (projects, down) = service.read(|s| {
            let projects: Vec<NavProject> = grants
                .iter()
                .filter_map(|g| {
                    s.project(&g.project).map(|p| NavProject {
                        uuid: p.uuid.to_string(),
                        name: p.name.clone(),
                        read_only: g.read_only,
                        current: Some(p.uuid) == project,
                    })
                })
                .collect();
            let down = project.map_or(0, |p| {
                s.checks_of(&p)
                    .filter(|c| c.status_at(now, false) == Status::Down)
                    .count()
            });
            (projects, down)
        });
        let current = projects.iter().find(|p| p.current).cloned();
        let title = if down > 0 {
            format!("({down} down) {title}")
        } else {
            title.to_string()
        };
        Layout {
            base: self.site.base.clone(),
            asset_version: assets::version(),
            title,
            csrf: self
                .visitor
                .as_ref()
                .map(|v| v.csrf.clone())
                .unwrap_or_default(),
            signed_in: self.visitor.is_some(),
            projects,
            current,
            tab,
            down,
        }
    }
}

/// Which tab of a project's pages is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tab {
    None,
    Checks,
    Integrations,
    Settings,
}

/// A project in the switcher.
#[derive(Debug, Clone)]
pub(crate) struct NavProject {
    pub uuid: String,
    pub name: String,
    pub read_only: bool,
    pub current: bool,
}

/// What `layout.html` needs: every page template has a `layout` field.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// The site root's path: the prefix of every link.
    pub base: String,
    pub asset_version: &'static str,
    pub title: String,
    /// The session's CSRF token ("" when signed out).
    pub csrf: String,
    pub signed_in: bool,
    pub projects: Vec<NavProject>,
    pub current: Option<NavProject>,
    pub tab: Tab,
    /// Checks down in the current project (the icon shows the number).
    pub down: usize,
}

impl Layout {
    pub(crate) fn tab_is(&self, name: &str) -> bool {
        matches!(
            (self.tab, name),
            (Tab::Checks, "checks")
                | (Tab::Integrations, "integrations")
                | (Tab::Settings, "settings")
        )
    }
}

/// Serves `page`; every failure becomes the error page.
pub(crate) async fn serve(site: &Site, page: Page, req: Incoming, body: BodyStream) -> Response {
    let gzip = response::accepts_gzip(&req.headers);
    match run(site, page, &req, body, gzip).await {
        Ok(resp) => resp,
        Err(e) => e.into_response(&site.base, gzip),
    }
}

/// Which methods a page takes: GET (and HEAD) for pages, POST for actions, both for sign-in.
fn method_allowed(page: &Page, method: &Method) -> bool {
    let get = *method == Method::GET || *method == Method::HEAD;
    let post = *method == Method::POST;
    match page {
        Page::SignIn => get || post,
        p if p.is_action() => post,
        _ => get,
    }
}

async fn run(
    site: &Site,
    page: Page,
    req: &Incoming,
    body: BodyStream,
    gzip: bool,
) -> Result<Response, WebError> {
    if !method_allowed(&page, &req.method) {
        return Err(WebError::MethodNotAllowed);
    }
    if let Page::Asset(name) = &page {
        return assets::serve(name, gzip).ok_or(WebError::NotFound);
    }
    let post = req.method == Method::POST;
    let form = if post {
        match read_body(body, MAX_FORM_BYTES, site.app.config.body_timeout).await {
            Ok((_, true)) => return Err(WebError::TooLarge),
            Ok((bytes, false)) => Form::parse(&bytes),
            Err(BodyError::TimedOut | BodyError::Read) => {
                return Err(WebError::BadRequest(
                    "The form did not arrive whole.".into(),
                ));
            }
        }
    } else {
        Form::parse(req.query.as_bytes())
    };
    let visitor = visitor(site, &req.headers).await;
    if post {
        let scheme = crate::api::client(site.app.config.trust_proxy, &req.headers, req.remote).1;
        if !origin_ok(&req.headers, &site.origin, &scheme) {
            return Err(WebError::Forbidden(
                "This form was sent from another site; use the dashboard's own pages.",
            ));
        }
        if page.is_action() {
            let Some(v) = &visitor else {
                return Err(WebError::Forbidden(
                    "Your session has ended; sign in again and repeat what you did.",
                ));
            };
            if !csrf_ok(&v.token, form.get(CSRF_FIELD).unwrap_or("")) {
                return Err(WebError::Forbidden(
                    "This form has expired (its security token does not match); reload the \
                     page and try again.",
                ));
            }
        }
    }
    let ctx = Ctx {
        site,
        req,
        visitor,
        form,
        gzip,
    };
    match page {
        Page::Home => match ctx.visitor.as_ref().and_then(|v| v.grants.first()) {
            Some(g) => Ok(response::see_other(
                &ctx.link(&format!("/projects/{}/checks/", g.project)),
            )),
            None => signin::form(&ctx, None),
        },
        Page::SignIn if post => signin::sign_in(&ctx).await,
        Page::SignIn => signin::form(&ctx, None),
        Page::SignOut => signin::sign_out(&ctx).await,
        Page::Checks(p) => checks::page(&ctx, p),
        Page::CheckRows(p) => checks::rows_fragment(&ctx, p),
        Page::Integrations(p) => integrations::page(&ctx, p),
        Page::Project(p) => project::page(&ctx, p),
        Page::ProjectAction(p, ProjectAction::AddCheck) => checks::add(&ctx, p).await,
        Page::ProjectAction(
            p,
            action @ (ProjectAction::AddChannel
            | ProjectAction::RemoveChannel
            | ProjectAction::TestChannel),
        ) => integrations::action(&ctx, p, action).await,
        Page::ProjectAction(p, action) => project::action(&ctx, p, action).await,
        Page::Check(c) => check::page(&ctx, c).await,
        Page::CheckAction(c, CheckAction::Edit) => check::edit(&ctx, c).await,
        Page::CheckAction(c, action) => check::action(&ctx, c, action).await,
        Page::PingBody(c, n) => check::ping_body(&ctx, c, n).await,
        Page::SchedulePreview(c) => check::preview(&ctx, c),
        Page::Asset(_) => Err(WebError::NotFound),
    }
}

/// The visitor of a request's session cookie, if it names a live session; its use is recorded
/// (at most hourly, see `model::session`). A failure to record is not the visitor's problem.
async fn visitor(site: &Site, headers: &HeaderMap) -> Option<Visitor> {
    let token = cookie_token(headers)?;
    let view = site.app.service.session(&token)?;
    if view.needs_touch
        && let Err(e) = site.app.service.touch_session(&token).await
    {
        tracing::debug!("could not record a session's use: {e}");
    }
    Some(Visitor {
        csrf: csrf_token(&token),
        token,
        grants: view.grants,
    })
}
