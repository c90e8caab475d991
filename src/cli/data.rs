//! `overdue backup`, `overdue export` and `overdue import` (a dump, or checks migrated from a
//! running Healthchecks instance: `cli::migrate`). Backup, export and import run inside the
//! service through the control socket while it serves, or on the file when it is stopped,
//! with the same output. Export and import pass the dump in parts ([`crate::cli::session`]),
//! so memory stays bounded whatever its size; progress shows on stderr when it is a terminal.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use clap::Args;

use crate::cli::admin::{AdminCommand, AdminOutput};
use crate::cli::control::{self, Patience};
use crate::cli::progress;
use crate::cli::session::{ExportPiece, ImportMsg, Link};
use crate::service::transfer::PART;
use crate::service::{Service, ServiceError};
use crate::transfer::dump_stream::{DumpWriter, Piece, ReadError, read_dump};

#[derive(Debug, Clone, Args)]
pub struct BackupArgs {
    /// Where to write the copy (written as FILE.tmp, then renamed). While the service runs,
    /// the service process writes it, so it must be a path the service may write.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// Export only this project (default: every project).
    #[arg(long, value_name = "NAME")]
    pub project: Option<String>,
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
    /// The Healthchecks project's ping key (its settings page shows it): the project here
    /// takes it over, so slug ping URLs `/ping/<ping-key>/<slug>` keep working.
    #[arg(long, value_name = "KEY", requires = "from_healthchecks", value_parser = crate::cli::migrate::ping_key_arg)]
    pub ping_key: Option<String>,
}

type Outcome = Result<AdminOutput, ServiceError>;

/// `backup`, inside the service.
pub async fn backup(service: &Service, path: PathBuf) -> Outcome {
    let r = service.backup(path).await?;
    Ok(AdminOutput::ok(format!(
        "backup written to {} ({} bytes, {} checks, {} pings)\n",
        r.path.display(),
        r.bytes,
        r.checks,
        r.pings
    )))
}

/// The backup command with its path made absolute: the service may run elsewhere.
pub fn backup_command(args: &BackupArgs) -> Result<AdminCommand, String> {
    let path = std::path::absolute(&args.file)
        .map_err(|e| format!("cannot resolve {}: {e}", args.file.display()))?;
    Ok(AdminCommand::Backup { path })
}

/// Runs a backup, with a spinner counting the bytes of `FILE.tmp` as it grows (whoever
/// writes it, this process or the service).
pub async fn run_backup(data: &Path, cmd: AdminCommand) -> AdminOutput {
    let tmp = match &cmd {
        AdminCommand::Backup { path } if progress::shown() => {
            let mut tmp = path.as_os_str().to_owned();
            tmp.push(".tmp");
            PathBuf::from(tmp)
        }
        _ => return control::run_admin(data, cmd).await,
    };
    let bar = progress::spinner_bytes("backing up");
    let work = control::run_admin(data, cmd);
    let mut work = std::pin::pin!(work);
    let mut ticks = tokio::time::interval(Duration::from_millis(200));
    loop {
        tokio::select! {
            output = &mut work => {
                bar.finish_and_clear();
                return output;
            }
            _ = ticks.tick() => {
                if let Ok(meta) = std::fs::metadata(&tmp) {
                    bar.set_position(meta.len());
                }
            }
        }
    }
}

/// The patience of one message of an import or export session.
fn session_patience() -> Patience {
    Patience::for_command(&AdminCommand::ImportParts)
}

/// `export`: the dump of one project or all, written to `out` as its parts arrive.
pub async fn export(data: &Path, project: Option<String>, out: impl Write) -> AdminOutput {
    let endpoint = match control::open(data, session_patience()).await {
        Ok(e) => e,
        Err(output) => return output,
    };
    let (link, header) = Link::export(endpoint, project).await;
    let Some(mut link) = link else {
        return failed_piece(header);
    };
    let output = write_export(&mut link, header, out).await;
    link.close().await;
    output
}

fn failed_piece(piece: ExportPiece) -> AdminOutput {
    match piece {
        ExportPiece::Failed(output) => output,
        _ => AdminOutput::error("the service answered the export out of order"),
    }
}

async fn write_export(link: &mut Link, header: ExportPiece, out: impl Write) -> AdminOutput {
    let ExportPiece::Header {
        exported_at,
        badge_secret,
        checks,
    } = header
    else {
        return failed_piece(header);
    };
    let cannot = |e: std::io::Error| AdminOutput::error(format!("cannot write the export: {e}"));
    let out = std::io::BufWriter::with_capacity(256 << 10, out);
    let mut writer = match DumpWriter::begin(out, &exported_at, &badge_secret) {
        Ok(w) => w,
        Err(e) => return cannot(e),
    };
    let bar = progress::checks(checks as u64, "exporting");
    loop {
        let written = match link.next().await {
            ExportPiece::Project(p) => writer.project(&p),
            ExportPiece::Checks(part) => {
                bar.inc(part.len() as u64);
                part.iter().try_for_each(|c| writer.check(c))
            }
            ExportPiece::End => break,
            other => {
                bar.abandon();
                return failed_piece(other);
            }
        };
        if let Err(e) = written {
            bar.abandon();
            return cannot(e);
        }
    }
    bar.finish_and_clear();
    match writer.finish() {
        Ok(_) => AdminOutput::ok(String::new()),
        Err(e) => cannot(e),
    }
}

/// A copy of standard input in a private temporary file, removed when dropped: an import
/// reads its dump twice (check, then store).
struct Spooled(PathBuf);

impl Spooled {
    fn stdin() -> std::io::Result<Spooled> {
        use std::os::unix::fs::OpenOptionsExt;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let path = std::env::temp_dir().join(format!(
            "overdue-import-{}-{nanos}.json",
            std::process::id()
        ));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            // A dump holds key hashes and the badge secret.
            .mode(0o600)
            .open(&path)?;
        let spooled = Spooled(path);
        std::io::copy(&mut std::io::stdin().lock(), &mut file)?;
        file.sync_all()?;
        Ok(spooled)
    }
}

impl Drop for Spooled {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A reader that counts what passed through it, for the progress bar.
struct Counting<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// What one pass over the dump sent.
#[derive(Debug, Default)]
struct Sent {
    projects: usize,
    checks: usize,
}

/// `import FILE`: a check pass over the whole dump, then a store pass, in parts.
pub async fn import(data: &Path, file: &Path, project: Option<&str>) -> AdminOutput {
    let spooled = if file == Path::new("-") {
        match Spooled::stdin() {
            Ok(s) => Some(s),
            Err(e) => return AdminOutput::error(format!("cannot read standard input: {e}")),
        }
    } else {
        None
    };
    let path = spooled.as_ref().map_or(file, |s| s.0.as_path());
    let size = match std::fs::File::open(path).and_then(|f| f.metadata()) {
        Ok(meta) => meta.len(),
        Err(e) => return AdminOutput::error(format!("cannot read {}: {e}", file.display())),
    };
    let endpoint = match control::open(data, session_patience()).await {
        Ok(e) => e,
        Err(output) => return output,
    };
    let mut link = match Link::import(endpoint).await {
        Ok(link) => link,
        Err(output) => return output,
    };
    let output = import_passes(&mut link, path, file, project, size).await;
    link.close().await;
    output
}

async fn import_passes(
    link: &mut Link,
    path: &Path,
    name: &Path,
    project: Option<&str>,
    size: u64,
) -> AdminOutput {
    let bar = progress::bytes(size, "checking");
    let (planned, failed) = pass(link, path, name, project, false, &bar).await;
    bar.finish_and_clear();
    if let Some(output) = failed {
        return output;
    }
    if let Some(wanted) = project
        && planned.projects == 0
    {
        return AdminOutput::error(format!(
            "{} holds no project named {wanted:?}",
            name.display()
        ));
    }
    let bar = progress::checks(planned.checks as u64, "importing");
    let (stored, failed) = pass(link, path, name, project, true, &bar).await;
    if let Some(mut output) = failed {
        bar.abandon();
        output.stderr.push_str(&format!(
            "overdue: stopped after {} of {} checks; run the same command again to import \
             the rest (what is here already is skipped)\n",
            stored.checks, planned.checks
        ));
        return output;
    }
    bar.finish_and_clear();
    link.send(ImportMsg::Finish).await
}

/// Reads the dump once, sending each piece (of the chosen project) to the session: the
/// check pass, or with `store` the store pass. The first refusal ends it.
async fn pass(
    link: &mut Link,
    path: &Path,
    name: &Path,
    project: Option<&str>,
    store: bool,
    bar: &indicatif::ProgressBar,
) -> (Sent, Option<AdminOutput>) {
    let mut sent = Sent::default();
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            let output = AdminOutput::error(format!("cannot read {}: {e}", name.display()));
            return (sent, Some(output));
        }
    };
    let read = Arc::new(AtomicU64::new(0));
    let counting = Counting {
        inner: file,
        read: read.clone(),
    };
    // Two parts in flight at most: one being sent, one read ahead.
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Piece>(1);
    let reader = tokio::task::spawn_blocking(move || {
        read_dump(counting, PART, |piece| {
            tx.blocking_send(piece).map_err(|_| ())
        })
    });
    let mut skipping = false;
    let mut failed = None;
    while let Some(piece) = rx.recv().await {
        let (msg, checks) = match piece {
            Piece::Begin { badge_secret, .. } => {
                ((!store).then_some(ImportMsg::Begin { badge_secret }), 0)
            }
            Piece::Project(p) => {
                skipping = project.is_some_and(|wanted| wanted != p.name);
                let msg = (!skipping).then(|| {
                    sent.projects += 1;
                    if store {
                        ImportMsg::StoreProject(p)
                    } else {
                        ImportMsg::PlanProject(p)
                    }
                });
                (msg, 0)
            }
            Piece::Checks(part) => {
                let n = part.len();
                let msg = match (skipping, store) {
                    (true, _) => None,
                    (false, true) => Some(ImportMsg::StoreChecks(part)),
                    (false, false) => Some(ImportMsg::PlanChecks(part)),
                };
                (msg, n)
            }
        };
        if let Some(msg) = msg {
            let answer = link.send(msg).await;
            if answer.code != 0 {
                failed = Some(answer);
                break;
            }
            sent.checks += checks;
        }
        bar.set_position(if store {
            sent.checks as u64
        } else {
            read.load(Ordering::Relaxed)
        });
    }
    drop(rx);
    let read_result = reader.await;
    if failed.is_some() {
        return (sent, failed);
    }
    let failed = match read_result {
        Ok(Ok(())) => None,
        Ok(Err(ReadError::Dump(e))) => Some(AdminOutput::error(format!("{}: {e}", name.display()))),
        Ok(Err(ReadError::Stopped(()))) => Some(AdminOutput::error("the import stopped")),
        Err(e) => Some(AdminOutput::error(format!("reading the dump failed: {e}"))),
    };
    (sent, failed)
}
