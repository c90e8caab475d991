//! The integrations page of a project: every channel with a secret-free summary of its target
//! (`ChannelConfig::summary`, as `channel ls` shows it), its last deliveries and the checks it
//! alerts for; and, for read-write sessions, adding (`web::channel_form`, the CLI's rules),
//! removing and sending a test notification (the CLI's `channel test`).

use askama::Template;
use uuid::Uuid;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::model::Channel;
use crate::model::events::Events;
use crate::model::outbox::health;
use crate::model::time::iso_seconds;
use crate::notify::Transports;
use crate::notify::setup::{config_from_fields, parse_repeat};
use crate::notify::worker::send_test;
use crate::service::admin::{NewChannel, channel_named};
use crate::service::{AdminError, ServiceError};
use crate::web::channel_form::{KindForm, fields_of, form_words, kind_forms, web_kinds};
use crate::web::error::WebError;
use crate::web::forms::{Form, events_chosen};
use crate::web::pages::{Ctx, Layout, Tab};
use crate::web::response;
use crate::web::router::ProjectAction;

/// Deliveries listed per channel, newest first.
pub(crate) const DELIVERIES_SHOWN: usize = 5;
/// Deliveries read to tell how many failed in a row.
const HEALTH_WINDOW: usize = 20;

/// One delivery attempt as listed.
#[derive(Debug, Clone)]
pub(crate) struct DeliveryRow {
    pub at: String,
    pub ok: bool,
    pub test: bool,
    pub code: Option<u16>,
    pub error: String,
    pub ms: u128,
}

/// A check a channel alerts for.
#[derive(Debug, Clone)]
pub(crate) struct CheckLink {
    /// Path segment of its page (unique key for read-only sessions).
    pub id: String,
    pub name: String,
}

/// One channel as listed.
#[derive(Debug, Clone)]
pub(crate) struct ChannelRow {
    /// The UUID, for the forms (read-write sessions only; "" otherwise).
    pub id: String,
    pub kind: String,
    pub name: String,
    pub summary: String,
    pub default_for_new: bool,
    pub repeat: Option<String>,
    /// The events it sends when not `down,up` (`down,up,late`).
    pub events: Option<String>,
    /// "never used", "ok" or "failing ×n".
    pub health: String,
    pub failing: bool,
    pub deliveries: Vec<DeliveryRow>,
    pub checks: Vec<CheckLink>,
}

/// What the page says at the top after an action.
#[derive(Debug, Clone)]
pub(crate) struct Notice {
    pub ok: bool,
    pub text: String,
}

#[derive(Template)]
#[template(path = "integrations.html")]
struct IntegrationsPage {
    layout: Layout,
    project: Uuid,
    read_only: bool,
    channels: Vec<ChannelRow>,
    kinds: Vec<KindForm>,
    notice: Option<Notice>,
    /// Why the add form was refused, and which kind's form to open with what was typed.
    error: Option<String>,
    open_kind: String,
    typed: Form,
}

impl IntegrationsPage {
    /// What to fill a field of `kind`'s form with: what was typed when that form came back
    /// refused, never a secret.
    fn typed_value(&self, kind: &str, name: &str) -> &str {
        if self.open_kind == kind {
            self.typed.get(name).unwrap_or("")
        } else {
            ""
        }
    }
}

fn delivery_rows(recent: &[crate::model::Delivery]) -> Vec<DeliveryRow> {
    recent
        .iter()
        .take(DELIVERIES_SHOWN)
        .map(|d| DeliveryRow {
            at: iso_seconds(d.at),
            ok: d.ok(),
            test: d.outbox_seq == 0,
            code: d.code,
            error: d.error.clone(),
            ms: d.duration.as_millis().max(0).unsigned_abs(),
        })
        .collect()
}

fn channel_row(
    ctx: &Ctx<'_>,
    channel: &Channel,
    checks: Vec<CheckLink>,
    read_only: bool,
) -> Result<ChannelRow, WebError> {
    let recent = ctx
        .site
        .app
        .service
        .deliveries(channel.uuid, HEALTH_WINDOW)?;
    let h = health(&recent);
    let health = match (&h.last, h.failing) {
        (None, _) => "never used".to_string(),
        (Some(_), 0) => "ok".to_string(),
        (Some(_), n) => format!("failing ×{n}"),
    };
    Ok(ChannelRow {
        id: if read_only {
            String::new()
        } else {
            channel.uuid.to_string()
        },
        kind: channel.kind().to_string(),
        name: channel.name.clone(),
        summary: channel.config.summary(),
        default_for_new: channel.default_for_new,
        repeat: channel.repeat.map(|r| format!("{} min", r.as_secs() / 60)),
        events: (channel.events != Events::default()).then(|| channel.events.to_text()),
        failing: h.failing > 0,
        health,
        deliveries: delivery_rows(&recent),
        checks,
    })
}

fn render(
    ctx: &Ctx<'_>,
    project: Uuid,
    notice: Option<Notice>,
    error: Option<String>,
) -> Result<String, WebError> {
    let read_only = ctx.project(&project)?.read_only;
    let listed = ctx.site.app.service.read(|s| {
        s.channels_of(&project)
            .into_iter()
            .map(|c| {
                let mut checks: Vec<CheckLink> = s
                    .checks_of(&project)
                    .filter(|k| k.channels.contains(&c.uuid))
                    .map(|k| CheckLink {
                        id: if read_only {
                            k.unique_key()
                        } else {
                            k.uuid.to_string()
                        },
                        name: if k.name.is_empty() {
                            "unnamed".into()
                        } else {
                            k.name.clone()
                        },
                    })
                    .collect();
                checks.sort_by(|a, b| a.name.cmp(&b.name));
                (c.clone(), checks)
            })
            .collect::<Vec<_>>()
    });
    let channels = listed
        .into_iter()
        .map(|(c, checks)| channel_row(ctx, &c, checks, read_only))
        .collect::<Result<Vec<_>, _>>()?;
    let open_kind = if error.is_some() {
        ctx.form.text("kind").to_string()
    } else {
        String::new()
    };
    let page = IntegrationsPage {
        layout: ctx.layout("Integrations", Some(project), Tab::Integrations),
        project,
        read_only,
        channels,
        kinds: if read_only { Vec::new() } else { kind_forms() },
        notice,
        error,
        open_kind,
        typed: ctx.form.clone(),
    };
    Ok(page.render()?)
}

/// GET the page.
pub(crate) fn page(ctx: &Ctx<'_>, project: Uuid) -> Result<Response, WebError> {
    Ok(ctx.html(render(ctx, project, None, None)?))
}

/// POST add, remove or test a channel.
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
        ProjectAction::AddChannel => add(ctx, project, &name).await,
        ProjectAction::RemoveChannel => {
            let channel = form_channel(ctx, &name)?;
            service
                .remove_channel(&name, &channel.uuid.to_string())
                .await?;
            Ok(response::see_other(
                &ctx.link(&format!("/projects/{project}/integrations/")),
            ))
        }
        ProjectAction::TestChannel => {
            let channel = form_channel(ctx, &name)?;
            let transports = Transports::new(&service.config().notify)
                .map_err(|e| WebError::Internal(e.to_string()))?;
            let d = send_test(service, &transports, &channel).await?;
            let ms = d.duration.as_millis();
            let code = d.code.map(|c| format!(", code {c}")).unwrap_or_default();
            let notice = if d.ok() {
                Notice {
                    ok: true,
                    text: format!(
                        "Test notification to {} ({}) delivered in {ms} ms{code}.",
                        channel.name,
                        channel.kind()
                    ),
                }
            } else {
                Notice {
                    ok: false,
                    text: format!(
                        "Test notification to {} ({}) failed after {ms} ms{code}: {}",
                        channel.name,
                        channel.kind(),
                        d.error
                    ),
                }
            };
            Ok(ctx.html(render(ctx, project, Some(notice), None)?))
        }
        _ => Err(WebError::NotFound),
    }
}

/// The channel the form's `channel` field names (its UUID), in the project `name`.
fn form_channel(ctx: &Ctx<'_>, name: &str) -> Result<Channel, WebError> {
    let id = ctx.form.text("channel");
    if Uuid::parse_str(id).is_err() {
        return Err(WebError::BadRequest("No such integration.".into()));
    }
    ctx.site
        .app
        .service
        .read(|s| channel_named(s, name, id))
        .map_err(|_| WebError::BadRequest("No such integration (was it removed?).".into()))
}

/// The add form: the CLI's rules ([`config_from_fields`], [`parse_repeat`], a name of its own
/// in the project), so the dashboard refuses what `channel add` refuses.
async fn add(ctx: &Ctx<'_>, project: Uuid, project_name: &str) -> Result<Response, WebError> {
    let form = &ctx.form;
    let kind = form.text("kind");
    let refused = |message: String| -> Result<Response, WebError> {
        let html = render(ctx, project, None, Some(form_words(&message)))?;
        Ok(response::html(StatusCode::BAD_REQUEST, html, ctx.gzip))
    };
    if kind == "shell" {
        return refused(
            "Shell channels run commands on the server: its operator adds them with \
             `overdue channel add --kind shell`."
                .into(),
        );
    }
    if !web_kinds().any(|k| k == kind) {
        return refused(format!("There is no kind of integration called {kind:?}."));
    }
    let name = form.text("name");
    if name.is_empty() {
        return refused(
            "An integration needs a name (checks name their integrations by it).".into(),
        );
    }
    let config = match config_from_fields(&fields_of(form)) {
        Ok(c) => c,
        Err(e) => return refused(e.to_string()),
    };
    let repeat = match form.text("repeat") {
        "" => None,
        text => match parse_repeat(text) {
            Ok(d) => Some(d),
            Err(e) => return refused(e.to_string()),
        },
    };
    let events = match Events::parse(&events_chosen(form, "event")) {
        Ok(e) => e,
        Err(e) => return refused(e),
    };
    let options = NewChannel {
        repeat,
        events,
        default_for_new: form.get("default").is_some(),
        assign_existing: form.get("assign").is_some(),
        unique_name: true,
    };
    match ctx
        .site
        .app
        .service
        .add_channel_with(project_name, name, config, options)
        .await
    {
        Ok(_) => Ok(response::see_other(
            &ctx.link(&format!("/projects/{project}/integrations/")),
        )),
        Err(e @ ServiceError::Admin(AdminError::ChannelExists { .. } | AdminError::Usage(_))) => {
            refused(e.to_string())
        }
        Err(e) => Err(e.into()),
    }
}
