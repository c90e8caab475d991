//! Fixed one-minute windows of counts per key: the Management API's requests per key
//! (decision 7) and failed API key verifications per key identifier and per client address.
//! Plain data over the caller's `now`, so the rules are tested without a clock.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Length of every window.
pub(crate) const WINDOW: Duration = Duration::from_secs(60);

/// Keys remembered at most; past this, keys whose window has ended are forgotten, so an
/// attacker with many addresses cannot make the map grow without bound.
pub(crate) const MAX_KEYS: usize = 16_384;

/// Counts per key within a fixed window that starts at the key's first count.
#[derive(Debug)]
pub(crate) struct Windows {
    limit: u32,
    counts: HashMap<String, (Instant, u32)>,
}

impl Windows {
    /// At most `limit` counts per key and window; 0 = no limit.
    pub(crate) fn new(limit: u32) -> Windows {
        Windows {
            limit,
            counts: HashMap::new(),
        }
    }

    /// `Err(wait)` when `key` has used its window up: how long until it ends (at least 1 s).
    pub(crate) fn check(&self, key: &str, now: Instant) -> Result<(), Duration> {
        if self.limit == 0 {
            return Ok(());
        }
        match self.counts.get(key) {
            Some((start, n)) if *n >= self.limit && now.duration_since(*start) < WINDOW => {
                let left = WINDOW.saturating_sub(now.duration_since(*start));
                Err(left.max(Duration::from_secs(1)))
            }
            _ => Ok(()),
        }
    }

    /// Counts one for `key` (a new window starts when the old one has ended).
    pub(crate) fn count(&mut self, key: &str, now: Instant) {
        if self.limit == 0 {
            return;
        }
        if self.counts.len() >= MAX_KEYS && !self.counts.contains_key(key) {
            self.counts
                .retain(|_, (start, _)| now.duration_since(*start) < WINDOW);
        }
        let entry = self.counts.entry(key.to_string()).or_insert((now, 0));
        if now.duration_since(entry.0) >= WINDOW {
            *entry = (now, 0);
        }
        entry.1 = entry.1.saturating_add(1);
    }

    /// [`Windows::check`], then [`Windows::count`] when allowed.
    pub(crate) fn take(&mut self, key: &str, now: Instant) -> Result<(), Duration> {
        self.check(key, now)?;
        self.count(key, now);
        Ok(())
    }

    /// How many keys are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.counts.len()
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_gets_its_limit_per_window_and_the_wait_until_it_ends() {
        let t0 = Instant::now();
        let mut w = Windows::new(2);
        assert_eq!(w.take("a", t0), Ok(()));
        assert_eq!(w.take("a", t0), Ok(()));
        assert_eq!(w.take("a", t0), Err(WINDOW));
        assert_eq!(w.take("b", t0), Ok(()), "keys are counted apart");
        let t45 = t0 + Duration::from_secs(45);
        assert_eq!(w.check("a", t45), Err(Duration::from_secs(15)));
        let almost = (t0 + WINDOW)
            .checked_sub(Duration::from_millis(1))
            .expect("in range");
        assert_eq!(w.check("a", almost), Err(Duration::from_secs(1)));
        assert_eq!(w.take("a", t0 + WINDOW), Ok(()), "a new window");
    }

    #[test]
    fn checking_does_not_count_and_zero_means_off() {
        let t0 = Instant::now();
        let mut w = Windows::new(1);
        for _ in 0..5 {
            assert_eq!(w.check("a", t0), Ok(()));
        }
        w.count("a", t0);
        assert!(w.check("a", t0).is_err());
        let mut off = Windows::new(0);
        for _ in 0..1000 {
            assert_eq!(off.take("a", t0), Ok(()));
        }
        assert!(off.is_empty());
    }

    #[test]
    fn ended_windows_are_forgotten_when_the_map_is_full() {
        let t0 = Instant::now();
        let mut w = Windows::new(1);
        for i in 0..MAX_KEYS {
            w.count(&i.to_string(), t0);
        }
        assert_eq!(w.len(), MAX_KEYS);
        w.count("late", t0 + WINDOW);
        assert_eq!(w.len(), 1, "only the new key is left");
    }
}
