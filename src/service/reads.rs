//! Reads of what only the data file keeps (the ping log and bodies, flips, the outbox, delivery
//! attempts, repeat alerts, badge keys), for the API, the delivery worker and the CLI. The rest
//! of the crate reads these here and never the store itself, so the one invariant of these
//! reads lives in one place: a check's pings are read only after its journaled pings have been
//! folded into the pings table (see [`crate::service::journal`]).

use jiff::Timestamp;
use uuid::Uuid;

use crate::model::{Delivery, Flip, OutboxEntry, Ping, Tries};
use crate::service::{Service, ServiceError};

/// A ping with its stored body (empty when it had none or it was not kept).
#[derive(Debug, Clone)]
pub(crate) struct PingWithBody {
    pub(crate) ping: Ping,
    pub body: Vec<u8>,
}

/// A repeat alert waiting for its time: the check, the channel, and when it is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeat {
    pub check: Uuid,
    pub(crate) channel: Uuid,
    pub(crate) due: Timestamp,
}

impl Service {
    /// The newest `limit` pings of a check, newest first, journaled ones included.
    pub async fn pings(&self, check: Uuid, limit: usize) -> Result<Vec<Ping>, ServiceError> {
        self.fold_journal_for(&check).await?;
        Ok(self.store().pings(check, limit)?)
    }

    /// The stored body of ping `n` of a check, if it has one.
    pub(crate) async fn ping_body(
        &self,
        check: Uuid,
        n: u64,
    ) -> Result<Option<Vec<u8>>, ServiceError> {
        self.fold_journal_for(&check).await?;
        Ok(self.store().ping_body(check, n)?)
    }

    /// The newest ping at or before `at` among the newest `scanned` pings, with its body: what
    /// an alert about a moment quotes.
    pub(crate) async fn ping_at_or_before(
        &self,
        check: Uuid,
        at: Timestamp,
        scanned: usize,
    ) -> Result<Option<PingWithBody>, ServiceError> {
        self.fold_journal_for(&check).await?;
        let store = self.store();
        let Some(ping) = store
            .pings(check, scanned)?
            .into_iter()
            .find(|p| p.created <= at)
        else {
            return Ok(None);
        };
        let body = store.ping_body(check, ping.n)?.unwrap_or_default();
        Ok(Some(PingWithBody { ping, body }))
    }

    /// Every stored flip of a check, newest first.
    pub fn flips(&self, check: Uuid) -> Result<Vec<Flip>, ServiceError> {
        Ok(self.store().flips(check)?)
    }

    /// Every queued alert, oldest first.
    pub fn outbox(&self) -> Result<Vec<OutboxEntry>, ServiceError> {
        Ok(self.store().outbox()?)
    }

    /// Every queued alert with its retry state (None before the first try), oldest first.
    pub fn outbox_pending(&self) -> Result<Vec<(OutboxEntry, Option<Tries>)>, ServiceError> {
        Ok(self.store().outbox_pending()?)
    }

    /// How many alerts wait in the outbox.
    pub(crate) fn outbox_len(&self) -> Result<u64, ServiceError> {
        Ok(self.store().outbox_len()?)
    }

    /// The newest `limit` delivery attempts to a channel, newest first.
    pub fn deliveries(&self, channel: Uuid, limit: usize) -> Result<Vec<Delivery>, ServiceError> {
        Ok(self.store().deliveries(channel, limit)?)
    }

    /// Every repeat alert waiting for its time.
    pub fn repeats(&self) -> Result<Vec<Repeat>, ServiceError> {
        Ok(self
            .store()
            .repeats()?
            .into_iter()
            .map(|(check, channel, due)| Repeat {
                check,
                channel,
                due: crate::model::time::from_micros(due),
            })
            .collect())
    }

    /// The check a per-check badge key belongs to.
    pub(crate) fn check_by_badge_key(&self, badge_key: Uuid) -> Result<Option<Uuid>, ServiceError> {
        Ok(self.store().check_by_badge_key(badge_key)?)
    }

    /// A cheap read that proves the data file answers (`/api/v3/status/`).
    pub(crate) fn probe_storage(&self) -> Result<(), ServiceError> {
        self.store().health_check()?;
        Ok(())
    }

    /// How many entries the ping journal holds, folded or not (diagnostics and tests).
    pub fn journal_len(&self) -> Result<u64, ServiceError> {
        Ok(self.store().journal_len()?)
    }
}
