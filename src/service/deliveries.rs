//! What the delivery worker writes: the record of each attempt, the entry's retry state or its
//! removal, repeat alerts turned into outbox entries. Each is one transaction, so an alert that
//! was delivered leaves the outbox together with the record that says so, and a restart never
//! sends it again.

use jiff::Timestamp;
use uuid::Uuid;

use crate::model::{Delivery, Tries};
use crate::service::{Service, ServiceError};

impl Service {
    /// Removes an alert that will not be sent (its check or channel is gone, or its notifier
    /// has nothing to send in this direction).
    pub(crate) async fn drop_alert(&self, seq: u64) -> Result<(), ServiceError> {
        self.write(move |ctx| {
            ctx.txn.delete_outbox(seq)?;
            Ok(())
        })
        .await
    }

    /// Records an attempt at outbox entry `delivery.outbox_seq`: with `next`, the entry stays
    /// and is tried again then; without, it leaves the outbox (delivered, or given up).
    pub(crate) async fn record_delivery(
        &self,
        delivery: Delivery,
        next: Option<Timestamp>,
    ) -> Result<(), ServiceError> {
        self.write(move |ctx| {
            let seq = delivery.outbox_seq;
            // A channel removed meanwhile keeps no history (its deletion took it).
            if ctx.state.channel(&delivery.channel).is_some() {
                ctx.txn.put_delivery(&delivery)?;
            }
            match next {
                Some(next) => ctx.txn.put_tries(
                    seq,
                    &Tries {
                        done: delivery.attempt,
                        next,
                    },
                )?,
                None => ctx.txn.delete_outbox(seq)?,
            }
            Ok(())
        })
        .await
    }

    /// Records a test notification's attempt (it has no outbox entry).
    pub(crate) async fn record_test_delivery(
        &self,
        delivery: Delivery,
    ) -> Result<(), ServiceError> {
        self.write(move |ctx| {
            if ctx.state.channel(&delivery.channel).is_some() {
                ctx.txn.put_delivery(&delivery)?;
            }
            Ok(())
        })
        .await
    }

    /// Turns the given due repeats, (check, channel) pairs, into outbox entries.
    pub(crate) async fn queue_repeats(&self, due: Vec<(Uuid, Uuid)>) -> Result<(), ServiceError> {
        self.write(move |ctx| crate::service::flips::queue_repeats(ctx, &due))
            .await
    }
}
