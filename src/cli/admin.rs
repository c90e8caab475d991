//! Admin subcommands and their output. [`answer`] runs one against an open service, the
//! same whether it came from the command line directly or through the control socket (which
//! carries it as a `protocol::Command`); [`execute`] gives any answer as text.

use std::fmt::Write as _;

use clap::Subcommand;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::cli::channel::ChannelCmd;
pub use crate::cli::check::CheckCmd;
use crate::cli::data;
use crate::cli::protocol::{Contents, Reply};
use crate::model::time::iso_seconds;
use crate::service::admin::{Removed, project_contents, project_named, project_or_only};
use crate::service::{AdminError, Service, ServiceError};

#[derive(Debug, Clone, Subcommand)]
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
    /// Show or set the project's recurring quiet window: while it is open, every check of
    /// the project records pings and status but holds its alerts (one alert when it closes,
    /// if a check's state changed). Without flags, shows the window.
    Quiet {
        /// May be left out when there is only one project.
        project: Option<String>,
        /// Opens the window at each time of this cron or OnCalendar expression
        /// ("Sun 02:00", "0 2 * * 0").
        #[arg(long, value_name = "EXPR", conflicts_with = "off")]
        schedule: Option<String>,
        /// Time zone of --schedule [default: UTC].
        #[arg(long, value_name = "ZONE", conflicts_with = "off")]
        tz: Option<String>,
        /// How long the window stays open: seconds or a duration such as 2h [default: 1h].
        #[arg(long, value_name = "DURATION", conflicts_with = "off")]
        duration: Option<String>,
        /// Remove the window.
        #[arg(long)]
        off: bool,
    },
    /// Remove a project with all its checks, channels and keys; asks first.
    Rm {
        name: String,
        /// Do not ask (for scripts): without a terminal to ask on, `rm` refuses to run
        /// without it.
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

#[derive(Debug, Clone, Subcommand)]
pub enum KeyCmd {
    /// Create an API key; it is shown once and only its hash is kept.
    Add {
        /// May be left out when there is only one project.
        project: Option<String>,
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
        /// May be left out when there is only one project.
        project: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Remove a key by the prefix `key ls` shows; it stops working at once.
    #[command(allow_missing_positional = true)]
    Rm {
        /// May be left out when there is only one project.
        project: Option<String>,
        prefix: String,
    },
}

/// One admin command, as the command line gives it (the control socket carries it as a
/// `protocol::Command`).
#[derive(Debug, Clone)]
pub enum AdminCommand {
    Project(ProjectCmd),
    Key(KeyCmd),
    Channel(ChannelCmd),
    Check(CheckCmd),
    /// Copy the data file to this absolute path.
    Backup {
        path: std::path::PathBuf,
        /// Replace an existing file.
        force: bool,
    },
    /// Opens an export session (`cli::session`): answered with its header, then piece by piece.
    ExportParts {
        project: Option<String>,
    },
    /// Opens an import session (`cli::session`).
    ImportParts,
    /// Prepare a migration: the target project (created on an empty file, with its keys
    /// printed as at a first start) and the ping key it takes over.
    MigrateStart {
        project: Option<String>,
        ping_key: Option<String>,
    },
    /// Create checks read from Healthchecks (one batch of a migration).
    Migrate {
        project: Option<String>,
        checks: Vec<crate::transfer::healthchecks::ForeignCheck>,
    },
    /// The newest time the file records (for `doctor`'s clock check).
    NewestTime,
    /// The settings the service runs with and the alerting facts of its data (for `doctor`;
    /// see `doctor::settings`).
    Settings,
    /// What removing a project would remove, in words; changes nothing (`project rm` shows
    /// it before asking).
    ProjectContents {
        name: String,
    },
}

impl AdminCommand {
    /// Whether the command may create the data file when there is none: only an import
    /// (of a dump, or migrated checks) into a new directory. The rest would leave an empty
    /// database behind a mistyped or forgotten `--data`.
    pub(crate) fn may_create_data(&self) -> bool {
        matches!(
            self,
            AdminCommand::ImportParts
                | AdminCommand::MigrateStart { .. }
                | AdminCommand::Migrate { .. }
        )
    }
}

/// What a command printed and its exit code.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminOutput {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl AdminOutput {
    pub(crate) fn ok(stdout: String) -> AdminOutput {
        AdminOutput {
            stdout,
            stderr: String::new(),
            code: 0,
        }
    }

    /// A failure with a one-line message (exit code 1).
    pub(crate) fn error(message: impl std::fmt::Display) -> AdminOutput {
        AdminOutput {
            stdout: String::new(),
            stderr: format!("overdue: {message}\n"),
            code: 1,
        }
    }

    /// A failed command: exit code 2 when the command line was incomplete (a project must be
    /// named), else 1.
    pub(crate) fn failed(e: ServiceError) -> AdminOutput {
        let code = match e {
            ServiceError::Admin(AdminError::ProjectNeeded(_)) => USAGE_EXIT,
            _ => 1,
        };
        AdminOutput {
            code,
            ..AdminOutput::error(e)
        }
    }
}

/// Exit code of a command line that needs more (as clap's own usage errors).
pub(crate) const USAGE_EXIT: i32 = 2;

pub(crate) fn pretty(v: &Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
}

/// `1 check`, `2 checks`, `0 checks`: a count and its noun, for nouns whose plural adds an
/// `s`. Every "N things" in admin output goes through here.
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The name of the project a command's optional `PROJECT` argument means (see
/// [`project_or_only`]).
pub(crate) fn project_arg(service: &Service, name: Option<&str>) -> Result<String, ServiceError> {
    Ok(service.read(|s| project_or_only(s, name).map(|p| p.name))?)
}

/// `project NAME with 2 checks, 1 channel and 1 API key`.
fn project_with(name: &str, r: &Removed) -> String {
    contents(name, r).describe()
}

fn contents(name: &str, r: &Removed) -> Contents {
    Contents {
        name: name.to_string(),
        checks: r.checks,
        channels: r.channels,
        keys: r.keys,
    }
}

/// Runs one admin command, with its output as text.
pub async fn execute(service: &Service, command: AdminCommand) -> AdminOutput {
    answer(service, command).await.text()
}

/// Runs one admin command: its reply, typed for the commands whose callers use the result as
/// data, text for the others.
pub(crate) async fn answer(service: &Service, command: AdminCommand) -> Reply {
    let result = match command {
        AdminCommand::Project(c) => project(service, c).await.map(Reply::Output),
        AdminCommand::Key(c) => key(service, c).await.map(Reply::Output),
        AdminCommand::Channel(c) => crate::cli::channel::channel(service, c)
            .await
            .map(Reply::Output),
        AdminCommand::Check(c) => crate::cli::check::check(service, c)
            .await
            .map(Reply::Output),
        AdminCommand::Backup { path, force } => {
            data::backup(service, path, force).await.map(Reply::Output)
        }
        AdminCommand::ExportParts { .. } | AdminCommand::ImportParts => {
            Ok(Reply::Output(AdminOutput::error(
                "import and export run as sessions of several messages; this release's \
                 `overdue import` and `overdue export` open them",
            )))
        }
        AdminCommand::MigrateStart { project, ping_key } => {
            crate::cli::migrate::migrate_start(service, project, ping_key)
                .await
                .map(Reply::Output)
        }
        AdminCommand::Migrate { project, checks } => {
            crate::cli::migrate::migrate_batch(service, project, checks)
                .await
                .map(Reply::Migrated)
        }
        AdminCommand::NewestTime => {
            return Reply::NewestTime(crate::cli::doctor::newest_time(service));
        }
        AdminCommand::Settings => {
            return Reply::Settings(crate::cli::doctor::settings::gather(service));
        }
        AdminCommand::ProjectContents { name } => service
            .read(|s| project_contents(s, &name))
            .map_err(ServiceError::from)
            .map(|r| Reply::ProjectContents(contents(&name, &r))),
    };
    result.unwrap_or_else(|e| Reply::Output(AdminOutput::failed(e)))
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
        ProjectCmd::Quiet {
            project,
            schedule,
            tz,
            duration,
            off,
        } => {
            let name = project_arg(service, project.as_deref())?;
            let uuid = service.read(|s| s.project_by_name(&name).map(|p| p.uuid));
            let uuid = uuid.ok_or(ServiceError::NotFound)?;
            let mut body = serde_json::Map::new();
            if off {
                body.insert("quiet_schedule".into(), json!(""));
            }
            if let Some(expr) = schedule {
                body.insert("quiet_schedule".into(), json!(expr));
            }
            if let Some(tz) = tz {
                body.insert("quiet_tz".into(), json!(tz));
            }
            if let Some(d) = duration {
                body.insert("quiet_duration".into(), crate::cli::check::period(&d));
            }
            let p = if body.is_empty() {
                service
                    .read(|s| s.project(&uuid).cloned())
                    .ok_or(ServiceError::NotFound)?
            } else {
                let spec = crate::model::quiet::QuietSpec::parse(&body)?;
                service.set_project_quiet(uuid, spec).await?
            };
            AdminOutput::ok(match &p.quiet {
                Some(q) => format!(
                    "project {}: quiet for {} from {} ({})\n",
                    p.name,
                    crate::cli::check::friendly(q.duration),
                    q.schedule,
                    q.tz
                ),
                None => format!("project {} has no quiet window\n", p.name),
            })
        }
        ProjectCmd::Rm { name, yes: _ } => {
            let r = service.remove_project(&name).await?;
            AdminOutput::ok(format!("removed {}\n", project_with(&name, &r)))
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
            let project = project_arg(service, project.as_deref())?;
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
            let project = project_arg(service, project.as_deref())?;
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
            let project = project_arg(service, project.as_deref())?;
            let k = service.remove_key(&project, &prefix).await?;
            AdminOutput::ok(format!("removed key {} of project {project}\n", k.id))
        }
    })
}
