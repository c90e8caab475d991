//! The project page: its quiet time (the project's quiet window, and snoozing every check or
//! a tag's at once), its badges (rendered, with their URLs), its API keys (creating one shows
//! the key once; removing one, the session's own included, takes effect at once), and for
//! read-write sessions the ping key and the Prometheus URL. Read-only sessions see neither
//! key identifiers nor the ping key, as the read-only API shows no secrets.

use std::collections::BTreeSet;

use askama::Template;
use jiff::SignedDuration;
use uuid::Uuid;
use warp::reply::Response;

use crate::model::badge::{BadgeUrls, project_badge_urls};
use crate::model::check::QuietWindow;
use crate::model::limits::{DEFAULT_QUIET_SECS, DEFAULT_TZ};
use crate::model::quiet::QuietSpec;
use crate::model::time::iso_seconds;
use crate::service::ServiceError;
use crate::web::error::WebError;
use crate::web::pages::{Ctx, Layout, Tab};
use crate::web::response;
use crate::web::router::ProjectAction;

/// Longest key label taken (the CLI's labels are as short as this in practice).
const MAX_LABEL: usize = 200;

/// One API key as listed (never the key itself: only its identifier, to read-write sessions).
#[derive(Debug, Clone)]
pub(crate) struct KeyRow {
    /// "" for read-only sessions.
    pub id: String,
    pub label: String,
    pub created: String,
    pub read_only: bool,
    /// The key this session signed in to the project with.
    pub yours: bool,
}

/// A project badge: for every check (`*`) or one tag.
#[derive(Debug, Clone)]
pub(crate) struct Badge {
    pub tag: String,
    /// Unique within the page, for the copy buttons' targets.
    pub n: usize,
    pub urls: BadgeUrls,
    /// The same under the site root's path, for the page's own `<img>` (same origin, as the
    /// CSP wants, whatever host the browser reached the dashboard by).
    pub local: BadgeUrls,
}

/// A key just created: the only time its plaintext is shown.
#[derive(Debug, Clone)]
pub(crate) struct Created {
    pub plaintext: String,
    pub read_only: bool,
    /// A read-only key makes the Prometheus URL whole.
    pub metrics_url: Option<String>,
}

/// The project's quiet window as the form shows it (empty fields: none).
#[derive(Debug, Clone, Default)]
pub(crate) struct QuietForm {
    pub schedule: String,
    pub tz: String,
    pub duration: String,
    /// In words, when there is a window: "2h from Sun 02:00 (Europe/Riga)".
    pub words: Option<String>,
}

impl QuietForm {
    fn of(quiet: Option<&QuietWindow>) -> QuietForm {
        quiet.map_or_else(
            || QuietForm {
                tz: DEFAULT_TZ.to_string(),
                duration: DEFAULT_QUIET_SECS.to_string(),
                ..QuietForm::default()
            },
            |q| QuietForm {
                schedule: q.schedule.clone(),
                tz: q.tz.clone(),
                duration: q.duration.to_string(),
                words: Some(format!(
                    "{:#} from each {} ({})",
                    SignedDuration::from_secs(q.duration),
                    q.schedule,
                    q.tz
                )),
            },
        )
    }
}

#[derive(Template)]
#[template(path = "project.html")]
struct ProjectPage {
    layout: Layout,
    project: Uuid,
    name: String,
    read_only: bool,
    quiet: QuietForm,
    /// The project's tags, for snoozing one tag's checks.
    tags: Vec<String>,
    /// How many checks are snoozed now.
    snoozed: usize,
    badges: Vec<Badge>,
    keys: Vec<KeyRow>,
    /// Read-write sessions only.
    ping_key: Option<String>,
    ping_base: String,
    metrics_url: String,
    created: Option<Created>,
    error: Option<String>,
}

/// The Prometheus URL of a project with the read-only key `key` (`api::metrics`'s path: the
/// key in the URL must be a read-only one).
pub(crate) fn metrics_url(site_root: &str, project: &Uuid, key: &str) -> String {
    format!("{site_root}/projects/{project}/metrics/{key}")
}

fn render(
    ctx: &Ctx<'_>,
    project: Uuid,
    created: Option<Created>,
    error: Option<String>,
) -> Result<String, WebError> {
    let grant = ctx.project(&project)?;
    let read_only = grant.read_only;
    let service = &ctx.site.app.service;
    let root = service.site_root();
    let now = service.now();
    let (name, badge_key, ping_key, tags, keys, quiet, snoozed) = service.read(|s| {
        let p = s.project(&project);
        let snoozed = s.checks_of(&project).filter(|c| c.is_snoozed(now)).count();
        let tags: BTreeSet<String> = s
            .checks_of(&project)
            .flat_map(|c| c.tag_list().map(str::to_string).collect::<Vec<_>>())
            .collect();
        let mut keys: Vec<KeyRow> = s
            .api_keys_of(&project)
            .into_iter()
            .map(|k| KeyRow {
                id: if read_only {
                    String::new()
                } else {
                    k.id.clone()
                },
                label: k.label.clone(),
                created: iso_seconds(k.created),
                read_only: k.read_only,
                yours: k.id == grant.key_id,
            })
            .collect();
        keys.sort_by(|a, b| a.created.cmp(&b.created));
        (
            p.map(|p| p.name.clone()).unwrap_or_default(),
            p.map(|p| p.badge_key.clone()).unwrap_or_default(),
            p.map(|p| p.ping_key.clone()).unwrap_or_default(),
            tags,
            keys,
            QuietForm::of(p.and_then(|p| p.quiet.as_deref())),
            snoozed,
        )
    });
    let secret = service.badge_secret();
    let badges = std::iter::once("*".to_string())
        .chain(tags.iter().cloned())
        .enumerate()
        .map(|(n, tag)| Badge {
            urls: project_badge_urls(root, &secret, &badge_key, &tag),
            local: project_badge_urls(&ctx.site.base, &secret, &badge_key, &tag),
            tag,
            n,
        })
        .collect();
    let page = ProjectPage {
        layout: ctx.layout("Project", Some(project), Tab::Settings),
        project,
        name,
        read_only,
        quiet,
        tags: tags.into_iter().collect(),
        snoozed,
        badges,
        keys,
        ping_key: (!read_only).then_some(ping_key),
        ping_base: format!("{root}/ping/"),
        metrics_url: metrics_url(root, &project, "<read-only API key>"),
        created,
        error,
    };
    Ok(page.render()?)
}

/// GET the page.
pub(crate) fn page(ctx: &Ctx<'_>, project: Uuid) -> Result<Response, WebError> {
    Ok(ctx.html(render(ctx, project, None, None)?))
}

/// POST add or remove an API key, set the quiet window, snooze checks.
pub(crate) async fn action(
    ctx: &Ctx<'_>,
    project: Uuid,
    action: ProjectAction,
) -> Result<Response, WebError> {
    let own_key = ctx.writable(&project)?.key_id.clone();
    let service = &ctx.site.app.service;
    let name = service
        .read(|s| s.project(&project).map(|p| p.name.clone()))
        .ok_or(WebError::NotFound)?;
    match action {
        ProjectAction::AddKey => {
            let label = ctx.form.text("label");
            if label.chars().count() > MAX_LABEL {
                let error = format!("A label is at most {MAX_LABEL} characters.");
                return bad_request(ctx, project, error);
            }
            let read_only = ctx.form.get("read_only").is_some_and(|v| v == "1");
            let new = service.add_key(&name, read_only, label).await?;
            let created = Created {
                metrics_url: read_only
                    .then(|| metrics_url(service.site_root(), &project, &new.plaintext)),
                plaintext: new.plaintext,
                read_only,
            };
            Ok(ctx.html(render(ctx, project, Some(created), None)?))
        }
        ProjectAction::SetQuiet => {
            // Left empty, the zone and length are "not given" (kept), as an API body that
            // leaves them out.
            let mut body = crate::web::forms::check_object(&ctx.form);
            body.retain(|k, v| {
                k.starts_with("quiet_") && !(k != "quiet_schedule" && v.as_str() == Some(""))
            });
            let spec = match QuietSpec::parse(&body) {
                Ok(spec) => spec,
                Err(e) => return bad_request(ctx, project, e.0),
            };
            if let Err(e) = service.set_project_quiet(project, spec).await {
                return match e {
                    ServiceError::Invalid(e) => bad_request(ctx, project, e.0),
                    e => Err(e.into()),
                };
            }
            Ok(response::see_other(
                &ctx.link(&format!("/projects/{project}/settings/#quiet")),
            ))
        }
        ProjectAction::SnoozeChecks => {
            let mut body = serde_json::Map::new();
            let seconds = ctx.form.text("seconds");
            let value = seconds
                .parse::<i64>()
                .map_or_else(|_| serde_json::json!(seconds), |n| serde_json::json!(n));
            body.insert("seconds".into(), value);
            let until = match crate::model::snooze::parse_body(&body, service.now()) {
                Ok(until) => until,
                Err(e) => return bad_request(ctx, project, e.0),
            };
            let tag = ctx.form.text("tag");
            let tags = if tag.is_empty() {
                vec![]
            } else {
                vec![tag.to_string()]
            };
            service.snooze_checks(project, tags, until).await?;
            Ok(response::see_other(
                &ctx.link(&format!("/projects/{project}/settings/#quiet")),
            ))
        }
        ProjectAction::RemoveKey => {
            let id = ctx.form.text("key");
            service.remove_key(&name, id).await?;
            // Without its key the session no longer holds this project: home shows what it
            // still holds, or the sign-in form.
            let to = if id == own_key {
                ctx.link("/")
            } else {
                ctx.link(&format!("/projects/{project}/settings/"))
            };
            Ok(response::see_other(&to))
        }
        _ => Err(WebError::NotFound),
    }
}

/// The page again with `error` at its top, answered 400: nothing was changed.
fn bad_request(ctx: &Ctx<'_>, project: Uuid, error: String) -> Result<Response, WebError> {
    let html = render(ctx, project, None, Some(error))?;
    Ok(response::html(
        warp::http::StatusCode::BAD_REQUEST,
        html,
        ctx.gzip,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prometheus_url_is_the_apis_path() {
        let u = Uuid::nil();
        assert_eq!(
            metrics_url("https://m.example/o", &u, "hcr_x"),
            format!("https://m.example/o/projects/{u}/metrics/hcr_x")
        );
    }
}
