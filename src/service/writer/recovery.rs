//! The writer when the data file fails: marking the storage failing with the cause
//! ([`mark_failing`]), and [`recover`], which reopens the file with backoff, refusing the jobs
//! that arrive meanwhile, until a reopened file takes a committed write, and then reads the
//! state back. A file that fails again soon after continues the backoff ([`Recoveries`]), so a
//! nearly full disk does not make the writer flap between failing and healthy every moment.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::{Job, Shared};
use crate::service::health::{FileFacts, diagnose};
use crate::store::StoreError;

/// What the writer remembers of its last recovery, so that a file that fails again soon after
/// (a disk with just enough room for a probe) continues the backoff instead of restarting it.
#[derive(Debug, Default)]
pub(super) struct Recoveries {
    last_end: Option<tokio::time::Instant>,
    wait: Duration,
}

impl Recoveries {
    /// The first wait of a new recovery.
    fn first_wait(&self) -> Duration {
        let first = Duration::from_millis(crate::model::limits::STORAGE_RETRY_FIRST_MS);
        let window = Duration::from_secs(crate::model::limits::STORAGE_FLAP_WINDOW_SECS);
        match self.last_end {
            Some(end) if end.elapsed() < window => self.wait.max(first),
            _ => first,
        }
    }
}

/// Records that writes fail, with what the file and its filesystem say about why; logs the
/// start of a failure spell once.
pub(super) fn mark_failing(shared: &Shared, e: &StoreError) {
    let diagnosis = diagnosis(shared);
    let error = io_error_text(e);
    if shared.store.is_shared() {
        // Not reopened: the writer stands down (and says so) instead.
        shared
            .health
            .set_failing(error, diagnosis, shared.clock.now());
        return;
    }
    if shared
        .health
        .set_failing(error.clone(), diagnosis.clone(), shared.clock.now())
    {
        let bound = match shared.policy.give_up_after {
            Some(limit) => format!("; the service exits if this lasts {}s", limit.as_secs()),
            None => String::new(),
        };
        tracing::error!(
            storage = %shared.store.location(),
            "writes to the data file fail: {error}; {diagnosis}. Pings and API writes answer \
             503 \"storage unavailable\" until the file takes writes again; reopening it with \
             backoff{bound}"
        );
    }
}

/// What the storage's surroundings say about a failure: the file's filesystem (full,
/// read-only, not writable), or, for a database, where it is.
fn diagnosis(shared: &Shared) -> String {
    match shared.store.file() {
        Some(file) => diagnose(&FileFacts::gather(file)),
        None => format!(
            "this node stands by until it holds the lock of {} again; check that PostgreSQL \
             runs there and takes connections",
            shared.store.location()
        ),
    }
}

/// The error as the operating system put it, without redb's wrapping.
fn io_error_text(e: &StoreError) -> String {
    match e {
        StoreError::Db(redb::Error::Io(source))
        | StoreError::Io { source, .. }
        | StoreError::Open { source, .. } => source.to_string(),
        other => other.to_string(),
    }
}

/// Reopens the file with backoff until it takes a committed write, refusing every job that
/// arrives meanwhile; then reads the state back and wakes the delivery worker.
/// Past the policy's bound, asks the service to stop (and keeps trying until it does).
pub(super) async fn recover(
    rx: &mut mpsc::Receiver<Job>,
    shared: &Arc<Shared>,
    first: &StoreError,
    recoveries: &mut Recoveries,
) {
    let started = tokio::time::Instant::now();
    let mut wait = recoveries.first_wait();
    let mut last_error = io_error_text(first);
    let mut gave_up = false;
    loop {
        // Not past the bound: giving up should not wait for the longest backoff.
        let left = match shared.policy.give_up_after {
            Some(limit) if !gave_up => limit.saturating_sub(started.elapsed()),
            _ => wait,
        };
        let pause = tokio::time::sleep(wait.min(left));
        tokio::pin!(pause);
        loop {
            tokio::select! {
                () = &mut pause => break,
                job = rx.recv() => match job {
                    // Dropped unanswered: its caller sees "storage unavailable".
                    Some(job) => drop(job),
                    None => return,
                },
            }
        }
        let worker = shared.clone();
        let attempt = tokio::task::spawn_blocking(move || reopen(&worker)).await;
        if matches!(attempt, Ok(Ok(()))) {
            recoveries.last_end = Some(tokio::time::Instant::now());
            recoveries.wait = wait;
        }
        match attempt {
            Ok(Ok(())) => {
                let spell = shared.health.set_ok();
                let lasted = spell
                    .map(|f| shared.clock.now().duration_since(f.since))
                    .map(|d| format!(" after {:.1}s", d.as_secs_f64()))
                    .unwrap_or_default();
                tracing::info!(
                    storage = %shared.store.location(),
                    "the data file takes writes again{lasted}; pings and writes are accepted"
                );
                // Queued alerts may have waited; the monitor retries its own within a second.
                shared.alerts.notify_one();
                return;
            }
            Ok(Err(e)) => {
                let text = io_error_text(&e);
                let diagnosis = diagnosis(shared);
                shared
                    .health
                    .set_failing(text.clone(), diagnosis.clone(), shared.clock.now());
                if text == last_error {
                    tracing::debug!("the data file still fails: {text}");
                } else {
                    tracing::warn!("the data file still fails: {text}; {diagnosis}");
                    last_error = text;
                }
            }
            Err(e) => tracing::error!("reopening the data file panicked: {e}"),
        }
        if let Some(limit) = shared.policy.give_up_after
            && !gave_up
            && started.elapsed() >= limit
        {
            gave_up = true;
            tracing::error!(
                "the data file has not taken writes for {}s ({last_error}); stopping so that \
                 the supervisor restarts the service",
                limit.as_secs()
            );
            shared.health.give_up();
        }
        wait = (wait * 2).min(shared.policy.retry_max);
    }
}

/// One attempt: reopen the file, prove it takes a committed write, read the state back. Not
/// tried on a filesystem without room (see [`STORAGE_MIN_FREE_BYTES`]).
///
/// [`STORAGE_MIN_FREE_BYTES`]: crate::model::limits::STORAGE_MIN_FREE_BYTES
fn reopen(shared: &Shared) -> Result<(), StoreError> {
    if let Some(file) = shared.store.file()
        && FileFacts::gather(file).is_full()
    {
        return Err(StoreError::Open {
            path: file.to_path_buf(),
            source: std::io::Error::from_raw_os_error(libc::ENOSPC),
        });
    }
    shared.store.reopen()?;
    shared
        .store
        .probe_write(crate::model::time::to_micros(shared.clock.now()))?;
    super::reload(shared)
}
