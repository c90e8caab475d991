//! Management API rate limit per key (decision 7): a fixed one-minute window per key,
//! answered 429 with `Retry-After`. Time comes from tokio so tests can pause it.

use std::sync::{Mutex, PoisonError};

use crate::api::error::ApiError;
use crate::model::ratelimit::Windows;

/// Counts requests per key identifier.
pub(crate) struct RateLimiter {
    windows: Mutex<Windows>,
}

impl RateLimiter {
    /// `per_minute == 0` turns the limit off.
    pub(crate) fn new(per_minute: u32) -> RateLimiter {
        RateLimiter {
            windows: Mutex::new(Windows::new(per_minute)),
        }
    }

    /// Counts one request of `key_id`; errs when the key is over its limit.
    pub(crate) fn check(&self, key_id: &str) -> Result<(), ApiError> {
        // tokio's clock, so that tests can pause it.
        let now = tokio::time::Instant::now().into_std();
        self.windows
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take(key_id, now)
            .map_err(|wait| ApiError::RateLimited {
                retry_after: wait.as_secs().max(1),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
