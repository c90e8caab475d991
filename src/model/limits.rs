//! Every numeric limit of the product, in one place.
//!
//! The values come from api.md §8 and reference-behavior §2.1; decisions 7 and 9 of the spec
//! README set the defaults that differ from the hosted service.

/// Smallest `timeout` and `grace`, in seconds.
pub const MIN_PERIOD_SECS: i64 = 60;
/// Largest `timeout` and `grace`, in seconds (365 days).
pub const MAX_PERIOD_SECS: i64 = 31_536_000;
/// `timeout` of a new check, in seconds.
pub const DEFAULT_TIMEOUT_SECS: i64 = 86_400;
/// `grace` of a new check, in seconds.
pub const DEFAULT_GRACE_SECS: i64 = 3_600;
/// Schedule of a new check (kept while it is simple, as the reference does).
pub const DEFAULT_SCHEDULE: &str = "* * * * *";
/// Time zone of a new check.
pub const DEFAULT_TZ: &str = "UTC";

/// Longest `name`, in characters.
pub const NAME_MAX_CHARS: usize = 100;
/// Longest `slug`, in characters.
pub const SLUG_MAX_CHARS: usize = 100;
/// Longest `schedule`, in characters.
pub const SCHEDULE_MAX_CHARS: usize = 100;
/// Longest keyword list (`start_kw`, `success_kw`, `failure_kw`, `subject`, `subject_fail`).
pub const KEYWORDS_MAX_CHARS: usize = 200;
/// Longest stored user agent of a ping, in characters.
pub const USER_AGENT_MAX_CHARS: usize = 200;

/// Bytes of a ping body that are stored (the `Ping-Body-Limit` header states it).
pub const DEFAULT_PING_BODY_LIMIT: usize = 10_000;
/// Pings kept and listed per check (decision 9).
pub const DEFAULT_PING_LOG: u32 = 1_000;
/// Management API requests per minute per key (decision 7); 0 turns the limit off.
pub const DEFAULT_API_RATE_LIMIT: u32 = 100;
/// Largest Management API request body we read, in bytes.
pub const MAX_API_BODY_BYTES: usize = 1 << 20;

/// Length of every API key (`hcw_`/`hcr_` + 28 random characters, decision 11).
pub const API_KEY_LEN: usize = 32;
/// Random characters after the `hcw_`/`hcr_` prefix of an API key.
pub const API_KEY_RANDOM_LEN: usize = 28;
/// Characters of an API key that identify it without revealing it (`hcw_` + 8).
pub const API_KEY_ID_LEN: usize = 12;
/// Length of a project's ping key.
pub const PING_KEY_LEN: usize = 22;
/// Length of a check's `unique_key` (hex SHA-1).
pub const UNIQUE_KEY_LEN: usize = 40;

/// Largest request on the control socket. An import carries the whole export (a few hundred
/// bytes per check), so this admits a few hundred thousand checks; the socket is mode 0600.
pub const CONTROL_REQUEST_LIMIT: u64 = 256 << 20;
/// `overdue doctor` reports a data directory on a filesystem with less free space than this.
pub const DOCTOR_MIN_FREE_BYTES: u64 = 256 << 20;
/// `overdue doctor` reports a wall clock this far behind the newest time in the data file.
pub const DOCTOR_CLOCK_SLACK_SECS: i64 = 300;
/// How long `overdue doctor` waits for a TCP connection or an SMTP banner.
pub const DOCTOR_NET_TIMEOUT_SECS: u64 = 5;
