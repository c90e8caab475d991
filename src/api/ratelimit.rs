//! Management API rate limit per key (decision 7): a fixed one-minute window per key,
//! answered 429 with `Retry-After`. Time comes from tokio so tests can pause it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::api::error::ApiError;

const WINDOW: Duration = Duration::from_secs(60);

/// Counts requests per key identifier.
pub struct RateLimiter {
    per_minute: u32,
    windows: Mutex<HashMap<String, (Instant, u32)>>,
}

impl RateLimiter {
    /// `per_minute == 0` turns the limit off.
    pub fn new(per_minute: u32) -> RateLimiter {
        RateLimiter {
            per_minute,
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// Counts one request of `key_id`; errs when the key is over its limit.
    pub fn check(&self, key_id: &str) -> Result<(), ApiError> {
        if self.per_minute == 0 {
            return Ok(());
        }
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let entry = windows.entry(key_id.to_string()).or_insert((now, 0));
        if now.duration_since(entry.0) >= WINDOW {
            *entry = (now, 0);
        }
        if entry.1 >= self.per_minute {
            let left = WINDOW.saturating_sub(now.duration_since(entry.0));
            return Err(ApiError::RateLimited {
                retry_after: left.as_secs().max(1),
            });
        }
        entry.1 += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn limits_per_key_and_resets_after_a_minute() {
        let limiter = RateLimiter::new(2);
        assert!(limiter.check("a").is_ok());
        assert!(limiter.check("a").is_ok());
        assert!(matches!(
            limiter.check("a"),
            Err(ApiError::RateLimited { retry_after: 60 })
        ));
        assert!(limiter.check("b").is_ok());
        tokio::time::advance(Duration::from_secs(45)).await;
        assert!(matches!(
            limiter.check("a"),
            Err(ApiError::RateLimited { retry_after: 15 })
        ));
        tokio::time::advance(Duration::from_secs(15)).await;
        assert!(limiter.check("a").is_ok());
    }

    #[test]
    fn zero_means_off() {
        let limiter = RateLimiter::new(0);
        for _ in 0..1000 {
            assert!(limiter.check("a").is_ok());
        }
    }
}
