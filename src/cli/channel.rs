//! `overdue channel add|ls|default|rm|test`: integrations of a project (`channel_args` turns
//! the flags of `add` into a channel; secrets are never printed). A new channel is assigned to
//! every check of its project and is a default for new checks unless told otherwise, so that
//! alerts reach someone without further steps.

use std::fmt::Write as _;

use clap::Subcommand;
use serde_json::{Value, json};

use crate::cli::admin::{AdminOutput, count, pretty, project_arg};
pub use crate::cli::channel_args::ChannelAddArgs;
use crate::cli::channel_args::config_from_args;
use crate::model::Channel;
use crate::model::events::Events;
use crate::model::outbox::health;
use crate::model::time::iso_seconds;
use crate::notify::Transports;
use crate::notify::setup::parse_repeat;
use crate::service::admin::{NewChannel, channel_named, project_named};
use crate::service::{AdminError, Service, ServiceError};

/// Recent deliveries read for the health column of `channel ls`.
const HEALTH_WINDOW: usize = 20;

#[derive(Debug, Clone, Subcommand)]
pub enum ChannelCmd {
    /// Add an integration to a project.
    Add(Box<ChannelAddArgs>),
    /// List a project's integrations and how their deliveries go.
    Ls {
        /// May be left out when there is only one project.
        project: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Make an integration a default for new checks (`check add` without --channels), or
    /// stop it being one with --off. Existing checks keep their channels.
    #[command(allow_missing_positional = true)]
    Default {
        /// May be left out when there is only one project.
        project: Option<String>,
        #[arg(value_name = "ID-OR-NAME")]
        ident: String,
        /// No longer a default for new checks.
        #[arg(long)]
        off: bool,
    },
    /// Remove an integration (by id or name) and unassign it from every check.
    #[command(allow_missing_positional = true)]
    Rm {
        /// May be left out when there is only one project.
        project: Option<String>,
        #[arg(value_name = "ID-OR-NAME")]
        ident: String,
    },
    /// Send a test notification through an integration and print the outcome.
    #[command(allow_missing_positional = true)]
    Test {
        /// May be left out when there is only one project.
        project: Option<String>,
        #[arg(value_name = "ID-OR-NAME")]
        ident: String,
    },
}

fn health_json(service: &Service, c: &Channel) -> Result<(usize, Value), ServiceError> {
    let recent = service.deliveries(c.uuid, HEALTH_WINDOW)?;
    let h = health(&recent);
    let last = h.last.map_or(Value::Null, |d| {
        json!({
            "at": iso_seconds(d.at),
            "ok": d.ok(),
            "code": d.code,
            "error": d.error,
            "duration_ms": d.duration.as_millis(),
        })
    });
    Ok((h.failing, last))
}

/// `ok`, `never used`, or `FAILING x3: <error>`.
fn health_text(failing: usize, last: &Value) -> String {
    if last.is_null() {
        "never used".into()
    } else if failing == 0 {
        format!("ok {}", last["at"].as_str().unwrap_or(""))
    } else {
        format!(
            "FAILING x{failing}: {}",
            last["error"].as_str().unwrap_or("")
        )
    }
}

pub(crate) async fn channel(
    service: &Service,
    cmd: ChannelCmd,
) -> Result<AdminOutput, ServiceError> {
    Ok(match cmd {
        ChannelCmd::Add(a) => {
            let config = config_from_args(&a)?;
            let repeat = a.repeat.as_deref().map(parse_repeat).transpose()?;
            let events = match a.events.as_deref() {
                Some(text) => {
                    Events::parse(text).map_err(|e| AdminError::Usage(format!("--events: {e}")))?
                }
                None => Events::default(),
            };
            let project = project_arg(service, a.project.as_deref())?;
            let options = NewChannel {
                repeat,
                events,
                default_for_new: !a.no_default,
                assign_existing: !a.no_assign,
                unique_name: true,
            };
            let added = service
                .add_channel_with(&project, &a.name, config, options)
                .await?;
            let c = &added.channel;
            if a.json {
                AdminOutput::ok(pretty(&json!({
                    "id": c.uuid.to_string(), "name": c.name, "kind": c.kind(),
                    "default_for_new": c.default_for_new, "assigned": added.assigned,
                    "events": c.events.to_text(),
                })))
            } else {
                let default = if c.default_for_new {
                    "a default for new checks"
                } else {
                    "not a default for new checks"
                };
                AdminOutput::ok(format!(
                    "added {} channel {} ({}) to project {project}\n\
                     assigned to {} of the project; {default}\n",
                    c.kind(),
                    c.name,
                    c.uuid,
                    count(added.assigned, "check"),
                ))
            }
        }
        ChannelCmd::Ls { project, json } => {
            let project = project_arg(service, project.as_deref())?;
            let channels = service.read(|s| {
                let p = project_named(s, &project)?;
                Ok::<_, ServiceError>(
                    s.channels_of(&p.uuid)
                        .into_iter()
                        .cloned()
                        .collect::<Vec<_>>(),
                )
            })?;
            let mut rows = Vec::new();
            for c in channels {
                let (failing, last) = health_json(service, &c)?;
                rows.push((c, failing, last));
            }
            if json {
                let list: Vec<Value> = rows
                    .iter()
                    .map(|(c, failing, last)| {
                        json!({
                            "id": c.uuid.to_string(), "name": c.name, "kind": c.kind(),
                            "target": c.config.summary(),
                            "repeat_secs": c.repeat.map(|r| r.as_secs()),
                            "events": c.events.to_text(),
                            "default_for_new": c.default_for_new,
                            "failing": failing, "last_delivery": last,
                        })
                    })
                    .collect();
                AdminOutput::ok(pretty(&Value::Array(list)))
            } else {
                let mut out = format!(
                    "{:<36} {:<10} {:<20} {:<30} {:<7} DELIVERY\n",
                    "ID", "KIND", "NAME", "TARGET", "DEFAULT"
                );
                for (c, failing, last) in rows {
                    let _ = writeln!(
                        out,
                        "{:<36} {:<10} {:<20} {:<30} {:<7} {}",
                        c.uuid,
                        c.kind(),
                        c.name,
                        c.config.summary(),
                        if c.default_for_new { "yes" } else { "no" },
                        health_text(failing, &last)
                    );
                }
                AdminOutput::ok(out)
            }
        }
        ChannelCmd::Default {
            project,
            ident,
            off,
        } => {
            let project = project_arg(service, project.as_deref())?;
            let c = service.set_channel_default(&project, &ident, !off).await?;
            let now = if c.default_for_new {
                "now"
            } else {
                "no longer"
            };
            AdminOutput::ok(format!(
                "channel {} ({}) is {now} a default for new checks\n",
                c.name, c.uuid
            ))
        }
        ChannelCmd::Rm { project, ident } => {
            let project = project_arg(service, project.as_deref())?;
            let c = service.remove_channel(&project, &ident).await?;
            AdminOutput::ok(format!("removed channel {} ({})\n", c.name, c.uuid))
        }
        ChannelCmd::Test { project, ident } => {
            let project = project_arg(service, project.as_deref())?;
            let c = service.read(|s| channel_named(s, &project, &ident))?;
            let transports = Transports::new(&service.config().notify)
                .map_err(|e| AdminError::Usage(e.to_string()))?;
            let d = crate::notify::worker::send_test(service, &transports, &c).await?;
            let ms = d.duration.as_millis();
            let code = d.code.map(|c| format!(", code {c}")).unwrap_or_default();
            if d.ok() {
                AdminOutput::ok(format!(
                    "test notification to {} ({}) delivered in {ms} ms{code}\n",
                    c.name,
                    c.kind()
                ))
            } else {
                AdminOutput::error(format!(
                    "test notification to {} ({}) failed after {ms} ms{code}: {}",
                    c.name,
                    c.kind(),
                    d.error
                ))
            }
        }
    })
}
