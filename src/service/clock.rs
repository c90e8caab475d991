//! Where "now" comes from. Production reads the system clock; tests use a clock that follows
//! tokio's (pausable) time, so deadlines can be tested with `tokio::time::advance`.

use jiff::{SignedDuration, Timestamp};

/// The wall clock of the service.
#[derive(Debug, Clone)]
pub enum Clock {
    /// The operating system's clock.
    System,
    /// `base` plus the tokio time elapsed since `start`; follows `tokio::time::pause`/`advance`.
    Tokio {
        base: Timestamp,
        start: tokio::time::Instant,
    },
}

impl Clock {
    /// A clock that starts at `base` and moves with tokio's time.
    pub fn tokio_at(base: Timestamp) -> Clock {
        Clock::Tokio {
            base,
            start: tokio::time::Instant::now(),
        }
    }

    /// Now, to the microsecond: the precision of the data file, so that what memory holds and
    /// what a restart reads back are equal.
    pub(crate) fn now(&self) -> Timestamp {
        let t = self.precise_now();
        Timestamp::from_microsecond(t.as_microsecond()).unwrap_or(t)
    }

    fn precise_now(&self) -> Timestamp {
        match self {
            Clock::System => Timestamp::now(),
            Clock::Tokio { base, start } => {
                let elapsed =
                    SignedDuration::try_from(start.elapsed()).unwrap_or(SignedDuration::MAX);
                base.checked_add(elapsed).unwrap_or(Timestamp::MAX)
            }
        }
    }
}
