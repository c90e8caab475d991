//! The ping journal. A ping is made durable by appending it to the journal (one page or two
//! per batch, whatever the number of checks); folding moves journaled pings into the pings
//! table and rewrites the records of the checks they changed, in one transaction, off the
//! hot path. Until then the state in memory is ahead of the check records, and start-up
//! replays the journal to catch up (see `State::load`).

use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use crate::service::{Service, ServiceError, WriteCtx};

/// Pause between folds while the journal is not empty.
pub const FOLD_EVERY: Duration = Duration::from_millis(50);

/// Journaled pings folded per write job: small enough that a fold never holds the writer
/// (and so the pings waiting behind it) for long.
pub const FOLD_CHUNK: usize = 2048;

/// Folds up to `limit` of the oldest journaled pings within the caller's transaction: moves
/// them to the pings table and rewrites their checks' records from memory (which are at
/// least as new). Returns how many were folded.
pub fn fold_some(ctx: &mut WriteCtx<'_>, limit: usize) -> Result<usize, ServiceError> {
    if ctx.state.journal_len() == 0 {
        return Ok(0);
    }
    let entries = ctx.txn.take_journal(limit)?;
    let mut checks = Vec::new();
    for (ping, body) in &entries {
        ctx.state.folded(&ping.check);
        // Pings of a check deleted meanwhile are dropped with it.
        if ctx.state.check(&ping.check).is_some() {
            ctx.txn.put_ping(ping, body)?;
            checks.push(ping.check);
        }
    }
    checks.sort_unstable();
    checks.dedup();
    for uuid in checks {
        if let Some(check) = ctx.state.check(&uuid) {
            ctx.txn.put_check(check, Some(&check.slug))?;
        }
    }
    Ok(entries.len())
}

/// Folds the whole journal within the caller's transaction.
pub(crate) fn fold(ctx: &mut WriteCtx<'_>) -> Result<(), ServiceError> {
    fold_some(ctx, usize::MAX).map(|_| ())
}

impl Service {
    /// Folds the journal now (before reading pings, so lists are complete).
    pub async fn fold_journal(&self) -> Result<(), ServiceError> {
        self.write(fold).await
    }

    /// Makes every ping of `check` readable from the pings table: folds the journal if the
    /// check has pings in it. It always goes through the writer, even when memory says there
    /// is nothing to fold, because memory runs ahead of the file: a fold that already took this
    /// check's pings may still be committing, and the answer must wait for it.
    pub async fn fold_journal_for(&self, check: &Uuid) -> Result<(), ServiceError> {
        let check = *check;
        self.write(move |ctx| {
            if ctx.state.is_unfolded(&check) {
                fold(ctx)
            } else {
                Ok(())
            }
        })
        .await
    }
}

/// Keeps folding the journal in chunks of [`FOLD_CHUNK`]; spawn it next to the server.
pub async fn run(service: Arc<Service>) {
    loop {
        tokio::time::sleep(FOLD_EVERY).await;
        while service.read(|s| s.journal_len()) > 0 {
            match service.write(|ctx| fold_some(ctx, FOLD_CHUNK)).await {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!("folding the ping journal failed: {e}");
                    break;
                }
            }
        }
    }
}
