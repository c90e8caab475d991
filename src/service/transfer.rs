//! Data in and out of the running service: backups of the file, and export and import of the
//! JSON dump in parts, so neither side ever holds a whole dump.
//!
//! An import runs in two passes over the dump. The check pass ([`Service::plan_project`],
//! [`Service::plan_checks`]) validates every object and looks for clashes, changing nothing;
//! the store pass ([`Service::store_project`], [`Service::store_checks`]) then writes one part
//! per write job, so pings keep being recorded meanwhile.
//!
//! Import rules (documented in the README): objects are matched by identity (project and
//! channel UUID, API key identifier, check UUID). One already here in the same project is
//! kept as it is and counted as present, so importing twice adds nothing. Anything that would
//! clash with a different object here (a project name or ping key, a key, channel or check
//! owned by another project, a per-check badge key) refuses the import in the check pass, so
//! nothing is stored. A store pass that stops midway (a full disk) leaves the parts it wrote;
//! running the import again adds the rest.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use uuid::Uuid;

use crate::model::Project;
use crate::service::admin::project_named;
use crate::service::{Service, ServiceError, State, WriteCtx};
use crate::store::{BackupReport, StoreError};
use crate::transfer::dump::{self, DumpCheck, DumpProject, ProjectParts, dump_check, dump_project};

/// How many objects of each kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) projects: usize,
    pub(crate) keys: usize,
    pub channels: usize,
    pub checks: usize,
}

fn conflict(msg: &str) -> ServiceError {
    ServiceError::usage(format!("import refused, nothing was stored: {msg}"))
}

/// What the check pass has seen so far: every identity once, and what is already here.
#[derive(Debug, Default)]
pub(crate) struct ImportPlan {
    seen: HashSet<String>,
    checks: HashSet<Uuid>,
    badge_keys: HashSet<Uuid>,
    /// Already here (same identity, same project): kept as they are.
    pub(crate) present: Counts,
    /// The project whose checks come next, with its channels.
    current: Option<(Project, Vec<Uuid>)>,
}

impl ImportPlan {
    fn once(&mut self, what: &str, id: &str) -> Result<(), ServiceError> {
        if self.seen.insert(format!("{what} {id}")) {
            Ok(())
        } else {
            Err(conflict(&format!("the dump holds {what} {id} twice")))
        }
    }
}

/// What the store pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ImportReport {
    pub created: Counts,
    /// The file was empty and took the dump's badge secret: project badge URLs still work.
    pub(crate) adopted_badge_secret: bool,
    /// The file keeps its own badge secret, which differs: imported project badge URLs changed.
    pub(crate) badge_urls_changed: bool,
}

/// The projects an export covers, and how many checks they hold.
#[derive(Debug, Clone)]
pub(crate) struct ExportPlan {
    pub(crate) projects: Vec<Uuid>,
    pub checks: usize,
    pub(crate) exported_at: String,
    pub(crate) badge_secret: String,
}

impl Service {
    /// Writes a consistent copy of the data file to `dest` while the service keeps running.
    pub(crate) async fn backup(&self, dest: PathBuf) -> Result<BackupReport, ServiceError> {
        let store = self.store_handle();
        tokio::task::spawn_blocking(move || store.backup(&dest))
            .await
            .map_err(|e| {
                ServiceError::from(StoreError::Corrupt(format!("the backup task failed: {e}")))
            })?
            .map_err(ServiceError::from)
    }

    /// What an export of one project (by name) or of every project covers.
    pub(crate) fn export_plan(&self, project: Option<&str>) -> Result<ExportPlan, ServiceError> {
        let (projects, checks) = self.read(|s| {
            let chosen = match project {
                Some(name) => vec![project_named(s, name)?],
                None => s.projects().into_iter().cloned().collect(),
            };
            let checks = chosen.iter().map(|p| s.checks_of(&p.uuid).count()).sum();
            Ok::<_, ServiceError>((chosen.iter().map(|p| p.uuid).collect(), checks))
        })?;
        Ok(ExportPlan {
            projects,
            checks,
            exported_at: self.now().to_string(),
            badge_secret: dump::hex(&self.badge_secret()),
        })
    }

    /// A project as dumped, without its checks; None once it is gone.
    pub(crate) fn export_project(&self, project: Uuid) -> Option<DumpProject> {
        self.read(|s| {
            let p = s.project(&project)?;
            Some(dump_project(
                p,
                &s.api_keys_of(&p.uuid),
                &s.channels_of(&p.uuid),
                &[],
            ))
        })
    }

    /// Up to `limit` checks of `project` created after sequence number `after`, in creation
    /// order, with the sequence number of the last one. Each part is read under one short
    /// lock, so pings keep being answered during a long export.
    pub(crate) fn export_checks(
        &self,
        project: Uuid,
        after: u64,
        limit: usize,
    ) -> (Vec<DumpCheck>, Option<u64>) {
        self.read(|s| {
            let mut last = None;
            let part = s
                .checks_of_after(&project, after)
                .take(limit)
                .map(|c| {
                    last = Some(c.seq);
                    dump_check(c)
                })
                .collect();
            (part, last)
        })
    }

    /// Check pass: a project of the dump (its checks come next, in [`Service::plan_checks`]).
    pub(crate) fn plan_project(
        &self,
        plan: &mut ImportPlan,
        project: &DumpProject,
    ) -> Result<(), ServiceError> {
        let parts = project.to_model().map_err(|e| conflict(&e.0))?;
        self.read(|s| plan_project_parts(s, plan, &parts))?;
        plan.current = Some((
            parts.project,
            parts.channels.iter().map(|c| c.uuid).collect(),
        ));
        Ok(())
    }

    /// Check pass: a part of the checks of the project last given to
    /// [`Service::plan_project`].
    pub(crate) fn plan_checks(
        &self,
        plan: &mut ImportPlan,
        checks: &[DumpCheck],
    ) -> Result<(), ServiceError> {
        let Some((project, channels)) = plan.current.take() else {
            return Err(conflict("checks come before their project"));
        };
        let result = self.plan_checks_of(plan, &project, &channels, checks);
        plan.current = Some((project, channels));
        result
    }

    fn plan_checks_of(
        &self,
        plan: &mut ImportPlan,
        project: &Project,
        channels: &[Uuid],
        checks: &[DumpCheck],
    ) -> Result<(), ServiceError> {
        let mut fresh = Vec::new();
        for d in checks {
            d.to_model(&project.name, project.uuid, channels)
                .map_err(|e| conflict(&e.0))?;
            if !plan.checks.insert(d.uuid) {
                return Err(conflict(&format!("the dump holds check {} twice", d.uuid)));
            }
            if !plan.badge_keys.insert(d.badge_key) {
                return Err(conflict(&format!(
                    "the dump holds badge key {} twice",
                    d.badge_key
                )));
            }
        }
        let here: Vec<Option<Uuid>> = self.read(|s| {
            checks
                .iter()
                .map(|d| s.check(&d.uuid).map(|c| c.project))
                .collect()
        });
        for (d, here) in checks.iter().zip(here) {
            match here {
                Some(p) if p == project.uuid => plan.present.checks += 1,
                Some(_) => {
                    return Err(conflict(&format!(
                        "check {} belongs to another project here",
                        d.uuid
                    )));
                }
                None => fresh.push(d),
            }
        }
        // Badge keys are kept on disk, not in memory.
        for d in fresh {
            if self.store.check_by_badge_key(d.badge_key)?.is_some() {
                return Err(conflict(&format!(
                    "the badge key of check {} belongs to another check here",
                    d.uuid
                )));
            }
        }
        Ok(())
    }

    /// Store pass: a project with its keys and channels (those not here yet). The first
    /// project imported into an empty file brings the dump's badge secret along.
    pub(crate) async fn store_project(
        &self,
        project: &DumpProject,
        secret: Vec<u8>,
        report: &mut ImportReport,
    ) -> Result<(), ServiceError> {
        let parts = project.to_model().map_err(|e| conflict(&e.0))?;
        let current_secret = self.badge_secret();
        let (created, adopted, changed) = self
            .write(move |ctx| {
                let fresh = ctx.state.projects().is_empty();
                let mut created = Counts::default();
                store_project_parts(ctx, parts, &mut created)?;
                let (mut adopted, mut changed) = (false, false);
                if secret != *current_secret && created.projects > 0 {
                    if fresh {
                        ctx.txn.put_meta("badge_secret", &secret)?;
                        adopted = true;
                    } else {
                        changed = true;
                    }
                }
                Ok((created, adopted.then_some(secret), changed))
            })
            .await?;
        if let Some(secret) = adopted {
            self.set_badge_secret(&secret);
            report.adopted_badge_secret = true;
        }
        report.badge_urls_changed |= changed;
        add(&mut report.created, created);
        Ok(())
    }

    /// Store pass: a part of the checks of `project` (stored by [`Service::store_project`]),
    /// in one write job; checks already here are left as they are.
    pub(crate) async fn store_checks(
        &self,
        project: &DumpProject,
        checks: Vec<DumpCheck>,
        report: &mut ImportReport,
    ) -> Result<(), ServiceError> {
        let channels: Vec<Uuid> = project.channels.iter().map(|c| c.uuid).collect();
        let mut models = Vec::with_capacity(checks.len());
        for d in &checks {
            models.push(
                d.to_model(&project.name, project.uuid, &channels)
                    .map_err(|e| conflict(&e.0))?,
            );
        }
        drop(checks);
        let created = self
            .write(move |ctx| {
                let mut created = 0;
                for mut check in models {
                    match ctx.state.check(&check.uuid) {
                        Some(here) if here.project == check.project => continue,
                        Some(_) => {
                            return Err(ServiceError::usage(format!(
                                "check {} was created in another project during the import",
                                check.uuid
                            )));
                        }
                        None => {}
                    }
                    if ctx.txn.check_by_badge_key(check.badge_key)?.is_some() {
                        return Err(ServiceError::usage(format!(
                            "the badge key of check {} was taken during the import",
                            check.uuid
                        )));
                    }
                    check.seq = ctx.state.next_seq();
                    ctx.txn.put_check(&check, None)?;
                    ctx.txn.set_links(check.uuid, &check.channels)?;
                    ctx.touch(check.uuid);
                    ctx.state.put_check(check);
                    created += 1;
                }
                Ok(created)
            })
            .await?;
        report.created.checks += created;
        Ok(())
    }

    fn store_handle(&self) -> Arc<crate::store::Store> {
        self.store.clone()
    }
}

fn add(to: &mut Counts, more: Counts) {
    to.projects += more.projects;
    to.keys += more.keys;
    to.channels += more.channels;
    to.checks += more.checks;
}

/// Checks a project's own objects (not its checks) against the state and against the rest of
/// the dump; counts the ones already present. Changes nothing.
fn plan_project_parts(
    state: &State,
    plan: &mut ImportPlan,
    parts: &ProjectParts,
) -> Result<(), ServiceError> {
    let pr = &parts.project;
    plan.once("project", &pr.uuid.to_string())?;
    plan.once("project name", &pr.name)?;
    plan.once("ping key", &pr.ping_key)?;
    match state.project(&pr.uuid) {
        Some(here) if here.name != pr.name => {
            return Err(conflict(&format!(
                "project {} is called {:?} here, {:?} in the dump",
                pr.uuid, here.name, pr.name
            )));
        }
        Some(_) => plan.present.projects += 1,
        None => {
            if state.project_by_name(&pr.name).is_some() {
                return Err(conflict(&format!(
                    "a different project named {:?} exists here; remove it \
                     (`overdue project rm {}`) or import into a fresh data directory",
                    pr.name, pr.name
                )));
            }
            if state.project_by_ping_key(&pr.ping_key).is_some() {
                return Err(conflict(&format!(
                    "the ping key of project {:?} belongs to another project here",
                    pr.name
                )));
            }
        }
    }
    for k in &parts.keys {
        plan.once("API key", &k.id)?;
        match state.api_key(&k.id) {
            Some(here) if here.project == pr.uuid => plan.present.keys += 1,
            Some(_) => {
                return Err(conflict(&format!(
                    "API key {} belongs to another project here",
                    k.id
                )));
            }
            None => {}
        }
    }
    for c in &parts.channels {
        plan.once("channel", &c.uuid.to_string())?;
        match state.channel(&c.uuid) {
            Some(here) if here.project == pr.uuid => plan.present.channels += 1,
            Some(_) => {
                return Err(conflict(&format!(
                    "channel {} belongs to another project here",
                    c.uuid
                )));
            }
            None => {}
        }
    }
    Ok(())
}

/// Stores the objects of one planned project that are not here yet, numbered in dump order.
fn store_project_parts(
    ctx: &mut WriteCtx<'_>,
    parts: ProjectParts,
    created: &mut Counts,
) -> Result<(), ServiceError> {
    let ProjectParts {
        mut project,
        keys,
        channels,
        checks: _,
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
    Ok(())
}

/// Checks handed out or taken per part; a part is one message on the control socket and one
/// write job.
pub(crate) const PART: usize = 1_000;
