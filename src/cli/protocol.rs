//! The control socket's wire format: what a command-line process sends the running service
//! ([`Request`]: a protocol version and a [`Command`]) and what it answers ([`Reply`]), one
//! JSON line each way. These types are the protocol and nothing else: the clap structs of the
//! command line are converted to and from them ([`Command::from`], [`Command::into_admin`]),
//! so a renamed flag does not change the wire, and results that a caller uses as data
//! (`doctor`'s settings, the newest time, what `project rm` would delete, the outcome of each
//! migrated check, the pieces of an export) travel typed instead of as text to parse back.
//!
//! [`PROTOCOL_VERSION`] must be bumped by any change that an older or newer peer would read
//! differently: a variant or field added, removed or renamed in [`Command`], [`Reply`] or a
//! type they carry ([`ChannelSpec`], [`CheckSpec`], [`Contents`], [`Migrated`], the session
//! messages `ImportMsg` and `ExportPiece`, `AdminOutput`, doctor's `Settings`, the dump's
//! `DumpProject`/`DumpCheck`, a migration's `ForeignCheck`), or a change of what a command
//! means. Two things never change shape, so that any two releases can tell each other they
//! differ: the envelope's `version` field and [`Reply::VersionMismatch`]. Protocol 1 is the
//! unversioned one of earlier releases (the clap structs as JSON, answered with a bare
//! `AdminOutput`); the service answers it, or anything else without a version, with a bare
//! `AdminOutput` line that such a client prints, and a client that gets a bare `AdminOutput`
//! back knows the service speaks protocol 1.

use serde::{Deserialize, Serialize};

use crate::cli::admin::{AdminCommand, AdminOutput, KeyCmd, ProjectCmd, count};
use crate::cli::channel::{ChannelAddArgs, ChannelCmd};
use crate::cli::check::{CheckAddArgs, CheckCmd};
use crate::cli::doctor::settings::Settings;
use crate::cli::session::{ExportPiece, ImportMsg};
use crate::transfer::healthchecks::ForeignCheck;

/// The protocol this build speaks (see the module documentation for when it changes).
pub const PROTOCOL_VERSION: u32 = 4;

/// The protocol of releases that sent no version.
pub(crate) const UNVERSIONED: u32 = 1;

/// One request line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Request {
    pub(crate) version: u32,
    pub(crate) command: Command,
}

impl Request {
    pub(crate) fn new(command: Command) -> Request {
        Request {
            version: PROTOCOL_VERSION,
            command,
        }
    }
}

/// What a request asks of the service.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Command {
    ProjectAdd {
        name: String,
        json: bool,
    },
    ProjectLs {
        json: bool,
    },
    ProjectQuiet {
        project: Option<String>,
        schedule: Option<String>,
        tz: Option<String>,
        duration: Option<String>,
        off: bool,
    },
    /// The client has confirmed it (`cli::confirm`).
    ProjectRm {
        name: String,
    },
    /// What removing a project would remove; changes nothing. Answered with
    /// [`Reply::ProjectContents`].
    ProjectContents {
        name: String,
    },
    KeyAdd {
        project: Option<String>,
        read_only: bool,
        label: String,
        json: bool,
    },
    KeyLs {
        project: Option<String>,
        json: bool,
    },
    KeyRm {
        project: Option<String>,
        prefix: String,
    },
    ChannelAdd(Box<ChannelSpec>),
    ChannelLs {
        project: Option<String>,
        json: bool,
    },
    ChannelDefault {
        project: Option<String>,
        ident: String,
        off: bool,
    },
    ChannelRm {
        project: Option<String>,
        ident: String,
    },
    ChannelTest {
        project: Option<String>,
        ident: String,
    },
    CheckAdd(Box<CheckSpec>),
    CheckLs {
        project: Option<String>,
        json: bool,
    },
    CheckShow {
        project: Option<String>,
        check: String,
        json: bool,
    },
    CheckPause {
        project: Option<String>,
        check: String,
    },
    CheckResume {
        project: Option<String>,
        check: String,
    },
    CheckRm {
        project: Option<String>,
        check: String,
    },
    CheckSnooze {
        names: Vec<String>,
        for_: Option<String>,
        until: Option<String>,
        end: bool,
        tag: Option<String>,
        all: bool,
    },
    /// Copy the data file to this absolute path.
    Backup {
        path: std::path::PathBuf,
        force: bool,
    },
    /// Prepare a migration (answered with text: the keys of a project created for it).
    MigrateStart {
        project: Option<String>,
        ping_key: Option<String>,
    },
    /// One batch of a migration, answered with [`Reply::Migrated`].
    Migrate {
        project: Option<String>,
        checks: Vec<ForeignCheck>,
    },
    /// Answered with [`Reply::NewestTime`].
    NewestTime,
    /// Answered with [`Reply::Settings`].
    Settings,
    /// Opens an import session; its messages follow as [`Command::Import`].
    ImportParts,
    /// A message of an import session.
    Import(ImportMsg),
    /// Opens an export session, answered with its header ([`Reply::Export`]).
    ExportParts {
        project: Option<String>,
    },
    /// The next piece of an export session.
    ExportNext,
}

/// `channel add` as it travels: the flags, with the token already read from `--token-file`
/// or `--token-env` by the command-line process.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ChannelSpec {
    pub project: Option<String>,
    pub kind: String,
    pub name: String,
    pub value: Option<String>,
    pub url: Option<String>,
    pub url_down: Option<String>,
    pub url_up: Option<String>,
    pub method: Option<String>,
    pub body: Option<String>,
    pub body_down: Option<String>,
    pub body_up: Option<String>,
    pub headers: Vec<String>,
    pub topic: Option<String>,
    pub priority: Option<String>,
    pub token: Option<String>,
    pub chat: Option<String>,
    pub user: Option<String>,
    pub room: Option<String>,
    pub cmd_down: Option<String>,
    pub cmd_up: Option<String>,
    pub repeat: Option<String>,
    #[serde(default)]
    pub events: Option<String>,
    pub no_assign: bool,
    pub no_default: bool,
    pub json: bool,
}

/// `check add` as it travels.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CheckSpec {
    pub project: Option<String>,
    pub name: Option<String>,
    pub slug: Option<String>,
    pub tags: Option<String>,
    pub desc: Option<String>,
    pub timeout: Option<String>,
    pub grace: Option<String>,
    pub schedule: Option<String>,
    pub tz: Option<String>,
    pub manual_resume: bool,
    pub methods: Option<String>,
    pub channels: Option<String>,
    pub start_kw: Option<String>,
    pub success_kw: Option<String>,
    pub failure_kw: Option<String>,
    pub filter_subject: bool,
    pub filter_body: bool,
    pub filter_http_body: bool,
    pub filter_default_fail: bool,
    pub fail_threshold: Option<String>,
    pub max_duration: Option<String>,
    pub min_duration: Option<String>,
    pub quiet_schedule: Option<String>,
    pub quiet_tz: Option<String>,
    pub quiet_duration: Option<String>,
    pub parents: Option<String>,
    #[serde(default)]
    pub channel_events: Vec<String>,
    pub json: bool,
}

/// What the service answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum Reply {
    /// What a command prints and its exit code; also every refusal and failure.
    Output(AdminOutput),
    Settings(Settings),
    /// The newest time the data file records, if any.
    NewestTime(#[serde(with = "opt_time")] Option<jiff::Timestamp>),
    ProjectContents(Contents),
    /// The outcome of each check of a migration batch, in order.
    Migrated(Vec<Migrated>),
    /// A piece of an export session.
    Export(ExportPiece),
    /// The request's protocol is not the service's: nothing was run.
    VersionMismatch {
        service: u32,
        client: u32,
        /// The service's release (its crate version).
        service_version: String,
    },
}

/// A project and what removing it removes along with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Contents {
    pub name: String,
    pub checks: usize,
    pub channels: usize,
    pub(crate) keys: usize,
}

impl Contents {
    /// `project NAME with 2 checks, 1 channel and 1 API key`.
    pub(crate) fn describe(&self) -> String {
        format!(
            "project {} with {}, {} and {}",
            self.name,
            count(self.checks, "check"),
            count(self.channels, "channel"),
            count(self.keys, "API key")
        )
    }
}

/// One check of a migration batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Migrated {
    pub uuid: uuid::Uuid,
    pub name: String,
    pub(crate) outcome: MigratedOutcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum MigratedOutcome {
    Created {
        /// `(kind, name)` of each integration that found no channel here.
        unmapped: Vec<(String, String)>,
        /// The check's badge URL changed.
        new_badge_key: bool,
    },
    /// Already here; left as it is.
    Present,
    Refused(String),
}

/// The line the service writes back when a request is not one it runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Refusal {
    /// A reply of this protocol (another version, or a request it cannot read).
    Reply(Box<Reply>),
    /// A bare `AdminOutput`, the only answer a client of protocol 1 understands.
    Unversioned(AdminOutput),
}

impl Refusal {
    /// The refusal as a reply of this protocol (inside a session, whose client speaks it).
    pub(crate) fn into_reply(self) -> Reply {
        match self {
            Refusal::Reply(reply) => *reply,
            Refusal::Unversioned(output) => Reply::Output(output),
        }
    }
}

/// Only the version, whatever else the line holds.
#[derive(Deserialize)]
struct Envelope {
    version: u32,
}

/// Reads a request line: the command, or what to answer instead. The version is read first,
/// on its own, so that a client of another protocol is told so even when its command would
/// not parse here.
pub(crate) fn read_request(line: &str) -> Result<Command, Refusal> {
    let Ok(Envelope { version }) = serde_json::from_str::<Envelope>(line) else {
        return Err(Refusal::Unversioned(AdminOutput::error(format!(
            "the running service (overdue {}, protocol {PROTOCOL_VERSION}) cannot read this \
             command: it comes from an earlier overdue; use the overdue binary that matches \
             the service, or restart the service after an upgrade \
             (sudo systemctl restart overdue)",
            env!("CARGO_PKG_VERSION")
        ))));
    };
    if version != PROTOCOL_VERSION {
        return Err(Refusal::Reply(Box::new(Reply::VersionMismatch {
            service: PROTOCOL_VERSION,
            client: version,
            service_version: env!("CARGO_PKG_VERSION").to_string(),
        })));
    }
    serde_json::from_str::<Request>(line)
        .map(|r| r.command)
        .map_err(|e| Refusal::Reply(Box::new(Reply::Output(AdminOutput::error(bad_request(e))))))
}

pub(crate) fn bad_request(e: impl std::fmt::Display) -> String {
    format!("bad control request: {e}")
}

/// What a client says when the service speaks another protocol; `service_version` is `None`
/// for a service of protocol 1, which does not tell its release.
pub(crate) fn mismatch_message(service: u32, service_version: Option<&str>) -> String {
    let release = service_version.unwrap_or("an earlier release");
    format!(
        "this overdue ({}, protocol {PROTOCOL_VERSION}) cannot talk to the running service \
         ({release}, protocol {service}): restart the service after an upgrade \
         (sudo systemctl restart overdue), or use the matching binary",
        env!("CARGO_PKG_VERSION")
    )
}

impl Reply {
    /// The reply of a command answered with text; any other reply is a failure (see
    /// [`Reply::failure`]).
    pub(crate) fn output(self) -> AdminOutput {
        match self {
            Reply::Output(output) => output,
            other => other.failure(),
        }
    }

    /// What to print for a reply that is not the one the command expects: a refusal or
    /// failure as the service worded it, a version mismatch, or a garbled answer.
    pub(crate) fn failure(self) -> AdminOutput {
        match self {
            Reply::Output(output) if output.code != 0 => output,
            Reply::VersionMismatch {
                service,
                service_version,
                ..
            } => AdminOutput::error(mismatch_message(service, Some(&service_version))),
            other => AdminOutput::error(format!(
                "the service's answer is not what the command expects: {}",
                other.kind()
            )),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Reply::Output(_) => "output",
            Reply::Settings(_) => "settings",
            Reply::NewestTime(_) => "newest time",
            Reply::ProjectContents(_) => "project contents",
            Reply::Migrated(_) => "migrated checks",
            Reply::Export(_) => "export piece",
            Reply::VersionMismatch { .. } => "version mismatch",
        }
    }

    /// Any reply as text, for callers that print whatever the command answers
    /// (`admin::execute`).
    pub(crate) fn text(self) -> AdminOutput {
        let line = |v: String| AdminOutput::ok(format!("{v}\n"));
        match self {
            Reply::Output(output) => output,
            Reply::Settings(s) => line(serde_json::to_string(&s).unwrap_or_default()),
            Reply::NewestTime(t) => {
                AdminOutput::ok(t.map(|t| format!("{t}\n")).unwrap_or_default())
            }
            Reply::ProjectContents(c) => line(c.describe()),
            Reply::Migrated(list) => line(serde_json::to_string(&list).unwrap_or_default()),
            Reply::Export(ExportPiece::Failed(output)) => output,
            other => other.failure(),
        }
    }
}

/// A timestamp as RFC 3339 text (jiff is built without serde).
mod opt_time {
    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(clippy::ref_option, reason = "the signature serde's `with` calls")]
    pub(super) fn serialize<S: Serializer>(
        t: &Option<jiff::Timestamp>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_some(&t.to_string()),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<jiff::Timestamp>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|t| t.parse().map_err(serde::de::Error::custom))
            .transpose()
    }
}

impl From<AdminCommand> for Command {
    fn from(cmd: AdminCommand) -> Command {
        match cmd {
            AdminCommand::Project(c) => match c {
                ProjectCmd::Add { name, json } => Command::ProjectAdd { name, json },
                ProjectCmd::Ls { json } => Command::ProjectLs { json },
                ProjectCmd::Quiet {
                    project,
                    schedule,
                    tz,
                    duration,
                    off,
                } => Command::ProjectQuiet {
                    project,
                    schedule,
                    tz,
                    duration,
                    off,
                },
                ProjectCmd::Rm { name, yes: _ } => Command::ProjectRm { name },
            },
            AdminCommand::Key(c) => match c {
                KeyCmd::Add {
                    project,
                    read_only,
                    label,
                    json,
                } => Command::KeyAdd {
                    project,
                    read_only,
                    label,
                    json,
                },
                KeyCmd::Ls { project, json } => Command::KeyLs { project, json },
                KeyCmd::Rm { project, prefix } => Command::KeyRm { project, prefix },
            },
            AdminCommand::Channel(c) => match c {
                ChannelCmd::Add(a) => Command::ChannelAdd(Box::new(ChannelSpec::from(*a))),
                ChannelCmd::Ls { project, json } => Command::ChannelLs { project, json },
                ChannelCmd::Default {
                    project,
                    ident,
                    off,
                } => Command::ChannelDefault {
                    project,
                    ident,
                    off,
                },
                ChannelCmd::Rm { project, ident } => Command::ChannelRm { project, ident },
                ChannelCmd::Test { project, ident } => Command::ChannelTest { project, ident },
            },
            AdminCommand::Check(c) => match c {
                CheckCmd::Add(a) => Command::CheckAdd(Box::new(CheckSpec::from(*a))),
                CheckCmd::Ls { project, json } => Command::CheckLs { project, json },
                CheckCmd::Show {
                    project,
                    check,
                    json,
                } => Command::CheckShow {
                    project,
                    check,
                    json,
                },
                CheckCmd::Pause { project, check } => Command::CheckPause { project, check },
                CheckCmd::Resume { project, check } => Command::CheckResume { project, check },
                CheckCmd::Rm { project, check } => Command::CheckRm { project, check },
                CheckCmd::Snooze(a) => Command::CheckSnooze {
                    names: a.names,
                    for_: a.for_,
                    until: a.until,
                    end: a.end,
                    tag: a.tag,
                    all: a.all,
                },
            },
            AdminCommand::Backup { path, force } => Command::Backup { path, force },
            AdminCommand::ExportParts { project } => Command::ExportParts { project },
            AdminCommand::ImportParts => Command::ImportParts,
            AdminCommand::MigrateStart { project, ping_key } => {
                Command::MigrateStart { project, ping_key }
            }
            AdminCommand::Migrate { project, checks } => Command::Migrate { project, checks },
            AdminCommand::NewestTime => Command::NewestTime,
            AdminCommand::Settings => Command::Settings,
            AdminCommand::ProjectContents { name } => Command::ProjectContents { name },
        }
    }
}

impl Command {
    /// The admin command to run; `None` for the messages inside a session.
    pub(crate) fn into_admin(self) -> Option<AdminCommand> {
        Some(match self {
            Command::ProjectAdd { name, json } => {
                AdminCommand::Project(ProjectCmd::Add { name, json })
            }
            Command::ProjectLs { json } => AdminCommand::Project(ProjectCmd::Ls { json }),
            Command::ProjectQuiet {
                project,
                schedule,
                tz,
                duration,
                off,
            } => AdminCommand::Project(ProjectCmd::Quiet {
                project,
                schedule,
                tz,
                duration,
                off,
            }),
            Command::ProjectRm { name } => {
                AdminCommand::Project(ProjectCmd::Rm { name, yes: true })
            }
            Command::ProjectContents { name } => AdminCommand::ProjectContents { name },
            Command::KeyAdd {
                project,
                read_only,
                label,
                json,
            } => AdminCommand::Key(KeyCmd::Add {
                project,
                read_only,
                label,
                json,
            }),
            Command::KeyLs { project, json } => AdminCommand::Key(KeyCmd::Ls { project, json }),
            Command::KeyRm { project, prefix } => AdminCommand::Key(KeyCmd::Rm { project, prefix }),
            Command::ChannelAdd(spec) => {
                AdminCommand::Channel(ChannelCmd::Add(Box::new(ChannelAddArgs::from(*spec))))
            }
            Command::ChannelLs { project, json } => {
                AdminCommand::Channel(ChannelCmd::Ls { project, json })
            }
            Command::ChannelDefault {
                project,
                ident,
                off,
            } => AdminCommand::Channel(ChannelCmd::Default {
                project,
                ident,
                off,
            }),
            Command::ChannelRm { project, ident } => {
                AdminCommand::Channel(ChannelCmd::Rm { project, ident })
            }
            Command::ChannelTest { project, ident } => {
                AdminCommand::Channel(ChannelCmd::Test { project, ident })
            }
            Command::CheckAdd(spec) => {
                AdminCommand::Check(CheckCmd::Add(Box::new(CheckAddArgs::from(*spec))))
            }
            Command::CheckLs { project, json } => {
                AdminCommand::Check(CheckCmd::Ls { project, json })
            }
            Command::CheckShow {
                project,
                check,
                json,
            } => AdminCommand::Check(CheckCmd::Show {
                project,
                check,
                json,
            }),
            Command::CheckPause { project, check } => {
                AdminCommand::Check(CheckCmd::Pause { project, check })
            }
            Command::CheckResume { project, check } => {
                AdminCommand::Check(CheckCmd::Resume { project, check })
            }
            Command::CheckSnooze {
                names,
                for_,
                until,
                end,
                tag,
                all,
            } => AdminCommand::Check(CheckCmd::Snooze(crate::cli::check::SnoozeArgs {
                names,
                for_,
                until,
                end,
                tag,
                all,
            })),
            Command::CheckRm { project, check } => {
                AdminCommand::Check(CheckCmd::Rm { project, check })
            }
            Command::Backup { path, force } => AdminCommand::Backup { path, force },
            Command::MigrateStart { project, ping_key } => {
                AdminCommand::MigrateStart { project, ping_key }
            }
            Command::Migrate { project, checks } => AdminCommand::Migrate { project, checks },
            Command::NewestTime => AdminCommand::NewestTime,
            Command::Settings => AdminCommand::Settings,
            Command::ImportParts => AdminCommand::ImportParts,
            Command::ExportParts { project } => AdminCommand::ExportParts { project },
            Command::Import(_) | Command::ExportNext => return None,
        })
    }
}

impl From<ChannelAddArgs> for ChannelSpec {
    fn from(a: ChannelAddArgs) -> ChannelSpec {
        ChannelSpec {
            project: a.project,
            kind: a.kind,
            name: a.name,
            value: a.value,
            url: a.url,
            url_down: a.url_down,
            url_up: a.url_up,
            method: a.method,
            body: a.body,
            body_down: a.body_down,
            body_up: a.body_up,
            headers: a.headers,
            topic: a.topic,
            priority: a.priority,
            token: a.token,
            chat: a.chat,
            user: a.user,
            room: a.room,
            cmd_down: a.cmd_down,
            cmd_up: a.cmd_up,
            repeat: a.repeat,
            events: a.events,
            no_assign: a.no_assign,
            no_default: a.no_default,
            json: a.json,
        }
    }
}

impl From<ChannelSpec> for ChannelAddArgs {
    fn from(s: ChannelSpec) -> ChannelAddArgs {
        ChannelAddArgs {
            project: s.project,
            kind: s.kind,
            name: s.name,
            value: s.value,
            url: s.url,
            url_down: s.url_down,
            url_up: s.url_up,
            method: s.method,
            body: s.body,
            body_down: s.body_down,
            body_up: s.body_up,
            headers: s.headers,
            topic: s.topic,
            priority: s.priority,
            token: s.token,
            token_file: None,
            token_env: None,
            chat: s.chat,
            user: s.user,
            room: s.room,
            cmd_down: s.cmd_down,
            cmd_up: s.cmd_up,
            repeat: s.repeat,
            events: s.events,
            no_assign: s.no_assign,
            no_default: s.no_default,
            json: s.json,
        }
    }
}

impl From<CheckAddArgs> for CheckSpec {
    fn from(a: CheckAddArgs) -> CheckSpec {
        CheckSpec {
            project: a.project,
            name: a.name,
            slug: a.slug,
            tags: a.tags,
            desc: a.desc,
            timeout: a.timeout,
            grace: a.grace,
            schedule: a.schedule,
            tz: a.tz,
            manual_resume: a.manual_resume,
            methods: a.methods,
            channels: a.channels,
            start_kw: a.start_kw,
            success_kw: a.success_kw,
            failure_kw: a.failure_kw,
            filter_subject: a.filter_subject,
            filter_body: a.filter_body,
            filter_http_body: a.filter_http_body,
            filter_default_fail: a.filter_default_fail,
            fail_threshold: a.fail_threshold,
            max_duration: a.max_duration,
            min_duration: a.min_duration,
            quiet_schedule: a.quiet_schedule,
            quiet_tz: a.quiet_tz,
            quiet_duration: a.quiet_duration,
            parents: a.parents,
            channel_events: a.channel_events,
            json: a.json,
        }
    }
}

impl From<CheckSpec> for CheckAddArgs {
    fn from(s: CheckSpec) -> CheckAddArgs {
        CheckAddArgs {
            project: s.project,
            name: s.name,
            slug: s.slug,
            tags: s.tags,
            desc: s.desc,
            timeout: s.timeout,
            grace: s.grace,
            schedule: s.schedule,
            tz: s.tz,
            manual_resume: s.manual_resume,
            methods: s.methods,
            channels: s.channels,
            start_kw: s.start_kw,
            success_kw: s.success_kw,
            failure_kw: s.failure_kw,
            filter_subject: s.filter_subject,
            filter_body: s.filter_body,
            filter_http_body: s.filter_http_body,
            filter_default_fail: s.filter_default_fail,
            fail_threshold: s.fail_threshold,
            max_duration: s.max_duration,
            min_duration: s.min_duration,
            quiet_schedule: s.quiet_schedule,
            quiet_tz: s.quiet_tz,
            quiet_duration: s.quiet_duration,
            parents: s.parents,
            channel_events: s.channel_events,
            json: s.json,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(version: u32, command: Command) -> String {
        serde_json::to_string(&Request { version, command }).expect("json")
    }

    #[test]
    fn a_request_of_this_protocol_is_read() {
        let read = read_request(&line(PROTOCOL_VERSION, Command::Settings)).expect("read");
        assert!(matches!(read, Command::Settings), "{read:?}");
    }

    #[test]
    fn another_version_is_refused_with_both_versions_even_when_its_command_is_unknown() {
        let expected = Refusal::Reply(Box::new(Reply::VersionMismatch {
            service: PROTOCOL_VERSION,
            client: PROTOCOL_VERSION + 1,
            service_version: env!("CARGO_PKG_VERSION").into(),
        }));
        let newer = line(PROTOCOL_VERSION + 1, Command::Settings);
        assert_eq!(read_request(&newer).expect_err("refused"), expected);
        let unknown = format!(
            r#"{{"version": {}, "command": {{"Teleport": {{}}}}}}"#,
            PROTOCOL_VERSION + 1
        );
        assert_eq!(read_request(&unknown).expect_err("refused"), expected);
    }

    #[test]
    fn an_unversioned_request_gets_an_answer_an_old_client_can_print() {
        for old in [
            r#"{"Project":{"Ls":{"json":false}}}"#,
            r#""ImportParts""#,
            "nonsense",
        ] {
            let Err(Refusal::Unversioned(output)) = read_request(old) else {
                panic!("{old}: not refused as unversioned");
            };
            assert_eq!(output.code, 1);
            assert!(
                output.stderr.contains("earlier overdue"),
                "{}",
                output.stderr
            );
            // The shape releases of protocol 1 parse.
            let wire = serde_json::to_value(&output).expect("json");
            assert!(wire["stdout"].is_string() && wire["code"] == 1, "{wire}");
        }
    }

    #[test]
    fn a_bad_command_of_this_version_is_a_clear_failure() {
        let bad = format!(r#"{{"version": {PROTOCOL_VERSION}, "command": "Teleport"}}"#);
        let Err(Refusal::Reply(reply)) = read_request(&bad) else {
            panic!("not refused");
        };
        let Reply::Output(output) = *reply else {
            panic!("{reply:?}");
        };
        assert!(
            output.stderr.contains("bad control request"),
            "{}",
            output.stderr
        );
    }

    #[test]
    fn a_mismatch_names_both_releases_and_what_to_do() {
        let reply = Reply::VersionMismatch {
            service: 1,
            client: PROTOCOL_VERSION,
            service_version: "0.0.9".into(),
        };
        let output = reply.failure();
        assert_eq!(output.code, 1);
        assert_eq!(
            output.stderr,
            format!(
                "overdue: this overdue ({}, protocol {PROTOCOL_VERSION}) cannot talk to the \
                 running service (0.0.9, protocol 1): restart the service after an upgrade \
                 (sudo systemctl restart overdue), or use the matching binary\n",
                env!("CARGO_PKG_VERSION")
            )
        );
    }

    #[test]
    fn clap_commands_survive_the_wire() {
        let add = ChannelAddArgs {
            kind: "ntfy".into(),
            name: "phone".into(),
            url: Some("https://ntfy.sh".into()),
            topic: Some("t".into()),
            headers: vec!["A: b".into()],
            no_default: true,
            ..ChannelAddArgs::default()
        };
        let cmd = Command::from(AdminCommand::Channel(ChannelCmd::Add(Box::new(
            add.clone(),
        ))));
        let wire = serde_json::to_string(&Request::new(cmd)).expect("json");
        let back = read_request(&wire)
            .expect("read")
            .into_admin()
            .expect("a command");
        let AdminCommand::Channel(ChannelCmd::Add(back)) = back else {
            panic!("{back:?}");
        };
        assert_eq!(ChannelSpec::from(*back), ChannelSpec::from(add));
    }

    #[test]
    fn typed_replies_survive_the_wire() {
        let now: jiff::Timestamp = "2026-01-02T03:04:05.123456Z".parse().expect("time");
        for reply in [
            Reply::NewestTime(Some(now)),
            Reply::NewestTime(None),
            Reply::ProjectContents(Contents {
                name: "ops".into(),
                checks: 2,
                channels: 1,
                keys: 1,
            }),
            Reply::Migrated(vec![Migrated {
                uuid: uuid::Uuid::nil(),
                name: "n".into(),
                outcome: MigratedOutcome::Created {
                    unmapped: vec![("email".into(), "ops".into())],
                    new_badge_key: true,
                },
            }]),
        ] {
            let wire = serde_json::to_string(&reply).expect("json");
            assert_eq!(serde_json::from_str::<Reply>(&wire).expect("parse"), reply);
        }
    }
}
