//! `overdue backup`, `overdue export` and `overdue import` (a dump, or checks migrated from a
//! running Healthchecks instance). Backup, export and import are admin commands: they run
//! inside the service through the control socket while it serves, or on the file when it is
//! stopped, with the same output. Migration fetches from Healthchecks here, in the CLI, and
//! hands the checks to the service in batches, reporting progress on stderr.

use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{Value, json};

use crate::cli::admin::{AdminCommand, AdminOutput, count};
use crate::cli::control;
use crate::service::transfer::{Counts, MigrateOutcome};
use crate::service::{Service, ServiceError};
use crate::transfer::dump::Dump;
use crate::transfer::healthchecks::{self, ForeignCheck};

/// Checks handed to the service per write job during a migration.
const MIGRATE_BATCH: usize = 100;

#[derive(Debug, Clone, Args)]
pub struct BackupArgs {
    /// Where to write the copy (written as FILE.tmp, then renamed). While the service runs,
    /// the service process writes it, so it must be a path the service may write.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Replace FILE if it exists; without it an existing FILE is refused and left as it is.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// Export only this project (default: every project).
    #[arg(long, value_name = "NAME")]
    pub project: Option<String>,
    /// Write the export to FILE instead of standard output. It holds API key hashes and the
    /// badge secret, so FILE is created with mode 0600 whatever the umask (written as
    /// FILE.tmp, then renamed over FILE).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// A file written by `overdue export` (`-` reads standard input).
    #[arg(
        value_name = "FILE",
        required_unless_present = "from_healthchecks",
        conflicts_with = "from_healthchecks"
    )]
    pub file: Option<PathBuf>,
    /// Base URL of a Healthchecks instance (e.g. https://healthchecks.io) to copy checks from.
    #[arg(long, value_name = "URL", requires = "api_key")]
    pub from_healthchecks: Option<String>,
    /// Read-write API key of the Healthchecks project to copy.
    #[arg(
        long,
        env = "OVERDUE_HC_API_KEY",
        value_name = "KEY",
        hide_env_values = true
    )]
    pub api_key: Option<String>,
    /// Project to import into (migration; default `default`), or the only project of the
    /// file to import (dump).
    #[arg(long, value_name = "NAME")]
    pub project: Option<String>,
}

fn counts(c: Counts) -> String {
    format!(
        "{}, {}, {}, {}",
        count(c.projects, "project"),
        count(c.keys, "API key"),
        count(c.channels, "channel"),
        count(c.checks, "check")
    )
}

type Outcome = Result<AdminOutput, ServiceError>;

/// `backup`, inside the service: the service's view of the filesystem is the one that counts
/// (a unit's private /tmp differs from the caller's).
pub async fn backup(service: &Service, path: PathBuf, force: bool) -> Outcome {
    // symlink_metadata: a dangling link is something in the way too.
    if !force && path.symlink_metadata().is_ok() {
        return Ok(AdminOutput::error(format!(
            "{} already exists; nothing was written (add --force to replace it)",
            path.display()
        )));
    }
    let r = service.backup(path).await?;
    Ok(AdminOutput::ok(format!(
        "backup written to {} ({} bytes, {}, {})\n",
        r.path.display(),
        r.bytes,
        count(usize::try_from(r.checks).unwrap_or(usize::MAX), "check"),
        count(usize::try_from(r.pings).unwrap_or(usize::MAX), "ping")
    )))
}

/// `export`, inside the service.
pub fn export(service: &Service, project: Option<&str>) -> Outcome {
    Ok(AdminOutput::ok(service.export(project)?.to_json()))
}

/// `export --output FILE`: writes what the service exported to `file`, created 0600 (the
/// export holds key hashes and the badge secret, and the shell's umask would leave it
/// readable to others), and says what it holds instead of printing it.
pub fn write_export(file: &Path, exported: AdminOutput) -> AdminOutput {
    if exported.code != 0 {
        return exported;
    }
    if let Err(e) = write_private(file, exported.stdout.as_bytes()) {
        return AdminOutput::error(format!("cannot write {}: {e}", file.display()));
    }
    let what = match Dump::parse(&exported.stdout) {
        Ok(dump) => {
            let mut c = Counts::default();
            for p in &dump.projects {
                c.projects += 1;
                c.keys += p.api_keys.len();
                c.channels += p.channels.len();
                c.checks += p.checks.len();
            }
            counts(c)
        }
        Err(_) => "the export".into(),
    };
    AdminOutput {
        stdout: format!("exported {what} to {} (mode 0600)\n", file.display()),
        ..exported
    }
}

/// Writes `bytes` to `file` through `FILE.tmp`, created with mode 0600 (never readable by
/// others, not even for a moment), synced, then renamed over `file`.
fn write_private(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = file.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let written = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// `import FILE`, inside the service.
pub async fn import(service: &Service, dump: Dump) -> Outcome {
    let r = service.import(dump).await?;
    let mut out = format!(
        "imported {}\nalready present, left as they are: {}\n",
        counts(r.created),
        counts(r.present)
    );
    if r.adopted_badge_secret {
        out.push_str("took the export's badge secret: project badge URLs are unchanged\n");
    }
    let mut stderr = String::new();
    if r.badge_urls_changed {
        stderr.push_str(
            "note: this data file signs project badge URLs with its own secret, so the \
             imported projects' badge URLs changed (GET /api/v3/badges/ lists the new \
             ones); per-check badge URLs are unchanged\n",
        );
    }
    Ok(AdminOutput {
        stdout: out,
        stderr,
        code: 0,
    })
}

/// One batch of a migration, inside the service: a JSON list of outcomes for [`migrate`].
pub async fn migrate_batch(
    service: &Service,
    project: Option<String>,
    checks: Vec<ForeignCheck>,
) -> Outcome {
    let results = service.import_foreign(project, checks).await?;
    let list: Vec<Value> = results
        .iter()
        .map(|(c, outcome)| {
            let (what, reason) = match outcome {
                MigrateOutcome::Created => ("created", String::new()),
                MigrateOutcome::Present => ("present", String::new()),
                MigrateOutcome::Refused(why) => ("refused", why.clone()),
            };
            json!({"uuid": c.uuid.to_string(), "name": c.name, "outcome": what, "reason": reason})
        })
        .collect();
    Ok(AdminOutput::ok(format!("{}\n", Value::Array(list))))
}

/// The backup command with its path made absolute: the service may run elsewhere.
pub fn backup_command(args: &BackupArgs) -> Result<AdminCommand, String> {
    let path = std::path::absolute(&args.file)
        .map_err(|e| format!("cannot resolve {}: {e}", args.file.display()))?;
    Ok(AdminCommand::Backup {
        path,
        force: args.force,
    })
}

fn read_input(path: &Path) -> std::io::Result<String> {
    if path == Path::new("-") {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(path)
    }
}

/// The import command for a dump file, keeping only `--project` when given.
pub fn import_command(file: &Path, project: Option<&str>) -> Result<AdminCommand, String> {
    let text = read_input(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let mut dump = Dump::parse(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    if let Some(name) = project {
        dump.projects.retain(|p| p.name == name);
        if dump.projects.is_empty() {
            return Err(format!(
                "{} holds no project named {name:?}",
                file.display()
            ));
        }
    }
    Ok(AdminCommand::Import {
        dump: Box::new(dump),
    })
}

/// Copies every check of a Healthchecks project: progress on stderr, the summary on stdout.
/// Exit code 0 when every check is here afterwards.
pub async fn migrate(
    data: &Path,
    url: &str,
    api_key: &str,
    project: Option<String>,
) -> AdminOutput {
    eprintln!("fetching the checks of {}", healthchecks::checks_url(url));
    let checks = match healthchecks::fetch_checks(url, api_key).await {
        Ok(c) => c,
        Err(e) => return AdminOutput::error(format!("{e}; nothing was imported")),
    };
    let total = checks.len();
    eprintln!("{total} checks to copy");
    let (mut created, mut present, mut refused, mut done) = (0, 0, 0, 0);
    let batches: Vec<Vec<ForeignCheck>> = checks.chunks(MIGRATE_BATCH).map(<[_]>::to_vec).collect();
    for batch in batches {
        let cmd = AdminCommand::Migrate {
            project: project.clone(),
            checks: batch,
        };
        let output = control::run_admin(data, cmd).await;
        if output.code != 0 {
            let mut out = output;
            let _ = writeln!(
                out.stderr,
                "overdue: stopped after {done} of {total} checks; run the same command again \
                 to continue (checks already copied are skipped)"
            );
            return out;
        }
        let results: Vec<Value> = serde_json::from_str(&output.stdout).unwrap_or_default();
        for r in results {
            done += 1;
            let field = |k: &str| {
                r.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let (uuid, name) = (field("uuid"), field("name"));
            match field("outcome").as_str() {
                "created" => {
                    created += 1;
                    eprintln!("[{done}/{total}] copied {uuid} {name}");
                }
                "present" => {
                    present += 1;
                    eprintln!("[{done}/{total}] skipped {uuid} {name}: already here");
                }
                _ => {
                    refused += 1;
                    eprintln!(
                        "[{done}/{total}] refused {uuid} {name}: {}",
                        field("reason")
                    );
                }
            }
        }
    }
    let summary = format!(
        "copied {created} checks, {present} were already here, {refused} refused (of {total})\n"
    );
    if refused > 0 {
        AdminOutput {
            stdout: summary,
            stderr: "overdue: some checks were refused (see above); fix them on Healthchecks or \
                     here and run the same command again\n"
                .into(),
            code: 1,
        }
    } else {
        AdminOutput::ok(summary)
    }
}
