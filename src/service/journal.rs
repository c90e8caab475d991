//! The ping journal. A ping is made durable by appending it to the journal (a page or two per
//! batch, whatever the number of checks). Folding copies a check's journaled pings into the
//! pings table and rewrites its record from memory; it runs inside the writer's batches, a
//! check at a time and only once the check has gathered [`FOLD_RIPE`] pings (or its oldest is
//! about to leave the journal's window), so the page writes of a fold are shared by many
//! pings and no batch carries more than [`FOLD_BUDGET`] of them. Folded entries are deleted
//! from the journal in ranges, behind the oldest unfolded one. When pings are few, a
//! background task ([`run`]) folds the checks whose oldest journaled ping is [`FOLD_AGE`] old.
//! Until a check is folded, memory is ahead of its record, and start-up replays the journal to
//! catch up (`State::load`).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use uuid::Uuid;

use crate::model::Check;
use crate::service::state::State;
use crate::service::{Service, ServiceError, WriteCtx};
use crate::store::{StoreError, WriteTxn};

/// A check is folded once this many of its pings wait in the journal: its record and its
/// newest pings page are then written once for this many pings.
pub(crate) const FOLD_RIPE: usize = 64;

/// The journal's window, in entries: a check whose oldest journaled ping is further back than
/// this is folded whatever its count, so the journal stays bounded and start-up replays little.
pub(crate) const JOURNAL_SPAN: u64 = 65_536;

/// Journaled pings folded at most per batch: bounds how long a fold holds the pings queued
/// behind it.
pub(crate) const FOLD_BUDGET: usize = 512;

/// Folded entries are deleted from the journal once this many have gathered (one range
/// delete then frees whole pages).
pub(crate) const TRIM_EVERY: u64 = 1024;

/// Pause between the folds that drain the journal when pings are few.
pub(crate) const FOLD_EVERY: Duration = Duration::from_secs(1);

/// Age after which a quiet check's journaled pings are folded even though it is not ripe: its
/// record in the file is then at most this far behind memory. Folding sooner would write the
/// check's pages for every ping or two when pings are few (a ping's durability does not wait
/// for it: the journal and the write-ahead log hold it).
pub(crate) const FOLD_AGE: Duration = Duration::from_secs(600);

/// Which journal entries are not folded yet, per check; plain data, kept in `State`.
#[derive(Debug, Default)]
pub(crate) struct Unfolded {
    /// Journal sequence numbers of each check's unfolded pings, oldest first.
    per_check: HashMap<Uuid, Vec<u64>>,
    /// (oldest unfolded sequence number, check) for every check with unfolded pings.
    oldest: BTreeSet<(u64, Uuid)>,
    /// Checks with at least [`FOLD_RIPE`] unfolded pings.
    ripe: HashSet<Uuid>,
    len: usize,
    /// Every journal entry below this number is gone from the file.
    trimmed_below: u64,
}

impl Unfolded {
    /// Starts an index over a journal whose first entry is `first` (its next one when empty).
    pub(crate) fn starting_at(first: u64) -> Unfolded {
        Unfolded {
            trimmed_below: first,
            ..Unfolded::default()
        }
    }

    /// Notes a journaled ping of `check`; sequence numbers arrive in increasing order.
    pub(crate) fn push(&mut self, check: Uuid, seq: u64) {
        let seqs = self.per_check.entry(check).or_default();
        if seqs.is_empty() {
            self.oldest.insert((seq, check));
        }
        seqs.push(seq);
        if seqs.len() == FOLD_RIPE {
            self.ripe.insert(check);
        }
        self.len += 1;
    }

    /// Removes and returns the unfolded entries of `check`.
    pub(crate) fn take(&mut self, check: &Uuid) -> Vec<u64> {
        let Some(seqs) = self.per_check.remove(check) else {
            return Vec::new();
        };
        if let Some(&first) = seqs.first() {
            self.oldest.remove(&(first, *check));
        }
        self.ripe.remove(check);
        self.len -= seqs.len();
        seqs
    }

    /// Unfolded pings in all.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The checks to fold in this batch, at most about `budget` pings in all (a single check
    /// may exceed it): first those whose oldest entry left the window ending at `next_seq`,
    /// then ripe ones.
    pub(crate) fn due(&self, next_seq: u64, budget: usize) -> Vec<Uuid> {
        let horizon = next_seq.saturating_sub(JOURNAL_SPAN);
        let mut chosen = HashSet::new();
        let mut out = Vec::new();
        let mut pings = 0;
        let old = self
            .oldest
            .iter()
            .take_while(|(seq, _)| *seq < horizon)
            .map(|(_, check)| check);
        for check in old.chain(self.ripe.iter()) {
            if pings >= budget {
                break;
            }
            if chosen.insert(*check) {
                out.push(*check);
                pings += self.per_check.get(check).map_or(0, Vec::len);
            }
        }
        out
    }

    /// The checks holding the oldest entries, all of them below `horizon`, at most about
    /// `budget` pings in all.
    pub(crate) fn oldest_checks(&self, horizon: u64, budget: usize) -> Vec<Uuid> {
        let mut out = Vec::new();
        let mut pings = 0;
        for (_, check) in self.oldest.iter().take_while(|(seq, _)| *seq < horizon) {
            if pings >= budget {
                break;
            }
            out.push(*check);
            pings += self.per_check.get(check).map_or(0, Vec::len);
        }
        out
    }

    /// Where the journal may be cut, if cutting is worth it now: every entry below the
    /// returned number is folded (or belonged to a deleted check). `next_seq` is the number
    /// the next entry gets; `eager` cuts any advance, not only a large one.
    pub(crate) fn trim_point(&self, next_seq: u64, eager: bool) -> Option<u64> {
        let mark = self.oldest.first().map_or(next_seq, |(seq, _)| *seq);
        let advance = mark.saturating_sub(self.trimmed_below);
        (advance >= TRIM_EVERY || (eager && advance > 0)).then_some(mark)
    }

    /// Notes that the journal was cut at `mark`.
    pub(crate) fn trimmed(&mut self, mark: u64) {
        self.trimmed_below = mark;
    }
}

/// The file work of a fold, taken from memory so that it can be written without holding the
/// state: each folded check's journal entries with its record (None: the check is gone), and
/// where to cut the journal.
#[derive(Debug, Default)]
pub(crate) struct FoldPlan {
    checks: Vec<(Vec<u64>, Option<Check>)>,
    trim: Option<u64>,
}

impl FoldPlan {
    /// Pings the plan folds.
    pub(crate) fn pings(&self) -> usize {
        self.checks.iter().map(|(seqs, _)| seqs.len()).sum()
    }

    /// Takes `checks`' unfolded entries out of `state` (memory moves ahead of the file, as for
    /// any write) and notes where the journal can be cut afterwards.
    fn take(state: &mut State, checks: &[Uuid], eager: bool) -> FoldPlan {
        let mut plan = FoldPlan::default();
        for check in checks {
            let seqs = state.unfolded_mut().take(check);
            if !seqs.is_empty() {
                plan.checks.push((seqs, state.check(check).cloned()));
            }
        }
        let next = state.next_journal_seq();
        plan.trim = state.unfolded().trim_point(next, eager);
        if let Some(mark) = plan.trim {
            state.unfolded_mut().trimmed(mark);
        }
        plan
    }

    /// Writes the plan into `txn`.
    pub(crate) fn apply(&self, txn: &mut WriteTxn) -> Result<(), StoreError> {
        for (seqs, record) in &self.checks {
            // A deleted check's entries were dropped with it; nothing is copied for it.
            if let Some(check) = record {
                txn.fold_journal(seqs)?;
                txn.put_folded_check(check)?;
            }
        }
        if let Some(mark) = self.trim {
            txn.trim_journal(mark)?;
        }
        Ok(())
    }
}

/// The writer's share of folding, planned at the end of every batch: the checks that are due.
/// The writer applies it after letting go of the state, so readers are not held up by it.
pub(crate) fn plan_due(state: &mut State) -> FoldPlan {
    let unfolded = state.unfolded();
    if unfolded.is_empty() {
        return FoldPlan::default();
    }
    let due = unfolded.due(state.next_journal_seq(), FOLD_BUDGET);
    if due.is_empty() {
        return FoldPlan::default();
    }
    FoldPlan::take(state, &due, false)
}

fn fold_checks(
    ctx: &mut WriteCtx<'_>,
    checks: &[Uuid],
    eager: bool,
) -> Result<usize, ServiceError> {
    let plan = FoldPlan::take(ctx.state, checks, eager);
    plan.apply(ctx.txn)?;
    Ok(plan.pings())
}

/// Folds the checks holding the oldest entries below `horizon`, about `budget` pings, and
/// cuts the journal behind them. Returns how many were folded.
pub(crate) fn fold_oldest(
    ctx: &mut WriteCtx<'_>,
    horizon: u64,
    budget: usize,
) -> Result<usize, ServiceError> {
    let checks = ctx.state.unfolded().oldest_checks(horizon, budget);
    fold_checks(ctx, &checks, true)
}

/// Folds the whole journal within the caller's transaction.
pub(crate) fn fold(ctx: &mut WriteCtx<'_>) -> Result<(), ServiceError> {
    fold_oldest(ctx, u64::MAX, usize::MAX).map(|_| ())
}

/// Which journal entries are [`FOLD_AGE`] old: the background fold's clock. It notes the next
/// sequence number once per tick; the newest note that has reached the age is the horizon
/// below which entries are old enough to fold. Plain data: `now` comes from the caller.
#[derive(Debug, Default)]
pub(crate) struct FoldClock {
    notes: std::collections::VecDeque<(Instant, u64)>,
    horizon: u64,
}

impl FoldClock {
    /// Notes `next_seq` at `now` and answers the horizon: every entry numbered below it was
    /// journaled at least [`FOLD_AGE`] before `now`.
    pub(crate) fn tick(&mut self, now: Instant, next_seq: u64) -> u64 {
        if self.notes.back().is_none_or(|(_, seq)| *seq != next_seq) {
            self.notes.push_back((now, next_seq));
        }
        while let Some(&(at, seq)) = self.notes.front() {
            if now.saturating_duration_since(at) < FOLD_AGE {
                break;
            }
            self.horizon = self.horizon.max(seq);
            self.notes.pop_front();
        }
        self.horizon
    }
}

/// Folds `check`'s journaled pings (before reading or pruning them).
pub(crate) fn fold_one(ctx: &mut WriteCtx<'_>, check: &Uuid) -> Result<(), ServiceError> {
    fold_checks(ctx, &[*check], false).map(|_| ())
}

/// Drops the journaled pings of a check being deleted, so none outlives it.
pub(crate) fn drop_check(ctx: &mut WriteCtx<'_>, check: &Uuid) -> Result<(), ServiceError> {
    let seqs = ctx.state.unfolded_mut().take(check);
    if !seqs.is_empty() {
        ctx.txn.delete_journal(&seqs)?;
    }
    Ok(())
}

impl Service {
    /// Folds the journal now (at shutdown; tests).
    pub(crate) async fn fold_journal(&self) -> Result<(), ServiceError> {
        self.write(fold).await
    }

    /// Makes every ping of `check` readable from the pings table. It always goes through the
    /// writer, even when memory says there is nothing to fold, because memory runs ahead of
    /// the file: a batch that folded this check may still be committing, and the answer must
    /// wait for it.
    pub(crate) async fn fold_journal_for(&self, check: &Uuid) -> Result<(), ServiceError> {
        let check = *check;
        self.write(move |ctx| fold_one(ctx, &check)).await
    }
}

/// Drains the journal while pings are few (under load the writer's batches fold it); spawn it
/// next to the server.
pub(crate) async fn run(service: Arc<Service>) {
    let mut clock = FoldClock::default();
    loop {
        tokio::time::sleep(FOLD_EVERY).await;
        let (empty, next_seq) = service.read(|s| (s.unfolded().is_empty(), s.next_journal_seq()));
        let horizon = clock.tick(tokio::time::Instant::now().into_std(), next_seq);
        // While the file refuses writes the writer has said why; a failure a second adds nothing.
        if service.storage_health().is_failing() || empty {
            continue;
        }
        let old_enough = service.read(|s| !s.unfolded().oldest_checks(horizon, 1).is_empty());
        if !old_enough {
            continue;
        }
        if let Err(e) = service
            .write(move |ctx| fold_oldest(ctx, horizon, FOLD_BUDGET))
            .await
        {
            tracing::warn!("folding the ping journal failed: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    #[test]
    fn a_check_ripens_at_fold_ripe_pings() {
        let mut u = Unfolded::starting_at(1);
        for seq in 1..FOLD_RIPE as u64 {
            u.push(check(1), seq);
        }
        u.push(check(2), 1000);
        assert!(u.due(2000, FOLD_BUDGET).is_empty());
        u.push(check(1), 1001);
        assert_eq!(u.due(2000, FOLD_BUDGET), [check(1)]);
        assert_eq!(u.take(&check(1)).len(), FOLD_RIPE);
        assert!(u.due(2000, FOLD_BUDGET).is_empty());
        assert_eq!(u.len(), 1);
    }

    #[test]
    fn entries_leaving_the_window_are_due_first() {
        let mut u = Unfolded::starting_at(1);
        u.push(check(1), 5);
        u.push(check(2), 7);
        for seq in 0..FOLD_RIPE as u64 {
            u.push(check(3), 10 + seq);
        }
        let next = 7 + JOURNAL_SPAN;
        // check 1's entry is out of the window, check 2's is not yet; check 3 is ripe.
        assert_eq!(u.due(next, FOLD_BUDGET), [check(1), check(3)]);
        assert_eq!(u.due(next + 1, FOLD_BUDGET), [check(1), check(2), check(3)]);
        // The budget stops the choice once reached (a check is never split).
        assert_eq!(u.due(next + 1, 2), [check(1), check(2)]);
    }

    #[test]
    fn the_journal_is_cut_behind_the_oldest_unfolded_entry() {
        let mut u = Unfolded::starting_at(1);
        u.push(check(1), 1);
        u.push(check(2), 2);
        u.push(check(1), 3);
        assert_eq!(u.trim_point(4, true), None, "nothing folded yet");
        u.take(&check(1));
        // Entry 1 is folded, 2 is not: the cut is at 2, and only eagerly (a small advance).
        assert_eq!(u.trim_point(4, true), Some(2));
        assert_eq!(u.trim_point(4, false), None);
        u.take(&check(2));
        assert_eq!(u.trim_point(4, true), Some(4), "all folded: cut everything");
        u.trimmed(4);
        assert_eq!(u.trim_point(4, true), None);
        // A large advance is cut without being eager.
        for seq in 4..4 + TRIM_EVERY {
            u.push(check(3), seq);
        }
        u.take(&check(3));
        assert_eq!(u.trim_point(4 + TRIM_EVERY, false), Some(4 + TRIM_EVERY));
    }

    #[test]
    fn the_fold_clock_answers_what_was_journaled_fold_age_ago() {
        let t0 = Instant::now();
        let at = |secs: u64| t0 + Duration::from_secs(secs);
        let mut clock = FoldClock::default();
        assert_eq!(clock.tick(at(0), 10), 0);
        assert_eq!(clock.tick(at(1), 25), 0);
        // Quiet ticks add no note.
        assert_eq!(clock.tick(at(2), 25), 0);
        let age = FOLD_AGE.as_secs();
        assert_eq!(clock.tick(at(age - 1), 40), 0);
        assert_eq!(clock.tick(at(age), 41), 10);
        assert_eq!(clock.tick(at(age + 1), 41), 25);
        assert_eq!(clock.tick(at(age + 2), 41), 25);
        // Never moves back, and catches up after a long pause.
        assert_eq!(clock.tick(at(10 * age), 50), 41);
    }

    #[test]
    fn oldest_checks_stop_at_the_horizon() {
        let mut u = Unfolded::starting_at(1);
        u.push(check(1), 5);
        u.push(check(2), 3);
        u.push(check(3), 9);
        assert!(u.oldest_checks(3, usize::MAX).is_empty());
        assert_eq!(u.oldest_checks(6, usize::MAX), [check(2), check(1)]);
    }

    #[test]
    fn oldest_checks_respect_the_budget() {
        let mut u = Unfolded::starting_at(1);
        u.push(check(2), 1);
        u.push(check(2), 2);
        u.push(check(1), 3);
        u.push(check(3), 4);
        assert_eq!(u.oldest_checks(u64::MAX, 1), [check(2)]);
        assert_eq!(u.oldest_checks(u64::MAX, 3), [check(2), check(1)]);
        assert_eq!(
            u.oldest_checks(u64::MAX, usize::MAX),
            [check(2), check(1), check(3)]
        );
    }
}
