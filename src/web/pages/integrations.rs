//! The integrations page of a project: every channel with a secret-free summary of its target
//! (`ChannelConfig::summary`, the one `channel ls` prints), its last deliveries and the checks
//! it alerts for; adding one (checked by the kind's notifier, as `overdue channel add` is),
//! removing one, and sending a test alert through it.

use askama::Template;
use uuid::Uuid;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::model::{Channel, ChannelConfig};
use crate::notify::{KINDS, Transports, notifier};
use crate::service::ServiceError;
use crate::web::error::WebError;
use crate::web::forms::Form;
use crate::web::pages::{Ctx, Layout, Tab};
use crate::web::response;
use crate::web::router::ProjectAction;

/// Deliveries shown per channel.
const DELIVERIES_SHOWN: usize = 3;

/// One delivery attempt as listed.
#[derive(Debug, Clone)]
pub(crate) struct DeliveryRow {
    pub(crate) at: String,
    pub(crate) ok: bool,
    pub(crate) detail: String,
}

/// One channel as listed.
#[derive(Debug, Clone)]
pub(crate) struct ChannelRow {
    /// The UUID (read-write sessions only: the forms name the channel by it).
    pub(crate) uuid: String,
    pub(crate) kind: String,
    pub(crate) name: String,
    pub(crate) summary: String,
    pub(crate) checks: Vec<String>,
    pub(crate) deliveries: Vec<DeliveryRow>,
}

#[derive(Template)]
#[template(path = "integrations.html")]
struct IntegrationsPage {
    layout: Layout,
    project: String,
    read_only: bool,
    channels: Vec<ChannelRow>,
    kinds: Vec<&'static str>,
    /// A message after an action (`ok`, text), or the add form's error.
    notice: Option<(bool, String)>,
}

fn rows(ctx: &Ctx<'_>, project: Uuid, read_only: bool) -> Result<Vec<ChannelRow>, WebError> {
    let service = &ctx.site.app.service;
    let listed: Vec<(Channel, Vec<String>)> = service.read(|s| {
        s.channels_of(&project)
            .into_iter()
            .map(|c| {
                let checks = s
                    .checks_of(&project)
                    .filter(|k| k.channels.contains(&c.uuid))
                    .map(|k| {
                        if k.name.is_empty() {
                            "unnamed".to_string()
                        } else {
                            k.name.clone()
                        }
                    })
                    .collect();
                (c.clone(), checks)
            })
            .collect()
    });
    let mut out = Vec::with_capacity(listed.len());
    for (c, checks) in listed {
        let deliveries = service
            .deliveries(c.uuid, DELIVERIES_SHOWN)?
            .into_iter()
            .map(|d| DeliveryRow {
                at: d.at.strftime("%Y-%m-%d %H:%M:%S UTC").to_string(),
                ok: d.error.is_empty(),
                detail: match (d.code, d.error.is_empty()) {
                    (Some(code), true) => format!("delivered, code {code}"),
                    (None, true) => "delivered".to_string(),
                    (Some(code), false) => format!("failed, code {code}: {}", d.error),
                    (None, false) => format!("failed: {}", d.error),
                },
            })
            .collect();
        out.push(ChannelRow {
            uuid: if read_only {
                String::new()
            } else {
                c.uuid.to_string()
            },
            kind: c.config.kind().to_string(),
            name: c.name.clone(),
            summary: c.config.summary(),
            checks,
            deliveries,
        });
    }
    Ok(out)
}

fn render(
    ctx: &Ctx<'_>,
    project: Uuid,
    notice: Option<(bool, String)>,
) -> Result<Response, WebError> {
    let grant = ctx.project(&project)?;
    let status = match &notice {
        Some((false, _)) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    };
    let page = IntegrationsPage {
        layout: ctx.layout("Integrations", Some(project), Tab::Integrations),
        project: project.to_string(),
        read_only: grant.read_only,
        channels: rows(ctx, project, grant.read_only)?,
        kinds: KINDS.iter().copied().filter(|k| *k != "shell").collect(),
        notice,
    };
    Ok(response::html(status, page.render()?, ctx.gzip))
}

/// GET the page.
pub(crate) fn page(ctx: &Ctx<'_>, project: Uuid) -> Result<Response, WebError> {
    render(ctx, project, None)
}

/// The channel configuration a form describes: the kind and the target fields, checked by
/// the kind's notifier (the check `overdue channel add` makes).
pub(crate) fn config_from_form(form: &Form) -> Result<ChannelConfig, String> {
    let kind = form.text("kind");
    let config = match kind {
        // Commands run on the server: only its administrator adds them, from the CLI.
        "shell" => {
            return Err(
                "shell channels run commands on the server; add them there with \
                 `overdue channel add --kind shell`"
                    .into(),
            );
        }
        "email" => ChannelConfig::Email {
            address: form.text("value").to_string(),
        },
        "webhook" => {
            let url = form.text("url");
            if url.is_empty() {
                return Err("a webhook needs a URL".into());
            }
            ChannelConfig::webhook(url)
        }
        k if KINDS.contains(&k) => {
            let settings = ["url", "topic", "priority", "token", "chat", "user", "room"]
                .iter()
                .filter(|name| !form.text(name).is_empty())
                .map(|name| ((*name).to_string(), form.text(name).to_string()))
                .collect();
            ChannelConfig::Other {
                kind: k.to_string(),
                settings,
            }
        }
        other => {
            return Err(format!(
                "unknown kind {other:?} (known: {})",
                KINDS.join(", ")
            ));
        }
    };
    notifier(&config).map_err(|e| e.to_string())?;
    Ok(config)
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
    let back = ctx.link(&format!("/projects/{project}/integrations/"));
    match action {
        ProjectAction::AddChannel => {
            let config = match config_from_form(&ctx.form) {
                Ok(c) => c,
                Err(m) => return render(ctx, project, Some((false, m))),
            };
            let label = match ctx.form.text("name") {
                "" => config.kind().to_string(),
                n => n.to_string(),
            };
            match service.add_channel(&name, &label, config).await {
                Ok(_) => Ok(response::see_other(&back)),
                Err(e @ (ServiceError::Admin(_) | ServiceError::BadRequest(_))) => {
                    render(ctx, project, Some((false, e.to_string())))
                }
                Err(e) => Err(e.into()),
            }
        }
        ProjectAction::RemoveChannel => {
            let channel = channel_of(ctx, project)?;
            service
                .remove_channel(&name, &channel.uuid.to_string())
                .await?;
            Ok(response::see_other(&back))
        }
        ProjectAction::TestChannel => {
            let channel = channel_of(ctx, project)?;
            let transports = Transports::new(&service.config().notify)
                .map_err(|e| WebError::BadRequest(e.to_string()))?;
            let d = crate::notify::worker::send_test(service, &transports, &channel).await?;
            let notice = if d.error.is_empty() {
                (true, format!("Test alert to {} delivered.", channel.name))
            } else {
                (
                    false,
                    format!("Test alert to {} failed: {}", channel.name, d.error),
                )
            };
            render(ctx, project, Some(notice))
        }
        _ => Err(WebError::NotFound),
    }
}

/// The channel the form names (`channel`: a UUID of this project).
fn channel_of(ctx: &Ctx<'_>, project: Uuid) -> Result<Channel, WebError> {
    let uuid = Uuid::parse_str(ctx.form.text("channel")).map_err(|_| WebError::NotFound)?;
    ctx.site
        .app
        .service
        .read(|s| s.channel(&uuid).filter(|c| c.project == project).cloned())
        .ok_or(WebError::NotFound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_become_configurations_the_notifier_accepts() {
        let hook = config_from_form(&Form::parse(b"kind=webhook&url=https://h.example/x?t=1"))
            .expect("webhook");
        assert_eq!(hook.summary(), "h.example");
        assert!(config_from_form(&Form::parse(b"kind=webhook")).is_err());
        assert!(config_from_form(&Form::parse(b"kind=email&value=ops@example.org")).is_ok());
        assert!(config_from_form(&Form::parse(b"kind=email&value=nope")).is_err());
        let shell = config_from_form(&Form::parse(b"kind=shell")).expect_err("shell");
        assert!(shell.contains("on the server"), "{shell}");
        let err = config_from_form(&Form::parse(b"kind=fax")).expect_err("unknown");
        assert!(err.contains("unknown kind"), "{err}");
    }
}
