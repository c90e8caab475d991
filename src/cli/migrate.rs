//! `overdue import --from-healthchecks`: fetches a Healthchecks project's checks and
//! integrations here, in the CLI, then has the service prepare the target project (created
//! with its keys on an empty data directory, taking over `--ping-key`) and create the checks
//! in batches, reporting each on stderr. Exit code 0 when every check is here afterwards.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;

use crate::cli::admin::{AdminCommand, AdminOutput};
use crate::cli::control;
use crate::cli::datadir::Place;
use crate::cli::protocol::{Migrated, MigratedOutcome, Reply};
use crate::model::project::is_ping_key;
use crate::service::migrate::MigrateOutcome;
use crate::service::{Service, ServiceError};
use crate::transfer::healthchecks::{self, ForeignCheck, Source};

/// Checks handed to the service per write job during a migration.
const MIGRATE_BATCH: usize = 100;

type Outcome = Result<AdminOutput, ServiceError>;

/// Parses `--ping-key`: the shape every ping key has (clap exits 2 on anything else).
pub(crate) fn ping_key_arg(s: &str) -> Result<String, String> {
    if is_ping_key(s) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "a ping key is 22 characters of letters, digits, '-' and '_' (got {} characters)",
            s.chars().count()
        ))
    }
}

/// The start of a migration, inside the service: the first-start key printout when the
/// project was created, and the ping key taken over.
pub(crate) async fn migrate_start(
    service: &Service,
    project: Option<String>,
    ping_key: Option<String>,
) -> Outcome {
    let start = service.start_migration(project, ping_key).await?;
    let mut out = String::new();
    if let Some((rw, ro)) = &start.first_start {
        out.push_str(&crate::server::daemon::first_start_keys(
            &start.project,
            rw,
            ro,
            service.site_root(),
        ));
    }
    if start.ping_key_changed {
        let _ = writeln!(
            out,
            "project {} took over the ping key {}: /ping/{}/<slug> URLs work here",
            start.project.name, start.project.ping_key, start.project.ping_key
        );
    }
    Ok(AdminOutput::ok(out))
}

/// One batch of a migration, inside the service: the outcome of each check, for [`migrate`].
pub(crate) async fn migrate_batch(
    service: &Service,
    project: Option<String>,
    checks: Vec<ForeignCheck>,
) -> Result<Vec<Migrated>, ServiceError> {
    let results = service.import_foreign(project, checks).await?;
    Ok(results
        .into_iter()
        .map(|(c, outcome)| Migrated {
            uuid: c.uuid,
            name: c.name,
            outcome: match outcome {
                MigrateOutcome::Created {
                    unmapped,
                    new_badge_key,
                } => MigratedOutcome::Created {
                    unmapped: unmapped.into_iter().map(|ch| (ch.kind, ch.name)).collect(),
                    new_badge_key,
                },
                MigrateOutcome::Present => MigratedOutcome::Present,
                MigrateOutcome::Refused(why) => MigratedOutcome::Refused(why),
            },
        })
        .collect())
}

/// Fetches the source's integrations and checks, and the start of each run in progress.
async fn fetch(url: &str, api_key: &str) -> Result<Vec<ForeignCheck>, healthchecks::HcError> {
    let source = Source::new(url, api_key)?;
    let channels = source.channels().await?;
    let mut checks = healthchecks::parents_first(source.checks(&channels).await?);
    for check in checks.iter_mut().filter(|c| c.started) {
        // Without it the run counts from now (see `service::migrate`).
        if let Ok(Some((at, rid))) = source.last_start(check.uuid).await {
            check.last_start = Some(at);
            check.last_start_rid = rid;
        }
    }
    Ok(checks)
}

/// What the batches came to.
#[derive(Default)]
struct Tally {
    created: usize,
    present: usize,
    refused: usize,
    done: usize,
    /// `kind "name"` of each integration that found no channel here, with its checks.
    unmapped: BTreeMap<String, Vec<String>>,
    new_badges: Vec<String>,
}

impl Tally {
    fn add(&mut self, r: Migrated, total: usize) {
        self.done += 1;
        let done = self.done;
        let Migrated {
            uuid,
            name,
            outcome,
        } = r;
        match outcome {
            MigratedOutcome::Created {
                unmapped,
                new_badge_key,
            } => {
                self.created += 1;
                eprintln!("[{done}/{total}] copied {uuid} {name}");
                for (kind, channel) in unmapped {
                    self.unmapped
                        .entry(format!("{kind} {channel:?}"))
                        .or_default()
                        .push(name.clone());
                }
                if new_badge_key {
                    self.new_badges.push(name);
                }
            }
            MigratedOutcome::Present => {
                self.present += 1;
                eprintln!("[{done}/{total}] skipped {uuid} {name}: already here");
            }
            MigratedOutcome::Refused(reason) => {
                self.refused += 1;
                eprintln!("[{done}/{total}] refused {uuid} {name}: {reason}");
            }
        }
    }

    /// Notes on what did not come across as it was.
    fn notes(&self, project: &str) -> String {
        let mut out = String::new();
        if !self.unmapped.is_empty() {
            let _ = writeln!(
                out,
                "note: these integrations have no channel of the same kind and name in project \
                 {project}, so their checks were copied without them:"
            );
            for (channel, checks) in &self.unmapped {
                let _ = writeln!(out, "  {channel}: {}", checks.join(", "));
            }
            out.push_str(
                "  (`overdue channel add` creates a channel and assigns it to every check; the \
                 Management API sets one check's \"channels\")\n",
            );
        }
        if !self.new_badges.is_empty() {
            let _ = writeln!(
                out,
                "note: the badge URLs of these checks changed (their Healthchecks badge key \
                 was missing or is another check's here): {}",
                self.new_badges.join(", ")
            );
        }
        out
    }
}

/// Copies every check of a Healthchecks project: progress on stderr, the summary on stdout.
pub(crate) async fn migrate(
    data: &Place,
    url: &str,
    api_key: &str,
    project: Option<String>,
    ping_key: Option<String>,
) -> AdminOutput {
    eprintln!("fetching the checks of {}", healthchecks::checks_url(url));
    let checks = match fetch(url, api_key).await {
        Ok(c) => c,
        Err(e) => return AdminOutput::error(format!("{e}; nothing was imported")),
    };
    let total = checks.len();
    eprintln!("{total} checks to copy");
    let start = control::run_admin(
        data,
        AdminCommand::MigrateStart {
            project: project.clone(),
            ping_key,
        },
    )
    .await;
    if start.code != 0 {
        return start;
    }
    // The keys of a project created just now are shown at once, whatever happens next.
    print!("{}", start.stdout);
    let _ = std::io::stdout().flush();
    let mut tally = Tally::default();
    for batch in checks.chunks(MIGRATE_BATCH) {
        let cmd = AdminCommand::Migrate {
            project: project.clone(),
            checks: batch.to_vec(),
        };
        let results = match control::request(data, cmd).await {
            Reply::Migrated(results) => results,
            other => {
                let mut out = other.failure();
                let _ = writeln!(
                    out.stderr,
                    "overdue: stopped after {} of {total} checks; run the same command \
                     again to continue (checks already copied are skipped)",
                    tally.done
                );
                return out;
            }
        };
        for r in results {
            tally.add(r, total);
        }
    }
    let summary = format!(
        "copied {} checks, {} were already here, {} refused (of {total})\n",
        tally.created, tally.present, tally.refused
    );
    let project = project.unwrap_or_else(|| crate::service::admin::DEFAULT_PROJECT.into());
    let mut stderr = tally.notes(&project);
    let code = if tally.refused > 0 {
        stderr.push_str(
            "overdue: some checks were refused (see above); fix them on Healthchecks or here \
             and run the same command again\n",
        );
        1
    } else {
        0
    };
    AdminOutput {
        stdout: summary,
        stderr,
        code,
    }
}
