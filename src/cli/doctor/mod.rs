//! `overdue doctor`: looks at what a running service depends on (the data directory and its
//! permissions, free disk, the clock, the public URL, the SMTP server, the listen address,
//! whether alerts reach anyone, and with `--database` a PostgreSQL database) and states each
//! problem in one plain sentence with its fix.
//! Exit code 0 when nothing is wrong (warnings allowed), 1 otherwise.
//!
//! When a service runs on the data directory, `doctor` checks the settings it runs with (asked
//! through the control socket, see [`settings`]), not the flags of the shell it was started
//! from; otherwise the flags and environment `serve` would read.
//!
//! The judgements are plain functions of gathered facts (unit-tested below); gathering the
//! facts is the only I/O.

pub(crate) mod database;
pub(crate) mod settings;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::cli::datadir::Place;
use std::time::Duration;

use clap::Args;
use jiff::Timestamp;

use crate::cli::admin::{AdminCommand, AdminOutput, count};
use crate::cli::control;
use crate::cli::health::local_address;
use crate::cli::protocol::Reply;
use crate::model::limits::{
    DOCTOR_CLOCK_SLACK_SECS, DOCTOR_MIN_FREE_BYTES, DOCTOR_NET_TIMEOUT_SECS,
};
use crate::service::DB_FILE;
use crate::service::Service;
use settings::Settings;

#[derive(Debug, Clone, Args)]
pub(crate) struct DoctorArgs {
    /// The address `serve` listens on.
    #[arg(
        long,
        env = "OVERDUE_LISTEN",
        default_value = crate::cli::serve::DEFAULT_LISTEN,
        value_name = "ADDR"
    )]
    pub listen: String,
    /// The SMTP server alerts go through (smtp://host:port or smtps://host:port).
    #[arg(
        long,
        env = "OVERDUE_SMTP_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    pub smtp_url: Option<String>,
    /// The From address of alert emails.
    #[arg(long, env = "OVERDUE_SMTP_FROM", value_name = "ADDRESS")]
    pub smtp_from: Option<String>,
    /// The public base URL `serve` is given [default: http:// + the listen address].
    #[arg(long, env = "OVERDUE_SITE_ROOT", value_name = "URL")]
    pub site_root: Option<String>,
}

/// One finding: fine (what was seen), a warning (works, but maybe not as meant) or a problem
/// (what is wrong and how to fix it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Finding {
    Ok(String),
    Warning(String),
    Problem(String),
}

/// What `doctor` knows about the data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DirFacts {
    pub(crate) path: PathBuf,
    /// `None`: the directory does not exist.
    pub(crate) mode: Option<u32>,
    pub(crate) is_dir: bool,
    pub(crate) owned_by_us: bool,
    pub(crate) writable: bool,
    /// Mode of the data file, if it exists.
    pub(crate) file_mode: Option<u32>,
    /// Whether this user may write the data file (`Err(reason)`), if it exists: an immutable
    /// file (`chattr +i`) is refused even to root.
    pub(crate) file_writable: Option<Result<(), String>>,
}

pub(crate) fn judge_dir(f: &DirFacts) -> Vec<Finding> {
    let d = f.path.display();
    let Some(mode) = f.mode else {
        return vec![Finding::Ok(format!(
            "{d} does not exist yet; `overdue serve` creates it with mode 0700"
        ))];
    };
    if !f.is_dir {
        return vec![Finding::Problem(format!(
            "{d} is not a directory; point --data (OVERDUE_DATA) at a directory"
        ))];
    }
    let mut out = Vec::new();
    if !f.writable {
        out.push(Finding::Problem(format!(
            "{d} is not writable by this user; run overdue as the directory's owner or \
             `chown` it to the user the service runs as"
        )));
    } else if !f.owned_by_us {
        out.push(Finding::Problem(format!(
            "{d} belongs to another user; `chown -R` it to the user the service runs as"
        )));
    }
    if mode & 0o077 != 0 {
        out.push(Finding::Problem(format!(
            "{d} is open to other users (mode {:o}) and holds key hashes; run `chmod 700 {d}`",
            mode & 0o777
        )));
    }
    if let Some(Err(why)) = &f.file_writable {
        out.push(Finding::Problem(format!(
            "{d}/{DB_FILE} is not writable ({why}), so the service cannot record pings; check \
             its owner and mode (`ls -l`) and whether it was made immutable (`lsattr`; \
             `chattr -i {d}/{DB_FILE}` undoes it)"
        )));
    }
    if let Some(fm) = f.file_mode.filter(|m| m & 0o077 != 0) {
        out.push(Finding::Problem(format!(
            "{d}/{DB_FILE} is readable by other users (mode {:o}); run `chmod 600 {d}/{DB_FILE}`",
            fm & 0o777
        )));
    }
    if out.is_empty() {
        out.push(Finding::Ok(format!(
            "{d} exists, is private (mode {:o}) and writable",
            mode & 0o777
        )));
    }
    out
}

pub(crate) fn judge_free_space(path: &Path, available: u64) -> Finding {
    let mib = available >> 20;
    if available < DOCTOR_MIN_FREE_BYTES {
        Finding::Problem(format!(
            "only {mib} MiB are free on the filesystem of {}; free some space or move the data \
             directory, since the service cannot record pings once the disk is full",
            path.display()
        ))
    } else {
        Finding::Ok(format!(
            "{mib} MiB free on the filesystem of {}",
            path.display()
        ))
    }
}

pub(crate) fn judge_clock(now: Timestamp, newest: Option<Timestamp>) -> Finding {
    let year = now.to_zoned(jiff::tz::TimeZone::UTC).year();
    if !(2024..=2200).contains(&year) {
        return Finding::Problem(format!(
            "the system clock says {now}, which cannot be right; set the time (e.g. enable NTP \
             with `timedatectl set-ntp true`), or checks go down at the wrong moments"
        ));
    }
    match newest {
        Some(newest) if newest.as_second() - now.as_second() > DOCTOR_CLOCK_SLACK_SECS => {
            Finding::Problem(format!(
                "the system clock ({now}) is behind the newest time in the data file ({newest}); \
                 the clock was set back or is wrong: fix it (enable NTP), or pings look late \
                 and checks go down at the wrong moments"
            ))
        }
        _ => Finding::Ok(format!(
            "the clock says {now}, consistent with the data file"
        )),
    }
}

/// Host, port and whether TLS starts at once (smtps) from an SMTP URL.
pub(crate) fn smtp_target(url: &str) -> Result<(String, u16, bool), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("{e}"))?;
    let implicit_tls = match parsed.scheme() {
        "smtps" => true,
        "smtp" => false,
        other => {
            return Err(format!(
                "unknown scheme {other:?} (use smtp:// or smtps://)"
            ));
        }
    };
    let host = parsed
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or("no host")?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = parsed.port().unwrap_or(if implicit_tls { 465 } else { 25 });
    Ok((host, port, implicit_tls))
}

/// Connects to the SMTP server and, for plain SMTP, reads its greeting.
fn probe_smtp(url: &str) -> Finding {
    let (host, port, tls) = match smtp_target(url) {
        Ok(t) => t,
        Err(e) => {
            return Finding::Problem(format!(
                "the SMTP URL is not valid ({e}); set OVERDUE_SMTP_URL like smtp://host:587"
            ));
        }
    };
    let timeout = Duration::from_secs(DOCTOR_NET_TIMEOUT_SECS);
    let unreachable = |why: String| {
        Finding::Problem(format!(
            "the SMTP server {host}:{port} cannot be reached ({why}); check the host and port in \
             OVERDUE_SMTP_URL and that a firewall lets this machine through, or email alerts \
             will not be delivered"
        ))
    };
    let addrs: Vec<SocketAddr> = match (host.as_str(), port).to_socket_addrs() {
        Ok(a) => a.collect(),
        Err(e) => return unreachable(format!("name lookup failed: {e}")),
    };
    let mut last = String::from("no address");
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(mut stream) => {
                if tls {
                    return Finding::Ok(format!(
                        "the SMTP server {host}:{port} accepts connections (TLS not tested)"
                    ));
                }
                let _ = stream.set_read_timeout(Some(timeout));
                let mut banner = String::new();
                let read = BufReader::new(&stream).read_line(&mut banner);
                let _ = stream.write_all(b"QUIT\r\n");
                return match read {
                    Ok(_) if banner.starts_with("220") => Finding::Ok(format!(
                        "the SMTP server {host}:{port} greets: {}",
                        banner.trim_end()
                    )),
                    Ok(_) => Finding::Problem(format!(
                        "{host}:{port} does not greet like an SMTP server ({:?}); check the port \
                         in OVERDUE_SMTP_URL (smtps:// for port 465)",
                        banner.trim_end()
                    )),
                    Err(e) => unreachable(format!("no greeting: {e}")),
                };
            }
            Err(e) => last = e.to_string(),
        }
    }
    unreachable(last)
}

/// Whether an overdue service answers on `addr`, else whether `addr` can be bound.
async fn probe_listen(addr: &str) -> Finding {
    crate::tls::install_provider();
    // A service on every address (0.0.0.0) answers on the loopback address.
    let asked = addr
        .parse()
        .map_or_else(|_| addr.to_string(), |a| local_address(a).to_string());
    let url = format!("http://{asked}/api/v3/status/");
    if let Ok(client) = reqwest::Client::builder()
        .timeout(Duration::from_secs(DOCTOR_NET_TIMEOUT_SECS))
        .build()
        && let Ok(r) = client.get(&url).send().await
    {
        let status = r.status().as_u16();
        let text = r.text().await.unwrap_or_default();
        if status == 200 && text == "OK" {
            return Finding::Ok(format!("a service answers {url}"));
        }
        if status == 503 && text.starts_with("standby: ") {
            return Finding::Ok(format!("a standby node answers {url}: {}", text.trim_end()));
        }
        if let Some(why) = text.strip_prefix("storage unavailable: ") {
            return Finding::Problem(format!(
                "the service at {addr} cannot write its data file, so pings and API writes \
                 answer 503: {why}"
            ));
        }
    }
    match std::net::TcpListener::bind(addr) {
        Ok(_) => Finding::Ok(format!("{addr} is free to listen on")),
        Err(e) => Finding::Problem(match e.kind() {
            std::io::ErrorKind::AddrInUse => format!(
                "{addr} is taken by another program that does not answer like overdue; stop it \
                 or choose another address with --listen (OVERDUE_LISTEN)"
            ),
            std::io::ErrorKind::PermissionDenied => format!(
                "this user may not listen on {addr} (ports below 1024 need a privilege); use a \
                 port above 1023 behind a reverse proxy, or grant CAP_NET_BIND_SERVICE"
            ),
            _ => format!(
                "cannot listen on {addr} ({e}); set --listen (OVERDUE_LISTEN) to an address of \
                 this machine such as 127.0.0.1:8000"
            ),
        }),
    }
}

fn dir_facts(path: &Path) -> DirFacts {
    let meta = std::fs::metadata(path).ok();
    let file = path.join(DB_FILE);
    let file_writable = file
        .exists()
        .then(|| crate::service::health::FileFacts::gather(&file).file_writable);
    let file_mode = std::fs::metadata(path.join(DB_FILE))
        .ok()
        .map(|m| m.permissions().mode());
    DirFacts {
        path: path.to_path_buf(),
        mode: meta.as_ref().map(|m| m.permissions().mode()),
        is_dir: meta.as_ref().is_some_and(std::fs::Metadata::is_dir),
        owned_by_us: meta
            .as_ref()
            .is_some_and(|m| m.uid() == rustix::process::geteuid().as_raw()),
        writable: rustix::fs::access(
            path,
            rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK,
        )
        .is_ok(),
        file_mode,
        file_writable,
    }
}

/// The nearest existing directory at or above `path` (for free space before it exists).
fn existing_ancestor(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    absolute
        .ancestors()
        .find(|p| p.exists())
        .unwrap_or(Path::new("/"))
        .to_path_buf()
}

/// The newest time the data file records (admin command, so it works while serving).
pub(crate) fn newest_time(service: &Service) -> Option<Timestamp> {
    service.read(|s| {
        let checks = s
            .all_checks()
            .flat_map(|c| [Some(c.created), c.last_ping, c.last_start])
            .flatten();
        let projects = s
            .projects()
            .into_iter()
            .map(|p| p.created)
            .collect::<Vec<_>>();
        checks.chain(projects).max()
    })
}

/// The settings `serve` would run with from `doctor`'s flags and environment, with the facts
/// of the data file (when there is one).
async fn settings_from_flags(place: &Place, args: &DoctorArgs) -> (Settings, Vec<Finding>) {
    let data = place.dir.as_path();
    let mut findings = Vec::new();
    let mut settings = Settings::default();
    if data.join(DB_FILE).exists() {
        match control::request(place, AdminCommand::Settings).await {
            Reply::Settings(facts) => settings = facts,
            other => findings.push(Finding::Problem(format!(
                "cannot read the data file: {}",
                message(&other.failure())
            ))),
        }
    }
    let site_root = match (&args.site_root, args.listen.parse()) {
        (Some(root), _) => root.clone(),
        (None, Ok(addr)) => crate::model::site_root::effective(addr, None).0,
        (None, Err(_)) => format!("http://{}", args.listen),
    };
    let settings = Settings {
        listen: Some(args.listen.clone()),
        site_root,
        smtp_url: args.smtp_url.clone(),
        smtp_from: args.smtp_from.clone(),
        ..settings
    };
    (settings, findings)
}

/// The settings of the service running on `data`, if one runs.
async fn settings_of_running(data: &Path) -> Option<Result<Settings, Finding>> {
    let reply = control::ask_running(data, AdminCommand::Settings).await?;
    Some(match reply {
        Reply::Settings(settings) => Ok(settings),
        other => Err(Finding::Problem(format!(
            "the service running on {} did not tell the settings it runs with ({}); if it is \
             an older version, restart it after upgrading",
            data.display(),
            message(&other.failure())
        ))),
    })
}

/// A failure's message without the `overdue: ` that starts it on its own.
fn message(output: &AdminOutput) -> String {
    output
        .stderr
        .trim()
        .trim_start_matches("overdue: ")
        .to_string()
}

/// Runs every check; the report and the exit code.
pub(crate) async fn run(place: &Place, database: Option<&str>, args: &DoctorArgs) -> AdminOutput {
    let data = place.dir.as_path();
    let mut findings = judge_dir(&dir_facts(data));
    let root = existing_ancestor(data);
    findings.push(match rustix::fs::statvfs(&root) {
        Ok(s) => judge_free_space(&root, s.f_bavail.saturating_mul(s.f_frsize)),
        Err(e) => Finding::Problem(format!(
            "cannot read the free space of {} ({e}); check that the path is mounted",
            root.display()
        )),
    });
    let settings = match settings_of_running(data).await {
        Some(Ok(settings)) => {
            findings.push(Finding::Ok(format!(
                "a service runs on {}; checking the settings it runs with, not this shell's",
                data.display()
            )));
            settings
        }
        Some(Err(problem)) => {
            findings.push(problem);
            let (settings, problems) = settings_from_flags(place, args).await;
            findings.extend(problems);
            settings
        }
        None => {
            let (settings, problems) = settings_from_flags(place, args).await;
            findings.extend(problems);
            settings
        }
    };
    let newest = if data.join(DB_FILE).exists() {
        match control::request(place, AdminCommand::NewestTime).await {
            Reply::NewestTime(newest) => newest,
            _ => None,
        }
    } else {
        None
    };
    findings.push(judge_clock(Timestamp::now(), newest));
    findings.push(settings::judge_site_root(&settings.site_root));
    findings.push(match &settings.smtp_url {
        Some(url) => {
            let url = url.clone();
            tokio::task::spawn_blocking(move || probe_smtp(&url))
                .await
                .unwrap_or_else(|e| Finding::Problem(format!("the SMTP probe failed: {e}")))
        }
        None => {
            Finding::Ok("no SMTP server configured (OVERDUE_SMTP_URL); email alerts are off".into())
        }
    });
    findings.extend(settings::judge_alerts(&settings));
    if let Some(listen) = &settings.listen {
        findings.push(probe_listen(listen).await);
    }
    if let Some(url) = database {
        findings.extend(database::check(url).await);
    }
    render(&findings)
}

pub(crate) fn render(findings: &[Finding]) -> AdminOutput {
    let mut out = String::new();
    let (mut problems, mut warnings) = (0, 0);
    for f in findings {
        match f {
            Finding::Ok(s) => out.push_str(&format!("ok       {s}\n")),
            Finding::Warning(s) => {
                warnings += 1;
                out.push_str(&format!("warning  {s}\n"));
            }
            Finding::Problem(s) => {
                problems += 1;
                out.push_str(&format!("PROBLEM  {s}\n"));
            }
        }
    }
    let warned = match warnings {
        0 => String::new(),
        n => format!(", {}", count(n, "warning")),
    };
    if problems == 0 {
        out.push_str(&format!("no problems found{warned}\n"));
        AdminOutput::ok(out)
    } else {
        out.push_str(&format!("{} found{warned}\n", count(problems, "problem")));
        AdminOutput {
            stdout: out,
            stderr: String::new(),
            code: 1,
        }
    }
}

#[cfg(test)]
#[allow(
    clippy::unreadable_literal,
    reason = "file modes read as st_mode octal, ungrouped"
)]
mod tests {
    use super::*;

    fn facts() -> DirFacts {
        DirFacts {
            path: PathBuf::from("/var/lib/overdue"),
            mode: Some(0o40700),
            is_dir: true,
            owned_by_us: true,
            writable: true,
            file_mode: Some(0o100600),
            file_writable: Some(Ok(())),
        }
    }

    fn problems(f: &[Finding]) -> Vec<&str> {
        f.iter()
            .filter_map(|f| match f {
                Finding::Problem(s) => Some(s.as_str()),
                Finding::Ok(_) | Finding::Warning(_) => None,
            })
            .collect()
    }

    #[test]
    fn a_private_writable_directory_is_fine_and_open_modes_are_problems() {
        assert!(problems(&judge_dir(&facts())).is_empty());
        let open = DirFacts {
            mode: Some(0o40755),
            file_mode: Some(0o100644),
            ..facts()
        };
        let found = judge_dir(&open);
        let p = problems(&found);
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].contains("chmod 700") && p[1].contains("chmod 600"));
        let foreign = DirFacts {
            writable: false,
            ..facts()
        };
        assert!(problems(&judge_dir(&foreign))[0].contains("not writable"));
        let immutable = DirFacts {
            file_writable: Some(Err("Operation not permitted".into())),
            ..facts()
        };
        let found = judge_dir(&immutable);
        let p = problems(&found);
        assert!(p.len() == 1 && p[0].contains("chattr -i"), "{p:?}");
        let missing = DirFacts {
            mode: None,
            ..facts()
        };
        assert!(problems(&judge_dir(&missing)).is_empty());
    }

    #[test]
    fn free_space_clock_and_smtp_urls() {
        let p = Path::new("/data");
        assert!(matches!(judge_free_space(p, 10 << 20), Finding::Problem(_)));
        assert!(matches!(judge_free_space(p, 10 << 30), Finding::Ok(_)));
        let now: Timestamp = "2026-06-01T00:00:00Z".parse().expect("ts");
        assert!(matches!(judge_clock(now, None), Finding::Ok(_)));
        let later: Timestamp = "2026-06-01T01:00:00Z".parse().expect("ts");
        assert!(matches!(judge_clock(now, Some(later)), Finding::Problem(_)));
        let slightly: Timestamp = "2026-06-01T00:01:00Z".parse().expect("ts");
        assert!(matches!(judge_clock(now, Some(slightly)), Finding::Ok(_)));
        let epoch: Timestamp = "1970-01-01T00:00:00Z".parse().expect("ts");
        assert!(matches!(judge_clock(epoch, None), Finding::Problem(_)));
        assert_eq!(
            smtp_target("smtp://u:p@mail.example.org:587").expect("ok"),
            ("mail.example.org".into(), 587, false)
        );
        assert_eq!(
            smtp_target("smtps://mx").expect("ok"),
            ("mx".into(), 465, true)
        );
        assert!(smtp_target("http://mx").is_err());
    }
}
