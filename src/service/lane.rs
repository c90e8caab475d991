//! The ping lane: how an ordinary ping becomes durable without a job of its own in the
//! writer's queue.
//!
//! A ping that changes no stored status and queues no alert (most pings: a success to a check
//! that is up, a start, a log) is recorded by the request's own task: under the state's write
//! lock it is applied to memory through `model::ping::record`, numbered, encoded, and appended
//! here ([`Lane::push`]). The writer takes everything the lane holds at the start of each batch
//! (holding the state lock, so nothing numbered later can come before it), appends it to the
//! write-ahead log with the batch's own records, syncs once, and then settles it: one mark,
//! "every lane entry numbered below this is settled", which wakes every waiting request at
//! once ([`Lane::wait`]). Per ping this costs a lock and a push instead of a boxed job, a reply
//! channel and a wake-up of its own, and the records are prepared while the writer syncs the
//! previous batch instead of after.
//!
//! A batch that fails settles its entries as failed. Replacing memory with the file's state
//! forgets what the lane holds ([`Lane::forget_all`]): memory no longer holds those pings and
//! the file never did, so their requests record them again, after the new state is in.
//!
//! Invariants: entries are pushed in the order of their journal numbers, under the state
//! lock; an entry is settled as done only after its batch committed (its record synced); the
//! settled mark only grows, and journal numbers are never handed out twice, even across a
//! reload of memory.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use tokio::sync::{Notify, watch};
use uuid::Uuid;

use crate::service::ServiceError;
use crate::store::JournalEntry;

/// Entries waiting for the writer before a ping is answered busy (like the writer's queue).
pub(crate) const LANE_DEPTH: usize = crate::service::writer::QUEUE_DEPTH;

/// Failed ranges remembered for the requests that wait on them. Failures are rare (a full
/// disk, a file gone bad) and each failed batch is one entry; a request whose range was
/// forgotten meanwhile must have been gone for thousands of failed batches.
const FAILED_KEPT: usize = 4096;

/// One ping taken by the lane: its journal number, its check and its encoded record.
#[derive(Debug)]
pub(crate) struct LaneEntry {
    pub(crate) seq: u64,
    pub(crate) check: Uuid,
    pub(crate) record: JournalEntry,
}

/// How entries were settled.
enum How {
    Done,
    Failed(ServiceError),
    /// Memory was replaced before they were written: their requests record them again.
    Forgotten,
}

#[derive(Debug, Default)]
struct Inner {
    entries: Vec<LaneEntry>,
    /// The numbers the writer took last and has not settled yet (inclusive): a batch that
    /// panics never settles them, and [`Lane::fail_all`] then does.
    in_flight: Option<(u64, u64)>,
    /// Ranges of journal numbers (inclusive) whose batch failed, with why (None: forgotten).
    failed: VecDeque<(u64, u64, Option<ServiceError>)>,
}

/// Pings recorded in memory and waiting for the writer to make them durable.
#[derive(Debug)]
pub(crate) struct Lane {
    inner: Mutex<Inner>,
    len: AtomicUsize,
    /// Every entry numbered below this is settled (durable, or failed as noted in `failed`).
    settled: watch::Sender<u64>,
    /// Wakes the writer when the first entry of a batch arrives.
    writer: Notify,
}

impl Default for Lane {
    fn default() -> Self {
        Lane {
            inner: Mutex::default(),
            len: AtomicUsize::new(0),
            settled: watch::Sender::new(0),
            writer: Notify::new(),
        }
    }
}

impl Lane {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the lane is full (the ping is then answered busy).
    pub(crate) fn is_full(&self) -> bool {
        self.len.load(Ordering::Acquire) >= LANE_DEPTH
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len.load(Ordering::Acquire) == 0
    }

    /// Appends an entry; the caller holds the state's write lock, which orders entries by
    /// their journal numbers.
    pub(crate) fn push(&self, entry: LaneEntry) {
        let was_empty = {
            let mut inner = self.lock();
            inner.entries.push(entry);
            inner.entries.len() == 1
        };
        self.len.fetch_add(1, Ordering::AcqRel);
        if was_empty {
            // A stored permit: a writer busy with a batch sees it when it next looks.
            self.writer.notify_one();
        }
    }

    /// Takes every entry, in order (the writer, holding the state lock).
    pub(crate) fn take(&self) -> Vec<LaneEntry> {
        let taken = {
            let mut inner = self.lock();
            let taken = std::mem::take(&mut inner.entries);
            if let (Some(first), Some(last)) = (taken.first(), taken.last()) {
                inner.in_flight = Some((first.seq, last.seq));
            }
            taken
        };
        self.len.fetch_sub(taken.len(), Ordering::AcqRel);
        taken
    }

    /// Resolves when an entry arrived since the writer last looked.
    pub(crate) async fn arrived(&self) {
        self.writer.notified().await;
    }

    /// Settles entries `first..=last` of one batch: done, or failed with `error`.
    pub(crate) fn settle(&self, first: u64, last: u64, outcome: Result<(), ServiceError>) {
        let how = match outcome {
            Ok(()) => How::Done,
            Err(e) => How::Failed(e),
        };
        self.settle_as(first, last, how);
    }

    fn settle_as(&self, first: u64, last: u64, how: How) {
        let failure = match how {
            How::Done => None,
            How::Failed(e) => Some(Some(e)),
            How::Forgotten => Some(None),
        };
        {
            let mut inner = self.lock();
            if inner.in_flight.is_some_and(|(_, l)| l <= last) {
                inner.in_flight = None;
            }
            if let Some(why) = failure {
                if inner.failed.len() == FAILED_KEPT {
                    inner.failed.pop_front();
                }
                inner.failed.push_back((first, last, why));
            }
        }
        self.settled
            .send_modify(|mark| *mark = (*mark).max(last + 1));
    }

    /// Fails every entry still waiting, and those a batch took and never settled: the writer
    /// stopped.
    pub(crate) fn fail_all(&self, error: ServiceError) {
        self.settle_unsettled(How::Failed(error));
    }

    /// Forgets every entry still waiting, and those a batch took and never settled (it
    /// panicked): memory, which held them, is being replaced by the file's state (the caller
    /// holds the state's write lock). Their requests record them again.
    pub(crate) fn forget_all(&self) {
        self.settle_unsettled(How::Forgotten);
    }

    fn settle_unsettled(&self, how: How) {
        let unsettled = self.lock().in_flight;
        let waiting = self.take();
        let first = unsettled
            .map(|(f, _)| f)
            .or_else(|| waiting.first().map(|e| e.seq));
        let last = waiting.last().map(|e| e.seq).or(unsettled.map(|(_, l)| l));
        if let (Some(first), Some(last)) = (first, last) {
            self.settle_as(first, last, how);
        }
    }

    /// The highest journal number the lane has seen settled, plus one.
    #[cfg(test)]
    pub(crate) fn settled_below(&self) -> u64 {
        *self.settled.borrow()
    }

    /// Waits until entry `seq` is settled; answers true once it is durable, false when it was
    /// forgotten (it must be recorded again), or the failure.
    pub(crate) async fn wait(&self, seq: u64) -> Result<bool, ServiceError> {
        let mut settled = self.settled.subscribe();
        // The sender lives as long as the lane, which the caller holds.
        if settled.wait_for(|mark| *mark > seq).await.is_err() {
            return Err(ServiceError::ShuttingDown);
        }
        let inner = self.lock();
        match inner
            .failed
            .iter()
            .rev()
            .find(|(first, last, _)| (*first..=*last).contains(&seq))
        {
            Some((_, _, Some(e))) => Err(e.clone()),
            Some((_, _, None)) => Ok(false),
            None => Ok(true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Ping, PingKind};

    fn entry(seq: u64) -> LaneEntry {
        let ping = Ping {
            check: Uuid::nil(),
            n: seq,
            created: jiff::Timestamp::UNIX_EPOCH,
            kind: PingKind::Success,
            scheme: "http".into(),
            remote_addr: None,
            method: "GET".into(),
            ua: String::new(),
            rid: None,
            exit_status: None,
            body_len: 0,
        };
        LaneEntry {
            seq,
            check: Uuid::nil(),
            record: JournalEntry::encode(&ping, b"").expect("encodes"),
        }
    }

    #[tokio::test]
    async fn a_wait_ends_when_its_batch_settles_and_says_how() {
        let lane = Lane::default();
        lane.push(entry(1));
        lane.push(entry(2));
        assert_eq!(
            lane.take().iter().map(|e| e.seq).collect::<Vec<_>>(),
            [1, 2]
        );
        assert!(lane.is_empty());
        lane.settle(1, 2, Ok(()));
        assert!(lane.wait(1).await.expect("done"));
        assert!(lane.wait(2).await.expect("done"));
        lane.push(entry(3));
        lane.push(entry(4));
        let _ = lane.take();
        lane.settle(3, 4, Err(ServiceError::Busy));
        assert!(matches!(lane.wait(3).await, Err(ServiceError::Busy)));
        assert!(matches!(lane.wait(4).await, Err(ServiceError::Busy)));
        assert!(lane.wait(2).await.expect("an earlier batch stays done"));
        assert_eq!(lane.settled_below(), 5);
    }

    #[tokio::test]
    async fn a_wait_does_not_end_before_its_entry_is_settled() {
        let lane = std::sync::Arc::new(Lane::default());
        lane.push(entry(7));
        let waiter = tokio::spawn({
            let lane = lane.clone();
            async move { lane.wait(7).await }
        });
        tokio::task::yield_now().await;
        lane.settle(1, 6, Ok(()));
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "settled below 7 only");
        lane.fail_all(ServiceError::ShuttingDown);
        assert!(matches!(
            waiter.await.expect("joins"),
            Err(ServiceError::ShuttingDown)
        ));
        assert!(lane.is_empty());
    }

    #[tokio::test]
    async fn entries_a_batch_took_and_never_settled_fail_with_the_rest() {
        let lane = Lane::default();
        lane.push(entry(1));
        lane.push(entry(2));
        let _lost = lane.take();
        lane.push(entry(3));
        lane.fail_all(ServiceError::ShuttingDown);
        for seq in 1..=3 {
            assert!(
                matches!(lane.wait(seq).await, Err(ServiceError::ShuttingDown)),
                "{seq}"
            );
        }
        // Settled batches are not failed again.
        lane.push(entry(4));
        let _ = lane.take();
        lane.settle(4, 4, Ok(()));
        lane.fail_all(ServiceError::ShuttingDown);
        assert!(lane.wait(4).await.expect("stays done"));
    }

    #[tokio::test]
    async fn forgotten_entries_are_told_apart_from_failed_ones() {
        let lane = Lane::default();
        lane.push(entry(1));
        let _ = lane.take();
        lane.push(entry(2));
        lane.forget_all();
        assert!(!lane.wait(1).await.expect("forgotten, not failed"));
        assert!(!lane.wait(2).await.expect("forgotten, not failed"));
        assert!(lane.is_empty());
    }
}
