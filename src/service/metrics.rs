//! The service's own figures for operators (`GET /metrics` with `--metrics-token`): pings
//! recorded, write batch sizes, commit latency, outbox depth, deliveries, API key
//! verifications and whether the data file takes writes. Counters are
//! atomics in one [`Metrics`] owned by the Service; the writer feeds the batch and commit
//! histograms, the ping path the ping counters, the delivery worker the delivery counters.
//! Rendering is a pure function of a [`Snapshot`].

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Where a ping came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PingSource {
    Http,
    Email,
}

/// How an argon2 verification of an API key went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyVerification {
    Ok,
    Failed,
    /// Refused before argon2: too many failures for the identifier or the client.
    Throttled,
}

/// Upper bounds of the batch size buckets (jobs per committed transaction).
const BATCH_BOUNDS: &[u64] = &[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
/// Upper bounds of the commit latency buckets, in microseconds.
const COMMIT_BOUNDS_US: &[u64] = &[
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 1_000_000,
];

/// A histogram with fixed bounds: per-bucket counts (the last one is `+Inf`), sum and count.
#[derive(Debug)]
struct Histogram {
    bounds: &'static [u64],
    buckets: Vec<AtomicU64>,
    sum: AtomicU64,
}

impl Histogram {
    fn new(bounds: &'static [u64]) -> Histogram {
        Histogram {
            bounds,
            buckets: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum: AtomicU64::new(0),
        }
    }

    fn observe(&self, value: u64) {
        let i = self.bounds.partition_point(|&b| b < value);
        self.buckets[i].fetch_add(1, Relaxed);
        self.sum.fetch_add(value, Relaxed);
    }

    fn snapshot(&self) -> HistogramSnapshot {
        HistogramSnapshot {
            bounds: self.bounds,
            buckets: self.buckets.iter().map(|b| b.load(Relaxed)).collect(),
            sum: self.sum.load(Relaxed),
        }
    }
}

/// The live counters.
#[derive(Debug)]
pub struct Metrics {
    pings_http: AtomicU64,
    pings_email: AtomicU64,
    batch_sizes: Histogram,
    commit_us: Histogram,
    deliveries_ok: AtomicU64,
    deliveries_failed: AtomicU64,
    keys_ok: AtomicU64,
    keys_failed: AtomicU64,
    keys_throttled: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            pings_http: AtomicU64::new(0),
            pings_email: AtomicU64::new(0),
            batch_sizes: Histogram::new(BATCH_BOUNDS),
            commit_us: Histogram::new(COMMIT_BOUNDS_US),
            deliveries_ok: AtomicU64::new(0),
            deliveries_failed: AtomicU64::new(0),
            keys_ok: AtomicU64::new(0),
            keys_failed: AtomicU64::new(0),
            keys_throttled: AtomicU64::new(0),
        }
    }
}

impl Metrics {
    /// A ping was recorded (durably).
    pub(crate) fn ping_recorded(&self, source: PingSource) {
        match source {
            PingSource::Http => &self.pings_http,
            PingSource::Email => &self.pings_email,
        }
        .fetch_add(1, Relaxed);
    }

    /// A write batch of `jobs` jobs was committed in `took`.
    pub(crate) fn batch_committed(&self, jobs: usize, took: Duration) {
        self.batch_sizes.observe(jobs as u64);
        self.commit_us
            .observe(u64::try_from(took.as_micros()).unwrap_or(u64::MAX));
    }

    /// A notification delivery attempt ended (`ok`: delivered).
    pub fn record_delivery(&self, ok: bool) {
        if ok {
            &self.deliveries_ok
        } else {
            &self.deliveries_failed
        }
        .fetch_add(1, Relaxed);
    }

    /// An API key was checked against its hash (or refused before that).
    pub(crate) fn key_verification(&self, how: KeyVerification) {
        match how {
            KeyVerification::Ok => &self.keys_ok,
            KeyVerification::Failed => &self.keys_failed,
            KeyVerification::Throttled => &self.keys_throttled,
        }
        .fetch_add(1, Relaxed);
    }

    /// The counters now, with the outbox depth and the storage state read by the caller.
    pub fn snapshot(&self, outbox_depth: u64, storage_failing: bool) -> Snapshot {
        Snapshot {
            pings_http: self.pings_http.load(Relaxed),
            pings_email: self.pings_email.load(Relaxed),
            batch_sizes: self.batch_sizes.snapshot(),
            commit_us: self.commit_us.snapshot(),
            outbox_depth,
            deliveries_ok: self.deliveries_ok.load(Relaxed),
            deliveries_failed: self.deliveries_failed.load(Relaxed),
            keys_ok: self.keys_ok.load(Relaxed),
            keys_failed: self.keys_failed.load(Relaxed),
            keys_throttled: self.keys_throttled.load(Relaxed),
            storage_failing,
        }
    }
}

/// A histogram's values at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HistogramSnapshot {
    pub(crate) bounds: &'static [u64],
    /// Per bucket (not cumulative); one more than `bounds` (`+Inf`).
    pub(crate) buckets: Vec<u64>,
    pub(crate) sum: u64,
}

/// Every figure at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub(crate) pings_http: u64,
    pub(crate) pings_email: u64,
    pub(crate) batch_sizes: HistogramSnapshot,
    /// Commit latency in microseconds (rendered in seconds).
    pub(crate) commit_us: HistogramSnapshot,
    pub(crate) outbox_depth: u64,
    pub deliveries_ok: u64,
    pub deliveries_failed: u64,
    pub keys_ok: u64,
    pub keys_failed: u64,
    pub(crate) keys_throttled: u64,
    /// Whether the data file refuses writes right now.
    pub(crate) storage_failing: bool,
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// A metric with one value per value of `label` (`values`: label value, number).
fn by_label(
    out: &mut String,
    (name, kind, help): (&str, &str, &str),
    label: &str,
    values: &[(&str, u64)],
) {
    header(out, name, kind, help);
    for (value, n) in values {
        let _ = writeln!(out, "{name}{{{label}=\"{value}\"}} {n}");
    }
}

/// A metric with a single value.
fn single(out: &mut String, (name, kind, help): (&str, &str, &str), n: u64) {
    header(out, name, kind, help);
    let _ = writeln!(out, "{name} {n}");
}

/// Histogram lines; bounds and sum are divided by `scale` (1 for counts, 1e6 for µs → s).
fn histogram(out: &mut String, name: &str, h: &HistogramSnapshot, scale: f64) {
    let mut cumulative = 0;
    for (i, count) in h.buckets.iter().enumerate() {
        cumulative += count;
        let le = match h.bounds.get(i) {
            Some(&b) => format!("{}", b as f64 / scale),
            None => "+Inf".into(),
        };
        let _ = writeln!(out, "{name}_bucket{{le=\"{le}\"}} {cumulative}");
    }
    let _ = writeln!(out, "{name}_sum {}", h.sum as f64 / scale);
    let _ = writeln!(out, "{name}_count {cumulative}");
}

/// The Prometheus text exposition (format 0.0.4) of a snapshot.
pub(crate) fn render(s: &Snapshot) -> String {
    let mut out = String::new();
    by_label(
        &mut out,
        (
            "overdue_pings_total",
            "counter",
            "Pings recorded, by source.",
        ),
        "source",
        &[("http", s.pings_http), ("email", s.pings_email)],
    );
    let name = "overdue_write_batch_size";
    header(
        &mut out,
        name,
        "histogram",
        "Write jobs committed together in one transaction.",
    );
    histogram(&mut out, name, &s.batch_sizes, 1.0);
    let name = "overdue_commit_duration_seconds";
    header(
        &mut out,
        name,
        "histogram",
        "Time to commit one write transaction (fsync included).",
    );
    histogram(&mut out, name, &s.commit_us, 1e6);
    single(
        &mut out,
        (
            "overdue_outbox_depth",
            "gauge",
            "Notifications waiting in the outbox.",
        ),
        s.outbox_depth,
    );
    by_label(
        &mut out,
        (
            "overdue_deliveries_total",
            "counter",
            "Notification delivery attempts, by result.",
        ),
        "result",
        &[("ok", s.deliveries_ok), ("failed", s.deliveries_failed)],
    );
    by_label(
        &mut out,
        (
            "overdue_key_verifications_total",
            "counter",
            "API keys checked against their argon2 hash, by result (throttled: refused before).",
        ),
        "result",
        &[
            ("ok", s.keys_ok),
            ("failed", s.keys_failed),
            ("throttled", s.keys_throttled),
        ],
    );
    single(
        &mut out,
        (
            "overdue_storage_failing",
            "gauge",
            "1 while the data file refuses writes (pings and API writes answer 503).",
        ),
        u64::from(s.storage_failing),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_bucket_by_upper_bound() {
        let m = Metrics::default();
        m.batch_committed(1, Duration::from_micros(90));
        m.batch_committed(3, Duration::from_millis(1));
        m.batch_committed(5000, Duration::from_secs(3));
        let s = m.snapshot(0, false);
        assert_eq!(s.batch_sizes.buckets[0], 1); // le 1
        assert_eq!(s.batch_sizes.buckets[2], 1); // le 4
        assert_eq!(s.batch_sizes.buckets[BATCH_BOUNDS.len()], 1); // +Inf
        assert_eq!(s.batch_sizes.sum, 5004);
        assert_eq!(s.commit_us.buckets[0], 1);
        assert_eq!(s.commit_us.buckets[3], 1); // le 1000 µs, inclusive
        assert_eq!(s.commit_us.buckets[COMMIT_BOUNDS_US.len()], 1);
    }

    #[test]
    fn render_is_cumulative_and_in_seconds() {
        let m = Metrics::default();
        m.ping_recorded(PingSource::Http);
        m.ping_recorded(PingSource::Http);
        m.ping_recorded(PingSource::Email);
        m.record_delivery(true);
        m.record_delivery(false);
        m.record_delivery(false);
        m.batch_committed(2, Duration::from_micros(1_500));
        m.batch_committed(2, Duration::from_micros(500));
        m.key_verification(KeyVerification::Failed);
        m.key_verification(KeyVerification::Throttled);
        m.key_verification(KeyVerification::Throttled);
        let text = render(&m.snapshot(7, true));
        for line in [
            "overdue_pings_total{source=\"http\"} 2",
            "overdue_pings_total{source=\"email\"} 1",
            "overdue_write_batch_size_bucket{le=\"1\"} 0",
            "overdue_write_batch_size_bucket{le=\"2\"} 2",
            "overdue_write_batch_size_bucket{le=\"+Inf\"} 2",
            "overdue_write_batch_size_sum 4",
            "overdue_write_batch_size_count 2",
            "overdue_commit_duration_seconds_bucket{le=\"0.0005\"} 1",
            "overdue_commit_duration_seconds_bucket{le=\"0.001\"} 1",
            "overdue_commit_duration_seconds_bucket{le=\"0.0025\"} 2",
            "overdue_commit_duration_seconds_sum 0.002",
            "overdue_outbox_depth 7",
            "overdue_deliveries_total{result=\"ok\"} 1",
            "overdue_deliveries_total{result=\"failed\"} 2",
            "overdue_key_verifications_total{result=\"ok\"} 0",
            "overdue_key_verifications_total{result=\"failed\"} 1",
            "overdue_key_verifications_total{result=\"throttled\"} 2",
            "overdue_storage_failing 1",
            "# TYPE overdue_commit_duration_seconds histogram",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }
}
