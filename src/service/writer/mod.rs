//! The single writer: one task owns every write transaction. Callers hand it jobs; it
//! applies all queued jobs (up to [`MAX_BATCH`]) to one transaction and to the in-memory
//! state, commits once (one fsync for the whole batch: group commit), and only then answers
//! each job. A job is acknowledged only when its effect is durable.
//!
//! Batches run on tokio's blocking pool, so fsyncs never stall the async workers, and tokio's
//! paused test clock does not jump ahead while a batch is being written. While jobs keep
//! coming the blocking thread goes straight on to the next batch (see [`drain`]).
//!
//! A batch of pings alone is made durable by the write-ahead log rather than a sync of the
//! data file (`store::ping_log`); a checkpoint, a durable commit of the file, follows once one
//! is due: under load on a thread of its own while batches go on (a batch of pings alone does
//! not need the file; folds wait for the next batch), while idle when its time comes. With
//! nothing waiting in the log alone no timer runs.
//!
//! After a commit that queued alerts, the writer signals the delivery worker (`notify`), so
//! an alert starts out as soon as it is durable.
//!
//! Invariant: the in-memory state may run ahead of the file by the batch being committed.
//! If a commit fails, every job of the batch gets the error and the state is rebuilt from the
//! file, so memory never keeps what the file lost.
//!
//! An I/O error (a full disk, a file made unwritable) leaves redb refusing every operation
//! until the file is reopened. The writer then marks the storage failing
//! ([`StorageHealth`]), refuses jobs with "storage unavailable", and reopens the file with
//! backoff until a reopened file takes a committed write; it then reloads the state and wakes
//! the delivery worker (the monitor retries the down flips it could not store by itself). Past
//! the policy's bound it asks the service to stop.

use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

use jiff::Timestamp;
use tokio::sync::{Notify, mpsc, oneshot};
use uuid::Uuid;

use crate::service::ServiceError;
use crate::service::clock::Clock;
use crate::service::health::{StorageHealth, StoragePolicy};
use crate::service::journal::{self, FoldPlan};
use crate::service::metrics::Metrics;
use crate::service::state::State;
use crate::store::{Store, StoreError, WriteTxn};

mod recovery;

use recovery::{Recoveries, mark_failing, recover};

/// Most jobs committed in one transaction.
pub(crate) const MAX_BATCH: usize = 1024;
/// Jobs waiting for the writer before [`Writer::try_submit`] answers busy.
pub(crate) const QUEUE_DEPTH: usize = 8192;

/// A check's new down time (None: it cannot go down), sent after each commit.
pub(crate) type DeadlineUpdate = (Uuid, Option<Timestamp>);

/// Where deadline updates go once the monitor runs (never set in admin-only use).
pub(crate) type DeadlineSink = Arc<OnceLock<mpsc::UnboundedSender<DeadlineUpdate>>>;

/// What a job sees while it runs.
pub struct WriteCtx<'a> {
    pub txn: &'a mut WriteTxn,
    pub state: &'a mut State,
    /// Read from the clock just before the job runs.
    pub now: Timestamp,
    /// Checks whose deadline may have changed; the monitor hears of them after the commit.
    touched: &'a mut Vec<Uuid>,
    /// Set when a job met a storage error: the transaction and memory may be half-changed.
    failed: bool,
    /// The first I/O error a job met (the file must be reopened).
    io_error: Option<Arc<StoreError>>,
    /// Set when a job queued alerts: the delivery worker is woken after the commit.
    alerts: bool,
}

impl WriteCtx<'_> {
    /// Marks a check whose deadline may have changed (created, pinged, edited, deleted).
    pub(crate) fn touch(&mut self, check: Uuid) {
        self.touched.push(check);
    }

    /// Marks that this batch queued alerts (outbox entries or repeats).
    pub(crate) fn alerts_queued(&mut self) {
        self.alerts = true;
    }
}

type Completion = Box<dyn FnOnce(Result<(), Arc<StoreError>>) + Send>;
type Job = Box<dyn FnOnce(&mut WriteCtx<'_>) -> Completion + Send>;

/// Handle to the writer task.
#[derive(Clone)]
pub(crate) struct Writer {
    jobs: mpsc::Sender<Job>,
    health: Arc<StorageHealth>,
}

/// Wraps `f` so its result is sent to `reply` once the batch's commit is known.
fn job<T, F>(f: F, reply: oneshot::Sender<Result<T, ServiceError>>) -> Job
where
    T: Send + 'static,
    F: FnOnce(&mut WriteCtx<'_>) -> Result<T, ServiceError> + Send + 'static,
{
    Box::new(move |ctx: &mut WriteCtx<'_>| {
        let result = f(ctx);
        if let Err(e) = &result
            && let Some(store_error) = e.store_error()
        {
            ctx.failed = true;
            if store_error.is_io() && ctx.io_error.is_none() {
                ctx.io_error = Some(store_error.clone());
            }
        }
        Box::new(move |commit: Result<(), Arc<StoreError>>| {
            let out = match (result, commit) {
                (Err(e), _) => Err(e),
                (Ok(_), Err(e)) => Err(ServiceError::storage(e)),
                (Ok(v), Ok(())) => Ok(v),
            };
            // The caller may have gone away (client disconnected); nothing to do then.
            let _ = reply.send(out);
        }) as Completion
    })
}

/// What the writer task works with.
struct Shared {
    store: Arc<Store>,
    state: Arc<RwLock<State>>,
    clock: Clock,
    deadlines: DeadlineSink,
    metrics: Arc<Metrics>,
    alerts: Arc<Notify>,
    health: Arc<StorageHealth>,
    policy: StoragePolicy,
    /// A checkpoint committing on a thread of its own while batches go on: a batch of pings
    /// alone does not need the file, so under load the pings do not wait for it.
    checkpointer: Mutex<Option<std::thread::JoinHandle<Option<Arc<StoreError>>>>>,
}

/// What the writer needs besides the store and the state.
pub(crate) struct WriterParts {
    pub(crate) clock: Clock,
    pub(crate) deadlines: DeadlineSink,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) alerts: Arc<Notify>,
    pub(crate) health: Arc<StorageHealth>,
    pub(crate) policy: StoragePolicy,
}

impl Writer {
    /// Spawns the writer task on the current tokio runtime. It ends when every [`Writer`]
    /// handle is dropped and its queue is done.
    pub(crate) fn start(
        store: Arc<Store>,
        state: Arc<RwLock<State>>,
        parts: WriterParts,
    ) -> (Writer, tokio::task::JoinHandle<()>) {
        let (tx, rx) = mpsc::channel(QUEUE_DEPTH);
        let health = parts.health.clone();
        let shared = Arc::new(Shared {
            store,
            state,
            clock: parts.clock,
            deadlines: parts.deadlines,
            metrics: parts.metrics,
            alerts: parts.alerts,
            health: parts.health,
            policy: parts.policy,
            checkpointer: Mutex::new(None),
        });
        (Writer { jobs: tx, health }, tokio::spawn(run(rx, shared)))
    }

    /// Refuses a job at once while the storage fails, instead of queueing it for nothing.
    fn refuse_while_failing(&self) -> Result<(), ServiceError> {
        if self.health.is_failing() {
            return Err(ServiceError::StorageUnavailable(Arc::new(
                StoreError::Closed,
            )));
        }
        Ok(())
    }

    /// Why a job was dropped without an answer: the writer refused it during a storage
    /// failure, or it stopped (shutdown).
    fn dropped(&self) -> ServiceError {
        if self.health.is_failing() {
            ServiceError::StorageUnavailable(Arc::new(StoreError::Closed))
        } else {
            ServiceError::ShuttingDown
        }
    }

    /// Runs `f` in the writer and waits until its batch is committed.
    pub(crate) async fn submit<T, F>(&self, f: F) -> Result<T, ServiceError>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> Result<T, ServiceError> + Send + 'static,
    {
        self.refuse_while_failing()?;
        let (reply, rx) = oneshot::channel();
        self.jobs
            .send(job(f, reply))
            .await
            .map_err(|_| ServiceError::ShuttingDown)?;
        rx.await.map_err(|_| self.dropped())?
    }

    /// Like [`Writer::submit`], but answers [`ServiceError::Busy`] at once when the queue is
    /// full instead of waiting for room (the ping path must not queue without bound).
    pub(crate) async fn try_submit<T, F>(&self, f: F) -> Result<T, ServiceError>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> Result<T, ServiceError> + Send + 'static,
    {
        self.refuse_while_failing()?;
        let (reply, rx) = oneshot::channel();
        self.jobs.try_send(job(f, reply)).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => ServiceError::Busy,
            mpsc::error::TrySendError::Closed(_) => ServiceError::ShuttingDown,
        })?;
        rx.await.map_err(|_| self.dropped())?
    }
}

/// How a run of batches on the blocking thread ended.
enum Drained {
    /// The queue was empty.
    Idle,
    /// A job panicked (a bug): memory must be rebuilt from the file.
    Panicked,
    /// The file met an I/O error: it must be reopened before anything else is written.
    StorageFailed(Arc<StoreError>),
}

async fn run(mut rx: mpsc::Receiver<Job>, shared: Arc<Shared>) {
    let mut recoveries = Recoveries::default();
    let mut lock_lost = shared.store.lock_lost();
    loop {
        // While commits wait in the write-ahead log alone, the checkpoint's time is a deadline
        // too; with none waiting the writer sleeps until a job comes (or, on PostgreSQL, until
        // the session that holds the active node's lock ends).
        let next = match shared.store.checkpoint_due() {
            None => tokio::select! {
                job = rx.recv() => job,
                () = &mut lock_lost => {
                    stand_down(&mut rx, &shared, "the database ended the session").await;
                    break;
                }
            },
            Some(due) => {
                let wait = due.saturating_duration_since(std::time::Instant::now());
                tokio::select! {
                    job = rx.recv() => job,
                    () = tokio::time::sleep(wait) => {
                        let worker = shared.clone();
                        let failed = tokio::task::spawn_blocking(move || {
                            join_checkpoint(&worker).or_else(|| {
                                let due = worker.store.checkpoint_due();
                                due.is_some_and(|d| d <= std::time::Instant::now())
                                    .then(|| checkpoint(&worker))
                                    .flatten()
                            })
                        })
                        .await
                        .ok()
                        .flatten();
                        if let Some(e) = failed {
                            recover(&mut rx, &shared, &e, &mut recoveries).await;
                        }
                        continue;
                    }
                }
            }
        };
        let Some(first) = next else {
            break;
        };
        let worker = shared.clone();
        let (back, drained) =
            match tokio::task::spawn_blocking(move || drain(first, rx, &worker)).await {
                Ok(back) => back,
                Err(e) => {
                    // `drain` catches the panics of jobs; reaching this is a bug in itself.
                    tracing::error!("the writer stopped: {e}");
                    return;
                }
            };
        rx = back;
        match drained {
            Drained::Idle => {}
            Drained::Panicked => {
                if let Err(e) = reload(&shared) {
                    tracing::error!("cannot reload the state from the file: {e}");
                }
            }
            Drained::StorageFailed(e) if shared.store.is_shared() => {
                stand_down(&mut rx, &shared, &e.to_string()).await;
                break;
            }
            Drained::StorageFailed(e) => {
                // The file is reopened next: no checkpoint may hold the old one.
                let worker = shared.clone();
                let _ = tokio::task::spawn_blocking(move || join_checkpoint(&worker)).await;
                recover(&mut rx, &shared, &e, &mut recoveries).await;
            }
        }
    }
    // Stopping: what the write-ahead log alone holds goes into the file, so it starts clean.
    let worker = shared.clone();
    let _ = tokio::task::spawn_blocking(move || {
        let _ = join_checkpoint(&worker);
        if worker.store.checkpoint_due().is_some() {
            checkpoint(&worker);
        }
    })
    .await;
}

/// The writer of a node whose database session failed: it may have lost the active node's lock
/// with the session, and another node may hold it already, so it writes nothing more. It marks
/// the storage failing (every write answers 503 at once) and the node as standing by (the
/// daemon then stops this service and waits for the lock again), and refuses every job until
/// the service closes.
async fn stand_down(rx: &mut mpsc::Receiver<Job>, shared: &Shared, why: &str) {
    let location = shared.store.location();
    tracing::error!(
        "the session with PostgreSQL at {location} failed ({why}): this node may have lost the \
         active node's lock, so it stops writing and stands by"
    );
    shared.health.set_failing(
        why.to_string(),
        format!("this node stands by; another node may be active on {location}"),
        shared.clock.now(),
    );
    shared.health.stand_by();
    // Dropped unanswered: each caller sees "storage unavailable".
    while let Some(job) = rx.recv().await {
        drop(job);
    }
}

/// Starts a checkpoint on a thread of its own unless one is running.
fn start_checkpoint(shared: &Arc<Shared>) {
    let mut slot = shared
        .checkpointer
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if slot.is_some() {
        return;
    }
    let worker = shared.clone();
    match std::thread::Builder::new()
        .name("checkpoint".into())
        .spawn(move || {
            crate::store::background_priority();
            checkpoint(&worker)
        }) {
        Ok(handle) => *slot = Some(handle),
        Err(e) => tracing::warn!("cannot start a checkpoint thread (tried again later): {e}"),
    }
}

/// The outcome of a checkpoint that has finished since it was started (an I/O error that
/// failed it); None while it runs or when none ran.
fn finished_checkpoint(shared: &Shared) -> Option<Arc<StoreError>> {
    let mut slot = shared
        .checkpointer
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if !slot
        .as_ref()
        .is_some_and(std::thread::JoinHandle::is_finished)
    {
        return None;
    }
    slot.take().and_then(|handle| handle.join().ok().flatten())
}

/// Waits for a running checkpoint; its I/O error, if it failed on one.
fn join_checkpoint(shared: &Shared) -> Option<Arc<StoreError>> {
    let handle = shared
        .checkpointer
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    handle.and_then(|handle| handle.join().ok().flatten())
}

/// Makes the commits that the write-ahead log alone holds durable in the file. Answers the I/O
/// error that failed it (the file must then be reopened).
fn checkpoint(shared: &Shared) -> Option<Arc<StoreError>> {
    let started = std::time::Instant::now();
    match shared.store.checkpoint() {
        Ok(()) => {
            tracing::debug!("checkpoint in {} ms", started.elapsed().as_millis());
            None
        }
        Err(e) if e.is_io() => {
            let e = Arc::new(e);
            mark_failing(shared, &e);
            Some(e)
        }
        Err(e) => {
            tracing::error!("a checkpoint failed (it is tried again later): {e}");
            None
        }
    }
}

/// Commits batches on a blocking thread for as long as jobs keep coming, then hands the
/// queue back. Going back to the async loop between batches would put the writer behind every
/// connection task in the workers' run queues: under load that wait, not the commit, was the
/// largest part of each batch's cycle.
///
/// A panicking job is a bug: its batch is not committed, its callers see "unavailable", and
/// memory, which may hold the batch's half-done changes, is rebuilt from the file (the
/// caller does that on [`Drained::Panicked`]).
fn drain(
    first: Job,
    mut rx: mpsc::Receiver<Job>,
    shared: &Arc<Shared>,
) -> (mpsc::Receiver<Job>, Drained) {
    let mut batch: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    batch.push(first);
    loop {
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        if batch.is_empty() {
            return (rx, Drained::Idle);
        }
        let jobs = std::mem::take(&mut batch);
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| commit_batch(jobs, shared)))
        {
            Ok((emptied, None)) => {
                batch = emptied;
                // Under steady load the writer never sleeps: the checkpoint starts here, on a
                // thread of its own, and the batches of pings go on beside it.
                if let Some(e) = finished_checkpoint(shared) {
                    return (rx, Drained::StorageFailed(e));
                }
                let due = shared.store.checkpoint_due();
                if due.is_some_and(|due| due <= std::time::Instant::now()) {
                    start_checkpoint(shared);
                }
            }
            Ok((_, Some(io_error))) => return (rx, Drained::StorageFailed(io_error)),
            Err(_) => {
                tracing::error!("a write batch panicked; reloading the state from the file");
                return (rx, Drained::Panicked);
            }
        }
    }
}

/// Runs one batch; gives back the (emptied) vector for reuse, and the I/O error that failed
/// the batch, if one did (the file must then be reopened).
fn commit_batch(mut batch: Vec<Job>, shared: &Shared) -> (Vec<Job>, Option<Arc<StoreError>>) {
    let mut txn = match shared.store.begin_write() {
        Ok(txn) => txn,
        Err(e) => {
            let e = Arc::new(e);
            let io = if e.is_io() {
                // Marked (and logged) before the jobs are dropped, so their callers see why.
                mark_failing(shared, &e);
                Some(e)
            } else {
                tracing::error!("cannot begin a write transaction: {e}");
                None
            };
            // Dropping the jobs drops their reply channels: each caller gets "unavailable"
            // (or "storage unavailable").
            batch.clear();
            return (batch, io);
        }
    };
    let jobs = batch.len();
    let mut completions = Vec::with_capacity(jobs);
    let mut touched = Vec::new();
    let alerts;
    let (failed, mut io_error, fold) = {
        let mut guard = shared.state.write().unwrap_or_else(PoisonError::into_inner);
        let mut ctx = WriteCtx {
            txn: &mut txn,
            state: &mut guard,
            now: shared.clock.now(),
            touched: &mut touched,
            failed: false,
            io_error: None,
            alerts: false,
        };
        for job in batch.drain(..) {
            ctx.now = shared.clock.now();
            completions.push(job(&mut ctx));
        }
        alerts = ctx.alerts;
        // Each batch folds a bounded share of the journal, in the same commit, instead of
        // folds of their own that the pings would queue behind.
        // Not while a checkpoint commits: the fold would wait for it, and the pings with it.
        let fold = if ctx.failed || shared.store.checkpointing() {
            FoldPlan::default()
        } else {
            journal::plan_due(ctx.state)
        };
        (ctx.failed, ctx.io_error.take(), fold)
    };
    // Written after letting go of the state: readers need not wait for the fold.
    let failed = failed
        || match fold.apply(&mut txn) {
            Ok(()) => false,
            Err(e) => {
                tracing::error!("folding the ping journal failed: {e}");
                if e.is_io() && io_error.is_none() {
                    io_error = Some(Arc::new(e));
                }
                true
            }
        };
    let result = if failed {
        let _ = txn.abort();
        Err(io_error.clone().unwrap_or_else(|| {
            Arc::new(StoreError::Corrupt(
                "a write in this batch failed; nothing was written".into(),
            ))
        }))
    } else {
        let started = std::time::Instant::now();
        let committed = txn.commit().map_err(Arc::new);
        if committed.is_ok() {
            shared.metrics.batch_committed(jobs, started.elapsed());
        }
        committed
    };
    match &result {
        Ok(()) => {
            if alerts {
                // Stored permit: a worker busy elsewhere still sees it on its next wait.
                shared.alerts.notify_one();
            }
            notify_deadlines(shared, touched);
        }
        Err(e) if e.is_io() => {
            // Marked before the callers hear of it, so they and the status probe agree.
            mark_failing(shared, e);
            io_error = Some(e.clone());
            // Memory may hold the batch. A file that failed may not even answer reads; then
            // memory keeps the batch until `recover` reads the reopened file back in.
            if let Err(e) = reload(shared) {
                tracing::debug!("cannot reload the state from the failed file yet: {e}");
            }
        }
        Err(e) => {
            tracing::error!("commit failed, reloading state from the file: {e}");
            if let Err(e) = reload(shared) {
                tracing::error!("cannot reload the state from the file: {e}");
            }
        }
    }
    for done in completions {
        done(result.clone());
    }
    (batch, io_error)
}

/// Replaces the in-memory state with the file's (the file is the truth).
fn reload(shared: &Shared) -> Result<(), StoreError> {
    let fresh = State::load(&shared.store)?;
    *shared.state.write().unwrap_or_else(PoisonError::into_inner) = fresh;
    Ok(())
}

fn notify_deadlines(shared: &Shared, mut touched: Vec<Uuid>) {
    let Some(sink) = shared.deadlines.get() else {
        return;
    };
    if touched.is_empty() {
        return;
    }
    touched.sort_unstable();
    touched.dedup();
    let state = shared.state.read().unwrap_or_else(PoisonError::into_inner);
    for uuid in touched {
        let down_at = state
            .check(&uuid)
            .and_then(crate::model::Check::next_attention);
        // A closed channel means the monitor stopped (shutdown); nothing to tell.
        let _ = sink.send((uuid, down_at));
    }
}
