//! Every numeric limit of the product, in one place.
//!
//! The values come from api.md §8 and reference-behavior §2.1; decisions 7 and 9 of the spec
//! README set the defaults that differ from the hosted service.

/// Smallest `timeout` and `grace`, in seconds.
pub(crate) const MIN_PERIOD_SECS: i64 = 60;
/// Largest `timeout` and `grace`, in seconds (365 days).
pub(crate) const MAX_PERIOD_SECS: i64 = 31_536_000;
/// `timeout` of a new check, in seconds.
pub(crate) const DEFAULT_TIMEOUT_SECS: i64 = 86_400;
/// `grace` of a new check, in seconds.
pub(crate) const DEFAULT_GRACE_SECS: i64 = 3_600;
/// Schedule of a new check (kept while it is simple, as the reference does).
pub(crate) const DEFAULT_SCHEDULE: &str = "* * * * *";
/// Time zone of a new check.
pub(crate) const DEFAULT_TZ: &str = "UTC";

/// Largest `fail_threshold`: failures in a row before a check goes down (issue 17).
pub(crate) const MAX_FAIL_THRESHOLD: i64 = 100;
/// Largest `max_duration` and `min_duration`, in seconds (as `timeout`); 0 turns either off,
/// and any positive value is allowed: run bounds are deadlines of the event-driven engine,
/// not of a polling loop, so a few seconds are as exact as a day.
pub(crate) const MAX_RUN_BOUND_SECS: i64 = MAX_PERIOD_SECS;

/// Length of a quiet window whose `quiet_duration` is not given, in seconds.
pub(crate) const DEFAULT_QUIET_SECS: i64 = 3_600;

/// Longest `name`, in characters.
pub(crate) const NAME_MAX_CHARS: usize = 100;
/// Longest `slug`, in characters.
pub(crate) const SLUG_MAX_CHARS: usize = 100;
/// Longest `tags` (space-separated), in characters: the reference's database column.
pub(crate) const TAGS_MAX_CHARS: usize = 500;
/// Longest `desc`, in characters. The reference has no limit; every check is kept in memory
/// and listed whole, so one create must not be able to take megabytes (a page of notes fits).
pub(crate) const DESC_MAX_CHARS: usize = 10_000;
/// Longest `schedule`, in characters.
pub(crate) const SCHEDULE_MAX_CHARS: usize = 100;
/// Longest keyword list (`start_kw`, `success_kw`, `failure_kw`, `subject`, `subject_fail`).
pub(crate) const KEYWORDS_MAX_CHARS: usize = 200;
/// Longest stored user agent of a ping, in characters.
pub(crate) const USER_AGENT_MAX_CHARS: usize = 200;

/// Bytes of a ping body that are stored (the `Ping-Body-Limit` header states it).
pub(crate) const DEFAULT_PING_BODY_LIMIT: usize = 10_000;
/// Pings kept and listed per check (decision 9).
pub(crate) const DEFAULT_PING_LOG: u32 = 1_000;
/// Management API requests per minute per key (decision 7); 0 turns the limit off.
pub(crate) const DEFAULT_API_RATE_LIMIT: u32 = 100;
/// Largest Management API request body we read, in bytes.
pub(crate) const MAX_API_BODY_BYTES: usize = 1 << 20;

/// Failed API key verifications (argon2 runs that did not match) allowed per minute for one
/// key identifier; past it, keys of that identifier not verified before are refused with 429
/// without an argon2 run.
pub(crate) const FAILURES_PER_KEY: u32 = 10;
/// The same for one client address (an IPv6 client by its /64): higher, since one client may
/// hold several keys and mistype some, but it bounds the work of one client over all the
/// identifiers it knows.
pub(crate) const FAILURES_PER_CLIENT: u32 = 20;
/// HTTP connections served at once (`serve --max-connections`); more are refused with 503.
/// Kept well below the file limit (`LimitNOFILE=` in the unit), which `serve` also checks.
pub(crate) const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Seconds a request head may take, from a new connection or from the head's first byte.
pub(crate) const DEFAULT_HEADER_TIMEOUT_SECS: u64 = 10;
/// Seconds a kept-alive connection may wait for its next request (or a client may leave a
/// response unread).
pub(crate) const DEFAULT_IDLE_TIMEOUT_SECS: u64 = 60;
/// Seconds a request body may take to arrive in full.
pub(crate) const DEFAULT_BODY_TIMEOUT_SECS: u64 = 30;
/// File descriptors `serve` keeps for everything but HTTP connections (the data file, the
/// control socket and its clients, outgoing deliveries, the tz database, logs), on top of the
/// SMTP listener's connections when it runs.
pub(crate) const RESERVED_FDS: u64 = 128;

/// Length of every API key (`hcw_`/`hcr_` + 28 random characters, decision 11).
pub(crate) const API_KEY_LEN: usize = 32;
/// Random characters after the `hcw_`/`hcr_` prefix of an API key.
pub(crate) const API_KEY_RANDOM_LEN: usize = 28;
/// Characters of an API key that identify it without revealing it (`hcw_` + 8).
pub(crate) const API_KEY_ID_LEN: usize = 12;
/// Length of a project's ping key.
pub(crate) const PING_KEY_LEN: usize = 22;

/// Largest email ping the SMTP listener accepts, in bytes (advertised with `SIZE`; larger
/// messages are answered 552). The stored body is cut to the ping body limit.
pub(crate) const EMAIL_MAX_MESSAGE_BYTES: usize = 1 << 20;
/// Longest SMTP command line, in bytes (RFC 5321 allows 512; some clients send longer).
pub(crate) const SMTP_MAX_COMMAND_BYTES: usize = 2_048;
/// Recipients of one email; more are answered 452.
pub(crate) const SMTP_MAX_RECIPIENTS: usize = 100;
/// Bad commands in one SMTP session before the listener hangs up.
pub(crate) const SMTP_MAX_ERRORS: u32 = 20;
/// Open SMTP connections; more are answered 421 and closed.
pub(crate) const SMTP_MAX_CONNECTIONS: usize = 512;
/// Seconds an SMTP client may stay silent before the listener hangs up.
pub(crate) const SMTP_IDLE_TIMEOUT_SECS: u64 = 60;
/// Seconds one SMTP connection may last in all.
pub(crate) const SMTP_SESSION_TIMEOUT_SECS: u64 = 600;

/// Tries of one alert before it is given up (reference §8.2 makes 3; we wait longer between).
pub(crate) const DEFAULT_DELIVERY_TRIES: u32 = 5;
/// First wait before a retry, in seconds; each later wait doubles (2, 4, 8, 16 min: 30 min).
pub(crate) const DEFAULT_RETRY_BASE_SECS: u64 = 120;
/// Longest one delivery attempt may take, in seconds.
pub(crate) const DEFAULT_DELIVERY_TIMEOUT_SECS: u64 = 10;
/// Deliveries running at once, over all channels.
pub(crate) const DELIVERIES_IN_FLIGHT: usize = 32;
/// Deliveries running at once to one channel, so one slow channel never takes every slot.
pub(crate) const DELIVERIES_IN_FLIGHT_PER_CHANNEL: usize = 4;
/// Shortest repeat interval of a channel, in seconds.
pub(crate) const MIN_REPEAT_SECS: i64 = 60;

/// First wait before the writer reopens a data file whose writes failed, in milliseconds;
/// each next attempt waits twice as long, up to the retry maximum.
pub(crate) const STORAGE_RETRY_FIRST_MS: u64 = 250;
/// Longest wait between two attempts to reopen a failing data file, in seconds.
pub(crate) const STORAGE_RETRY_MAX_SECS: u64 = 10;
/// Free bytes a filesystem needs before the writer reopens a data file whose writes failed on
/// it; below this a failed write is put down to a full disk. Without the margin, a reopened
/// file takes the small probe write and the next batch fails again, over and over.
pub(crate) const STORAGE_MIN_FREE_BYTES: u64 = 2 << 20;
/// A failure within this many seconds of the last recovery continues its backoff instead of
/// starting again from the first wait.
pub(crate) const STORAGE_FLAP_WINDOW_SECS: u64 = 60;
/// Seconds of failing writes after which `serve` gives up and exits non-zero, so that its
/// supervisor (systemd's `Restart=on-failure`) restarts it and notices; 0 never gives up.
pub(crate) const STORAGE_GIVE_UP_SECS: u64 = 300;

/// While a command runs, the service writes a space on the control socket this often, so the
/// client can tell a busy service from a stuck one.
pub(crate) const CONTROL_KEEPALIVE_SECS: u64 = 1;
/// An admin command gives up when the service sends nothing (or takes nothing of the request)
/// for this long: it is stopped, stuck or out of file descriptors.
pub(crate) const CONTROL_SILENCE_SECS: u64 = 10;
/// Longest an admin command may take through the control socket, even with keep-alives
/// arriving (a live service whose command is wedged, e.g. behind a hung disk).
pub(crate) const CONTROL_ANSWER_SECS: u64 = 300;
/// The same for the commands that move a whole data file: `backup` and the migration's
/// batches. (Import and export are sessions; each of their messages has the ordinary limit.)
pub(crate) const CONTROL_LONG_ANSWER_SECS: u64 = 3_600;

/// Largest request line on the control socket. Imports send a dump in parts of 1,000 checks
/// (about a megabyte), and migrations in batches of 100; the socket is mode 0600.
pub(crate) const CONTROL_REQUEST_LIMIT: u64 = 64 << 20;
/// `overdue doctor` reports a data directory on a filesystem with less free space than this.
pub(crate) const DOCTOR_MIN_FREE_BYTES: u64 = 256 << 20;
/// `overdue doctor` reports a wall clock this far behind the newest time in the data file.
pub(crate) const DOCTOR_CLOCK_SLACK_SECS: i64 = 300;
/// How long `overdue doctor` waits for a TCP connection or an SMTP banner.
pub(crate) const DOCTOR_NET_TIMEOUT_SECS: u64 = 5;
/// How long opening a PostgreSQL session may take (TCP, TLS and sign-in together) when the
/// URL sets no `connect_timeout`; a query then gets as long again.
pub(crate) const DATABASE_CONNECT_TIMEOUT_SECS: u64 = 5;
/// Longest one statement (or one batch's transaction) may take on PostgreSQL before the
/// session is taken for lost: a database that stopped answering must not hold the writer.
pub(crate) const DATABASE_QUERY_TIMEOUT_SECS: u64 = 10;
/// Longest the start-up read of every check may take on PostgreSQL.
pub(crate) const DATABASE_LOAD_TIMEOUT_SECS: u64 = 600;
