//! Every check's down time, in memory, ordered: a `BTreeSet` of (time, check) with a map
//! from check to its entry, so rescheduling one check is two tree operations. Keyed by
//! wall-clock microseconds, so there is no horizon (cron deadlines can be years away).

use std::collections::{BTreeSet, HashMap};

use uuid::Uuid;

/// The deadline table.
#[derive(Debug, Default)]
pub struct Deadlines {
    ordered: BTreeSet<(i64, Uuid)>,
    by_check: HashMap<Uuid, i64>,
}

impl Deadlines {
    /// Builds the table from (check, deadline) pairs at once: sorting first makes the tree a
    /// bulk build instead of scattered inserts (it matters at start with a million checks).
    pub(crate) fn from_entries(entries: &[(Uuid, i64)]) -> Deadlines {
        let by_check: HashMap<Uuid, i64> = entries.iter().copied().collect();
        let mut ordered: Vec<(i64, Uuid)> = by_check.iter().map(|(c, at)| (*at, *c)).collect();
        ordered.sort_unstable();
        Deadlines {
            ordered: ordered.into_iter().collect(),
            by_check,
        }
    }

    /// Sets (or with `None` clears) the deadline of a check.
    pub(crate) fn set(&mut self, check: Uuid, at_us: Option<i64>) {
        if let Some(old) = self.by_check.remove(&check) {
            self.ordered.remove(&(old, check));
        }
        if let Some(at) = at_us {
            self.ordered.insert((at, check));
            self.by_check.insert(check, at);
        }
    }

    /// The earliest deadline.
    pub(crate) fn next(&self) -> Option<i64> {
        self.ordered.first().map(|(at, _)| *at)
    }

    /// Removes and returns up to `max` checks whose deadline is at or before `now_us`,
    /// earliest first.
    pub(crate) fn pop_due(&mut self, now_us: i64, max: usize) -> Vec<(i64, Uuid)> {
        let mut due = Vec::new();
        while due.len() < max {
            match self.ordered.first() {
                Some(&(at, check)) if at <= now_us => {
                    self.ordered.pop_first();
                    self.by_check.remove(&check);
                    due.push((at, check));
                }
                _ => break,
            }
        }
        due
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_check.len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.by_check.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reschedule_replaces_and_pop_is_ordered() {
        let mut d = Deadlines::default();
        let (a, b, c) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3));
        d.set(a, Some(30));
        d.set(b, Some(10));
        d.set(c, Some(20));
        d.set(a, Some(5));
        d.set(c, None);
        assert_eq!(d.len(), 2);
        assert_eq!(d.next(), Some(5));
        assert_eq!(d.pop_due(9, 10), vec![(5, a)]);
        assert_eq!(d.pop_due(9, 10), vec![]);
        assert_eq!(d.pop_due(10, 10), vec![(10, b)], "the bound is inclusive");
        assert!(d.is_empty());
    }

    #[test]
    fn bulk_build_equals_one_by_one() {
        let entries: Vec<(Uuid, i64)> = (0..100)
            .map(|i| (Uuid::from_u128(i), (i as i64 * 37) % 50))
            .collect();
        let mut bulk = Deadlines::from_entries(&entries);
        let mut single = Deadlines::default();
        for (c, at) in entries {
            single.set(c, Some(at));
        }
        assert_eq!(bulk.len(), single.len());
        assert_eq!(bulk.pop_due(100, 1000), single.pop_due(100, 1000));
    }

    #[test]
    fn pop_due_respects_max() {
        let mut d = Deadlines::default();
        for i in 0..10 {
            d.set(Uuid::from_u128(i), Some(i as i64));
        }
        assert_eq!(d.pop_due(100, 4).len(), 4);
        assert_eq!(d.len(), 6);
    }
}
