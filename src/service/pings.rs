//! Recording pings: the one write that happens at ping rate. Lookup, classification and the
//! state change run under the state's write lock, so concurrent pings of one check are
//! numbered without gaps. A ping that changes no stored status and queues nothing (most) is
//! recorded by its own request and waits in the lane for the writer's sync (`lane`); any other
//! (a flip, a held-back failure, `create=1` creating a check) is a job of the writer, so its
//! flip and alerts commit with it and `create=1` never creates twice. Either way the ping
//! itself goes to the journal (see `journal`).

use bytes::Bytes;
use uuid::Uuid;

use crate::model::classify::{EmailText, classify_email, classify_http};
use crate::model::events::Event;
use crate::model::ping::{failure_held_back, quiet_kind, record};
use crate::model::signal::{Signal, Target};
use crate::model::spec::{check_name, check_slug};
use crate::model::{Check, Ping, PingKind};
use crate::service::checks::resolve_channels;
use crate::service::flips::{queue_notice, record_flip};
use crate::service::lane::LaneEntry;
use crate::service::metrics::PingSource;
use crate::service::state::State;
use crate::service::{Service, ServiceError, WriteCtx};
use crate::store::JournalEntry;

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
        // Forgotten (memory was rebuilt from the file before the writer took it), the ping
        // goes the job way: jobs queued meanwhile run on the rebuilt state.
        if let Some((seq, outcome)) = self.record_in_lane(&req, email.as_ref())?
            && self.lane.wait(seq).await?
        {
            return Ok(outcome);
        }
        self.try_write(move |ctx| {
            let (uuid, created) = match resolve(ctx.state, &req)? {
                Resolved::Check(uuid) => (uuid, false),
                Resolved::Create { project, slug } => (create_for_slug(ctx, project, slug)?, true),
            };
            let check = ctx.state.check_mut(&uuid).ok_or(ServiceError::NotFound)?;
            let kind = classify(check, &req, email.as_ref());
            let (kind, n, flip) = record(check, kind, req.rid, ctx.now);
            let held_back = failure_held_back(check, kind);
            let ping = ping_of(&req, uuid, n, kind, ctx.now);
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

    /// Records a ping that changes no stored status and queues nothing (see [`quiet_kind`])
    /// in memory and appends it to the lane: its journal number and what recording did.
    /// None when the writer must record it: the ping would flip its check or queue a notice,
    /// `create=1` would create a check, the writer holds the state right now (this thread
    /// does not wait for a whole batch), or the file is failing (the writer answers why).
    fn record_in_lane(
        &self,
        req: &PingRequest,
        email: Option<&EmailText>,
    ) -> Result<Option<(u64, PingOutcome)>, ServiceError> {
        if self.health.is_failing() {
            return Ok(None);
        }
        if self.lane.is_full() {
            return Err(ServiceError::Busy);
        }
        let mut state = match self.state.try_write() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Ok(None),
        };
        let Resolved::Check(uuid) = resolve(&state, req)? else {
            return Ok(None);
        };
        let check = state.check_mut(&uuid).ok_or(ServiceError::NotFound)?;
        let Some(kind) = quiet_kind(check, classify(check, req, email)) else {
            return Ok(None);
        };
        let now = self.clock.now();
        let n = check.n_pings + 1;
        // Encoded before memory changes, so a failure leaves nothing half done.
        let entry = JournalEntry::encode(&ping_of(req, uuid, n, kind, now), &req.body)?;
        let recorded = record(check, kind, req.rid, now);
        debug_assert_eq!(
            recorded,
            (kind, n, None),
            "quiet_kind promised a quiet ping"
        );
        let seq = state.journal_ping(uuid);
        self.lane.push(LaneEntry {
            seq,
            check: uuid,
            record: entry,
        });
        Ok(Some((
            seq,
            PingOutcome {
                check: uuid,
                n,
                created: false,
            },
        )))
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

/// Which check a ping is for.
enum Resolved<'a> {
    Check(Uuid),
    /// `create=1` and no check has the slug: the writer creates one in `project`.
    Create {
        project: Uuid,
        slug: &'a str,
    },
}

/// Finds the ping's check. Unknown targets are "not found", a slug of several checks is
/// ambiguous, and an exit status past 255 is refused once the check is known.
fn resolve<'a>(state: &State, req: &'a PingRequest) -> Result<Resolved<'a>, ServiceError> {
    let bad_exit = matches!(req.signal, Signal::Exit(code) if exit_status(code).is_none());
    let resolved = match &req.target {
        Target::Uuid(u) => {
            state.check(u).ok_or(ServiceError::NotFound)?;
            Resolved::Check(*u)
        }
        Target::Slug { ping_key, slug } => {
            let project = state
                .project_by_ping_key(ping_key)
                .ok_or(ServiceError::NotFound)?
                .uuid;
            match state.checks_by_slug(&project, slug).as_slice() {
                [one] => Resolved::Check(one.uuid),
                [] if req.create && !bad_exit => Resolved::Create { project, slug },
                [] => return Err(ServiceError::NotFound),
                _ => return Err(ServiceError::AmbiguousSlug),
            }
        }
    };
    if bad_exit {
        return Err(ServiceError::InvalidUrl);
    }
    Ok(resolved)
}

/// Creates the check a `create=1` ping names by its slug (the API's rules for the slug and
/// the name apply to it), with every channel of its project.
fn create_for_slug(
    ctx: &mut WriteCtx<'_>,
    project: Uuid,
    slug: &str,
) -> Result<Uuid, ServiceError> {
    check_slug(slug)?;
    check_name(slug)?;
    let uuid = Uuid::new_v4();
    let seq = ctx.state.next_seq();
    let mut check = Check::new(uuid, project, seq, ctx.now, Uuid::new_v4());
    slug.clone_into(&mut check.name);
    slug.clone_into(&mut check.slug);
    check.channels = resolve_channels(ctx.state, &project, "*")?;
    ctx.txn.put_check(&check, None)?;
    ctx.txn.set_links(check.uuid, &check.channels)?;
    ctx.state.put_check(check);
    Ok(uuid)
}

/// An exit status as stored: None when it does not fit in 0..=255.
fn exit_status(code: Option<u32>) -> Option<u8> {
    code.and_then(|c| u8::try_from(c).ok())
}

/// The kind the ping asks for, from its email or its URL, method and body.
fn classify(check: &Check, req: &PingRequest, email: Option<&EmailText>) -> PingKind {
    match email {
        Some(email) => classify_email(check, email),
        None => classify_http(check, req.signal, &req.method, &req.body),
    }
}

/// The stored ping: ping `n` of `check`, recorded as `kind` at `now`.
fn ping_of(req: &PingRequest, check: Uuid, n: u64, kind: PingKind, now: jiff::Timestamp) -> Ping {
    Ping {
        check,
        n,
        created: now,
        kind,
        scheme: req.scheme.clone(),
        remote_addr: req.remote_addr.clone(),
        method: req.method.clone(),
        ua: req.ua.clone(),
        rid: req.rid,
        exit_status: match req.signal {
            Signal::Exit(code) => exit_status(code),
            _ => None,
        },
        body_len: u32::try_from(req.body.len()).unwrap_or(u32::MAX),
    }
}
