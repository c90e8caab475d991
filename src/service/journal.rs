//! The ping journal. A ping is made durable by appending it to the journal (one page or two
//! per batch, whatever the number of checks); folding moves journaled pings into the pings
//! table and rewrites the records of the checks they changed, in one transaction, off the
//! hot path. Until then the state in memory is ahead of the check records, and start-up
//! replays the journal to catch up (see `State::load`).

use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use crate::service::{Service, ServiceError, WriteCtx};

/// How often pending journal entries are folded.
pub const FOLD_EVERY: Duration = Duration::from_secs(1);

/// Folds the whole journal within the caller's transaction.
pub(crate) fn fold(ctx: &mut WriteCtx<'_>) -> Result<(), ServiceError> {
    if ctx.state.journal_len() == 0 {
        return Ok(());
    }
    for (ping, body) in ctx.txn.take_journal()? {
        // Pings of a check deleted meanwhile are dropped with it.
        if ctx.state.check(&ping.check).is_some() {
            ctx.txn.put_ping(&ping, &body)?;
        }
    }
    for uuid in ctx.state.take_unfolded() {
        if let Some(check) = ctx.state.check(&uuid) {
            ctx.txn.put_check(check, Some(&check.slug))?;
        }
    }
    Ok(())
}

impl Service {
    /// Folds the journal now (before reading pings, so lists are complete).
    pub async fn fold_journal(&self) -> Result<(), ServiceError> {
        if self.read(|s| s.journal_len()) == 0 {
            return Ok(());
        }
        self.write(fold).await
    }

    /// Folds the journal if `check` has pings in it.
    pub async fn fold_journal_for(&self, check: &Uuid) -> Result<(), ServiceError> {
        if !self.read(|s| s.is_unfolded(check)) {
            return Ok(());
        }
        self.write(fold).await
    }
}

/// Folds the journal every [`FOLD_EVERY`]; spawn it next to the server.
pub async fn run(service: Arc<Service>) {
    loop {
        tokio::time::sleep(FOLD_EVERY).await;
        if let Err(e) = service.fold_journal().await {
            tracing::warn!("folding the ping journal failed: {e}");
        }
    }
}
