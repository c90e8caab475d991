//! The deadline engine: one task owns every check's down time in memory ([`Deadlines`]) and
//! sleeps until the earliest. The writer tells it about every committed change; nothing polls
//! the database. When a deadline passes, the check goes down in the writer (reference-behavior
//! §5.2): the flip is stamped with the computed moment, not the moment it was processed, and
//! its alerts are queued in the same transaction.

pub(crate) mod deadlines;
pub(crate) mod prune;
pub mod retention;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use uuid::Uuid;

use crate::model::time::to_micros;
use crate::service::Service;
use crate::service::writer::DeadlineUpdate;
pub use deadlines::Deadlines;

/// Checks handled per write job when many go down at once.
pub(crate) const DOWN_BATCH: usize = 1024;
/// Wait before taking checks down again after their write failed.
pub(crate) const RETRY_DOWN: Duration = Duration::from_secs(1);
/// Longest sleep: the wall clock is re-read at least this often, so a clock step is noticed.
pub(crate) const MAX_SLEEP: Duration = Duration::from_secs(5);

/// Starts the monitor on `service`: from now on the writer reports every deadline change.
/// Deadlines already passed (the service was stopped) are handled at once.
pub fn start(service: Arc<Service>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(engine(service))
}

/// The engine as a future for its owner to run ([`start`] spawns it): the writer reports to
/// it from the moment this returns.
pub(crate) fn engine(service: Arc<Service>) -> impl std::future::Future<Output = ()> + Send {
    let (tx, rx) = mpsc::unbounded_channel();
    // Listen before reading the state, so no commit falls between the two.
    if service.deadline_sink().set(tx).is_err() {
        tracing::warn!("the monitor was already started");
    }
    let entries: Vec<(Uuid, i64)> = service.read(|s| {
        s.all_checks()
            .filter_map(|c| c.next_attention().map(|at| (c.uuid, to_micros(at))))
            .collect()
    });
    let deadlines = Deadlines::from_entries(&entries);
    run(service, deadlines, rx)
}

async fn run(
    service: Arc<Service>,
    mut deadlines: Deadlines,
    mut updates: mpsc::UnboundedReceiver<DeadlineUpdate>,
) {
    // Whether the last attempt to take checks down failed (logged once per spell).
    let mut failing = false;
    loop {
        let now = service.now();
        let due = deadlines.pop_due(to_micros(now), DOWN_BATCH);
        if !due.is_empty() {
            let checks: Vec<Uuid> = due.iter().map(|(_, c)| *c).collect();
            match service.time_out(checks).await {
                Ok(()) => failing = false,
                Err(e) => {
                    // Nothing was stored, so the checks are still due: put them back and try
                    // again in a second (sooner if a commit reports a deadline meanwhile).
                    if !std::mem::replace(&mut failing, true) {
                        tracing::error!(
                            checks = due.len(),
                            "could not record checks going down, retrying: {e}"
                        );
                    }
                    for (at, check) in due {
                        deadlines.set(check, Some(at));
                    }
                    tokio::select! {
                        update = updates.recv() => match update {
                            Some((check, at)) => deadlines.set(check, at.map(to_micros)),
                            None => return,
                        },
                        () = tokio::time::sleep(RETRY_DOWN) => {}
                    }
                }
            }
            continue;
        }
        let sleep = match deadlines.next() {
            Some(at) => {
                let wait = jiff::SignedDuration::from_micros(at - to_micros(now));
                Duration::try_from(wait)
                    .unwrap_or(Duration::ZERO)
                    .min(MAX_SLEEP)
            }
            None => MAX_SLEEP,
        };
        tokio::select! {
            update = updates.recv() => match update {
                Some((check, at)) => {
                    deadlines.set(check, at.map(to_micros));
                    // Take every queued update before sleeping again.
                    while let Ok((check, at)) = updates.try_recv() {
                        deadlines.set(check, at.map(to_micros));
                    }
                }
                None => return,
            },
            () = tokio::time::sleep(sleep) => {}
        }
    }
}
