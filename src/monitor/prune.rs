//! Keeps each check's ping log at its size, off the hot path: a background sweep deletes
//! pings older than the newest `ping_log` in batches, so a ping never pays for a delete.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use crate::service::{Service, ServiceError};

/// How often the sweep looks for checks over their log size.
pub(crate) const SWEEP_EVERY: Duration = Duration::from_secs(30);
/// Pings a check may run over its log size before it is pruned (batches the deletes).
pub(crate) const SLACK: u64 = 100;

/// Runs forever; spawn it next to the server.
pub(crate) async fn run(service: Arc<Service>) {
    // Per check: every ping below this number is known to be deleted already.
    let mut pruned_below: HashMap<Uuid, u64> = HashMap::new();
    let log = u64::from(service.config().ping_log);
    loop {
        tokio::time::sleep(SWEEP_EVERY).await;
        if service.storage_health().is_failing() {
            continue;
        }
        let due: Vec<(Uuid, u64)> = service.read(|s| {
            s.all_checks()
                .filter_map(|c| {
                    let keep_from = c.n_pings.saturating_sub(log) + 1;
                    let done = pruned_below.get(&c.uuid).copied().unwrap_or(1);
                    (keep_from > done + SLACK || (keep_from > done && done == 1))
                        .then_some((c.uuid, keep_from))
                })
                .collect()
        });
        for (check, keep_from) in due {
            match service.prune_pings(check, keep_from).await {
                Ok(()) => {
                    pruned_below.insert(check, keep_from);
                }
                // The writer logged why; the next sweep tries again.
                Err(ServiceError::StorageUnavailable(_)) => break,
                Err(e) => tracing::warn!("pruning pings of {check} failed: {e}"),
            }
        }
        service.read(|s| pruned_below.retain(|uuid, _| s.check(uuid).is_some()));
    }
}
