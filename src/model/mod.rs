//! The domain: checks, projects, keys, channels, pings and flips as plain data, and the pure
//! rules over them (status, validation, key formats). Nothing here does I/O or reads a clock.

pub mod badge;
pub mod channel;
pub mod check;
pub mod classify;
pub mod json;
pub mod limits;
pub mod metrics;
pub mod outbox;
pub mod ping;
pub mod project;
pub mod ratelimit;
pub mod session;
pub mod signal;
pub mod site_root;
pub mod slug;
pub mod spec;
pub mod time;
pub mod url;

pub use channel::{Channel, ChannelConfig};
pub use check::{Check, Kind, Status, StoredStatus};
pub use outbox::{Delivery, OutboxEntry, Tries};
pub use ping::{Flip, Ping, PingKind};
pub use project::{ApiKey, Project};

/// The Management API version of a request (decision 6): v1 and v2 derive slugs from names,
/// v1 also shows `started` as a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiVersion {
    V1,
    V2,
    V3,
}

impl ApiVersion {
    pub fn number(self) -> u8 {
        match self {
            ApiVersion::V1 => 1,
            ApiVersion::V2 => 2,
            ApiVersion::V3 => 3,
        }
    }

    /// Whether a `name` in a create/update body also sets the slug.
    pub fn derives_slug(self) -> bool {
        self != ApiVersion::V3
    }
}
