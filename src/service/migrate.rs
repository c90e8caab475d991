//! Creating checks migrated from Healthchecks ([`crate::transfer::healthchecks`]): the start of
//! a migration (the target project, created on an empty file as a first start creates it, and
//! the ping key it takes over) and each batch of checks, created with their state so deadlines
//! go on from where they were.

use jiff::{SignedDuration, Timestamp};
use uuid::Uuid;

use crate::model::project::is_ping_key;
use crate::model::spec::{apply, parse_spec};
use crate::model::{ApiVersion, Check, Project, StoredStatus};
use crate::service::admin::{DEFAULT_PROJECT, NewKey, project_named};
use crate::service::checks::resolve_parents;
use crate::service::{AdminError, Service, ServiceError, WriteCtx};
use crate::transfer::healthchecks::{ForeignChannel, ForeignCheck};

/// What happened to one migrated check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MigrateOutcome {
    Created {
        /// Integrations with no channel of the same kind and name in the target project.
        unmapped: Vec<ForeignChannel>,
        /// The source's badge key could not be kept (missing, or another check's here): the
        /// check's badge URL changed.
        new_badge_key: bool,
    },
    /// A check with this UUID is already in the project; it is left as it is.
    Present,
    /// Not created, with the reason (the others still are).
    Refused(String),
}

/// The target of a migration, ready for its checks.
#[derive(Debug, Clone)]
pub(crate) struct MigrationStart {
    pub project: Project,
    /// The file was empty: the project was created with these keys, as a first start does.
    pub(crate) first_start: Option<(NewKey, NewKey)>,
    /// The project's ping key was replaced by the one given.
    pub(crate) ping_key_changed: bool,
}

impl Service {
    /// Prepares a migration into `project` (default `default`): on an empty file the project
    /// is created with a read-write and a read-only key, as the first `serve` creates
    /// `default`; with `ping_key`, the project takes it over, so the source's slug ping URLs
    /// (`/ping/<ping-key>/<slug>`) keep working.
    pub(crate) async fn start_migration(
        &self,
        project: Option<String>,
        ping_key: Option<String>,
    ) -> Result<MigrationStart, ServiceError> {
        let name = project.unwrap_or_else(|| DEFAULT_PROJECT.to_string());
        if let Some(key) = &ping_key
            && !is_ping_key(key)
        {
            return Err(ServiceError::usage(format!(
                "the ping key {key:?} is not 22 letters, digits, '-' or '_'"
            )));
        }
        let first_start = self.ensure_first_project(&name).await?;
        let project = self.read(|s| {
            project_named(s, &name).map_err(|_| {
                AdminError::Usage(format!(
                    "there is no project named {name:?} here; create it with `overdue project \
                     add {name}` or name one of {} with --project",
                    s.projects()
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
        })?;
        let first_start = first_start.map(|(_, rw, ro)| (rw, ro));
        let Some(key) = ping_key.filter(|k| *k != project.ping_key) else {
            return Ok(MigrationStart {
                project,
                first_start,
                ping_key_changed: false,
            });
        };
        let project = self
            .write(move |ctx| {
                let mut project = project_named(ctx.state, &name)?;
                if let Some(other) = ctx.state.project_by_ping_key(&key) {
                    return Err(ServiceError::usage(format!(
                        "the ping key {key} belongs to project {:?} here; nothing was imported",
                        other.name
                    )));
                }
                project.ping_key = key;
                ctx.txn.put_project(&project)?;
                ctx.state.put_project(project.clone());
                Ok(project)
            })
            .await?;
        Ok(MigrationStart {
            project,
            first_start,
            ping_key_changed: true,
        })
    }

    /// Creates migrated checks in `project` (default: the `default` project), one write job
    /// for the batch; a check whose UUID is already in the project is skipped.
    pub(crate) async fn import_foreign(
        &self,
        project: Option<String>,
        checks: Vec<ForeignCheck>,
    ) -> Result<Vec<(ForeignCheck, MigrateOutcome)>, ServiceError> {
        let name = project.unwrap_or_else(|| DEFAULT_PROJECT.to_string());
        self.write(move |ctx| {
            let project = project_named(ctx.state, &name)?;
            let mut out = Vec::with_capacity(checks.len());
            for foreign in checks {
                let outcome = migrate_one(ctx, project.uuid, &foreign)?;
                out.push((foreign, outcome));
            }
            Ok(out)
        })
        .await
    }
}

fn timestamp(s: Option<&str>) -> Option<Timestamp> {
    s.and_then(|s| s.parse().ok())
}

/// The stored status a migrated check takes.
fn status(s: &str) -> StoredStatus {
    match s {
        "up" => StoredStatus::Up,
        "down" => StoredStatus::Down,
        "paused" => StoredStatus::Paused,
        _ => StoredStatus::New,
    }
}

/// Creates one migrated check unless its UUID is taken; invalid settings refuse only it.
fn migrate_one(
    ctx: &mut WriteCtx<'_>,
    project: Uuid,
    foreign: &ForeignCheck,
) -> Result<MigrateOutcome, ServiceError> {
    match ctx.state.check(&foreign.uuid) {
        Some(here) if here.project == project => return Ok(MigrateOutcome::Present),
        Some(_) => {
            return Ok(MigrateOutcome::Refused(
                "a check with this UUID belongs to another project here".into(),
            ));
        }
        None => {}
    }
    let spec = match parse_spec(&foreign.settings) {
        Ok(spec) => spec,
        Err(e) => return Ok(MigrateOutcome::Refused(e.to_string())),
    };
    let kept = match foreign.badge_key {
        Some(key) if ctx.txn.check_by_badge_key(key)?.is_none() => Some(key),
        _ => None,
    };
    let mut check = Check::new(
        foreign.uuid,
        project,
        ctx.state.next_seq(),
        ctx.now,
        kept.unwrap_or_else(Uuid::new_v4),
    );
    if let Err(e) = apply(&mut check, &spec, ApiVersion::V3) {
        return Ok(MigrateOutcome::Refused(e.to_string()));
    }
    // Parents (an Overdue source) that were copied before it: the caller orders parents
    // first; one that was not copied (refused, or not in the source) is left out.
    if let Some(value) = &spec.parents {
        let here: Vec<&str> = value
            .split(',')
            .map(str::trim)
            .filter(|p| {
                Uuid::parse_str(p)
                    .ok()
                    .and_then(|u| ctx.state.check(&u))
                    .is_some_and(|c| c.project == project)
            })
            .collect();
        match resolve_parents(ctx.state, &check, &here.join(",")) {
            Ok(parents) => check.parents = parents,
            Err(e) => return Ok(MigrateOutcome::Refused(e.to_string())),
        }
    }
    check.status = status(&foreign.status);
    check.n_pings = foreign.n_pings;
    check.last_ping = timestamp(foreign.last_ping.as_deref());
    if foreign.started {
        // A run whose start the ping log no longer shows started, for its deadline, now.
        check.last_start = timestamp(foreign.last_start.as_deref()).or(Some(ctx.now));
        check.last_start_rid = foreign.last_start_rid;
    }
    check.last_duration = foreign
        .last_duration
        .filter(|s| *s > 0)
        .map(SignedDuration::from_secs);
    let mut unmapped = Vec::new();
    let targets = ctx.state.channels_of(&project);
    for wanted in &foreign.channels {
        let same: Vec<Uuid> = targets
            .iter()
            .filter(|c| c.kind() == wanted.kind && c.name == wanted.name)
            .map(|c| c.uuid)
            .collect();
        match same.as_slice() {
            [one] => check.channels.push(*one),
            _ => unmapped.push(wanted.clone()),
        }
    }
    check.channels.sort();
    check.channels.dedup();
    ctx.txn.put_check(&check, None)?;
    ctx.txn.set_links(check.uuid, &check.channels)?;
    ctx.touch(check.uuid);
    ctx.state.put_check(check);
    Ok(MigrateOutcome::Created {
        unmapped,
        new_badge_key: kept.is_none(),
    })
}
