//! The `overdue` command line: `serve` and the admin subcommands. Admin commands run through
//! the control socket when the service is up, or open the data file themselves when it is
//! not; both paths run the same code ([`admin::execute`]) and print the same output.

pub mod admin;
pub(crate) mod channel;
pub(crate) mod channel_args;
pub(crate) mod check;
pub(crate) mod confirm;
pub(crate) mod control;
pub(crate) mod data;
pub(crate) mod datadir;
pub(crate) mod docs;
pub(crate) mod doctor;
pub(crate) mod health;
pub(crate) mod migrate;
pub(crate) mod progress;
pub mod protocol;
pub(crate) mod schedule;
pub(crate) mod serve;
pub(crate) mod session;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use admin::{AdminCommand, AdminOutput, CheckCmd, KeyCmd, ProjectCmd};
pub use channel::{ChannelAddArgs, ChannelCmd};

/// A self-hosted dead-man's-switch monitor, compatible with the Healthchecks.io APIs.
#[derive(Debug, Parser)]
#[command(name = "overdue", version, about, propagate_version = true)]
pub struct Cli {
    /// Data directory: the data file overdue.redb and the control socket (only the socket
    /// with --database).
    ///
    /// Without it: ./overdue-data if it exists; else, for commands other than `serve`,
    /// /var/lib/overdue (the packaged service's) when it holds a data file or a control
    /// socket; else ./overdue-data. Only `serve` and `import` create a data file: other
    /// commands on a directory without one exit 2.
    #[arg(long, global = true, env = "OVERDUE_DATA", value_name = "DIR")]
    pub(crate) data: Option<PathBuf>,

    /// PostgreSQL instead of the data file: `postgres://user:password@host/dbname` (libpq's
    /// URL; add ?sslmode=require or verify-full for TLS). The data directory then holds only
    /// the control socket. `serve` creates the tables; other commands go through the
    /// control socket of the node running beside them, or straight to the database.
    #[arg(
        long,
        global = true,
        env = "OVERDUE_DATABASE",
        value_name = "URL",
        hide_env_values = true
    )]
    pub(crate) database: Option<String>,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run the service: HTTP APIs, deadlines, the control socket.
    Serve(serve::ServeArgs),
    /// Manage projects.
    #[command(subcommand)]
    Project(ProjectCmd),
    /// Manage a project's API keys.
    #[command(subcommand)]
    Key(KeyCmd),
    /// Manage a project's integrations.
    #[command(subcommand)]
    Channel(ChannelCmd),
    /// Manage a project's checks.
    #[command(subcommand)]
    Check(CheckCmd),
    /// Print the next fire times of a cron or OnCalendar expression.
    Schedule(schedule::ScheduleArgs),
    /// Write a consistent copy of the data file, also while the service runs.
    Backup(data::BackupArgs),
    /// Print projects, API keys (hashes), channels and checks as JSON, for `import`.
    Export(data::ExportArgs),
    /// Import an export, or copy the checks of a running Healthchecks instance.
    Import(data::ImportArgs),
    /// Check the data directory, free disk, clock, SMTP server and listen address.
    Doctor(doctor::DoctorArgs),
    /// Exit 0 when the service on the listen address answers its status page (for container
    /// health checks and monitors), 1 otherwise.
    Health(health::HealthArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(docs::CompletionsArgs),
    /// Print the manual page (roff), or write every page into a directory.
    Man(docs::ManArgs),
}

/// glibc keeps freed large blocks (argon2's 19 MiB) in its heap once its adaptive mmap
/// threshold has grown; pinning the threshold returns them to the system, so the service idles
/// small after hashing keys.
fn return_large_frees_to_the_system() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; it is called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Parses the command line and runs it; the process's exit code.
pub fn main() -> ExitCode {
    return_large_frees_to_the_system();
    let cli = Cli::parse();
    if let Command::Schedule(args) = &cli.command {
        let (out, code) = schedule::run(args, jiff::Timestamp::now());
        if code == 0 {
            print!("{out}");
        } else {
            eprint!("{out}");
        }
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let generated = match &cli.command {
        Command::Completions(args) => Some(docs::run_completions(args)),
        Command::Man(args) => Some(docs::run_man(args)),
        Command::Health(args) => return finish(&health::run(args)),
        _ => None,
    };
    if let Some(result) = generated {
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("overdue: {}", error_chain(&e));
                ExitCode::from(1)
            }
        };
    }
    let purpose = match cli.command {
        Command::Serve(_) => datadir::Purpose::Serve,
        _ => datadir::Purpose::Admin,
    };
    let data = datadir::choose(cli.data.as_deref(), purpose);
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Command::Serve(args) = &cli.command {
        let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        builder.worker_threads(args.worker_threads(cpus));
    }
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("overdue: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    // doctor judges the database URL itself (a bad one is one of its findings); every other
    // command needs a usable one.
    let database = match &cli.command {
        Command::Doctor(_) => None,
        _ => match cli.database.as_deref().map(str::parse).transpose() {
            Ok(db) => db,
            Err(e) => {
                eprintln!("overdue: --database: {e}");
                return ExitCode::from(2);
            }
        },
    };
    let data = datadir::Place {
        dir: data,
        database,
    };
    let admin = match cli.command {
        Command::Serve(args) => {
            return match runtime.block_on(serve::run(data, args)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("overdue: {}", error_chain(&e));
                    ExitCode::from(1)
                }
            };
        }
        Command::Project(c) => AdminCommand::Project(c),
        Command::Key(c) => AdminCommand::Key(c),
        Command::Channel(ChannelCmd::Add(mut a)) => {
            if let Err(e) = a.resolve_secrets() {
                eprintln!("overdue: {e}");
                return ExitCode::from(1);
            }
            AdminCommand::Channel(ChannelCmd::Add(a))
        }
        Command::Channel(c) => AdminCommand::Channel(c),
        Command::Check(c) => AdminCommand::Check(c),
        Command::Schedule(_) | Command::Completions(_) | Command::Man(_) | Command::Health(_) => {
            return ExitCode::SUCCESS;
        }
        Command::Backup(args) => match data::backup_command(&args) {
            Ok(cmd) => return finish(&runtime.block_on(data::run_backup(&data, cmd))),
            Err(e) => return finish(&AdminOutput::error(e)),
        },
        Command::Export(args) => {
            let output = args.output.as_deref();
            return finish(&runtime.block_on(data::export(&data, args.project, output)));
        }
        Command::Import(args) => {
            return finish(&match (&args.from_healthchecks, &args.file) {
                (Some(url), _) => {
                    let key = args.api_key.clone().unwrap_or_default();
                    runtime.block_on(migrate::migrate(
                        &data,
                        url,
                        &key,
                        args.project,
                        args.ping_key,
                    ))
                }
                (None, Some(file)) => {
                    runtime.block_on(data::import(&data, file, args.project.as_deref()))
                }
                (None, None) => AdminOutput::error("import needs FILE or --from-healthchecks URL"),
            });
        }
        Command::Doctor(args) => {
            let url = cli.database.as_deref();
            return finish(&runtime.block_on(doctor::run(&data, url, &args)));
        }
    };
    if let Err(refused) = runtime.block_on(confirm::confirm(&data, &admin)) {
        return finish(&refused);
    }
    finish(&runtime.block_on(control::run_admin(&data, admin)))
}

/// An error and its causes on one line, each said once. `{:#}` would add every source's
/// text after the error's own, and errors whose message already includes their source (an
/// I/O error's "Permission denied", say) would then say it twice.
fn error_chain(e: &anyhow::Error) -> String {
    crate::error_line::error_line(e.as_ref())
}

/// Prints a command's output and turns its code into the process's exit code. Colours in the
/// output are kept only on a terminal, without `NO_COLOR` (anstream strips them otherwise).
fn finish(output: &AdminOutput) -> ExitCode {
    anstream::print!("{}", output.stdout);
    eprint!("{}", output.stderr);
    ExitCode::from(u8::try_from(output.code).unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot open /d/overdue.redb: {source}")]
    struct Repeats {
        source: std::io::Error,
    }

    #[test]
    fn a_cause_the_message_already_says_is_not_repeated() {
        let io = std::io::Error::from_raw_os_error(libc::EACCES);
        let e = anyhow::Error::new(Repeats { source: io });
        assert_eq!(format!("{e:#}").matches("Permission denied").count(), 2);
        assert_eq!(
            error_chain(&e),
            "cannot open /d/overdue.redb: Permission denied (os error 13)"
        );
        let e = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_chain(&e), "outer: inner");
    }
}
