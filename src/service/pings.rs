//! Recording pings: the one write that happens at ping rate. Lookup, auto-creation,
//! classification and the state change all run inside the writer's batch, so concurrent
//! pings of one check are numbered without gaps and `create=1` never creates twice. The ping
//! itself goes to the journal (see `journal`).

use bytes::Bytes;
use uuid::Uuid;

use crate::model::classify::{EmailText, classify_email, classify_http};
use crate::model::events::Event;
use crate::model::ping::{failure_held_back, record};
use crate::model::signal::{Signal, Target};
use crate::model::spec::{check_name, check_slug};
use crate::model::{Check, Ping};
use crate::service::checks::resolve_channels;
use crate::service::flips::{queue_notice, record_flip};
use crate::service::metrics::PingSource;
use crate::service::{Service, ServiceError};

/// A ping as received, after URL parsing and body truncation.
#[derive(Debug, Clone)]
pub struct PingRequest {
    pub target: Target,
    /// `?create=1`: create the check when a slug matches none.
    pub create: bool,
    pub signal: Signal,
    pub method: String,
    pub scheme: String,
    pub remote_addr: Option<String>,
    pub ua: String,
    pub rid: Option<Uuid>,
    /// The stored part of the body.
    pub body: Bytes,
}

/// What recording did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PingOutcome {
    pub check: Uuid,
    pub n: u64,
    /// The check was created by this ping (`create=1`).
    pub created: bool,
}

impl Service {
    /// Records one ping; answers once it is durable. Busy when the writer's queue is full.
    pub async fn record_ping(&self, req: PingRequest) -> Result<PingOutcome, ServiceError> {
        let outcome = self.record(req, None).await;
        if outcome.is_ok() {
            self.metrics().ping_recorded(PingSource::Http);
        }
        outcome
    }

    /// Records an email ping (reference §4.6): like an HTTP ping, but its kind comes from the
    /// email's subject and body (`classify_email`) instead of the URL, method and body.
    pub(crate) async fn record_email_ping(
        &self,
        req: PingRequest,
        email: EmailText,
    ) -> Result<PingOutcome, ServiceError> {
        let outcome = self.record(req, Some(email)).await;
        if outcome.is_ok() {
            self.metrics().ping_recorded(PingSource::Email);
        }
        outcome
    }

    async fn record(
        &self,
        req: PingRequest,
        email: Option<EmailText>,
    ) -> Result<PingOutcome, ServiceError> {
        self.try_write(move |ctx| {
            // Some(None): an exit status that does not fit in 0..=255 (400 after the lookup).
            let exit = match req.signal {
                Signal::Exit(code) => Some(code.and_then(|c| u8::try_from(c).ok())),
                _ => None,
            };
            let bad_exit = exit == Some(None);
            let exit_status = exit.flatten();
            let (uuid, created) = match &req.target {
                Target::Uuid(u) => {
                    ctx.state.check(u).ok_or(ServiceError::NotFound)?;
                    (*u, false)
                }
                Target::Slug { ping_key, slug } => {
                    let project = ctx
                        .state
                        .project_by_ping_key(ping_key)
                        .ok_or(ServiceError::NotFound)?
                        .uuid;
                    let found: Vec<Uuid> = ctx
                        .state
                        .checks_by_slug(&project, slug)
                        .iter()
                        .map(|c| c.uuid)
                        .collect();
                    match found.as_slice() {
                        [one] => (*one, false),
                        [] if req.create && !bad_exit => {
                            // The slug names the new check: the API's rules for both apply.
                            check_slug(slug)?;
                            check_name(slug)?;
                            let new_uuid = Uuid::new_v4();
                            let seq = ctx.state.next_seq();
                            let mut check =
                                Check::new(new_uuid, project, seq, ctx.now, Uuid::new_v4());
                            check.name.clone_from(slug);
                            check.slug.clone_from(slug);
                            check.channels = resolve_channels(ctx.state, &project, "*")?;
                            ctx.txn.put_check(&check, None)?;
                            ctx.txn.set_links(check.uuid, &check.channels)?;
                            ctx.state.put_check(check);
                            (new_uuid, true)
                        }
                        [] => return Err(ServiceError::NotFound),
                        _ => return Err(ServiceError::AmbiguousSlug),
                    }
                }
            };
            if bad_exit {
                return Err(ServiceError::InvalidUrl);
            }
            let check = ctx.state.check_mut(&uuid).ok_or(ServiceError::NotFound)?;
            let kind = match &email {
                Some(email) => classify_email(check, email),
                None => classify_http(check, req.signal, &req.method, &req.body),
            };
            let (kind, n, flip) = record(check, kind, req.rid, ctx.now);
            let held_back = failure_held_back(check, kind);
            let ping = Ping {
                check: uuid,
                n,
                created: ctx.now,
                kind,
                scheme: req.scheme,
                remote_addr: req.remote_addr,
                method: req.method,
                ua: req.ua,
                rid: req.rid,
                exit_status,
                body_len: u32::try_from(req.body.len()).unwrap_or(u32::MAX),
            };
            if flip.is_some() {
                // A flip must be durable with its status change and alerts: write the record
                // now (rare); ordinary pings only reach the journal.
                ctx.txn.put_check(check, Some(&check.slug))?;
            }
            let seq = ctx.state.journal_ping(uuid);
            ctx.txn.put_journal(seq, &ping, &req.body)?;
            if let Some(flip) = &flip {
                record_flip(ctx, flip)?;
            }
            if held_back {
                queue_notice(ctx, uuid, Event::Failure, ctx.now)?;
            }
            ctx.touch(uuid);
            Ok(PingOutcome {
                check: uuid,
                n,
                created,
            })
        })
        .await
    }

    /// Deletes pings of `check` numbered below `keep_from` (the ping log's oldest).
    pub async fn prune_pings(&self, check: Uuid, keep_from: u64) -> Result<(), ServiceError> {
        self.write(move |ctx| {
            crate::service::journal::fold_one(ctx, &check)?;
            ctx.txn.prune_pings(check, keep_from)?;
            Ok(())
        })
        .await
    }
}
