//! The domain: checks, projects, keys, channels, pings and flips as plain data, and the pure
//! rules over them (status, validation, key formats). Nothing here does I/O or reads a clock.

pub(crate) mod badge;
pub mod channel;
pub mod check;
pub(crate) mod classify;
pub mod events;
pub(crate) mod json;
pub(crate) mod limits;
pub(crate) mod metrics;
pub mod outbox;
pub(crate) mod ping;
pub(crate) mod project;
pub mod quiet;
pub(crate) mod ratelimit;
pub(crate) mod session;
pub mod signal;
pub(crate) mod site_root;
pub(crate) mod slug;
pub(crate) mod snooze;
pub mod spec;
pub(crate) mod time;
pub(crate) mod url;

pub use channel::{Channel, ChannelConfig};
pub use check::{Check, Kind, Status, StoredStatus};
pub use outbox::{Delivery, OutboxEntry, Tries};
pub use ping::Flip;
pub use ping::{Ping, PingKind};
pub use project::ApiKey;
pub use project::Project;

/// The Management API version of a request (decision 6): v1 and v2 derive slugs from names,
/// v1 also shows `started` as a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiVersion {
    V1,
    V2,
    V3,
}

impl ApiVersion {
    pub(crate) fn number(self) -> u8 {
        match self {
            ApiVersion::V1 => 1,
            ApiVersion::V2 => 2,
            ApiVersion::V3 => 3,
        }
    }

    /// Whether a `name` in a create/update body also sets the slug.
    pub(crate) fn derives_slug(self) -> bool {
        self != ApiVersion::V3
    }
}

/// `bytes` in lowercase hex (tokens, digests, secrets in dumps).
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
}
