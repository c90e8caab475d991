//! The single writer: one thread owns every write transaction. Callers hand it jobs; it
//! applies all queued jobs (up to [`MAX_BATCH`]) to one transaction and to the in-memory
//! state, commits once (one fsync for the whole batch: group commit), and only then answers
//! each job. A job is acknowledged only when its effect is durable.
//!
//! Invariant: the in-memory state may run ahead of the file by the batch being committed.
//! If a commit fails, every job of the batch gets the error and the state is rebuilt from the
//! file, so memory never keeps what the file lost.

use std::sync::{Arc, RwLock};

use jiff::Timestamp;
use tokio::sync::{mpsc, oneshot};

use crate::service::ServiceError;
use crate::service::clock::Clock;
use crate::service::state::State;
use crate::store::{Store, StoreError, WriteTxn};

/// Most jobs committed in one transaction.
pub const MAX_BATCH: usize = 1024;
/// Jobs waiting for the writer before [`Writer::try_submit`] answers busy.
pub const QUEUE_DEPTH: usize = 8192;

/// What a job sees while it runs on the writer thread.
pub struct WriteCtx<'a> {
    pub txn: &'a mut WriteTxn,
    pub state: &'a mut State,
    /// Read from the clock just before the job runs.
    pub now: Timestamp,
    /// Set when a job met a storage error: the transaction and memory may be half-changed.
    failed: bool,
}

type Completion = Box<dyn FnOnce(Result<(), Arc<StoreError>>) + Send>;
type Job = Box<dyn FnOnce(&mut WriteCtx<'_>) -> Completion + Send>;

/// Handle to the writer thread.
#[derive(Clone)]
pub struct Writer {
    jobs: mpsc::Sender<Job>,
}

/// Wraps `f` so its result is sent to `reply` once the batch's commit is known.
fn job<T, F>(f: F, reply: oneshot::Sender<Result<T, ServiceError>>) -> Job
where
    T: Send + 'static,
    F: FnOnce(&mut WriteCtx<'_>) -> Result<T, ServiceError> + Send + 'static,
{
    Box::new(move |ctx: &mut WriteCtx<'_>| {
        let result = f(ctx);
        if matches!(result, Err(ServiceError::Storage(_))) {
            ctx.failed = true;
        }
        Box::new(move |commit: Result<(), Arc<StoreError>>| {
            let out = match (result, commit) {
                (Err(e), _) => Err(e),
                (Ok(_), Err(e)) => Err(ServiceError::Storage(e)),
                (Ok(v), Ok(())) => Ok(v),
            };
            // The caller may have gone away (client disconnected); nothing to do then.
            let _ = reply.send(out);
        }) as Completion
    })
}

impl Writer {
    /// Starts the writer thread over `store` and `state`.
    /// The thread ends when every [`Writer`] handle is dropped and its queue is done.
    pub fn start(
        store: Arc<Store>,
        state: Arc<RwLock<State>>,
        clock: Clock,
    ) -> (Writer, Option<std::thread::JoinHandle<()>>) {
        let (tx, rx) = mpsc::channel(QUEUE_DEPTH);
        let spawned = std::thread::Builder::new()
            .name("overdue-writer".into())
            .spawn(move || run(rx, store, state, clock));
        let handle = match spawned {
            Ok(h) => Some(h),
            Err(e) => {
                // Without a writer every write answers "unavailable"; say why once.
                tracing::error!("cannot start the writer thread: {e}");
                None
            }
        };
        (Writer { jobs: tx }, handle)
    }

    /// Runs `f` on the writer thread and waits until its batch is committed.
    pub async fn submit<T, F>(&self, f: F) -> Result<T, ServiceError>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> Result<T, ServiceError> + Send + 'static,
    {
        let (reply, rx) = oneshot::channel();
        self.jobs
            .send(job(f, reply))
            .await
            .map_err(|_| ServiceError::Unavailable)?;
        rx.await.map_err(|_| ServiceError::Unavailable)?
    }

    /// Like [`Writer::submit`], but answers [`ServiceError::Busy`] at once when the queue is
    /// full instead of waiting for room (the ping path must not queue without bound).
    pub async fn try_submit<T, F>(&self, f: F) -> Result<T, ServiceError>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> Result<T, ServiceError> + Send + 'static,
    {
        let (reply, rx) = oneshot::channel();
        self.jobs.try_send(job(f, reply)).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => ServiceError::Busy,
            mpsc::error::TrySendError::Closed(_) => ServiceError::Unavailable,
        })?;
        rx.await.map_err(|_| ServiceError::Unavailable)?
    }
}

fn run(mut rx: mpsc::Receiver<Job>, store: Arc<Store>, state: Arc<RwLock<State>>, clock: Clock) {
    let mut batch: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    while let Some(first) = rx.blocking_recv() {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        commit_batch(&mut batch, &store, &state, &clock);
    }
}

fn commit_batch(batch: &mut Vec<Job>, store: &Store, state: &RwLock<State>, clock: &Clock) {
    let mut txn = match store.begin_write() {
        Ok(txn) => txn,
        Err(e) => {
            // Dropping the jobs drops their reply channels: each caller gets "unavailable".
            tracing::error!("cannot begin a write transaction: {e}");
            batch.clear();
            return;
        }
    };
    let mut completions = Vec::with_capacity(batch.len());
    let failed = {
        let mut guard = state.write().unwrap_or_else(|p| p.into_inner());
        let mut ctx = WriteCtx {
            txn: &mut txn,
            state: &mut guard,
            now: clock.now(),
            failed: false,
        };
        for job in batch.drain(..) {
            ctx.now = clock.now();
            completions.push(job(&mut ctx));
        }
        ctx.failed
    };
    let result = if failed {
        let _ = txn.abort();
        Err(Arc::new(StoreError::Corrupt(
            "a write in this batch failed; nothing was written".into(),
        )))
    } else {
        txn.commit().map_err(Arc::new)
    };
    if let Err(e) = &result {
        tracing::error!("commit failed, reloading state from the file: {e}");
        match store.load() {
            Ok(snap) => {
                *state.write().unwrap_or_else(|p| p.into_inner()) = State::from_snapshot(snap)
            }
            Err(e) => tracing::error!("cannot reload state after a failed commit: {e}"),
        }
    }
    for done in completions {
        done(result.clone());
    }
}
