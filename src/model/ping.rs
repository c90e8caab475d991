//! Pings (one recorded request to a ping URL) and flips (a change of stored status).

use jiff::Timestamp;
use uuid::Uuid;

use crate::model::check::StoredStatus;

/// What a ping did, after classification (reference-behavior §4.3-4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PingKind {
    Success,
    Start,
    Fail,
    Log,
    /// Recorded but without effect (wrong method, no keyword matched, manual_resume).
    Ignored,
}

impl PingKind {
    /// The `type` of the pings API.
    pub fn as_str(self) -> &'static str {
        match self {
            PingKind::Success => "success",
            PingKind::Start => "start",
            PingKind::Fail => "fail",
            PingKind::Log => "log",
            PingKind::Ignored => "ign",
        }
    }
}

/// One recorded ping. The body is kept apart (see the store) so lists stay cheap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ping {
    pub check: Uuid,
    /// Sequence number within the check, from 1, shared by all kinds.
    pub n: u64,
    pub created: Timestamp,
    pub kind: PingKind,
    pub scheme: String,
    pub remote_addr: Option<String>,
    pub method: String,
    pub ua: String,
    pub rid: Option<Uuid>,
    pub exit_status: Option<u8>,
    /// Bytes of body stored (0 = none).
    pub body_len: u32,
}

/// A change of a check's stored status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flip {
    pub check: Uuid,
    pub created: Timestamp,
    pub old_status: StoredStatus,
    pub new_status: StoredStatus,
    /// `""`, `"fail"` or `"timeout"`.
    pub reason: String,
}
