//! Recording a flip: the flip itself and, when it notifies, one outbox entry per channel
//! assigned to the check, all in the caller's transaction.

use crate::model::{Flip, OutboxEntry};
use crate::service::{ServiceError, WriteCtx};

/// Writes `flip` and queues its alerts. The check must already carry its new status.
pub(crate) fn record_flip(ctx: &mut WriteCtx<'_>, flip: &Flip) -> Result<(), ServiceError> {
    ctx.txn.put_flip(flip)?;
    if !flip.notifies() {
        return Ok(());
    }
    let channels = ctx
        .state
        .check(&flip.check)
        .map(|c| c.channels.clone())
        .unwrap_or_default();
    for channel in channels {
        let entry = OutboxEntry {
            seq: ctx.state.next_outbox_seq(),
            channel,
            check: flip.check,
            flip_created: flip.created,
            old_status: flip.old_status,
            new_status: flip.new_status,
            reason: flip.reason.clone(),
            queued: ctx.now,
        };
        ctx.txn.put_outbox(&entry)?;
    }
    Ok(())
}
