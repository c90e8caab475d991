//! Import and export in parts: the messages of a session of several messages, their handling
//! inside the service, and the client's end of a session, the same over the control socket and
//! on the file when the service is stopped.
//!
//! An import session opens with [`AdminCommand::ImportParts`], then takes [`ImportMsg`]s: the
//! dump's badge secret, a check pass of every project and part of checks, the same again to
//! store them, and `Finish`, which answers the summary. Every answer is an [`AdminOutput`];
//! one with a non-zero code ends the session. An export session opens with
//! [`AdminCommand::ExportParts`] and answers each request for the next piece with the next
//! [`ExportPiece`]. No message holds more than [`PART`] checks, so neither end holds a whole
//! dump. Over the socket every message travels in the versioned envelope of `cli::protocol`
//! (`Command::Import`, `Command::ExportNext`; `Reply::Output`, `Reply::Export`).

use serde::{Deserialize, Serialize};

use crate::cli::admin::{AdminCommand, AdminOutput, count};
use crate::cli::control::{Conn, Endpoint};
use crate::cli::protocol::{Command, Reply};
use crate::service::transfer::{ExportPlan, ImportPlan, ImportReport, PART};
use crate::service::{AdminError, Service, ServiceError};
use crate::transfer::dump::{self, DumpCheck, DumpProject};

/// A message of an import session after [`AdminCommand::ImportParts`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum ImportMsg {
    /// The dump's badge secret (hex), first.
    Begin {
        badge_secret: String,
    },
    /// Check pass: a project without its checks, then its checks in parts.
    PlanProject(Box<DumpProject>),
    PlanChecks(Vec<DumpCheck>),
    /// Store pass, in the same order.
    StoreProject(Box<DumpProject>),
    StoreChecks(Vec<DumpCheck>),
    /// Answers the summary.
    Finish,
}

/// An answer of an export session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum ExportPiece {
    /// The answer to [`AdminCommand::ExportParts`].
    Header {
        exported_at: String,
        badge_secret: String,
        checks: usize,
    },
    /// A project without its checks; its checks follow.
    Project(Box<DumpProject>),
    Checks(Vec<DumpCheck>),
    End,
    Failed(AdminOutput),
}

/// `1 project, 2 API keys, 1 channel, 5 checks`.
pub(crate) fn counts(c: crate::service::transfer::Counts) -> String {
    format!(
        "{}, {}, {}, {}",
        count(c.projects, "project"),
        count(c.keys, "API key"),
        count(c.channels, "channel"),
        count(c.checks, "check")
    )
}

/// The service's side of an import session.
#[derive(Debug, Default)]
pub(crate) struct ImportSession {
    plan: ImportPlan,
    report: ImportReport,
    secret: Vec<u8>,
    /// The project whose checks the store pass takes next.
    project: Option<DumpProject>,
}

impl ImportSession {
    pub(crate) async fn handle(&mut self, service: &Service, msg: ImportMsg) -> AdminOutput {
        self.step(service, msg)
            .await
            .unwrap_or_else(AdminOutput::failed)
    }

    async fn step(
        &mut self,
        service: &Service,
        msg: ImportMsg,
    ) -> Result<AdminOutput, ServiceError> {
        match msg {
            ImportMsg::Begin { badge_secret } => {
                self.secret = dump::secret_bytes(&badge_secret).map_err(|e| {
                    AdminError::Usage(format!("import refused, nothing was stored: {e}"))
                })?;
            }
            ImportMsg::PlanProject(p) => service.plan_project(&mut self.plan, &p)?,
            ImportMsg::PlanChecks(checks) => service.plan_checks(&mut self.plan, &checks)?,
            ImportMsg::StoreProject(p) => {
                service
                    .store_project(&p, self.secret.clone(), &mut self.report)
                    .await?;
                self.project = Some(*p);
            }
            ImportMsg::StoreChecks(checks) => {
                let project = self
                    .project
                    .as_ref()
                    .ok_or_else(|| AdminError::Usage("checks come before their project".into()))?;
                service
                    .store_checks(project, checks, &mut self.report)
                    .await?;
            }
            ImportMsg::Finish => return Ok(self.summary()),
        }
        Ok(AdminOutput::ok(String::new()))
    }

    fn summary(&self) -> AdminOutput {
        let r = &self.report;
        let mut out = format!(
            "imported {}\nalready present, left as they are: {}\n",
            counts(r.created),
            counts(self.plan.present)
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
        AdminOutput {
            stdout: out,
            stderr,
            code: 0,
        }
    }
}

/// The service's side of an export session.
#[derive(Debug)]
pub(crate) struct ExportSession {
    plan: ExportPlan,
    /// Index into the plan's projects of the one being exported.
    index: usize,
    /// The last check handed out of that project, by sequence number; None before its header.
    after: Option<u64>,
}

impl ExportSession {
    /// Starts an export of one project (by name) or every project.
    pub(crate) fn start(
        service: &Service,
        project: Option<&str>,
    ) -> (Option<ExportSession>, ExportPiece) {
        match service.export_plan(project) {
            Ok(plan) => {
                let header = ExportPiece::Header {
                    exported_at: plan.exported_at.clone(),
                    badge_secret: plan.badge_secret.clone(),
                    checks: plan.checks,
                };
                let session = ExportSession {
                    plan,
                    index: 0,
                    after: None,
                };
                (Some(session), header)
            }
            Err(e) => (None, ExportPiece::Failed(AdminOutput::failed(e))),
        }
    }

    pub(crate) fn next(&mut self, service: &Service) -> ExportPiece {
        loop {
            let Some(&project) = self.plan.projects.get(self.index) else {
                return ExportPiece::End;
            };
            let Some(after) = self.after else {
                self.after = Some(0);
                // Removed meanwhile: left out.
                let Some(p) = service.export_project(project) else {
                    self.skip();
                    continue;
                };
                return ExportPiece::Project(Box::new(p));
            };
            let (part, last) = service.export_checks(project, after, PART);
            match last {
                Some(last) => {
                    self.after = Some(last);
                    return ExportPiece::Checks(part);
                }
                None => self.skip(),
            }
        }
    }

    fn skip(&mut self) {
        self.index += 1;
        self.after = None;
    }
}

/// The client's end of a session: the running service's control socket, or the service opened
/// here on the stopped file.
pub(crate) enum Link {
    Socket(Conn),
    Local {
        service: Box<Service>,
        import: Box<ImportSession>,
        export: Option<ExportSession>,
    },
}

impl Link {
    /// Opens an import session.
    pub(crate) async fn import(endpoint: Endpoint) -> Result<Link, AdminOutput> {
        match endpoint {
            Endpoint::Socket(mut conn) => match conn.call(Command::ImportParts).await {
                Ok(Reply::Output(answer)) if answer.code == 0 => Ok(Link::Socket(conn)),
                Ok(other) => Err(other.failure()),
                Err(e) => Err(conn.failure(e)),
            },
            Endpoint::Local(service) => Ok(Link::Local {
                service,
                import: Box::default(),
                export: None,
            }),
        }
    }

    /// Sends one message of an import session.
    pub(crate) async fn send(&mut self, msg: ImportMsg) -> AdminOutput {
        match self {
            Link::Socket(conn) => match conn.call(Command::Import(msg)).await {
                Ok(reply) => reply.output(),
                Err(e) => conn.failure(e),
            },
            Link::Local {
                service, import, ..
            } => import.handle(service, msg).await,
        }
    }

    /// Opens an export session: the link and the header (or the failure).
    pub(crate) async fn export(
        endpoint: Endpoint,
        project: Option<String>,
    ) -> (Option<Link>, ExportPiece) {
        match endpoint {
            Endpoint::Socket(mut conn) => match conn.call(Command::ExportParts { project }).await {
                Ok(Reply::Export(piece)) => (Some(Link::Socket(conn)), piece),
                Ok(other) => (None, ExportPiece::Failed(other.failure())),
                Err(e) => (None, ExportPiece::Failed(conn.failure(e))),
            },
            Endpoint::Local(service) => {
                let (session, header) = ExportSession::start(&service, project.as_deref());
                let link = Link::Local {
                    service,
                    import: Box::default(),
                    export: session,
                };
                (Some(link), header)
            }
        }
    }

    /// The next piece of an export session.
    pub(crate) async fn next(&mut self) -> ExportPiece {
        match self {
            Link::Socket(conn) => match conn.call(Command::ExportNext).await {
                Ok(Reply::Export(piece)) => piece,
                Ok(other) => ExportPiece::Failed(other.failure()),
                Err(e) => ExportPiece::Failed(conn.failure(e)),
            },
            Link::Local {
                service, export, ..
            } => match export {
                Some(session) => session.next(service),
                None => ExportPiece::End,
            },
        }
    }

    /// Ends the session (closing the file when it was opened here).
    pub(crate) async fn close(self) {
        if let Link::Local { service, .. } = self {
            service.close().await;
        }
    }
}

/// Whether a command opens a session rather than being answered once.
pub(crate) fn opens_session(cmd: &AdminCommand) -> bool {
    matches!(
        cmd,
        AdminCommand::ImportParts | AdminCommand::ExportParts { .. }
    )
}
