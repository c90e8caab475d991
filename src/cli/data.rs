//! `overdue backup`, `overdue export` and `overdue import` (a dump, or checks migrated from a
//! running Healthchecks instance: `cli::migrate`). Backup, export and import run inside the
//! service through the control socket while it serves, or on the file when it is stopped,
//! with the same output. Export and import pass the dump in parts ([`crate::cli::session`]),
//! so memory stays bounded whatever its size; progress shows on stderr when it is a terminal.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use clap::Args;

use crate::cli::admin::{AdminCommand, AdminOutput, count};
use crate::cli::control::{self, Patience};
use crate::cli::datadir::Place;
use crate::cli::progress;
use crate::cli::session::{ExportPiece, ImportMsg, Link, counts};
use crate::service::transfer::{Counts, PART};
use crate::service::{Service, ServiceError};
use crate::transfer::dump_stream::{DumpWriter, Piece, ReadError, read_dump};

#[derive(Debug, Clone, Args)]
pub(crate) struct BackupArgs {
    /// Where to write the copy (written as FILE.tmp, then renamed). While the service runs,
    /// the service process writes it, so it must be a path the service may write.
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,
    /// Replace FILE if it exists; without it an existing FILE is refused and left as it is.
    #[arg(long)]
    pub(crate) force: bool,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct ExportArgs {
    /// Export only this project (default: every project).
    #[arg(long, value_name = "NAME")]
    pub project: Option<String>,
    /// Write the export to FILE instead of standard output. It holds API key hashes and the
    /// badge secret, so FILE is created with mode 0600 whatever the umask (written as
    /// FILE.tmp, then renamed over FILE).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct ImportArgs {
    /// A file written by `overdue export` (`-` reads standard input).
    #[arg(
        value_name = "FILE",
        required_unless_present = "from_healthchecks",
        conflicts_with = "from_healthchecks"
    )]
    pub(crate) file: Option<PathBuf>,
    /// Base URL of a Healthchecks instance (e.g. https://healthchecks.io) to copy checks from.
    #[arg(long, value_name = "URL", requires = "api_key")]
    #[allow(
        clippy::doc_markdown,
        reason = "clap prints this as --help text, verbatim"
    )]
    pub(crate) from_healthchecks: Option<String>,
    /// Read-write API key of the Healthchecks project to copy.
    #[arg(
        long,
        env = "OVERDUE_HC_API_KEY",
        value_name = "KEY",
        hide_env_values = true
    )]
    pub(crate) api_key: Option<String>,
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

/// `backup`, inside the service: the service's view of the filesystem is the one that counts
/// (a unit's private /tmp differs from the caller's).
pub(crate) async fn backup(service: &Service, path: PathBuf, force: bool) -> Outcome {
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

/// The backup command with its path made absolute: the service may run elsewhere.
pub(crate) fn backup_command(args: &BackupArgs) -> Result<AdminCommand, String> {
    let path = std::path::absolute(&args.file)
        .map_err(|e| format!("cannot resolve {}: {e}", args.file.display()))?;
    Ok(AdminCommand::Backup {
        path,
        force: args.force,
    })
}

/// Runs a backup, with a spinner counting the bytes of `FILE.tmp` as it grows (whoever
/// writes it, this process or the service).
pub(crate) async fn run_backup(data: &Place, cmd: AdminCommand) -> AdminOutput {
    let tmp = match &cmd {
        AdminCommand::Backup { path, .. } if progress::shown() => {
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

/// `export`: the dump of one project or all, written as its parts arrive to standard output,
/// or with `output` to that file, created 0600 (the export holds key hashes and the badge
/// secret, and the shell's umask would leave it readable to others), through `FILE.tmp`.
pub(crate) async fn export(
    data: &Place,
    project: Option<String>,
    output: Option<&Path>,
) -> AdminOutput {
    let endpoint = match control::open(data, session_patience(), false).await {
        Ok(e) => e,
        Err(output) => return output,
    };
    let (link, header) = Link::export(endpoint, project).await;
    let Some(mut link) = link else {
        return failed_piece(header);
    };
    let result = match output {
        None => write_export(&mut link, header, std::io::stdout())
            .await
            .map(|_| AdminOutput::ok(String::new())),
        Some(file) => export_to_file(&mut link, header, file).await,
    };
    link.close().await;
    result.unwrap_or_else(|e| e)
}

/// `export --output FILE`: says what the file holds instead of printing it.
async fn export_to_file(
    link: &mut Link,
    header: ExportPiece,
    file: &Path,
) -> Result<AdminOutput, AdminOutput> {
    let cannot =
        |e: std::io::Error| AdminOutput::error(format!("cannot write {}: {e}", file.display()));
    let mut tmp = file.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(cannot(e)),
    }
    let private = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(cannot)?;
    let written = match write_export(link, header, &private).await {
        Ok(c) => private
            .sync_all()
            .and_then(|()| std::fs::rename(&tmp, file))
            .map(|()| c)
            .map_err(cannot),
        Err(e) => Err(e),
    };
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    let c = written?;
    Ok(AdminOutput::ok(format!(
        "exported {} to {} (mode 0600)\n",
        counts(c),
        file.display()
    )))
}

fn failed_piece(piece: ExportPiece) -> AdminOutput {
    match piece {
        ExportPiece::Failed(output) => output,
        _ => AdminOutput::error("the service answered the export out of order"),
    }
}

/// Writes the pieces of an export session to `out`; what it held.
async fn write_export(
    link: &mut Link,
    header: ExportPiece,
    out: impl Write,
) -> Result<Counts, AdminOutput> {
    let ExportPiece::Header {
        exported_at,
        badge_secret,
        checks,
    } = header
    else {
        return Err(failed_piece(header));
    };
    let mut held = Counts::default();
    let cannot = |e: std::io::Error| AdminOutput::error(format!("cannot write the export: {e}"));
    let out = std::io::BufWriter::with_capacity(256 << 10, out);
    let mut writer = DumpWriter::begin(out, &exported_at, &badge_secret).map_err(cannot)?;
    let bar = progress::checks(checks as u64, "exporting");
    loop {
        let written = match link.next().await {
            ExportPiece::Project(p) => {
                held.projects += 1;
                held.keys += p.api_keys.len();
                held.channels += p.channels.len();
                writer.project(&p)
            }
            ExportPiece::Checks(part) => {
                bar.inc(part.len() as u64);
                held.checks += part.len();
                part.iter().try_for_each(|c| writer.check(c))
            }
            ExportPiece::End => break,
            other => {
                bar.abandon();
                return Err(failed_piece(other));
            }
        };
        if let Err(e) = written {
            bar.abandon();
            return Err(cannot(e));
        }
    }
    bar.finish_and_clear();
    writer.finish().map_err(cannot)?;
    Ok(held)
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
pub(crate) async fn import(data: &Place, file: &Path, project: Option<&str>) -> AdminOutput {
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
    let endpoint = match control::open(data, session_patience(), true).await {
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
