//! Recording a flip: the flip itself and, when it notifies, one outbox entry per channel
//! assigned to the check, all in the caller's transaction. Every flip passes here, so this is
//! also where the one info-level log line per state change is written.

use crate::model::{Flip, OutboxEntry};
use crate::service::{ServiceError, WriteCtx};

/// Writes `flip` and queues its alerts. The check must already carry its new status.
pub(crate) fn record_flip(ctx: &mut WriteCtx<'_>, flip: &Flip) -> Result<(), ServiceError> {
    ctx.txn.put_flip(flip)?;
    let (name, channels) = ctx
        .state
        .check(&flip.check)
        .map(|c| (c.name.clone(), c.channels.clone()))
        .unwrap_or_default();
    tracing::info!(
        check = %flip.check,
        name = %name,
        from = flip.old_status.as_str(),
        to = flip.new_status.as_str(),
        reason = %flip.reason,
        at = %flip.created,
        "check is {}",
        flip.new_status.as_str()
    );
    if !flip.notifies() {
        return Ok(());
    }
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
