//! Flip retention (api.md §4.9): flips are kept for the current month and the two full months
//! before it; older ones are deleted by a background sweep, a few checks per transaction.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use uuid::Uuid;

use crate::model::time::to_micros;
use crate::service::Service;

/// How often the sweep runs.
pub(crate) const SWEEP_EVERY: Duration = Duration::from_secs(6 * 3600);
/// Checks pruned per write job.
const CHECKS_PER_JOB: usize = 1000;

/// The first instant whose flips are kept: midnight UTC on the first day of the month two
/// months before `now`'s month.
pub(crate) fn cutoff(now: Timestamp) -> Timestamp {
    let today = now.to_zoned(TimeZone::UTC).date();
    let (mut year, mut month) = (today.year(), today.month() - 2);
    if month < 1 {
        month += 12;
        year -= 1;
    }
    Date::new(year, month, 1)
        .ok()
        .and_then(|d| d.to_zoned(TimeZone::UTC).ok())
        .map_or(Timestamp::MIN, |z| z.timestamp())
}

/// Deletes expired flips of every check once.
pub async fn sweep(service: &Service) {
    let before = to_micros(cutoff(service.now()));
    let checks: Vec<Uuid> = service.read(|s| s.all_checks().map(|c| c.uuid).collect());
    for chunk in checks.chunks(CHECKS_PER_JOB) {
        let chunk = chunk.to_vec();
        let pruned = service.prune_flips(chunk, before).await;
        if let Err(e) = pruned {
            tracing::warn!("pruning old flips failed: {e}");
            return;
        }
    }
}

/// Runs the sweep now and then every [`SWEEP_EVERY`].
pub(crate) async fn run(service: Arc<Service>) {
    loop {
        sweep(&service).await;
        tokio::time::sleep(SWEEP_EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::cutoff;

    #[test]
    fn keeps_this_month_and_two_before() {
        let at = |s: &str| s.parse::<jiff::Timestamp>().expect("ts");
        assert_eq!(
            cutoff(at("2026-11-21T23:00:00Z")),
            at("2026-09-01T00:00:00Z")
        );
        assert_eq!(
            cutoff(at("2026-02-01T00:00:00Z")),
            at("2025-12-01T00:00:00Z")
        );
        assert_eq!(
            cutoff(at("2026-01-31T12:00:00Z")),
            at("2025-11-01T00:00:00Z")
        );
    }
}
