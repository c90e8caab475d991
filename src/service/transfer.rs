//! Data in and out of the running service: backups of the file, export and import of the
//! JSON dump, and creating checks migrated from Healthchecks.
//!
//! Import rules (documented in the README): objects are matched by identity (project and
//! channel UUID, API key identifier, check UUID). One already here in the same project is
//! kept as it is and counted as present, so importing twice adds nothing. Anything that would
//! clash with a different object here (a project name or ping key, a key, channel or check
//! owned by another project, a per-check badge key) refuses the whole import: it runs as one
//! write job, so nothing is stored.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use uuid::Uuid;

use crate::model::spec::{apply, parse_spec};
use crate::model::{ApiVersion, Check, StoredStatus};
use crate::service::admin::{DEFAULT_PROJECT, project_named};
use crate::service::{AdminError, Service, ServiceError, WriteCtx};
use crate::store::{BackupReport, StoreError};
use crate::transfer::dump::{self, Dump, ProjectParts, dump_project};
use crate::transfer::healthchecks::ForeignCheck;

/// How many objects of each kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub projects: usize,
    pub keys: usize,
    pub channels: usize,
    pub checks: usize,
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    pub created: Counts,
    /// Already here (same identity, same project): kept as they are.
    pub present: Counts,
    /// The file was empty and took the dump's badge secret: project badge URLs still work.
    pub adopted_badge_secret: bool,
    /// The file keeps its own badge secret, which differs: imported project badge URLs changed.
    pub badge_urls_changed: bool,
}

/// What happened to one migrated check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MigrateOutcome {
    Created,
    /// A check with this UUID is already in the project; it is left as it is.
    Present,
    /// Not created, with the reason (the others still are).
    Refused(String),
}

fn conflict(msg: String) -> ServiceError {
    AdminError::Usage(format!("import refused, nothing was stored: {msg}")).into()
}

impl Service {
    /// Writes a consistent copy of the data file to `dest` while the service keeps running.
    pub async fn backup(&self, dest: PathBuf) -> Result<BackupReport, ServiceError> {
        let store = self.store_handle();
        tokio::task::spawn_blocking(move || store.backup(&dest))
            .await
            .map_err(|e| {
                ServiceError::from(StoreError::Corrupt(format!("the backup task failed: {e}")))
            })?
            .map_err(ServiceError::from)
    }

    /// The dump of one project (by name) or of every project.
    pub fn export(&self, project: Option<&str>) -> Result<Dump, ServiceError> {
        let projects = self.read(|s| {
            let chosen = match project {
                Some(name) => vec![project_named(s, name)?],
                None => s.projects().into_iter().cloned().collect(),
            };
            Ok::<_, ServiceError>(
                chosen
                    .iter()
                    .map(|p| {
                        let checks: Vec<&Check> = s.checks_of(&p.uuid).collect();
                        dump_project(p, &s.api_keys_of(&p.uuid), &s.channels_of(&p.uuid), &checks)
                    })
                    .collect(),
            )
        })?;
        Ok(Dump {
            format: dump::FORMAT.to_string(),
            version: dump::VERSION,
            exported_at: self.now().to_string(),
            badge_secret: dump::hex(&self.badge_secret()),
            projects,
        })
    }

    /// Imports a dump (see the module documentation for the rules).
    pub async fn import(&self, dump: Dump) -> Result<ImportReport, ServiceError> {
        let secret = dump.secret().map_err(|e| conflict(e.0))?;
        let mut parts = Vec::with_capacity(dump.projects.len());
        for p in &dump.projects {
            parts.push(p.to_model().map_err(|e| conflict(e.0))?);
        }
        let current_secret = self.badge_secret();
        let report = self
            .write(move |ctx| {
                let fresh = ctx.state.projects().is_empty();
                let present = plan(ctx, &parts)?;
                let mut report = ImportReport {
                    present,
                    ..ImportReport::default()
                };
                for p in parts {
                    store_project(ctx, p, &mut report.created)?;
                }
                if secret != *current_secret && report.created.projects > 0 {
                    if fresh {
                        ctx.txn.put_meta("badge_secret", &secret)?;
                        report.adopted_badge_secret = true;
                    } else {
                        report.badge_urls_changed = true;
                    }
                }
                Ok((report, secret))
            })
            .await?;
        if report.0.adopted_badge_secret {
            self.set_badge_secret(&report.1);
        }
        Ok(report.0)
    }

    /// Creates migrated checks in `project` (default: the `default` project), one write job
    /// for the batch; a check whose UUID is already in the project is skipped.
    pub async fn import_foreign(
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

    fn store_handle(&self) -> Arc<crate::store::Store> {
        self.store.clone()
    }
}

/// Checks every object of the dump against the state and against the rest of the dump;
/// counts the ones already present. Changes nothing.
fn plan(ctx: &mut WriteCtx<'_>, parts: &[ProjectParts]) -> Result<Counts, ServiceError> {
    let mut present = Counts::default();
    let mut seen = HashSet::new();
    let mut once = |what: &str, id: String| {
        if seen.insert(format!("{what} {id}")) {
            Ok(())
        } else {
            Err(conflict(format!("the dump holds {what} {id} twice")))
        }
    };
    for p in parts {
        let pr = &p.project;
        once("project", pr.uuid.to_string())?;
        once("project name", pr.name.clone())?;
        once("ping key", pr.ping_key.clone())?;
        match ctx.state.project(&pr.uuid) {
            Some(here) if here.name != pr.name => {
                return Err(conflict(format!(
                    "project {} is called {:?} here, {:?} in the dump",
                    pr.uuid, here.name, pr.name
                )));
            }
            Some(_) => present.projects += 1,
            None => {
                if ctx.state.project_by_name(&pr.name).is_some() {
                    return Err(conflict(format!(
                        "a different project named {:?} exists here; remove it \
                         (`overdue project rm {}`) or import into a fresh data directory",
                        pr.name, pr.name
                    )));
                }
                if ctx.state.project_by_ping_key(&pr.ping_key).is_some() {
                    return Err(conflict(format!(
                        "the ping key of project {:?} belongs to another project here",
                        pr.name
                    )));
                }
            }
        }
        for k in &p.keys {
            once("API key", k.id.clone())?;
            match ctx.state.api_key(&k.id) {
                Some(here) if here.project == pr.uuid => present.keys += 1,
                Some(_) => {
                    return Err(conflict(format!(
                        "API key {} belongs to another project here",
                        k.id
                    )));
                }
                None => {}
            }
        }
        for c in &p.channels {
            once("channel", c.uuid.to_string())?;
            match ctx.state.channel(&c.uuid) {
                Some(here) if here.project == pr.uuid => present.channels += 1,
                Some(_) => {
                    return Err(conflict(format!(
                        "channel {} belongs to another project here",
                        c.uuid
                    )));
                }
                None => {}
            }
        }
        for c in &p.checks {
            once("check", c.uuid.to_string())?;
            once("badge key", c.badge_key.to_string())?;
            match ctx.state.check(&c.uuid) {
                Some(here) if here.project == pr.uuid => present.checks += 1,
                Some(_) => {
                    return Err(conflict(format!(
                        "check {} belongs to another project here",
                        c.uuid
                    )));
                }
                None => {
                    if ctx.txn.check_by_badge_key(c.badge_key)?.is_some() {
                        return Err(conflict(format!(
                            "the badge key of check {} belongs to another check here",
                            c.uuid
                        )));
                    }
                }
            }
        }
    }
    Ok(present)
}

/// Stores the objects of one planned project that are not here yet, numbered in dump order.
fn store_project(
    ctx: &mut WriteCtx<'_>,
    parts: ProjectParts,
    created: &mut Counts,
) -> Result<(), ServiceError> {
    let ProjectParts {
        mut project,
        keys,
        channels,
        checks,
    } = parts;
    if ctx.state.project(&project.uuid).is_none() {
        project.seq = ctx.state.next_seq();
        ctx.txn.put_project(&project)?;
        ctx.state.put_project(project);
        created.projects += 1;
    }
    for key in keys {
        if ctx.state.api_key(&key.id).is_none() {
            ctx.txn.put_api_key(&key)?;
            ctx.state.put_api_key(key);
            created.keys += 1;
        }
    }
    for mut channel in channels {
        if ctx.state.channel(&channel.uuid).is_none() {
            channel.seq = ctx.state.next_seq();
            ctx.txn.put_channel(&channel)?;
            ctx.state.put_channel(channel);
            created.channels += 1;
        }
    }
    for mut check in checks {
        if ctx.state.check(&check.uuid).is_none() {
            check.seq = ctx.state.next_seq();
            ctx.txn.put_check(&check, None)?;
            ctx.txn.set_links(check.uuid, &check.channels)?;
            ctx.touch(check.uuid);
            ctx.state.put_check(check);
            created.checks += 1;
        }
    }
    Ok(())
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
    let badge_key = Uuid::new_v4();
    let mut check = Check::new(
        foreign.uuid,
        project,
        ctx.state.next_seq(),
        ctx.now,
        badge_key,
    );
    if let Err(e) = apply(&mut check, &spec, ApiVersion::V3) {
        return Ok(MigrateOutcome::Refused(e.to_string()));
    }
    if foreign.paused {
        check.status = StoredStatus::Paused;
    }
    ctx.txn.put_check(&check, None)?;
    ctx.touch(check.uuid);
    ctx.state.put_check(check);
    Ok(MigrateOutcome::Created)
}
