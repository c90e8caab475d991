//! Admin subcommands and their output. [`execute`] runs one against an open service, the
//! same whether it came from the command line directly or through the control socket.

use std::fmt::Write as _;

use clap::Subcommand;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::api::json::{Urls, check_json};
use crate::cli::channel::ChannelCmd;
use crate::cli::data;
use crate::model::ApiVersion;
use crate::model::time::iso_seconds;
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

pub(crate) fn pretty(v: &Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
}

/// Runs one admin command.
pub async fn execute(service: &Service, command: AdminCommand) -> AdminOutput {
    let result = match command {
        AdminCommand::Project(c) => project(service, c).await,
        AdminCommand::Key(c) => key(service, c).await,
        AdminCommand::Channel(c) => crate::cli::channel::channel(service, c).await,
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
                    &json!({"name": p.name, "uuid": p.uuid.to_string(), "ping_key": p.ping_key, "badge_key": p.badge_key}),
                ))
            } else {
                AdminOutput::ok(format!(
                    "created project {}\nuuid:      {}\nping key:  {}\nbadge key: {}\n",
                    p.name, p.uuid, p.ping_key, p.badge_key
                ))
            }
        }
        ProjectCmd::Ls { json } => {
            let rows: Vec<(String, uuid::Uuid, String, String, usize)> = service.read(|s| {
                s.projects()
                    .into_iter()
                    .map(|p| {
                        (
                            p.name.clone(),
                            p.uuid,
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
                    .map(|(n, u, pk, bk, c)| json!({"name": n, "uuid": u.to_string(), "ping_key": pk, "badge_key": bk, "checks": c}))
                    .collect();
                AdminOutput::ok(pretty(&Value::Array(list)))
            } else {
                let mut out = format!("{:<24} {:<24} {:>6}\n", "NAME", "PING KEY", "CHECKS");
                for (n, _, pk, _, c) in rows {
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
