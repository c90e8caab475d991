//! Admin subcommands and their output. [`execute`] runs one against an open service, the
//! same whether it came from the command line directly or through the control socket.

use std::fmt::Write as _;

use clap::{Args, Subcommand};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::api::json::{Urls, check_json};
use crate::cli::data;
use crate::model::time::iso_seconds;
use crate::model::{ApiVersion, ChannelConfig};
use crate::service::admin::project_named;
use crate::service::{Service, ServiceError};

#[derive(Debug, Clone, Subcommand, Serialize, Deserialize)]
pub enum ProjectCmd {
    /// Create a project (prints its ping key and badge key).
    Add {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// List projects.
    Ls {
        #[arg(long)]
        json: bool,
    },
    /// Remove a project with all its checks, channels and keys.
    Rm { name: String },
}

#[derive(Debug, Clone, Subcommand, Serialize, Deserialize)]
pub enum KeyCmd {
    /// Create an API key; it is shown once and only its hash is kept.
    Add {
        project: String,
        /// A read-only key (`hcr_...`) instead of a read-write one (`hcw_...`).
        #[arg(long)]
        read_only: bool,
        /// A note on what the key is for.
        #[arg(long, default_value = "")]
        label: String,
        #[arg(long)]
        json: bool,
    },
    /// List a project's keys (prefixes and labels, never the keys).
    Ls {
        project: String,
        #[arg(long)]
        json: bool,
    },
    /// Remove a key by the prefix `key ls` shows; it stops working at once.
    Rm { project: String, prefix: String },
}

#[derive(Debug, Clone, Args, Serialize, Deserialize)]
pub struct ChannelAddArgs {
    pub project: String,
    /// Kind of integration: email or webhook.
    #[arg(long)]
    pub kind: String,
    /// Name of the integration (checks can name it in `channels`).
    #[arg(long)]
    pub name: String,
    /// Email address (kind email).
    #[arg(long)]
    pub value: Option<String>,
    /// URL to call (kind webhook).
    #[arg(long)]
    pub url: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Subcommand, Serialize, Deserialize)]
pub enum ChannelCmd {
    /// Add an integration to a project.
    Add(ChannelAddArgs),
    /// List a project's integrations.
    Ls {
        project: String,
        #[arg(long)]
        json: bool,
    },
    /// Remove an integration (by id or name) and unassign it from every check.
    Rm {
        project: String,
        #[arg(value_name = "ID-OR-NAME")]
        ident: String,
    },
}

#[derive(Debug, Clone, Subcommand, Serialize, Deserialize)]
pub enum CheckCmd {
    /// List a project's checks.
    Ls {
        project: String,
        #[arg(long)]
        json: bool,
    },
}

/// One admin command, as sent over the control socket.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum AdminCommand {
    Project(ProjectCmd),
    Key(KeyCmd),
    Channel(ChannelCmd),
    Check(CheckCmd),
    /// Copy the data file to this absolute path.
    Backup {
        path: std::path::PathBuf,
    },
    Export {
        project: Option<String>,
    },
    Import {
        dump: Box<crate::transfer::dump::Dump>,
    },
    /// Create checks read from Healthchecks (one batch of a migration).
    Migrate {
        project: Option<String>,
        checks: Vec<crate::transfer::healthchecks::ForeignCheck>,
    },
    /// The newest time the file records (for `doctor`'s clock check).
    NewestTime,
}

/// What a command printed and its exit code.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminOutput {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl AdminOutput {
    pub fn ok(stdout: String) -> AdminOutput {
        AdminOutput {
            stdout,
            stderr: String::new(),
            code: 0,
        }
    }

    /// A failure with a one-line message (exit code 1).
    pub fn error(message: impl std::fmt::Display) -> AdminOutput {
        AdminOutput {
            stdout: String::new(),
            stderr: format!("overdue: {message}\n"),
            code: 1,
        }
    }
}

fn pretty(v: &Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
}

/// The host of a URL, enough to recognise it without printing secrets in its path.
fn url_host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    host.rsplit('@').next().unwrap_or(host).to_string()
}

fn channel_target(config: &ChannelConfig) -> String {
    match config {
        ChannelConfig::Email { address } => address.clone(),
        ChannelConfig::Webhook { url } => url_host(url),
        ChannelConfig::Other { .. } => config.summary(),
    }
}

/// Runs one admin command.
pub async fn execute(service: &Service, command: AdminCommand) -> AdminOutput {
    let result = match command {
        AdminCommand::Project(c) => project(service, c).await,
        AdminCommand::Key(c) => key(service, c).await,
        AdminCommand::Channel(c) => channel(service, c).await,
        AdminCommand::Check(c) => check(service, c).await,
        AdminCommand::Backup { path } => data::backup(service, path).await,
        AdminCommand::Export { project } => data::export(service, project.as_deref()),
        AdminCommand::Import { dump } => data::import(service, *dump).await,
        AdminCommand::Migrate { project, checks } => {
            data::migrate_batch(service, project, checks).await
        }
        AdminCommand::NewestTime => Ok(crate::cli::doctor::newest_time(service)),
    };
    result.unwrap_or_else(AdminOutput::error)
}

type Outcome = Result<AdminOutput, ServiceError>;

async fn project(service: &Service, cmd: ProjectCmd) -> Outcome {
    Ok(match cmd {
        ProjectCmd::Add { name, json } => {
            let p = service.add_project(&name).await?;
            if json {
                AdminOutput::ok(pretty(
                    &json!({"name": p.name, "ping_key": p.ping_key, "badge_key": p.badge_key}),
                ))
            } else {
                AdminOutput::ok(format!(
                    "created project {}\nping key:  {}\nbadge key: {}\n",
                    p.name, p.ping_key, p.badge_key
                ))
            }
        }
        ProjectCmd::Ls { json } => {
            let rows: Vec<(String, String, String, usize)> = service.read(|s| {
                s.projects()
                    .into_iter()
                    .map(|p| {
                        (
                            p.name.clone(),
                            p.ping_key.clone(),
                            p.badge_key.clone(),
                            s.checks_of(&p.uuid).count(),
                        )
                    })
                    .collect()
            });
            if json {
                let list: Vec<Value> = rows
                    .iter()
                    .map(|(n, pk, bk, c)| json!({"name": n, "ping_key": pk, "badge_key": bk, "checks": c}))
                    .collect();
                AdminOutput::ok(pretty(&Value::Array(list)))
            } else {
                let mut out = format!("{:<24} {:<24} {:>6}\n", "NAME", "PING KEY", "CHECKS");
                for (n, pk, _, c) in rows {
                    let _ = writeln!(out, "{n:<24} {pk:<24} {c:>6}");
                }
                AdminOutput::ok(out)
            }
        }
        ProjectCmd::Rm { name } => {
            let r = service.remove_project(&name).await?;
            AdminOutput::ok(format!(
                "removed project {name} with {} checks, {} channels and {} keys\n",
                r.checks, r.channels, r.keys
            ))
        }
    })
}

async fn key(service: &Service, cmd: KeyCmd) -> Outcome {
    Ok(match cmd {
        KeyCmd::Add {
            project,
            read_only,
            label,
            json,
        } => {
            let k = service.add_key(&project, read_only, &label).await?;
            if json {
                AdminOutput::ok(pretty(&json!({
                    "project": project, "key": k.plaintext, "read_only": read_only,
                    "prefix": k.key.id, "label": k.key.label,
                })))
            } else {
                let kind = if read_only { "read-only" } else { "read-write" };
                AdminOutput::ok(format!(
                    "{kind} key for project {project} (shown once, keep it safe):\n{}\n",
                    k.plaintext
                ))
            }
        }
        KeyCmd::Ls { project, json } => {
            let keys = service.read(|s| {
                let p = project_named(s, &project)?;
                Ok::<_, ServiceError>(
                    s.api_keys_of(&p.uuid)
                        .into_iter()
                        .cloned()
                        .collect::<Vec<_>>(),
                )
            })?;
            if json {
                let list: Vec<Value> = keys
                    .iter()
                    .map(|k| json!({"prefix": k.id, "read_only": k.read_only, "label": k.label, "created": iso_seconds(k.created)}))
                    .collect();
                AdminOutput::ok(pretty(&Value::Array(list)))
            } else {
                let mut out = format!(
                    "{:<14} {:<11} {:<26} LABEL\n",
                    "PREFIX", "ACCESS", "CREATED"
                );
                for k in keys {
                    let access = if k.read_only {
                        "read-only"
                    } else {
                        "read-write"
                    };
                    let _ = writeln!(
                        out,
                        "{:<14} {:<11} {:<26} {}",
                        k.id,
                        access,
                        iso_seconds(k.created),
                        k.label
                    );
                }
                AdminOutput::ok(out)
            }
        }
        KeyCmd::Rm { project, prefix } => {
            let k = service.remove_key(&project, &prefix).await?;
            AdminOutput::ok(format!("removed key {} of project {project}\n", k.id))
        }
    })
}

async fn channel(service: &Service, cmd: ChannelCmd) -> Outcome {
    use ServiceError::Usage;
    Ok(match cmd {
        ChannelCmd::Add(a) => {
            let config = match a.kind.as_str() {
                "email" => ChannelConfig::Email {
                    address: a
                        .value
                        .clone()
                        .ok_or_else(|| Usage("--kind email needs --value ADDRESS".into()))?,
                },
                "webhook" => ChannelConfig::Webhook {
                    url: a
                        .url
                        .clone()
                        .ok_or_else(|| Usage("--kind webhook needs --url URL".into()))?,
                },
                other => {
                    return Err(Usage(format!(
                        "unknown channel kind {other:?} (known: email, webhook)"
                    )));
                }
            };
            let c = service.add_channel(&a.project, &a.name, config).await?;
            if a.json {
                AdminOutput::ok(pretty(
                    &json!({"id": c.uuid.to_string(), "name": c.name, "kind": c.kind()}),
                ))
            } else {
                AdminOutput::ok(format!(
                    "added {} channel {} ({})\n",
                    c.kind(),
                    c.name,
                    c.uuid
                ))
            }
        }
        ChannelCmd::Ls { project, json } => {
            let channels = service.read(|s| {
                let p = project_named(s, &project)?;
                Ok::<_, ServiceError>(
                    s.channels_of(&p.uuid)
                        .into_iter()
                        .cloned()
                        .collect::<Vec<_>>(),
                )
            })?;
            if json {
                let list: Vec<Value> = channels
                    .iter()
                    .map(|c| json!({"id": c.uuid.to_string(), "name": c.name, "kind": c.kind(), "target": channel_target(&c.config)}))
                    .collect();
                AdminOutput::ok(pretty(&Value::Array(list)))
            } else {
                let mut out = format!("{:<36} {:<8} {:<20} TARGET\n", "ID", "KIND", "NAME");
                for c in channels {
                    let _ = writeln!(
                        out,
                        "{:<36} {:<8} {:<20} {}",
                        c.uuid,
                        c.kind(),
                        c.name,
                        channel_target(&c.config)
                    );
                }
                AdminOutput::ok(out)
            }
        }
        ChannelCmd::Rm { project, ident } => {
            let c = service.remove_channel(&project, &ident).await?;
            AdminOutput::ok(format!("removed channel {} ({})\n", c.name, c.uuid))
        }
    })
}

async fn check(service: &Service, cmd: CheckCmd) -> Outcome {
    let CheckCmd::Ls { project, json } = cmd;
    let now = service.now();
    let urls = Urls {
        site_root: service.site_root(),
        version: ApiVersion::V3,
    };
    let checks = service.read(|s| {
        let p = project_named(s, &project)?;
        Ok::<_, ServiceError>(s.checks_of(&p.uuid).cloned().collect::<Vec<_>>())
    })?;
    if json {
        let list: Vec<Value> = checks
            .iter()
            .map(|c| check_json(c, now, urls, false))
            .collect();
        return Ok(AdminOutput::ok(pretty(&Value::Array(list))));
    }
    let mut out = format!(
        "{:<36} {:<8} {:<25} {:<20} NAME\n",
        "UUID", "STATUS", "LAST PING", "SLUG"
    );
    for c in checks {
        let last = c
            .last_ping
            .map(iso_seconds)
            .unwrap_or_else(|| "never".into());
        let _ = writeln!(
            out,
            "{:<36} {:<8} {:<25} {:<20} {}",
            c.uuid,
            c.status_at(now, false).as_str(),
            last,
            c.slug,
            c.name
        );
    }
    Ok(AdminOutput::ok(out))
}

#[cfg(test)]
mod tests {
    use super::url_host;

    #[test]
    fn webhook_targets_hide_paths_and_credentials() {
        assert_eq!(
            url_host("https://user:pw@hooks.example.org/secret/token?x=1"),
            "hooks.example.org"
        );
        assert_eq!(url_host("http://127.0.0.1:9000/x"), "127.0.0.1:9000");
    }
}
